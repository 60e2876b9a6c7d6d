// Command peer-a2agov2 is a PEER A2A 1.0 server built only from the official
// Go SDK v2 (github.com/a2aproject/a2a-go/v2 v2.4.0, packages a2asrv,
// a2asrv/push and, with --compat, a2acompat/a2av0). It hosts the same three
// agents as `a2abridge serve` and cmd/peer-a2ago (echo, chat, slow), each
// behind its own a2asrv request handler (and so its own in-memory task store
// and push config store), serving both A2A 1.0 bindings:
//
//	POST /a2a/{echo,chat,slow}                              JSON-RPC 1.0 (a2asrv.NewJSONRPCHandler)
//	     /a2a/{echo,chat,slow}/rest/...                     HTTP+JSON 1.0 (a2asrv.NewRESTHandler): POST message:send, ...
//	GET  /a2a/{echo,chat,slow}/.well-known/agent-card.json  card (a2asrv.NewStaticAgentCardHandler)
//	GET  /.well-known/agent-card.json                       the echo agent's card (the default agent)
//
// The card lists supportedInterfaces [JSONRPC 1.0 at /a2a/{name},
// HTTP+JSON 1.0 at /a2a/{name}/rest], in that order. With --compat the same
// handler is also served over A2A 0.3 (a2acompat/a2av0):
//
//	POST /a2a/{name}/v0.3                                   JSON-RPC 0.3 (a2av0.NewJSONRPCHandler)
//	     /a2a/{name}/v0.3/v1/...                            HTTP+JSON 0.3 (a2av0.NewRESTHandler)
//
// and the card is produced by a2av0.NewStaticAgentCardProducer (a union of
// the 1.0 and 0.3 card fields; url/preferredTransport name the 0.3 JSON-RPC
// endpoint) with the two 0.3 interfaces added to supportedInterfaces.
//
// Two deliberate departures from the SDK's defaults, both needed by tests:
//
//   - Every caller is the authenticated user --list-user (default
//     "anonymous", set by a CallInterceptor). The SDK's default in-memory
//     task store answers ListTasks with ErrUnauthenticated when the call
//     has no user name; --list-user "" restores that default.
//   - Push notifications are enabled (push.NewInMemoryStore +
//     push.NewHTTPPushSender) with AllowPrivateNetworks, because the tests'
//     webhooks listen on 127.0.0.1, which the sender's SSRF guard refuses by
//     default.
//
// With --grpc the agents are served over gRPC alone (a2agrpc/v1, the SDK's
// gRPC handler; a listener of its own per agent, on the host of --addr,
// since the SDK's gRPC server hosts one handler), and each card lists that
// GRPC 1.0 interface only (its url the listener's host:port); HTTP then
// serves the cards alone.
//
// --wire-log FILE appends every HTTP exchange (request line, headers, body;
// status, headers, body, streams included) to FILE ("-" = stderr), for the
// wire notes in interop/V1_WIRE_NOTES.md.
//
// Usage:
//
//	peer-a2agov2 [--addr 127.0.0.1:0] [--compat | --grpc] [--keep-alive 0] [--step 1s]
//	             [--list-user anonymous] [--wire-log FILE] [--log-level warn]
//
// Once listening it prints `peer listening on http://ADDR` on stdout. SIGINT
// or SIGTERM stops it (exit status 0).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"

	"github.com/a2abridge/a2abridge/interop/internal/peer"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "peer-a2agov2:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free port)")
	grpcOnly := flag.Bool("grpc", false, "serve the agents over gRPC alone (a2agrpc/v1, a listener per agent); the cards list that GRPC interface only")
	compat := flag.Bool("compat", false, "also serve A2A 0.3 (JSON-RPC and HTTP+JSON) through a2acompat/a2av0, with a 0.3-compatible card")
	keepAlive := flag.Duration("keep-alive", 0, "SSE keep-alive comment interval (a2asrv.WithTransportKeepAlive); 0 keeps the SDK default: none")
	step := flag.Duration("step", time.Second, "interval of the slow agent's progress updates (its task lasts N seconds either way)")
	listUser := flag.String("list-user", "anonymous", "authenticated user name given to every call (the SDK's task store refuses ListTasks without one); empty = SDK default")
	wireLog := flag.String("wire-log", "", "append every HTTP exchange to this file (- = stderr)")
	logLevel := flag.String("log-level", "warn", "log level on stderr: debug, info, warn or error")
	if err := peer.ParseFlags(); err != nil {
		return err
	}
	if *step <= 0 {
		return fmt.Errorf("--step must be positive")
	}
	logger, err := peer.Logger(*logLevel)
	if err != nil {
		return err
	}
	ln, base, err := peer.Listen(*addr)
	if err != nil {
		return err
	}

	var transportOpts []a2asrv.TransportOption
	if *keepAlive > 0 {
		transportOpts = append(transportOpts, a2asrv.WithTransportKeepAlive(*keepAlive))
	}
	if *grpcOnly && *compat {
		return fmt.Errorf("--grpc and --compat: choose one")
	}
	mux := http.NewServeMux()
	var grpcServers []*grpc.Server
	for _, ag := range agents(*step) {
		prefix := "/a2a/" + ag.Name
		card := ag.card(base + prefix)
		opts := []a2asrv.RequestHandlerOption{
			a2asrv.WithLogger(logger),
			a2asrv.WithPushNotifications(push.NewInMemoryStore(),
				push.NewHTTPPushSender(&push.HTTPSenderConfig{AllowPrivateNetworks: true})),
		}
		if *listUser != "" {
			opts = append(opts, a2asrv.WithCallInterceptors(userInterceptor{name: *listUser}))
		}
		handler := a2asrv.NewHandler(ag.exec, opts...)

		if *grpcOnly {
			host, _, _ := net.SplitHostPort(ln.Addr().String())
			gln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
			if err != nil {
				return err
			}
			gs := grpc.NewServer()
			a2agrpcv1.NewHandler(handler).RegisterWith(gs)
			go func() { _ = gs.Serve(gln) }()
			grpcServers = append(grpcServers, gs)
			card.SupportedInterfaces = []*a2a.AgentInterface{a2a.NewAgentInterface(gln.Addr().String(), a2a.TransportProtocolGRPC)}
			cardHandler := a2asrv.NewStaticAgentCardHandler(card)
			mux.Handle(prefix+a2asrv.WellKnownAgentCardPath, cardHandler)
			if ag.Name == "echo" {
				mux.Handle(a2asrv.WellKnownAgentCardPath, cardHandler)
			}
			continue
		}
		mux.Handle(prefix, a2asrv.NewJSONRPCHandler(handler, transportOpts...))
		mux.Handle(prefix+"/rest/", http.StripPrefix(prefix+"/rest", a2asrv.NewRESTHandler(handler, transportOpts...)))
		var cardHandler http.Handler
		if *compat {
			card.SupportedInterfaces = append(card.SupportedInterfaces,
				&a2a.AgentInterface{URL: base + prefix + "/v0.3", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
				&a2a.AgentInterface{URL: base + prefix + "/v0.3", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2av0.Version})
			mux.Handle(prefix+"/v0.3", a2av0.NewJSONRPCHandler(handler, transportOpts...))
			mux.Handle(prefix+"/v0.3/", http.StripPrefix(prefix+"/v0.3", a2av0.NewRESTHandler(handler, transportOpts...)))
			cardHandler = a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card))
		} else {
			cardHandler = a2asrv.NewStaticAgentCardHandler(card)
		}
		mux.Handle(prefix+a2asrv.WellKnownAgentCardPath, cardHandler)
		if ag.Name == "echo" {
			mux.Handle(a2asrv.WellKnownAgentCardPath, cardHandler)
		}
	}

	var root http.Handler = mux
	if *wireLog != "" {
		w := io.Writer(os.Stderr)
		if *wireLog != "-" {
			f, err := os.OpenFile(*wireLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				return fmt.Errorf("--wire-log: %w", err)
			}
			defer f.Close()
			w = f
		}
		root = &wireLogger{next: mux, out: w}
	}

	srv := &http.Server{
		Handler:           root,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
	}
	srv.RegisterOnShutdown(func() {
		for _, gs := range grpcServers {
			gs.Stop()
		}
	})
	return peer.Serve(ln, srv, logger)
}

