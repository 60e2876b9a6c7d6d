package jsonrpc

// JSON-RPC methods of one's own beside the A2A methods
// (server.HandlerOptions.Methods): dispatch and their answers (a result,
// or an SSE stream of results).

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/a2abridge/a2abridge/internal/binding/edge"

	"github.com/a2abridge/a2abridge/internal/extension"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	rpc "github.com/a2abridge/a2abridge/internal/jsonrpc"
	"github.com/a2abridge/a2abridge/internal/sse"
)

// Method answers a JSON-RPC method of the agent's own (server.Method
// documents the contract).
type Method func(ctx context.Context, params []byte) (Result, error)

// Result is a Method's answer: one result's JSON (nil: null), or, when
// Stream is not nil, an SSE stream of them (server.MethodResult).
type Result struct {
	Result []byte
	Stream iter.Seq2[[]byte, error]
}

// runMethod calls m, turning a panic into an error.
func (t *jsonrpcTransport) runMethod(ctx context.Context, m Method, req *rpc.Request) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = Result{}, fmt.Errorf("panic in method %s: %v", req.Method, r)
		}
	}()
	return m(ctx, req.Params)
}

// callMethod answers a batch member that names a Method, appending its
// result's JSON to dst. On error, what it appended must be discarded.
func (t *jsonrpcTransport) callMethod(dst []byte, ctx context.Context, m Method, req *rpc.Request) ([]byte, error) {
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
func (t *jsonrpcTransport) serveMethod(ctx context.Context, w http.ResponseWriter, r *http.Request, it *rpc.Item, m Method, rid *edge.RequestID, ec *extension.Call, version string) {
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
		if out, err = appendMethodResult(rpc.AppendResultHead(out, it.ID), it.Method, res.Result); err == nil {
			edge.WriteJSON(w, http.StatusOK, append(out, '}'))
			return
		}
		out = out[:n]
	}
	out = appendError(out, it.ID, it.Method, t.wireError(ctx, err, it.Method, rid))
	if edge.AcceptsOnlySSE(r) {
		if edge.WriteEvent(w, out) {
			return
		}
	}
	edge.WriteJSON(w, http.StatusOK, out)
}

// writeMethodStream writes a Method's Stream as SSE: one event per value,
// an error as the last event, keep-alive comments while it is idle. It
// returns when the stream ends, the client goes away (ctx) or a write
// fails; cancel ends ctx (a keep-alive that cannot be written calls it).
func (t *jsonrpcTransport) writeMethodStream(ctx context.Context, cancel context.CancelFunc, w http.ResponseWriter, id []byte, method string, stream iter.Seq2[[]byte, error], rid *edge.RequestID) {
	sw, err := sse.NewWriter(w)
	if err != nil {
		edge.WriteError(w, http.StatusInternalServerError, a2a.ErrInternal.WithMessage("streaming is not supported by this connection"))
		return
	}
	defer sw.Close()
	defer edge.KeepAlive(sw, t.opts.KeepAlive, cancel)()
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
		if buf, err = appendMethodResult(rpc.AppendResultHead(buf[:0], id), method, v); err != nil {
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
