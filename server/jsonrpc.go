package server

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2abridge/a2abridge/internal/extension"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/jsonrpc"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// A2A 0.3.0 JSON-RPC method names (§7).
const (
	MethodSendMessage          = "message/send"
	MethodSendStreamingMessage = "message/stream"
	MethodGetTask              = "tasks/get"
	MethodCancelTask           = "tasks/cancel"
	MethodResubscribe          = "tasks/resubscribe"
	MethodSetPushConfig        = "tasks/pushNotificationConfig/set"
	MethodGetPushConfig        = "tasks/pushNotificationConfig/get"
	MethodListPushConfig       = "tasks/pushNotificationConfig/list"
	MethodDeletePushConfig     = "tasks/pushNotificationConfig/delete"
	MethodGetExtendedCard      = "agent/getAuthenticatedExtendedCard"
)

// A2A 1.0 JSON-RPC method names (A2A 1.0 §9.4). They never collide with
// the 0.3 names: a request is dispatched by its method, and the
// A2A-Version it names must be the method's.
const (
	Method10SendMessage          = "SendMessage"
	Method10SendStreamingMessage = "SendStreamingMessage"
	Method10GetTask              = "GetTask"
	Method10ListTasks            = "ListTasks"
	Method10CancelTask           = "CancelTask"
	Method10SubscribeToTask      = "SubscribeToTask"
	Method10CreatePushConfig     = "CreateTaskPushNotificationConfig"
	Method10GetPushConfig        = "GetTaskPushNotificationConfig"
	Method10ListPushConfigs      = "ListTaskPushNotificationConfigs"
	Method10DeletePushConfig     = "DeleteTaskPushNotificationConfig"
	Method10GetExtendedCard      = "GetExtendedAgentCard"
)

// DefaultMaxBodyBytes is the default request body limit: 10 MiB.
const DefaultMaxBodyBytes = 10 << 20

// DefaultMaxBatch is the default limit on the members of one JSON-RPC
// batch request (JSON-RPC 2.0 §6): 100.
const DefaultMaxBatch = 100

// DefaultBodyReadTimeout is the default time a client has to send a
// request body once its headers have arrived: 30 s.
const DefaultBodyReadTimeout = 30 * time.Second

// maxBatchConcurrency bounds how many members of one batch run at once.
const maxBatchConcurrency = 8

// maxInitialBody caps the buffer allocated for a request body before any
// of it has arrived, whatever its Content-Length says: 64 KiB. The buffer
// grows as data arrives.
const maxInitialBody = 64 << 10

// DefaultStreamWriteTimeout is how long one SSE write may block on a client
// that does not read before the stream is abandoned.
const DefaultStreamWriteTimeout = 30 * time.Second

// DefaultKeepAlive is the default interval of SSE keep-alive comments.
const DefaultKeepAlive = 15 * time.Second