// userInterceptor makes every call an authenticated user's, so that the
// SDK's in-memory task store serves ListTasks (see the package doc).
type userInterceptor struct {
	a2asrv.PassthroughCallInterceptor
	name string
}

func (u userInterceptor) Before(ctx context.Context, callCtx *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	callCtx.User = a2asrv.NewAuthenticatedUser(u.name, nil)
	return ctx, nil, nil
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
		Name:        ag.Name,
		Description: ag.Desc,
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface(url+"/rest", a2a.TransportProtocolHTTPJSON),
		},
		Version:            "1.0.0",
		Provider:           &a2a.AgentProvider{Org: "a2abridge interop (a2a-go v2 peer)", URL: "https://github.com/a2aproject/a2a-go"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		DefaultInputModes:  modes,
		DefaultOutputModes: modes,
		Skills: []a2a.AgentSkill{{ID: ag.Name, Name: ag.SkillName, Description: ag.SkillDesc,
			Tags: ag.Tags, Examples: ag.Examples}},
	}
}

// newTask is the submitted Task of a message that starts a task, so that
// SendStreamingMessage opens with a Task event (as the SDK's own examples
// do); follow-up messages (a stored task) start with status-updates.
func newTask(ec *a2asrv.ExecutorContext) *a2a.Task {
	if ec.StoredTask != nil {
		return nil
	}
	return a2a.NewSubmittedTask(ec, ec.Message)
}

