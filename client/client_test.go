package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// newServer hosts echo (default), chat and slow (fast steps) on a memory store.
func newServer(t testing.TB) *httptest.Server {
	t.Helper()
	return newServerWith(t, server.EngineOptions{})
}

// newServerWith is newServer on an engine with options o (its Logger is set).
func newServerWith(t testing.TB, o server.EngineOptions) *httptest.Server {
	t.Helper()
	o.Logger = testutil.Logger()
	eng, err := server.NewEngine(context.Background(), memory.New(), o)
	if err != nil {
		t.Fatal(err)
	}
	host := servertest.Host("echo",
		server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}),
		server.NewHandler(eng, "chat", agents.Chat{}, agents.Chat{}.Card(), server.HandlerOptions{}),
		server.NewHandler(eng, "slow", agents.Slow{Seconds: 1, Step: 25 * time.Millisecond}, agents.Slow{}.Card(), server.HandlerOptions{}))
	ts := testutil.Serve(t, host, eng.Close)
	return ts
}

func text(s string) a2a.SendMessageRequest {
	return a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(s))}
}

func dial(t testing.TB, u string, o client.Options) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), u, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cutProxy forwards TCP to target and cuts the first connection whose
// response carries a streaming body after it has passed cutAfter bytes
// (or, with cutAtEvent set, once it starts its event number cutAtEvent+1).
type cutProxy struct {
	ln         net.Listener
	target     string
	cutAfter   int
	cutAtEvent int
	cut        atomic.Bool
	mu         sync.Mutex
	last       string // what the latest connection sent
}

// lastRequest returns what the latest connection sent: the last request.
func (p *cutProxy) lastRequest() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

func newCutProxy(t *testing.T, target string, cutAfter int) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, cutAfter: cutAfter}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return p
}

