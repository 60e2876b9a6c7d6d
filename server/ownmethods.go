package server

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/a2abridge/a2abridge/internal/binding/jsonrpc"
)

// JSON-RPC methods of one's own beside the A2A methods
// (HandlerOptions.Methods): what they are and the rules for their names.

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
		case jsonrpc.KnownMethod(name):
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

// ownMethods is h's Methods as the JSON-RPC binding takes them; nil when
// it has none.
func (h *AgentHandler) ownMethods() map[string]jsonrpc.Method {
	if len(h.opts.Methods) == 0 {
		return nil
	}
	out := make(map[string]jsonrpc.Method, len(h.opts.Methods))
	for name, m := range h.opts.Methods {
		out[name] = func(ctx context.Context, params []byte) (jsonrpc.Result, error) {
			res, err := m(ctx, params)
			return jsonrpc.Result(res), err
		}
	}
	return out
}
