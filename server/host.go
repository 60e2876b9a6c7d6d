package server

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
)

// HostOptions configure a Host. The zero value is ready to use.
type HostOptions struct {
	// PublicURL is the externally reachable base URL (scheme://host[:port][/prefix])
	// written into agent cards. Empty: derived per request from its Host
	// header (and TLS / X-Forwarded-Proto), so the card's url is the address
	// the client already reached.
	PublicURL string
	// Default names the agent that also answers at "/" and
	// "/.well-known/agent-card.json"; empty: the first agent added.
	Default string
	// Transport configures the JSON-RPC transport of every agent.
	Transport TransportOptions
	// JWKS, if set, is served at GET /.well-known/jwks.json: the public
	// keys that verify push notification JWTs (push.Signer.Handler).
	JWKS http.Handler
}

// Host serves several agents over HTTP, each under /a2a/{name}:
//
//	POST /a2a/{name}                                  JSON-RPC 2.0 (A2A 0.3.0 §7)
//	GET  /a2a/{name}/.well-known/agent-card.json      Agent Card (§5.3)
//	GET  /a2a/{name}/tasks/{id}/events?from=N         SSE replay from sequence N, then live events
//
// and the default agent also at POST / and GET /.well-known/agent-card.json
// (the legacy /.well-known/agent.json too).
type Host struct {
	opts     HostOptions
	mux      *http.ServeMux
	handlers map[string]*Handler
	routes   map[string]agentRoutes
	order    []string
}

// cardURLKey carries the agent's reachable URL in a request's context.
type cardURLKey struct{}

// agentRoutes are one agent's HTTP handlers, authentication applied.
type agentRoutes struct {
	rpc, card http.Handler
}

// NewHost returns an empty Host.
func NewHost(opts HostOptions) *Host {
	opts.Transport = opts.Transport.withDefaults()
	opts.PublicURL = strings.TrimRight(opts.PublicURL, "/")
	h := &Host{opts: opts, mux: http.NewServeMux(), handlers: map[string]*Handler{}, routes: map[string]agentRoutes{}}
	h.mux.HandleFunc("POST /{$}", h.serveDefault)
	h.mux.HandleFunc("GET /.well-known/agent-card.json", h.serveDefaultCard)
	h.mux.HandleFunc("GET /.well-known/agent.json", h.serveDefaultCard)
	if opts.JWKS != nil {
		h.mux.Handle("GET /.well-known/jwks.json", opts.JWKS)
	}
	return h
}

// Add mounts h under /a2a/{h.Name()}. Names must be unique path segments.
// Add all agents before serving: Add is not safe concurrently with ServeHTTP.
func (host *Host) Add(h *Handler) {
	name := h.Name()
	host.handlers[name] = h
	host.order = append(host.order, name)
	prefix := "/a2a/" + name
	rpc := newJSONRPCHandler(h, host.opts.Transport, func(r *http.Request) string { return host.BaseURL(r) + prefix })
	host.mux.Handle(prefix, rpc)
	host.mux.Handle(prefix+"/{$}", rpc) // tolerate a trailing slash
	var card http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { host.serveCard(w, r, h) })
	if h.opts.CardRequiresAuth {
		card = authenticate(h, host.opts.Transport.Logger, card)
	}
	host.routes[name] = agentRoutes{rpc: rpc, card: card}
	host.mux.Handle("GET "+prefix+"/.well-known/agent-card.json", card)
	host.mux.Handle("GET "+prefix+"/.well-known/agent.json", card)
	host.mux.Handle("GET "+prefix+"/tasks/{id}/events", authenticate(h, host.opts.Transport.Logger, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { host.serveEvents(w, r, h) })))
}