// TransportOptions configure the HTTP transports. The zero value is ready to use.
type TransportOptions struct {
	// MaxBodyBytes limits a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxBatch limits the members of one JSON-RPC batch (JSON-RPC 2.0 §6);
	// < 1 means DefaultMaxBatch. A larger batch is answered with one
	// -32600 error object (id null) naming its size and the limit, and
	// none of its members runs: one request starts at most MaxBatch
	// calls (tasks).
	MaxBatch int
	// BodyReadTimeout bounds the time to receive a request body, from
	// when the transport starts reading it; 0 means
	// DefaultBodyReadTimeout, negative disables it. A body that takes
	// longer is answered with HTTP 408 and a -32600 error, and the
	// connection is closed. It is the connection's read deadline
	// (http.ResponseController.SetReadDeadline) while the body is read,
	// cleared once the body is in, so it never cuts a long response such
	// as an SSE stream; where the ResponseWriter cannot set deadlines the
	// body is read without one. Whenever a request is refused before its
	// body is read in full (wrong method, body over MaxBodyBytes, a
	// timeout), the connection is closed without reading the rest.
	BodyReadTimeout time.Duration
	// KeepAlive is the interval of SSE keep-alive comments; 0 means
	// DefaultKeepAlive, negative disables them.
	KeepAlive time.Duration
	// StreamWriteTimeout bounds each SSE write (a client that stops
	// reading loses its stream, the task goes on); 0 means
	// DefaultStreamWriteTimeout.
	StreamWriteTimeout time.Duration
	// Logger receives structured logs; nil means slog.Default().
	Logger *slog.Logger
	// CardSigner, if set, signs every Agent Card served (A2A 1.0 §8.4):
	// the extended card these transports answer and, in a Host, the
	// public card. nil: cards are served as they are.
	CardSigner *CardSigner
	// ProtocolVersions are the A2A protocol versions served, as
	// Major.Minor (a2a.Version10, a2a.Version03; a patch number is
	// ignored); nil or empty: both (ServedVersions). A request of a version
	// left out (its JSON-RPC method names, the A2A-Version it names, or,
	// naming none, 0.3; the /v1/… HTTP+JSON paths of 0.3) is answered
	// with VersionNotSupportedError (-32009; HTTP 400 with the ErrorInfo
	// reason VERSION_NOT_SUPPORTED in 1.0's form) naming the versions
	// served (A2A 1.0 §3.6.2). A Host's cards then list only the served
	// versions' interfaces: with 1.0 alone, the card is the A2A 1.0
	// AgentCard only (ProtoJSON, none of 0.3's members); with 0.3 alone,
	// the A2A 0.3 card only (no supportedInterfaces). A value other than
	// 1.0 or 0.3 makes the transports and NewHost panic: check it first
	// with Validate.
	ProtocolVersions []string
}

// Validate reports a ProtocolVersions value that is not an A2A version
// the transports serve (1.0 or 0.3).
func (o TransportOptions) Validate() error {
	_, err := servedVersions(o.ProtocolVersions)
	return err
}

// servedVersions normalizes ProtocolVersions: Major.Minor, in
// ServedVersions' order, each once; nil or empty is ServedVersions.
func servedVersions(vs []string) ([]string, error) {
	if len(vs) == 0 {
		return ServedVersions, nil
	}
	var out []string
	for _, v := range vs {
		mm, ok := majorMinor(strings.TrimSpace(v))
		if !ok || !slices.Contains(ServedVersions, mm) {
			return nil, fmt.Errorf("protocol version %q: want %s", v, strings.Join(ServedVersions, " or "))
		}
	}
	for _, s := range ServedVersions {
		if slices.ContainsFunc(vs, func(v string) bool { mm, _ := majorMinor(strings.TrimSpace(v)); return mm == s }) {
			out = append(out, s)
		}
	}
	return out, nil
}

// serves reports whether the transports serve A2A version v (Major.Minor).
func (o TransportOptions) serves(v string) bool { return slices.Contains(o.ProtocolVersions, v) }

// versionRefused is the VersionNotSupportedError (-32009) of a request
// that asked for version (Major.Minor; raw, its A2A-Version value, ""
// when it named none) when that version is not among those served.
func (o TransportOptions) versionRefused(version, raw string) *a2a.Error {
	asked := fmt.Sprintf("A2A-Version %q", printableASCII(raw, 32))
	if raw == "" {
		asked = "A request without A2A-Version (A2A 0.3)"
	}
	return a2a.ErrVersionNotSupported.WithMessage("%s is not served by this agent; it serves A2A %s%s",
		asked, strings.Join(o.ProtocolVersions, ", "), versionHint(o.ProtocolVersions)).
		WithData(map[string]any{"requestedVersion": version, "supportedVersions": o.ProtocolVersions})
}

