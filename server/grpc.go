package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/binding"
	"github.com/a2abridge/a2abridge/internal/binding/edge"
	grpcbinding "github.com/a2abridge/a2abridge/internal/binding/grpc"
	"github.com/a2abridge/a2abridge/internal/telemetry"
)

// GRPCServiceName is the gRPC service of A2A 1.0 that a GRPCServer
// serves (a2a.proto).
const GRPCServiceName = grpcbinding.ServiceName

// GRPCOptions configure the gRPC binding of a Host's agents (A2A 1.0 §10;
// Host.EnableGRPC). The zero value serves with the defaults below and
// names the HTTP port in cards.
type GRPCOptions struct {
	// PublicAddr is the gRPC target (HOST:PORT, no scheme, no path; what
	// the official clients dial) written as the url of each agent's
	// GRPC interface in its card. "": the host of Host.BaseURL with Port.
	PublicAddr string
	// Port is the port of that target when PublicAddr is empty; 0: the
	// port of Host.BaseURL (gRPC served on the HTTP port, see
	// SplitListener).
	Port int
	// MaxRecvBytes bounds a received message, in bytes: a larger one is
	// answered RESOURCE_EXHAUSTED before it is decoded. 0: the Host's
	// TransportOptions.MaxBodyBytes.
	MaxRecvBytes int
	// KeepAliveTime is how long a connection may be idle before the
	// server pings it (0: 2 hours), and KeepAliveTimeout how long the
	// ping may stay unanswered before the connection and its streams
	// close (0: 20 s).
	KeepAliveTime, KeepAliveTimeout time.Duration
	// MinPingInterval is the shortest interval at which a client may ping
	// before it is disconnected (0: 5 minutes).
	MinPingInterval time.Duration
	// MaxConcurrentStreams bounds the calls open at once on one
	// connection (0: 1000).
	MaxConcurrentStreams uint32
	// TLSConfig, if set, makes Serve's connections TLS (a listener of its
	// own); nil: cleartext HTTP/2. ServeHTTP's come with their server's.
	TLSConfig *tls.Config
}

// GRPCServer serves a Host's agents over the gRPC binding of A2A 1.0
// (lf.a2a.v1.A2AService, every method), with the standard health service
// (grpc.health.v1.Health) and server reflection (v1 and v1alpha).
//
// A request reaches the agent its tenant names (A2A 1.0 §3.2): tenant
// "NAME" is the agent hosted as NAME with the default tenant, and
// "NAME/T" that agent with tenant T (as the HTTP+JSON path
// /a2a/NAME/T/… is); an empty tenant is the Host's default agent. Cards
// list a GRPC interface for each agent with its name as the tenant, which
// the official clients copy into every request. A tenant naming no agent
// gets NOT_FOUND, as does a message to a retired agent.
//
// Each agent's authentication reads the call's metadata as HTTP reads
// headers (authorization: Bearer …, an API key's header, lower case);
// a2a-version must be absent or 1.x; a2a-extensions activates extensions
// and the response's header lists those applied; last-event-id resumes
// SubscribeToTask after that event (a2a.ExtensionEventLog). Errors are
// statuses with a google.rpc.ErrorInfo (A2A 1.0 §5.4, §10.6).
type GRPCServer struct {
	s    *grpcbinding.Server
	host *Host
	opts GRPCOptions
}

// EnableGRPC makes the Host's GRPCServer: from then on cards list a GRPC
// interface per agent, and ServeHTTP passes gRPC requests that reach it
// over HTTP/2 (TLS) to the server. Serve it on a listener of its own, or
// on the HTTP port's with SplitListener. Call it once, before serving;
// later calls return the same server and ignore opts.
func (host *Host) EnableGRPC(opts GRPCOptions) *GRPCServer {
	host.mu.Lock()
	defer host.mu.Unlock()
	if g := host.grpc.Load(); g != nil {
		return g
	}
	if opts.MaxRecvBytes <= 0 {
		opts.MaxRecvBytes = int(min(host.opts.Transport.MaxBodyBytes, 1<<30))
	}
	g := &GRPCServer{host: host, opts: opts}
	g.s = grpcbinding.NewServer(grpcbinding.Options{Resolve: host.resolveGRPC, Logger: host.opts.Transport.Logger,
		MaxRecvBytes: opts.MaxRecvBytes, KeepAliveTime: opts.KeepAliveTime, KeepAliveTimeout: opts.KeepAliveTimeout,
		MinPingInterval: opts.MinPingInterval, MaxConcurrentStreams: opts.MaxConcurrentStreams, TLSConfig: opts.TLSConfig})
	host.grpc.Store(g)
	return g
}

