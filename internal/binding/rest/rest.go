package rest

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
	"time"

	"github.com/a2abridge/a2abridge/internal/binding/edge"

	"github.com/a2abridge/a2abridge/internal/extension"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// Binding serves an HTTP+JSON binding: A2A 1.0's (§11), or, made for
// a2a.Version03, A2A 0.3.0's below /v1 with the same routes (rest03.go).
// The 1.0 binding serves, below an
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
type Binding struct {
	a     *edge.Agent // the agent served
	opts  edge.Options
	place edge.CardPlace
	codec *restCodec
	// caching and cardModified are the HTTP caching of the extended card
	// (edge.WriteCard): its Cache-Control and Vary, and its Last-Modified.
	caching      edge.CardCaching
	cardModified time.Time
}

// New returns the HTTP+JSON binding of agent a for A2A version (a2a.Version10,
// §11; a2a.Version03, the 0.3 binding below /v1). place, if not nil,
// gives the agent's URL as the client reached it, for the extended card,
// which is served with caching and last-modified time cardModified.
// Authentication, telemetry and the answer of a retired agent wrap the
// binding: the caller routes a request (Route), then calls Serve.
func New(a *edge.Agent, version string, opts edge.Options, place edge.CardPlace, caching edge.CardCaching, cardModified time.Time) *Binding {
	t := &Binding{a: a, opts: opts, place: place, codec: &restCodec10, caching: caching, cardModified: cardModified}
	if version == a2a.Version03 {
		t.codec = &restCodec03
	}
	return t
}

// Version is the A2A protocol version (Major.Minor) the binding speaks.
func (t *Binding) Version() string { return t.codec.version }

// Route routes the path below an agent's URL (escaped, without its
// leading slash) of a request of HTTP method to an operation of the
// binding; ok is false for a path that names no route (a 404). A path
// that names a route of other methods has Op "" (Serve answers 405).
func (t *Binding) Route(method, escaped string) (rt Route, ok bool) {
	if t.codec.version == a2a.Version03 {
		return parseREST03Path(method, escaped)
	}
	return parseRESTPath(method, escaped)
}

// restCodec is what differs between the HTTP+JSON bindings of A2A 1.0
// and 0.3 (rest03.go): the protocol version, the request decoders that
// read a body and the response encoders. Query parameters and paths read
// the same in both.
type restCodec struct {
	version     string
	sendMessage func(tenant string, body []byte) (a2a.SendMessageRequest, error)
	taskAction  func(tenant, id string, body []byte) (a2a.CancelTaskRequest, error)
	createPush  func(tenant, taskID string, body []byte) (a2a.TaskPushNotificationConfig, error)
	sendResult  func([]byte, a2a.Event) ([]byte, error)
	task        func([]byte, a2a.Event) ([]byte, error)
	listTasks   func([]byte, *a2a.ListTasksResponse, bool) ([]byte, error)
	pushConfig  func([]byte, *a2a.TaskPushNotificationConfig) ([]byte, error)
	pushConfigs func([]byte, []a2a.TaskPushNotificationConfig) ([]byte, error)
	card        func(*a2a.AgentCard) ([]byte, error)
	streamEvent func([]byte, a2a.Event) ([]byte, error)
	appendErr   func([]byte, *a2a.Error) ([]byte, int)
}

