package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// restTransport serves the HTTP+JSON binding of A2A 1.0 (§11) below an
// agent's URL: POST message:send and message:stream; GET tasks (ListTasks)
// and tasks/{id}; POST tasks/{id}:cancel; GET or POST tasks/{id}:subscribe;
// POST and GET tasks/{id}/pushNotificationConfigs; GET and DELETE
// tasks/{id}/pushNotificationConfigs/{configId}; GET extendedAgentCard.
// Each path is also served below a tenant: /{tenant}/message:send and so
// on (A2A 1.0 §3.2, the tenant of an AgentInterface).
//
// Errors are google.rpc.Status JSON with the HTTP status of A2A 1.0 §5.4
// and a google.rpc.ErrorInfo detail (§11.6); errors of a stream that has
// begun are its last SSE event.
type restTransport struct {
	h       *Handler
	opts    TransportOptions
	cardURL func(*http.Request) string
}

func newRESTHandler(h *Handler, opts TransportOptions, cardURL func(*http.Request) string) *restTransport {
	return &restTransport{h: h, opts: opts.withDefaults(), cardURL: cardURL}
}

// restRoute is one parsed REST request path.
type restRoute struct {
	tenant string
	op     string // an A2A 1.0 operation name (Method10…)
	taskID string
	config string // push notification config id
	allow  string // the methods the path allows, for 405
}

// parseRESTPath routes the path below an agent's URL (escaped, without
// its leading slash) to an operation. A first segment that starts no
// route is a tenant. ok is false for a path that names no route; a path
// that names one with another HTTP method has op "" and allow set.
func parseRESTPath(method, escaped string) (restRoute, bool) {
	segs := strings.Split(escaped, "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil {
			return restRoute{}, false
		}
		segs[i] = u
	}
	if rt, ok := routeSegments(method, segs); ok {
		return rt, true
	}
	if len(segs) > 1 && segs[0] != "" {
		if rt, ok := routeSegments(method, segs[1:]); ok {
			rt.tenant = segs[0]
			return rt, true
		}
	}
	return restRoute{}, false
}

func routeSegments(method string, segs []string) (restRoute, bool) {
	one := func(allowed, op string) (restRoute, bool) {
		rt := restRoute{allow: allowed}
		for _, m := range strings.Split(allowed, ", ") {
			if m == method || (m == http.MethodGet && method == http.MethodHead) {
				rt.op = op
			}
		}
		return rt, true
	}
	switch {
	case len(segs) == 1 && segs[0] == "message:send":
		return one(http.MethodPost, Method10SendMessage)
	case len(segs) == 1 && segs[0] == "message:stream":
		return one(http.MethodPost, Method10SendStreamingMessage)
	case len(segs) == 1 && segs[0] == "extendedAgentCard":
		return one(http.MethodGet, Method10GetExtendedCard)
	case len(segs) == 1 && segs[0] == "tasks":
		return one(http.MethodGet, Method10ListTasks)
	case len(segs) >= 2 && segs[0] == "tasks" && segs[1] != "":
		id := segs[1]
		switch len(segs) {
		case 2:
			if base, ok := strings.CutSuffix(id, ":cancel"); ok && base != "" {
				rt, _ := one(http.MethodPost, Method10CancelTask)
				rt.taskID = base
				return rt, true
			}
			if base, ok := strings.CutSuffix(id, ":subscribe"); ok && base != "" {
				rt, _ := one(http.MethodGet+", "+http.MethodPost, Method10SubscribeToTask)
				rt.taskID = base
				return rt, true
			}
			rt, _ := one(http.MethodGet, Method10GetTask)
			rt.taskID = id
			return rt, true
		case 3:
			if segs[2] != "pushNotificationConfigs" {
				return restRoute{}, false
			}
			rt := restRoute{allow: "GET, POST", taskID: id}
			switch method {
			case http.MethodPost:
				rt.op = Method10CreatePushConfig
			case http.MethodGet, http.MethodHead:
				rt.op = Method10ListPushConfigs
			}
			return rt, true
		case 4:
			if segs[2] != "pushNotificationConfigs" || segs[3] == "" {
				return restRoute{}, false
			}
			rt := restRoute{allow: "GET, DELETE", taskID: id, config: segs[3]}
			switch method {
			case http.MethodGet, http.MethodHead:
				rt.op = Method10GetPushConfig
			case http.MethodDelete:
				rt.op = Method10DeletePushConfig
			}
			return rt, true
		}
	}
	return restRoute{}, false
}

