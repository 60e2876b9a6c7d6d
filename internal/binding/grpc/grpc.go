// Package grpc is the gRPC binding of A2A 1.0 (A2A 1.0 §10): the
// lf.a2a.v1.A2AService of a2a.proto served over the binding.Handler of
// each agent, its messages in protobuf's binary encoding written and read
// by internal/wire/pb (so nothing here registers the lf.a2a.v1 names in
// protobuf's global registry).
//
// A Server is a grpc-go server with the service, the standard health
// service (grpc.health.v1) and server reflection (v1 and v1alpha, from
// the proto's descriptors kept apart from the global registry). Each
// request reaches the agent its Resolver returns for the request's
// tenant; errors are gRPC statuses with a google.rpc.ErrorInfo detail
// (reason as A2A 1.0 §10.6 names it, domain a2a-protocol.org), the status
// codes of A2A 1.0 §5.4.
package grpc

import (
	"context"
	"crypto/tls"
	"errors"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/binding"
	"github.com/a2abridge/a2abridge/internal/a2aproto"
	"github.com/a2abridge/a2abridge/internal/binding/edge"
	"github.com/a2abridge/a2abridge/internal/extension"
	"github.com/a2abridge/a2abridge/internal/grpcdial"
	"github.com/a2abridge/a2abridge/internal/grpcframe"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// ServiceName is the full name of the A2A service (a2a.proto).
const ServiceName = "lf.a2a.v1.A2AService"

// Binding is the protocol binding's name in Agent Cards and telemetry
// (A2A 1.0 §5.1).
const Binding = "GRPC"

// Metadata keys the binding reads (gRPC metadata keys are lower case).
const (
	// MetadataVersion is A2A-Version (A2A 1.0 §3.6): absent or 1.x.
	MetadataVersion = "a2a-version"
	// MetadataExtensions is A2A-Extensions (A2A 1.0 §3.2.6): the
	// extensions a request activates; the response's header metadata
	// lists those applied under the same key.
	MetadataExtensions = "a2a-extensions"
	// MetadataLastEventID resumes a SubscribeToTask stream after the
	// event of that sequence number (a2a.ExtensionEventLog), as the SSE
	// Last-Event-ID header does.
	MetadataLastEventID = "last-event-id"
)

// Request is a call as its Resolver sees it, before its agent is known.
type Request struct {
	ctx context.Context
	// Method is the A2A 1.0 method called ("SendMessage", …).
	Method string
	// Tenant is the request's tenant field as sent (A2A 1.0 §3.2).
	Tenant string
	// Stream marks a streaming method.
	Stream bool
	hr     *http.Request
}

// Context is the call's context (its deadline, its metadata).
func (r *Request) Context() context.Context { return r.ctx }

// HTTP returns the call as an *http.Request, for what reads HTTP
// requests (authentication, trace context, the base URL of cards): its
// Header holds the call's metadata (canonical keys, pseudo-headers and
// grpc-* left out), Host is its :authority, RemoteAddr the peer's
// address, TLS the connection's state when it is TLS, and its context,
// the call's, carries the local address the
// connection reached (http.LocalAddrContextKey). Made on first use; the
// body is empty.
func (r *Request) HTTP() *http.Request {
	if r.hr != nil {
		return r.hr
	}
	ctx := r.ctx
	hr := &http.Request{Method: http.MethodPost, Proto: "HTTP/2.0", ProtoMajor: 2, Header: http.Header{},
		URL: &url.URL{Path: "/" + ServiceName + "/" + r.Method}, Body: http.NoBody, RequestURI: "/" + ServiceName + "/" + r.Method}
	md, _ := metadata.FromIncomingContext(ctx)
	for k, vs := range md {
		switch {
		case k == ":authority":
			if len(vs) > 0 {
				hr.Host = vs[0]
			}
		case strings.HasPrefix(k, ":"), strings.HasPrefix(k, "grpc-"), strings.HasSuffix(k, "-bin"):
		default:
			ck := http.CanonicalHeaderKey(k)
			hr.Header[ck] = append(hr.Header[ck], vs...)
		}
	}
	if p, ok := peer.FromContext(ctx); ok {
		if p.Addr != nil {
			hr.RemoteAddr = p.Addr.String()
		}
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			hr.TLS = &ti.State
		}
		if p.LocalAddr != nil {
			ctx = context.WithValue(ctx, http.LocalAddrContextKey, p.LocalAddr)
		}
	}
	r.hr = hr.WithContext(ctx)
	return r.hr
}