// restCodec10 is the codec of the HTTP+JSON binding of A2A 1.0 (§11).
var restCodec10 = restCodec{
	version: a2a.Version10,
	sendMessage: func(tenant string, body []byte) (a2a.SendMessageRequest, error) {
		p, err := v10.DecodeRESTSendMessage(tenant, body)
		return edge.PushIn10(p), err
	},
	taskAction: v10.DecodeRESTTaskAction,
	createPush: func(tenant, taskID string, body []byte) (a2a.TaskPushNotificationConfig, error) {
		c, err := v10.DecodeRESTCreatePushConfig(tenant, taskID, body)
		c.PushNotificationConfig.ProtocolVersion = a2a.Version10
		return c, err
	},
	sendResult: v10.AppendSendMessageResponse,
	task:       v10.AppendEvent,
	listTasks:  v10.AppendListTasksResponse,
	pushConfig: v10.AppendTaskPushNotificationConfig,
	pushConfigs: func(dst []byte, cs []a2a.TaskPushNotificationConfig) ([]byte, error) {
		return v10.AppendListTaskPushNotificationConfigsResponse(dst, cs, "")
	},
	card:        func(c *a2a.AgentCard) ([]byte, error) { return v10.AppendAgentCard(nil, c, v10.CardOptions{}) },
	streamEvent: v10.AppendStreamResponse,
	appendErr:   v10.AppendRESTError,
}

// WriteError answers with e in the binding's error form, with HTTP status
// status or, when 0, the one e's code maps to.
func (t *Binding) WriteError(w http.ResponseWriter, r *http.Request, status int, e *a2a.Error) {
	edge.NoteError(r.Context(), e)
	writeRESTErrorBody(w, status, e, t.codec.appendErr)
}

// Route is one parsed REST request path.
type Route struct {
	Tenant string
	Op     string // an A2A 1.0 operation name (edge.Method10…); "": the path allows other HTTP methods only
	TaskID string
	config string // push notification config id
	allow  string // the methods the path allows, for 405
}

// parseRESTPath routes the path below an agent's URL (escaped, without
// its leading slash) to an operation. A first segment that starts no
// route is a tenant. ok is false for a path that names no route; a path
// that names one with another HTTP method has Op "" and allow set.
func parseRESTPath(method, escaped string) (Route, bool) {
	segs, ok := pathSegments(escaped)
	if !ok {
		return Route{}, false
	}
	if rt, ok := routeSegments(method, segs); ok {
		return rt, true
	}
	if len(segs) > 1 && segs[0] != "" {
		if rt, ok := routeSegments(method, segs[1:]); ok {
			rt.Tenant = unescapeSegment(segs[0])
			return rt, true
		}
	}
	return Route{}, false
}

// pathSegments splits an escaped path at its slashes, keeping each
// segment escaped (so that an escaped colon in a task id is not taken for
// the ":cancel"/":subscribe" custom method); ok is false when a segment
// does not unescape.
func pathSegments(escaped string) ([]string, bool) {
	segs := strings.Split(escaped, "/")
	for _, s := range segs {
		if _, err := url.PathUnescape(s); err != nil {
			return nil, false
		}
	}
	return segs, true
}

// unescapeSegment is a segment of pathSegments unescaped (it was checked
// there).
func unescapeSegment(s string) string {
	u, _ := url.PathUnescape(s)
	return u
}

// allowRoute is the route of op on a path that allows the HTTP methods
// allowed ("GET, POST"): op when method is one of them (HEAD counts as
// GET), else no op (a 405).
func allowRoute(method, allowed, op string) Route {
	rt := Route{allow: allowed}
	for _, m := range strings.Split(allowed, ", ") {
		if m == method || (m == http.MethodGet && method == http.MethodHead) {
			rt.Op = op
		}
	}
	return rt
}

