package jsonrpc

import (
	"bytes"
	"cmp"
	"context"
	"net/http"
	"sync"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/internal/binding/edge"
	"github.com/a2abridge/a2abridge/internal/sse"

	"github.com/a2abridge/a2abridge/internal/extension"

	"github.com/a2abridge/a2abridge/a2a"
	rpc "github.com/a2abridge/a2abridge/internal/jsonrpc"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// maxBatchConcurrency bounds how many members of one batch run at once.
const maxBatchConcurrency = 8

// New returns the JSON-RPC 2.0 binding of agent a (A2A 0.3.0 §3.2.1, §7;
// A2A 1.0 §9): POST a request object or a batch array; answers are HTTP
// 200 application/json, or text/event-stream for the streaming methods;
// other HTTP methods get 405. The method names which version a request
// speaks, and the A2A-Version it names must be that one. methods are the
// agent's JSON-RPC methods of its own, served beside the A2A methods
// (their names never an A2A method's). place, if not nil, gives the
// agent's URL as the client reached it, for the extended card; unknown
// answers a message to a retired agent (Agent.Retired). Authentication
// and telemetry wrap the binding; they are not its job.
func New(a *edge.Agent, methods map[string]Method, opts edge.Options, place edge.CardPlace, unknown http.HandlerFunc) http.Handler {
	return &jsonrpcTransport{a: a, methods: methods, opts: opts, place: place, unknown: unknown}
}

type jsonrpcTransport struct {
	a       *edge.Agent // the agent served
	methods map[string]Method
	opts    edge.Options
	place   edge.CardPlace
	// unknown answers a message to a retired agent.
	unknown http.HandlerFunc
}

// ownMethod returns the Method of one's own named method, or nil.
func (t *jsonrpcTransport) ownMethod(method string) Method {
	if len(t.methods) == 0 {
		return nil
	}
	return t.methods[method]
}

// signCard signs an extended card's JSON, when the agent's cards are
// signed; it passes an error on.
func (t *jsonrpcTransport) signCard(ctx context.Context, card []byte, err error) ([]byte, error) {
	if err != nil || t.a.SignCard == nil {
		return card, err
	}
	return t.a.SignCard(ctx, card)
}

// sendsMessage reports whether a request of items sends a message
// (SendMessage or SendStreamingMessage, either version).
func sendsMessage(items []rpc.Item) bool {
	for i := range items {
		switch items[i].Method {
		case binding.MethodSendMessage, binding.MethodSendStreamingMessage, binding.Method10SendMessage, binding.Method10SendStreamingMessage:
			return true
		}
	}
	return false
}

func (t *jsonrpcTransport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rid := &edge.RequestID{}
	if r.Method != http.MethodPost {
		edge.AbandonBody(w, r)
		w.Header().Set("Allow", http.MethodPost)
		e := a2a.ErrInvalidRequest.WithMessage("A2A JSON-RPC requests must use POST")
		edge.NoteError(r.Context(), e)
		edge.WriteError(w, http.StatusMethodNotAllowed, e)
		return
	}
	if t.a.Auth && edge.FormContentType(r) {
		// A browser can send these cross-site with the user's cookies
		// (an API key in a cookie): refuse them on authenticated agents.
		edge.AbandonBody(w, r)
		e := a2a.ErrInvalidRequest.WithMessage("Content-Type must be application/json")
		edge.NoteError(r.Context(), e)
		edge.WriteError(w, http.StatusUnsupportedMediaType, e)
		return
	}
	body, status, rerr := edge.ReadBody(w, r, t.opts.MaxBodyBytes, t.opts.BodyReadTimeout)
	if rerr != nil {
		edge.NoteError(r.Context(), rerr)
		edge.WriteError(w, status, rerr) // the connection closes after it (edge.AbandonBody)
		return
	}
	items, batch := rpc.ParseBody(body, t.opts.MaxBatch)
	if t.a.Retired && sendsMessage(items) {
		t.unknown(w, r)
		return
	}
	version, raw, ok := edge.RequestedVersion(r)
	var verr *a2a.Error
	if !ok {
		verr = edge.VersionNotSupported(raw, t.opts.ProtocolVersions)
	} else if !t.opts.Serves(version) {
		verr = t.opts.VersionRefused(version, raw)
	}
	ctx, ec, xerr := extension.FromRequest(r.Context(), r)
	for i := range items {
		it := &items[i]
		f := methodVersion(it.Method)
		switch {
		case it.Err != nil:
			// A body that did not parse keeps its own error.
		case xerr != nil:
			it.Err = xerr
		case t.ownMethod(it.Method) != nil:
			// Methods are not A2A methods.
		case f != "" && !t.opts.Serves(f):
			it.Err = t.opts.MethodRefused(it.Method, f)
		case verr != nil:
			// Every request of the body is answered with the error.
			it.Err = verr
		case f != "" && f != version:
			it.Err = edge.WrongFamily(it.Method, f, version)
		}
	}
	if t.a.Begin != nil {
		t.noteMethod(ctx, items, batch)
		method, params := "", []byte(nil)
		if !batch && items[0].Err == nil {
			method, params = items[0].Method, items[0].Params
		}
		ctx = t.a.Begin(ctx, method, "", "", params)
	}
	if t.place != nil && (batch || items[0].Method == binding.MethodGetExtendedCard || items[0].Method == binding.Method10GetExtendedCard) {
		// The extended card's url, like the public card's, is the address
		// the client reached; worked out only for the request that needs it.
		ctx = t.place(ctx, r)
	}
	if !batch {
		it := &items[0]
		if it.Err == nil && streamingMethod(it.Method) {
			t.serveStream(ctx, w, r, &it.Request, rid, ec)
			return
		}
		if m := t.ownMethod(it.Method); it.Err == nil && m != nil {
			t.serveMethod(ctx, w, r, it, m, rid, ec, version)
			return
		}
		streamingMethod := streamingMethod(it.Method)
		if (it.Err != nil || !KnownMethod(it.Method)) && (edge.AcceptsOnlySSE(r) || streamingMethod && edge.AcceptsSSE(r)) {
			// A streaming client (a2a-go v2, @a2a-js/sdk) reads errors
			// only from inside an event stream, also for a method or a
			// version we do not serve: the error is the stream's one event.
			if sw, err := sse.NewWriter(w); err == nil {
				_ = sw.Event("", "", t.answer(nil, ctx, it, rid)) // answered once the stream is sure
				_ = sw.Close()
				return
			}
		}
		bp := edge.BufPool.Get().(*[]byte)
		out := t.answer((*bp)[:0], ctx, it, rid)
		if ec != nil {
			ec.WriteHeader(w, cmp.Or(methodVersion(it.Method), version))
		}
		edge.WriteJSON(w, http.StatusOK, out)
		if cap(out) <= 64<<10 { // do not pin large buffers in the pool
			*bp = out
			edge.BufPool.Put(bp)
		}
		return
	}
	outs := make([][]byte, len(items))
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxBatchConcurrency)
	for i := range items {
		it := &items[i]
		if it.Err == nil && streamingMethod(it.Method) {
			it.Err = a2a.ErrInvalidRequest.WithMessage("Invalid Request: streaming method %s cannot be used in a batch", it.Method)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() {
				if r := recover(); r != nil {
					t.opts.Logger.ErrorContext(ctx, "panic while answering a batch member", "method", it.Method, "request_id", rid.String(), "panic", r)
					data := map[string]any{"requestId": rid.String()}
					if id := edge.TraceID(ctx); id != "" {
						data["traceId"] = id
					}
					e := a2a.ErrInternal.WithData(data)
					edge.NoteError(ctx, e)
					outs[i] = rpc.AppendError(nil, it.ID, e)
				}
				<-sem
				wg.Done()
			}()
			outs[i] = t.answer(nil, ctx, it, rid)
		}()
	}
	wg.Wait()
	out := []byte{'['}
	for i, o := range outs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, o...)
	}
	ec.WriteHeader(w, version)
	edge.WriteJSON(w, http.StatusOK, append(out, ']'))
}