// Target is the agent a request reaches.
type Target struct {
	// Agent answers the request (its Handler), with the start of its
	// trace (Begin) and the signing of its extended card (SignCard).
	Agent *edge.Agent
	// Tenant is the tenant the agent's handler is asked for: what
	// remains of the request's tenant once the agent is chosen.
	Tenant string
	// Ctx is the context of the call (its principal, its telemetry
	// call, the agent's card URL); nil: the request's.
	Ctx context.Context
	// End, if set, is called once the call is answered (a stream's last
	// frame sent).
	End func()
}

// Resolver returns the target of a request. Its error is answered as it
// is: an *a2a.Error becomes its status; NotFound, Unavailable and
// Unauthenticated make the other answers a resolver gives. A resolver
// that fails has finished whatever it started for the call.
type Resolver func(r *Request) (Target, error)

// NotFound is the answer to a request whose tenant names no agent:
// NOT_FOUND with msg and no ErrorInfo (no A2A error says "no such
// agent").
func NotFound(msg string) error { return status.Error(codes.NotFound, msg) }

// Unavailable is the answer to a request that cannot be served now (an
// identity provider that cannot be reached): UNAVAILABLE with msg, which
// a gRPC client may retry.
func Unavailable(msg string) error { return status.Error(codes.Unavailable, msg) }

// Unauthenticated is the answer to a request without valid credentials:
// e (A2A 1.0's UnauthenticatedError) as its status, and each of
// challenges in the trailer's www-authenticate, as HTTP lists them in
// WWW-Authenticate.
func Unauthenticated(e *a2a.Error, challenges []string) error {
	return &challenged{e: e, challenges: challenges}
}

type challenged struct {
	e          *a2a.Error
	challenges []string
}

func (c *challenged) Error() string { return c.e.Error() }
func (c *challenged) Unwrap() error { return c.e }

// Frame is one message in its binary encoding (grpcframe.Frame).
type Frame = grpcframe.Frame

// Codec is the binding's grpc-go codec (grpcframe.Codec).
type Codec = grpcframe.Codec

// Defaults of Options.
const (
	// DefaultMaxRecvBytes bounds a received message: 4 MiB, grpc-go's
	// own default.
	DefaultMaxRecvBytes = 4 << 20
	// DefaultKeepAliveTime is how long a connection may be idle before
	// the server pings it: 2 hours, as grpc-go.
	DefaultKeepAliveTime = 2 * time.Hour
	// DefaultKeepAliveTimeout is how long a ping may stay unanswered
	// before the connection is closed: 20 seconds, as grpc-go.
	DefaultKeepAliveTimeout = 20 * time.Second
	// DefaultMinPingInterval is the shortest interval at which a client
	// may ping; a client that pings more often is disconnected (grpc-go's
	// enforcement policy): 5 minutes, as grpc-go, which its clients'
	// defaults respect.
	DefaultMinPingInterval = 5 * time.Minute
	// DefaultMaxConcurrentStreams bounds the calls open at once on one
	// connection: 1000.
	DefaultMaxConcurrentStreams = 1000
)

// Options configure a Server. Zero values take the defaults above.
type Options struct {
	// Resolve finds each request's agent; required.
	Resolve Resolver
	// Logger receives internal errors (logged with a request id that
	// their answer carries); nil: discarded.
	Logger *slog.Logger
	// MaxRecvBytes bounds a received message, in bytes; a larger one is
	// answered RESOURCE_EXHAUSTED before it is decoded.
	MaxRecvBytes int
	// KeepAliveTime is how long a connection may be idle before the
	// server pings it, and KeepAliveTimeout how long that ping may stay
	// unanswered before the connection closes (its streams end).
	KeepAliveTime, KeepAliveTimeout time.Duration
	// MinPingInterval is the shortest interval at which clients may ping
	// (also while no call is open).
	MinPingInterval time.Duration
	// MaxConcurrentStreams bounds the calls open at once on one
	// connection.
	MaxConcurrentStreams uint32
	// TLSConfig, if set, makes Serve's connections TLS.
	TLSConfig *tls.Config
}

// Server serves the A2A service, health and reflection over gRPC.
type Server struct {
	s      *gogrpc.Server
	health *health.Server
	log    *slog.Logger
	res    Resolver
}

