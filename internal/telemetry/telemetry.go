// Package telemetry is a2abridge's OpenTelemetry instrumentation: the
// spans and metric instruments of the server, the engine and the bridges,
// made from a TracerProvider and a MeterProvider the user passes in, and
// the W3C Trace Context propagation of every hop.
//
// A nil *Provider is telemetry off: every method of it and of a nil *Call
// does nothing, so instrumented code costs a nil check when it is off.
package telemetry

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every span and instrument.
const ScopeName = "github.com/a2abridge/a2abridge"

// serverKind is the start option of server spans (made once: an option
// is an allocation).
var serverKind = trace.WithSpanKind(trace.SpanKindServer)

// Propagator is the W3C Trace Context propagator (traceparent and
// tracestate headers) used on every hop, whatever the process's global
// propagator is.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// durationBuckets are the histogram bucket bounds of the latency
// instruments, in seconds: from 100 µs (an in-memory call) to 5 min (a
// long stream or model call).
var durationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// maxCachedSets bounds each cache of attribute sets: beyond it (more
// agents, methods or codes than a server has), sets are made per record.
const maxCachedSets = 4096

// setCache keeps the measurement option of each attribute set recorded,
// by a comparable key: a record then neither builds nor sorts a set. The
// map is copied on write: a lookup takes no lock.
type setCache[K comparable] struct {
	m  atomic.Pointer[map[K]metric.MeasurementOption]
	mu sync.Mutex // serialises writers
}

func (c *setCache[K]) get(k K, attrs func() []attribute.KeyValue) metric.MeasurementOption {
	if m := c.m.Load(); m != nil {
		if o, ok := (*m)[k]; ok {
			return o
		}
	}
	o := metric.WithAttributeSet(attribute.NewSet(attrs()...))
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil && len(*old) >= maxCachedSets {
		return o
	}
	next := make(map[K]metric.MeasurementOption, 1+lenOf(old))
	if old != nil {
		for key, v := range *old {
			next[key] = v
		}
	}
	next[k] = o
	c.m.Store(&next)
	return o
}

func lenOf[K comparable](m *map[K]metric.MeasurementOption) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

type callSetKey struct {
	method, version, binding, agent, outcome string
	code                                     int
}

type pairKey struct{ a, b string }

// Provider holds the tracer and the instruments. Make it with New.
type Provider struct {
	callSets   setCache[callSetKey]
	streamSets setCache[pairKey]
	execSets   setCache[pairKey]
	commitSets setCache[pairKey]

	tracer trace.Tracer // nil: no tracing

	metrics       bool
	callDuration  metric.Float64Histogram
	activeStreams metric.Int64UpDownCounter
	streamEvents  metric.Int64Counter
	execDuration  metric.Float64Histogram
	commitDur     metric.Float64Histogram
	pushDuration  metric.Float64Histogram
	backendDur    metric.Float64Histogram
	batchSize     metric.Int64Histogram
	pushAbandoned metric.Int64Counter
	limited       metric.Int64Counter
	meter         metric.Meter
	ttft          metric.Float64Histogram
	genaiDuration metric.Float64Histogram
}