func (p *cutProxy) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() {
		buf := make([]byte, 4096)
		var sent []byte // what this connection sent, as the last request
		for {
			n, err := c.Read(buf)
			if n > 0 {
				sent = append(sent, buf[:n]...)
				p.mu.Lock()
				p.last = string(sent)
				p.mu.Unlock()
				if _, werr := s.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 512)
	n, events := 0, 0
	stream := false
	for {
		k, err := s.Read(buf)
		if k > 0 {
			if strings.Contains(string(buf[:k]), "text/event-stream") {
				stream = true
			}
			n += k
			events += strings.Count(string(buf[:k]), "data:")
			due := n > p.cutAfter
			if p.cutAtEvent > 0 {
				due = events > p.cutAtEvent
			}
			if stream && due && p.cut.CompareAndSwap(false, true) {
				c.Write(buf[:k/2])
				return // kill the connection mid-event
			}
			if _, werr := c.Write(buf[:k]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestStreamSurvivesDroppedConnection kills the TCP connection in the
// middle of a stream, over every interface: the caller still receives
// every event exactly once, in order, and the stream ends with the final
// status; the resubscription carries Last-Event-ID.
func TestStreamSurvivesDroppedConnection(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	for _, in := range interfaces {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			proxy := newCutProxy(t, strings.TrimPrefix(ts.URL, "http://"), 2500)
			card, err := client.Resolve(context.Background(), ts.URL+"/a2a/slow", client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			o := in.opts
			o.RetryBaseDelay = 10 * time.Millisecond
			c, err := client.New(retarget(card, ts.URL, "http://"+proxy.ln.Addr().String()), o)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			resumed := 0
			var last a2a.Event
			for ev, err := range c.SendStreamingMessage(context.Background(), text("1")) {
				if err != nil {
					t.Fatal(err)
				}
				n, _ := strconv.ParseInt(ev.ID, 10, 64)
				ids = append(ids, n)
				if ev.Resumed {
					resumed++
				}
				if ev.Gap {
					t.Fatal("a2abridge replays: no gap expected")
				}
				last = ev.Event
			}
			if !proxy.cut.Load() || resumed != 1 {
				t.Fatalf("cut=%v resumed=%d: the test did not exercise a resume", proxy.cut.Load(), resumed)
			}
			for i, id := range ids {
				if id != int64(i+1) {
					t.Fatalf("events %v: lost or repeated", ids)
				}
			}
			if su, ok := last.(*a2a.TaskStatusUpdateEvent); !ok || su.Status.State != a2a.TaskStateCompleted || !su.Final {
				t.Fatalf("last event %#v", last)
			}
			req := proxy.lastRequest()
			if !strings.Contains(req, in.resume) || !strings.Contains(strings.ToLower(req), "last-event-id: ") {
				t.Fatalf("resubscription request, want %q with Last-Event-ID:\n%s", in.resume, req)
			}
		})
	}
}

func TestNoResumeOption(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	proxy := newCutProxy(t, strings.TrimPrefix(ts.URL, "http://"), 2500)
	card, _ := client.Resolve(context.Background(), ts.URL+"/a2a/slow", client.Options{})
	c, _ := client.New(retarget(card, ts.URL, "http://"+proxy.ln.Addr().String()), client.Options{NoResume: true})
	var gotErr error
	for _, err := range c.SendStreamingMessage(context.Background(), text("1")) {
		gotErr = err
	}
	if !errors.Is(gotErr, client.ErrStreamEnded) {
		t.Fatalf("err = %v, want ErrStreamEnded", gotErr)
	}
}

// TestGapWhenServerCannotReplay: a server that ignores Last-Event-ID and
// answers a resubscription with the Task snapshot: the client says so.
func TestGapWhenServerCannotReplay(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var ts *httptest.Server
	ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprintf(w, `{"protocolVersion":"0.3.0","name":"p","description":"d","url":%q,"version":"1","capabilities":{"streaming":true},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`, ts.URL)
			return
		}
		body, _ := io.ReadAll(r.Body)
		id := strings.Split(strings.Split(string(body), `"id":`)[1], ",")[0]
		w.Header().Set("Content-Type", "text/event-stream")
		task := `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}}`
		if calls.Add(1) == 1 {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", id, task)
			w.(http.Flusher).Flush()
			return // ends without a final event
		}
		if r.Header.Get("Last-Event-ID") != "" {
			t.Errorf("no id was sent, yet Last-Event-ID %q", r.Header.Get("Last-Event-ID"))
		}
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", id, strings.Replace(task, "working", "completed", 1))
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"status-update\",\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{\"state\":\"completed\"},\"final\":true}}\n\n", id)
	}))
	defer ts.Close()
	c := dial(t, ts.URL, client.Options{RetryBaseDelay: time.Millisecond})
	var evs []client.StreamEvent
	for ev, err := range c.SendStreamingMessage(context.Background(), text("x")) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if len(evs) != 3 || !evs[1].Resumed || !evs[1].Gap || evs[2].Gap {
		t.Fatalf("events %+v", evs)
	}
}

