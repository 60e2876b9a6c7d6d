package gateway

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.yaml.in/yaml/v3"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/bridge/openai"
	"github.com/a2abridge/a2abridge/internal/yamlkeys"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
)

// The admin API of `serve`: agents added, listed and removed
// while the server runs, persisted in the store's agent registry and
// rebuilt at the next start.
//
//	POST   /api/v1/agents          register: our kinds as JSON ({"name","kind",…}) or the
//	                               registry format ({"name","url","protocol","protocol_config","auth_type","timeout_ms"})
//	GET    /api/v1/agents          every agent: config-file and built-in ones (read-only) and registered ones
//	GET    /api/v1/agents/{name}   one agent
//	DELETE /api/v1/agents/{name}   remove a registered agent: its running tasks fail, its finished tasks stay readable
//
// Every route requires one of the admin bearer tokens (admin.bearer_tokens);
// without them the routes do not exist (404). Errors are
// {"error": "...", "field": "..."} with 400 (a bad registration; field
// names the key), 401, 404 (no such agent), 409 (the name is taken, or the
// agent is not registered through the API) or 413 (body over 1 MiB).

// AdminPath is where the admin API is mounted.
const AdminPath = "/api/v1/agents"

// maxAdminBody bounds a registration's body.
const maxAdminBody = 1 << 20

// registry is the running server's set of agents registered at runtime.
type registry struct {
	ctx    context.Context // the server's: ends at shutdown
	log    *slog.Logger
	st     store.AgentRegistry // nil: the store keeps none (registrations are refused)
	eng    *server.Engine
	host   *server.Host
	cfg    serveConfig
	static map[string]string // agents from the config file or built in: name → kind
	kinds  []string          // the kinds a registration may have (admin.kinds)
	env    []string          // the variables a registration may reference (admin.env)

	mu      sync.Mutex // guards dyn, broken, tombs and pending; serializes hosting
	dyn     map[string]*registered
	broken  map[string]*registered // stored registrations that could not be built at start
	tombs   map[string]*registered // removed agents whose tasks stay readable (spec: the registration removed)
	pending map[string]bool        // names being built by a create
}

type registered struct {
	spec    map[string]any // as stored: ${NAME} references unexpanded
	kind    string
	built   *Built
	opts    server.HandlerOptions
	extend  func(a2a.AgentCard) *a2a.AgentCard // the extended card of a late card (Built.LateCard)
	problem string                             // broken: why it could not be built
	stop    context.CancelFunc                 // ends its watchCard, if any
}

