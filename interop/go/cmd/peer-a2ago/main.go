// Command peer-a2ago is a PEER A2A server built only from the official Go
// SDK (github.com/a2aproject/a2a-go, server packages a2asrv, a2asrv/push and
// a2asrv/eventqueue). It hosts the same three agents as `a2abridge serve`,
// each behind its own a2asrv request handler (and so its own in-memory task
// store), so that tests of our client can run against a server that is not
// ours:
//
//	POST /a2a/{echo,chat,slow}                              JSON-RPC (a2asrv.NewJSONRPCHandler)
//	GET  /a2a/{echo,chat,slow}/.well-known/agent-card.json  card (a2asrv.NewStaticAgentCardHandler)
//	GET  /.well-known/agent-card.json, POST /               the echo agent (the default one)
//
// Push notifications are enabled: the SDK's in-memory config store
// (push.NewInMemoryStore) and HTTP sender (push.NewHTTPPushSender).
//
// Usage:
//
//	peer-a2ago [--addr 127.0.0.1:0] [--keep-alive 0] [--step 1s] [--log-level warn]
//
// Once listening it prints `peer listening on http://ADDR` on stdout. SIGINT
// or SIGTERM stops it (exit status 0).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
	"github.com/a2aproject/a2a-go/a2asrv/push"

	"github.com/a2abridge/a2abridge/interop/internal/peer"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "peer-a2ago:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free port)")
	keepAlive := flag.Duration("keep-alive", 0, "SSE keep-alive comment interval (a2asrv.WithKeepAlive); 0 keeps the SDK default: none")
	logLevel := flag.String("log-level", "warn", "log level on stderr: debug, info, warn or error")
	step := flag.Duration("step", time.Second, "interval of the slow agent's progress updates")
	if err := peer.ParseFlags(); err != nil {
		return err
	}
	if *step <= 0 {
		return fmt.Errorf("--step %s: must be > 0", *step)
	}
	logger, err := peer.Logger(*logLevel)
	if err != nil {
		return err
	}
	ln, base, err := peer.Listen(*addr)
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	for _, ag := range agents(*step) {
		card := ag.card(base + "/a2a/" + ag.Name)
		handler := a2asrv.NewHandler(ag.exec,
			a2asrv.WithLogger(logger),
			a2asrv.WithPushNotifications(push.NewInMemoryStore(), push.NewHTTPPushSender(nil)))
		rpc := a2asrv.NewJSONRPCHandler(handler, a2asrv.WithKeepAlive(*keepAlive))
		cardHandler := a2asrv.NewStaticAgentCardHandler(card)
		mux.Handle("/a2a/"+ag.Name, rpc)
		mux.Handle("/a2a/"+ag.Name+a2asrv.WellKnownAgentCardPath, cardHandler)
		if ag.Name == "echo" {
			mux.Handle("/{$}", rpc)
			mux.Handle(a2asrv.WellKnownAgentCardPath, cardHandler)
		}
	}

	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
	}
	return peer.Serve(ln, srv, logger)
}

// agent is one hosted agent: its card data and executor.
type agent struct {
	peer.Agent
	exec a2asrv.AgentExecutor
}

func agents(step time.Duration) []agent {
	return []agent{
		{peer.Echo, echoExecutor{}},
		{peer.Chat, chatExecutor{}},
		{peer.Slow, slowExecutor{step: step}},
	}
}

func (ag agent) card(url string) *a2a.AgentCard {
	modes := peer.Modes()
	return &a2a.AgentCard{
		Name:               ag.Name,
		Description:        ag.Desc,
		URL:                url,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    "0.3.0",
		Version:            "1.0.0",
		Provider:           &a2a.AgentProvider{Org: "a2abridge interop (a2a-go peer)", URL: "https://github.com/a2aproject/a2a-go"},
		// No stateTransitionHistory: the SDK keeps no status history.
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		DefaultInputModes:  modes,
		DefaultOutputModes: modes,
		Skills: []a2a.AgentSkill{{ID: ag.Name, Name: ag.SkillName, Description: ag.SkillDesc,
			Tags: ag.Tags, Examples: ag.Examples}},
	}
}

// startTask writes the submitted Task first when the message starts a new
// task, so that message/stream opens with a Task event (as the SDK's own
// template does); follow-up messages start with status-updates.
func startTask(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if rc.StoredTask != nil {
		return nil
	}
	return q.Write(ctx, a2a.NewSubmittedTask(rc, rc.Message))
}

// status writes a status-update; an agent message is attached if text is set.
func status(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, state a2a.TaskState, text string, final bool) error {
	var msg *a2a.Message
	if text != "" {
		msg = a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: text})
	}
	ev := a2a.NewStatusUpdateEvent(rc, state, msg)
	ev.Final = final
	return q.Write(ctx, ev)
}