func TestRetriesAndErrors(t *testing.T) {
	t.Parallel()
	real := newServer(t)
	var fails atomic.Int32
	fails.Store(2)
	var attempts sync.Map
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		method := strings.Split(strings.Split(string(b), `"method":"`)[1], `"`)[0]
		v, _ := attempts.LoadOrStore(method, new(atomic.Int32))
		v.(*atomic.Int32).Add(1)
		if fails.Add(-1) >= 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		req, _ := http.NewRequest(r.Method, real.URL+"/", strings.NewReader(string(b)))
		req.Header = r.Header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		io.Copy(w, resp.Body)
	}))
	defer flaky.Close()
	card, _ := client.Resolve(context.Background(), real.URL, client.Options{})
	card = retarget(card, real.URL+"/a2a/echo", flaky.URL)
	c, _ := client.New(card, client.Options{Protocol: a2a.Version03, RetryBaseDelay: time.Millisecond})
	if _, err := c.SendMessage(context.Background(), text("retry me")); err != nil {
		t.Fatalf("send after two 503s: %v", err)
	}
	if n := mustLoad(&attempts, "message/send"); n != 3 {
		t.Fatalf("message/send attempts = %d, want 3", n)
	}
	fails.Store(1)
	_, err := c.CancelTask(context.Background(), a2a.CancelTaskRequest{ID: "x"})
	var he *client.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 503 || mustLoad(&attempts, "tasks/cancel") != 1 {
		t.Fatalf("cancel is not retried: %v (attempts %d)", err, mustLoad(&attempts, "tasks/cancel"))
	}
	fails.Store(5)
	c2, _ := client.New(card, client.Options{Protocol: a2a.Version03, MaxRetries: -1})
	if _, err := c2.GetTask(context.Background(), a2a.GetTaskRequest{ID: "x"}); !errors.As(err, &he) || mustLoad(&attempts, "tasks/get") != 1 {
		t.Fatalf("MaxRetries -1: %v", err)
	}
	fails.Store(0)
	var hookCalls atomic.Int32
	c3, _ := client.New(card, client.Options{Protocol: a2a.Version03, ShouldRetry: func(string, int, error) bool { hookCalls.Add(1); return false }})
	fails.Store(1)
	if _, err := c3.GetTask(context.Background(), a2a.GetTaskRequest{ID: "x"}); err == nil || hookCalls.Load() != 1 {
		t.Fatalf("ShouldRetry hook: %v, %d calls", err, hookCalls.Load())
	}
}

func mustLoad(m *sync.Map, k string) int32 {
	v, ok := m.Load(k)
	if !ok {
		return 0
	}
	return v.(*atomic.Int32).Load()
}

func TestStrictResponses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		reply func(w http.ResponseWriter, body string)
		check func(error) bool
	}{
		{"other id", func(w http.ResponseWriter, _ string) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":999,"result":{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}}`)
		}, func(err error) bool { var pe *client.ProtocolError; return errors.As(err, &pe) }},
		{"string id for number", func(w http.ResponseWriter, body string) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":"1","result":{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}}`)
		}, func(err error) bool { var pe *client.ProtocolError; return errors.As(err, &pe) }},
		{"401", func(w http.ResponseWriter, _ string) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "no", http.StatusUnauthorized)
		}, func(err error) bool { var he *client.HTTPError; return errors.As(err, &he) && he.StatusCode == 401 }},
		{"text/html", func(w http.ResponseWriter, _ string) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html>proxy error</html>`)
		}, func(err error) bool { var he *client.HTTPError; return errors.As(err, &he) && he.StatusCode == 200 }},
		{"text/plain that is not JSON-RPC", func(w http.ResponseWriter, _ string) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, `busy`)
		}, func(err error) bool { var pe *client.ProtocolError; return errors.As(err, &pe) }},
		{"500 with JSON-RPC error", func(w http.ResponseWriter, _ string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}`)
		}, func(err error) bool {
			var he *client.HTTPError
			return errors.Is(err, a2a.ErrTaskNotFound) && errors.As(err, &he) && he.StatusCode == 500
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				tc.reply(w, string(b))
			}))
			defer ts.Close()
			c, _ := client.New(a2a.AgentCard{Name: "x", URL: ts.URL}, client.Options{MaxRetries: -1})
			_, err := c.GetTask(context.Background(), a2a.GetTaskRequest{ID: "t"})
			if !tc.check(err) {
				t.Fatalf("err = %v (%T)", err, err)
			}
		})
	}
}

func TestDiscoveryAndCredentials(t *testing.T) {
	t.Parallel()
	var seen sync.Map
	var ts *httptest.Server
	ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/agent-card.json":
			http.NotFound(w, r)
		case "/.well-known/agent.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"protocolVersion":"0.3.0","name":"legacy","description":"d","url":"%s/rpc","version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],
