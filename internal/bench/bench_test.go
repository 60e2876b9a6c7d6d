package bench

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

func TestHistogramQuantiles(t *testing.T) {
	var h, a, b histogram
	rng := rand.New(rand.NewPCG(1, 2))
	var vals []time.Duration
	for i := range 20000 {
		v := time.Duration(rng.ExpFloat64() * float64(time.Millisecond))
		vals = append(vals, v)
		h.record(v)
		if i%2 == 0 {
			a.record(v)
		} else {
			b.record(v)
		}
	}
	a.merge(&b)
	if a != h {
		t.Fatal("merging two halves differs from recording everything")
	}
	slices.Sort(vals)
	prev := time.Duration(0)
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999, 1} {
		got := h.quantile(q)
		want := vals[int(q*float64(len(vals)))-1]
		if d := float64(got-want) / float64(want); d < 0 || d > 0.01 {
			t.Errorf("q%.3f = %v, exact %v (off by %.2f%%)", q, got, want, 100*d)
		}
		if got < prev {
			t.Errorf("q%.3f = %v < previous quantile %v", q, got, prev)
		}
		prev = got
	}
	if h.quantile(1) != vals[len(vals)-1] || time.Duration(h.min) != vals[0] {
		t.Errorf("max/min %v %v, want %v %v", h.quantile(1), h.min, vals[len(vals)-1], vals[0])
	}
	for _, v := range []uint64{0, 1, 127, 128, 129, 255, 256, 1 << 40, 1<<63 + 12345} {
		i := bucketOf(v)
		if v > bucketHigh(i) || (i > 0 && v <= bucketHigh(i-1)) {
			t.Errorf("value %d in bucket %d [%d, %d]", v, i, bucketHigh(i-1)+1, bucketHigh(i))
		}
	}
}

func TestCheckEnvelope(t *testing.T) {
	for _, tc := range []struct {
		body       string
		ok, idOK   bool
		res        bool
		code, kind string
		final      bool
	}{
		{body: `{"jsonrpc":"2.0","id":7,"result":{"kind":"task","id":"x"}}`, ok: true, idOK: true, res: true, kind: "task"},
		{body: ` { "result" : {"kind":"status-update","status":{"state":"completed"},"final" : true} , "id" : 7 ,"jsonrpc":"2.0"}`, ok: true, idOK: true, res: true, kind: "status-update", final: true},
		{body: `{"jsonrpc":"2.0","id":7,"result":{"final":true,"kind":"task"}}`, ok: true, idOK: true, res: true, kind: "task"},
		{body: `{"jsonrpc":"2.0","id":"7","result":{}}`, ok: true, res: true},
		{body: `{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"Task not found"}}`, ok: true, idOK: true, code: "-32001"},
		{body: `{"jsonrpc":"2.0","id":7,"result":{"kind":"artifact-update","artifact":{"parts":[{"kind":"text","text":"\"final\":true}, \\"}]},"lastChunk":true}}`, ok: true, idOK: true, res: true, kind: "artifact-update"},
		{body: `{"jsonrpc":"2.0","id":7,"result":{"kind":"task"`, ok: false},
		{body: `[1]`, ok: false},
	} {
		e, ok := checkEnvelope([]byte(tc.body), []byte("7"), scanResult03)
		if ok != tc.ok || (ok && (e.idOK != tc.idOK || e.hasResult != tc.res || e.errCode != tc.code || e.kind != tc.kind || e.final != tc.final)) {
			t.Errorf("%s: got %+v ok=%v", tc.body, e, ok)
		}
	}
}