// NewServer returns a Server for opts. It panics without opts.Resolve.
func NewServer(opts Options) *Server {
	if opts.Resolve == nil {
		panic("grpc: NewServer without a Resolver")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxRecvBytes <= 0 {
		opts.MaxRecvBytes = DefaultMaxRecvBytes
	}
	if opts.KeepAliveTime <= 0 {
		opts.KeepAliveTime = DefaultKeepAliveTime
	}
	if opts.KeepAliveTimeout <= 0 {
		opts.KeepAliveTimeout = DefaultKeepAliveTimeout
	}
	if opts.MinPingInterval <= 0 {
		opts.MinPingInterval = DefaultMinPingInterval
	}
	if opts.MaxConcurrentStreams == 0 {
		opts.MaxConcurrentStreams = DefaultMaxConcurrentStreams
	}
	s := &Server{log: opts.Logger, res: opts.Resolve, health: health.NewServer()}
	sopts := []gogrpc.ServerOption{
		gogrpc.ForceServerCodecV2(Codec{}),
		gogrpc.MaxRecvMsgSize(opts.MaxRecvBytes),
		gogrpc.MaxConcurrentStreams(opts.MaxConcurrentStreams),
		// As net/http's default: grpc-go's own (16 MiB) would let a caller
		// pin that much per call.
		gogrpc.MaxHeaderListSize(http.DefaultMaxHeaderBytes),
		gogrpc.KeepaliveParams(keepalive.ServerParameters{Time: opts.KeepAliveTime, Timeout: opts.KeepAliveTimeout}),
		gogrpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: opts.MinPingInterval, PermitWithoutStream: true}),
	}
	if opts.TLSConfig != nil {
		sopts = append(sopts, gogrpc.Creds(credentials.NewTLS(opts.TLSConfig)))
	}
	s.s = gogrpc.NewServer(sopts...)
	s.s.RegisterService(s.serviceDesc(), struct{}{})
	healthpb.RegisterHealthServer(s.s, s.health)
	s.health.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_SERVING)
	registerReflection(s.s)
	return s
}

// Serve accepts connections on ln (each one HTTP/2, cleartext or already
// TLS) until Stop or GracefulStop; it returns nil after them.
func (s *Server) Serve(ln net.Listener) error {
	err := s.s.Serve(ln)
	if errors.Is(err, gogrpc.ErrServerStopped) {
		return nil
	}
	return err
}

// ServeHTTP answers one gRPC request that an HTTP/2 server of net/http
// received (r.ProtoMajor 2, Content-Type application/grpc…): the route
// for a listener that serves HTTP and gRPC under TLS. It is slower than
// Serve, which owns the connection.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.s.ServeHTTP(w, r) }

// IsGRPC reports a request that ServeHTTP answers: HTTP/2 with a
// Content-Type of application/grpc (with or without a +subtype).
func IsGRPC(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return r.ProtoMajor == 2 && strings.HasPrefix(ct, "application/grpc") &&
		(len(ct) == len("application/grpc") || ct[len("application/grpc")] == '+' || ct[len("application/grpc")] == ';')
}

// GracefulStop stops accepting calls (the health service says
// NOT_SERVING first) and waits for the open ones to finish, until ctx
// ends; then it closes every connection.
func (s *Server) GracefulStop(ctx context.Context) {
	s.health.Shutdown()
	done := make(chan struct{})
	go func() { s.s.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.s.Stop()
		<-done
	}
}

// Stop closes every connection and listener at once.
func (s *Server) Stop() {
	s.health.Shutdown()
	s.s.Stop()
}

// serviceDesc is the service's description: one method or stream per
// method of the proto's A2AService.
func (s *Server) serviceDesc() *gogrpc.ServiceDesc {
	sd := &gogrpc.ServiceDesc{ServiceName: ServiceName, HandlerType: (*any)(nil), Metadata: "a2a.proto"}
	for _, svc := range a2aproto.Services() {
		if svc.Name != ServiceName {
			continue
		}
		for _, m := range svc.Methods {
			if m.ServerStreaming {
				sd.Streams = append(sd.Streams, gogrpc.StreamDesc{StreamName: m.Name, ServerStreams: true,
					Handler: s.streamHandler(m.Name)})
				continue
			}
			sd.Methods = append(sd.Methods, gogrpc.MethodDesc{MethodName: m.Name, Handler: s.unaryHandler(m.Name)})
		}
	}
	return sd
}