// status is a status-update; an agent message is attached if text is set.
func status(ec *a2asrv.ExecutorContext, state a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
	var msg *a2a.Message
	if text != "" {
		msg = a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
	}
	return a2a.NewStatusUpdateEvent(ec, state, msg)
}

// cancel is the Cancel of every agent: one canceled status-update. The SDK
// applies it to the stored task; a running execution then fails its next
// update and its context is canceled.
func cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(status(ec, a2a.TaskStateCanceled, ""), nil)
	}
}

func textOf(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if p != nil {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}

// echoExecutor: Task(submitted), the artifact "echo" in one artifact-update
// per part (long texts split by peer.SplitText; append on all but the
// first, lastChunk on the last), then a completed status-update.
type echoExecutor struct{}

func (echoExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if t := newTask(ec); t != nil && !yield(t, nil) {
			return
		}
		chunks := chunkParts(ec.Message.Parts)
		id := a2a.NewArtifactID()
		for i, p := range chunks {
			ev := &a2a.TaskArtifactUpdateEvent{
				TaskID: ec.TaskID, ContextID: ec.ContextID,
				Append: i > 0, LastChunk: i == len(chunks)-1,
				Artifact: &a2a.Artifact{ID: id, Name: "echo", Parts: a2a.ContentParts{p}},
			}
			if !yield(ev, nil) {
				return
			}
		}
		yield(status(ec, a2a.TaskStateCompleted, ""), nil)
	}
}

func (echoExecutor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return cancel(ctx, ec)
}

func chunkParts(parts a2a.ContentParts) []*a2a.Part {
	var out []*a2a.Part
	for _, p := range parts {
		if p == nil {
			continue
		}
		text, ok := p.Content.(a2a.Text)
		if !ok {
			out = append(out, p)
			continue
		}
		chunks := peer.SplitText(string(text))
		if len(chunks) == 1 {
			out = append(out, p)
			continue
		}
		for _, c := range chunks {
			out = append(out, &a2a.Part{Content: a2a.Text(c), MediaType: p.MediaType, Metadata: p.Metadata})
		}
	}
	return out
}

// chatExecutor: every turn ends in an input-required status-update whose
// agent message quotes the text; "bye" completes the task.
type chatExecutor struct{}