// New returns the Provider of tp and mp, either of which may be nil (no
// traces, no metrics); nil when both are. It fails only when mp refuses
// an instrument.
func New(tp trace.TracerProvider, mp metric.MeterProvider) (*Provider, error) {
	if tp == nil && mp == nil {
		return nil, nil
	}
	p := &Provider{}
	if tp != nil {
		p.tracer = tp.Tracer(ScopeName)
	}
	if mp == nil {
		return p, nil
	}
	p.metrics = true
	m := mp.Meter(ScopeName)
	p.meter = m
	b := metric.WithExplicitBucketBoundaries(durationBuckets...)
	var err error
	set := func(f func() error) {
		if err == nil {
			err = f()
		}
	}
	set(func() (e error) {
		p.callDuration, e = m.Float64Histogram("rpc.server.call.duration", metric.WithUnit("s"), b,
			metric.WithDescription("Duration of A2A requests answered, by method, binding, protocol version, agent and outcome; a stream's lasts until it ends"))
		return
	})
	set(func() (e error) {
		p.activeStreams, e = m.Int64UpDownCounter("a2a.server.active_streams", metric.WithUnit("{stream}"),
			metric.WithDescription("SSE streams open (message/stream, tasks/resubscribe and their 1.0 names)"))
		return
	})
	set(func() (e error) {
		p.streamEvents, e = m.Int64Counter("a2a.server.stream.events", metric.WithUnit("{event}"),
			metric.WithDescription("Events written to SSE streams"))
		return
	})
	set(func() (e error) {
		p.execDuration, e = m.Float64Histogram("a2a.agent.execution.duration", metric.WithUnit("s"), b,
			metric.WithDescription("Duration of agent executions, from start to the agent's return, by agent and the state (TaskState) they left their task in; its count is the executions ended"))
		return
	})
	set(func() (e error) {
		p.commitDur, e = m.Float64Histogram("a2abridge.store.commit.duration", metric.WithUnit("s"), b,
			metric.WithDescription("Time from handing a task's append to the store until it is durable (group commit included), by operation"))
		return
	})
	set(func() (e error) {
		p.pushDuration, e = m.Float64Histogram("a2abridge.push.delivery.duration", metric.WithUnit("s"), b,
			metric.WithDescription("Duration of push notification delivery attempts (one webhook POST), by outcome"))
		return
	})
	set(func() (e error) {
		p.batchSize, e = m.Int64Histogram("a2abridge.store.commit.batch_size", metric.WithUnit("{append}"),
			metric.WithExplicitBucketBoundaries(1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
			metric.WithDescription("Appends per transaction of the store's group commit (SQLite, PostgreSQL)"))
		return
	})
	set(func() (e error) {
		p.pushAbandoned, e = m.Int64Counter("a2abridge.push.abandoned", metric.WithUnit("{notification}"),
			metric.WithDescription("Push notifications given up after retrying for PushOptions.GiveUpAfter, or too large to send"))
		return
	})
	set(func() (e error) {
		p.limited, e = m.Int64Counter("a2abridge.limits.refused", metric.WithUnit("{request}"),
			metric.WithDescription("Requests refused by a limit, by agent and reason (rate)"))
		return
	})
	set(func() (e error) {
		p.backendDur, e = m.Float64Histogram("http.client.request.duration", metric.WithUnit("s"), b,
			metric.WithDescription("Duration of bridged backend HTTP calls (http, a2a and openai backends), to the response headers"))
		return
	})
	set(func() (e error) {
		p.genaiDuration, e = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"), b,
			metric.WithDescription("Duration of model calls of the openai backend, to the last token"))
		return
	})
	set(func() (e error) {
		p.ttft, e = m.Float64Histogram("gen_ai.client.time_to_first_token", metric.WithUnit("s"), b,
			metric.WithDescription("Time to the first token of streamed model calls of the openai backend"))
		return
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Tracing reports whether p makes spans.
func (p *Provider) Tracing() bool { return p != nil && p.tracer != nil }

// Attribute keys (A2A ones where no semantic convention exists).
const (
	KeyMethod    = attribute.Key("rpc.method")
	KeySystem    = attribute.Key("rpc.system.name")
	KeyStatus    = attribute.Key("rpc.response.status_code")
	KeyErrorType = attribute.Key("error.type")
	KeyBinding   = attribute.Key("a2a.binding")
	KeyVersion   = attribute.Key("a2a.protocol.version")
	KeyAgent     = attribute.Key("a2a.agent")
	// KeyLimitReason is the limit that refused a request ("rate").
	KeyLimitReason = attribute.Key("a2abridge.limit.reason")
	KeyTaskID      = attribute.Key("a2a.task.id")
	KeyContextID   = attribute.Key("a2a.context.id")
	KeyOutcome     = attribute.Key("a2a.outcome")
	KeyState       = attribute.Key("a2a.task.state")
	KeyEvents      = attribute.Key("a2a.stream.events")
	KeyOperation   = attribute.Key("a2abridge.store.operation")
	KeyHTTPMethod  = attribute.Key("http.request.method")
	KeyHTTPStatus  = attribute.Key("http.response.status_code")
	KeyServerAddr  = attribute.Key("server.address")
	KeyBackend     = attribute.Key("a2abridge.backend")
	KeyGenAIOp     = attribute.Key("gen_ai.operation.name")
	KeyGenAIModel  = attribute.Key("gen_ai.request.model")
	KeyGenAISystem = attribute.Key("gen_ai.provider.name")
	KeyLinkType    = attribute.Key("a2abridge.link")
)

// Call is one A2A request being answered: its server span and what the
// transport learns of it as it goes (method, task, error). Transports set
// its fields through its methods; End records it. Methods on a nil *Call
// do nothing.
type Call struct {
	p       *Provider
	span    trace.Span
	start   time.Time
	binding string
	agent   string

	mu      sync.Mutex
	method  string
	version string
	taskID  string
	code    int
	errType string
	stream  bool

	// deferred: the caller sent no trace context, so the span starts at
	// Begin (or Finish), once the transport knows which task the call
	// concerns; base is the request's context it then starts in (under
	// mu, as span is).
	deferred bool
	base     context.Context

	events   atomic.Int64
	opened   atomic.Bool // StreamOpened counted it in a2a.server.active_streams
	canceled bool        // the client went away (or its deadline passed) first
	handoff  atomic.Bool
	ended    atomic.Bool
}

type callKey struct{}

// StartCall starts the Call of r, served by agent over binding ("JSONRPC",
// "HTTP+JSON"). When r carries a W3C traceparent (and tracestate), the
// call's span continues the caller's trace and starts now; otherwise it
// starts at Begin, where the transport may give it the trace of the task
// the call concerns, or at Finish (a call answered before it was
// dispatched), with the call's start time either way. It returns r's
// context carrying the Call (and the span, when it started) and the
// Call; nil Call when p is nil.
func (p *Provider) StartCall(r *http.Request, agent, binding string) (context.Context, *Call) {
	ctx := r.Context()
	if p == nil {
		return ctx, nil
	}
	c := &Call{p: p, start: time.Now(), binding: binding, agent: agent}
	if p.tracer != nil {
		if len(r.Header["Traceparent"]) > 0 { // the canonical key: no allocation when absent
			ctx = Propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		if !trace.SpanContextFromContext(ctx).IsValid() {
			// No trace context: neither a (valid) traceparent nor a span
			// of an outer handler (otelhttp, say).
			c.deferred, c.base = true, ctx
			return context.WithValue(ctx, callKey{}, c), c
		}
		ctx, c.span = p.tracer.Start(ctx, binding, serverKind)
		if !c.span.IsRecording() {
			c.span = nil // not sampled: its context goes on, nothing is recorded
		}
	}
	return context.WithValue(ctx, callKey{}, c), c
}

// Deferred reports whether the call's span waits for Begin: its caller
// sent no trace context.
func (c *Call) Deferred() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deferred
}

// Begin starts the span of a call whose caller sent no trace context
// (Deferred), as the child of parent when parent is valid (the trace of
// the task the call concerns: a cancel or continuation joins the trace
// of the task's execution, wherever it ran), else as a new trace's root.
// It returns ctx carrying the span. A call whose span started already
// (or without tracing) returns ctx as it is.
func (c *Call) Begin(ctx context.Context, parent trace.SpanContext) context.Context {
	if c == nil {
		return ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.beginLocked(ctx, parent)
}

func (c *Call) beginLocked(ctx context.Context, parent trace.SpanContext) context.Context {
	if !c.deferred {
		return ctx
	}
	c.deferred = false
	if parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	name := c.method
	if name == "" {
		name = c.binding
	}
	var span trace.Span
	ctx, span = c.p.tracer.Start(ctx, name, serverKind, trace.WithTimestamp(c.start))
	if span.IsRecording() {
		c.span = span
	}
	return ctx
}

// CallFrom returns the Call of ctx, or nil.
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// SetMethod names the A2A method called (e.g. "message/send",
// "SendMessage") and its protocol version ("0.3", "1.0"); stream marks
// a streaming method.
func (c *Call) SetMethod(method, version string, stream bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.method, c.version, c.stream = method, version, stream
	span := c.span
	c.mu.Unlock()
	if span != nil {
		span.SetName(method)
	}
}

// SetTask names the task the call concerns.
func (c *Call) SetTask(id string) {
	if c == nil || id == "" {
		return
	}
	c.mu.Lock()
	c.taskID = id
	c.mu.Unlock()
}

// SetError records the A2A/JSON-RPC error code the call was answered with
// and its message. The first error recorded stays.
func (c *Call) SetError(code int, message string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.code == 0 {
		c.code = code
		c.errType = message
	}
	c.mu.Unlock()
}

// SetCanceled records that the call ended because its client went away
// or its deadline passed: outcome "canceled", not an error of the server.
func (c *Call) SetCanceled() {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.code == 0 {
		c.canceled = true
	}
	c.mu.Unlock()
}

// Event counts one event written to the call's stream.
func (c *Call) Event() {
	if c != nil {
		c.events.Add(1)
	}
}

// StreamOpened marks the call as an open SSE stream (until End).
func (c *Call) StreamOpened(ctx context.Context) {
	if c == nil || !c.p.metrics {
		return
	}
	c.mu.Lock()
	c.stream = true
	c.mu.Unlock()
	c.opened.Store(true)
	c.p.activeStreams.Add(ctx, 1, c.streamSet())
}

// HandOff marks that the call outlives its HTTP handler (a stream taken
// over by its own goroutine): End from the handler then does nothing, and
// the goroutine ends it with Finish.
func (c *Call) HandOff() {
	if c != nil {
		c.handoff.Store(true)
	}
}

// End records the call when its HTTP handler returns, unless it was
// handed off (HandOff).
func (c *Call) End() {
	if c == nil || c.handoff.Load() {
		return
	}
	c.Finish()
}

// Finish records the call: its span ends with the attributes learnt, and
// its duration goes to rpc.server.call.duration. Only the first call of
// Finish counts.
func (c *Call) Finish() {
	if c == nil || c.ended.Swap(true) {
		return
	}
	end := time.Now()
	c.mu.Lock()
	if c.deferred {
		// Answered before it was dispatched (a malformed body, a failed
		// authentication…): a trace of its own.
		c.beginLocked(c.base, trace.SpanContext{})
	}
	method, version, taskID, code, errType, stream, canceled := c.method, c.version, c.taskID, c.code, c.errType, c.stream, c.canceled
	span := c.span
	c.mu.Unlock()
	if method == "" {
		method = "unknown"
	}
	outcome := "ok"
	switch {
	case code != 0:
		outcome = "error"
	case canceled:
		outcome = "canceled"
	}
	system := "http" // rpc.system of HTTP+JSON
	switch c.binding {
	case "JSONRPC":
		system = "jsonrpc"
	case "GRPC":
		system = "grpc"
	}
	if span != nil {
		attrs := []attribute.KeyValue{KeyMethod.String(method), KeySystem.String(system), KeyOutcome.String(outcome),
			KeyBinding.String(c.binding), KeyAgent.String(c.agent)}
		if version != "" {
			attrs = append(attrs, KeyVersion.String(version))
		}
		if taskID != "" {
			attrs = append(attrs, KeyTaskID.String(taskID))
		}
		if stream {
			attrs = append(attrs, KeyEvents.Int64(c.events.Load()))
		}
		if code != 0 {
			attrs = append(attrs, KeyStatus.String(strconv.Itoa(code)), KeyErrorType.String(strconv.Itoa(code)))
			span.SetStatus(codes.Error, errType)
		}
		span.SetAttributes(attrs...)
		span.End()
	}
	if c.p.metrics {
		ctx := context.Background()
		attrs := c.p.callSets.get(callSetKey{method, version, c.binding, c.agent, outcome, code}, func() []attribute.KeyValue {
			return []attribute.KeyValue{KeyMethod.String(method), KeySystem.String(system), KeyBinding.String(c.binding),
				KeyVersion.String(version), KeyAgent.String(c.agent), KeyOutcome.String(outcome), KeyStatus.String(strconv.Itoa(code))}
		})
		c.p.callDuration.Record(ctx, end.Sub(c.start).Seconds(), attrs)
		if c.opened.Load() {
			agentAttrs := c.streamSet()
			c.p.activeStreams.Add(ctx, -1, agentAttrs)
			if n := c.events.Load(); n > 0 {
				c.p.streamEvents.Add(ctx, n, agentAttrs)
			}
		}
	}
}

func (c *Call) streamSet() metric.MeasurementOption {
	return c.p.streamSets.get(pairKey{c.agent, c.binding}, func() []attribute.KeyValue {
		return []attribute.KeyValue{KeyAgent.String(c.agent), KeyBinding.String(c.binding)}
	})
}

// ClientSpan starts a client span of ctx named name (a call to another
// service) with attrs; without tracing it returns ctx and a no-op span.
func (p *Provider) ClientSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if p == nil || p.tracer == nil {
		return ctx, trace.SpanFromContext(context.Background()) // a no-op span: never the caller's
	}
	return p.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// errorType names err's kind for error.type: context errors by name,
// anything else by its Go type (never its text, which may hold secrets).
func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return fmt.Sprintf("%T", err)
}

// Execution starts the span of an agent's execution of task taskID, as a
// child of the span context parent (the request's that started it; an
// invalid one starts a new trace). It returns the execution's context and
// a function to call when the agent returns, with the task's state then.
func (p *Provider) Execution(ctx context.Context, parent trace.SpanContext, agent, taskID, contextID string) (context.Context, func(state string, err error)) {
	if p == nil {
		return ctx, func(string, error) {}
	}
	start := time.Now()
	ctx = WithProvider(ctx, p)
	var span trace.Span
	switch {
	case p.tracer == nil:
	case parent.IsValid() && !parent.IsSampled():
		// The request's trace was not sampled: the execution carries its
		// context on (to the backends it calls) without a span of its own,
		// as a parent-based sampler (the default) would decide.
		ctx = trace.ContextWithSpanContext(ctx, parent)
	default:
		if parent.IsValid() {
			ctx = trace.ContextWithSpanContext(ctx, parent)
		}
		ctx, span = p.tracer.Start(ctx, "execute "+agent)
		if span.IsRecording() {
			span.SetAttributes(KeyAgent.String(agent), KeyTaskID.String(taskID), KeyContextID.String(contextID))
		} else {
			span = nil
		}
	}
	return ctx, func(state string, err error) {
		if span != nil {
			span.SetAttributes(KeyState.String(state))
			if err != nil {
				// The agent's error text may quote a backend's answer or a
				// URL with credentials: only its type leaves the process.
				span.SetAttributes(KeyErrorType.String(errorType(err)))
				span.SetStatus(codes.Error, "the agent's execution failed")
			}
			span.End()
		}
		if p.metrics {
			attrs := p.execSets.get(pairKey{agent, state}, func() []attribute.KeyValue {
				return []attribute.KeyValue{KeyAgent.String(agent), KeyState.String(state)}
			})
			p.execDuration.Record(context.Background(), time.Since(start).Seconds(), attrs)
		}
	}
}

// Commit records the time from handing an append to the store until it was
// durable (op is "create" or "append"), and a span of it when ctx carries
// one (pass context.Background() for a commit no one waits for). start is
// when it was handed over.
func (p *Provider) Commit(ctx context.Context, op string, start time.Time, err error) {
	if p == nil {
		return
	}
	end := time.Now()
	if p.tracer != nil && trace.SpanContextFromContext(ctx).IsValid() {
		_, span := p.tracer.Start(ctx, "store "+op, trace.WithTimestamp(start), trace.WithAttributes(KeyOperation.String(op)))
		if err != nil {
			span.SetAttributes(KeyErrorType.String(errorType(err)))
			span.SetStatus(codes.Error, "the commit failed")
		}
		span.End(trace.WithTimestamp(end))
	}
	if p.metrics {
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		p.commitDur.Record(context.Background(), end.Sub(start).Seconds(), p.commitSets.get(pairKey{op, outcome}, func() []attribute.KeyValue {
			return []attribute.KeyValue{KeyOperation.String(op), KeyOutcome.String(outcome)}
		}))
	}
}

// Push records one push notification delivery attempt that took d and
// ended with outcome ("delivered" or "failed").
func (p *Provider) Push(d time.Duration, outcome string) {
	if p == nil || !p.metrics {
		return
	}
	p.pushDuration.Record(context.Background(), d.Seconds(), metric.WithAttributes(KeyOutcome.String(outcome)))
}

// CommitBatch records one group commit of the store holding n appends
// (a store.CommitObserver's callback). d is not recorded: the commit
// durations callers wait for are a2abridge.store.commit.duration.
func (p *Provider) CommitBatch(n int, _ time.Duration) {
	if p == nil || !p.metrics {
		return
	}
	p.batchSize.Record(context.Background(), int64(n))
}

// LimitRefused counts a request to agent refused by a limit; reason
// names the limit ("rate").
func (p *Provider) LimitRefused(agent, reason string) {
	if p == nil || !p.metrics {
		return
	}
	p.limited.Add(context.Background(), 1, metric.WithAttributes(KeyAgent.String(agent), KeyLimitReason.String(reason)))
}

// PushAbandoned counts a push notification given up.
func (p *Provider) PushAbandoned() {
	if p == nil || !p.metrics {
		return
	}
	p.pushAbandoned.Add(context.Background(), 1)
}

// ObservePushBacklog reports backlog() as a2abridge.push.backlog (the
// push notification configs with deliveries pending or retrying) at each
// collection, until the returned function is called.
func (p *Provider) ObservePushBacklog(backlog func() int64) (stop func()) {
	if p == nil || !p.metrics {
		return func() {}
	}
	g, err := p.meter.Int64ObservableGauge("a2abridge.push.backlog", metric.WithUnit("{config}"),
		metric.WithDescription("Push notification configs with deliveries pending or being retried"))
	if err != nil {
		return func() {}
	}
	reg, err := p.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(g, backlog())
		return nil
	}, g)
	if err != nil {
		return func() {}
	}
	return func() { _ = reg.Unregister() }
}

// ObserveTasks reports, at each collection, the tasks that count gives
// (by agent and state) as the gauge a2abridge.tasks ({task}), until the
// returned function is called. count calls observe once per agent and
// state; an error it returns is the collection's (nothing reported).
func (p *Provider) ObserveTasks(count func(ctx context.Context, observe func(agent, state string, n int64)) error) (stop func()) {
	if p == nil || !p.metrics {
		return func() {}
	}
	g, err := p.meter.Int64ObservableGauge("a2abridge.tasks", metric.WithUnit("{task}"),
		metric.WithDescription("Tasks in the store by agent and state"))
	if err != nil {
		return func() {}
	}
	reg, err := p.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return count(ctx, func(agent, state string, n int64) {
			o.ObserveInt64(g, n, p.execSets.get(pairKey{agent, state}, func() []attribute.KeyValue {
				return []attribute.KeyValue{KeyAgent.String(agent), KeyState.String(state)}
			}))
		})
	}, g)
	if err != nil {
		return func() {}
	}
	return func() { _ = reg.Unregister() }
}

