package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
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
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
)

// The admin API of `serve` (issue 13 §2): agents added, listed and removed
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

// adminAPIPrefix is where the admin API is mounted.
const adminAPIPrefix = "/api/v1/agents"

// maxAdminBody bounds a registration's body.
const maxAdminBody = 1 << 20

// registry is the running server's set of agents registered at runtime.
type registry struct {
	log    *slog.Logger
	st     store.AgentRegistry // nil: the store keeps none (registrations are refused)
	eng    *server.Engine
	host   *server.Host
	cfg    serveConfig
	static map[string]string // agents from the config file or built in: name → kind

	mu  sync.Mutex // serializes registrations and removals
	dyn map[string]*registered
}

type registered struct {
	spec  map[string]any // as stored: ${NAME} references unexpanded
	kind  string
	built *builtAgent
	opts  server.HandlerOptions
}

// startAdmin rebuilds the agents registered in earlier runs and, with
// admin tokens configured, mounts the admin API on host.
func startAdmin(ctx context.Context, log *slog.Logger, st store.Store, eng *server.Engine, host *server.Host, cfg serveConfig) (*registry, error) {
	r := &registry{log: log, eng: eng, host: host, cfg: cfg, static: map[string]string{}, dyn: map[string]*registered{}}
	for _, a := range cfg.agents {
		r.static[a.name] = a.kind
	}
	r.st, _ = st.(store.AgentRegistry)
	if r.st != nil {
		specs, err := r.st.Agents(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the registered agents: %w", err)
		}
		for _, s := range specs {
			if _, taken := r.static[s.Name]; taken {
				log.Warn("a registered agent has the name of a configured one; the configured one is served", "agent", s.Name)
				continue
			}
			spec, err := decodeSpec(s.Spec)
			if err == nil {
				err = r.add(ctx, s.Name, spec)
			}
			if err != nil {
				// The server starts without it (an environment variable
				// may be gone); the registration stays until removed.
				log.Error("a registered agent could not be restored; remove it or fix its configuration", "agent", s.Name, "err", err)
				continue
			}
			log.Info("registered agent restored", "agent", s.Name, "kind", r.dyn[s.Name].kind)
		}
	}
	if len(cfg.admin) > 0 {
		host.Handle("GET "+adminAPIPrefix, r.authed(r.list))
		host.Handle("POST "+adminAPIPrefix, r.authed(r.create))
		host.Handle("GET "+adminAPIPrefix+"/{name}", r.authed(r.get))
		host.Handle("DELETE "+adminAPIPrefix+"/{name}", r.authed(r.remove))
		log.Info("admin API enabled", "path", adminAPIPrefix)
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
		if d.built.close != nil {
			_ = d.built.close()
		}
	}
}

// adminError is the admin API's error body.
type adminError struct {
	Error string `json:"error"`
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
	writeAdmin(w, status, adminError{Error: fmt.Sprintf(format, args...), Field: field})
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
			adminFail(w, http.StatusUnauthorized, "", "the admin API requires an admin bearer token (admin.bearer_tokens)")
			return
		}
		next(w, req)
	})
}

// agentInfo is one agent in the admin API's answers.
type agentInfo struct {
	Name     string         `json:"name"`
	Kind     string         `json:"kind"`
	Source   string         `json:"source"` // "config" (file or built in: read-only) or "admin"
	URL      string         `json:"url"`
	Card     string         `json:"card"`
	Spec     map[string]any `json:"spec,omitempty"` // registered agents: the registration, secrets masked
	Running  bool           `json:"running"`        // false: registered but could not be built
	Problem  string         `json:"problem,omitempty"`
	Protocol []string       `json:"protocols,omitempty"`
}

func (r *registry) info(req *http.Request, name string) (agentInfo, bool) {
	base := r.host.BaseURL(req) + "/a2a/" + name
	a := agentInfo{Name: name, URL: base, Card: base + "/.well-known/agent-card.json", Protocol: []string{"JSONRPC/0.3", "JSONRPC/1.0", "HTTP+JSON/0.3", "HTTP+JSON/1.0"}}
	if k, ok := r.static[name]; ok {
		a.Kind, a.Source, a.Running = k, "config", true
		return a, true
	}
	d, ok := r.dyn[name]
	if !ok {
		return a, false
	}
	a.Kind, a.Source, a.Running, a.Spec = d.kind, "admin", true, maskSecrets(d.spec)
	return a, true
}

func (r *registry) list(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.static)+len(r.dyn))
	for _, a := range r.cfg.agents {
		names = append(names, a.name)
	}
	dyn := make([]string, 0, len(r.dyn))
	for n := range r.dyn {
		dyn = append(dyn, n)
	}
	slices.Sort(dyn)
	out := struct {
		Agents []agentInfo `json:"agents"`
	}{Agents: []agentInfo{}}
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.static[name]; ok {
		adminFail(w, http.StatusConflict, "name", "agent %q is defined in the configuration file or built in (read-only)", name)
		return
	}
	if _, ok := r.dyn[name]; ok {
		adminFail(w, http.StatusConflict, "name", "agent %q is already registered; remove it first", name)
		return
	}
	if err := r.add(req.Context(), name, spec); err != nil {
		adminFail(w, http.StatusBadRequest, fieldOf(name, err), "%v", err)
		return
	}
	stored, err := json.Marshal(spec, json.Deterministic(true))
	if err == nil {
		err = r.st.PutAgent(context.WithoutCancel(req.Context()), name, stored)
	}
	if err != nil {
		r.drop(name, "")
		r.log.Error("store a registered agent", "agent", name, "err", err)
		adminFail(w, http.StatusInternalServerError, "", "the registration could not be stored")
		return
	}
	r.log.Info("agent registered", "agent", name, "kind", r.dyn[name].kind)
	a, _ := r.info(req, name)
	w.Header().Set("Location", adminAPIPrefix+"/"+name)
	writeAdmin(w, http.StatusCreated, a)
}

