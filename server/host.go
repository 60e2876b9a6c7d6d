package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2abridge/a2abridge/internal/binding/edge"
	grpcbinding "github.com/a2abridge/a2abridge/internal/binding/grpc"
	"github.com/a2abridge/a2abridge/internal/binding/rest"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/forwarded"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	wirecard "github.com/a2abridge/a2abridge/internal/wire/card"
	v03 "github.com/a2abridge/a2abridge/internal/wire/v03"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// DefaultCardMaxAge is how long clients and caches may reuse a served
// Agent Card without asking again (HostOptions.CardMaxAge; A2A 1.0
// §8.6.1): 5 minutes.
const DefaultCardMaxAge = 5 * time.Minute

// HostOptions configure a Host. The zero value is ready to use.
type HostOptions struct {
	// PublicURL is the externally reachable base URL (scheme://host[:port][/prefix])
	// written into agent cards. It wins over everything below, and cards
	// are then the same for every request. Empty: derived per request
	// (Host.BaseURL) from what the caller may choose only within these
	// options: a trusted proxy's forwarding headers, an allowed Host
	// header, else the address the connection reached.
	PublicURL string
	// TrustedProxies are the networks (CIDR prefixes; a single address is
	// a /32 or /128) of the reverse proxies in front of the Host. Only
	// when a request's immediate peer (its RemoteAddr) is in one of them
	// are its forwarding headers believed: X-Forwarded-Proto and
	// X-Forwarded-Host, or, when it sends neither, proto= and host= of the
	// RFC 7239 Forwarded header; each from its last (rightmost) value, the
	// one the nearest proxy wrote. Such a proxy must set or remove these
	// headers, not pass a client's through. Empty: no peer is trusted and
	// forwarding headers are ignored.
	TrustedProxies []netip.Prefix
	// AllowedHosts are the names clients use to reach the Host: "HOST"
	// matches that host name or IP on any port, "HOST:PORT" (or
	// "[IPv6]:PORT") only on that port; case is ignored. A Host header is
	// written into cards only when it matches one, and, when the list is
	// not empty, so is a trusted proxy's forwarded host. Whatever the
	// list, a loopback name (localhost, *.localhost, 127.0.0.0/8, ::1) in
	// the Host header is accepted on a connection to a loopback address,
	// so that local clients get back the URL they used. Entries that are
	// not host names or IP addresses are ignored (HostOptions.Validate
	// reports them).
	AllowedHosts []string
	// Default names the agent that also answers at "/" and
	// "/.well-known/agent-card.json"; empty: the first agent added.
	Default string
	// Transport configures the JSON-RPC transport of every agent.
	Transport TransportOptions
	// JWKS, if set, is served at GET /.well-known/jwks.json (JWKSPath):
	// the public keys that verify push notification JWTs
	// (push.Signer.Handler) and, with Transport.CardSigner, the card
	// signing key, which it must then include. nil with a CardSigner:
	// CardSigner.Handler is served there.
	JWKS http.Handler
	// CardMaxAge is how long a client or cache may reuse an Agent Card
	// (the public card at the well-known URLs, and the extended card of
	// the HTTP+JSON bindings' GET extendedAgentCard and GET /v1/card)
	// without asking again: its Cache-Control max-age, in whole seconds
	// (A2A 1.0 §8.6.1). 0 means DefaultCardMaxAge; negative means
	// "no-cache" (clients revalidate every time). Cards also carry a
	// strong ETag of the bytes served and Last-Modified (when the agent
	// was added to the Host), and conditional requests (If-None-Match,
	// If-Modified-Since) whose card is unchanged get 304 Not Modified.
	// The public card is "public" unless HandlerOptions.CardRequiresAuth;
	// that one and the extended card are "private".
	CardMaxAge time.Duration
}

// Validate reports the first entry of AllowedHosts that NewHost would
// ignore: one that is not HOST, HOST:PORT, an IPv6 address or
// [IPv6]:PORT, with a port from 1 to 65535; a Transport.ProtocolVersions
// value that is not 1.0 or 0.3 (NewHost panics on it); and a
// Transport.CardSigner with 0.3 alone (a signature covers the A2A 1.0
// members of a card only, and a 0.3 card has none that name its
// interfaces).
func (o HostOptions) Validate() error {
	for _, a := range o.AllowedHosts {
		if err := forwarded.CheckAllowedHost(a); err != nil {
			return err
		}
	}
	vs, err := servedVersions(o.Transport.ProtocolVersions)
	if err != nil {
		return err
	}
	if o.Transport.CardSigner != nil && !slices.Contains(vs, a2a.Version10) {
		return errors.New("card signing needs A2A 1.0 served: a signature covers a card's A2A 1.0 members only")
	}
	return nil
}