// call is one request reaching its agent.
type call struct {
	s      *Server
	method string
	// outer is the request's tenant as sent, written back into the
	// results that carry a tenant.
	outer string
	t     Target
	ctx   context.Context
	ext   *extension.Call
	rid   edge.RequestID
}

// open finds the agent of a request of method whose tenant is *tenant
// (set to the tenant its handler sees), for the task taskID ("" when
// none), and reads the extensions the request activates. ctx is the
// call's.
func (s *Server) open(ctx context.Context, method string, tenant *string, taskID string, stream bool) (*call, error) {
	c := &call{s: s, method: method, outer: *tenant}
	t, err := s.res(&Request{ctx: ctx, Method: method, Tenant: *tenant, Stream: stream})
	if err != nil {
		return nil, err
	}
	if t.Ctx == nil {
		t.Ctx = ctx
	}
	c.t, c.ctx = t, t.Ctx
	*tenant = t.Tenant
	md, _ := metadata.FromIncomingContext(ctx)
	if v1, v03 := md[MetadataExtensions], md["x-a2a-extensions"]; len(v1) > 0 || len(v03) > 0 {
		var xerr *a2a.Error
		c.ctx, c.ext, xerr = extension.FromValues(c.ctx, v1, v03)
		if xerr != nil {
			edge.NoteError(c.ctx, xerr)
			c.end()
			return nil, xerr
		}
	}
	if t.Agent.Begin != nil {
		join := ""
		if method == binding.Method10CancelTask || method == binding.Method10SubscribeToTask || method == binding.Method10SendMessage || method == binding.Method10SendStreamingMessage {
			join = taskID
		}
		c.ctx = t.Agent.Begin(c.ctx, method, t.Tenant, join, nil)
	}
	telemetry.CallFrom(c.ctx).SetTask(taskID)
	return c, nil
}

// end ends the call's target.
func (c *call) end() {
	if c.t.End != nil {
		c.t.End()
	}
}

// fail is the answer to err of the call: an *a2a.Error as it is, anything
// else internal (logged with a request id the answer carries).
func (c *call) fail(err error) error {
	return edge.WireError(c.ctx, c.s.log, err, c.method, Binding, &c.rid)
}

// applied is the header metadata that lists the extensions applied to
// the call; nil when none was.
func (c *call) applied() metadata.MD {
	if v := c.ext.Applied(); v != "" {
		return metadata.Pairs(MetadataExtensions, v)
	}
	return nil
}

// unaryHandler answers one unary method.
func (s *Server) unaryHandler(method string) func(srv any, ctx context.Context, dec func(any) error, in gogrpc.UnaryServerInterceptor) (any, error) {
	op := unaryOps[method]
	return func(_ any, ctx context.Context, dec func(any) error, _ gogrpc.UnaryServerInterceptor) (_ any, err error) {
		defer s.recover(ctx, method, &err)
		var req Frame
		if err := dec(&req); err != nil {
			return nil, err
		}
		if op == nil {
			return nil, statusOf(ctx, a2a.ErrMethodNotFound)
		}
		if err := checkVersion(ctx); err != nil {
			return nil, statusOf(ctx, err)
		}
		b, err := op(ctx, s, method, req.B)
		if err != nil {
			return nil, statusOf(ctx, err)
		}
		return &Frame{B: b}, nil
	}
}

// recover answers a call whose handling panicked with INTERNAL, as
// net/http drops the one request: the panic and its stack are logged
// with a request id the answer carries.
func (s *Server) recover(ctx context.Context, method string, err *error) {
	p := recover()
	if p == nil {
		return
	}
	var rid edge.RequestID
	s.log.ErrorContext(ctx, "panic serving a gRPC call", "method", method, "request_id", rid.String(), "panic", p, "stack", string(debug.Stack()))
	*err = statusOf(ctx, a2a.ErrInternal.WithData(map[string]any{"requestId": rid.String()}))
}

// unaryOp answers one unary method from its request's bytes.
type unaryOp func(ctx context.Context, s *Server, method string, req []byte) ([]byte, error)