func (chatExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if t := newTask(ec); t != nil && !yield(t, nil) {
			return
		}
		// The user messages before this one, plus this one (the SDK may or
		// may not have appended it to the stored history already).
		turn := 1
		if ec.StoredTask != nil {
			for _, m := range ec.StoredTask.History {
				if m.Role == a2a.MessageRoleUser && m.ID != ec.Message.ID {
					turn++
				}
			}
		}
		reply, bye := peer.ChatReply(turn, textOf(ec.Message.Parts))
		if bye {
			yield(status(ec, a2a.TaskStateCompleted, reply), nil)
			return
		}
		yield(status(ec, a2a.TaskStateInputRequired, reply), nil)
	}
}

func (chatExecutor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return cancel(ctx, ec)
}

// slowExecutor works for N seconds (the message text, default 10) with a
// working status-update every step, then the artifact "result" and a
// completed status-update. A cancel ends it with canceled.
type slowExecutor struct{ step time.Duration }

func (s slowExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if t := newTask(ec); t != nil && !yield(t, nil) {
			return
		}
		total := peer.SlowDuration(textOf(ec.Message.Parts))
		if !yield(status(ec, a2a.TaskStateWorking, peer.SlowWorking(total)), nil) {
			return
		}
		start := time.Now()
		tk := time.NewTicker(s.step)
		defer tk.Stop()
		for time.Since(start) < total {
			select {
			case <-ctx.Done(): // canceled: the SDK has applied the canceled status
				return
			case <-tk.C:
				done := min(time.Since(start), total)
				if !yield(status(ec, a2a.TaskStateWorking, peer.SlowProgress(done, total)), nil) {
					return
				}
			}
		}
		art := &a2a.TaskArtifactUpdateEvent{
			TaskID: ec.TaskID, ContextID: ec.ContextID, LastChunk: true,
			Artifact: &a2a.Artifact{ID: a2a.NewArtifactID(), Name: "result",
				Parts: a2a.ContentParts{a2a.NewTextPart(peer.SlowResult(total))}},
		}
		if !yield(art, nil) {
			return
		}
		yield(status(ec, a2a.TaskStateCompleted, ""), nil)
	}
}

func (slowExecutor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return cancel(ctx, ec)
}

// wireLogger writes each HTTP exchange to out once the handler returns:
// request line, headers and body, then status, headers and the body as
// written (an SSE stream in full). Bodies are cut at wireLogMax bytes.
type wireLogger struct {
	next http.Handler
	mu   sync.Mutex
	out  io.Writer
	seq  atomic.Int64
}

const wireLogMax = 16 << 10

func (l *wireLogger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := l.seq.Add(1)
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	start := time.Now()
	l.next.ServeHTTP(rec, r)

	var b bytes.Buffer
	fmt.Fprintf(&b, "=== #%d %s %s (%s)\n", n, r.Method, r.URL.RequestURI(), time.Since(start).Round(time.Millisecond))
	writeHeaders(&b, "> ", r.Header)
	writeBody(&b, "> ", body)
	fmt.Fprintf(&b, "< %d %s\n", rec.status, http.StatusText(rec.status))
	writeHeaders(&b, "< ", w.Header())
	writeBody(&b, "< ", rec.body.Bytes())
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.out.Write(b.Bytes())
}

func writeHeaders(b *bytes.Buffer, prefix string, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			fmt.Fprintf(b, "%s%s: %s\n", prefix, k, v)
		}
	}
}

func writeBody(b *bytes.Buffer, prefix string, body []byte) {
	if len(body) == 0 {
		return
	}
	cut := ""
	if len(body) > wireLogMax {
		body, cut = body[:wireLogMax], fmt.Sprintf(" … (%d bytes cut)", len(body)-wireLogMax)
	}
	b.WriteString(prefix + "\n")
	for _, line := range strings.Split(strings.TrimRight(string(body), "\n"), "\n") {
		b.WriteString(prefix + line + "\n")
	}
	if cut != "" {
		b.WriteString(prefix + cut + "\n")
	}
}

// recorder keeps a copy of the status and body; Flush passes through, so
// SSE streams still reach the client event by event.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	mu     sync.Mutex
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	r.mu.Lock()
	r.body.Write(p)
	r.mu.Unlock()
	return r.ResponseWriter.Write(p)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