// Host serves several agents over HTTP, each under /a2a/{name}:
//
//	POST /a2a/{name}                                  JSON-RPC 2.0 (A2A 0.3.0 §7)
//	GET  /a2a/{name}/.well-known/agent-card.json      Agent Card (§5.3)
//	GET  /a2a/{name}/tasks/{id}/events?from=N         SSE: the events after sequence N, then live events
//
// and the default agent also at POST / and GET /.well-known/agent-card.json
// (the legacy /.well-known/agent.json too), and at the short routes
//
//	POST /rpc                                         JSON-RPC 2.0, as POST /
//	GET  /stream/{id}?from=N                          its task's events, as /a2a/{name}/tasks/{id}/events
//	     /v1/…                                        the HTTP+JSON binding of A2A 0.3.0 (rest03.go), as /a2a/{name}/v1/…
//
// Below /a2a/{name}/ are also served the HTTP+JSON binding of A2A 1.0
// (rest.go; /message:send, /tasks/{id}, …, each also below /{tenant}) and
// that of A2A 0.3.0 (/v1/message:send, …).
// Any path under /a2a/{name} for
// a name that is not hosted gets HTTP 404 with a JSON list of the agents.
type Host struct {
	opts    HostOptions
	origin  *forwarded.Origin // BaseURL's
	mux     *http.ServeMux
	caching edge.CardCaching

	mu     sync.RWMutex
	agents map[string]*hostedAgent
	order  []string // agent names in the order added
	// defaultSince is when the agent answering at "/" last became
	// another one: the default routes' card changed then.
	defaultSince time.Time
	// grpc is the gRPC server of EnableGRPC; nil until then.
	grpc atomic.Pointer[GRPCServer]
}

// hostedAgent is one agent of a Host: its AgentHandler, the mux of its routes
// below /a2a/{name}, and its routes as the default agent.
type hostedAgent struct {
	h      *AgentHandler
	mux    *http.ServeMux
	routes agentRoutes
	// grpc is the agent as the gRPC binding serves it.
	grpc *edge.Agent
	// added is when the agent was added (whole seconds): its cards'
	// content is fixed from then on, their Last-Modified.
	added time.Time
}

// restRouteKey carries a parsed HTTP+JSON route past authentication.
type restRouteKey struct{}

// agentRoutes are one agent's HTTP handlers, authentication applied.
type agentRoutes struct {
	rpc, card, events http.Handler
	rest03            http.Handler // the 0.3 HTTP+JSON binding below "/"
}

// NewHost returns an empty Host.
func NewHost(opts HostOptions) *Host {
	opts.Transport = opts.Transport.withDefaults()
	if opts.CardMaxAge == 0 {
		opts.CardMaxAge = DefaultCardMaxAge
	}
	opts.PublicURL = strings.TrimRight(opts.PublicURL, "/")
	h := &Host{opts: opts, mux: http.NewServeMux(), agents: map[string]*hostedAgent{},
		origin:  forwarded.New(opts.PublicURL, opts.TrustedProxies, opts.AllowedHosts),
		caching: edge.CardCaching{MaxAge: opts.CardMaxAge, Vary: opts.PublicURL == ""}}
	rpc := h.toDefault(func(r agentRoutes) http.Handler { return r.rpc })
	toCard := h.toDefault(func(r agentRoutes) http.Handler { return r.card })
	card := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The card here changes also when another agent becomes the
		// default one.
		h.mu.RLock()
		since := h.defaultSince
		h.mu.RUnlock()
		toCard(w, r.WithContext(context.WithValue(r.Context(), defaultSinceKey{}, since)))
	})
	h.mux.Handle("POST /{$}", rpc)
	h.mux.Handle("POST /rpc", rpc)
	h.mux.Handle("GET /stream/{id}", h.toDefault(func(r agentRoutes) http.Handler { return r.events }))
	h.mux.Handle("GET /.well-known/agent-card.json", card)
	h.mux.Handle("GET /.well-known/agent.json", card)
	h.mux.Handle("/v1/", h.toDefault(func(r agentRoutes) http.Handler { return r.rest03 }))
	h.mux.HandleFunc("/a2a/", h.serveAgent)
	if opts.JWKS == nil && opts.Transport.CardSigner != nil {
		opts.JWKS = opts.Transport.CardSigner.Handler()
	}
	if opts.JWKS != nil {
		h.mux.Handle("GET "+JWKSPath, opts.JWKS)
	}
	return h
}