"securitySchemes":{"b":{"type":"http","scheme":"bearer"},"k":{"type":"apiKey","in":"query","name":"key"}},"security":[{"b":[]}]}`, ts.URL)
		default:
			seen.Store("auth", r.Header.Get("Authorization"))
			seen.Store("key", r.URL.Query().Get("key"))
			seen.Store("trace", r.Header.Get("X-Trace"))
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"nope"}}`)
		}
	}))
	defer ts.Close()
	c := dial(t, ts.URL, client.Options{Token: "tok", APIKey: "k1",
		Headers: func(ctx context.Context, method string) (http.Header, error) {
			return http.Header{"X-Trace": {"m=" + method}}, nil
		}})
	if c.Card().Name != "legacy" {
		t.Fatalf("legacy card not found: %+v", c.Card())
	}
	_, err := c.GetTask(context.Background(), a2a.GetTaskRequest{ID: "x"})
	if !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"auth": "Bearer tok", "key": "k1", "trace": "m=tasks/get"} {
		if v, _ := seen.Load(k); v != want {
			t.Errorf("%s = %v, want %q", k, v, want)
		}
	}
	if _, err := client.Resolve(context.Background(), "ftp://x", client.Options{}); err == nil {
		t.Fatal("non-http URL accepted")
	}
}

// TestTolerantSSE: comments, keep-alives, "data:" without a space, JSON
// split over several data lines, event names and CRLF line ends are read.
func TestTolerantSSE(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := strings.Split(strings.Split(string(body), `"id":`)[1], ",")[0]
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		fmt.Fprint(w, ": hello\r\n\r\n")
		fmt.Fprintf(w, "event: message\r\ndata:{\"jsonrpc\":\"2.0\",\"id\":%s,\r\ndata: \"result\":{\"kind\":\"task\",\"id\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"working\"}}}\r\n\r\n", id)
		fmt.Fprint(w, ":keep-alive\n\n")
		fmt.Fprintf(w, "id: 7\nretry: 100\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"status-update\",\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"completed\"},\"final\":true}}\n\n", id)
	}))
	defer ts.Close()
	c, _ := client.New(a2a.AgentCard{Name: "x", URL: ts.URL}, client.Options{})
	var got []string
	for ev, err := range c.SubscribeToTask(context.Background(), a2a.SubscribeToTaskRequest{ID: "t"}, "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s:%T", ev.ID, ev.Event))
	}
	if strings.Join(got, " ") != ":*a2a.Task 7:*a2a.TaskStatusUpdateEvent" {
		t.Fatalf("events %v", got)
	}
}

// A server that answers a resubscription with a snapshot of a finished task
// and closes the stream (the JS SDK) ends the stream; a void delete
// answered without "result" (a2a-go) is a success; any other answer
// without result is a ProtocolError that is not an *a2a.Error.
func TestPeerQuirks(t *testing.T) {
	t.Parallel()
	var resubs atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := strings.Split(strings.Split(string(body), `"id":`)[1], ",")[0]
		switch {
		case strings.Contains(string(body), "tasks/resubscribe"):
			resubs.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"task\",\"id\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"completed\"}}}\n\n", id)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s}`, id)
		}
	}))
	defer ts.Close()
	c, _ := client.New(a2a.AgentCard{Name: "x", URL: ts.URL}, client.Options{RetryBaseDelay: time.Millisecond})
	n := 0
	for _, err := range c.SubscribeToTask(context.Background(), a2a.SubscribeToTaskRequest{ID: "t"}, "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 || resubs.Load() != 1 {
		t.Fatalf("%d events, %d resubscriptions; want 1 and 1", n, resubs.Load())
	}
	if err := c.DeleteTaskPushNotificationConfig(context.Background(), a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t", ID: "c"}); err != nil {
		t.Fatalf("void delete: %v", err)
	}
	_, err := c.GetTask(context.Background(), a2a.GetTaskRequest{ID: "t"})
	var pe *client.ProtocolError
	var ae *a2a.Error
	if !errors.As(err, &pe) || errors.As(err, &ae) {
		t.Fatalf("get without result: %v", err)
	}
}