// serveREST answers one REST request routed to rt (parseRESTPath).
func (t *restTransport) serveREST(w http.ResponseWriter, r *http.Request, rt restRoute) {
	if rt.op == "" {
		abandonBody(w, r)
		w.Header().Set("Allow", rt.allow)
		writeRESTError(w, http.StatusMethodNotAllowed, a2a.ErrUnsupportedOperation.WithMessage("%s is not allowed here; allowed: %s", r.Method, rt.allow))
		return
	}
	if version, raw, ok := RequestedVersion(r); !ok {
		abandonBody(w, r)
		writeRESTError(w, 0, versionNotSupported(raw))
		return
	} else if version != a2a.Version10 {
		abandonBody(w, r)
		writeRESTError(w, 0, wrongFamily(r.Method+" "+r.URL.Path, a2a.Version10, version))
		return
	}
	ctx := r.Context()
	var body []byte
	if r.Method == http.MethodPost {
		if len(t.h.opts.Auth) > 0 && formContentType(r) {
			abandonBody(w, r)
			writeRESTError(w, http.StatusUnsupportedMediaType, a2a.ErrInvalidRequest.WithMessage("Content-Type must be application/json or application/a2a+json"))
			return
		}
		b, status, rerr := readBody(w, r, t.opts.MaxBodyBytes, t.opts.BodyReadTimeout)
		if rerr != nil {
			writeRESTError(w, status, rerr)
			return
		}
		body = b
	}
	switch rt.op {
	case Method10SendStreamingMessage, Method10SubscribeToTask:
		t.serveStream(ctx, w, r, rt, body)
		return
	}
	out, err := t.call(ctx, r, rt, body)
	if err != nil {
		writeRESTError(w, 0, t.wireError(err, rt.op))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	status := http.StatusOK
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// writeRESTError answers with e as a google.rpc.Status body (A2A 1.0
// §11.6), with HTTP status status, or, when status is 0, the one A2A 1.0
// §5.4 maps e's code to.
func writeRESTError(w http.ResponseWriter, status int, e *a2a.Error) {
	body, code := v10.AppendRESTError(nil, e)
	if status != 0 && status != code {
		// The body names the status the response has.
		if i := bytes.Index(body, []byte(`","message":`)); i > 0 {
			body = append([]byte(fmt.Sprintf(`{"error":{"code":%d,"status":"%s`, status, googleCode(status))), body[i:]...)
		}
		code = status
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// googleCode names the google.rpc.Code of an HTTP status the transport
// answers with itself (AIP-193's mapping).
func googleCode(status int) string {
	switch status {
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return "UNIMPLEMENTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusConflict:
		return "ABORTED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "INVALID_ARGUMENT"
}

// wireError maps an error to its protocol form; internal errors are logged
// and answered without their details.
func (t *restTransport) wireError(err error, op string) *a2a.Error {
	if ae, ok := err.(*a2a.Error); ok {
		return ae
	}
	rid := &requestID{}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.opts.Logger.Info("request ended before completion", "method", op, "binding", "HTTP+JSON", "request_id", rid.String(), "err", err)
	} else {
		t.opts.Logger.Error("internal error", "method", op, "binding", "HTTP+JSON", "request_id", rid.String(), "err", err)
	}
	return a2a.ErrInternal.WithData(map[string]any{"requestId": rid.String()})
}

// call answers one non-streaming operation with its response body.
func (t *restTransport) call(ctx context.Context, r *http.Request, rt restRoute, body []byte) ([]byte, error) {
	h := t.h
	q := r.URL.Query()
	switch rt.op {
	case Method10SendMessage:
		p, err := v10.DecodeRESTSendMessage(rt.tenant, body)
		if err != nil {
			return nil, err
		}
		task, err := h.SendMessage(ctx, pushIn10(p))
		if err != nil {
			return nil, err
		}
		return v10.AppendSendMessageResponse(nil, task)
	case Method10GetTask:
		p, err := v10.DecodeRESTGetTask(rt.tenant, rt.taskID, q)
		if err != nil {
			return nil, err
		}
		task, err := h.GetTask(ctx, p)
		if err != nil {
			return nil, err
		}
		return v10.AppendTask(nil, task)
	case Method10ListTasks:
		p, err := v10.DecodeRESTListTasks(rt.tenant, q)
		if err != nil {
			return nil, err
		}
		res, err := h.ListTasks(ctx, p)
		if err != nil {
			return nil, err
		}
		return v10.AppendListTasksResponse(nil, res, p.IncludeArtifacts)
	case Method10CancelTask:
		p, err := v10.DecodeRESTTaskAction(rt.tenant, rt.taskID, body)
		if err != nil {
			return nil, err
		}
		task, err := h.CancelTask(ctx, p)
		if err != nil {
			return nil, err
		}
		return v10.AppendTask(nil, task)
	case Method10CreatePushConfig:
		c, err := v10.DecodeRESTCreatePushConfig(rt.tenant, rt.taskID, body)
		if err != nil {
			return nil, err
		}
		c.PushNotificationConfig.ProtocolVersion = a2a.Version10
		out, err := h.CreateTaskPushNotificationConfig(ctx, c)
		if err != nil {
			return nil, err
		}
		return v10.AppendTaskPushNotificationConfig(nil, out)
	case Method10GetPushConfig:
		c, err := h.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigParams{Tenant: rt.tenant, ID: rt.taskID, PushNotificationConfigID: rt.config})
		if err != nil {
			return nil, pushConfigErr10(err)
		}
		return v10.AppendTaskPushNotificationConfig(nil, c)
	case Method10ListPushConfigs:
		cs, err := h.ListTaskPushNotificationConfigs(ctx, a2a.TaskIDParams{Tenant: rt.tenant, ID: rt.taskID})
		if err != nil {
			return nil, err
		}
		return v10.AppendListTaskPushNotificationConfigsResponse(nil, cs, "")
	case Method10DeletePushConfig:
		if err := h.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigParams{Tenant: rt.tenant, ID: rt.taskID, PushNotificationConfigID: rt.config}); err != nil {
			return nil, pushConfigErr10(err)
		}
		return []byte("{}"), nil
	case Method10GetExtendedCard:
		if t.cardURL != nil {
			ctx = context.WithValue(ctx, cardURLKey{}, t.cardURL(r))
		}
		c, err := h.GetExtendedAgentCard(ctx)
		if err != nil {
			return nil, err
		}
		b, err := v10.MarshalAgentCard(c, v10.CardOptions{})
		return t.opts.signCard(ctx, h.Name(), b, err)
	}
	return nil, a2a.ErrUnsupportedOperation
}

// serveStream answers message:stream and tasks/{id}:subscribe with SSE
// frames whose data is a StreamResponse (A2A 1.0 §11.7). A request error
// is a google.rpc.Status response with its HTTP status, or, when the
// client accepts only text/event-stream, the stream's one event.
func (t *restTransport) serveStream(ctx context.Context, w http.ResponseWriter, r *http.Request, rt restRoute, body []byte) {
	ctx, cancel, detach := streamContext(ctx, r, t.opts)
	streaming := false
	defer func() {
		if !streaming {
			detach()
			cancel()
		}
	}()
	var events iter.Seq2[StreamEvent, error]
	var err error
	takeover := false
	switch rt.op {
	case Method10SendStreamingMessage:
		var p a2a.MessageSendParams
		if p, err = v10.DecodeRESTSendMessage(rt.tenant, body); err == nil {
			events, err = t.h.SendStreamingMessage(ctx, pushIn10(p))
		}
	case Method10SubscribeToTask:
		var from *int64
		if from, err = lastEventID(r); err == nil {
			takeover = true
			events, err = t.h.subscribe(ctx, a2a.TaskIDParams{Tenant: rt.tenant, ID: rt.taskID}, from, true)
		}
	}
	if err != nil {
		e := t.wireError(err, rt.op)
		// Before the first event: a non-2xx google.rpc.Status, which both
		// official 1.x clients read (interop/V1_WIRE_NOTES.md §1.7).
		writeRESTError(w, 0, e)
		return
	}
	streaming = true
	logger := t.opts.Logger
	// An error after the first event is an "error" event holding the
	// google.rpc.Status (interop/V1_WIRE_NOTES.md §1.7).
	writeSSE(ctx, cancel, detach, w, r, events, t.opts, takeover, v10.AppendStreamResponse, "error", func(err error) []byte {
		var e *a2a.Error
		if !errors.As(err, &e) {
			logger.Error("stream", "method", rt.op, "binding", "HTTP+JSON", "err", err)
			e = a2a.ErrInternal
		}
		b, _ := v10.AppendRESTError(nil, e)
		return b
	})
}