// startAdmin rebuilds the agents registered in earlier runs (concurrently:
// a remote agent's card fetch may take its card_timeout) and, with admin
// tokens configured, mounts the admin API on host. A registration that
// cannot be rebuilt (an environment variable gone, a kind no longer
// allowed, a name a configured agent took) is listed with its problem and
// can be removed.
func startAdmin(ctx context.Context, log *slog.Logger, st store.Store, eng *server.Engine, host *server.Host, cfg serveConfig) (*registry, error) {
	r := &registry{ctx: ctx, log: log, eng: eng, host: host, cfg: cfg, static: map[string]string{},
		dyn: map[string]*registered{}, broken: map[string]*registered{}, tombs: map[string]*registered{}, pending: map[string]bool{},
		kinds: defaultAdminKinds}
	if cfg.adminKinds != nil {
		r.kinds = cfg.adminKinds
	}
	r.env = cfg.adminEnv
	for _, a := range cfg.agents {
		r.static[a.name] = a.kind
	}
	r.st, _ = st.(store.AgentRegistry)
	if r.st != nil {
		specs, err := r.st.Agents(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the registered agents: %w", err)
		}
		built := make([]*registered, len(specs))
		errs := make([]error, len(specs))
		var wg sync.WaitGroup
		for i, s := range specs {
			if spec, err := decodeSpec(s.Spec); err == nil && spec[tombstoneKey] != nil {
				// The tombstone of a removed agent: its tasks stay readable.
				specs[i].Spec = nil // not built below
				if _, taken := r.static[s.Name]; taken {
					log.Warn("a removed agent's tombstone is shadowed by an agent of the configuration file; its tasks are served by that agent", "agent", s.Name)
					continue
				}
				inner, _ := spec[tombstoneKey].(map[string]any)
				r.tombs[s.Name] = &registered{spec: inner, kind: kindOfSpec(inner)}
				if err := r.restoreTombstone(s.Name, inner); err != nil {
					r.tombs[s.Name].problem = "its tasks cannot be served: " + err.Error()
					log.Error("the tasks of a removed agent cannot be served; fix its environment, or delete the tombstone (a2abridge agents rm)", "agent", s.Name, "err", err)
				}
				continue
			}
			if _, taken := r.static[s.Name]; taken {
				errs[i] = fmt.Errorf("agent %s of the configuration file has its name; remove this registration", s.Name)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				spec, err := decodeSpec(s.Spec)
				if err == nil {
					built[i], err = r.build(ctx, s.Name, spec)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		r.mu.Lock()
		defer r.mu.Unlock()
		for i, s := range specs {
			if s.Spec == nil {
				continue // a tombstone, restored above
			}
			if errs[i] != nil {
				// The server starts without it; the registration stays,
				// listed with its problem, until removed.
				spec, _ := decodeSpec(s.Spec)
				r.broken[s.Name] = &registered{spec: spec, kind: kindOfSpec(spec), problem: errs[i].Error()}
				log.Error("a registered agent could not be restored; fix its configuration or remove it (a2abridge agents rm)", "agent", s.Name, "err", errs[i])
				continue
			}
			r.hostAgent(s.Name, built[i])
			log.Info("registered agent restored", "agent", s.Name, "kind", built[i].kind)
		}
	}
	if len(cfg.admin) > 0 {
		host.Handle("GET "+AdminPath, r.authed(r.list))
		host.Handle("POST "+AdminPath, r.authed(r.create))
		host.Handle("GET "+AdminPath+"/{name}", r.authed(r.get))
		host.Handle("DELETE "+AdminPath+"/{name}", r.authed(r.remove))
		log.Info("admin API enabled", "path", AdminPath, "kinds", r.kinds, "env", r.env)
	}
	return r, nil
}

// close releases the registered agents' resources.
func (r *registry) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.dyn {
		if d.stop != nil {
			d.stop()
		}
		if d.built.Close != nil {
			_ = d.built.Close()
		}
	}
}

// kindOfSpec is the kind a stored registration names ("" when none).
func kindOfSpec(spec map[string]any) string {
	k, _ := spec["kind"].(string)
	return k
}

// AdminErrorBody is the JSON body of every error answer of the admin API
// (HTTP 4xx and 5xx): {"error": "…", "field": "…"}.
type AdminErrorBody struct {
	// Error says what is wrong.
	Error string `json:"error"`
	// Field names the registration's key at fault, if one is.
	Field string `json:"field,omitempty"`
}

func writeAdmin(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func adminFail(w http.ResponseWriter, status int, field, format string, args ...any) {
	writeAdmin(w, status, AdminErrorBody{Error: fmt.Sprintf(format, args...), Field: field})
}

// authed requires an admin bearer token.
func (r *registry) authed(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, err := r.cfg.admin.Authenticate(req); err != nil {
			for _, c := range r.cfg.admin.ChallengesFor(err) {
				w.Header().Add("WWW-Authenticate", c)
			}
			if errors.Is(err, auth.ErrUnavailable) {
				adminFail(w, http.StatusServiceUnavailable, "", "authentication is unavailable")
				return
			}
			adminFail(w, http.StatusUnauthorized, "", "%s", authFailure(err, "the admin API", "an admin bearer token (admin.bearer_tokens)"))
			return
		}
		next(w, req)
	})
}

// AgentInfo is one agent in the admin API's answers (GET AdminPath, GET
// and POST AdminPath/{name}), as JSON.
type AgentInfo struct {
	// Name is the agent's name (/a2a/{name}).
	Name string `json:"name"`
	// Kind is its kind.
	Kind string `json:"kind"`
	// Source is "config" (the config file or built in: read-only) or
	// "admin" (registered through the API).
	Source string `json:"source"`
	// URL is its JSON-RPC endpoint.
	URL string `json:"url"`
	// Card is its card's URL.
	Card string `json:"card"`
	// Spec is a registered agent's registration, secrets masked.
	Spec map[string]any `json:"spec,omitempty"`
	// Running is false for a registration that could not be built, or
	// a removed agent.
	Running bool `json:"running"`
	// Removed marks a removed agent whose tasks stay readable (a
	// tombstone).
	Removed bool `json:"removed,omitempty"`
	// Problem says why a registration is not running.
	Problem string `json:"problem,omitempty"`
	// Protocol lists the bindings it is served over ("JSONRPC",
	// "HTTP+JSON").
	Protocol []string `json:"protocols,omitempty"`
}

func (r *registry) info(req *http.Request, name string) (AgentInfo, bool) {
	base := r.host.BaseURL(req) + "/a2a/" + name
	a := AgentInfo{Name: name, URL: base, Card: base + "/.well-known/agent-card.json"}
	for _, b := range []string{"JSONRPC", "HTTP+JSON"} {
		for _, v := range r.host.ProtocolVersions() {
			a.Protocol = append(a.Protocol, b+"/"+v)
		}
	}
	if k, ok := r.static[name]; ok {
		a.Kind, a.Source, a.Running = k, "config", true
		if b := r.broken[name]; b != nil {
			// A stored registration under a configured agent's name.
			a.Problem = b.problem
		}
		return a, true
	}
	if d, ok := r.dyn[name]; ok {
		a.Kind, a.Source, a.Running, a.Spec = d.kind, "admin", true, maskSpec(d.spec)
		return a, true
	}
	if b, ok := r.broken[name]; ok {
		a.Kind, a.Source, a.Running, a.Spec, a.Problem = b.kind, "admin", false, maskSpec(b.spec), b.problem
		return a, true
	}
	if tb, ok := r.tombs[name]; ok {
		a.Kind, a.Source, a.Running, a.Removed, a.Spec = tb.kind, "admin", false, true, maskSpec(tb.spec)
		a.Problem = cmp.Or(tb.problem, "removed: its tasks stay readable at its URL; DELETE deletes them from reach")
		return a, true
	}
	return a, false
}

func (r *registry) list(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.static)+len(r.dyn))
	for _, a := range r.cfg.agents {
		names = append(names, a.name)
	}
	dyn := make([]string, 0, len(r.dyn)+len(r.broken))
	for n := range r.dyn {
		dyn = append(dyn, n)
	}
	for n := range r.broken {
		if _, static := r.static[n]; !static {
			dyn = append(dyn, n)
		}
	}
	for n := range r.tombs {
		dyn = append(dyn, n)
	}
	slices.Sort(dyn)
	out := struct {
		Agents []AgentInfo `json:"agents"`
	}{Agents: []AgentInfo{}}
	for _, n := range append(names, dyn...) {
		if a, ok := r.info(req, n); ok {
			out.Agents = append(out.Agents, a)
		}
	}
	writeAdmin(w, http.StatusOK, out)
}