// authenticate runs h's authentication before next (A2A 0.3.0 §4.4):
// missing or invalid credentials get HTTP 401 with one WWW-Authenticate
// challenge per scheme and a JSON-RPC error body (-32000); an identity
// provider that cannot be reached gets 503. The principal is put in the
// request's context (auth.FromContext). Without schemes it returns next.
func authenticate(h *Handler, log *slog.Logger, next http.Handler) http.Handler {
	set := h.opts.Auth
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
			if errors.Is(err, auth.ErrUnavailable) {
				log.Error("authentication unavailable", "agent", h.Name(), "err", err)
				WriteError(w, http.StatusServiceUnavailable, a2a.ErrInternal.WithMessage("Authentication is temporarily unavailable"))
				return
			}
			for _, c := range set.ChallengesFor(err) {
				w.Header().Add("WWW-Authenticate", c)
			}
			e := a2a.ErrUnauthenticated
			if errors.Is(err, auth.ErrInvalidCredentials) {
				e = e.WithMessage("Invalid credentials: %s", auth.Reason(err))
			}
			WriteError(w, http.StatusUnauthorized, e)
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), p)))
	})
}

func (host *Host) defaultHandler() *Handler {
	if h, ok := host.handlers[host.opts.Default]; ok {
		return h
	}
	if len(host.order) > 0 {
		return host.handlers[host.order[0]]
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (host *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) { host.mux.ServeHTTP(w, r) }

func (host *Host) serveDefault(w http.ResponseWriter, r *http.Request) {
	h := host.defaultHandler()
	if h == nil {
		http.NotFound(w, r)
		return
	}
	host.routes[h.Name()].rpc.ServeHTTP(w, r)
}

func (host *Host) serveDefaultCard(w http.ResponseWriter, r *http.Request) {
	h := host.defaultHandler()
	if h == nil {
		http.NotFound(w, r)
		return
	}
	host.routes[h.Name()].card.ServeHTTP(w, r)
}

// BaseURL returns the public base URL for r: PublicURL, or derived from r.
func (host *Host) BaseURL(r *http.Request) string {
	if host.opts.PublicURL != "" {
		return host.opts.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	u := url.URL{Scheme: scheme, Host: r.Host}
	return u.String()
}

func (host *Host) serveCard(w http.ResponseWriter, r *http.Request, h *Handler) {
	c := h.Card()
	c.URL = host.BaseURL(r) + "/a2a/" + h.Name()
	b, err := v03.MarshalAgentCard(&c)
	if err != nil {
		WriteError(w, http.StatusInternalServerError, a2a.ErrInternal)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, b)
}

// serveEvents streams a task's log from ?from=N (default 0: everything),
// then live events, as SSE; each frame's id is the event's sequence number
// and its data the event's A2A 0.3.0 JSON (a Task, Message, status-update or
// artifact-update). Last-Event-ID, when present, overrides from.
func (host *Host) serveEvents(w http.ResponseWriter, r *http.Request, h *Handler) {
	from := int64(0)
	if v := r.URL.Query().Get("from"); v != "" {
		n, err := parseSeq(v)
		if err != nil {
			WriteError(w, http.StatusBadRequest, a2a.InvalidParams("from", "from must be a non-negative event sequence number"))
			return
		}
		from = n
	}
	if p, err := lastEventID(r); err != nil {
		WriteError(w, http.StatusBadRequest, a2a.InvalidParams("Last-Event-ID", "Last-Event-ID must be a non-negative event sequence number"))
		return
	} else if p != nil {
		from = *p
	}
	ctx, cancel, detach := streamContext(r.Context(), r, host.opts.Transport)
	taskID := r.PathValue("id")
	events, err := h.Resubscribe(ctx, a2a.TaskIDParams{ID: taskID}, &from)
	if err != nil {
		detach()
		cancel()
		status, ae := http.StatusBadRequest, (*a2a.Error)(nil)
		if !errors.As(err, &ae) {
			host.opts.Transport.Logger.Error("events endpoint", "task", r.PathValue("id"), "err", err)
			status, ae = http.StatusInternalServerError, a2a.ErrInternal
		} else if ae.Code == a2a.CodeTaskNotFound {
			status = http.StatusNotFound
		}
		WriteError(w, status, ae)
		return
	}
	logger := host.opts.Transport.Logger
	writeSSE(ctx, cancel, detach, w, r, events, host.opts.Transport, true, func(dst []byte, ev a2a.Event) ([]byte, error) {
		return v03.AppendEvent(dst, ev)
	}, func(err error) []byte {
		var e *a2a.Error
		if !errors.As(err, &e) {
			logger.Error("events stream", "task", taskID, "err", err)
			e = a2a.ErrInternal
		}
		b, _ := v03.MarshalError(e)
		return b
	})
}