// methodRefused is the VersionNotSupportedError (-32009) of a method of
// protocol version family when that version is not served.
func (o TransportOptions) methodRefused(method, family string) *a2a.Error {
	return a2a.ErrVersionNotSupported.WithMessage("Method %s is A2A %s, which this agent does not serve; it serves A2A %s%s",
		method, family, strings.Join(o.ProtocolVersions, ", "), versionHint(o.ProtocolVersions)).
		WithData(map[string]any{"requestedVersion": family, "supportedVersions": o.ProtocolVersions})
}

// versionHint tells a client how to ask for the one version served.
func versionHint(served []string) string {
	if len(served) == 1 && served[0] == a2a.Version10 {
		return " (send the header A2A-Version: 1.0 and the A2A 1.0 method names or paths)"
	}
	if len(served) == 1 {
		return " (send no A2A-Version header, or A2A-Version: " + served[0] + ")"
	}
	return ""
}

func (o TransportOptions) withDefaults() TransportOptions {
	if o.StreamWriteTimeout <= 0 {
		o.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxBatch < 1 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.BodyReadTimeout == 0 {
		o.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	vs, err := servedVersions(o.ProtocolVersions)
	if err != nil {
		panic("server: TransportOptions.ProtocolVersions: " + err.Error())
	}
	o.ProtocolVersions = vs
	return o
}

// NewJSONRPCHandler returns the A2A 0.3.0 JSON-RPC 2.0 transport for h
// (A2A 0.3.0 §3.2.1, §7): POST a request object or a batch array; answers
// are HTTP 200 application/json, or text/event-stream for message/stream
// and tasks/resubscribe (§3.3); other HTTP methods get 405. tasks/resubscribe honours the Last-Event-ID
// header. Mount it where the agent card's url points.
func NewJSONRPCHandler(h *AgentHandler, opts TransportOptions) http.Handler {
	return newJSONRPCHandler(h, opts, nil, nil)
}

// newJSONRPCHandler is NewJSONRPCHandler with the function that gives the
// agent's reachable URL for agent/getAuthenticatedExtendedCard (nil: the
// card's own url) and the one that answers a message to a retired agent
// (nil: retiredAgent).
func newJSONRPCHandler(h *AgentHandler, opts TransportOptions, cardURL func(*http.Request) string, unknown func(http.ResponseWriter, *http.Request)) http.Handler {
	opts = opts.withDefaults()
	if unknown == nil {
		unknown = func(w http.ResponseWriter, r *http.Request) { retiredAgent(w, r, h.Name()) }
	}
	return instrument(h, "JSONRPC", authenticateReq(h, opts.Logger, &jsonrpcTransport{a: h.bound(), opts: opts, cardURL: cardURL, unknown: unknown}, writeErrorReq))
}

type jsonrpcTransport struct {
	a       *boundAgent // the agent served
	opts    TransportOptions
	cardURL func(*http.Request) string
	// unknown answers a message to a retired agent (HandlerOptions.Retired).
	unknown func(http.ResponseWriter, *http.Request)
}

// sendsMessage reports whether a request of items sends a message
// (SendMessage or SendStreamingMessage, either version).
func sendsMessage(items []jsonrpc.Item) bool {
	for i := range items {
		switch items[i].Method {
		case MethodSendMessage, MethodSendStreamingMessage, Method10SendMessage, Method10SendStreamingMessage:
			return true
		}
	}
	return false
}

var (
	reqPrefix = func() string { var b [4]byte; _, _ = rand.Read(b[:]); return hex.EncodeToString(b[:]) }()
	reqSeq    atomic.Uint64
)

// requestID names one HTTP request in logs and in the data of internal
// errors; it is made only when needed (an error), not on the hot path.
type requestID struct{ id string }

func (r *requestID) String() string {
	if r.id == "" {
		r.id = reqPrefix + "-" + strconv.FormatUint(reqSeq.Add(1), 10)
	}
	return r.id
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

var jsonContentType = []string{"application/json"}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType // shared, never modified: saves an allocation per answer
	if len(body) > 2048 {
		// Smaller bodies get their Content-Length from net/http itself.
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// WriteError answers an HTTP request with a JSON-RPC error response (id
// null) and the given HTTP status: for middleware (authentication, limits)
// that must answer in protocol form before a request is parsed.
func WriteError(w http.ResponseWriter, status int, e *a2a.Error) {
	writeJSON(w, status, jsonrpc.AppendError(nil, nil, e))
}

// readBody reads r's body: at most limit bytes, within timeout when it is
// positive. It returns the body, or the HTTP status and the error to answer
// with: 200 and -32600 for a body over the limit, 408 and -32600 for one
// that did not arrive in time, 200 and -32600 for one that could not be
// read. After a body read in full, the connection's read deadline is
// cleared (the response may be a long SSE stream); after a failure the
// rest of the body is abandoned (abandonBody).
func readBody(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration) ([]byte, int, *a2a.Error) {
	if r.ContentLength > limit {
		abandonBody(w, r)
		return nil, http.StatusOK, a2a.ErrInvalidRequest.WithMessage("Request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, limit)
	}
	rc := http.NewResponseController(w)
	deadline := timeout > 0 && r.ContentLength != 0 && rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	b, err := readAll(r.Body, r.ContentLength, limit)
	if err == nil {
		if deadline {
			// net/http clears it too once an HTTP/1.1 body hits its end;
			// this also covers HTTP/2 streams.
			_ = rc.SetReadDeadline(time.Time{})
		}
		return b, 0, nil
	}
	abandonBody(w, r)
	switch {
	case errors.Is(err, errBodyTooLarge):
		return nil, http.StatusOK, a2a.ErrInvalidRequest.WithMessage("Request body exceeds the limit of %d bytes", limit)
	case isTimeout(err):
		return nil, http.StatusRequestTimeout, a2a.ErrInvalidRequest.WithMessage("Request body not received within %s", timeout)
	}
	return nil, http.StatusOK, a2a.ErrInvalidRequest.WithMessage("Could not read the request body")
}

// abandonBody gives up the unread rest of r's body before an error
// answer: the connection closes after the answer, and its read deadline is
// set to now, so that net/http does not first wait for up to 256 KiB more
// of the body (which it would read with no deadline) from a client that
// sends it slowly. Only HTTP/1.x: an HTTP/2 stream is reset on its own,
// and "Connection: close" there would end the whole connection (GOAWAY),
// with every other stream on it.
func abandonBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || r.ProtoMajor != 1 {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

var errBodyTooLarge = errors.New("request body too large")

// readAll reads rd to its end, at most limit bytes (more is
// errBodyTooLarge). The buffer starts at min(declared, 64 KiB) bytes (512
// when declared is unknown, < 0) and grows as data arrives, never beyond
// declared: a client that announces 10 MiB and sends a byte costs 64 KiB,
// not 10 MiB.
func readAll(rd io.Reader, declared, limit int64) ([]byte, error) {
	size := int64(512)
	if declared >= 0 {
		size = min(declared, maxInitialBody)
	}
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			if int64(len(b)) > limit {
				return nil, errBodyTooLarge
			}
			if declared >= 0 && int64(len(b)) >= declared {
				// All that was announced is here: expect the end without
				// growing for it. (net/http never reads past Content-Length;
				// another reader's extra bytes are taken as of unknown length.)
				var one [1]byte
				if _, err := io.ReadFull(rd, one[:]); err == io.EOF {
					return b, nil
				} else if err != nil {
					return nil, err
				}
				b, declared = append(b, one[0]), -1
				continue
			}
			grow := max(cap(b), 512)
			if declared >= 0 {
				grow = int(min(int64(grow), declared-int64(len(b))))
			}
			grow = int(min(int64(grow), limit+1-int64(len(b)))) // one byte past the limit tells it is exceeded
			nb := make([]byte, len(b), len(b)+grow)             // exactly: append's rounding would pass the limit
			copy(nb, b)
			b = nb
		}
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return nil, errBodyTooLarge
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// isTimeout reports a read that failed on its deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

func (t *jsonrpcTransport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rid := &requestID{}
	if r.Method != http.MethodPost {
		abandonBody(w, r)
		w.Header().Set("Allow", http.MethodPost)
		e := a2a.ErrInvalidRequest.WithMessage("A2A JSON-RPC requests must use POST")
		noteError(r.Context(), e)
		WriteError(w, http.StatusMethodNotAllowed, e)
		return
	}
	if t.a.auth && formContentType(r) {
		// A browser can send these cross-site with the user's cookies
		// (an API key in a cookie): refuse them on authenticated agents.
		abandonBody(w, r)
		e := a2a.ErrInvalidRequest.WithMessage("Content-Type must be application/json")
		noteError(r.Context(), e)
		WriteError(w, http.StatusUnsupportedMediaType, e)
		return
	}
	body, status, rerr := readBody(w, r, t.opts.MaxBodyBytes, t.opts.BodyReadTimeout)
	if rerr != nil {
		noteError(r.Context(), rerr)
		WriteError(w, status, rerr) // the connection closes after it (abandonBody)
		return
	}
	items, batch := jsonrpc.ParseBody(body, t.opts.MaxBatch)
	if t.a.retired && sendsMessage(items) {
		t.unknown(w, r)
		return
	}
	version, raw, ok := RequestedVersion(r)
	var verr *a2a.Error
	if !ok {
		verr = versionNotSupported(raw, t.opts.ProtocolVersions)
	} else if !t.opts.serves(version) {
		verr = t.opts.versionRefused(version, raw)
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
		case t.a.ownMethod(it.Method) != nil:
			// Methods are not A2A methods.
		case f != "" && !t.opts.serves(f):
			it.Err = t.opts.methodRefused(it.Method, f)
		case verr != nil:
			// Every request of the body is answered with the error.
			it.Err = verr
		case f != "" && f != version:
			it.Err = wrongFamily(it.Method, f, version)
		}
	}
	if t.a.begin != nil {
		t.noteMethod(ctx, items, batch)
		method, params := "", []byte(nil)
		if !batch && items[0].Err == nil {
			method, params = items[0].Method, items[0].Params
		}
		ctx = t.a.begin(ctx, method, "", "", params)
	}
	if t.cardURL != nil && (batch || items[0].Method == MethodGetExtendedCard || items[0].Method == Method10GetExtendedCard) {
		// The extended card's url, like the public card's, is the address
		// the client reached; worked out only for the request that needs it.
		ctx = context.WithValue(ctx, cardURLKey{}, t.cardURL(r))
		ctx = context.WithValue(ctx, servedKey{}, t.opts.ProtocolVersions)
	}
	if !batch {
		it := &items[0]
		if it.Err == nil && streamingMethod(it.Method) {
			t.serveStream(ctx, w, r, &it.Request, rid, ec)
			return
		}
		if m := t.a.ownMethod(it.Method); it.Err == nil && m != nil {
			t.serveMethod(ctx, w, r, it, m, rid, ec, version)
			return
		}
		streamingMethod := streamingMethod(it.Method)
		if (it.Err != nil || !knownMethod(it.Method)) && (acceptsOnlySSE(r) || streamingMethod && acceptsSSE(r)) {
			// A streaming client (a2a-go v2, @a2a-js/sdk) reads errors
			// only from inside an event stream, also for a method or a
			// version we do not serve: the error is the stream's one event.
			if sw, err := sse.NewWriter(w); err == nil {
				_ = sw.Event("", "", t.answer(nil, ctx, it, rid))
				_ = sw.Close()
				return
			}
		}
		bp := bufPool.Get().(*[]byte)
		out := t.answer((*bp)[:0], ctx, it, rid)
		if ec != nil {
			ec.WriteHeader(w, cmp.Or(methodVersion(it.Method), version))
		}
		writeJSON(w, http.StatusOK, out)
		if cap(out) <= 64<<10 { // do not pin large buffers in the pool
			*bp = out
			bufPool.Put(bp)
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
					if id := traceID(ctx); id != "" {
						data["traceId"] = id
					}
					e := a2a.ErrInternal.WithData(data)
					noteError(ctx, e)
					outs[i] = jsonrpc.AppendError(nil, it.ID, e)
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
	writeJSON(w, http.StatusOK, append(out, ']'))
}

// noteMethod names the method of the request's telemetry Call: the
// method of a single request ("unknown" for a name that is neither an A2A
// method nor one of the agent's Methods: a client's arbitrary names do
// not become metric series), or "batch".
func (t *jsonrpcTransport) noteMethod(ctx context.Context, items []jsonrpc.Item, batch bool) {
	c := telemetry.CallFrom(ctx)
	if batch {
		c.SetMethod("batch", "", false)
		return
	}
	m := items[0].Method
	v := methodVersion(m)
	if v == "" && t.a.ownMethod(m) == nil {
		m = "unknown"
	}
	c.SetMethod(m, v, streamingMethod(m))
}

// answer appends the response to one non-streaming request.
func (t *jsonrpcTransport) answer(dst []byte, ctx context.Context, it *jsonrpc.Item, rid *requestID) []byte {
	if it.Err != nil {
		noteError(ctx, it.Err)
		return appendError(dst, it.ID, it.Method, it.Err)
	}
	n := len(dst)
	out, err := t.call(jsonrpc.AppendResultHead(dst, it.ID), ctx, &it.Request)
	if err != nil {
		return appendError(out[:n], it.ID, it.Method, t.wireError(ctx, err, it.Method, rid))
	}
	return append(out, '}')
}

// call answers one non-streaming request, appending its result's JSON to
// dst: an A2A method through its entry in rpcMethods, else a Method of the
// agent's own (a batch member; HandlerOptions.Methods). On error, what it
// appended must be discarded.
func (t *jsonrpcTransport) call(dst []byte, ctx context.Context, req *jsonrpc.Request) ([]byte, error) {
	if m := lookupMethod(req.Method); m != nil && m.call != nil {
		return m.call(t, dst, ctx, req.Params)
	}
	if m := t.a.ownMethod(req.Method); m != nil {
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
		return append(v10.AppendError(jsonrpc.AppendErrorHead(dst, id), e), '}')
	}
	return jsonrpc.AppendError(dst, id, e)
}

// pushConfigErr10 is err as A2A 1.0 says it: a push notification config
// that does not exist is TaskNotFoundError (A2A 1.0 §3.1.8, §3.1.10),
// where 0.3 answers -32602.
func pushConfigErr10(err error) error {
	if ae, ok := err.(*a2a.Error); ok && ae.Code == a2a.CodeInvalidParams {
		if d, _ := ae.Data.(map[string]any); d != nil && d["field"] == pushConfigIDField {
			return a2a.ErrTaskNotFound.WithMessage("%s", strings.TrimPrefix(ae.Message, "Invalid parameters: "))
		}
	}
	return err
}

// extendedCardErr03 is err as A2A 0.3 says it: an agent without an
// extended card answers agent/getAuthenticatedExtendedCard with -32007
// (AuthenticatedExtendedCardNotConfiguredError), where 1.0 answers an
// undeclared one with UnsupportedOperationError (A2A 1.0 §3.3.4).
func extendedCardErr03(err error) error {
	if ae, ok := err.(*a2a.Error); ok && ae.Code == a2a.CodeUnsupportedOperation {
		return a2a.ErrAuthenticatedExtendedCardNotConfigured
	}
	return err
}

// pushIn10 marks the push notification config of a 1.0 SendMessage, if
// any, as a 1.0 config: its notifications take the 1.0 shape (A2A 1.0
// §4.3.3).
func pushIn10(p a2a.SendMessageRequest) a2a.SendMessageRequest {
	if p.Configuration != nil && p.Configuration.PushNotificationConfig != nil {
		c := *p.Configuration
		pc := *c.PushNotificationConfig
		pc.ProtocolVersion = a2a.Version10
		c.PushNotificationConfig = &pc
		p.Configuration = &c
	}
	return p
}

// wireError maps an error to its JSON-RPC form; internal errors are logged
// with the request id and answered without their details. The error is
// recorded on the request's telemetry Call.
func (t *jsonrpcTransport) wireError(ctx context.Context, err error, method string, rid *requestID) *a2a.Error {
	return wireError(ctx, t.opts.Logger, err, method, "JSONRPC", rid)
}

// wireError maps err, answering a request of method over binding, to the
// error the client gets: a protocol error (*a2a.Error returned as such) is
// answered as it is; any other error is logged (with the request id and,
// when traced, the trace id) and answered as -32603 whose data holds
// requestId and, when the request is traced, traceId (the hex W3C trace
// id of its span), so that an operator goes from a client's
// error to its log lines and trace. The error is recorded on the
// request's telemetry Call.
func wireError(ctx context.Context, log *slog.Logger, err error, method, binding string, rid *requestID) *a2a.Error {
	// Only a protocol error returned as such reaches the client; one wrapped
	// inside an internal error (a store failure, say) stays internal.
	if ae, ok := err.(*a2a.Error); ok {
		noteError(ctx, ae)
		return ae
	}
	canceled := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	if canceled {
		log.InfoContext(ctx, "request ended before completion", "method", method, "binding", binding, "request_id", rid.String(), "err", err)
	} else {
		log.ErrorContext(ctx, "internal error", "method", method, "binding", binding, "request_id", rid.String(), "err", err)
	}
	data := map[string]any{"requestId": rid.String()}
	if id := traceID(ctx); id != "" {
		data["traceId"] = id
	}
	e := a2a.ErrInternal.WithData(data)
	if canceled {
		// The client went away (or its deadline passed): not a failure
		// of the server's, in its metrics.
		telemetry.CallFrom(ctx).SetCanceled()
	} else {
		noteError(ctx, e)
	}
	return e
}

// serveStream answers message/stream and tasks/resubscribe with SSE. A
// request error (bad params, unknown task, …) is one SSE event holding the
// JSON-RPC error response when the client accepts text/event-stream (as
// the official SDKs do), else a plain application/json error response.
func (t *jsonrpcTransport) serveStream(ctx context.Context, w http.ResponseWriter, r *http.Request, req *jsonrpc.Request, rid *requestID, ec *extension.Call) {
	ctx, cancel, detach := streamContext(ctx, r, t.opts)
	streaming := false
	defer func() {
		if !streaming {
			detach()
			cancel()
		}
	}()
	m := lookupMethod(req.Method)
	events, err := m.open(t, ctx, r, req.Params)
	if err != nil {
		body := appendError(nil, req.ID, req.Method, t.wireError(ctx, err, req.Method, rid))
		if acceptsSSE(r) {
			// Streaming clients (a2a-go, @a2a-js/sdk) read errors only from
			// inside the event stream: send the error as its one event.
			if sw, serr := sse.NewWriter(w); serr == nil {
				_ = sw.Event("", "", body)
				_ = sw.Close()
				return
			}
		}
		writeJSON(w, http.StatusOK, body)
		return
	}
	// The stream may outlive this handler (writeSSE): keep a copy of the
	// id, not the request body it points into.
	id, method := bytes.Clone(req.ID), req.Method
	streaming = true
	ec.WriteHeader(w, m.v.version)
	appendEvent := m.v.streamEvent
	writeSSE(ctx, cancel, detach, w, r, events, t.opts, m.subscribe, func(dst []byte, ev a2a.Event) ([]byte, error) {
		n := len(dst)
		dst, err := appendEvent(jsonrpc.AppendResultHead(dst, id), ev)
		if err != nil {
			return dst[:n], err
		}
		return append(dst, '}'), nil
	}, "", func(err error) []byte {
		return appendError(nil, id, method, t.wireError(ctx, err, method, rid))
	})
}

// formContentType reports a request a browser can send across sites
// without a CORS preflight: a content type HTML forms can send, or none.
func formContentType(r *http.Request) bool {
	mt, _, _ := strings.Cut(strings.ToLower(r.Header.Get("Content-Type")), ";")
	switch strings.TrimSpace(mt) {
	case "application/x-www-form-urlencoded", "multipart/form-data", "text/plain",
		"": // fetch() of an untyped Blob sends none, cross-site, without a preflight
		return true
	}
	return false
}

// HeaderA2AVersion names the A2A 1.0 service parameter that carries the
// protocol version (Major.Minor) a request uses (A2A 1.0 §3.6, §14.2.1):
// a header, or a query parameter of the same name.
const HeaderA2AVersion = "A2A-Version"

// ServedVersions are the A2A protocol versions (Major.Minor) the
// transports can serve; TransportOptions.ProtocolVersions may serve fewer.
var ServedVersions = []string{a2a.Version03, a2a.Version10}

// RequestedVersion returns the A2A protocol version r asks for, as
// Major.Minor ("0.3" when it names none: A2A 1.0 §3.6.2), the raw value of
// its A2A-Version header (else its query parameter of that name; trimmed),
// and whether it is one of ServedVersions (the transports may still be
// configured not to serve it: TransportOptions.ProtocolVersions). A patch number is not
// considered ("0.3.0" is 0.3); a value that is not
// Major.Minor[.Patch] digits is not served.
func RequestedVersion(r *http.Request) (version, raw string, ok bool) {
	v := r.Header.Get(HeaderA2AVersion)
	if v == "" && r.URL.RawQuery != "" {
		v = r.URL.Query().Get(HeaderA2AVersion)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return a2a.Version03, v, true
	}
	mm, ok := majorMinor(v)
	return mm, v, ok && slices.Contains(ServedVersions, mm)
}

// wrongFamily is the VersionNotSupportedError (-32009) for a method of
// one protocol version called with another version requested.
func wrongFamily(method, family, version string) *a2a.Error {
	hint := "send no A2A-Version header, or A2A-Version: 0.3"
	if family == a2a.Version10 {
		hint = "send the header A2A-Version: 1.0"
	}
	return a2a.ErrVersionNotSupported.WithMessage("Method %s is A2A %s but the request asked for A2A %s: %s", method, family, version, hint).
		WithData(map[string]any{"requestedVersion": version, "supportedVersions": ServedVersions})
}

// majorMinor returns "MAJOR.MINOR" of a version "MAJOR.MINOR[.PATCH]"
// (decimal digits each), and false for anything else.
func majorMinor(v string) (string, bool) {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", false
	}
	for _, p := range parts {
		if p == "" || len(p) > 9 || strings.Trim(p, "0123456789") != "" {
			return "", false
		}
	}
	return parts[0] + "." + parts[1], true
}

// versionNotSupported is the VersionNotSupportedError (-32009, A2A 1.0
// §3.6.2, §5.4) for a request that asked for version v, which no
// transport serves; served are the versions served.
func versionNotSupported(v string, served []string) *a2a.Error {
	return a2a.ErrVersionNotSupported.WithMessage("A2A-Version %q is not supported by this agent; it serves %s",
		printableASCII(v, 32), strings.Join(served, ", ")).
		WithData(map[string]any{"requestedVersion": printableASCII(v, 32), "supportedVersions": served})
}

// printableASCII is s with anything but printable ASCII replaced by '?',
// cut to max bytes: for echoing a client's value in an error.
func printableASCII(s string, max int) string {
	b := []byte(s)
	if len(b) > max {
		b = b[:max]
	}
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}