func (r *registry) get(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := req.PathValue("name")
	a, ok := r.info(req, name)
	if !ok {
		adminFail(w, http.StatusNotFound, "name", "no agent named %q", name)
		return
	}
	writeAdmin(w, http.StatusOK, a)
}

func (r *registry) create(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxAdminBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			adminFail(w, http.StatusRequestEntityTooLarge, "", "the registration is larger than %d bytes", maxAdminBody)
			return
		}
		adminFail(w, http.StatusBadRequest, "", "read the body: %v", err)
		return
	}
	spec, err := decodeSpec(body)
	if err != nil {
		adminFail(w, http.StatusBadRequest, "", "%v", err)
		return
	}
	name, field, err := normalizeRegistration(spec)
	if err != nil {
		adminFail(w, http.StatusBadRequest, field, "%v", err)
		return
	}
	if r.st == nil {
		adminFail(w, http.StatusConflict, "", "this server's store keeps no registered agents")
		return
	}
	// The name is reserved while the agent is built, without holding the
	// lock: building a remote agent fetches its card.
	r.mu.Lock()
	switch {
	case r.static[name] != "":
		r.mu.Unlock()
		adminFail(w, http.StatusConflict, "name", "agent %q is defined in the configuration file or built in (read-only)", name)
		return
	case r.dyn[name] != nil || r.broken[name] != nil || r.pending[name]:
		r.mu.Unlock()
		adminFail(w, http.StatusConflict, "name", "agent %q is already registered; remove it first", name)
		return
	}
	r.pending[name] = true
	r.mu.Unlock()
	reg, err := r.build(req.Context(), name, spec)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pending, name)
	if err != nil {
		adminFail(w, http.StatusBadRequest, fieldOf(name, err), "%v", err)
		return
	}
	stored, err := json.Marshal(spec, json.Deterministic(true))
	if err == nil {
		err = r.st.PutAgent(context.WithoutCancel(req.Context()), name, stored)
	}
	if err != nil {
		if reg.built.Close != nil {
			_ = reg.built.Close()
		}
		r.log.Error("store a registered agent", "agent", name, "err", err)
		adminFail(w, http.StatusInternalServerError, "", "the registration could not be stored")
		return
	}
	r.hostAgent(name, reg)
	r.log.Info("agent registered", "agent", name, "kind", reg.kind)
	a, _ := r.info(req, name)
	w.Header().Set("Location", AdminPath+"/"+name)
	writeAdmin(w, http.StatusCreated, a)
}

