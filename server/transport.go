package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/binding/edge"
	"github.com/a2abridge/a2abridge/internal/binding/jsonrpc"
)

// DefaultMaxBodyBytes is the default request body limit: 10 MiB.
const DefaultMaxBodyBytes = 10 << 20

// DefaultMaxBatch is the default limit on the members of one JSON-RPC
// batch request (JSON-RPC 2.0 §6): 100.
const DefaultMaxBatch = 100

// DefaultBodyReadTimeout is the default time a client has to send a
// request body once its headers have arrived: 30 s.
const DefaultBodyReadTimeout = 30 * time.Second

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
		return edge.ServedVersions, nil
	}
	var out []string
	for _, v := range vs {
		mm, ok := edge.MajorMinor(strings.TrimSpace(v))
		if !ok || !slices.Contains(edge.ServedVersions, mm) {
			return nil, fmt.Errorf("protocol version %q: want %s", v, strings.Join(edge.ServedVersions, " or "))
		}
	}
	for _, s := range edge.ServedVersions {
		if slices.ContainsFunc(vs, func(v string) bool { mm, _ := edge.MajorMinor(strings.TrimSpace(v)); return mm == s }) {
			out = append(out, s)
		}
	}
	return out, nil
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

// NewJSONRPCHandler returns the JSON-RPC 2.0 binding of h, for A2A 1.0
// (§9) and 0.3.0 (§3.2.1, §7) on one URL: POST a request object or a
// batch array; answers are HTTP 200 application/json, or
// text/event-stream for the streaming methods (SendStreamingMessage,
// SubscribeToTask, message/stream, tasks/resubscribe, which honours
// Last-Event-ID); other HTTP methods get 405. Mount it where the agent
// card's url points; a Host mounts it for each agent it hosts.
func NewJSONRPCHandler(h *AgentHandler, opts TransportOptions) http.Handler {
	return newJSONRPCHandler(h, opts, nil, nil)
}

// newJSONRPCHandler is NewJSONRPCHandler with the function that gives
// where the agent is reachable, for the extended card (nil: the card's
// own url and interfaces) and the one that answers a message to a retired agent
// (nil: retiredAgent). The binding runs after h's authentication, within
// the request's telemetry Call.
func newJSONRPCHandler(h *AgentHandler, opts TransportOptions, place edge.CardPlace, unknown http.HandlerFunc) http.Handler {
	opts = opts.withDefaults()
	if unknown == nil {
		unknown = func(w http.ResponseWriter, r *http.Request) { retiredAgent(w, r, h.Name()) }
	}
	t := jsonrpc.New(h.bound(opts), h.ownMethods(), opts.edge(), place, unknown)
	return instrument(h, "JSONRPC", authenticateReq(h, opts.Logger, t, writeErrorReq))
}

// edge is o as the bindings take it; the caller has applied its
// defaults (withDefaults).
func (o TransportOptions) edge() edge.Options {
	return edge.Options{MaxBodyBytes: o.MaxBodyBytes, MaxBatch: o.MaxBatch, BodyReadTimeout: o.BodyReadTimeout,
		KeepAlive: o.KeepAlive, StreamWriteTimeout: o.StreamWriteTimeout, Logger: o.Logger, ProtocolVersions: o.ProtocolVersions}
}

// HeaderA2AVersion, "A2A-Version", names the A2A 1.0 service parameter that carries the
// protocol version (Major.Minor) a request uses (A2A 1.0 §3.6, §14.2.1):
// a header, or a query parameter of the same name.
const HeaderA2AVersion = edge.HeaderA2AVersion

// ServedVersions are the A2A protocol versions (Major.Minor) the
// transports can serve, "0.3" and "1.0"; TransportOptions.ProtocolVersions may serve
// fewer. Do not modify it.
var ServedVersions = edge.ServedVersions

// RequestedVersion returns the A2A protocol version r asks for, as
// Major.Minor ("0.3" when it names none: A2A 1.0 §3.6.2), the raw value of
// its A2A-Version header (else its query parameter of that name; trimmed),
// and whether it is one of ServedVersions (the transports may still be
// configured not to serve it: TransportOptions.ProtocolVersions). A patch
// number is not considered ("0.3.0" is 0.3); a value that is not
// Major.Minor[.Patch] digits is not served.
func RequestedVersion(r *http.Request) (version, raw string, ok bool) {
	return edge.RequestedVersion(r)
}

// WriteError answers an HTTP request with a JSON-RPC error response (id
// null) and the given HTTP status: for middleware (authentication, limits)
// that must answer in protocol form before a request is parsed.
func WriteError(w http.ResponseWriter, status int, e *a2a.Error) { edge.WriteError(w, status, e) }
