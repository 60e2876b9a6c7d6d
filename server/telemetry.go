package server

import (
	"bytes"
	"cmp"
	"context"
	"log/slog"
	"net/http"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/internal/binding/edge"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	"github.com/go-json-experiment/json"
	"go.opentelemetry.io/otel/trace"
)

// Telemetry: with EngineOptions.TracerProvider or
// MeterProvider set, each request an agent's transports answer is a
// telemetry Call (its server span and its rpc.server.call.duration),
// started by instrument (JSON-RPC) or the HTTP+JSON route (Host); the
// transports name its method and record its error; executions, commits
// and push deliveries make child spans. Off, none of this runs.

// instrument makes every request next serves a telemetry Call of h's
// agent over binding; next itself when telemetry is off.
func instrument(h *AgentHandler, binding string, next http.Handler) http.Handler {
	tel := h.e.Telemetry()
	if tel == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, c := tel.StartCall(r, h.name, binding)
		defer c.End()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// beginCall starts the span of the request's telemetry Call when its
// caller sent no trace context (telemetry.Call.Deferred), once the
// transport knows the method and its params (JSON): a cancel, a
// resubscribe or a continuation message of a task the caller may see
// joins the trace of the task's latest execution (store.TaskInfo.Trace,
// which another replica may have written); anything else starts a trace.
// tenant and taskID are those of a REST path ("": read from params). It
// returns ctx carrying the span; ctx itself when there is nothing to
// start.
func (h *AgentHandler) beginCall(ctx context.Context, method, tenant, taskID string, params []byte) context.Context {
	c := telemetry.CallFrom(ctx)
	if !c.Deferred() {
		return ctx
	}
	if taskID == "" {
		var t string
		t, taskID = taskOfParams(method, params)
		tenant = cmp.Or(tenant, t)
	}
	var parent trace.SpanContext
	if taskID != "" {
		parent = h.taskTrace(withTenant(ctx, tenant), taskID)
	}
	return c.Begin(ctx, parent)
}

// taskOfParams is the task whose trace a request of method with params
// (JSON) joins, and the tenant of the request (A2A 1.0 §3.2): the id of a
// cancel or resubscribe, the taskId of a continuation message; "" for
// other methods, for a message that starts a task, and for params that do
// not decode (the method answers that error).
func taskOfParams(method string, params []byte) (tenant, taskID string) {
	switch method {
	case binding.MethodCancelTask, binding.MethodResubscribe, binding.Method10CancelTask, binding.Method10SubscribeToTask:
		var p struct {
			Tenant string `json:"tenant"`
			ID     string `json:"id"`
		}
		if json.Unmarshal(params, &p) == nil {
			return p.Tenant, p.ID
		}
	case binding.MethodSendMessage, binding.MethodSendStreamingMessage, binding.Method10SendMessage, binding.Method10SendStreamingMessage:
		if !bytes.Contains(params, []byte(`"taskId"`)) && !bytes.Contains(params, []byte(`"task_id"`)) {
			return "", "" // a new task: no decoding
		}
		var p struct {
			Tenant  string `json:"tenant"`
			Message struct {
				TaskID  string `json:"taskId"`
				TaskID2 string `json:"task_id"`
			} `json:"message"`
		}
		if json.Unmarshal(params, &p) == nil {
			return p.Tenant, cmp.Or(p.Message.TaskID, p.Message.TaskID2)
		}
	}
	return "", ""
}

// taskTrace is the trace context of task id's latest execution, when the
// task is one of this agent's that the caller of ctx (its tenant
// included) may see; invalid otherwise. A task executing here has it in
// the engine's cache; any other is read from the store.
func (h *AgentHandler) taskTrace(ctx context.Context, id string) trace.SpanContext {
	owner, ok := h.owner(ctx)
	if !ok {
		return trace.SpanContext{}
	}
	info, cached := h.e.CachedTask(id)
	if !cached || info.Trace == "" {
		var err error
		if info, err = h.e.Store().Task(ctx, id); err != nil {
			return trace.SpanContext{}
		}
	}
	if info.Agent != h.name || info.Owner != owner {
		return trace.SpanContext{}
	}
	sc, _ := telemetry.ParseTraceparent(info.Trace)
	return sc
}

// NewLogHandler wraps h so that each record logged with a context that
// carries an OpenTelemetry span (the …Context methods of slog.Logger;
// the engine logs a request's errors so) gets trace_id and span_id
// attributes in the hex form of the W3C traceparent and the OTLP data:
// a log line leads to its trace. Records without a span
// pass unchanged.
func NewLogHandler(h slog.Handler) slog.Handler { return telemetry.LogHandler(h) }

// writeErrorReq is WriteError in the form authenticateReq takes.
func writeErrorReq(w http.ResponseWriter, _ *http.Request, status int, e *a2a.Error) {
	edge.WriteError(w, status, e)
}