func (r *registry) remove(w http.ResponseWriter, req *http.Request) {
	name := req.PathValue("name")
	status, d, old := r.unregister(req.Context(), name)
	switch status {
	case http.StatusConflict:
		adminFail(w, status, "name", "agent %q is defined in the configuration file or built in (read-only)", name)
		return
	case http.StatusNotFound:
		adminFail(w, status, "name", "no registered agent named %q", name)
		return
	case http.StatusInternalServerError:
		adminFail(w, status, "", "the registration could not be deleted")
		return
	}
	if d != nil {
		// A hosted agent: its unfinished tasks fail, outside the lock (a
		// remote agent's tasks are cancelled at the remote).
		n := 0
		if old != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			var err error
			n, err = r.eng.StopAgent(ctx, old, fmt.Sprintf("The agent %s was removed from this server before the task finished.", name))
			cancel()
			if err != nil {
				r.log.Error("fail the unfinished tasks of a removed agent", "agent", name, "err", err)
			}
		}
		if d.built.Close != nil {
			_ = d.built.Close()
		}
		r.log.Info("agent removed", "agent", name, "tasks_failed", n)
	}
	w.WriteHeader(http.StatusNoContent)
}

// unregister removes name's registration (under r.mu): a hosted agent is
// replaced by its tombstone, stored so that its tasks stay readable after
// a restart too, and returned (d) with the handler it had (old), for the
// caller to fail its unfinished tasks; a registration that could not be
// built is deleted; a tombstone is deleted, and its agent's tasks are no
// longer served. status is 204, or 409 (a configured agent), 404 (none),
// 500 (the store failed).
func (r *registry) unregister(ctx context.Context, name string) (status int, d *registered, old *server.AgentHandler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, static := r.static[name]
	d, hosted := r.dyn[name]
	_, broken := r.broken[name]
	_, tomb := r.tombs[name]
	switch {
	case static && !broken:
		return http.StatusConflict, nil, nil
	case !hosted && !broken && !tomb:
		return http.StatusNotFound, nil, nil
	}
	ctx = context.WithoutCancel(ctx)
	var err error
	if hosted {
		var b []byte
		if b, err = json.Marshal(map[string]any{tombstoneKey: d.spec}, json.Deterministic(true)); err == nil {
			err = r.st.PutAgent(ctx, name, b)
		}
	} else {
		err = r.st.DeleteAgent(ctx, name)
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		r.log.Error("delete a registered agent", "agent", name, "err", err)
		return http.StatusInternalServerError, nil, nil
	}
	switch {
	case broken:
		delete(r.broken, name)
		r.log.Info("registration removed", "agent", name)
		return http.StatusNoContent, nil, nil
	case !hosted:
		delete(r.tombs, name)
		r.host.Remove(name)
		r.log.Info("a removed agent's tombstone deleted: its tasks are no longer served", "agent", name)
		return http.StatusNoContent, nil, nil
	}
	old, _ = r.host.Handler(name)
	delete(r.dyn, name)
	r.cfg.waits.done(name)
	if d.stop != nil {
		d.stop()
	}
	r.hostTombstone(name, d.built.Card, d.opts)
	r.tombs[name] = &registered{spec: d.spec, kind: d.kind}
	return http.StatusNoContent, d, old
}