func TestDialectCheck10(t *testing.T) {
	rpc := newDialect(Options{Protocol: Protocol10})
	rest := newDialect(Options{Protocol: Protocol10, Binding: BindingREST})
	for _, tc := range []struct {
		d          dialect
		body       string
		kind, code string
		final, bad bool
	}{
		{d: rpc, body: `{"jsonrpc":"2.0","id":7,"result":{"task":{"id":"x","status":{"state":"TASK_STATE_COMPLETED"}}}}`, kind: "task", final: true},
		{d: rpc, body: `{"jsonrpc":"2.0","id":7,"result":{"task":{"id":"x","status":{"state":"TASK_STATE_SUBMITTED"}}}}`, kind: "task"},
		{d: rpc, body: `{"jsonrpc":"2.0","id":7,"result":{"statusUpdate":{"taskId":"x","status":{"state":"TASK_STATE_WORKING"}}}}`, kind: "statusUpdate"},
		{d: rpc, body: `{"id":7,"result":{"statusUpdate":{"status":{"message":{"parts":[{"text":"\"state\":\"TASK_STATE_COMPLETED\""}]},"state":"TASK_STATE_INPUT_REQUIRED"}}},"jsonrpc":"2.0"}`, kind: "statusUpdate", final: true},
		{d: rpc, body: `{"jsonrpc":"2.0","id":7,"result":{"artifactUpdate":{"artifact":{"parts":[{"text":"{\"statusUpdate\":{}}"}]}}}}`, kind: "artifactUpdate"},
		{d: rpc, body: `{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"Task not found","data":[{"reason":"TASK_NOT_FOUND"}]}}`, code: "-32001"},
		{d: rpc, body: `{"jsonrpc":"2.0","id":7,"result":{"kind":"task","id":"x"}}`},
		{d: rpc, body: `{"jsonrpc":"2.0","id":7,"result":{"task":{}`, bad: true},
		{d: rest, body: `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[]}}`, kind: "message"},
		{d: rest, body: `{"statusUpdate":{"status":{"state":"TASK_STATE_CANCELED"}}}`, kind: "statusUpdate", final: true},
		{d: rest, body: `{"error":{"code":404,"status":"NOT_FOUND","message":"gone"}}`, code: "error"},
	} {
		e, ok := tc.d.check([]byte(tc.body), []byte("7"))
		if ok == tc.bad || (ok && (!e.idOK || !e.hasResult && tc.code == "" || e.errCode != tc.code || e.kind != tc.kind || e.final != tc.final)) {
			t.Errorf("%s %s: got %+v ok=%v", tc.d, tc.body, e, ok)
		}
	}
	// What a send must answer.
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"result":{"task":{"id":"x"}}}`:                        "",
		`{"jsonrpc":"2.0","id":7,"result":{"statusUpdate":{"taskId":"x"}}}`:            "not a Task or a Message",
		`{"jsonrpc":"2.0","id":8,"result":{"task":{"id":"x"}}}`:                        "id is not the request's",
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32009,"message":"no such version"}}`: "JSON-RPC error -32009",
	} {
		err := rpc.unary([]byte(body), []byte("7"))
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("unary %s: %v, want %q", body, err, want)
		}
	}
	if err := rest.verdict(envelope{errCode: "error"}, true, []byte(`{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"done","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION","domain":"a2a-protocol.org"}]}}`)); classify(err) != "stream error UNSUPPORTED_OPERATION" {
		t.Errorf("REST stream error counted as %q (%v)", classify(err), err)
	}
}