func routeSegments(method string, segs []string) (Route, bool) {
	one := func(allowed, op string) (Route, bool) { return allowRoute(method, allowed, op), true }
	switch {
	case len(segs) == 1 && segs[0] == "message:send":
		return one(http.MethodPost, binding.Method10SendMessage)
	case len(segs) == 1 && segs[0] == "message:stream":
		return one(http.MethodPost, binding.Method10SendStreamingMessage)
	case len(segs) == 1 && segs[0] == "extendedAgentCard":
		return one(http.MethodGet, binding.Method10GetExtendedCard)
	case len(segs) == 1 && segs[0] == "tasks":
		return one(http.MethodGet, binding.Method10ListTasks)
	case len(segs) >= 2 && segs[0] == "tasks" && segs[1] != "":
		id := segs[1] // escaped: a literal ':' starts a custom method
		switch len(segs) {
		case 2:
			if base, ok := strings.CutSuffix(id, ":cancel"); ok && base != "" {
				rt, _ := one(http.MethodPost, binding.Method10CancelTask)
				rt.TaskID = unescapeSegment(base)
				return rt, true
			}
			if base, ok := strings.CutSuffix(id, ":subscribe"); ok && base != "" {
				rt, _ := one(http.MethodGet+", "+http.MethodPost, binding.Method10SubscribeToTask)
				rt.TaskID = unescapeSegment(base)
				return rt, true
			}
			rt, _ := one(http.MethodGet, binding.Method10GetTask)
			rt.TaskID = unescapeSegment(id)
			return rt, true
		case 3:
			if segs[2] != "pushNotificationConfigs" {
				return Route{}, false
			}
			rt := Route{allow: "GET, POST", TaskID: unescapeSegment(id)}
			switch method {
			case http.MethodPost:
				rt.Op = binding.Method10CreatePushConfig
			case http.MethodGet, http.MethodHead:
				rt.Op = binding.Method10ListPushConfigs
			}
			return rt, true
		case 4:
			if segs[2] != "pushNotificationConfigs" || segs[3] == "" {
				return Route{}, false
			}
			rt := Route{allow: "GET, DELETE", TaskID: unescapeSegment(id), config: unescapeSegment(segs[3])}
			switch method {
			case http.MethodGet, http.MethodHead:
				rt.Op = binding.Method10GetPushConfig
			case http.MethodDelete:
				rt.Op = binding.Method10DeletePushConfig
			}
			return rt, true
		}
	}
	return Route{}, false
}

