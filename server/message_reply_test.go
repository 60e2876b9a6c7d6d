package server_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

// replyAgent answers a message directly (server.MessageResponder) with
// "you said TEXT" (messageId "reply-1" when the request's messageId starts
// with "fixed"), except: "task …" is left to the task path (Execute
// completes it with an artifact), "refuse" is -32602, "error" a plain
// error, "panic" panics, "bad-role", "bad-task", "bad-context" and
// "no-parts" are invalid answers.
type replyAgent struct {
	responded atomic.Int32 // Respond calls
	executed  atomic.Int32 // Execute calls
	mu        sync.Mutex
	seen      []server.Request // what Respond was given
}

func (a *replyAgent) Respond(ctx context.Context, req *server.Request) (*a2a.Message, error) {
	a.responded.Add(1)
	a.mu.Lock()
	a.seen = append(a.seen, *req)
	a.mu.Unlock()
	text := ""
	if len(req.Message.Parts) > 0 {
		if tp, ok := req.Message.Parts[0].Content.(a2a.Text); ok {
			text = string(tp)
		}
	}
	m := a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart("you said "+text))
	m.MessageID = ""
	if strings.HasPrefix(req.Message.MessageID, "fixed") {
		m.MessageID = "reply-1"
	}
	switch {
	case strings.HasPrefix(text, "task"):
		return nil, nil
	case text == "refuse":
		return nil, a2a.InvalidParams("/params/message/parts", "I only take questions")
	case text == "error":
		return nil, errors.New("secret internal detail")
	case text == "panic":
		panic("boom in Respond")
	case text == "bad-role":
		m.Role = a2a.RoleUser
	case text == "bad-task":
		m.TaskID = "some-task"
	case text == "bad-context":
		m.ContextID = "another-context"
	case text == "no-parts":
		m.Parts = nil
	}
	return &m, nil
}

func (a *replyAgent) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	a.executed.Add(1)
	return t.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("a task for " + req.Message.ContextID)}}, false, true)
}

type replyServer struct {
	*httptest.Server
	agent *replyAgent
	store store.Store
	logs  *syncBuffer
}

// newReplyServer hosts a replyAgent as "reply" (the default agent), its
// transport's log in logs.
func newReplyServer(t *testing.T) *replyServer {
	t.Helper()
	return newReplyServerWith(t, server.EngineOptions{})
}

// newReplyServerWith is newReplyServer on an engine with options eo.
func newReplyServerWith(t *testing.T, eo server.EngineOptions) *replyServer {
	t.Helper()
	st := memory.New()
	eo.Logger = testutil.Logger()
	eng, err := server.NewEngine(context.Background(), st, eo)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	host := server.NewHost(server.HostOptions{Default: "reply", Transport: server.TransportOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))}})
	a := &replyAgent{}
	host.Add(server.NewHandler(eng, "reply", a, testutil.Card("reply"), server.HandlerOptions{}))
	ts := testutil.Serve(t, host, eng.Close)
	return &replyServer{Server: ts, agent: a, store: st, logs: logs}
}

