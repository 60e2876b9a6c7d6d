package server

// JSON-RPC methods of one's own beside the A2A methods
// (HandlerOptions.Methods): dispatch, their answers (a result, or an SSE
// stream of results), and the rules for their names.

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/internal/extension"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/jsonrpc"
	"github.com/a2abridge/a2abridge/internal/sse"
)

// Method answers one JSON-RPC method of one's own (an extension method,
// A2A 0.3.0 §3.5.5) that an agent's JSON-RPC endpoint serves beside the
// A2A methods: see HandlerOptions.Methods.
//
// params is the raw JSON of the request's "params" member (JSON-RPC 2.0
// §4: an object or an array), nil when the request has none; the Method
// must not modify it. ctx carries the caller's principal (auth.FromContext)
// when the agent authenticates, and ends when the client goes away; for a
// streaming answer it stays valid until the Stream has been ranged over.
//
// An error is answered as a JSON-RPC error response (JSON-RPC 2.0 §5.1):
// an *a2a.Error with its code, message and data as they are (use codes of
// the server-error range -32000..-32099 for conditions of one's own, and
// a2a.InvalidParams, -32602, for bad params); any other error is logged
// with a request id and answered -32603 with only that id in its data.
type Method func(ctx context.Context, params []byte) (MethodResult, error)

// MethodResult is a Method's answer: one result, or a stream of them.
type MethodResult struct {
	// Result is the JSON of the response's "result" member (any JSON
	// value); nil means null. JSON that is not valid is answered -32603
	// (logged).
	Result []byte
	// Stream, when not nil, makes the answer a Server-Sent Events stream
	// (Content-Type text/event-stream, as A2A's streaming methods answer:
	// A2A 0.3.0 §3.3, A2A 1.0 §9.4): each value becomes one event whose
	// data is the response {"jsonrpc":"2.0","id":…,"result":VALUE} with
	// the request's id, sent as it is yielded; an error ends the stream
	// with one last event holding the error response (mapped as a
	// Method's error is). Result is then ignored. Keep-alive comments are
	// sent while the stream is idle (TransportOptions.KeepAlive).
	//
	// The transport ranges over Stream at most once, from the handler's
	// goroutine, and stops early (yield returns false) when the client
	// goes away or a write fails. A stream cannot be a member of a batch
	// (JSON-RPC 2.0 §6): there it is answered -32600 without being ranged
	// over, so a Stream should start its work (an upstream request) when
	// it is ranged over, not before.
	Stream iter.Seq2[[]byte, error]
}

// reservedMethodPrefixes are the namespaces a Method's name may not use:
// JSON-RPC 2.0's rpc. (§4) and the categories of A2A 0.3's methods (§7),
// whose later methods would be shadowed or would shadow.
var reservedMethodPrefixes = []string{"rpc.", "message/", "tasks/", "agent/"}

// checkMethods panics on a HandlerOptions.Methods entry that must not be
// served (see HandlerOptions.Methods) and returns a copy of methods.
func checkMethods(methods map[string]Method) map[string]Method {
	if len(methods) == 0 {
		return nil
	}
	out := make(map[string]Method, len(methods))
	for name, m := range methods {
		category, action, _ := strings.Cut(name, "/")
		switch {
		case m == nil:
			panic(fmt.Sprintf("server: HandlerOptions.Methods[%q] is nil", name))
		case knownMethod(name):
			panic(fmt.Sprintf("server: HandlerOptions.Methods[%q]: an A2A method cannot be replaced", name))
		case category == "" || action == "":
			panic(fmt.Sprintf("server: HandlerOptions.Methods[%q]: the name must be category/action (A2A 0.3.0 §3.5.5)", name))
		}
		for _, p := range reservedMethodPrefixes {
			if strings.HasPrefix(name, p) {
				panic(fmt.Sprintf("server: HandlerOptions.Methods[%q]: the prefix %q is reserved", name, p))
			}
		}
		out[name] = m
	}
	return out
}

// runMethod calls m, turning a panic into an error.
func (t *jsonrpcTransport) runMethod(ctx context.Context, m Method, req *jsonrpc.Request) (res MethodResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = MethodResult{}, fmt.Errorf("panic in method %s: %v", req.Method, r)
		}
	}()
	return m(ctx, req.Params)
}