// Add mounts h under /a2a/{h.Name()}, which must be one path segment
// without "/", "{" or "}". An agent already hosted under that name is
// replaced (its AgentHandler is no longer reached; requests it is serving
// finish). Add and Remove are safe concurrently with ServeHTTP and each
// other: agents can be added and removed while the Host serves.
func (host *Host) Add(h *AgentHandler) {
	name := h.Name()
	ha := host.routesAt(h, "/a2a/"+name)
	host.mu.Lock()
	defer host.mu.Unlock()
	before := host.defaultName()
	if _, ok := host.agents[name]; !ok {
		host.order = append(host.order, name)
	}
	host.agents[name] = ha
	if host.defaultName() != before {
		host.defaultSince = ha.added
	}
}

// defaultName is the name of the agent answering at "/" ("" for none);
// host.mu is held.
func (host *Host) defaultName() string {
	if _, ok := host.agents[host.opts.Default]; ok {
		return host.opts.Default
	}
	if len(host.order) > 0 {
		return host.order[0]
	}
	return ""
}

// defaultSinceKey carries Host.defaultSince to the default routes' card.
type defaultSinceKey struct{}

// Mount returns an http.Handler serving h's routes below prefix, as Add
// serves them below /a2a/{name}: POST prefix (JSON-RPC, both versions),
// the HTTP+JSON bindings below prefix/, GET prefix/.well-known/agent-card.json
// (the card's URLs are BaseURL(r)+prefix) and prefix/tasks/{id}/events,
// with h's authentication. prefix is an escaped path starting with "/",
// without a trailing "/", and without "{" or "}" (http.ServeMux pattern
// syntax); a path below it that names no route gets the binding's 404.
// The agent is not listed by Agents nor reachable below /a2a/: the
// caller routes requests to the handler it gets, for example from a
// pattern of Handle. Routes for a name in the URL, such as the
// conversation bridge's /api/bridge/{config64}/a2a, are built this way.
// It panics on a prefix ServeMux cannot register.
func (host *Host) Mount(h *AgentHandler, prefix string) http.Handler {
	return host.routesAt(h, strings.TrimRight(prefix, "/")).mux
}

// routesAt builds h's routes below prefix.
func (host *Host) routesAt(h *AgentHandler, prefix string) *hostedAgent {
	mux := http.NewServeMux()
	added := time.Now().Truncate(time.Second)
	place := host.cardPlace(h, prefix)
	rpc := host.withAttachBase(h, newJSONRPCHandler(h, host.opts.Transport, place,
		func(w http.ResponseWriter, r *http.Request) { host.serveUnknownAgent(w, r, h.Name()) }))
	mux.Handle(prefix, rpc)
	mux.Handle(prefix+"/{$}", rpc) // tolerate a trailing slash
	var card http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { host.serveCard(w, r, h, prefix, added) })
	if h.opts.CardRequiresAuth {
		card = authenticate(h, host.opts.Transport.Logger, card, edge.WriteError)
	} else if lim := h.opts.Limiter; lim != nil {
		// A public card is limited too, by the caller's address.
		card = limited(h, lim, card, func(w http.ResponseWriter, _ *http.Request, status int, e *a2a.Error) { edge.WriteError(w, status, e) })
	}
	events := authenticate(h, host.opts.Transport.Logger, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { host.serveEvents(w, r, h) }), edge.WriteError)
	agent, eopts := h.bound(host.opts.Transport), host.opts.Transport.edge()
	rest10 := rest.New(agent, a2a.Version10, eopts, place, host.caching, added)
	rest03 := rest.New(agent, a2a.Version03, eopts, place, host.caching, added)
	agentRest := host.withAttachBase(h, host.restHandler(h, prefix+"/", rest10))
	agentRest03 := host.withAttachBase(h, host.restHandler(h, prefix+"/", rest03))
	mux.Handle(prefix+"/{rest...}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /v1/… is the 0.3 binding, unless the request asks for 1.0: then
		// it is the 1.0 binding with the tenant "v1".
		if v, _, _ := edge.RequestedVersion(r); v != a2a.Version10 && strings.HasPrefix(r.URL.EscapedPath(), prefix+"/v1/") {
			agentRest03.ServeHTTP(w, r)
			return
		}
		agentRest.ServeHTTP(w, r)
	}))
	mux.Handle("GET "+prefix+"/.well-known/agent-card.json", card)
	mux.Handle("GET "+prefix+"/.well-known/agent.json", card)
	mux.Handle("GET "+prefix+"/tasks/{id}/events", events)
	return &hostedAgent{h: h, mux: mux, added: added, grpc: agent, routes: agentRoutes{rpc: rpc, card: card, events: events, rest03: host.withAttachBase(h, host.restHandler(h, "/", rest03))}}
}