// op is the unaryOp of a method: decode its request, find the agent of
// its tenant (scope: the request's tenant field and the task it
// concerns), call the agent's handler, encode the result (with the
// request's tenant as sent, for results that carry one).
func op[Req, Res any](decode func([]byte) (Req, error), scope func(*Req) (tenant *string, taskID string),
	do func(binding.Handler, context.Context, Req) (Res, error), encode func([]byte, Res, string) ([]byte, error)) unaryOp {
	return func(ctx context.Context, s *Server, method string, b []byte) ([]byte, error) {
		req, err := decode(b)
		if err != nil {
			return nil, err
		}
		tenant, taskID := scope(&req)
		c, err := s.open(ctx, method, tenant, taskID, false)
		if err != nil {
			return nil, err
		}
		defer c.end()
		res, err := do(c.t.Agent.Handler, c.ctx, req)
		if err == nil {
			b, err = encode(nil, res, c.outer)
		}
		if err != nil {
			return nil, c.fail(err)
		}
		if md := c.applied(); md != nil {
			_ = gogrpc.SetHeader(ctx, md)
		}
		return b, nil
	}
}

// asIs is encode of a result that carries no tenant.
func asIs[Res any](f func([]byte, Res) ([]byte, error)) func([]byte, Res, string) ([]byte, error) {
	return func(dst []byte, r Res, _ string) ([]byte, error) { return f(dst, r) }
}

// unaryOps are the unary methods of A2AService.
var unaryOps = map[string]unaryOp{
	binding.Method10SendMessage: op(decodeSend, func(p *a2a.SendMessageRequest) (*string, string) { return &p.Tenant, p.Message.TaskID },
		binding.Handler.SendMessage, asIs(pb.AppendSendMessageResponse)),
	binding.Method10GetTask: op(pb.DecodeGetTaskRequest, func(p *a2a.GetTaskRequest) (*string, string) { return &p.Tenant, p.ID },
		binding.Handler.GetTask, asIs(pb.AppendTask)),
	binding.Method10ListTasks: op(pb.DecodeListTasksRequest, func(p *a2a.ListTasksRequest) (*string, string) { return &p.Tenant, "" },
		func(h binding.Handler, ctx context.Context, p a2a.ListTasksRequest) (listed, error) {
			r, err := h.ListTasks(ctx, p)
			return listed{r, p.IncludeArtifacts}, err
		},
		asIs(func(dst []byte, l listed) ([]byte, error) { return pb.AppendListTasksResponse(dst, l.r, l.artifacts) })),
	binding.Method10CancelTask: op(pb.DecodeCancelTaskRequest, func(p *a2a.CancelTaskRequest) (*string, string) { return &p.Tenant, p.ID },
		binding.Handler.CancelTask, asIs(pb.AppendTask)),
	binding.Method10CreatePushConfig: op(func(b []byte) (a2a.TaskPushNotificationConfig, error) {
		c, err := pb.DecodeTaskPushNotificationConfig(b)
		c.PushNotificationConfig.ProtocolVersion = a2a.Version10 // its notifications take the 1.0 shape
		return c, err
	}, func(p *a2a.TaskPushNotificationConfig) (*string, string) { return &p.Tenant, p.TaskID },
		binding.Handler.CreateTaskPushNotificationConfig, appendPushConfig),
	binding.Method10GetPushConfig: op(pb.DecodePushConfigIDRequest, func(p *a2a.GetTaskPushNotificationConfigRequest) (*string, string) { return &p.Tenant, p.TaskID },
		func(h binding.Handler, ctx context.Context, p a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
			c, err := h.GetTaskPushNotificationConfig(ctx, p)
			return c, edge.PushConfigErr10(err)
		}, appendPushConfig),
	binding.Method10DeletePushConfig: op(pb.DecodePushConfigIDRequest, func(p *a2a.GetTaskPushNotificationConfigRequest) (*string, string) { return &p.Tenant, p.TaskID },
		func(h binding.Handler, ctx context.Context, p a2a.GetTaskPushNotificationConfigRequest) (struct{}, error) {
			return struct{}{}, edge.PushConfigErr10(h.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigRequest(p)))
		},
		func([]byte, struct{}, string) ([]byte, error) { return []byte{}, nil }), // google.protobuf.Empty: no bytes
	binding.Method10ListPushConfigs: op(pb.DecodeListTaskPushNotificationConfigsRequest, func(p *a2a.ListTaskPushNotificationConfigsRequest) (*string, string) { return &p.Tenant, p.TaskID },
		binding.Handler.ListTaskPushNotificationConfigs,
		func(dst []byte, cs []a2a.TaskPushNotificationConfig, tenant string) ([]byte, error) {
			for i := range cs {
				cs[i].Tenant = tenant
			}
			return pb.AppendListTaskPushNotificationConfigsResponse(dst, cs, "")
		}),
	binding.Method10GetExtendedCard: nil, // set by init: it reads the Server's agent
}