// Backend records one bridged backend HTTP call of kind backend ("http",
// "a2a", "openai") to host that took d and answered status (0: no
// answer).
func (p *Provider) Backend(backend, host string, d time.Duration, status int) {
	if p == nil || !p.metrics {
		return
	}
	attrs := []attribute.KeyValue{KeyBackend.String(backend), KeyServerAddr.String(host)}
	if status != 0 {
		attrs = append(attrs, KeyHTTPStatus.Int(status))
	} else {
		attrs = append(attrs, KeyErrorType.String("no_response"))
	}
	p.backendDur.Record(context.Background(), d.Seconds(), metric.WithAttributes(attrs...))
}

// ModelCall records an openai backend model call to model: its duration
// to the last token, and (if ttft > 0) its time to the first token.
func (p *Provider) ModelCall(model string, total, ttft time.Duration, err error) {
	if p == nil || !p.metrics {
		return
	}
	attrs := []attribute.KeyValue{KeyGenAIOp.String("chat"), KeyGenAIModel.String(model), KeyGenAISystem.String("openai")}
	if err != nil {
		attrs = append(attrs, KeyErrorType.String("error"))
	}
	set := metric.WithAttributes(attrs...)
	p.genaiDuration.Record(context.Background(), total.Seconds(), set)
	if ttft > 0 {
		p.ttft.Record(context.Background(), ttft.Seconds(), set)
	}
}