// Remove unmounts the agent hosted under name and reports whether there
// was one. Requests it is serving finish; later ones get the 404 of an
// unknown agent. Its tasks stay in the engine's store; Engine.StopAgent
// ends the ones still running.
func (host *Host) Remove(name string) bool {
	host.mu.Lock()
	defer host.mu.Unlock()
	if _, ok := host.agents[name]; !ok {
		return false
	}
	before := host.defaultName()
	delete(host.agents, name)
	host.order = slices.DeleteFunc(host.order, func(n string) bool { return n == name })
	if host.defaultName() != before {
		host.defaultSince = time.Now().Truncate(time.Second)
	}
	return true
}

// Handler returns the AgentHandler of the agent hosted under name.
func (host *Host) Handler(name string) (*AgentHandler, bool) {
	host.mu.RLock()
	defer host.mu.RUnlock()
	a, ok := host.agents[name]
	if !ok {
		return nil, false
	}
	return a.h, true
}

// ProtocolVersions returns the A2A protocol versions the Host serves
// (TransportOptions.ProtocolVersions, normalized: "0.3", "1.0").
func (host *Host) ProtocolVersions() []string {
	return slices.Clone(host.opts.Transport.ProtocolVersions)
}

// Agents returns the names of the hosted agents in the order they were
// added.
func (host *Host) Agents() []string {
	host.mu.RLock()
	defer host.mu.RUnlock()
	return slices.Clone(host.order)
}

// ListedAgents returns the names of the hosted agents that may be named
// to anyone, in the order they were added: not those whose card requires
// authentication (HandlerOptions.CardRequiresAuth), retired ones
// (Retired) or unlisted ones (Unlisted, such as the sides of a pair,
// whose names are their capability). The 404 of an unknown agent and the
// gRPC NOT_FOUND list these.
func (host *Host) ListedAgents() []string {
	host.mu.RLock()
	defer host.mu.RUnlock()
	var names []string
	for _, n := range host.order {
		if o := host.agents[n].h.opts; !o.CardRequiresAuth && !o.Retired && !o.Unlisted {
			names = append(names, n)
		}
	}
	return names
}

// Handle registers handler for pattern (http.ServeMux's pattern syntax)
// beside the A2A routes, for routes of one's own such as an admin API or
// another dialect's endpoint; handler.Authenticated gives them an agent's
// authentication. Patterns below /a2a/ are the agents' and are refused.
// Like http.ServeMux.Handle, it panics when pattern is invalid or
// conflicts with a registered one. It is safe while the Host serves.
func (host *Host) Handle(pattern string, handler http.Handler) {
	_, p, _ := strings.Cut(pattern, " ")
	if p == "" {
		p = pattern
	}
	if i := strings.IndexByte(p, '/'); i >= 0 && strings.HasPrefix(p[i:], "/a2a/") {
		panic(fmt.Sprintf("server: Host.Handle %q: the paths below /a2a/ are the agents'", pattern))
	}
	host.mux.Handle(pattern, handler)
}

// serveAgent routes a request below /a2a/ to its agent's routes, or
// answers the 404 of an unknown agent.
func (host *Host) serveAgent(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/a2a/")
	name, _, _ := strings.Cut(rest, "/")
	host.mu.RLock()
	a := host.agents[name]
	host.mu.RUnlock()
	if a == nil {
		if name == "" {
			http.NotFound(w, r)
			return
		}
		host.serveUnknownAgent(w, r, name)
		return
	}
	a.mux.ServeHTTP(w, r)
}