// tasksOf counts the tasks stored for agent "reply".
func (s *replyServer) tasks(t *testing.T) int {
	t.Helper()
	page, err := s.store.ListTasks(context.Background(), store.TaskQuery{Agent: "reply", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Tasks)
}

// rawPost posts body to url with the headers and returns status, content
// type and body.
func rawPost(t *testing.T, url, body string, hdr ...string) (int, string, string) {
	t.Helper()
	resp, b := testutil.Post(t, url, body, hdr...)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestMessageReplyWire: an agent that answers with a Message (A2A 1.0
// §3.1.1) gets exactly that Message as the result of SendMessage, and a
// stream of exactly that one Message without an SSE id (§3.1.2,
// "Message-only stream"), over 1.0 JSON-RPC, 1.0 HTTP+JSON, 0.3 JSON-RPC
// and 0.3 HTTP+JSON, blocking or not; no task is stored.
func TestMessageReplyWire(t *testing.T) {
	t.Parallel()
	ts := newReplyServer(t)
	base := ts.URL + "/a2a/reply"
	msg10 := `{"messageId":"reply-1","contextId":"c-1","role":"ROLE_AGENT","parts":[{"text":"you said hi"}]}`
	msg03 := `{"kind":"message","messageId":"reply-1","role":"agent","parts":[{"kind":"text","text":"you said hi"}],"contextId":"c-1"}`
	msgREST03 := `{"messageId":"reply-1","contextId":"c-1","role":"ROLE_AGENT","content":[{"text":"you said hi"}]}`
	params10 := func(id, cfg string) string {
		return `{"message":{"messageId":"` + id + `","contextId":"c-1","role":"ROLE_USER","parts":[{"text":"hi"}]}` + cfg + `}`
	}
	params03 := func(id, cfg string) string {
		return `{"message":{"kind":"message","messageId":"` + id + `","contextId":"c-1","role":"user","parts":[{"kind":"text","text":"hi"}]}` + cfg + `}`
	}
	paramsREST03 := func(id, cfg string) string {
		return `{"message":{"messageId":"` + id + `","contextId":"c-1","role":"ROLE_USER","content":[{"text":"hi"}]}` + cfg + `}`
	}
	rpc := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
	}
	cases := []struct {
		name       string
		url        string
		body       func(id, cfg string) string
		hdr        []string
		wantSend   string
		streamURL  string
		streamBody func(id, cfg string) string
		wantFrame  string
		noBlock    string // a configuration that does not block
	}{
		{"1.0 JSON-RPC", base, func(id, cfg string) string { return rpc("SendMessage", params10(id, cfg)) }, []string{"A2A-Version", "1.0"},
			`{"jsonrpc":"2.0","id":7,"result":{"message":` + msg10 + `}}`,
			base, func(id, cfg string) string { return rpc("SendStreamingMessage", params10(id, cfg)) },
			`{"jsonrpc":"2.0","id":7,"result":{"message":` + msg10 + `}}`, `,"configuration":{"returnImmediately":true}`},
		{"1.0 HTTP+JSON", base + "/message:send", params10, []string{"A2A-Version", "1.0"},
			`{"message":` + msg10 + `}`,
			base + "/message:stream", params10,
			`{"message":` + msg10 + `}`, `,"configuration":{"returnImmediately":true}`},
		{"0.3 JSON-RPC", base, func(id, cfg string) string { return rpc("message/send", params03(id, cfg)) }, nil,
			`{"jsonrpc":"2.0","id":7,"result":` + msg03 + `}`,
			base, func(id, cfg string) string { return rpc("message/stream", params03(id, cfg)) },
			`{"jsonrpc":"2.0","id":7,"result":` + msg03 + `}`, `,"configuration":{"blocking":false}`},
		{"0.3 HTTP+JSON", base + "/v1/message:send", paramsREST03, nil,
			`{"message":` + msgREST03 + `}`,
			base + "/v1/message:stream", paramsREST03,
			`{"message":` + msgREST03 + `}`, `,"configuration":{"blocking":false}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Blocking (the default) and not: the same answer.
			for i, cfg := range []string{"", c.noBlock} {
				id := fmt.Sprintf("fixed-%s-%d", strings.ReplaceAll(c.name, " ", ""), i)
				code, ct, body := rawPost(t, c.url, c.body(id, cfg), c.hdr...)
				if code != 200 || !strings.HasPrefix(ct, "application/") || strings.TrimSpace(body) != c.wantSend {
					t.Fatalf("send%s: %d %s\n%s\nwant %s", cfg, code, ct, body, c.wantSend)
				}
			}
			// The same messageId again runs the agent again: nothing
			// was stored to answer it from.
			before := ts.agent.responded.Load()
			id := "fixed-" + strings.ReplaceAll(c.name, " ", "") + "-0"
			if code, _, body := rawPost(t, c.url, c.body(id, ""), c.hdr...); code != 200 || strings.TrimSpace(body) != c.wantSend {
				t.Fatalf("repeated send: %d %s", code, body)
			}
			if n := ts.agent.responded.Load() - before; n != 1 {
				t.Fatalf("a repeated messageId ran Respond %d times, want 1", n)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			frames := streamRaw(t, ctx, c.streamURL, c.streamBody("fixed-s-"+strings.ReplaceAll(c.name, " ", ""), ""), append([]string{"Accept", "text/event-stream"}, c.hdr...)...)
			if len(frames) != 1 || frames[0].id != "" || frames[0].data != c.wantFrame {
				t.Fatalf("stream: %d frames %+v\nwant one without id: %s", len(frames), frames, c.wantFrame)
			}
		})
	}
	if n := ts.tasks(t); n != 0 || ts.agent.executed.Load() != 0 {
		t.Fatalf("%d tasks stored, Execute ran %d times: want none", n, ts.agent.executed.Load())
	}
}

// TestMessageReplyErrors: what Respond refuses with an *a2a.Error reaches
// the client as that error; a plain error, a panic or an invalid answer
// is an internal error (-32603) that is logged and shows nothing of the
// agent's, over every binding and version; nothing is stored.
func TestMessageReplyErrors(t *testing.T) {
	t.Parallel()
	ts := newReplyServer(t)
	base := ts.URL + "/a2a/reply"
	type answer struct {
		code int // JSON-RPC code, or HTTP status for HTTP+JSON
		body string
	}
	bindings := []struct {
		name string
		send func(text string) answer
	}{
		{"1.0 JSON-RPC", func(text string) answer {
			r := rpc10(t, base, "SendMessage", v10SendParams(text, "e-"+text, ""))
			if r.Error == nil {
				return answer{0, string(r.Result)}
			}
			return answer{r.Error.Code, r.Error.Message}
		}},
		{"1.0 HTTP+JSON", func(text string) answer {
			code, b := restDo(t, http.MethodPost, base+"/message:send", v10SendParams(text, "e-"+text, ""))
			return answer{code, string(b)}
		}},
		{"0.3 JSON-RPC", func(text string) answer {
			_, b := testutil.Post(t, base, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":`+testutil.SendParams03(text, "e-"+text, "")+`}`)
			var r struct {
				Error *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &r); err != nil || r.Error == nil {
				return answer{0, string(b)}
			}
			return answer{r.Error.Code, r.Error.Message}
		}},
		{"0.3 HTTP+JSON", func(text string) answer {
			code, _, b := rest03(t, http.MethodPost, base+"/v1/message:send", send03(text, "e-"+text, ""))
			return answer{code, string(b)}
		}},
	}
	internal := map[string]string{
		"error":       "secret internal detail",
		"panic":       "panicked in Respond: boom in Respond",
		"bad-role":    "answered with an invalid message: role",
		"bad-task":    "answered with an invalid message: taskId",
		"bad-context": "answered with an invalid message: contextId",
		"no-parts":    "answered with an invalid message: no parts",
	}
	for _, b := range bindings {
		rest := strings.Contains(b.name, "HTTP")
		got := b.send("refuse")
		if want := map[bool]int{false: -32602, true: 400}[rest]; got.code != want || !strings.Contains(got.body, "I only take questions") {
			t.Errorf("%s refuse: %+v, want %d with the agent's reason", b.name, got, want)
		}
		for text, logged := range internal {
			before := strings.Count(ts.logs.String(), logged)
			got := b.send(text)
			if want := map[bool]int{false: -32603, true: 500}[rest]; got.code != want || strings.Contains(got.body, "secret") || strings.Contains(got.body, "boom") {
				t.Errorf("%s %s: %+v, want %d without the agent's details", b.name, text, got, want)
			}
			// The line may be written just after the answer.
			if !testutil.Poll(5*time.Second, func() bool { return strings.Count(ts.logs.String(), logged) > before }) {
				t.Fatalf("%s %s: no log line %q:\n%s", b.name, text, logged, ts.logs.String())
			}
		}
	}
	// A stream's request error is its one SSE event.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	frames := streamRaw(t, ctx, base, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":`+v10SendParams("bad-role", "e-s", "")+`}`,
		"A2A-Version", "1.0", "Accept", "text/event-stream")
	if len(frames) != 1 || !strings.Contains(frames[0].data, `"code":-32603`) {
		t.Fatalf("stream of an invalid answer: %+v", frames)
	}
	if n := ts.tasks(t); n != 0 || ts.agent.executed.Load() != 0 {
		t.Fatalf("%d tasks stored, Execute ran %d times: want none", n, ts.agent.executed.Load())
	}
}