// Inject writes ctx's trace context into h as traceparent (and
// tracestate) headers: the hop to another service joins the trace. It does
// nothing when ctx carries no valid span context.
func Inject(ctx context.Context, h http.Header) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		Propagator.Inject(ctx, propagation.HeaderCarrier(h))
	}
}

// Traceparent is sc as a W3C traceparent header value
// ("00-{trace-id}-{span-id}-{flags}", 55 characters; W3C Trace Context
// §3.2), what a store keeps as a task's trace context; "" for an invalid
// sc.
func Traceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	var buf [55]byte
	b := buf[:0]
	b = append(b, "00-"...)
	b = hex.AppendEncode(b, tid[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, sid[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, []byte{byte(sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom))}) // the flags W3C defines, as the propagator writes them
	return string(b)
}

// ParseTraceparent is the span context a W3C traceparent value (as
// Traceparent makes it) stands for, marked remote; false when tp is empty
// or not a valid traceparent (a stored value is not trusted further).
func ParseTraceparent(tp string) (trace.SpanContext, bool) {
	if tp == "" {
		return trace.SpanContext{}, false
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	sc := trace.SpanContextFromContext(ctx)
	return sc, sc.IsValid()
}

// LinkTask links the call's span to tp, the trace context (a W3C
// traceparent) of the task the call concerns (store.TaskInfo.Trace), when
// it is another trace: an operator goes from a cancel, a continuation or
// a read of a task to the trace of its execution (which may run in
// another process), and back. tp is read only for a recorded span.
func (c *Call) LinkTask(tp string) {
	if c == nil || tp == "" {
		return
	}
	c.mu.Lock()
	span := c.span
	c.mu.Unlock()
	if span == nil {
		return
	}
	sc, ok := ParseTraceparent(tp)
	if !ok || sc.TraceID() == span.SpanContext().TraceID() {
		return
	}
	span.AddLink(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{KeyLinkType.String("task")}})
}