func TestRequestBodies10(t *testing.T) {
	rpc := newDialect(Options{Protocol: Protocol10, URL: "http://h/a2a/echo"})
	rest := newDialect(Options{Protocol: Protocol10, Binding: BindingREST, URL: "http://h/a2a/echo/"})
	for _, tc := range []struct{ got, want string }{
		{string(rpc.appendSend(nil, "r", 3, "hi \"x\"", false, true)), `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"bench-r-3","role":"ROLE_USER","parts":[{"text":"hi \"x\""}]}}}`},
		{string(rpc.appendSend(nil, "r", 4, "60", true, false)), `{"jsonrpc":"2.0","id":4,"method":"SendStreamingMessage","params":{"message":{"messageId":"bench-r-4","role":"ROLE_USER","parts":[{"text":"60"}]},"configuration":{"returnImmediately":true}}}`},
		{string(rpc.appendSubscribe(nil, 5, "t/1")), `{"jsonrpc":"2.0","id":5,"method":"SubscribeToTask","params":{"id":"t/1"}}`},
		{string(rest.appendSend(nil, "r", 6, "\x00é", false, true)), `{"message":{"messageId":"bench-r-6","role":"ROLE_USER","parts":[{"text":"\u0000é"}]}}`},
		{string(rest.appendSubscribe(nil, 7, "t/1")), ``},
		{rest.sendURL(false) + " " + rest.sendURL(true) + " " + rest.subscribeURL("t/1"), "http://h/a2a/echo/message:send http://h/a2a/echo/message:stream http://h/a2a/echo/tasks/t%2F1:subscribe"},
		{rpc.sendURL(true) + " " + rpc.subscribeURL("t"), "http://h/a2a/echo http://h/a2a/echo"},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
}

func TestSSECounterSplits(t *testing.T) {
	stream := "id: 1\ndata: {\"a\":1}\n\n: keep-alive\n\nid: 2\r\ndata: x\r\ndata: y\r\n\r\n: ka\r\n\r\nevent: e\n\n"
	count := func(chunks [][]byte) (comments, events, cbytes, ebytes int) {
		var s sseCounter
		for _, c := range chunks {
			for _, it := range s.feed(c) {
				if it.kind == ':' {
					comments += it.lines
					cbytes += it.n
				} else {
					events++
					ebytes += it.n
				}
			}
		}
		return
	}
	c0, e0, cb0, eb0 := count([][]byte{[]byte(stream)})
	if c0 != 2 || e0 != 2 || cb0 != len(": keep-alive\n")+len(": ka\r\n") {
		t.Fatalf("whole stream: %d comments (%d bytes), %d events (%d bytes)", c0, cb0, e0, eb0)
	}
	for i := 1; i < len(stream); i++ {
		c, e, cb, eb := count([][]byte{[]byte(stream[:i]), []byte(stream[i:])})
		if c != c0 || e != e0 || cb != cb0 || eb != eb0 {
			t.Fatalf("split at %d: %d/%d/%d/%d, want %d/%d/%d/%d", i, c, e, cb, eb, c0, e0, cb0, eb0)
		}
	}
}

// testServer is a2abridge's server with the built-in agents, in memory.
func testServer(t *testing.T) *httptest.Server {
	t.Helper()
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	host := server.NewHost(server.HostOptions{Default: "echo", Transport: server.TransportOptions{Logger: testutil.Logger(), KeepAlive: 50 * time.Millisecond}})
	host.Add(server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	host.Add(server.NewHandler(eng, "chat", agents.Chat{}, agents.Chat{}.Card(), server.HandlerOptions{}))
	host.Add(server.NewHandler(eng, "slow", agents.Slow{Seconds: 60, Step: 200 * time.Millisecond}, agents.Slow{}.Card(), server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = eng.Close(ctx)
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts
}

func checkSane(t *testing.T, r *Result) {
	t.Helper()
	l := r.Latency
	if r.Requests <= 0 || r.Errors != 0 || r.Throughput <= 0 || !(l.Min > 0 && l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max) {
		t.Fatalf("insane result: %+v (errors %v: %s)", r, r.ErrorKinds, r.FirstError)
	}
}

// dialects are the protocol versions and bindings a run can speak.
var dialects = []struct{ protocol, binding string }{
	{Protocol03, BindingJSONRPC}, {Protocol10, BindingJSONRPC}, {Protocol10, BindingREST},
}

func TestRunModes(t *testing.T) {
	ts := testServer(t)
	for _, dl := range dialects {
		for _, mode := range []Mode{ModeSend, ModeStream, ModeResubscribe} {
			t.Run(dl.protocol+"/"+dl.binding+"/"+string(mode), func(t *testing.T) {
				agent := "/a2a/echo"
				var progress bytes.Buffer
				var started, stopped atomic.Bool
				r, err := Run(context.Background(), Options{
					URL: ts.URL + agent, Protocol: dl.protocol, Binding: dl.binding, Mode: mode, Concurrency: 4,
					Duration: 1200 * time.Millisecond, Warmup: 200 * time.Millisecond, Payload: 100, Progress: &progress, Tasks: 10,
					OnStart: func() { started.Store(true) }, OnStop: func() { stopped.Store(stopped.Load() || started.Load()) },
				})
				if err != nil {
					t.Fatal(err)
				}
				checkSane(t, r)
				if r.Protocol != dl.protocol || r.Binding != dl.binding {
					t.Errorf("result says %s %s", r.Protocol, r.Binding)
				}
				if !stopped.Load() {
					t.Error("OnStart/OnStop not called in order")
				}
				if r.Elapsed < 1.1 || r.Elapsed > 2 {
					t.Errorf("elapsed %.2fs for a 1.2s run", r.Elapsed)
				}
				if !strings.Contains(progress.String(), "req/s") {
					t.Errorf("no progress lines: %q", progress.String())
				}
				if mode != ModeSend {
					f := r.FirstEvent
					if f == nil || f.P50 <= 0 || f.P50 > r.Latency.P50 || f.P99 > r.Latency.P99 {
						t.Errorf("first event %+v vs latency %+v", f, r.Latency)
					}
					// 100 bytes of text: 2 chunks, so task + 2 artifact-updates
					// + final; a 0.3 subscription: the snapshot + final; a 1.0
					// one, a resume from the start: the task's log replayed
					// (the same four events).
					want := int64(2)
					if mode == ModeStream || (mode == ModeResubscribe && dl.protocol == Protocol10) {
						want = 4
					}
					if r.Events != want*r.Requests {
						t.Errorf("%d events for %d streams, want %d each", r.Events, r.Requests, want)
					}
				}
				var out bytes.Buffer
				if err := WriteText(&out, r); err != nil || !strings.Contains(out.String(), "throughput") {
					t.Errorf("WriteText: %v %q", err, out.String())
				}
			})
		}
	}
}

// Subscribing to the chat agent's tasks, which wait for input, would last
// until they end: the run says so before it starts.
func TestRunResubscribeUnfinished(t *testing.T) {
	ts := testServer(t)
	for _, dl := range dialects {
		_, err := Run(context.Background(), Options{URL: ts.URL + "/a2a/chat", Protocol: dl.protocol, Binding: dl.binding, Mode: ModeResubscribe, Tasks: 2, Requests: 5})
		if err == nil || !strings.Contains(err.Error(), "not finished") || !strings.Contains(err.Error(), "/a2a/echo") {
			t.Fatalf("%s %s resubscribe to unfinished tasks: %v", dl.protocol, dl.binding, err)
		}
	}
}

func TestRunRequests(t *testing.T) {
	ts := testServer(t)
	r, err := Run(context.Background(), Options{URL: ts.URL, Concurrency: 3, Requests: 100})
	if err != nil {
		t.Fatal(err)
	}
	checkSane(t, r)
	if r.Requests != 100 {
		t.Fatalf("%d requests, want 100", r.Requests)
	}
}

func TestRunIdle(t *testing.T) {
	ts := testServer(t)
	opened := -1
	r, err := Run(context.Background(), Options{
		URL: ts.URL + "/a2a/slow", Mode: ModeIdle, IdleStreams: 50, Concurrency: 8, Duration: time.Second,
		OnOpen: func(n int) { opened = n },
	})
	if err != nil {
		t.Fatal(err)
	}
	id := r.Idle
	if opened != 50 || id.Opened != 50 || id.OpenAtEnd != 50 || id.Failed != 0 || id.Ended != 0 || r.Errors != 0 {
		t.Fatalf("idle: OnOpen %d, %+v (%s)", opened, id, r.FirstError)
	}
	// Keep-alives every 50 ms and a progress event every 200 ms, to 50 streams for 1 s.
	if id.KeepAlivesPerStreamPerSecond < 5 || id.KeepAliveBytes < id.KeepAlives*10 || id.Events < 50*3 {
		t.Fatalf("idle traffic: %+v", id)
	}
	if l := id.OpenLatency; !(l.P50 > 0 && l.P50 <= l.P99 && l.P99 <= l.Max) {
		t.Fatalf("open latency %+v", l)
	}

	// One stream per task, via message/stream.
	r, err = Run(context.Background(), Options{URL: ts.URL + "/a2a/slow", Mode: ModeIdle, IdleVia: "stream", IdleStreams: 10, Duration: 300 * time.Millisecond})
	if err != nil || r.Idle.OpenAtEnd != 10 || r.Idle.KeepAlives == 0 {
		t.Fatalf("idle via stream: %v %+v", err, r)
	}

	// A2A 1.0: SubscribeToTask over JSON-RPC and POST /tasks/{id}:subscribe.
	for _, binding := range []string{BindingJSONRPC, BindingREST} {
		r, err = Run(context.Background(), Options{URL: ts.URL + "/a2a/slow", Protocol: Protocol10, Binding: binding, Mode: ModeIdle, IdleStreams: 10, Duration: 300 * time.Millisecond})
		if err != nil || r.Idle.OpenAtEnd != 10 || r.Idle.KeepAlives == 0 || r.Errors != 0 {
			t.Fatalf("idle over 1.0 %s: %v %+v", binding, err, r)
		}
	}

	// The echo agent's tasks finish at once: idle mode says so.
	_, err = Run(context.Background(), Options{URL: ts.URL + "/a2a/echo", Mode: ModeIdle, IdleStreams: 10, Duration: time.Second})
	if err == nil || !strings.Contains(err.Error(), "long-running task") {
		t.Fatalf("idle on echo: %v", err)
	}
}

func TestRunCountsErrors(t *testing.T) {
	ts := testServer(t)
	var n atomic.Int64
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 4 {
		case 0:
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal"}}`)
		default:
			testutil.Forward(w, r, ts.URL+"/a2a/echo")
		}
	}))
	defer flaky.Close()
	r, err := Run(context.Background(), Options{URL: flaky.URL, Concurrency: 2, Requests: 200})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests+r.Errors != 200 || r.ErrorKinds["http 503"] == 0 || r.ErrorKinds["rpc -32603"] == 0 || r.Requests == 0 {
		t.Fatalf("got %d ok, %d errors %v", r.Requests, r.Errors, r.ErrorKinds)
	}

	// REST errors are counted by HTTP status and google.rpc.ErrorInfo reason.
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`)
	}))
	defer gone.Close()
	n.Store(0)
	r, err = Run(context.Background(), Options{URL: gone.URL, Protocol: Protocol10, Binding: BindingREST, Concurrency: 1, Requests: 20})
	if err != nil || r.Requests != 10 || r.ErrorKinds["http 404 TASK_NOT_FOUND"] != 10 || !strings.Contains(r.FirstError, "Task not found") {
		t.Fatalf("REST errors: %v %d ok, %v (%s)", err, r.Requests, r.ErrorKinds, r.FirstError)
	}

	// 1.0 streams end when the server closes them after a terminal or
	// interrupted state, which a resent Task snapshot may say instead of a
	// statusUpdate (A2A 1.0 §11.7); closed earlier, they ended early.
	var cut atomic.Bool
	snap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}`+"\n\n")
		io.WriteString(w, `data: {"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`+"\n\n")
		if !cut.Load() {
			io.WriteString(w, `data: {"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`+"\n\n")
		}
	}))
	defer snap.Close()
	for _, c := range []bool{false, true} {
		cut.Store(c)
		r, err = Run(context.Background(), Options{URL: snap.URL, Protocol: Protocol10, Binding: BindingREST, Mode: ModeStream, Concurrency: 1, Requests: 5})
		if c && (err == nil || !strings.Contains(err.Error(), "without a final status-update")) || !c && (err != nil || r.Requests != 5 || r.Events != 15) {
			t.Fatalf("stream cut=%v: %v %+v", c, err, r)
		}
	}

	// A target that cannot answer at all is an error.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	if _, err := Run(context.Background(), Options{URL: dead.URL, Duration: time.Second}); err == nil {
		t.Fatal("no error for a closed port")
	}
}

