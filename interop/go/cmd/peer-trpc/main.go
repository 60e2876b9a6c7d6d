// Command peer-trpc is a PEER A2A server built only from
// trpc.group/trpc-go/trpc-a2a-go v0.2.5 (server.NewA2AServer,
// taskmanager.NewMemoryTaskManager with a MessageProcessor per agent). It
// hosts the same three agents as `a2abridge serve`, each with its own
// A2AServer and in-memory task manager, so that `a2abridge check` can run
// against a server that is not ours:
//
//	POST /a2a/{echo,chat,slow}/                              JSON-RPC (the SDK derives the path from the card's url)
//	GET  /a2a/{echo,chat,slow}/.well-known/agent-card.json   card (also the legacy agent.json)
//
// The card's url ends with a slash, as the SDK serves the JSON-RPC endpoint
// at "<path>/" (POST /a2a/echo without the slash is a 301 redirect).
// There is no default agent at the root: the SDK has one card path per
// server. The card declares streaming and push notifications (the SDK
// implements tasks/pushNotificationConfig/set and /get; it delivers none),
// and protocolVersion is the SDK's server.ProtocolVersion ("0.2.5").
//
// The agents follow the SDK's own examples: a message builds a task with
// handle.BuildTask(message.TaskID, message.ContextID) (so an unknown
// taskId creates a task of that id), updates go through
// handle.UpdateTaskState and handle.AddArtifact, streams through
// handle.SubscribeTask; non-blocking sends (the SDK's default when
// configuration.blocking is absent) work in the background.
//
// The HTTP server uses the SDK's timeouts (server.Start: read 60 s, write
// 60 s, idle 300 s), so streams are cut after 60 s like in a real
// deployment.
//
// Usage:
//
//	peer-trpc [--addr 127.0.0.1:0] [--step 1s] [--log-level warn]
//
// Once listening it prints `peer listening on http://ADDR` on stdout (the
// SDK's logs go to stderr). SIGINT or SIGTERM stops it (exit status 0).
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"trpc.group/trpc-go/trpc-a2a-go/log"
	"trpc.group/trpc-go/trpc-a2a-go/protocol"
	"trpc.group/trpc-go/trpc-a2a-go/server"
	"trpc.group/trpc-go/trpc-a2a-go/taskmanager"

	"github.com/a2abridge/a2abridge/interop/internal/peer"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "peer-trpc:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free port)")
	step := flag.Duration("step", time.Second, "progress interval of the slow agent")
	logLevel := flag.String("log-level", "warn", "SDK log level on stderr: debug, info, warn or error")
	if err := peer.ParseFlags(); err != nil {
		return err
	}
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	// The SDK logs to stdout by default; keep stdout for the listening line.
	log.Default = zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()),
		zapcore.AddSync(os.Stderr), zap.NewAtomicLevelAt(lvl))).Sugar()

	ln, base, err := peer.Listen(*addr)
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	for _, ag := range agents(*step) {
		tm, err := taskmanager.NewMemoryTaskManager(ag.proc)
		if err != nil {
			return err
		}
		srv, err := server.NewA2AServer(ag.card(base+"/a2a/"+ag.Name+"/"), tm, server.WithHTTPRouter(mux))
		if err != nil {
			return err
		}
		srv.Handler() // registers the agent's routes on mux
	}

	hs := &http.Server{
		Handler: mux,
		// The SDK's defaults (server.Start).
		ReadTimeout:  60 * time.Second,
		WriteTimeout: 60 * time.Second,
		IdleTimeout:  300 * time.Second,
	}
	return peer.Serve(ln, hs, nil)
}

// agent is one hosted agent: its card data and message processor.
type agent struct {
	peer.Agent
	proc taskmanager.MessageProcessor
}

func ptr[T any](v T) *T { return &v }

func agents(step time.Duration) []agent {
	return []agent{
		{peer.Echo, &processor{work: echoWork}},
		{peer.Chat, &processor{work: chatWork, multiTurn: true}},
		{peer.Slow, &processor{work: slowWork(step)}},
	}
}

func (ag agent) card(url string) server.AgentCard {
	modes := peer.Modes()
	return server.AgentCard{
		Name:               ag.Name,
		Description:        ag.Desc,
		URL:                url,
		Version:            "1.0.0",
		ProtocolVersion:    ptr(server.ProtocolVersion),
		PreferredTransport: ptr("JSONRPC"),
		Provider:           &server.AgentProvider{Organization: "a2abridge interop (trpc-a2a-go peer)", URL: ptr("https://github.com/trpc-group/trpc-a2a-go")},
		Capabilities:       server.AgentCapabilities{Streaming: ptr(true), PushNotifications: ptr(true)},
		DefaultInputModes:  modes,
		DefaultOutputModes: modes,
		Skills: []server.AgentSkill{{ID: ag.Name, Name: ag.SkillName, Description: ptr(ag.SkillDesc),
			Tags: ag.Tags, Examples: ag.Examples}},
	}
}

// work is an agent's behaviour on one task: it reports through the
// handler; an error from it (the task was canceled and deleted) ends it.
type work func(h taskmanager.TaskHandler, taskID string, msg protocol.Message) error

// processor is the MessageProcessor of one agent.
type processor struct {
	work      work
	multiTurn bool
}