type providerKey struct{}

// WithProvider returns ctx carrying p: code that runs in it (an agent's
// execution, a bridge's backend call) records its metrics there.
func WithProvider(ctx context.Context, p *Provider) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, providerKey{}, p)
}

// FromContext returns the Provider ctx carries, or nil.
func FromContext(ctx context.Context) *Provider {
	p, _ := ctx.Value(providerKey{}).(*Provider)
	return p
}

// Transport wraps next (nil: http.DefaultTransport) for the calls of a
// bridge's backend of kind backend ("http", "a2a", "openai"): each request
// whose context carries a span (an agent's execution) is a client span,
// child of it, from the same TracerProvider, ending when the response
// body is closed or read to its end; its W3C traceparent is sent to the
// backend; and, where the context carries a Provider, the time to the
// response headers goes to http.client.request.duration. A request whose
// context carries neither passes through unchanged.
func Transport(next http.RoundTripper, backend string) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{next: next, backend: backend}
}

type transport struct {
	next    http.RoundTripper
	backend string
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	parent := trace.SpanFromContext(ctx)
	p := FromContext(ctx)
	if !parent.SpanContext().IsValid() && p == nil {
		return t.next.RoundTrip(req)
	}
	start := time.Now()
	var span trace.Span
	if parent.SpanContext().IsValid() {
		tracer := parent.TracerProvider().Tracer(ScopeName)
		ctx, span = tracer.Start(ctx, req.Method+" "+t.backend, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start),
			trace.WithAttributes(KeyHTTPMethod.String(req.Method), KeyServerAddr.String(req.URL.Host), KeyBackend.String(t.backend),
				attribute.String("url.full", redactURL(req))))
		req = req.Clone(ctx) // RoundTrippers must not change the caller's request
		Propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
	resp, err := t.next.RoundTrip(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	p.Backend(t.backend, req.URL.Host, time.Since(start), status)
	if span == nil {
		return resp, err
	}
	if err != nil {
		// Not the error's text: a *url.Error quotes the URL, query included.
		span.SetAttributes(KeyErrorType.String(errorType(err)))
		span.SetStatus(codes.Error, "no response")
		span.End()
		return resp, err
	}
	span.SetAttributes(KeyHTTPStatus.Int(status))
	if status >= 400 {
		span.SetStatus(codes.Error, resp.Status)
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		span.End()
		return resp, nil
	}
	resp.Body = &spanBody{ReadCloser: resp.Body, span: span}
	return resp, nil
}

// redactURL is req's URL without its query and user info (they may hold
// credentials).
func redactURL(req *http.Request) string {
	u := *req.URL
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return u.String()
}

// spanBody ends its span when the body is read to its end or closed.
type spanBody struct {
	io.ReadCloser
	span trace.Span
	once sync.Once
}

func (b *spanBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.end()
	}
	return n, err
}