// restHandler returns the handler of an HTTP+JSON binding t of h for the
// paths below base ("/a2a/{name}/", or "/" for the default agent), routed
// by t.Route. The route is found before authentication: a path that
// names no operation is a 404 for everyone (with a JSON error body in the
// binding's form).
func (host *Host) restHandler(h *AgentHandler, base string, t *rest.Binding) http.Handler {
	serve := authenticateReq(h, host.opts.Transport.Logger, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, _ := r.Context().Value(restRouteKey{}).(rest.Route)
		if h.opts.Retired && (rt.Op == binding.Method10SendMessage || rt.Op == binding.Method10SendStreamingMessage) {
			host.serveUnknownAgent(w, r, h.Name())
			return
		}
		t.Serve(w, r, rt)
	}), t.WriteError)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub, _ := strings.CutPrefix(r.URL.EscapedPath(), base)
		rt, ok := t.Route(r.Method, sub)
		if !ok {
			edge.AbandonBody(w, r)
			t.WriteError(w, r, http.StatusNotFound, a2a.ErrMethodNotFound.WithMessage("No A2A operation at %s %s", r.Method, edge.PrintableASCII(r.URL.Path, 200)))
			return
		}
		ctx := context.WithValue(r.Context(), restRouteKey{}, rt)
		if tel := h.e.Telemetry(); tel != nil {
			var c *telemetry.Call
			ctx, c = tel.StartCall(r, h.name, "HTTP+JSON")
			ctx = context.WithValue(ctx, restRouteKey{}, rt)
			op := rt.Op
			if op == "" {
				op = "unknown"
			}
			c.SetMethod(op, t.Version(), op == binding.Method10SendStreamingMessage || op == binding.Method10SubscribeToTask)
			c.SetTask(rt.TaskID)
			defer c.End()
		}
		serve.ServeHTTP(w, r.WithContext(ctx))
	})
}

// authenticate runs h's authentication before next (A2A 0.3.0 §4.4):
// missing or invalid credentials get HTTP 401 with one WWW-Authenticate
// challenge per scheme and a JSON-RPC error body (-32000); an identity
// provider that cannot be reached gets 503. The principal is put in the
// request's context (auth.FromContext). Without schemes it returns next.
//
// writeErr writes the error in the form of the binding next serves
// (WriteError for JSON-RPC, v10.WriteRESTError for HTTP+JSON).
func authenticate(h *AgentHandler, log *slog.Logger, next http.Handler, writeErr func(http.ResponseWriter, int, *a2a.Error)) http.Handler {
	return authenticateReq(h, log, next, func(w http.ResponseWriter, _ *http.Request, status int, err *a2a.Error) { writeErr(w, status, err) })
}

func authenticateReq(h *AgentHandler, log *slog.Logger, next http.Handler, writeErr func(http.ResponseWriter, *http.Request, int, *a2a.Error)) http.Handler {
	set := h.opts.Auth
	if lim := h.opts.Limiter; lim != nil {
		next = limited(h, lim, next, writeErr)
	}
	if len(set) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := auth.FromContext(r.Context()); ok && p != nil {
			next.ServeHTTP(w, r) // already authenticated by an outer layer
			return
		}
		p, err := set.Authenticate(r)
		if err != nil {
			w.Header().Set("Cache-Control", "no-store")
			// A refused request counts too, by the client's address:
			// guessing credentials is limited like any other use.
			if lim := h.opts.Limiter; lim != nil {
				if wait, ok := lim.Allow(r, nil); !ok {
					refuseLimited(h, w, r, wait, writeErr)
					return
				}
			}
			if errors.Is(err, auth.ErrUnavailable) {
				log.ErrorContext(r.Context(), "authentication unavailable", "agent", h.Name(), "err", err)
				e := a2a.ErrInternal.WithMessage("Authentication is temporarily unavailable")
				writeErr(w, r, http.StatusServiceUnavailable, e)
				edge.NoteError(r.Context(), e)
				return
			}
			for _, c := range set.ChallengesFor(err) {
				w.Header().Add("WWW-Authenticate", c)
			}
			e := a2a.ErrUnauthenticated
			if errors.Is(err, auth.ErrInvalidCredentials) {
				e = e.WithMessage("Invalid credentials: %s", auth.Reason(err))
			}
			writeErr(w, r, http.StatusUnauthorized, e)
			edge.NoteError(r.Context(), e)
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), p)))
	})
}

// limited returns next behind lim (HandlerOptions.Limiter): a refused
// request gets HTTP 429 with Retry-After and a2a.ErrRateLimited, its body
// unread. A request already admitted for h (limitedKey: the routes of one
// agent may nest) is not counted again; another agent's limits still
// apply.
func limited(h *AgentHandler, lim Limiter, next http.Handler, writeErr func(http.ResponseWriter, *http.Request, int, *a2a.Error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(limitedKey{}) == h {
			next.ServeHTTP(w, r)
			return
		}
		p, _ := auth.FromContext(r.Context())
		if wait, ok := lim.Allow(r, p); !ok {
			refuseLimited(h, w, r, wait, writeErr)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), limitedKey{}, h)))
	})
}