func (p *processor) ProcessMessage(ctx context.Context, msg protocol.Message, opts taskmanager.ProcessOptions, h taskmanager.TaskHandler) (*taskmanager.MessageProcessingResult, error) {
	var taskID string
	fresh := true
	if p.multiTurn && msg.TaskID != nil && *msg.TaskID != "" {
		if ct, err := h.GetTask(msg.TaskID); err == nil {
			if st := ct.Task().Status.State; st != protocol.TaskStateInputRequired {
				return nil, fmt.Errorf("task %s is %s, not input-required", *msg.TaskID, st)
			}
			taskID, fresh = *msg.TaskID, false
		}
	}
	if taskID == "" {
		// As in the SDK's examples.
		id, err := h.BuildTask(msg.TaskID, msg.ContextID)
		if err != nil {
			return nil, err
		}
		taskID = id
	}
	if opts.Streaming {
		sub, err := h.SubscribeTask(&taskID)
		if err != nil {
			return nil, err
		}
		if fresh {
			if ct, err := h.GetTask(&taskID); err == nil {
				t := *ct.Task()
				t.History = []protocol.Message{msg}
				_ = sub.Send(protocol.StreamingMessageEvent{Result: &t})
			}
		}
		go func() {
			defer sub.Close()
			_ = p.work(h, taskID, msg)
		}()
		return &taskmanager.MessageProcessingResult{StreamingEvents: sub}, nil
	}
	if !opts.Blocking {
		go func() { _ = p.work(h, taskID, msg) }()
	} else if err := p.work(h, taskID, msg); err != nil {
		return nil, err
	}
	ct, err := h.GetTask(&taskID)
	if err != nil {
		return nil, err
	}
	return &taskmanager.MessageProcessingResult{Result: ct.Task()}, nil
}

func textOf(parts []protocol.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if tp, ok := p.(*protocol.TextPart); ok {
			b.WriteString(tp.Text)
		}
	}
	return b.String()
}

func agentMessage(taskID string, h taskmanager.TaskHandler, text string) *protocol.Message {
	ctxID := h.GetContextID()
	m := protocol.NewMessageWithContext(protocol.MessageRoleAgent, []protocol.Part{protocol.NewTextPart(text)}, &taskID, &ctxID)
	return &m
}

// echoWork sends the artifact "echo" in one chunk per part (long texts
// split by peer.SplitText, as in the other peers), then completes the task.
func echoWork(h taskmanager.TaskHandler, taskID string, msg protocol.Message) error {
	var chunks []protocol.Part
	for _, p := range msg.Parts {
		tp, ok := p.(*protocol.TextPart)
		if !ok {
			chunks = append(chunks, p)
			continue
		}
		texts := peer.SplitText(tp.Text)
		if len(texts) == 1 {
			chunks = append(chunks, p)
			continue
		}
		for _, c := range texts {
			chunks = append(chunks, &protocol.TextPart{Kind: protocol.KindText, Text: c, Metadata: tp.Metadata})
		}
	}
	id := protocol.GenerateArtifactID()
	for i, c := range chunks {
		art := protocol.Artifact{ArtifactID: id, Name: ptr("echo"), Parts: []protocol.Part{c}}
		if err := h.AddArtifact(&taskID, art, i == len(chunks)-1, i > 0); err != nil {
			return err
		}
	}
	return h.UpdateTaskState(&taskID, protocol.TaskStateCompleted, nil)
}

func chatWork(h taskmanager.TaskHandler, taskID string, msg protocol.Message) error {
	turn := 0
	for _, m := range h.GetMessageHistory() {
		if m.Role == protocol.MessageRoleUser {
			turn++
		}
	}
	reply, bye := peer.ChatReply(turn, textOf(msg.Parts))
	if bye {
		return h.UpdateTaskState(&taskID, protocol.TaskStateCompleted, agentMessage(taskID, h, reply))
	}
	return h.UpdateTaskState(&taskID, protocol.TaskStateInputRequired, agentMessage(taskID, h, reply))
}

func slowWork(step time.Duration) work {
	return func(h taskmanager.TaskHandler, taskID string, msg protocol.Message) error {
		total := peer.SlowDuration(textOf(msg.Parts))
		if err := h.UpdateTaskState(&taskID, protocol.TaskStateWorking, agentMessage(taskID, h, peer.SlowWorking(total))); err != nil {
			return err
		}
		start := time.Now()
		tk := time.NewTicker(step)
		defer tk.Stop()
		for time.Since(start) < total {
			<-tk.C
			done := min(time.Since(start), total)
			// Fails once the task was canceled (the SDK deletes it).
			if err := h.UpdateTaskState(&taskID, protocol.TaskStateWorking,
				agentMessage(taskID, h, peer.SlowProgress(done, total))); err != nil {
				return err
			}
		}
		art := protocol.Artifact{ArtifactID: protocol.GenerateArtifactID(), Name: ptr("result"),
			Parts: []protocol.Part{protocol.NewTextPart(peer.SlowResult(total))}}
		if err := h.AddArtifact(&taskID, art, true, false); err != nil {
			return err
		}
		return h.UpdateTaskState(&taskID, protocol.TaskStateCompleted, nil)
	}
}