// cancel is the Cancel of every agent: a final canceled status-update. The
// SDK applies it to the running execution (whose context it then cancels)
// or, with none running, to the stored task.
func cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	return status(ctx, rc, q, a2a.TaskStateCanceled, "", true)
}

func textOf(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if tp, ok := p.(a2a.TextPart); ok {
			b.WriteString(tp.Text)
		}
	}
	return b.String()
}

// echoExecutor: Task(submitted), the artifact "echo" in one artifact-update
// per part (long texts split by peer.SplitText; append on all but the
// first, lastChunk on the last), then a final completed status-update.
type echoExecutor struct{}

func (echoExecutor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if err := startTask(ctx, rc, q); err != nil {
		return err
	}
	chunks := chunkParts(rc.Message.Parts)
	if len(chunks) == 0 { // unreachable: the SDK rejects messages without parts
		chunks = []a2a.Part{nil}
	}
	id := a2a.NewArtifactID()
	for i, p := range chunks {
		parts := a2a.ContentParts{}
		if p != nil {
			parts = a2a.ContentParts{p}
		}
		ev := &a2a.TaskArtifactUpdateEvent{
			TaskID: rc.TaskID, ContextID: rc.ContextID,
			Append: i > 0, LastChunk: i == len(chunks)-1,
			Artifact: &a2a.Artifact{ID: id, Name: "echo", Parts: parts},
		}
		if err := q.Write(ctx, ev); err != nil {
			return err
		}
	}
	return status(ctx, rc, q, a2a.TaskStateCompleted, "", true)
}

func (echoExecutor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	return cancel(ctx, rc, q)
}

func chunkParts(parts a2a.ContentParts) []a2a.Part {
	var out []a2a.Part
	for _, p := range parts {
		tp, ok := p.(a2a.TextPart)
		if !ok {
			out = append(out, p)
			continue
		}
		chunks := peer.SplitText(tp.Text)
		if len(chunks) == 1 {
			out = append(out, p)
			continue
		}
		for _, c := range chunks {
			out = append(out, a2a.TextPart{Text: c, Metadata: tp.Metadata})
		}
	}
	return out
}

// chatExecutor: every turn ends in a final input-required status-update
// whose agent message quotes the text; "bye" completes the task.
type chatExecutor struct{}

func (chatExecutor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if err := startTask(ctx, rc, q); err != nil {
		return err
	}
	// The SDK has already appended this message to the stored history.
	turn := 1
	if rc.StoredTask != nil {
		turn = 0
		for _, m := range rc.StoredTask.History {
			if m.Role == a2a.MessageRoleUser {
				turn++
			}
		}
	}
	reply, bye := peer.ChatReply(turn, textOf(rc.Message.Parts))
	if bye {
		return status(ctx, rc, q, a2a.TaskStateCompleted, reply, true)
	}
	return status(ctx, rc, q, a2a.TaskStateInputRequired, reply, true)
}

func (chatExecutor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	return cancel(ctx, rc, q)
}

// slowExecutor works for N seconds (the message text, default 10) with a
// working status-update every step, then the artifact "result" and a final
// completed status-update. A cancel ends it with canceled.
type slowExecutor struct{ step time.Duration }

func (s slowExecutor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if err := startTask(ctx, rc, q); err != nil {
		return err
	}
	total := peer.SlowDuration(textOf(rc.Message.Parts))
	if err := status(ctx, rc, q, a2a.TaskStateWorking, peer.SlowWorking(total), false); err != nil {
		return err
	}
	start := time.Now()
	tk := time.NewTicker(s.step)
	defer tk.Stop()
	for time.Since(start) < total {
		select {
		case <-ctx.Done(): // canceled: the SDK has applied the canceled status
			return ctx.Err()
		case <-tk.C:
			done := min(time.Since(start), total)
			if err := status(ctx, rc, q, a2a.TaskStateWorking, peer.SlowProgress(done, total), false); err != nil {
				return err
			}
		}
	}
	art := &a2a.TaskArtifactUpdateEvent{
		TaskID: rc.TaskID, ContextID: rc.ContextID, LastChunk: true,
		Artifact: &a2a.Artifact{ID: a2a.NewArtifactID(), Name: "result",
			Parts: a2a.ContentParts{a2a.TextPart{Text: peer.SlowResult(total)}}},
	}
	if err := q.Write(ctx, art); err != nil {
		return err
	}
	return status(ctx, rc, q, a2a.TaskStateCompleted, "", true)
}

func (slowExecutor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	return cancel(ctx, rc, q)
}