// TestMessageReplyTaskPath: the request is validated before Respond
// (acceptedOutputModes, push support), a message that continues a task
// never reaches Respond, and Respond returning nil leaves the message to
// Execute, in the contextId Respond was shown.
func TestMessageReplyTaskPath(t *testing.T) {
	t.Parallel()
	ts := newReplyServer(t)
	base := ts.URL + "/a2a/reply"
	r := rpc10(t, base, "SendMessage", v10SendParams("hi", "v-1", `,"configuration":{"acceptedOutputModes":["image/png"]}`))
	if r.Error == nil || r.Error.Code != -32005 {
		t.Fatalf("unacceptable output modes: %+v", r)
	}
	r = rpc10(t, base, "SendMessage", v10SendParams("hi", "v-2", `,"configuration":{"taskPushNotificationConfig":{"url":"https://example.com/hook"}}`))
	if r.Error == nil || r.Error.Code != -32003 {
		t.Fatalf("push config without push: %+v", r)
	}
	if n := ts.agent.responded.Load(); n != 0 {
		t.Fatalf("Respond ran %d times for requests refused before it", n)
	}

	// nil: a task, in the contextId Respond saw.
	for _, method := range []string{"SendMessage", "SendStreamingMessage"} {
		var task testutil.WireTask
		if method == "SendMessage" {
			r = rpc10(t, base, method, v10SendParams("task please", "t-"+method, ""))
			var res struct {
				Task jsontext.Value `json:"task"`
			}
			if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.Task == nil || json.Unmarshal(res.Task, &task) != nil {
				t.Fatalf("%s falling back to a task: %+v %s", method, r.Error, r.Result)
			}
			if task.Status.State != "TASK_STATE_COMPLETED" || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text != "a task for "+task.ContextID {
				t.Fatalf("task: %s", r.Result)
			}
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			frames := streamRaw(t, ctx, base, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":`+v10SendParams("task stream", "t-s", "")+`}`,
				"A2A-Version", "1.0", "Accept", "text/event-stream")
			cancel()
			var first struct {
				Result struct {
					Task jsontext.Value `json:"task"`
				} `json:"result"`
			}
			if len(frames) < 2 || frames[0].id == "" || json.Unmarshal([]byte(frames[0].data), &first) != nil || first.Result.Task == nil || json.Unmarshal(first.Result.Task, &task) != nil {
				t.Fatalf("stream falling back to a task: %+v", frames)
			}
		}
		ts.agent.mu.Lock()
		seen := ts.agent.seen[len(ts.agent.seen)-1]
		ts.agent.mu.Unlock()
		if seen.Message.ContextID == "" || seen.Message.ContextID != task.ContextID || seen.Message.TaskID != "" || seen.Task.ID != "" {
			t.Fatalf("%s: Respond saw message ids %q/%q and task %q; the task's contextId is %q", method, seen.Message.TaskID, seen.Message.ContextID, seen.Task.ID, task.ContextID)
		}
	}
	if n := ts.tasks(t); n != 2 || ts.agent.executed.Load() != 2 {
		t.Fatalf("%d tasks, %d executions: want 2", n, ts.agent.executed.Load())
	}

	// A message naming a task goes to the task, never to Respond.
	page, err := ts.store.ListTasks(context.Background(), store.TaskQuery{Agent: "reply", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	before := ts.agent.responded.Load()
	r = rpc10(t, base, "SendMessage", fmt.Sprintf(`{"message":{"role":"ROLE_USER","messageId":"c-1","taskId":%q,"parts":[{"text":"hi"}]}}`, page.Tasks[0].Task.ID))
	if r.Error == nil || r.Error.Code != -32004 || ts.agent.responded.Load() != before {
		t.Fatalf("continuing a completed task: %+v (Respond ran %d times)", r.Error, ts.agent.responded.Load()-before)
	}
}

// TestMessageFunc: a MessageFunc answers Handler.Send with its Message,
// and the paths that need a task (Handler.SendMessage, RunAgent) with a
// task completed by it; a pushNotificationConfig is validated, then
// ignored for a direct answer; a nil answer is an error.
func TestMessageFunc(t *testing.T) {
	t.Parallel()
	refused := errors.New("no such host")
	st := memory.New()
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger(),
		Push: &server.PushOptions{CheckURL: func(_ context.Context, u string) error {
			if strings.Contains(u, "internal") {
				return refused
			}
			return nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	f := server.MessageFunc(func(ctx context.Context, req *server.Request) (*a2a.Message, error) {
		if req.Message.Parts[0].Text() == "nothing" {
			return nil, nil
		}
		m := a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart("pong"))
		return &m, nil
	})
	h := server.NewHandler(eng, "ping", f, testutil.Card("ping"), server.HandlerOptions{})
	ctx := context.Background()
	send := func(text, hook string) a2a.SendMessageRequest {
		p := a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(text))}
		if hook != "" {
			p.Configuration = &a2a.SendMessageConfiguration{PushNotificationConfig: &a2a.PushNotificationConfig{URL: hook}}
		}
		return p
	}

	res, err := h.SendMessage(ctx, send("ping", "https://hooks.example.com/a"))
	m, ok := res.(*a2a.Message)
	if err != nil || !ok || m.Role != a2a.RoleAgent || m.MessageID == "" || m.ContextID == "" || m.TaskID != "" || m.Parts[0].Text() != "pong" {
		t.Fatalf("Send: %#v %v", res, err)
	}
	p := send("ping", "https://internal.example.com/a")
	if _, err := h.SendMessage(ctx, p); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "no such host") {
		t.Fatalf("Send with a refused webhook: %v", err)
	}
	if _, err := h.SendMessage(ctx, send("nothing", "")); err == nil || errors.As(err, new(*a2a.Error)) {
		t.Fatalf("a nil answer: %v, want an internal error", err)
	}

	task, err := h.SendMessageForTask(ctx, send("ping", ""))
	if err != nil || task.Status.State != a2a.TaskStateCompleted || task.Status.Message == nil || task.Status.Message.Parts[0].Text() != "pong" || task.Status.Message.TaskID != task.ID {
		t.Fatalf("SendMessage: %+v %v", task, err)
	}
	run, err := server.RunAgent(ctx, f, &server.Request{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("ping"))}, server.RunOptions{})
	if err != nil || run.Status.State != a2a.TaskStateCompleted || run.Status.Message == nil || run.Status.Message.Parts[0].Text() != "pong" {
		t.Fatalf("RunAgent: %+v %v", run, err)
	}
	run, err = server.RunAgent(ctx, f, &server.Request{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("nothing"))}, server.RunOptions{})
	if err == nil || run.Status.State != a2a.TaskStateFailed {
		t.Fatalf("RunAgent of a nil answer: %s %v", run.Status.State, err)
	}
	// Only the SendMessage call made a task, and no push config was kept.
	page, err := st.ListTasks(ctx, store.TaskQuery{Agent: "ping", Limit: 10})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("tasks: %d %v", len(page.Tasks), err)
	}
}