// decode checks a registration's name, keys and their types and the
// environment variables it may use (admin.env), expands them, and decodes
// it; with checkKind, its kind must be one admin.kinds allows. Errors are
// as build's.
func (r *registry) decode(name string, spec map[string]any, checkKind bool) (*agentKind, *yaml.Node, *AgentConfig, error) {
	if err := checkAgentName(name); err != nil {
		return nil, nil, nil, fmt.Errorf("name: %w", err)
	}
	kindKeys := make(map[string]any, len(spec))
	for k, v := range spec {
		if k != "name" {
			kindKeys[k] = v
		}
	}
	var node yaml.Node
	if err := node.Encode(kindKeys); err != nil {
		return nil, nil, nil, err
	}
	if err := checkAgentKeys(name, &node); err != nil {
		var uk *yamlkeys.UnknownKeyError
		if errors.As(err, &uk) {
			msg := fmt.Sprintf("unknown key %q in %s", uk.Key, uk.Path)
			if uk.Suggest != "" {
				return nil, nil, nil, fmt.Errorf("%s: did you mean %q?", msg, uk.Suggest)
			}
			return nil, nil, nil, fmt.Errorf("%s (valid keys: %s)", msg, strings.Join(uk.Valid, ", "))
		}
		return nil, nil, nil, err
	}
	k, err := kindOf(name, &node)
	if err != nil {
		return nil, nil, nil, err
	}
	if k.builtin && kindKeys["kind"] == nil {
		return nil, nil, nil, fmt.Errorf("agents.%s.kind: required", name)
	}
	if checkKind && !slices.Contains(r.kinds, k.name) {
		return nil, nil, nil, fmt.Errorf("agents.%s.kind: %q may not be registered through the admin API (admin.kinds allows %s)", name, k.name, strings.Join(r.kinds, ", "))
	}
	for _, ref := range envRefs(&node, "agents."+name) {
		if !slices.Contains(r.env, ref.name) {
			return nil, nil, nil, fmt.Errorf("%s: ${%s} is not among the environment variables registrations may use (admin.env)", ref.path, ref.name)
		}
	}
	// Types before expansion, so that an error shows a ${NAME} reference
	// rather than its value; a value that is a reference is checked after.
	if err := checkAgentTypes(name, &node); err != nil && len(envRefs(&node, "")) == 0 {
		return nil, nil, nil, err
	}
	if missing := expandEnv(&node, "agents."+name); len(missing) > 0 {
		return nil, nil, nil, errors.New(joinRefs(missing))
	}
	if err := checkAgentTypes(name, &node); err != nil {
		return nil, nil, nil, err
	}
	var af AgentConfig
	if err := node.Decode(&af); err != nil {
		return nil, nil, nil, fmt.Errorf("agents.%s: the registration does not fit its kind", name)
	}
	return k, &node, &af, nil
}

// build checks and builds a registered agent, without hosting it: its
// keys and their types, the kinds and environment variables the admin
// block allows, then the kind's own checks. Errors name the key
// (agents.NAME.KEY: …) and never quote an expanded value.
func (r *registry) build(ctx context.Context, name string, spec map[string]any) (*registered, error) {
	k, node, af, err := r.decode(name, spec, true)
	if err != nil {
		return nil, err
	}
	bctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	built, err := buildAgent(bctx, r.log, name, af, node)
	if err != nil {
		return nil, err
	}
	o, err := r.cfg.authFor(name, af)
	if err != nil {
		if built.Close != nil {
			_ = built.Close()
		}
		return nil, err
	}
	o.ExtendedCard = af.extendedCard(built.Card)
	o.Methods = built.Methods
	o.NoPush = built.NoPush
	return &registered{spec: spec, kind: k.name, built: built, opts: o, extend: af.extendedCard}, nil
}

