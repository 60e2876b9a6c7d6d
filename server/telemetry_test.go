package server_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

// telemetryServer is a Host with echo, a failing store for the agent
// "broken" and push enabled, on an engine with a span recorder and a
// manual metric reader.
type telemetryServer struct {
	*httptest.Server
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	logs   *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// failingTaskStore fails every read of a task: tasks/get answers an
// internal error.
type failingTaskStore struct{ store.Store }

func (failingTaskStore) Task(context.Context, string) (store.TaskInfo, error) {
	return store.TaskInfo{}, errors.New("disk on fire")
}

func newTelemetryServer(t *testing.T, st store.Store) *telemetryServer {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	logs := &syncBuffer{}
	log := slog.New(server.NewLogHandler(slog.NewJSONHandler(logs, nil)))
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: log, TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	host := server.NewHost(server.HostOptions{Default: "echo", Transport: server.TransportOptions{Logger: log}})
	host.Add(server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	ts := &telemetryServer{Server: httptest.NewServer(host), spans: rec, reader: reader, logs: logs}
	t.Cleanup(func() {
		ts.Server.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = eng.Close(ctx)
		_ = tp.Shutdown(ctx)
	})
	return ts
}

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

func (ts *telemetryServer) post(t *testing.T, path, version, body string, traced bool) []byte {
	t.Helper()
	var hdr []string
	if version != "" {
		hdr = append(hdr, "A2A-Version", version)
	}
	if traced {
		hdr = append(hdr, "traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	}
	_, b := testutil.Post(t, ts.URL+path, body, hdr...)
	return b
}

// span waits for an ended span named name and returns it.
func (ts *telemetryServer) span(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, s := range ts.spans.Ended() {
			if s.Name() == name {
				return s
			}
		}
		if time.Now().After(deadline) {
			var names []string
			for _, s := range ts.spans.Ended() {
				names = append(names, s.Name())
			}
			t.Fatalf("no span %q; ended: %v", name, names)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// TestTelemetrySpans: a message/send carrying a W3C traceparent makes a
// server span that continues the caller's trace, named by the method,
// with the agent, binding, version and task id; the agent's execution (on
// a worker goroutine) and the store commit are its children.
func TestTelemetrySpans(t *testing.T) {
	ts := newTelemetryServer(t, memory.New())
	out := ts.post(t, "/a2a/echo", "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`, true)
	var resp struct {
		Result struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || resp.Result.ID == "" {
		t.Fatalf("send: %s (%v)", out, err)
	}
	srv := ts.span(t, "message/send")
	if got := srv.SpanContext().TraceID().String(); got != callerTrace {
		t.Errorf("server span trace id %s, want the caller's %s", got, callerTrace)
	}
	if got := srv.Parent().SpanID().String(); got != callerSpan || !srv.Parent().IsRemote() {
		t.Errorf("server span parent %s (remote %v), want the caller's span %s", got, srv.Parent().IsRemote(), callerSpan)
	}
	if srv.SpanKind() != trace.SpanKindServer {
		t.Errorf("server span kind %v", srv.SpanKind())
	}
	for k, want := range map[string]string{"a2a.agent": "echo", "a2a.binding": "JSONRPC", "a2a.protocol.version": "0.3",
		"rpc.method": "message/send", "rpc.system.name": "jsonrpc", "a2a.task.id": resp.Result.ID, "a2a.outcome": "ok"} {
		if got := attr(srv, k); got != want {
			t.Errorf("server span %s = %q, want %q", k, got, want)
		}
	}
	exec := ts.span(t, "execute echo")
	if exec.Parent().SpanID() != srv.SpanContext().SpanID() || exec.SpanContext().TraceID() != srv.SpanContext().TraceID() {
		t.Errorf("execution span's parent %s, want the server span %s", exec.Parent().SpanID(), srv.SpanContext().SpanID())
	}
	if got := attr(exec, "a2a.task.state"); got != "completed" {
		t.Errorf("execution span state %q", got)
	}
	// The memory store's appends are no commits worth a span.
	for _, s := range ts.spans.Ended() {
		if strings.HasPrefix(s.Name(), "store ") {
			t.Errorf("memory store: span %s", s.Name())
		}
	}

	// A 1.0 error: the span says so with the A2A error code.
	ts.post(t, "/a2a/echo", "1.0", `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"nope"}}`, false)
	get := ts.span(t, "GetTask")
	if attr(get, "rpc.response.status_code") != "-32001" || attr(get, "a2a.outcome") != "error" || get.Status().Code.String() != "Error" {
		t.Errorf("GetTask span: status code %q outcome %q status %v", attr(get, "rpc.response.status_code"), attr(get, "a2a.outcome"), get.Status())
	}
	if get.Parent().IsValid() {
		t.Errorf("a request without traceparent starts a trace; parent %v", get.Parent())
	}
	// An arbitrary method name is not a span name (nor a metric series).
	ts.post(t, "/a2a/echo", "", `{"jsonrpc":"2.0","id":3,"method":"x/`+strings.Repeat("y", 50)+`","params":{}}`, false)
	ts.span(t, "unknown")

	// Requests about the task from callers without trace context join
	// the trace of its execution (their answer, an error here since the
	// task completed, does not matter): a cancel over HTTP+JSON, a
	// continuation message over JSON-RPC.
	ts.post(t, "/a2a/echo/tasks/"+resp.Result.ID+":cancel", "1.0", `{}`, false)
	ts.post(t, "/a2a/echo", "", `{"jsonrpc":"2.0","id":4,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m2","taskId":"`+
		resp.Result.ID+`","parts":[{"kind":"text","text":"again"}]}}}`, false)
	var cont sdktrace.ReadOnlySpan
	for _, s := range ts.spans.Ended() {
		if s.Name() == "message/send" && s.SpanContext().SpanID() != srv.SpanContext().SpanID() {
			cont = s
		}
	}
	for _, s := range []sdktrace.ReadOnlySpan{ts.span(t, "CancelTask"), cont} {
		if s == nil {
			t.Fatal("no span of the continuation")
		}
		if s.SpanContext().TraceID().String() != callerTrace || s.Parent().SpanID() != srv.SpanContext().SpanID() {
			t.Errorf("%s about the task: span in trace %s, parent %s; want the task's trace %s, parent %s (the request that started it)",
				s.Name(), s.SpanContext().TraceID(), s.Parent().SpanID(), callerTrace, srv.SpanContext().SpanID())
		}
	}
}

// TestTelemetryCommitSpans: on a durable store (SQLite, group commit),
// the create a message/send waits for is a child span of its server span.
func TestTelemetryCommitSpans(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "t.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := newTelemetryServer(t, st)
	ts.post(t, "/a2a/echo", "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`, true)
	srv := ts.span(t, "message/send")
	create := ts.span(t, "store create")
	if create.Parent().SpanID() != srv.SpanContext().SpanID() || create.SpanContext().TraceID().String() != callerTrace {
		t.Errorf("store create span's parent %s, want the server span %s", create.Parent().SpanID(), srv.SpanContext().SpanID())
	}
	if create.EndTime().Sub(create.StartTime()) <= 0 {
		t.Errorf("store create span lasted %v", create.EndTime().Sub(create.StartTime()))
	}
	rm := collectMetrics(t, ts.reader)
	m, ok := findMetric(rm, "a2abridge.store.commit.duration")
	if !ok || m.Unit != "s" {
		t.Fatalf("no a2abridge.store.commit.duration in s: %+v", m)
	}
}

// TestTelemetryStream: a stream's span ends with the stream, counting its
// events, and the open-streams gauge goes back to zero.
func TestTelemetryStream(t *testing.T) {
	ts := newTelemetryServer(t, memory.New())
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/a2a/echo", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","role":"user","messageId":"s1","parts":[{"kind":"text","text":"hi"}]}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data:") {
			events++
		}
	}
	resp.Body.Close()
	// Streams refused before they open (a task that does not exist)
	// are no open streams, not even for a moment.
	req, _ = http.NewRequest(http.MethodPost, ts.URL+"/a2a/echo", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tasks/resubscribe","params":{"id":"nope"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if r, err := http.DefaultClient.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	req, _ = http.NewRequest(http.MethodGet, ts.URL+"/a2a/echo/tasks/nope:subscribe", nil)
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	if r, err := http.DefaultClient.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	ts.span(t, "tasks/resubscribe")
	ts.span(t, "SubscribeToTask")
	s := ts.span(t, "message/stream")
	if got := attr(s, "a2a.stream.events"); got != itoa(events) || events == 0 {
		t.Errorf("stream span counts %s events, the client read %d", got, events)
	}
	m := collectMetrics(t, ts.reader)
	if v, ok := sumValue(m, "a2a.server.active_streams"); !ok || v != 0 {
		t.Errorf("active streams after the stream ended: %d (found %v)", v, ok)
	}
	if v, _ := sumValue(m, "a2a.server.stream.events"); v != int64(events) {
		t.Errorf("stream events counted %d, the client read %d", v, events)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func collectMetrics(t *testing.T, r *sdkmetric.ManualReader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func findMetric(rm metricdata.ResourceMetrics, name string) (metricdata.Metrics, bool) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// histCount is the count of histogram name's points whose a2a.task.state
// is state.
func histCount(rm metricdata.ResourceMetrics, name, state string) uint64 {
	m, ok := findMetric(rm, name)
	if !ok {
		return 0
	}
	var n uint64
	for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		if v, _ := dp.Attributes.Value("a2a.task.state"); v.AsString() == state {
			n += dp.Count
		}
	}
	return n
}

func sumValue(rm metricdata.ResourceMetrics, name string) (int64, bool) {
	m, ok := findMetric(rm, name)
	if !ok {
		return 0, false
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		return 0, false
	}
	var v int64
	for _, dp := range sum.DataPoints {
		v += dp.Value
	}
	return v, true
}

// TestTelemetryMetrics: request durations by method and outcome, in
// seconds, and the execution, commit and task-state instruments.
func TestTelemetryMetrics(t *testing.T) {
	ts := newTelemetryServer(t, memory.New())
	for i := range 3 {
		ts.post(t, "/a2a/echo", "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m`+itoa(i)+`","parts":[{"kind":"text","text":"hi"}]}}}`, false)
	}
	ts.post(t, "/a2a/echo", "", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"nope"}}`, false)
	// HTTP+JSON: the operation names the method.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/a2a/echo/tasks/nope", nil)
	req.Header.Set("A2A-Version", "1.0")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	rm := collectMetrics(t, ts.reader)
	// Tasks by state, counted by the store: the three blocking sends
	// answered once their tasks completed.
	if g, ok := findMetric(rm, "a2abridge.tasks"); !ok || g.Unit != "{task}" {
		t.Errorf("a2abridge.tasks: %+v", g)
	} else {
		got := map[string]int64{}
		for _, dp := range g.Data.(metricdata.Gauge[int64]).DataPoints {
			agent, _ := dp.Attributes.Value("a2a.agent")
			state, _ := dp.Attributes.Value("a2a.task.state")
			got[agent.AsString()+"/"+state.AsString()] = dp.Value
		}
		if len(got) != 1 || got["echo/completed"] != 3 {
			t.Errorf("a2abridge.tasks %v, want echo/completed 3", got)
		}
	}
	m, ok := findMetric(rm, "rpc.server.call.duration")
	if !ok {
		t.Fatal("no rpc.server.call.duration")
	}
	if m.Unit != "s" {
		t.Errorf("unit %q", m.Unit)
	}
	h := m.Data.(metricdata.Histogram[float64])
	counts := map[string]uint64{}
	for _, dp := range h.DataPoints {
		method, _ := dp.Attributes.Value("rpc.method")
		outcome, _ := dp.Attributes.Value("a2a.outcome")
		binding, _ := dp.Attributes.Value("a2a.binding")
		counts[method.AsString()+" "+outcome.AsString()+" "+binding.AsString()] += dp.Count
		if dp.Sum <= 0 || dp.Sum > 10 {
			t.Errorf("%s: sum %v s", method.AsString(), dp.Sum)
		}
	}
	want := map[string]uint64{"message/send ok JSONRPC": 3, "tasks/get error JSONRPC": 1, "GetTask error HTTP+JSON": 1}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%s: %d requests recorded, want %d (all: %v)", k, counts[k], n, counts)
		}
	}
	// Executions end after their answer went out: wait for the three.
	for deadline := time.Now().Add(5 * time.Second); ; {
		v := histCount(rm, "a2a.agent.execution.duration", "completed")
		if v == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a2a.agent.execution.duration: %d executions completed, want 3", v)
		}
		time.Sleep(10 * time.Millisecond)
		rm = collectMetrics(t, ts.reader)
	}
	if _, ok := findMetric(rm, "a2abridge.store.commit.duration"); ok {
		t.Error("memory store: commits measured")
	}
}

// TestTelemetryInternalErrorTraceID: an internal error's data carries the
// trace id next to the request id, and the log line of it carries the
// same trace id: the client's error leads to the trace and the log.
func TestTelemetryInternalErrorTraceID(t *testing.T) {
	ts := newTelemetryServer(t, failingTaskStore{memory.New()})
	out := ts.post(t, "/a2a/echo", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1"}}`, true)
	var resp struct {
		Error struct {
			Code int `json:"code"`
			Data struct {
				RequestID string `json:"requestId"`
				TraceID   string `json:"traceId"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error.Code != -32603 || resp.Error.Data.RequestID == "" || resp.Error.Data.TraceID != callerTrace {
		t.Fatalf("internal error %s: want requestId and traceId %s", out, callerTrace)
	}
	if strings.Contains(string(out), "disk on fire") {
		t.Errorf("the error's detail reached the client: %s", out)
	}
	logs := ts.logs.String()
	if !strings.Contains(logs, `"trace_id":"`+callerTrace+`"`) || !strings.Contains(logs, resp.Error.Data.RequestID) {
		t.Errorf("the log line of the error has no trace_id %s and request id: %s", callerTrace, logs)
	}
	if s := ts.span(t, "tasks/get"); attr(s, "rpc.response.status_code") != "-32603" {
		t.Errorf("span status code %q", attr(s, "rpc.response.status_code"))
	}
}

// TestTelemetryOff: without providers, errors carry no traceId and a
// traceparent changes nothing.
func TestTelemetryOff(t *testing.T) {
	eng, err := server.NewEngine(context.Background(), failingTaskStore{memory.New()}, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	host := servertest.Host("", server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	srv := httptest.NewServer(host)
	defer srv.Close()
	ts := &telemetryServer{Server: srv}
	out := ts.post(t, "/a2a/echo", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1"}}`, true)
	if !strings.Contains(string(out), "requestId") || strings.Contains(string(out), "traceId") {
		t.Errorf("telemetry off: %s", out)
	}
	_ = a2a.ErrInternal
}

// TestTelemetryPushAndBatches: push delivery attempts are client spans
// sending their traceparent to the webhook, failed attempts and the
// notifications given up are counted, the backlog gauge falls back to
// zero; on SQLite, the group commits' sizes are recorded.
func TestTelemetryPushAndBatches(t *testing.T) {
	var mu sync.Mutex
	var parents []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		parents = append(parents, r.Header.Get("traceparent"))
		mu.Unlock()
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer hook.Close()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "t.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger(), TracerProvider: tp,
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		Push:          &server.PushOptions{RetryBase: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond, GiveUpAfter: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	h := server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{})
	ctx, caller := tp.Tracer("test").Start(context.Background(), "caller")
	_, err = h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi")),
		Configuration: &a2a.SendMessageConfiguration{PushNotificationConfig: &a2a.PushNotificationConfig{URL: hook.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	for deadline := time.Now().Add(10 * time.Second); ; {
		rm = collectMetrics(t, reader)
		abandoned, _ := sumValue(rm, "a2abridge.push.abandoned")
		backlog := int64(-1)
		if m, ok := findMetric(rm, "a2abridge.push.backlog"); ok {
			backlog = m.Data.(metricdata.Gauge[int64]).DataPoints[0].Value
		}
		if abandoned >= 1 && backlog == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("push: %d given up, backlog %d", abandoned, backlog)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m, ok := findMetric(rm, "a2abridge.push.delivery.duration")
	if !ok {
		t.Fatal("no a2abridge.push.delivery.duration")
	}
	var failed uint64
	for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		if v, _ := dp.Attributes.Value("a2a.outcome"); v.AsString() == "failed" {
			failed += dp.Count
		}
	}
	mu.Lock()
	attempts := len(parents)
	first := parents[0]
	mu.Unlock()
	if failed < 2 || uint64(attempts) < failed {
		t.Errorf("%d failed attempts recorded, the webhook saw %d", failed, attempts)
	}
	caller.End()
	sent := map[string]bool{}
	for _, s := range rec.Ended() {
		if s.Name() == "push notification" && s.SpanKind() == trace.SpanKindClient && s.Status().Code.String() == "Error" {
			sent["00-"+s.SpanContext().TraceID().String()+"-"+s.SpanContext().SpanID().String()+"-01"] = true
			// Each attempt joins the trace of the request that started the task.
			if s.Parent().SpanID() != caller.SpanContext().SpanID() || s.SpanContext().TraceID() != caller.SpanContext().TraceID() {
				t.Errorf("push span's parent %s in trace %s, want the request's span %s", s.Parent().SpanID(), s.SpanContext().TraceID(), caller.SpanContext().SpanID())
			}
		}
	}
	if !sent[first] {
		t.Errorf("the webhook got traceparent %q, not one of the %d failed push spans'", first, len(sent))
	}
	bm, ok := findMetric(rm, "a2abridge.store.commit.batch_size")
	if !ok || bm.Unit != "{append}" || bm.Data.(metricdata.Histogram[int64]).DataPoints[0].Count == 0 {
		t.Errorf("no a2abridge.store.commit.batch_size: %+v", bm)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := eng.Close(cctx); err != nil {
		t.Fatal(err)
	}
}

// TestTelemetryTenantJoin: a request from a caller without trace context
// joins the trace of a task of its own tenant only (A2A 1.0 §3.2): the
// same task id asked for under another tenant is no task of the caller's,
// and starts a trace of its own.
func TestTelemetryTenantJoin(t *testing.T) {
	ts := newTelemetryServer(t, memory.New())
	out := ts.post(t, "/a2a/echo", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"tenant":"acme","message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hi"}]}}}`, true)
	var resp struct {
		Result struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || resp.Result.Task.ID == "" {
		t.Fatalf("send: %s (%v)", out, err)
	}
	id := resp.Result.Task.ID
	for _, tenant := range []string{"other", "acme"} {
		ts.post(t, "/a2a/echo", "1.0", `{"jsonrpc":"2.0","id":2,"method":"CancelTask","params":{"tenant":"`+tenant+`","id":"`+id+`"}}`, false)
	}
	var in, out2 int
	for deadline := time.Now().Add(5 * time.Second); in+out2 < 2; time.Sleep(5 * time.Millisecond) {
		in, out2 = 0, 0
		for _, s := range ts.spans.Ended() {
			if s.Name() != "CancelTask" {
				continue
			}
			if s.SpanContext().TraceID().String() == callerTrace {
				in++
			} else {
				out2++
			}
		}
		if time.Now().After(deadline) {
			break
		}
	}
	if in != 1 || out2 != 1 {
		t.Fatalf("CancelTask spans: %d in the task's trace, %d in traces of their own; want 1 (tenant acme) and 1 (tenant other)", in, out2)
	}
}