// Serve accepts gRPC connections (HTTP/2, cleartext) on ln until Stop or
// GracefulStop, after which it returns nil.
func (g *GRPCServer) Serve(ln net.Listener) error { return g.s.Serve(ln) }

// ServeHTTP answers a gRPC request an HTTP/2 server of net/http received
// (Host.ServeHTTP passes them): slower than Serve, which owns its
// connections, but it shares a TLS port with HTTP.
func (g *GRPCServer) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.s.ServeHTTP(w, r) }

// GracefulStop stops taking calls (the health service turns NOT_SERVING)
// and waits for the open ones until ctx ends, then closes every
// connection. Streams stay open while their tasks run: end those first
// (Engine.Shutdown ends them at its grace).
func (g *GRPCServer) GracefulStop(ctx context.Context) { g.s.GracefulStop(ctx) }

// Stop closes every gRPC connection and listener at once.
func (g *GRPCServer) Stop() { g.s.Stop() }

// SplitListener divides the connections of ln, a listener shared by HTTP
// and gRPC: those that open with the HTTP/2 preface (cleartext HTTP/2
// with prior knowledge, as gRPC clients talk without TLS) are accepted
// from grpc, the others (HTTP/1.x) from rest, each with every byte it
// sent. A connection that has sent nothing telling within timeout goes
// to rest. Each listener closes on its own; ln closes when both have.
func SplitListener(ln net.Listener, timeout time.Duration) (grpc, rest net.Listener) {
	return grpcbinding.Split(ln, timeout)
}

