package server

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
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

// serveREST answers one REST request whose path below the agent's URL is
// rest (escaped, without the leading slash). found is false when the path
// names no REST route: the caller answers 404.
func (t *restTransport) serveREST(w http.ResponseWriter, r *http.Request, rest string) (found bool) {
	rt, ok := parseRESTPath(r.Method, rest)
	if !ok {
		return false
	}
	if rt.op == "" {
		abandonBody(w, r)
		w.Header().Set("Allow", rt.allow)
		v10.WriteRESTError(w, http.StatusMethodNotAllowed, a2a.ErrUnsupportedOperation.WithMessage("%s is not allowed here; allowed: %s", r.Method, rt.allow))
		return true
	}
	if version, raw, ok := RequestedVersion(r); !ok {
		abandonBody(w, r)
		v10.WriteRESTError(w, 0, versionNotSupported(raw))
		return true
	} else if version != a2a.Version10 {
		abandonBody(w, r)
		v10.WriteRESTError(w, 0, wrongFamily(r.Method+" "+r.URL.Path, a2a.Version10, version))
		return true
	}
	ctx := r.Context()
	var body []byte
	if r.Method == http.MethodPost {
		if len(t.h.opts.Auth) > 0 && formContentType(r) {
			abandonBody(w, r)
			v10.WriteRESTError(w, http.StatusUnsupportedMediaType, a2a.ErrInvalidRequest.WithMessage("Content-Type must be application/json or application/a2a+json"))
			return true
		}
		b, status, rerr := readBody(w, r, t.opts.MaxBodyBytes, t.opts.BodyReadTimeout)
		if rerr != nil {
			v10.WriteRESTError(w, status, rerr)
			return true
		}
		body = b
	}
	switch rt.op {
	case Method10SendStreamingMessage, Method10SubscribeToTask:
		t.serveStream(ctx, w, r, rt, body)
		return true
	}
	out, err := t.call(ctx, r, rt, body)
	if err != nil {
		v10.WriteRESTError(w, 0, t.wireError(err, rt.op))
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	status := http.StatusOK
	_ = status
	w.WriteHeader(status)
	_, _ = w.Write(out)
	return true
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
		p, err := v10.DecodeSendMessageRequest(body)
		if err != nil {
			return nil, err
		}
		if p.Tenant == "" {
			p.Tenant = rt.tenant
		}
		task, err := h.SendMessage(ctx, p)
		if err != nil {
			return nil, err
		}
		return v10.AppendSendMessageResponse(nil, task)
	case Method10GetTask:
		p, err := v10.DecodeGetTaskQuery(rt.taskID, q)
		if err != nil {
			return nil, err
		}
		p.Tenant = rt.tenant
		task, err := h.GetTask(ctx, p)
		if err != nil {
			return nil, err
		}
		return v10.AppendTask(nil, task)
	case Method10ListTasks:
		p, err := v10.DecodeListTasksQuery(q)
		if err != nil {
			return nil, err
		}
		p.Tenant = rt.tenant
		res, err := h.ListTasks(ctx, p)
		if err != nil {
			return nil, err
		}
		return v10.AppendListTasksResponse(nil, res, p.IncludeArtifacts)
	case Method10CancelTask:
		p, err := v10.DecodeCancelTaskBody(rt.taskID, body)
		if err != nil {
			return nil, err
		}
		p.Tenant = rt.tenant
		task, err := h.CancelTask(ctx, p)
		if err != nil {
			return nil, err
		}
		return v10.AppendTask(nil, task)
	case Method10CreatePushConfig:
		c, err := v10.DecodeTaskPushNotificationConfig(body)
		if err != nil {
			return nil, err
		}
		if c.TaskID != "" && c.TaskID != rt.taskID {
			return nil, a2a.InvalidParams("/taskId", fmt.Sprintf("taskId %q is not the task of the path (%q)", c.TaskID, rt.taskID))
		}
		c.TaskID, c.Tenant = rt.taskID, rt.tenant
		out, err := h.CreateTaskPushNotificationConfig(ctx, c)
		if err != nil {
			return nil, err
		}
		return v10.AppendTaskPushNotificationConfig(nil, out)
	case Method10GetPushConfig:
		c, err := h.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigParams{Tenant: rt.tenant, ID: rt.taskID, PushNotificationConfigID: rt.config})
		if err != nil {
			return nil, err
		}
		return v10.AppendTaskPushNotificationConfig(nil, c)
	case Method10ListPushConfigs:
		cs, err := h.ListTaskPushNotificationConfigs(ctx, a2a.TaskIDParams{Tenant: rt.tenant, ID: rt.taskID})
		if err != nil {
			return nil, err
		}
		return v10.AppendListTaskPushNotificationConfigsResponse(nil, cs)
	case Method10DeletePushConfig:
		if err := h.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigParams{Tenant: rt.tenant, ID: rt.taskID, PushNotificationConfigID: rt.config}); err != nil {
			return nil, err
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
		return v10.AppendAgentCard(nil, c)
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
		if p, err = v10.DecodeSendMessageRequest(body); err == nil {
			if p.Tenant == "" {
				p.Tenant = rt.tenant
			}
			events, err = t.h.SendStreamingMessage(ctx, p)
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
		if acceptsOnlySSE(r) {
			v10.WriteRESTErrorEvent(w, e)
			return
		}
		v10.WriteRESTError(w, 0, e)
		return
	}
	streaming = true
	logger := t.opts.Logger
	writeSSE(ctx, cancel, detach, w, r, events, t.opts, takeover, v10.AppendStreamResponse, func(err error) []byte {
		var e *a2a.Error
		if !errors.As(err, &e) {
			logger.Error("stream", "method", rt.op, "binding", "HTTP+JSON", "err", err)
			e = a2a.ErrInternal
		}
		return v10.AppendRESTError(nil, e)
	})
}