// Serve answers one request routed to rt (Route).
func (t *Binding) Serve(w http.ResponseWriter, r *http.Request, rt Route) {
	if rt.Op == "" {
		edge.AbandonBody(w, r)
		w.Header().Set("Allow", rt.allow)
		t.WriteError(w, r, http.StatusMethodNotAllowed, a2a.ErrUnsupportedOperation.WithMessage("%s is not allowed here; allowed: %s", r.Method, rt.allow))
		return
	}
	if version, raw, ok := edge.RequestedVersion(r); !ok {
		edge.AbandonBody(w, r)
		t.WriteError(w, r, 0, edge.VersionNotSupported(raw, t.opts.ProtocolVersions))
		return
	} else if !t.opts.Serves(t.codec.version) {
		edge.AbandonBody(w, r)
		t.WriteError(w, r, 0, t.opts.MethodRefused(r.Method+" "+edge.PrintableASCII(r.URL.Path, 200), t.codec.version))
		return
	} else if !t.opts.Serves(version) {
		edge.AbandonBody(w, r)
		t.WriteError(w, r, 0, t.opts.VersionRefused(version, raw))
		return
	} else if version != t.codec.version {
		edge.AbandonBody(w, r)
		t.WriteError(w, r, 0, edge.WrongFamily(r.Method+" "+r.URL.Path, t.codec.version, version))
		return
	}
	ctx, ec, xerr := extension.FromRequest(r.Context(), r)
	if xerr != nil {
		edge.AbandonBody(w, r)
		t.WriteError(w, r, 0, xerr)
		return
	}
	var body []byte
	if r.Method == http.MethodPost {
		if t.a.Auth && edge.FormContentType(r) {
			edge.AbandonBody(w, r)
			t.WriteError(w, r, http.StatusUnsupportedMediaType, a2a.ErrInvalidRequest.WithMessage("Content-Type must be application/json or application/a2a+json"))
			return
		}
		b, status, rerr := edge.ReadBody(w, r, t.opts.MaxBodyBytes, t.opts.BodyReadTimeout)
		if rerr != nil {
			if status == http.StatusOK {
				status = 0 // JSON-RPC's 200; here, the status of the error's code
			}
			t.WriteError(w, r, status, rerr)
			return
		}
		body = b
	}
	if t.a.Begin != nil {
		taskID := ""
		if rt.Op == binding.Method10CancelTask || rt.Op == binding.Method10SubscribeToTask {
			taskID = rt.TaskID
		}
		ctx = t.a.Begin(ctx, rt.Op, rt.Tenant, taskID, body)
	}
	switch rt.Op {
	case binding.Method10SendStreamingMessage, binding.Method10SubscribeToTask:
		t.serveStream(ctx, w, r, rt, body, ec)
		return
	}
	out, err := t.call(ctx, r, rt, body)
	if err != nil {
		t.WriteError(w, r, 0, t.wireError(ctx, err, rt.Op))
		return
	}
	ec.WriteHeader(w, t.codec.version)
	if rt.Op == binding.Method10GetExtendedCard {
		// Cached like the public card (A2A 1.0 §8.6.1), privately: it is
		// for authenticated callers only.
		edge.WriteCard(w, r, out, t.cardModified, true, t.caching)
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
	writeRESTErrorBody(w, status, e, v10.AppendRESTError)
}

// writeRESTErrorBody answers with the error body appendErr makes of e,
// which starts with the google.rpc.Status of v10.AppendRESTError, with
// HTTP status status, or, when status is 0, the one appendErr returns.
func writeRESTErrorBody(w http.ResponseWriter, status int, e *a2a.Error, appendErr func([]byte, *a2a.Error) ([]byte, int)) {
	body, code := appendErr(nil, e)
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
func (t *Binding) wireError(ctx context.Context, err error, op string) *a2a.Error {
	return edge.WireError(ctx, t.opts.Logger, err, op, "HTTP+JSON", &edge.RequestID{})
}

// call answers one non-streaming operation with its response body.
func (t *Binding) call(ctx context.Context, r *http.Request, rt Route, body []byte) ([]byte, error) {
	h, c := t.a, t.codec
	q := r.URL.Query()
	switch rt.Op {
	case binding.Method10SendMessage:
		p, err := c.sendMessage(rt.Tenant, body)
		if err != nil {
			return nil, err
		}
		res, err := h.SendMessage(ctx, p)
		if err != nil {
			return nil, err
		}
		return c.sendResult(nil, res)
	case binding.Method10GetTask:
		p, err := v10.DecodeRESTGetTask(rt.Tenant, rt.TaskID, q)
		if err != nil {
			return nil, err
		}
		task, err := h.GetTask(ctx, p)
		if err != nil {
			return nil, err
		}
		return c.task(nil, task)
	case binding.Method10ListTasks:
		p, err := v10.DecodeRESTListTasks(rt.Tenant, q)
		if err != nil {
			return nil, err
		}
		res, err := h.ListTasks(ctx, p)
		if err != nil {
			return nil, err
		}
		return c.listTasks(nil, res, p.IncludeArtifacts)
	case binding.Method10CancelTask:
		p, err := c.taskAction(rt.Tenant, rt.TaskID, body)
		if err != nil {
			return nil, err
		}
		task, err := h.CancelTask(ctx, p)
		if err != nil {
			return nil, err
		}
		return c.task(nil, task)
	case binding.Method10CreatePushConfig:
		pc, err := c.createPush(rt.Tenant, rt.TaskID, body)
		if err != nil {
			return nil, err
		}
		out, err := h.CreateTaskPushNotificationConfig(ctx, pc)
		if err != nil {
			return nil, err
		}
		return c.pushConfig(nil, out)
	case binding.Method10GetPushConfig:
		pc, err := h.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{Tenant: rt.Tenant, TaskID: rt.TaskID, ID: rt.config})
		if err != nil {
			return nil, edge.PushConfigErr10(err)
		}
		return c.pushConfig(nil, pc)
	case binding.Method10ListPushConfigs:
		cs, err := h.ListTaskPushNotificationConfigs(ctx, a2a.ListTaskPushNotificationConfigsRequest{Tenant: rt.Tenant, TaskID: rt.TaskID})
		if err != nil {
			return nil, err
		}
		return c.pushConfigs(nil, cs)
	case binding.Method10DeletePushConfig:
		if err := h.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigRequest{Tenant: rt.Tenant, TaskID: rt.TaskID, ID: rt.config}); err != nil {
			return nil, edge.PushConfigErr10(err)
		}
		return []byte("{}"), nil
	case binding.Method10GetExtendedCard:
		if t.place != nil {
			ctx = t.place(ctx, r)
		}
		card, err := h.GetExtendedAgentCard(ctx)
		if err != nil && c.version == a2a.Version03 {
			return nil, edge.ExtendedCardErr03(err)
		}
		if err != nil {
			return nil, err
		}
		encode := c.card
		if c.version == a2a.Version03 {
			encode = func(c *a2a.AgentCard) ([]byte, error) { return edge.MarshalCard03(c, t.a.SignCard != nil) } // the union card when signed, as over 0.3 JSON-RPC
		}
		b, err := encode(card)
		return t.signCard(ctx, b, err)
	}
	return nil, a2a.ErrUnsupportedOperation
}