// callMethod answers a batch member that names a Method, appending its
// result's JSON to dst. On error, what it appended must be discarded.
func (t *jsonrpcTransport) callMethod(dst []byte, ctx context.Context, m Method, req *jsonrpc.Request) ([]byte, error) {
	res, err := t.runMethod(ctx, m, req)
	if err != nil {
		return dst, err
	}
	if res.Stream != nil {
		return dst, a2a.ErrInvalidRequest.WithMessage("Invalid Request: method %s answers with a stream, which cannot be used in a batch", req.Method)
	}
	return appendMethodResult(dst, req.Method, res.Result)
}

// appendMethodResult appends a Method's result, null for nil.
func appendMethodResult(dst []byte, method string, result []byte) ([]byte, error) {
	if result == nil {
		return append(dst, "null"...), nil
	}
	if !jsontext.Value(result).IsValid() {
		return dst, fmt.Errorf("method %s answered a result that is not valid JSON", method)
	}
	return append(dst, result...), nil
}

// serveMethod answers a single (non-batch) request that names a Method:
// a JSON response, or an SSE stream when the Method answers with one. An
// error before a stream starts is one SSE event when the client accepts
// only text/event-stream (a streaming client reads errors only from
// inside a stream), else a JSON response.
func (t *jsonrpcTransport) serveMethod(ctx context.Context, w http.ResponseWriter, r *http.Request, it *jsonrpc.Item, m Method, rid *requestID, ec *extension.Call, version string) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := t.runMethod(ctx, m, &it.Request)
	var out []byte
	ec.WriteHeader(w, version)
	if err == nil && res.Stream != nil {
		t.writeMethodStream(ctx, cancel, w, bytes.Clone(it.ID), it.Method, res.Stream, rid)
		return
	}
	if err == nil {
		n := len(out)
		if out, err = appendMethodResult(jsonrpc.AppendResultHead(out, it.ID), it.Method, res.Result); err == nil {
			writeJSON(w, http.StatusOK, append(out, '}'))
			return
		}
		out = out[:n]
	}
	out = appendError(out, it.ID, it.Method, t.wireError(ctx, err, it.Method, rid))
	if acceptsOnlySSE(r) {
		if sw, serr := sse.NewWriter(w); serr == nil {
			_ = sw.Event("", "", out)
			_ = sw.Close()
			return
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// writeMethodStream writes a Method's Stream as SSE: one event per value,
// an error as the last event, keep-alive comments while it is idle. It
// returns when the stream ends, the client goes away (ctx) or a write
// fails; cancel ends ctx (a keep-alive that cannot be written calls it).
func (t *jsonrpcTransport) writeMethodStream(ctx context.Context, cancel context.CancelFunc, w http.ResponseWriter, id []byte, method string, stream iter.Seq2[[]byte, error], rid *requestID) {
	sw, err := sse.NewWriter(w)
	if err != nil {
		WriteError(w, http.StatusInternalServerError, a2a.ErrInternal.WithMessage("streaming is not supported by this connection"))
		return
	}
	defer sw.Close()
	if t.opts.KeepAlive > 0 {
		st := &keepAliveStream{sw: sw, cancel: cancel}
		keepAlives(t.opts.KeepAlive).add(st)
		defer keepAlives(t.opts.KeepAlive).remove(st)
	}
	fail := func(err error) {
		if ctx.Err() == nil {
			_ = sw.SetWriteDeadline(deadline(t.opts.StreamWriteTimeout))
			_ = sw.Event("", "", appendError(nil, id, method, t.wireError(ctx, err, method, rid)))
		}
	}
	defer func() {
		if r := recover(); r != nil {
			fail(fmt.Errorf("panic in the stream of method %s: %v", method, r))
		}
	}()
	var buf []byte
	for v, err := range stream {
		if err != nil {
			fail(err)
			return
		}
		if buf, err = appendMethodResult(jsonrpc.AppendResultHead(buf[:0], id), method, v); err != nil {
			fail(err)
			return
		}
		buf = append(buf, '}')
		_ = sw.SetWriteDeadline(deadline(t.opts.StreamWriteTimeout))
		if sw.Event("", "", buf) != nil {
			return // the client is gone
		}
	}
}

// deadline is the time d from now.
func deadline(d time.Duration) time.Time { return time.Now().Add(d) }
