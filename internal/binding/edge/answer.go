package edge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/jsonrpc"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	"go.opentelemetry.io/otel/trace"
)

// RequestID names one HTTP request in logs and in the data of internal
// errors; it is made only when needed (an error), not on the hot path.
type RequestID struct{ id string }

// String is the request's id, made on first use: a process prefix and a
// sequence number.
func (r *RequestID) String() string {
	if r.id == "" {
		r.id = reqPrefix + "-" + strconv.FormatUint(reqSeq.Add(1), 10)
	}
	return r.id
}

// BufPool holds *[]byte buffers for encoding answers; put back only
// those of at most 64 KiB, so that the pool pins no large buffer.
var BufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

var jsonContentType = []string{"application/json"}

// WriteJSON answers with body as application/json and HTTP status.
func WriteJSON(w http.ResponseWriter, status int, body []byte) {
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
	WriteJSON(w, status, jsonrpc.AppendError(nil, nil, e))
}

// WireError maps err, answering a request of method over binding, to the
// error the client gets: a protocol error (*a2a.Error returned as such) is
// answered as it is; any other error is logged (with the request id and,
// when traced, the trace id) and answered as -32603 whose data holds
// requestId and, when the request is traced, traceId (the hex W3C trace
// id of its span), so that an operator goes from a client's
// error to its log lines and trace. The error is recorded on the
// request's telemetry Call.
func WireError(ctx context.Context, log *slog.Logger, err error, method, binding string, rid *RequestID) *a2a.Error {
	// Only a protocol error returned as such reaches the client; one wrapped
	// inside an internal error (a store failure, say) stays internal.
	if ae, ok := err.(*a2a.Error); ok {
		NoteError(ctx, ae)
		return ae
	}
	canceled := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	if canceled {
		log.InfoContext(ctx, "request ended before completion", "method", method, "binding", binding, "request_id", rid.String(), "err", err)
	} else {
		log.ErrorContext(ctx, "internal error", "method", method, "binding", binding, "request_id", rid.String(), "err", err)
	}
	data := map[string]any{"requestId": rid.String()}
	if id := TraceID(ctx); id != "" {
		data["traceId"] = id
	}
	e := a2a.ErrInternal.WithData(data)
	if canceled {
		// The client went away (or its deadline passed): not a failure
		// of the server's, in its metrics.
		telemetry.CallFrom(ctx).SetCanceled()
	} else {
		NoteError(ctx, e)
	}
	return e
}

// FormContentType reports a request a browser can send across sites
// without a CORS preflight: a content type HTML forms can send, or none.
func FormContentType(r *http.Request) bool {
	mt, _, _ := strings.Cut(strings.ToLower(r.Header.Get("Content-Type")), ";")
	switch strings.TrimSpace(mt) {
	case "application/x-www-form-urlencoded", "multipart/form-data", "text/plain",
		"": // fetch() of an untyped Blob sends none, cross-site, without a preflight
		return true
	}
	return false
}

// PrintableASCII is s with anything but printable ASCII replaced by '?',
// cut to max bytes: for echoing a client's value in an error.
func PrintableASCII(s string, max int) string {
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

// NoteError records e as the answer of the request of ctx (its telemetry
// Call), if any.
func NoteError(ctx context.Context, e *a2a.Error) {
	if e == nil {
		return
	}
	if c := telemetry.CallFrom(ctx); c != nil {
		c.SetError(e.Code, e.Message)
	}
}

// TraceID is the hex trace id of the span in ctx, "" when none.
func TraceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		return sc.TraceID().String()
	}
	return ""
}

var (
	reqPrefix = func() string { var b [4]byte; _, _ = rand.Read(b[:]); return hex.EncodeToString(b[:]) }()
	reqSeq    atomic.Uint64
)