func (b *spanBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}

func (b *spanBody) end() { b.once.Do(func() { b.span.End() }) }

// ModelCall is one call of a model by the openai backend: a client span
// "chat {model}" (GenAI semantic conventions) when the context carries a
// span, and gen_ai.client.operation.duration and
// gen_ai.client.time_to_first_token when it carries a Provider. Methods
// on a nil *ModelCall do nothing.
type ModelCall struct {
	p     *Provider
	span  trace.Span
	start time.Time
	ttft  time.Duration
	model string
	ended bool
}

// StartModelCall starts the ModelCall of model in ctx; nil (and ctx) when
// ctx carries neither a span nor a Provider.
func StartModelCall(ctx context.Context, model string) (context.Context, *ModelCall) {
	parent := trace.SpanFromContext(ctx)
	p := FromContext(ctx)
	if !parent.SpanContext().IsValid() && p == nil {
		return ctx, nil
	}
	m := &ModelCall{p: p, start: time.Now(), model: model}
	if parent.SpanContext().IsValid() {
		ctx, m.span = parent.TracerProvider().Tracer(ScopeName).Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(KeyGenAIOp.String("chat"), KeyGenAIModel.String(model), KeyGenAISystem.String("openai")))
	}
	return ctx, m
}

// FirstToken marks the arrival of the first token (only the first call
// counts).
func (m *ModelCall) FirstToken() {
	if m != nil && m.ttft == 0 {
		m.ttft = time.Since(m.start)
	}
}

// End ends the call, with err (if not nil) as its error. Only the first
// call counts.
func (m *ModelCall) End(err error) {
	if m == nil || m.ended {
		return
	}
	m.ended = true
	total := time.Since(m.start)
	if m.span != nil {
		if err != nil {
			m.span.SetAttributes(KeyErrorType.String(errorType(err)))
			m.span.SetStatus(codes.Error, "the model call failed")
		}
		if m.ttft > 0 {
			m.span.SetAttributes(attribute.Float64("gen_ai.response.time_to_first_token", m.ttft.Seconds()))
		}
		m.span.End()
	}
	m.p.ModelCall(m.model, total, m.ttft, err)
}