// noteMethod names the method of the request's telemetry Call: the
// method of a single request ("unknown" for a name that is neither an A2A
// method nor one of the agent's Methods: a client's arbitrary names do
// not become metric series), or "batch".
func (t *jsonrpcTransport) noteMethod(ctx context.Context, items []rpc.Item, batch bool) {
	c := telemetry.CallFrom(ctx)
	if batch {
		c.SetMethod("batch", "", false)
		return
	}
	m := items[0].Method
	v := methodVersion(m)
	if v == "" && t.ownMethod(m) == nil {
		m = "unknown"
	}
	c.SetMethod(m, v, streamingMethod(m))
}

// answer appends the response to one non-streaming request.
func (t *jsonrpcTransport) answer(dst []byte, ctx context.Context, it *rpc.Item, rid *edge.RequestID) []byte {
	if it.Err != nil {
		edge.NoteError(ctx, it.Err)
		return appendError(dst, it.ID, it.Method, it.Err)
	}
	n := len(dst)
	out, err := t.call(rpc.AppendResultHead(dst, it.ID), ctx, &it.Request)
	if err != nil {
		return appendError(out[:n], it.ID, it.Method, t.wireError(ctx, err, it.Method, rid))
	}
	return append(out, '}')
}

// call answers one non-streaming request, appending its result's JSON to
// dst: an A2A method through its entry in rpcMethods, else a Method of the
// agent's own (a batch member; HandlerOptions.Methods). On error, what it
// appended must be discarded.
func (t *jsonrpcTransport) call(dst []byte, ctx context.Context, req *rpc.Request) ([]byte, error) {
	if m := lookupMethod(req.Method); m != nil && m.call != nil {
		return m.call(t, dst, ctx, req.Params)
	}
	if m := t.ownMethod(req.Method); m != nil {
		return t.callMethod(dst, ctx, m, req)
	}
	return dst, a2a.ErrMethodNotFound.WithMessage("Method not found: %s", req.Method)
}

