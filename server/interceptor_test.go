package server_test

import (
	"context"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// auditor is an Interceptor: it notes every operation it sees, refuses
// CancelTask, and adds metadata to the tasks GetTask returns.
type auditor struct {
	binding.Handler
	mu  sync.Mutex
	ops *[]string
}

func (a *auditor) note(op string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	*a.ops = append(*a.ops, op)
}

func (a *auditor) SendMessage(ctx context.Context, req a2a.SendMessageRequest) (a2a.Event, error) {
	a.note("SendMessage")
	return a.Handler.SendMessage(ctx, req)
}

func (a *auditor) SendStreamingMessage(ctx context.Context, req a2a.SendMessageRequest) (iter.Seq2[binding.StreamEvent, error], error) {
	a.note("SendStreamingMessage")
	return a.Handler.SendStreamingMessage(ctx, req)
}

func (a *auditor) GetTask(ctx context.Context, req a2a.GetTaskRequest) (*a2a.Task, error) {
	a.note("GetTask")
	t, err := a.Handler.GetTask(ctx, req)
	if err != nil {
		return nil, err
	}
	c := *t
	c.Metadata = map[string]any{"audited": "yes"}
	return &c, nil
}

func (a *auditor) CancelTask(ctx context.Context, req a2a.CancelTaskRequest) (*a2a.Task, error) {
	a.note("CancelTask")
	return nil, a2a.ErrUnsupportedOperation.WithMessage("cancelling is not allowed here")
}

// Interceptors see every call of every binding and of a Go caller, in
// order (the first outermost), and what they answer is what the client
// gets: a refusal as the binding's error, a changed task as the result.
func TestInterceptors(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	var ops []string
	var order []string
	outer := func(next binding.Handler) binding.Handler {
		order = append(order, "outer")
		return &auditor{Handler: next, ops: &ops}
	}
	inner := func(next binding.Handler) binding.Handler { order = append(order, "inner"); return next }
	h := server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{Interceptors: []server.Interceptor{outer, inner}})
	if !slices.Equal(order, []string{"inner", "outer"}) {
		t.Fatalf("interceptors wrapped in the order %v, want inner first (the first is outermost)", order)
	}
	host := servertest.Host("", h)
	srv := testutil.Serve(t, host, eng.Close)
	url := srv.URL + "/a2a/echo"

	// A Go caller goes through them too.
	task, err := h.SendMessageForTask(context.Background(), testutil.UserMessage("hi", ""))
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, method, url, body, version string
		want                             []string // pieces of the answer
	}{
		{"0.3 JSON-RPC send", http.MethodPost, url, testutil.RPCBody("message/send", testutil.SendParams03("hello", "m-03", "")), "", []string{`"state":"completed"`}},
		{"0.3 JSON-RPC get", http.MethodPost, url, testutil.RPCBody("tasks/get", `{"id":"`+task.ID+`"}`), "", []string{`"audited":"yes"`}},
		{"0.3 JSON-RPC cancel", http.MethodPost, url, testutil.RPCBody("tasks/cancel", `{"id":"`+task.ID+`"}`), "", []string{`-32004`, "cancelling is not allowed here"}},
		{"1.0 JSON-RPC get", http.MethodPost, url, testutil.RPCBody("GetTask", `{"id":"`+task.ID+`"}`), "1.0", []string{`"audited":"yes"`}},
		{"1.0 JSON-RPC cancel", http.MethodPost, url, testutil.RPCBody("CancelTask", `{"id":"`+task.ID+`"}`), "1.0", []string{`-32004`}},
		{"1.0 REST get", http.MethodGet, url + "/tasks/" + task.ID, "", "1.0", []string{`"audited":"yes"`}},
		{"1.0 REST cancel", http.MethodPost, url + "/tasks/" + task.ID + ":cancel", "", "1.0", []string{`UNSUPPORTED_OPERATION`}},
		{"0.3 REST get", http.MethodGet, url + "/v1/tasks/" + task.ID, "", "", []string{`"audited":"yes"`}},
		{"1.0 REST stream", http.MethodPost, url + "/message:stream", `{"message":{"messageId":"m-s","role":"ROLE_USER","parts":[{"text":"x"}]}}`, "1.0", []string{`TASK_STATE_COMPLETED`}},
	} {
		hdr := []string{"Content-Type", "application/json"}
		if c.version != "" {
			hdr = append(hdr, "A2A-Version", c.version)
		}
		_, body := testutil.Send(t, c.method, c.url, c.body, hdr...)
		for _, w := range c.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("%s: the answer %s lacks %s", c.name, body, w)
			}
		}
	}
	want := []string{"SendMessage", "SendMessage", "GetTask", "CancelTask", "GetTask", "CancelTask", "GetTask", "CancelTask", "GetTask", "SendStreamingMessage"}
	if !slices.Equal(ops, want) {
		t.Errorf("the interceptor saw %v, want %v", ops, want)
	}
}

// An Interceptor that returns nil is a programming error, found at once.
func TestInterceptorNil(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "Interceptors[0]") {
			t.Errorf("NewHandler with a nil-returning interceptor: recovered %v", r)
		}
	}()
	server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{
		Interceptors: []server.Interceptor{func(binding.Handler) binding.Handler { return nil }}})
}

// nilStream is an interceptor that answers a stream with nothing at all.
type nilStream struct{ binding.Handler }

func (nilStream) SendStreamingMessage(context.Context, a2a.SendMessageRequest) (iter.Seq2[binding.StreamEvent, error], error) {
	return nil, nil
}

// A stream an interceptor left nil without an error is an internal error
// on the wire, not a dropped connection.
func TestInterceptorNilStream(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	h := server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{
		Interceptors: []server.Interceptor{func(next binding.Handler) binding.Handler { return nilStream{next} }}})
	host := servertest.Host("", h)
	srv := testutil.Serve(t, host, eng.Close)
	_, body := testutil.Send(t, http.MethodPost, srv.URL+"/a2a/echo", testutil.RPCBody("message/stream", testutil.SendParams03("hi", "m-1", "")),
		"Content-Type", "application/json", "Accept", "text/event-stream")
	if !strings.Contains(string(body), `-32603`) {
		t.Errorf("the answer %q holds no internal error", body)
	}
}