func (r *registry) remove(w http.ResponseWriter, req *http.Request) {
	name := req.PathValue("name")
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.static[name]; ok {
		adminFail(w, http.StatusConflict, "name", "agent %q is defined in the configuration file or built in (read-only)", name)
		return
	}
	if _, ok := r.dyn[name]; !ok {
		adminFail(w, http.StatusNotFound, "name", "no registered agent named %q", name)
		return
	}
	if err := r.st.DeleteAgent(context.WithoutCancel(req.Context()), name); err != nil && !errors.Is(err, store.ErrNotFound) {
		r.log.Error("delete a registered agent", "agent", name, "err", err)
		adminFail(w, http.StatusInternalServerError, "", "the registration could not be deleted")
		return
	}
	n := r.drop(name, fmt.Sprintf("The agent %s was removed from this server while the task was running.", name))
	r.log.Info("agent removed", "agent", name, "running_tasks_failed", n)
	w.WriteHeader(http.StatusNoContent)
}

// add builds and hosts a registered agent (r.mu held or at start).
func (r *registry) add(ctx context.Context, name string, spec map[string]any) error {
	if err := checkAgentName(name); err != nil {
		return fmt.Errorf("name: %w", err)
	}
	kindKeys := make(map[string]any, len(spec))
	for k, v := range spec {
		if k != "name" {
			kindKeys[k] = v
		}
	}
	var node yaml.Node
	if err := node.Encode(kindKeys); err != nil {
		return err
	}
	if err := checkAgentKeys(name, &node); err != nil {
		var uk *unknownKeyError
		if errors.As(err, &uk) {
			msg := fmt.Sprintf("unknown key %q in %s", uk.Key, uk.Path)
			if uk.Suggest != "" {
				return fmt.Errorf("%s: did you mean %q?", msg, uk.Suggest)
			}
			return fmt.Errorf("%s (valid keys: %s)", msg, strings.Join(uk.Valid, ", "))
		}
		return err
	}
	if missing := expandEnv(&node); len(missing) > 0 {
		return fmt.Errorf("agents.%s: environment variable(s) not set: %s", name, strings.Join(missing, ", "))
	}
	var af agentFile
	if err := node.Decode(&af); err != nil {
		return fmt.Errorf("agents.%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if k, _ := kindOf(name, &node); k != nil && k.builtin && af.Kind == "" {
		return fmt.Errorf("agents.%s.kind: required", name)
	}
	bctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	built, err := buildAgent(bctx, r.log, name, &af, &node)
	if err != nil {
		return err
	}
	o, err := r.cfg.authFor(name, &af)
	if err != nil {
		if built.close != nil {
			_ = built.close()
		}
		return err
	}
	o.ExtendedCard = af.extendedCard(built.card)
	o.Methods = built.methods
	r.host.Add(server.NewHandler(r.eng, name, built.agent, built.card, o))
	r.dyn[name] = &registered{spec: spec, kind: af.Kind, built: built, opts: o}
	return nil
}

// drop unhosts a registered agent, fails its running tasks with reason
// (none when reason is ""), and releases it; it returns the tasks failed.
// With a reason (a removal), a tombstone takes its place until the process
// exits or the name is registered again: its tasks stay readable (get,
// list, subscribe; with the same authentication), and a new message is
// rejected saying the agent was removed.
func (r *registry) drop(name, reason string) int {
	d := r.dyn[name]
	delete(r.dyn, name)
	if reason != "" && d != nil {
		card := d.built.card
		card.Description = "Removed from this server; its tasks stay readable until the server restarts."
		// The tombstone serves no methods of the agent's own (ai/*), nor
		// declares them.
		opts := d.opts
		opts.Methods = nil
		card.Capabilities.Extensions = slices.DeleteFunc(slices.Clone(card.Capabilities.Extensions),
			func(x a2a.AgentExtension) bool { return x.URI == openai.ExtensionURI })
		r.host.Add(server.NewHandler(r.eng, name, removedAgent{name: name}, card, opts))
	} else {
		r.host.Remove(name)
	}
	n := 0
	if reason != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		if n, err = r.eng.StopAgent(ctx, name, reason); err != nil {
			r.log.Error("fail the running tasks of a removed agent", "agent", name, "err", err)
		}
	}
	if d != nil && d.built.close != nil {
		_ = d.built.close()
	}
	return n
}

// removedAgent is the tombstone of a removed agent: every new message is
// rejected (A2A 1.0 §4.1.3, TASK_STATE_REJECTED) with the reason.
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
			if k == "token" || k == "api_key" || k == "api_key_header" {
				continue
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

// secretKeys are keys whose values the admin API does not show back.
var secretKeys = []string{"api_key", "bearer_token", "token", "password", "secret", "authorization", "x-api-key"}

// maskSecrets returns spec with secret values replaced by "***", except
// ${NAME} references, which are not secrets.
func maskSecrets(spec map[string]any) map[string]any {
	out := make(map[string]any, len(spec))
	for k, v := range spec {
		switch x := v.(type) {
		case map[string]any:
			out[k] = maskSecrets(x)
		case string:
			if slices.Contains(secretKeys, strings.ToLower(k)) && !envRef.MatchString(x) {
				out[k] = "***"
			} else {
				out[k] = x
			}
		default:
			out[k] = v
		}
	}
	return out
}