// refuseLimited answers a request to h that its Limiter refused: HTTP 429
// with Retry-After and a2a.ErrRateLimited; its body is not read. It is
// counted in a2abridge.limits.refused.
func refuseLimited(h *AgentHandler, w http.ResponseWriter, r *http.Request, wait time.Duration, writeErr func(http.ResponseWriter, *http.Request, int, *a2a.Error)) {
	h.noteLimited()
	e, secs := RateLimited(wait)
	edge.AbandonBody(w, r)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	w.Header().Set("Cache-Control", "no-store")
	writeErr(w, r, http.StatusTooManyRequests, e)
	edge.NoteError(r.Context(), e)
}

// noteLimited counts a request to h that its Limiter refused
// (a2abridge.limits.refused).
func (h *AgentHandler) noteLimited() {
	if h.e != nil {
		h.e.Telemetry().LimitRefused(h.name, "rate")
	}
}

// limitedKey marks a request's context once the Limiter of an agent (the
// value: its *AgentHandler) admitted it.
type limitedKey struct{}

// defaultAgent returns the agent that answers at "/": Default, else the
// first one added; nil when none is hosted.
func (host *Host) defaultAgent() *hostedAgent {
	host.mu.RLock()
	defer host.mu.RUnlock()
	if a, ok := host.agents[host.opts.Default]; ok {
		return a
	}
	if len(host.order) > 0 {
		return host.agents[host.order[0]]
	}
	return nil
}

// ServeHTTP implements http.Handler. A path under /a2a/{name} that names
// no hosted agent gets HTTP 404 with a JSON body that lists the agents
// (serveUnknownAgent); other unknown paths get net/http's plain 404.
//
// With EnableGRPC, a gRPC request (HTTP/2, Content-Type application/grpc)
// goes to the GRPCServer.
func (host *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 2 {
		if g := host.grpc.Load(); g != nil && grpcbinding.IsGRPC(r) {
			g.ServeHTTP(w, r)
			return
		}
	}
	host.mux.ServeHTTP(w, r)
}

// unknownAgentBody is the JSON body of the 404 for an unknown agent.
type unknownAgentBody struct {
	Error   string         `json:"error"`
	Message string         `json:"message"`
	Agents  []agentListing `json:"agents"`
}

// agentListing is one hosted agent in unknownAgentBody.
type agentListing struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	Card string `json:"card"`
}

// serveUnknownAgent answers a request under /a2a/{name} for an agent that
// is not hosted: HTTP 404 and
//
//	{"error":"agent not found","message":"No agent named \"x\" is hosted here …",
//	 "agents":[{"name":"echo","url":"http://…/a2a/echo","card":"http://…/a2a/echo/.well-known/agent-card.json"},…]}
//
// with the URLs from BaseURL. Agents whose card requires authentication,
// and retired ones (HandlerOptions.Retired), are not listed. The body of the request, if any, is not read.
func (host *Host) serveUnknownAgent(w http.ResponseWriter, r *http.Request, name string) {
	edge.AbandonBody(w, r)
	base := host.BaseURL(r)
	if len(name) > 100 {
		name = name[:100] + "…"
	}
	body := unknownAgentBody{Error: "agent not found", Agents: []agentListing{},
		Message: fmt.Sprintf("No agent named %q is hosted here; the agents are listed in \"agents\"", strings.ToValidUTF8(name, "\uFFFD"))}
	for _, n := range host.ListedAgents() {
		u := base + "/a2a/" + n
		body.Agents = append(body.Agents, agentListing{Name: n, URL: u, Card: u + "/.well-known/agent-card.json"})
	}
	b, err := json.Marshal(body, json.Deterministic(true))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	host.varyOnBaseURL(w)
	w.Header().Set("Cache-Control", "no-cache")
	edge.WriteJSON(w, http.StatusNotFound, b)
}