// TestMessageReplyTelemetry: a direct answer is a call like any other in
// traces and metrics, with no task id: its server span ends "ok" without
// a2a.task.id, and a message-only stream counts its one event and closes.
func TestMessageReplyTelemetry(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ts := newReplyServerWith(t, server.EngineOptions{TracerProvider: tp, MeterProvider: mp})
	ended := func(name string) sdktrace.ReadOnlySpan {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) { // polls
			for _, s := range rec.Ended() {
				if s.Name() == name {
					return s
				}
			}
		}
		t.Fatalf("no span %q", name)
		return nil
	}
	if r := rpc10(t, ts.URL+"/a2a/reply", "SendMessage", v10SendParams("hi", "tel-1", "")); r.Error != nil {
		t.Fatalf("SendMessage: %+v", r.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	frames := streamRaw(t, ctx, ts.URL+"/a2a/reply", `{"jsonrpc":"2.0","id":2,"method":"SendStreamingMessage","params":`+v10SendParams("hi", "tel-2", "")+`}`,
		"A2A-Version", "1.0", "Accept", "text/event-stream")
	if len(frames) != 1 {
		t.Fatalf("stream: %+v", frames)
	}
	for _, name := range []string{"SendMessage", "SendStreamingMessage"} {
		s := ended(name)
		if attr(s, "a2a.outcome") != "ok" || attr(s, "a2a.task.id") != "" || attr(s, "a2a.agent") != "reply" {
			t.Errorf("%s span: outcome %q task %q agent %q", name, attr(s, "a2a.outcome"), attr(s, "a2a.task.id"), attr(s, "a2a.agent"))
		}
	}
	if got := attr(ended("SendStreamingMessage"), "a2a.stream.events"); got != "1" {
		t.Errorf("stream span counts %s events, want 1", got)
	}
	m := collectMetrics(t, reader)
	if v, ok := sumValue(m, "a2a.server.active_streams"); !ok || v != 0 {
		t.Errorf("active streams after the stream ended: %d (found %v)", v, ok)
	}
	if v, _ := sumValue(m, "a2a.server.stream.events"); v != 1 {
		t.Errorf("stream events counted %d, want 1", v)
	}
}