// appendError appends a JSON-RPC error response in the form of the
// method's protocol version: A2A 1.0 errors carry a google.rpc.ErrorInfo
// in data (A2A 1.0 §9.5); 0.3 errors, and those of a request whose
// method is unknown, are plain.
func appendError(dst []byte, id []byte, method string, e *a2a.Error) []byte {
	if methodVersion(method) == a2a.Version10 {
		return append(v10.AppendError(rpc.AppendErrorHead(dst, id), e), '}')
	}
	return rpc.AppendError(dst, id, e)
}

// wireError maps an error to its JSON-RPC form; internal errors are logged
// with the request id and answered without their details. The error is
// recorded on the request's telemetry Call.
func (t *jsonrpcTransport) wireError(ctx context.Context, err error, method string, rid *edge.RequestID) *a2a.Error {
	return edge.WireError(ctx, t.opts.Logger, err, method, "JSONRPC", rid)
}

// serveStream answers message/stream and tasks/resubscribe with SSE. A
// request error (bad params, unknown task, …) is one SSE event holding the
// JSON-RPC error response when the client accepts text/event-stream (as
// the official SDKs do), else a plain application/json error response.
func (t *jsonrpcTransport) serveStream(ctx context.Context, w http.ResponseWriter, r *http.Request, req *rpc.Request, rid *edge.RequestID, ec *extension.Call) {
	ctx, sc := edge.StreamContext(ctx, r, t.opts)
	defer sc.Release()
	m := lookupMethod(req.Method)
	events, err := m.open(t, ctx, r, req.Params)
	if err != nil {
		body := appendError(nil, req.ID, req.Method, t.wireError(ctx, err, req.Method, rid))
		if edge.AcceptsSSE(r) {
			// Streaming clients (a2a-go, @a2a-js/sdk) read errors only from
			// inside the event stream: send the error as its one event.
			if edge.WriteEvent(w, body) {
				return
			}
		}
		edge.WriteJSON(w, http.StatusOK, body)
		return
	}
	// The stream may outlive this handler (edge.WriteSSE): keep a copy of the
	// id, not the request body it points into.
	id, method := bytes.Clone(req.ID), req.Method
	ec.WriteHeader(w, m.v.version)
	appendEvent := m.v.streamEvent
	edge.WriteSSE(ctx, sc.Hand(), w, r, events, t.opts, m.subscribe, func(dst []byte, ev a2a.Event) ([]byte, error) {
		n := len(dst)
		dst, err := appendEvent(rpc.AppendResultHead(dst, id), ev)
		if err != nil {
			return dst[:n], err
		}
		return append(dst, '}'), nil
	}, "", func(err error) []byte {
		return appendError(nil, id, method, t.wireError(ctx, err, method, rid))
	})
}