// retiredAgent answers a message to a retired agent served outside a
// Host: HTTP 404 as for an unknown agent, with no agents listed.
func retiredAgent(w http.ResponseWriter, r *http.Request, name string) {
	edge.AbandonBody(w, r)
	b, _ := json.Marshal(unknownAgentBody{Error: "agent not found", Agents: []agentListing{},
		Message: fmt.Sprintf("No agent named %q is hosted here", strings.ToValidUTF8(name, "\uFFFD"))}, json.Deterministic(true))
	w.Header().Set("Cache-Control", "no-cache")
	edge.WriteJSON(w, http.StatusNotFound, b)
}

// toDefault returns the handler that passes a request to one of the
// default agent's routes (pick), or answers 404 when no agent is hosted.
func (host *Host) toDefault(pick func(agentRoutes) http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a := host.defaultAgent()
		if a == nil {
			http.NotFound(w, r)
			return
		}
		pick(a.routes).ServeHTTP(w, r)
	}
}

// BaseURL returns the base URL (scheme://host[:port], or PublicURL with
// its prefix; no trailing slash) that agent cards (A2A 0.3.0 §5.3, §5.6)
// and the extended card name for r, and under which the 404 for an
// unknown agent lists the agents. It is PublicURL when set. Otherwise:
//
//   - the scheme is a trusted proxy's X-Forwarded-Proto when it is http
//     or https, else https on TLS, else http;
//   - the host is a trusted proxy's X-Forwarded-Host when AllowedHosts is
//     empty or it matches them; else the
//     Host header when it matches AllowedHosts, or when it is a loopback
//     name on a connection to a loopback address; else the local address
//     the connection reached (http.LocalAddrContextKey); else "localhost".
//
// A proxy is trusted when r.RemoteAddr is in TrustedProxies; one that
// sends neither X-Forwarded-Host nor X-Forwarded-Proto may send RFC 7239
// Forwarded instead (its host= and proto=). A value that
// is not HOST[:PORT] or [IPv6][:PORT] is never used, so the result is
// always a valid URL. Without PublicURL it depends on the request's Host,
// X-Forwarded-Host, X-Forwarded-Proto and Forwarded headers, which answers
// that carry it name in Vary.
func (host *Host) BaseURL(r *http.Request) string { return host.origin.BaseURL(r) }

// varyOnBaseURL names in Vary the request headers BaseURL reads (none
// with PublicURL): a shared cache must not hand one client a URL that
// another chose.
func (host *Host) varyOnBaseURL(w http.ResponseWriter) { host.origin.Vary(w) }

// ServedInterfaces lists the protocol bindings and versions every agent
// serves at its URL, preferred first: JSON-RPC 1.0, HTTP+JSON 1.0
// (REST paths below the URL), JSON-RPC 0.3 and HTTP+JSON 0.3 (the /v1/…
// paths below the URL) (A2A 1.0 §4.4.2, §5; A2A 0.3.0 §3.2.3). The 1.0
// entries come first: @a2a-js/sdk 1.x picks, per binding, the entry of
// protocol version 1.0, else the first one listed
// (interop/V1_WIRE_NOTES.md §2).
func ServedInterfaces(url string) []a2a.AgentInterface {
	return servedInterfaces(url, edge.ServedVersions)
}

// servedInterfaces is ServedInterfaces of the versions served only.
func servedInterfaces(url string, served []string) []a2a.AgentInterface {
	var out []a2a.AgentInterface
	for _, v := range []string{a2a.Version10, a2a.Version03} {
		if slices.Contains(served, v) {
			out = append(out, a2a.AgentInterface{URL: url, Transport: a2a.TransportJSONRPC, ProtocolVersion: v},
				a2a.AgentInterface{URL: url, Transport: a2a.TransportHTTPJSON, ProtocolVersion: v})
		}
	}
	return out
}

// cardAt is c as served at url by transports serving the versions
// served: url is the 0.3 url (JSON-RPC), the 0.3 additionalInterfaces
// list both 0.3 bindings (the main one first, A2A 0.3.0 §5.6.2), and
// every served interface is listed in supportedInterfaces, grpc (when
// not nil) after the HTTP bindings of A2A 1.0.
func cardAt(c a2a.AgentCard, url string, served []string, grpc *a2a.AgentInterface) a2a.AgentCard {
	c.URL = url
	c.PreferredTransport = a2a.TransportJSONRPC
	c.AdditionalInterfaces = []a2a.AgentInterface{{URL: url, Transport: a2a.TransportJSONRPC}, {URL: url, Transport: a2a.TransportHTTPJSON}}
	c.SupportedInterfaces = servedInterfaces(url, served)
	if grpc != nil {
		i := 0
		for i < len(c.SupportedInterfaces) && c.SupportedInterfaces[i].ProtocolVersion == a2a.Version10 {
			i++
		}
		c.SupportedInterfaces = slices.Insert(c.SupportedInterfaces, i, *grpc)
	}
	return c
}