func init() {
	unaryOps[binding.Method10GetExtendedCard] = func(ctx context.Context, s *Server, method string, b []byte) ([]byte, error) {
		tenant, err := pb.DecodeGetExtendedAgentCardRequest(b)
		if err != nil {
			return nil, err
		}
		c, err := s.open(ctx, method, &tenant, "", false)
		if err != nil {
			return nil, err
		}
		defer c.end()
		card, err := c.t.Agent.GetExtendedAgentCard(c.ctx)
		if err == nil && c.t.Agent.SignCard != nil {
			err = sign(c.ctx, c.t.Agent.SignCard, card)
		}
		if err == nil {
			b, err = pb.AppendAgentCard(nil, card)
		}
		if err != nil {
			return nil, c.fail(err)
		}
		if md := c.applied(); md != nil {
			_ = gogrpc.SetHeader(ctx, md)
		}
		return b, nil
	}
}

// sign adds to card the signature of its A2A 1.0 JSON (A2A 1.0 §8.4), as
// the other bindings serve it.
func sign(ctx context.Context, signCard func(context.Context, []byte) ([]byte, error), card *a2a.AgentCard) error {
	b, err := v10.MarshalAgentCard(card, v10.CardOptions{})
	if err == nil {
		b, err = signCard(ctx, b)
	}
	if err != nil {
		return err
	}
	var signed struct {
		Signatures []struct {
			Protected string         `json:"protected"`
			Signature string         `json:"signature"`
			Header    map[string]any `json:"header"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(b, &signed); err != nil {
		return err
	}
	c := *card
	c.Signatures = nil
	for _, s := range signed.Signatures {
		c.Signatures = append(c.Signatures, a2a.AgentCardSignature{Protected: s.Protected, Signature: s.Signature, Header: s.Header})
	}
	*card = c
	return nil
}

// appendPushConfig encodes a push notification config with the request's
// tenant as sent.
func appendPushConfig(dst []byte, c *a2a.TaskPushNotificationConfig, tenant string) ([]byte, error) {
	cc := *c
	cc.Tenant = tenant
	return pb.AppendTaskPushNotificationConfig(dst, &cc)
}

// decodeSend decodes a SendMessageRequest; a push notification config in
// it is a 1.0 config (edge.PushIn10).
func decodeSend(b []byte) (a2a.SendMessageRequest, error) {
	p, err := pb.DecodeSendMessageRequest(b)
	return edge.PushIn10(p), err
}

// listed is a ListTasks result with whether its tasks carry artifacts.
type listed struct {
	r         *a2a.ListTasksResponse
	artifacts bool
}

// streamHandler answers one streaming method: each event a StreamResponse.
func (s *Server) streamHandler(method string) gogrpc.StreamHandler {
	return func(_ any, stream gogrpc.ServerStream) (err error) {
		ctx := stream.Context()
		defer s.recover(ctx, method, &err)
		var req Frame
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		if err := checkVersion(ctx); err != nil {
			return statusOf(ctx, err)
		}
		c, events, err := s.openStream(ctx, method, req.B)
		if err != nil {
			return statusOf(ctx, err)
		}
		defer c.end()
		tc := telemetry.CallFrom(c.ctx)
		tc.StreamOpened(c.ctx)
		// A caller that activates the event-log extension gets each
		// event's sequence number with it, to resume from (last-event-id).
		withSeq := slices.Contains(c.ext.Requested(), a2a.ExtensionEventLog)
		if md := c.applied(); md != nil {
			_ = stream.SetHeader(md)
		}
		for ev, err := range events {
			if err != nil {
				return statusOf(ctx, c.fail(err))
			}
			// A buffer of its own per frame: grpc-go may still be
			// writing one when SendMsg returns.
			var b []byte
			if withSeq {
				b, err = pb.AppendStreamResponseSeq(nil, ev.Event, ev.Seq)
			} else {
				b, err = pb.AppendStreamResponse(nil, ev.Event)
			}
			if err != nil {
				return statusOf(ctx, c.fail(err))
			}
			if err := stream.SendMsg(&Frame{B: b}); err != nil {
				tc.SetCanceled()
				return err
			}
			tc.Event()
		}
		return nil
	}
}

// openStream decodes the request of a streaming method, finds its agent
// and opens its events. On an error after the agent was found, the call
// is returned too (to be ended).
func (s *Server) openStream(ctx context.Context, method string, req []byte) (*call, iter.Seq2[binding.StreamEvent, error], error) {
	if method == binding.Method10SendStreamingMessage {
		p, err := decodeSend(req)
		if err != nil {
			return nil, nil, err
		}
		c, err := s.open(ctx, method, &p.Tenant, p.Message.TaskID, true)
		if err != nil {
			return nil, nil, err
		}
		events, err := c.t.Agent.SendStreamingMessage(c.ctx, p)
		if err != nil {
			err = c.fail(err) // recorded on the call before it ends
			c.end()
			return nil, nil, err
		}
		return c, events, nil
	}
	p, err := pb.DecodeSubscribeToTaskRequest(req)
	if err != nil {
		return nil, nil, err
	}
	var opts binding.SubscribeOptions
	if v := metadata.ValueFromIncomingContext(ctx, MetadataLastEventID); len(v) > 0 {
		seq, err := strconv.ParseInt(v[0], 10, 64)
		if err != nil || seq < 0 {
			return nil, nil, a2a.InvalidParams(MetadataLastEventID, "last-event-id must be a non-negative event sequence number")
		}
		opts.From = &seq
	}
	c, err := s.open(ctx, method, &p.Tenant, p.ID, true)
	if err != nil {
		return nil, nil, err
	}
	events, err := c.t.Agent.SubscribeToTask(c.ctx, p, opts)
	if err != nil {
		err = c.fail(err)
		c.end()
		return nil, nil, err
	}
	return c, events, nil
}

// checkVersion refuses an A2A-Version other than 1.x (A2A 1.0 §3.6): the
// gRPC binding of 0.3 is another service (a2a.v1), not served here.
func checkVersion(ctx context.Context) error {
	v := metadata.ValueFromIncomingContext(ctx, MetadataVersion)
	if len(v) == 0 {
		return nil
	}
	raw := strings.TrimSpace(v[0])
	if mm, ok := edge.MajorMinor(raw); raw == "" || ok && mm == a2a.Version10 {
		return nil
	}
	return a2a.ErrVersionNotSupported.WithMessage("A2A-Version %q is not supported over gRPC: this service speaks 1.0", edge.PrintableASCII(raw, 40))
}

// statusOf is the gRPC status of err (A2A 1.0 §5.4, §10.6): an *a2a.Error
// with its code's status and an ErrorInfo (and, from Unauthenticated,
// its challenges in the trailer of the call of ctx); anything else is
// INTERNAL, without its text.
func statusOf(ctx context.Context, err error) error {
	if _, ok := status.FromError(err); ok && !isA2A(err) {
		return err // already a status (NotFound, Unavailable, grpc-go's own)
	}
	var ch *challenged
	if errors.As(err, &ch) && len(ch.challenges) > 0 {
		_ = gogrpc.SetTrailer(ctx, metadata.MD{"www-authenticate": ch.challenges})
	}
	var e *a2a.Error
	if !errors.As(err, &e) {
		e = a2a.ErrInternal
	}
	st := status.New(grpcCode(e.Code), e.Message)
	info := &errdetails.ErrorInfo{Reason: a2a.Reason(e.Code), Domain: "a2a-protocol.org"}
	if data, ok := e.Data.(map[string]any); ok {
		for k, v := range data {
			if s, ok := v.(string); ok {
				if info.Metadata == nil {
					info.Metadata = map[string]string{}
				}
				info.Metadata[k] = s
			}
		}
	}
	if info.Reason == "" {
		return st.Err()
	}
	if withInfo, err := st.WithDetails(info); err == nil {
		st = withInfo
	}
	return st.Err()
}

func isA2A(err error) bool {
	var e *a2a.Error
	return errors.As(err, &e)
}

// grpcCode is the gRPC status code of an A2A error code (A2A 1.0 §5.4).
func grpcCode(code int) codes.Code { return codes.Code(grpcdial.StatusFor(code)) }