// serveStream answers message:stream and tasks/{id}:subscribe with SSE
// frames whose data is a StreamResponse (A2A 1.0 §11.7). A request error
// is a google.rpc.Status response with its HTTP status, or, when the
// client accepts only text/event-stream, the stream's one event.
func (t *Binding) serveStream(ctx context.Context, w http.ResponseWriter, r *http.Request, rt Route, body []byte, ec *extension.Call) {
	ctx, sc := edge.StreamContext(ctx, r, t.opts)
	defer sc.Release()
	events, err := t.openStream(ctx, r, rt, body)
	if err != nil {
		e := t.wireError(ctx, err, rt.Op)
		// Before the first event: a non-2xx google.rpc.Status, which both
		// official 1.x clients read (interop/V1_WIRE_NOTES.md §1.7).
		t.WriteError(w, r, 0, e)
		return
	}
	ec.WriteHeader(w, t.codec.version)
	encode, appendErr := t.codec.streamEvent, t.codec.appendErr
	// An error after the first event is an "error" event holding the
	// google.rpc.Status (interop/V1_WIRE_NOTES.md §1.7).
	edge.WriteSSE(ctx, sc.Hand(), w, r, events, t.opts, rt.Op == binding.Method10SubscribeToTask, encode, "error", func(err error) []byte {
		var e *a2a.Error
		if !errors.As(err, &e) {
			e = t.wireError(ctx, err, rt.Op) // logged, recorded; answered as -32603
		} else {
			edge.NoteError(ctx, e)
		}
		b, _ := appendErr(nil, e)
		return b
	})
}

// openStream starts the events of message:stream or tasks/{id}:subscribe;
// a subscription resumes after the Last-Event-ID header's event.
func (t *Binding) openStream(ctx context.Context, r *http.Request, rt Route, body []byte) (iter.Seq2[binding.StreamEvent, error], error) {
	if rt.Op == binding.Method10SendStreamingMessage {
		p, err := t.codec.sendMessage(rt.Tenant, body)
		if err != nil {
			return nil, err
		}
		return t.a.SendStreamingMessage(ctx, p)
	}
	p, err := t.codec.taskAction(rt.Tenant, rt.TaskID, body)
	if err != nil {
		return nil, err
	}
	from, err := edge.LastEventID(r)
	if err != nil {
		return nil, err
	}
	// A2A 1.0 refuses to subscribe to a task in a terminal state and
	// follows an interrupted one until it is terminal (§3.1.6); 0.3
	// replays a terminal task and ends at an interrupted state (final:
	// true), as tasks/resubscribe does.
	return t.a.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest(p), binding.SubscribeOptions{From: from, EndOnInterrupt: t.codec.version != a2a.Version10})
}

// signCard signs an extended card's JSON, when the agent's cards are
// signed; it passes an error on.
func (t *Binding) signCard(ctx context.Context, card []byte, err error) ([]byte, error) {
	if err != nil || t.a.SignCard == nil {
		return card, err
	}
	return t.a.SignCard(ctx, card)
}