func TestVerify(t *testing.T) {
	ts := testServer(t)
	for _, dl := range dialects {
		for _, p := range []int{16, 1000} {
			if err := Verify(context.Background(), Options{URL: ts.URL + "/a2a/echo", Protocol: dl.protocol, Binding: dl.binding, Payload: p}); err != nil {
				t.Fatalf("%s %s, payload %d: %v", dl.protocol, dl.binding, p, err)
			}
		}
	}
	// Servers that answer too little, or in the wrong shape.
	task10 := `{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"text":"abcdefghijklmnop"}]}]}}`
	for _, tc := range []struct {
		name, protocol, binding string
		handler                 http.HandlerFunc
		want                    string
	}{
		{"0.3 submitted", Protocol03, BindingJSONRPC, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t","contextId":"c","status":{"state":"submitted"}}}`)
		}, "submitted"},
		{"1.0 answered in 0.3 shapes", Protocol10, BindingJSONRPC, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"}}}`)
		}, "bad 1.0 JSON-RPC result"},
		{"1.0 refused", Protocol10, BindingJSONRPC, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"version `+r.Header.Get("A2A-Version")+` is not supported"}}`)
		}, "JSON-RPC error -32009: version 1.0 is not supported"},
		{"REST error", Protocol10, BindingREST, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"code":404,"status":"NOT_FOUND","message":"no route `+r.URL.Path+`"}}`)
		}, "no route /x/message:send"},
		{"REST stream that does not end", Protocol10, BindingREST, func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, ":send") {
				io.WriteString(w, task10)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range []string{`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}`,
				`{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"abcdefghijklmnop"}]}}}`,
				`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`,
				`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`} {
				io.WriteString(w, "data: "+ev+"\n\n")
			}
		}, "went on after its final status update"},
		{"REST stream of the wrong text", Protocol10, BindingREST, func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, ":send") {
				io.WriteString(w, task10)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}`+"\n\n")
			io.WriteString(w, `data: {"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`+"\n\n")
		}, `artifact text ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			err := Verify(context.Background(), Options{URL: srv.URL + "/x", Protocol: tc.protocol, Binding: tc.binding})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{
		{URL: "ftp://x"},
		{URL: "http://x", Mode: "nope"},
		{URL: "http://x", Concurrency: -1},
		{URL: "http://x", Mode: ModeIdle, Requests: 5},
		{URL: "http://x", Mode: ModeIdle, IdleVia: "carrier pigeon"},
		{URL: "http://x", Protocol: "2.0"},
		{URL: "http://x", Binding: "grpc"},
		{URL: "http://x", Binding: BindingREST}, // REST is 1.0's
	} {
		if _, err := Run(context.Background(), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// The gRPC binding: send and stream runs against a2abridge serving gRPC
// on the HTTP port (the tenant names the agent), its Verify, and a run's
// refusal of the modes it lacks.
func TestRunGRPC(t *testing.T) {
	ts := testServer(t)
	host := ts.Config.Handler.(*server.Host)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := host.EnableGRPC(server.GRPCOptions{})
	go func() { _ = g.Serve(ln) }()
	t.Cleanup(g.Stop)
	o := Options{URL: ln.Addr().String(), Protocol: Protocol10, Binding: BindingGRPC, Tenant: "echo", Concurrency: 4,
		Duration: 600 * time.Millisecond, Payload: 100}
	if err := Verify(context.Background(), o); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	for _, mode := range []Mode{ModeSend, ModeStream} {
		o.Mode = mode
		r, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		checkSane(t, r)
		if mode == ModeStream && r.Events != 4*r.Requests {
			t.Errorf("%d events for %d streams, want 4 each", r.Events, r.Requests)
		}
	}
	o.Mode = ModeResubscribe
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "send and stream modes only") {
		t.Errorf("resubscribe over grpc: %v", err)
	}
	o.Mode, o.Tenant = ModeSend, "nobody"
	if err := Verify(context.Background(), o); err == nil || !strings.Contains(err.Error(), `No agent named "nobody"`) {
		t.Errorf("Verify of an unknown tenant: %v", err)
	}
}
