// Package edge is what every HTTP binding of A2A shares at the edge of
// the server: reading a bounded request body, the protocol version a
// request names and the errors refusing it, answering in JSON and mapping
// a Handler's error to what a client may see, Server-Sent Events streams
// with keep-alives, connection take-over and write deadlines, the Agent
// Card's HTTP caching, and the agent a binding serves (Agent) with the
// limits it serves under (Options).
//
// The bindings (internal/binding/jsonrpc, internal/binding/rest) and
// server.Host build on it; nothing in it knows an engine or a store.
package edge

import (
	"context"
	"log/slog"
	"time"

	"github.com/a2abridge/a2abridge/binding"
)

// Options are the limits and choices an HTTP binding serves under,
// defaults already applied (server.TransportOptions documents each).
type Options struct {
	// MaxBodyBytes limits a request body (bytes, > 0).
	MaxBodyBytes int64
	// MaxBatch limits the members of one JSON-RPC batch (> 0).
	MaxBatch int
	// BodyReadTimeout bounds the receipt of a request body; ≤ 0: none.
	BodyReadTimeout time.Duration
	// KeepAlive is the interval of SSE keep-alive comments; ≤ 0: none.
	KeepAlive time.Duration
	// StreamWriteTimeout bounds each SSE write (> 0).
	StreamWriteTimeout time.Duration
	// Logger receives the logs of internal errors (not nil).
	Logger *slog.Logger
	// ProtocolVersions are the A2A versions served, Major.Minor, in
	// ServedVersions' order.
	ProtocolVersions []string
}

// Agent is what a binding needs of the agent it serves: its operations
// (the Handler, through the agent's interceptors) and, beside them, its
// name, whether it authenticates (a request a browser form could send is
// refused then), whether it is retired (a new message is answered as to
// an unknown agent), the start of a request's trace and the signing of
// its extended card.
type Agent struct {
	binding.Handler
	Name    string
	Auth    bool
	Retired bool
	// Begin joins or starts the trace of a request of method (an A2A
	// 1.0 method name for HTTP+JSON) once the binding knows it: tenant
	// and taskID are those of a REST path ("": read from params, the
	// request's JSON). nil when the agent has no telemetry.
	Begin func(ctx context.Context, method, tenant, taskID string, params []byte) context.Context
	// SignCard signs an extended card's JSON (A2A 1.0 §8.4) for the
	// request of ctx; nil: served as it is.
	SignCard func(ctx context.Context, card []byte) ([]byte, error)
}