// grpcInterface is the GRPC interface of the agent named tenant in cards
// answering r; ok is false when the Host serves no gRPC (or no A2A 1.0).
func (host *Host) grpcInterface(r *http.Request, tenant string) (a2a.AgentInterface, bool) {
	g := host.grpc.Load()
	if g == nil || !servesV10(host.opts.Transport.ProtocolVersions) {
		return a2a.AgentInterface{}, false
	}
	addr := g.opts.PublicAddr
	if addr == "" {
		u, err := url.Parse(host.BaseURL(r))
		if err != nil {
			return a2a.AgentInterface{}, false
		}
		port := u.Port()
		switch {
		case g.opts.Port != 0:
			port = strconv.Itoa(g.opts.Port)
		case port == "" && u.Scheme == "https":
			port = "443"
		case port == "":
			port = "80"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	return a2a.AgentInterface{URL: addr, Transport: a2a.TransportGRPC, ProtocolVersion: a2a.Version10, Tenant: tenant}, true
}

func servesV10(served []string) bool {
	for _, v := range served {
		if v == a2a.Version10 {
			return true
		}
	}
	return false
}

// cardPlace is where the agent of h, served below prefix, is reachable
// for the requests it answers: its URL, the versions served and, when the
// Host serves gRPC and the agent is reached by its name (Add, not Mount),
// its GRPC interface.
func (host *Host) cardPlace(h *AgentHandler, prefix string) edge.CardPlace {
	byName := prefix == "/a2a/"+h.name
	return func(ctx context.Context, r *http.Request) context.Context {
		ctx = context.WithValue(ctx, edge.CardURLKey{}, host.BaseURL(r)+prefix)
		ctx = context.WithValue(ctx, edge.ServedKey{}, host.opts.Transport.ProtocolVersions)
		if byName {
			if gi, ok := host.grpcInterface(r, h.name); ok {
				ctx = context.WithValue(ctx, edge.GRPCKey{}, gi)
			}
		}
		return ctx
	}
}

// resolveGRPC finds the agent of a gRPC request by its tenant (see
// GRPCServer), starts its telemetry call, authenticates it and puts in
// its context where the agent is reachable.
func (host *Host) resolveGRPC(r *grpcbinding.Request) (grpcbinding.Target, error) {
	name, inner, _ := strings.Cut(r.Tenant, "/")
	var a *hostedAgent
	if r.Tenant == "" {
		a = host.defaultAgent()
	} else {
		host.mu.RLock()
		a = host.agents[name]
		host.mu.RUnlock()
	}
	if a == nil {
		return grpcbinding.Target{}, grpcbinding.NotFound(host.noAgentMessage(name))
	}
	h := a.h
	ctx := r.Context()
	var c *telemetry.Call
	if tel := h.e.Telemetry(); tel != nil {
		ctx, c = tel.StartCall(r.HTTP(), h.name, grpcbinding.Binding)
		c.SetMethod(r.Method, a2a.Version10, r.Stream)
	}
	if !servesV10(host.opts.Transport.ProtocolVersions) {
		e := a2a.ErrVersionNotSupported.WithMessage("A2A 1.0 is not served here: the gRPC binding speaks 1.0 only (the versions served: %s)", strings.Join(host.opts.Transport.ProtocolVersions, ", "))
		edge.NoteError(ctx, e)
		c.End()
		return grpcbinding.Target{}, e
	}
	// refused reports whether the Limiter refuses the call of p, and the
	// error to answer then.
	refused := func(p *auth.Principal) (*a2a.Error, bool) {
		lim := h.opts.Limiter
		if lim == nil {
			return nil, false
		}
		wait, ok := lim.Allow(r.HTTP(), p)
		if ok {
			return nil, false
		}
		h.noteLimited()
		e, _ := RateLimited(wait)
		edge.NoteError(ctx, e)
		c.End()
		return e, true
	}
	if set := h.opts.Auth; len(set) > 0 {
		p, err := set.Authenticate(r.HTTP())
		if err != nil {
			// Counted by the client's address, as over HTTP.
			if e, ok := refused(nil); ok {
				return grpcbinding.Target{}, e
			}
			if errors.Is(err, auth.ErrUnavailable) {
				host.opts.Transport.Logger.ErrorContext(ctx, "authentication unavailable", "agent", h.name, "err", err)
				c.SetError(a2a.CodeInternalError, "authentication unavailable")
				c.End()
				return grpcbinding.Target{}, grpcbinding.Unavailable("Authentication is temporarily unavailable")
			}
			e := a2a.ErrUnauthenticated
			if errors.Is(err, auth.ErrInvalidCredentials) {
				e = e.WithMessage("Invalid credentials: %s", auth.Reason(err))
			}
			edge.NoteError(ctx, e)
			c.End()
			return grpcbinding.Target{}, grpcbinding.Unauthenticated(e, set.ChallengesFor(err))
		}
		ctx = auth.NewContext(ctx, p)
	}
	caller, _ := auth.FromContext(ctx)
	if e, ok := refused(caller); ok {
		return grpcbinding.Target{}, e
	}
	// After authentication, as over HTTP: who may not call the agent does
	// not learn that it was retired.
	if h.opts.Retired && (r.Method == binding.Method10SendMessage || r.Method == binding.Method10SendStreamingMessage) {
		c.SetError(a2a.CodeTaskNotFound, "agent not found")
		c.End()
		return grpcbinding.Target{}, grpcbinding.NotFound(host.noAgentMessage(name))
	}
	if r.Method == binding.Method10GetExtendedCard {
		ctx = host.cardPlace(h, "/a2a/"+h.name)(ctx, r.HTTP())
	}
	if h.opts.Attachments != nil && h.opts.Attachments.PublicURL == "" {
		hr := r.HTTP()
		ctx = context.WithValue(ctx, attachBaseKey{}, func() string { return host.BaseURL(hr) })
	}
	return grpcbinding.Target{Agent: a.grpc, Tenant: inner, Ctx: ctx, End: c.End}, nil
}

// noAgentMessage is the message of a gRPC request for an agent that is
// not hosted (or retired): the agents a client may try, as the HTTP 404
// of an unknown agent lists them.
func (host *Host) noAgentMessage(name string) string {
	if len(name) > 100 {
		name = name[:100] + "…"
	}
	var names []string
	for _, n := range host.ListedAgents() {
		names = append(names, strconv.Quote(n))
	}
	msg := fmt.Sprintf("No agent named %q is hosted here: the request's tenant names the agent (\"NAME\" or \"NAME/TENANT\")", strings.ToValidUTF8(name, "\uFFFD"))
	if len(names) > 0 {
		msg += "; the agents are " + strings.Join(names, ", ")
	}
	return msg
}