// hostAgent hosts a built registration (r.mu held, or at start). A card
// that could not be had yet (Built.LateCard) replaces the stand-in
// when it can, while the registration is still the one hosted.
func (r *registry) hostAgent(name string, reg *registered) {
	r.host.Add(server.NewHandler(r.eng, name, reg.built.Agent, reg.built.Card, reg.opts))
	r.dyn[name] = reg
	delete(r.tombs, name) // a name registered again: the new agent serves the old tasks
	if reg.built.LateCard == nil {
		r.cfg.waits.done(name)
		return
	}
	r.cfg.waits.add(name)
	var ctx context.Context
	ctx, reg.stop = context.WithCancel(r.ctx)
	watchCard(ctx, r.log, name, reg.built, reg.opts, reg.extend, r.eng, func(h *server.AgentHandler, card a2a.AgentCard, o server.HandlerOptions) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.dyn[name] != reg {
			return false
		}
		reg.built.Card, reg.opts = card, o
		r.host.Add(h)
		r.cfg.waits.done(name)
		return true
	})
}

// tombstoneKey marks a stored registration as the tombstone of a removed
// agent: {"removed": SPEC}, SPEC the registration as it was stored (its
// authentication is rebuilt from it at the next start).
const tombstoneKey = "removed"

// hostTombstone hosts the tombstone of the removed agent name under card
// (the agent's, described as removed) and opts (its authentication), r.mu
// held or at start. The tombstone serves no methods of the agent's own
// (ai/*), nor declares them.
func (r *registry) hostTombstone(name string, card a2a.AgentCard, opts server.HandlerOptions) {
	card.Description = "Removed from this server; its tasks stay readable."
	opts.Methods = nil
	opts.Retired = true // a new message gets the 404 of an unknown agent
	card.Capabilities.Extensions = slices.DeleteFunc(slices.Clone(card.Capabilities.Extensions),
		func(x a2a.AgentExtension) bool { return x.URI == openai.ExtensionURI })
	r.host.Add(server.NewHandler(r.eng, name, removedAgent{name: name}, card, opts))
}

// restoreTombstone hosts the stored tombstone of a removed agent at start
// (spec is SPEC of {"removed": SPEC}): its authentication rebuilt from SPEC, its
// card from SPEC's card fields (the agent itself is not built: a remote
// one's card is not fetched again). An error says why its tasks cannot be
// served (an environment variable its auth block names is gone, say).
func (r *registry) restoreTombstone(name string, spec map[string]any) error {
	if spec == nil {
		return errors.New("the stored tombstone holds no registration")
	}
	// Only what the tombstone serves: its authentication and card keys
	// (the kind's own keys, such as a backend's URL and credentials, are
	// not needed and not checked).
	common := map[string]any{}
	for _, k := range []string{"kind", "description", "version", "skills", "input_modes", "output_modes", "streaming",
		"auth", "card_requires_auth", "extended_card", "attachments"} {
		if v, ok := spec[k]; ok {
			common[k] = v
		}
	}
	_, _, af, err := r.decode(name, common, false)
	if err != nil {
		return err
	}
	o, err := r.cfg.authFor(name, af)
	if err != nil {
		return err
	}
	card := a2a.AgentCard{
		Name:               name,
		Version:            cmp.Or(af.Version, "1.0.0"),
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
	}
	if len(af.InputModes) > 0 {
		card.DefaultInputModes = af.InputModes
	}
	if len(af.OutputModes) > 0 {
		card.DefaultOutputModes = af.OutputModes
	}
	for _, s := range af.Skills {
		card.Skills = append(card.Skills, s.skill())
	}
	if len(card.Skills) == 0 {
		card.Skills = []a2a.AgentSkill{{ID: "removed", Name: "Removed agent", Description: "The agent " + name + " was removed from this server; its tasks stay readable.", Tags: []string{"removed"}}}
	}
	r.hostTombstone(name, card, o)
	r.log.Info("removed agent: its tasks stay readable", "agent", name)
	return nil
}