// marshalPublicCard encodes the public card c (cardAt) for the versions
// served: the union card for both (A2A 0.3 and 1.0 clients each read
// their members), the A2A 1.0 AgentCard alone (ProtoJSON, with no member
// a strict 1.0 parser would reject) for 1.0, the A2A 0.3 card for 0.3.
func marshalPublicCard(c *a2a.AgentCard, served []string) ([]byte, error) {
	switch {
	case len(served) == 1 && served[0] == a2a.Version10:
		return v10.MarshalAgentCard(c, v10.CardOptions{})
	case len(served) == 1 && served[0] == a2a.Version03:
		c.SupportedInterfaces = nil
		return v03.MarshalAgentCard(c)
	}
	return wirecard.MarshalUnion(c, edge.CardOptions)
}

// serveCard answers GET of h's public card served below prefix, added
// (its content fixed) at added, with its HTTP caching headers and 304 for
// a current conditional request (edge.WriteCard).
func (host *Host) serveCard(w http.ResponseWriter, r *http.Request, h *AgentHandler, prefix string, added time.Time) {
	served := host.opts.Transport.ProtocolVersions
	var grpc *a2a.AgentInterface
	if prefix == "/a2a/"+h.name {
		if gi, ok := host.grpcInterface(r, h.name); ok {
			grpc = &gi
		}
	}
	c := cardAt(h.Card(), host.BaseURL(r)+prefix, served, grpc)
	b, err := marshalPublicCard(&c, served)
	if s := host.opts.Transport.CardSigner; s != nil && err == nil {
		b, err = s.sign(b, host.BaseURL(r))
	}
	if err != nil {
		host.opts.Transport.Logger.Error("agent card", "agent", h.Name(), "err", err)
		edge.WriteError(w, http.StatusInternalServerError, a2a.ErrInternal)
		return
	}
	if since, _ := r.Context().Value(defaultSinceKey{}).(time.Time); since.After(added) {
		added = since
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	edge.WriteCard(w, r, b, added, h.opts.CardRequiresAuth, host.caching)
}

// serveEvents streams a task's events after ?from=N (default 0: everything),
// then live events, as SSE; each frame's id is the event's sequence number
// and its data the event's A2A 0.3.0 JSON (a Task, Message, status-update or
// artifact-update). Last-Event-ID, when present, overrides from.
func (host *Host) serveEvents(w http.ResponseWriter, r *http.Request, h *AgentHandler) {
	from := int64(0)
	if v := r.URL.Query().Get("from"); v != "" {
		n, err := edge.ParseSeq(v)
		if err != nil {
			edge.WriteError(w, http.StatusBadRequest, a2a.InvalidParams("from", "from must be a non-negative event sequence number"))
			return
		}
		from = n
	}
	if p, err := edge.LastEventID(r); err != nil {
		edge.WriteError(w, http.StatusBadRequest, a2a.InvalidParams("Last-Event-ID", "Last-Event-ID must be a non-negative event sequence number"))
		return
	} else if p != nil {
		from = *p
	}
	ctx, sc := edge.StreamContext(r.Context(), r, host.opts.Transport.edge())
	defer sc.Release()
	taskID := r.PathValue("id")
	events, err := h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: taskID}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
	if err != nil {
		status, ae := http.StatusBadRequest, (*a2a.Error)(nil)
		if !errors.As(err, &ae) {
			host.opts.Transport.Logger.Error("events endpoint", "task", r.PathValue("id"), "err", err)
			status, ae = http.StatusInternalServerError, a2a.ErrInternal
		} else if ae.Code == a2a.CodeTaskNotFound {
			status = http.StatusNotFound
		}
		edge.WriteError(w, status, ae)
		return
	}
	logger := host.opts.Transport.Logger
	edge.WriteSSE(ctx, sc.Hand(), w, r, events, host.opts.Transport.edge(), true, func(dst []byte, ev a2a.Event) ([]byte, error) {
		return v03.AppendEvent(dst, ev)
	}, "", func(err error) []byte {
		var e *a2a.Error
		if !errors.As(err, &e) {
			logger.Error("events stream", "task", taskID, "err", err)
			e = a2a.ErrInternal
		}
		b, _ := v03.MarshalError(e)
		return b
	})
}
