package telemetry

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestTransport: a backend call in a traced context is a client span,
// child of the context's span, that sends its own traceparent and ends
// when the body is closed; the query string (credentials) stays out of
// the span; an untraced call passes through untouched.
func TestTransport(t *testing.T) {
	var got http.Header
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		_, _ = io.WriteString(w, "ok")
	}))
	defer backend.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	p, err := New(tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: Transport(nil, "http")}

	// Untraced: nothing added.
	req, _ := http.NewRequest(http.MethodPost, backend.URL+"/x?key=secret", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Get("traceparent") != "" || len(rec.Ended()) != 0 {
		t.Fatalf("an untraced call got traceparent %q, %d spans", got.Get("traceparent"), len(rec.Ended()))
	}

	ctx, parent := tp.Tracer("t").Start(WithProvider(context.Background(), p), "execute")
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, backend.URL+"/x?key=secret", strings.NewReader("{}"))
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("traceparent") != "" {
		t.Error("the caller's request was changed")
	}
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("the span ended before the body was read (%d ended)", n)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	parent.End()
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans ended, want the client span and its parent", len(spans))
	}
	cs := spans[0]
	if cs.Name() != "POST http" || cs.SpanKind() != trace.SpanKindClient || cs.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("client span %q kind %v parent %v", cs.Name(), cs.SpanKind(), cs.Parent().SpanID())
	}
	want := "00-" + cs.SpanContext().TraceID().String() + "-" + cs.SpanContext().SpanID().String() + "-01"
	if got.Get("traceparent") != want {
		t.Errorf("the backend got traceparent %q, want %q", got.Get("traceparent"), want)
	}
	for _, a := range cs.Attributes() {
		if strings.Contains(a.Value.Emit(), "secret") {
			t.Errorf("attribute %s holds the query: %s", a.Key, a.Value.Emit())
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "http.client.request.duration" {
				found = m.Data.(metricdata.Histogram[float64]).DataPoints[0].Count == 1
			}
		}
	}
	if !found {
		t.Error("no http.client.request.duration of the traced call")
	}
}

// TestLogHandler: a record logged in a traced context carries trace_id
// and span_id; one without a span is unchanged.
func TestLogHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("agent", "echo")
	log.InfoContext(context.Background(), "plain")
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("t").Start(context.Background(), "s")
	log.ErrorContext(ctx, "traced")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "trace_id") {
		t.Fatalf("logs: %q", lines)
	}
	if !strings.Contains(lines[1], `"trace_id":"`+span.SpanContext().TraceID().String()+`"`) || !strings.Contains(lines[1], `"span_id":"`+span.SpanContext().SpanID().String()+`"`) || !strings.Contains(lines[1], `"agent":"echo"`) {
		t.Errorf("traced line: %s", lines[1])
	}
	if LogHandler(LogHandler(slog.NewJSONHandler(&buf, nil))) == nil {
		t.Fatal("nil")
	}
}

// TestNilProvider: telemetry off costs nil checks only; none panics.
func TestNilProvider(t *testing.T) {
	p, err := New(nil, nil)
	if p != nil || err != nil {
		t.Fatalf("New(nil, nil) = %v, %v", p, err)
	}
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	ctx, c := p.StartCall(r, "a", "JSONRPC")
	if c != nil || ctx != r.Context() {
		t.Fatal("a Call without telemetry")
	}
	c.SetMethod("m", "0.3", false)
	c.SetError(1, "x")
	c.Event()
	c.HandOff()
	c.End()
	c.Finish()
	_, done := p.Execution(context.Background(), trace.SpanContext{}, "a", "t", "c")
	done("completed", nil)
	p.Commit(context.Background(), "create", time.Now(), nil)
	p.Push(time.Second, "delivered")
	p.Backend("http", "h", time.Second, 200)
	p.ModelCall("m", time.Second, time.Millisecond, nil)
	_, m := StartModelCall(context.Background(), "m")
	m.FirstToken()
	m.End(nil)
}

// TestTraceparent: Traceparent writes what the W3C propagator injects,
// ParseTraceparent reads it back (remote), and refuses what is no
// traceparent.
func TestTraceparent(t *testing.T) {
	for _, flags := range []trace.TraceFlags{0, trace.FlagsSampled, 0xff} {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3, 15: 0xfe}, SpanID: trace.SpanID{9, 7: 0xab}, TraceFlags: flags})
		carrier := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
		got := Traceparent(sc)
		if got != carrier["traceparent"] || len(got) != 55 {
			t.Fatalf("Traceparent %q, the propagator writes %q", got, carrier["traceparent"])
		}
		back, ok := ParseTraceparent(got)
		if !ok || back.TraceID() != sc.TraceID() || back.SpanID() != sc.SpanID() || back.IsSampled() != sc.IsSampled() || !back.IsRemote() {
			t.Fatalf("ParseTraceparent(%q) = %v %v", got, back, ok)
		}
	}
	if got := Traceparent(trace.SpanContext{}); got != "" {
		t.Fatalf("an invalid span context: %q", got)
	}
	for _, bad := range []string{"", "00-00000000000000000000000000000000-0000000000000001-01", "00-zz-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", strings.Repeat("0", 300)} {
		if sc, ok := ParseTraceparent(bad); ok {
			t.Errorf("ParseTraceparent(%q) = %v, accepted", bad, sc)
		}
	}
}