// removedAgent is the agent of a removed agent's tombstone. Its AgentHandler is
// retired (server.HandlerOptions.Retired): a new message is answered as
// for an unknown agent before any task is made, so Execute runs only for
// a message that reaches the AgentHandler another way, and rejects it (A2A
// 1.0 §4.1.3, TASK_STATE_REJECTED) with the reason.
type removedAgent struct{ name string }

func (a removedAgent) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	return t.SetStatus(ctx, a2a.TaskStateRejected, t.TextMessage(fmt.Sprintf("The agent %s was removed from this server.", a.name)))
}

// decodeSpec decodes a registration: one JSON object (duplicate keys
// refused, numbers kept exact).
func decodeSpec(b []byte) (map[string]any, error) {
	var spec map[string]any
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	if err := json.UnmarshalDecode(dec, &spec); err != nil {
		return nil, fmt.Errorf("the body is not a JSON object: %v", err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, fmt.Errorf("the body holds more than one JSON value")
	}
	if spec == nil {
		return nil, fmt.Errorf("the body is not a JSON object")
	}
	return spec, nil
}

// normalizeRegistration turns the registry format of the dual-protocol
// design into our kinds, in place, and returns the agent's name:
//
//	{"name","url","protocol":"simple-a2a","protocol_config":{…},"auth_type","timeout_ms"}  → kind http
//	{"name","url","protocol":"jsonrpc-2.0",…}                                             → kind a2a
//
// protocol_config holds the kind's other keys; auth_type "bearer" takes the
// token from protocol_config.token, "api_key" from protocol_config.api_key
// (and api_key_header), into the kind's credentials; "none" or absent sends
// none. Our own format ({"name","kind",…}) is returned as it is. field names
// the offending key of an error.
func normalizeRegistration(spec map[string]any) (name, field string, err error) {
	n, ok := spec["name"].(string)
	if !ok || n == "" {
		return "", "name", errors.New("name: required (a string)")
	}
	if err := checkAgentName(n); err != nil {
		return "", "name", fmt.Errorf("name: %w", err)
	}
	proto, hasProto := spec["protocol"]
	if !hasProto {
		if _, ok := spec["kind"]; !ok {
			return n, "kind", fmt.Errorf("kind: required (one of %s), or protocol (simple-a2a, jsonrpc-2.0)", kindNames())
		}
		return n, "", nil
	}
	if _, ok := spec["kind"]; ok {
		return n, "kind", errors.New("kind and protocol: give one (kind for our format, protocol for the registry format)")
	}
	p, _ := proto.(string)
	kind := map[string]string{"simple-a2a": "http", "jsonrpc-2.0": "a2a"}[p]
	if kind == "" {
		return n, "protocol", fmt.Errorf("protocol: %q is not one of simple-a2a, jsonrpc-2.0", p)
	}
	out := map[string]any{"name": n, "kind": kind}
	if u, ok := spec["url"]; ok {
		out["url"] = u
	}
	if pc, ok := spec["protocol_config"]; ok && pc != nil {
		m, ok := pc.(map[string]any)
		if !ok {
			return n, "protocol_config", errors.New("protocol_config: want an object")
		}
		for k, v := range m {
			switch k {
			case "token", "api_key", "api_key_header":
				continue
			case "name", "kind", "url", "protocol", "credentials", "auth":
				// What the registry format's own members and auth_type say.
				return n, "protocol_config." + k, fmt.Errorf("protocol_config.%s: not allowed here (give it as the registration's own member, or through auth_type)", k)
			}
			out[k] = v
		}
	}
	creds := map[string]any{}
	pc, _ := spec["protocol_config"].(map[string]any)
	switch at, _ := spec["auth_type"].(string); at {
	case "", "none":
	case "bearer":
		tok, _ := pc["token"].(string)
		if tok == "" {
			return n, "protocol_config.token", errors.New(`protocol_config.token: required with auth_type "bearer" (a literal or ${ENV_VAR})`)
		}
		creds["bearer_token"] = tok
	case "api_key":
		key, _ := pc["api_key"].(string)
		if key == "" {
			return n, "protocol_config.api_key", errors.New(`protocol_config.api_key: required with auth_type "api_key" (a literal or ${ENV_VAR})`)
		}
		creds["api_key"] = key
		if h, _ := pc["api_key_header"].(string); h != "" {
			creds["api_key_header"] = h
		}
	default:
		return n, "auth_type", fmt.Errorf("auth_type: %q is not one of none, bearer, api_key", at)
	}
	if len(creds) > 0 {
		out["credentials"] = creds
	}
	if t, ok := spec["timeout_ms"]; ok {
		ms, err := toInt(t)
		if err != nil || ms <= 0 {
			return n, "timeout_ms", errors.New("timeout_ms: want a positive whole number of milliseconds")
		}
		if kind == "http" {
			out["timeout_ms"] = ms
		} else {
			out["timeout"] = (time.Duration(ms) * time.Millisecond).String()
		}
	}
	for k := range spec {
		switch k {
		case "name", "url", "protocol", "protocol_config", "auth_type", "timeout_ms":
		default:
			return n, k, fmt.Errorf("%s: unknown key of the registry format (name, url, protocol, protocol_config, auth_type, timeout_ms)", k)
		}
	}
	clear(spec)
	for k, v := range out {
		spec[k] = v
	}
	return n, "", nil
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case float64:
		if x != float64(int64(x)) {
			return 0, errors.New("not whole")
		}
		return int64(x), nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, errors.New("not a number")
}

// fieldOf extracts the key an agent error names ("agents.NAME.KEY: …").
func fieldOf(name string, err error) string {
	s := err.Error()
	rest, ok := strings.CutPrefix(s, "agents."+name+".")
	if !ok {
		if strings.HasPrefix(s, "unknown key ") {
			k, _, _ := strings.Cut(strings.TrimPrefix(s, "unknown key "), " ")
			return strings.Trim(k, `"`)
		}
		return ""
	}
	f, _, _ := strings.Cut(rest, ":")
	return f
}

// shownKeys are the registration keys the admin API shows as they are:
// what the agent is and does, never credentials, headers, environment
// values, command arguments or authentication blocks. A URL is shown
// without its userinfo and query.
var shownKeys = []string{"kind", "name", "description", "version", "skills", "input_modes", "output_modes", "extensions",
	"streaming", "card_requires_auth", "extended_card", "protocol", "binding", "timeout", "timeout_ms",
	"card_timeout", "retries", "text_field", "max_response", "model", "embeddings_model", "rerank_model",
	"models", "temperature", "max_tokens", "history", "multi_turn", "max_retries", "ai_methods", "input",
	"workdir", "env", "kill_grace", "max_output", "max_concurrency",
	"first_event_timeout", "idle_timeout", "max_card_bytes", "max_answer_bytes"}

// maskSpec returns what the admin API shows of a registration: the keys of
// shownKeys as they are (URLs redacted), the program of command, and
// everything else with each string replaced by "***" unless it is exactly
// one ${NAME} reference (the reference is not the secret). Maps keep their
// keys (an auth block's subjects, a header's name).
func maskSpec(spec map[string]any) map[string]any {
	out := make(map[string]any, len(spec))
	for k, v := range spec {
		switch {
		case k == "url" || k == "base_url":
			out[k] = redactURL(v)
		case k == "command":
			if l, ok := v.([]any); ok && len(l) > 0 {
				c := []any{l[0]}
				for _, a := range l[1:] {
					c = append(c, maskAll(a))
				}
				out[k] = c
			} else {
				out[k] = maskAll(v)
			}
		case slices.Contains(shownKeys, k):
			out[k] = v
		default:
			out[k] = maskAll(v)
		}
	}
	return out
}

// maskAll replaces every string below v by "***", except a value that is
// exactly one ${NAME} reference.
func maskAll(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = maskAll(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = maskAll(e)
		}
		return out
	case string:
		if onlyEnvRef.MatchString(x) {
			return x
		}
		return "***"
	}
	return v
}

// redactURL drops a URL's userinfo and query (they may hold credentials).
func redactURL(v any) any {
	s, ok := v.(string)
	if !ok {
		return maskAll(v)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "***"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "***"
	}
	u.Fragment = ""
	return u.String()
}
