package gateway

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.yaml.in/yaml/v3"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/conversation"
	"github.com/a2abridge/a2abridge/internal/jsonrpc"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
)

// The conversation bridge: the kind conversation (a named
// scenario in the config file, at /a2a/{name}), the ad-hoc scenarios of
// /api/bridge/{config64}/a2a, and the index GET /api/bridge.

// conversationKind is the name of the kind of a named scenario.
const conversationKind = "conversation"

// conversationConfig is the keys of an agents entry of kind conversation:
// the scenario inline (scenario:, its JSON form's keys in YAML) or in a
// file (scenario_file:, YAML or JSON; a relative path is relative to the
// config file's directory).
type conversationConfig struct {
	Scenario     map[string]any `yaml:"scenario"`
	ScenarioFile string         `yaml:"scenario_file"`
}

func init() {
	registerKind(kindFunc[conversationConfig]{name: conversationKind, build: buildConversation}, false)
}

// buildConversation builds a named scenario: its participants are built
// by kind as agents entries are (any kind but conversation).
func buildConversation(ctx context.Context, b *Build) (*Built, error) {
	var c conversationConfig
	if err := b.Decode(&c); err != nil {
		return nil, err
	}
	var s *conversation.Scenario
	var err error
	switch {
	case c.Scenario != nil && c.ScenarioFile != "":
		return nil, errors.New("scenario_file: give scenario or scenario_file, not both")
	case c.ScenarioFile != "":
		s, err = loadScenarioFile(c.ScenarioFile)
		if err != nil {
			return nil, fmt.Errorf("scenario_file: %w", err)
		}
	case c.Scenario != nil:
		raw, err := json.Marshal(c.Scenario)
		if err != nil {
			return nil, fmt.Errorf("scenario: %v", err)
		}
		if s, err = conversation.ParseJSON(raw); err != nil {
			return nil, scenarioKeyError("scenario", err)
		}
	default:
		return nil, errors.New("scenario: required (or scenario_file)")
	}
	a, err := conversation.New(ctx, s, conversation.Options{Factory: participantFactory(b.Logger, nil), Logger: b.Logger.With("agent", b.Name)})
	if err != nil {
		return nil, scenarioKeyError("scenario", err)
	}
	return &Built{Agent: a, Card: a.Card(), Close: a.Close, NoPush: true}, nil
}

// scenarioKeyError names a scenario's field below key ("scenario.agents[1].id: …").
func scenarioKeyError(key string, err error) error {
	var fe *conversation.FieldError
	if errors.As(err, &fe) {
		return fmt.Errorf("%s.%s: %s", key, fe.Field, fe.Reason)
	}
	return fmt.Errorf("%s: %w", key, err)
}

// resolveScenarioFiles makes the relative scenario_file of each agents
// entry (nodes, by name) relative to dir, the config file's directory.
func resolveScenarioFiles(nodes map[string]*yaml.Node, dir string) {
	for _, n := range nodes {
		if v := mapValue(n, "scenario_file"); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" && !filepath.IsAbs(v.Value) {
			v.Value = filepath.Join(dir, v.Value)
		}
	}
}

// LoadScenario reads a conversation scenario file (YAML or JSON, at most
// 1 MiB) and checks each internal participant as the gateway would build
// it (its kind and config keys). Errors name the file, or are a
// *conversation.FieldError naming the scenario's field (agents[I].kind,
// agents[I].config.KEY).
func LoadScenario(path string) (*conversation.Scenario, error) {
	s, err := loadScenarioFile(path)
	if err == nil {
		err = checkScenarioParticipants(s, false)
	}
	return s, err
}

// maxScenarioFile bounds a scenario file.
const maxScenarioFile = 1 << 20

// loadScenarioFile reads a scenario in YAML or JSON (a JSON document is
// YAML too); errors name the file and the scenario's field.
func loadScenarioFile(path string) (*conversation.Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw := make([]byte, maxScenarioFile+1)
	n, _ := readFull(f, raw)
	if n > maxScenarioFile {
		return nil, fmt.Errorf("%s: over %d bytes", path, maxScenarioFile)
	}
	s, err := parseScenario(raw[:n])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func readFull(f *os.File, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// parseScenario parses a scenario written in JSON or YAML: YAML is
// turned into JSON (keys must be strings), then decoded strictly.
func parseScenario(raw []byte) (*conversation.Scenario, error) {
	trimmed := strings.TrimSpace(string(raw))
	if strings.HasPrefix(trimmed, "{") {
		return conversation.ParseJSON(raw)
	}
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("not a scenario (keys must be strings): %v", err)
	}
	return conversation.ParseJSON(b)
}

// checkParticipant checks an internal participant as an agents entry of
// its kind with Config as its keys, without building it: the kind is
// known (and not a conversation), and the keys and their types are
// checked (checkAgentKeys, checkAgentTypes). Errors name what is wrong
// as "kind: …" or "config.KEY: …". It returns the entry as a YAML node
// and decoded, for buildAgentChecked.
func checkParticipant(p conversation.Participant) (*yaml.Node, *AgentConfig, error) {
	if err := participantKindError(p.Kind); err != nil {
		return nil, nil, err
	}
	entry := map[string]any{}
	for k, v := range p.Config {
		entry[k] = v
	}
	entry["kind"] = p.Kind
	var node yaml.Node
	if err := node.Encode(entry); err != nil {
		return nil, nil, fmt.Errorf("config: %v", err)
	}
	name := participantName(p)
	if err := checkAgentKeys(name, &node); err != nil {
		return nil, nil, renameParticipantError(name, err)
	}
	if err := checkAgentTypes(name, &node); err != nil {
		return nil, nil, renameParticipantError(name, err)
	}
	var af AgentConfig
	if err := node.Decode(&af); err != nil {
		return nil, nil, fmt.Errorf("config: %v", err)
	}
	return &node, &af, nil
}

// participantName is the agents entry name a participant is built under.
func participantName(p conversation.Participant) string { return "participant-" + p.ID }

// renameParticipantError rewrites an error about the agents entry name
// (agents.NAME.KEY) to one about the participant's config (config.KEY).
func renameParticipantError(name string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "0: ") // the line of a node made here
	msg = strings.ReplaceAll(msg, "agents."+name+".", "config.")
	msg = strings.ReplaceAll(msg, "agents."+name, "config")
	return errors.New(msg)
}

// participantKindError is nil when kind can be an internal participant's:
// a known agent kind other than conversation.
func participantKindError(kind string) error {
	if kind == conversationKind {
		return errors.New("kind: a participant cannot be a conversation")
	}
	if k := kinds[kind]; k == nil {
		return fmt.Errorf("kind: unknown kind %q (have %s)", kind, participantKindNames())
	}
	return nil
}

// participantKindNames lists the kinds a participant may have, as
// kindNames does (every kind but conversation).
func participantKindNames() string {
	var out []string
	for _, n := range strings.Split(kindNames(), ", ") {
		if n != conversationKind {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// checkScenarioParticipants runs checkParticipant on each internal
// participant of s; the first error is a *conversation.FieldError naming
// its field (agents[I].kind, agents[I].config.KEY), with the reason
// conversation.New gives for the same participant.
func checkScenarioParticipants(s *conversation.Scenario, kindsOnly bool) error {
	for i, p := range s.Agents {
		if p.External {
			continue
		}
		var err error
		if kindsOnly {
			err = participantKindError(p.Kind)
		} else {
			_, _, err = checkParticipant(p)
		}
		if err == nil {
			continue
		}
		field, msg := fmt.Sprintf("agents[%d]", i), err.Error()
		if key, rest, ok := strings.Cut(msg, ": "); ok && (key == "kind" || key == "config" || strings.HasPrefix(key, "config.") || strings.HasPrefix(key, "config[")) && !strings.ContainsAny(key, " \t\"") {
			field, msg = field+"."+key, rest
		} else if m := unknownConfigKey.FindStringSubmatch(msg); m != nil {
			field += ".config." + m[1]
		}
		return &conversation.FieldError{Field: field, Reason: fmt.Sprintf("participant %q: %s", p.ID, msg)}
	}
	return nil
}

// unknownConfigKey matches checkAgentKeys' error about a participant's
// config (renamed by renameParticipantError), for the key it names.
var unknownConfigKey = regexp.MustCompile(`^unknown key "([^"]+)" in config\b`)

// participantFactory builds a participant by its kind, as an agents entry
// of that kind with Config as its keys (checkParticipant: errors name the
// keys as "config.KEY"). A participant cannot be a conversation. checkURL,
// when set (an ad-hoc scenario: its conversation.Allow's CheckURL),
// confines every HTTP request of the participants
// (Build.CheckURL).
func participantFactory(log *slog.Logger, checkURL func(*url.URL) error) conversation.Factory {
	return func(ctx context.Context, p conversation.Participant) (server.Agent, error) {
		node, af, err := checkParticipant(p)
		if err != nil {
			return nil, err
		}
		name := participantName(p)
		b, err := buildAgentChecked(ctx, log, name, af, node, checkURL)
		if err != nil {
			return nil, renameParticipantError(name, err)
		}
		if b.Close == nil {
			return b.Agent, nil
		}
		return closingAgent{Agent: b.Agent, close: b.Close}, nil
	}
}

// closingAgent is a participant with what releases its resources.
type closingAgent struct {
	server.Agent
	close func() error
}

func (c closingAgent) Close() error { return c.close() }

// conversationsFile is the conversations block of the config file: the
// ad-hoc scenarios of /api/bridge/{config64}/a2a. They are off unless
// adhoc is true, and may then use only the participant kinds and the
// URLs listed (a URL must not make the server call arbitrary hosts or run
// commands: exec is not allowed unless listed).
type ConversationsConfig struct {
	// AdHoc serves ad-hoc scenarios at /api/bridge/{config64}/a2a.
	AdHoc bool `yaml:"adhoc"`
	// Kinds are the participant kinds an ad-hoc scenario may use
	// (required with AdHoc).
	Kinds []string `yaml:"kinds"`
	// URLs are the URLs (prefixes) its participants may call
	// (conversation.Allow).
	URLs []string `yaml:"urls"`
	// MaxConfigBytes bounds a config64's scenario JSON; unset:
	// conversation.DefaultMaxConfigBytes (16 KiB); at most 1 MiB.
	MaxConfigBytes *ByteSize `yaml:"max_config_bytes"`
	// MaxScenarios is how many ad-hoc scenarios are hosted at once (the
	// least recently used is dropped); unset: defaultMaxAdHoc.
	MaxScenarios *int `yaml:"max_scenarios"`
	// MaxTurns is the most turns of an ad-hoc conversation (its
	// rules.maxTurns may ask for fewer, not more); unset:
	// DefaultAdHocMaxTurns (100); 1 to conversation.MaxTurnsLimit.
	MaxTurns *int `yaml:"max_turns"`
	// MaxTurnBytes is the most bytes of one turn of an ad-hoc
	// conversation (rules.maxTurnBytes); unset:
	// conversation.DefaultMaxTurnBytes (64 KiB); at most 16 MiB.
	MaxTurnBytes *ByteSize `yaml:"max_turn_bytes"`
	// MaxTotalBytes is the most bytes of all turns of an ad-hoc
	// conversation (rules.maxTotalBytes); unset:
	// conversation.DefaultMaxTotalBytes (1 MiB); at most 64 MiB.
	MaxTotalBytes *ByteSize `yaml:"max_total_bytes"`
	// Attachments bounds the files of conversation endpoints: the ad-hoc scenarios', and the named scenarios' that have no
	// attachments block of their own (agents.NAME.attachments). Every
	// conversation endpoint stores the files the client sends by value,
	// and those its participants answer by value, and passes them on as
	// URLs; unset or max_bytes 0: server.DefaultAttachmentMaxBytes.
	Attachments *AttachmentsConfig `yaml:"attachments"`
}

// attachmentOptions are the attachments of conversation endpoints (nil
// when the store keeps no attachments: files then stay inline).
func (c *ConversationsConfig) attachmentOptions(st store.Store) *server.AttachmentOptions {
	if _, ok := st.(store.AttachmentStore); !ok {
		return nil
	}
	o := &server.AttachmentOptions{}
	if c != nil && c.Attachments != nil {
		o.MaxBytes = int64(c.Attachments.MaxBytes)
	}
	return o
}

// conversationHandlerOptions turns attachments on for a named scenario
// (kind conversation) without an attachments block of its own.
func conversationHandlerOptions(a hostedAgent, c *ConversationsConfig, st store.Store) server.HandlerOptions {
	o := a.opts
	if a.kind == conversationKind && o.Attachments == nil {
		o.Attachments = c.attachmentOptions(st)
	}
	return o
}

// DefaultAdHocMaxTurns is the most turns of an ad-hoc conversation
// unless conversations.max_turns says otherwise.
const DefaultAdHocMaxTurns = 100

// limits are the ceilings of ad-hoc scenarios' rules.
func (c *ConversationsConfig) limits() conversation.Limits {
	l := conversation.Limits{MaxTurns: DefaultAdHocMaxTurns, MaxTurnBytes: conversation.DefaultMaxTurnBytes, MaxTotalBytes: conversation.DefaultMaxTotalBytes}
	if c.MaxTurns != nil {
		l.MaxTurns = *c.MaxTurns
	}
	if c.MaxTurnBytes != nil {
		l.MaxTurnBytes = int64(*c.MaxTurnBytes)
	}
	if c.MaxTotalBytes != nil {
		l.MaxTotalBytes = int64(*c.MaxTotalBytes)
	}
	if c.MaxTurnBytes == nil {
		l.MaxTurnBytes = min(l.MaxTurnBytes, l.MaxTotalBytes) // a turn is part of the total
	}
	return l
}

// defaultMaxAdHoc is how many ad-hoc scenarios are hosted at once.
const defaultMaxAdHoc = 64

// adHocBuildTimeout bounds the building of an ad-hoc scenario's
// participants.
const adHocBuildTimeout = 10 * time.Second

// maxAdHocBuilds is how many ad-hoc scenarios are built at once (building
// may dial: an a2a participant fetches its card); a request for another
// one meanwhile gets HTTP 503 with Retry-After. Concurrent requests for
// the same scenario share one build.
const maxAdHocBuilds = 4

// check validates the block; errors name the key.
func (c *ConversationsConfig) check() error {
	if c == nil {
		return nil
	}
	for i, k := range c.Kinds {
		if kinds[k] == nil || k == conversationKind {
			return fmt.Errorf("conversations.kinds[%d]: unknown participant kind %q (have %s)", i, k, kindNames())
		}
	}
	if c.AdHoc && len(c.Kinds) == 0 {
		return errors.New("conversations.kinds: required with adhoc: true (the participant kinds an ad-hoc scenario may use)")
	}
	if err := (conversation.Allow{URLs: c.URLs}).Validate(); err != nil {
		return fmt.Errorf("conversations.%w", err)
	}
	if c.MaxConfigBytes != nil && (*c.MaxConfigBytes < 256 || *c.MaxConfigBytes > 1<<20) {
		return errors.New("conversations.max_config_bytes: want 256 to 1048576")
	}
	if c.MaxScenarios != nil && (*c.MaxScenarios < 1 || *c.MaxScenarios > 10000) {
		return errors.New("conversations.max_scenarios: want 1 to 10000")
	}
	if c.MaxTurns != nil && (*c.MaxTurns < 1 || *c.MaxTurns > conversation.MaxTurnsLimit) {
		return fmt.Errorf("conversations.max_turns: want 1 to %d", conversation.MaxTurnsLimit)
	}
	if c.MaxTurnBytes != nil && (*c.MaxTurnBytes < 1 || *c.MaxTurnBytes > conversation.MaxTurnBytesLimit) {
		return fmt.Errorf("conversations.max_turn_bytes: want 1B to 16MiB (unset: 64KiB)")
	}
	if c.MaxTotalBytes != nil && (*c.MaxTotalBytes < 1 || *c.MaxTotalBytes > conversation.MaxTotalBytesLimit) {
		return fmt.Errorf("conversations.max_total_bytes: want 1B to 64MiB (unset: 1MiB)")
	}
	if l := c.limits(); l.MaxTurnBytes > l.MaxTotalBytes {
		return fmt.Errorf("conversations.max_turn_bytes: %d bytes, more than conversations.max_total_bytes (%d)", l.MaxTurnBytes, l.MaxTotalBytes)
	}
	if c.Attachments != nil && c.Attachments.MaxBytes < 0 {
		return errors.New("conversations.attachments.max_bytes: want a size of 0 or more (0: the default, 8MiB)")
	}
	return nil
}

// mountConversations serves the conversation bridge's routes on host:
//
//	GET  /api/bridge                                         the named scenarios and their card URLs
//	POST /api/bridge/{config64}/a2a                          an ad-hoc scenario's A2A endpoint (and every route an agent has below it)
//	GET  /api/bridge/{config64}/a2a/.well-known/agent-card.json   its card
//	GET  /api/bridge/{config64}/a2a/diag                     the decoded scenario, or 400 naming what is wrong
//
// Ad-hoc scenarios are served only with conversations.adhoc (404
// otherwise). Their authentication is the server's default (auth:, or
// --auth-token), and it comes first on every route, the card and diag
// included: a request without valid credentials gets 401 before its
// config64 is decoded or any participant built. A scenario is hosted
// under the SHA-256 of its JSON form, whatever config64 spelled it
// (padding, key order, spaces): its routes are mounted at the config64
// of conversation.EncodeConfig64 (the first request's, when that is over
// the size limit), the URL its card gives, and answer at any other
// spelling too. At most maxAdHocBuilds scenarios are built at once (503
// beyond), and concurrent requests for one scenario share its build.
// With a store that keeps attachments, their files are
// passed on as attachment URLs (conversations.attachments); the returned
// bridgeRoutes' handler finds their handlers for the attachments route.
func mountConversations(log *slog.Logger, eng *server.Engine, host *server.Host, cfg serveConfig, st store.Store) (*bridgeRoutes, error) {
	c := cfg.conversations
	if c == nil {
		c = &ConversationsConfig{}
	}
	opts, err := cfg.authFor("bridge", nil)
	if err != nil {
		return nil, err
	}
	opts.NoPush = true
	opts.Attachments = c.attachmentOptions(st) // (named scenarios: conversationHandlerOptions)
	b := &bridgeRoutes{log: log, eng: eng, host: host, cfg: c, opts: opts, byName: map[string]*list.Element{}, lru: list.New(),
		building: map[string]*adHocBuild{}, slots: make(chan struct{}, maxAdHocBuilds),
		max: defaultMaxAdHoc, maxBytes: conversation.DefaultMaxConfigBytes, allow: conversation.Allow{Kinds: c.Kinds, URLs: c.URLs, Limits: c.limits()}}
	// The server's default authentication, run before anything of an
	// ad-hoc request is decoded (the handlers it hosts use the same).
	b.gate = server.NewHandler(eng, "bridge", server.AgentFunc(func(context.Context, *server.Request, *server.TaskUpdater) error {
		return errors.New("not an agent")
	}), a2a.AgentCard{Name: "bridge"}, server.HandlerOptions{Auth: opts.Auth, NoPush: true})
	if c.MaxScenarios != nil {
		b.max = *c.MaxScenarios
	}
	if c.MaxConfigBytes != nil {
		b.maxBytes = int(*c.MaxConfigBytes)
	}
	for _, a := range cfg.agents {
		if a.kind == conversationKind {
			b.named = append(b.named, a)
		}
	}
	host.Handle("GET /api/bridge", http.HandlerFunc(b.serveIndex))
	host.Handle("GET /api/bridge/{$}", http.HandlerFunc(b.serveIndex))
	adhoc := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !b.cfg.AdHoc {
			bridgeError(w, r, http.StatusNotFound, "config64", adHocOff)
			return
		}
		b.gate.Authenticated(http.HandlerFunc(b.serveAdHoc), func(w http.ResponseWriter, r *http.Request, status int, err *a2a.Error) {
			abandonBody(r)
			server.WriteError(w, status, err)
		}).ServeHTTP(w, r)
	})
	host.Handle("/api/bridge/{config64}/a2a", adhoc)
	host.Handle("/api/bridge/{config64}/a2a/{rest...}", adhoc)
	return b, nil
}

// bridgeRoutes serves /api/bridge.
type bridgeRoutes struct {
	log      *slog.Logger
	eng      *server.Engine
	host     *server.Host
	cfg      *ConversationsConfig
	opts     server.HandlerOptions
	allow    conversation.Allow
	named    []hostedAgent
	max      int
	maxBytes int

	gate  *server.AgentHandler // authenticates ad-hoc requests (the server's default auth)
	slots chan struct{}        // one per build running

	mu       sync.Mutex
	byName   map[string]*list.Element // by handler name ("bridge-" and the scenario's hash; its task namespace)
	lru      *list.List               // of *adHoc, most recent first
	building map[string]*adHocBuild   // builds running, by handler name
}

// adHoc is a hosted ad-hoc scenario.
type adHoc struct {
	config64 string // canonical (conversation.EncodeConfig64)
	h        *server.AgentHandler
	routes   http.Handler
}

// adHocBuild is a build of an ad-hoc scenario that requests for it wait
// for; done is closed when e (or the refusal) is set.
type adHocBuild struct {
	done       chan struct{}
	e          *adHoc
	status     int
	field, msg string
}

// adHocOff answers an ad-hoc route on a server without conversations.adhoc.
const adHocOff = "ad-hoc scenarios are not enabled on this server (the operator turns them on with conversations.adhoc)"

// abandonBody drains a little of a refused request's body, so that its
// connection may be reused, and closes it.
func abandonBody(r *http.Request) {
	_, _ = io.CopyN(io.Discard, r.Body, 64<<10)
	_ = r.Body.Close()
}

// handler returns the AgentHandler of the agent named name: a hosted agent,
// else a hosted ad-hoc scenario (for the attachments route; one dropped
// from the hosted ones is not found until a request hosts it again).
func (b *bridgeRoutes) handler(name string) (*server.AgentHandler, bool) {
	if h, ok := b.host.Handler(name); ok {
		return h, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if el, ok := b.byName[name]; ok {
		return el.Value.(*adHoc).h, true
	}
	return nil, false
}

// serveIndex lists the named scenarios (GET /api/bridge).
func (b *bridgeRoutes) serveIndex(w http.ResponseWriter, r *http.Request) {
	base := b.host.BaseURL(r)
	type entry struct {
		Name       string `json:"name"`
		Title      string `json:"title"`
		ScenarioID string `json:"scenarioId,omitempty"`
		URL        string `json:"url"`
		Card       string `json:"card"`
	}
	out := struct {
		Scenarios []entry `json:"scenarios"`
		AdHoc     bool    `json:"adhoc"`
		Route     string  `json:"adhocRoute,omitempty"`
	}{Scenarios: []entry{}, AdHoc: b.cfg.AdHoc}
	if b.cfg.AdHoc {
		out.Route = base + "/api/bridge/{config64}/a2a"
	}
	for _, a := range b.named {
		e := entry{Name: a.name, Title: a.built.Card.Name, URL: base + "/a2a/" + a.name, Card: base + "/a2a/" + a.name + "/.well-known/agent-card.json"}
		if ca, ok := a.built.Agent.(*conversation.Agent); ok {
			e.ScenarioID = ca.Scenario().ScenarioID
		}
		out.Scenarios = append(out.Scenarios, e)
	}
	writeBridgeJSON(w, http.StatusOK, out)
}

func writeBridgeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// bridgeError answers a refused ad-hoc request: JSON-RPC's error shape
// for a POST (the client speaks JSON-RPC or HTTP+JSON), a plain JSON
// error naming the field otherwise. A bad scenario POSTed to the JSON-RPC
// endpoint itself is answered as every JSON-RPC error of the server is:
// HTTP 200 with the error (-32602) and the request's id, which JSON-RPC
// clients read (the official a2a-go client reports only "unexpected HTTP
// status" for a 400); the HTTP+JSON routes get the HTTP status.
func bridgeError(w http.ResponseWriter, r *http.Request, status int, field, msg string) {
	if r.Method != http.MethodPost {
		writeBridgeJSON(w, status, map[string]string{"error": msg, "field": field})
		return
	}
	if status == http.StatusBadRequest && r.PathValue("rest") == "" {
		body := jsonrpc.AppendError(nil, requestID(r), a2a.InvalidParams(field, msg))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return
	}
	server.WriteError(w, status, a2a.InvalidParams(field, msg))
}

// maxRefusedBody bounds what is read of a refused JSON-RPC request to
// answer with its id.
const maxRefusedBody = 64 << 10

// requestID returns the id of the JSON-RPC request in r's body (at most
// maxRefusedBody bytes are read): a string or a number, else nil (the
// answer's id is then null, JSON-RPC 2.0 §5).
func requestID(r *http.Request) jsontext.Value {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxRefusedBody+1))
	if err != nil || len(b) > maxRefusedBody {
		return nil
	}
	var env struct {
		ID jsontext.Value `json:"id"`
	}
	if json.Unmarshal(b, &env) != nil {
		return nil
	}
	switch k := env.ID.Kind(); k {
	case '"', '0':
		return env.ID
	}
	return nil
}

// scenario decodes and checks a config64 as the endpoint does.
func (b *bridgeRoutes) scenario(config64 string) (*conversation.Scenario, int, string, string) {
	if !b.cfg.AdHoc {
		return nil, http.StatusNotFound, "config64", adHocOff
	}
	s, err := conversation.DecodeConfig64(config64, b.maxBytes)
	if err == nil {
		// An unknown kind is named as such before the allowlist says it
		// is not allowed; then each participant's config is checked as
		// the endpoint will build it, so diag answers what the endpoint
		// would (without building anything: nothing is dialed).
		err = checkScenarioParticipants(s, true)
	}
	if err == nil {
		err = b.allow.Check(s)
	}
	if err == nil {
		err = checkScenarioParticipants(s, false)
	}
	if err != nil {
		var fe *conversation.FieldError
		if errors.As(err, &fe) {
			return nil, http.StatusBadRequest, fe.Field, err.Error()
		}
		return nil, http.StatusBadRequest, "config64", err.Error()
	}
	return s, 0, "", ""
}

// serveAdHoc serves /api/bridge/{config64}/a2a[/…] (authenticated).
func (b *bridgeRoutes) serveAdHoc(w http.ResponseWriter, r *http.Request) {
	c64 := r.PathValue("config64")
	s, status, field, msg := b.scenario(c64)
	if s == nil {
		bridgeError(w, r, status, field, msg)
		return
	}
	canon := b.canonical(s, c64)
	if r.PathValue("rest") == "diag" && r.Method == http.MethodGet {
		base := b.host.BaseURL(r) + "/api/bridge/" + canon + "/a2a"
		var sc any
		_ = json.Unmarshal(s.JSON(), &sc)
		writeBridgeJSON(w, http.StatusOK, map[string]any{"scenario": sc, "url": base, "card": base + "/.well-known/agent-card.json",
			"config64": canon})
		return
	}
	e, status, field, msg := b.routes(r.Context(), s, canon)
	if e == nil {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		bridgeError(w, r, status, field, msg)
		return
	}
	e.routes.ServeHTTP(w, rebase(r, c64, e.config64))
}

// canonical returns the config64 under which s is hosted:
// conversation.EncodeConfig64(s), or c64 (the request's) when that is
// over the size limit (the JSON form spells out defaults, such as
// "external":false, and may be longer than the one sent).
func (b *bridgeRoutes) canonical(s *conversation.Scenario, c64 string) string {
	if len(s.JSON()) > b.maxBytes {
		return c64
	}
	return conversation.EncodeConfig64(s)
}

// rebase returns r with its config64 path segment (c64) replaced by
// canon, the one the scenario's routes are mounted at; r itself when they
// are the same.
func rebase(r *http.Request, c64, canon string) *http.Request {
	if c64 == canon {
		return r
	}
	const head = "/api/bridge/"
	p := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(p, head)
	if !ok {
		return r
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		i = len(rest)
	}
	np := head + canon + rest[i:]
	u := *r.URL
	u.RawPath = np
	if up, err := url.PathUnescape(np); err == nil {
		u.Path = up
	}
	r2 := r.WithContext(r.Context())
	r2.URL = &u
	return r2
}

// routes returns the hosted ad-hoc scenario s (canon its canonical
// config64, where a new one is mounted), building and hosting it on first use; at most
// b.max are kept (least recently used dropped: its tasks stay in the
// store, and the next request for the scenario hosts it again under the
// same task namespace). Concurrent requests for one scenario wait for one
// build; at most maxAdHocBuilds run at once (503 beyond).
func (b *bridgeRoutes) routes(ctx context.Context, s *conversation.Scenario, canon string) (*adHoc, int, string, string) {
	// The task namespace: the scenario itself (however its config64 was
	// spelled, the same scenario's conversations are found).
	sum := sha256.Sum256(s.JSON())
	name := "bridge-" + hex.EncodeToString(sum[:12])
	b.mu.Lock()
	if el, ok := b.byName[name]; ok {
		b.lru.MoveToFront(el)
		b.mu.Unlock()
		return el.Value.(*adHoc), 0, "", ""
	}
	if bc, ok := b.building[name]; ok {
		b.mu.Unlock()
		select {
		case <-bc.done:
		case <-ctx.Done():
			return nil, http.StatusServiceUnavailable, "config64", "the request ended while its scenario was being built"
		}
		if bc.e == nil {
			return nil, bc.status, bc.field, bc.msg
		}
		return bc.e, 0, "", ""
	}
	select {
	case b.slots <- struct{}{}:
	default:
		b.mu.Unlock()
		return nil, http.StatusServiceUnavailable, "config64", fmt.Sprintf("%d ad-hoc scenarios are being built; retry shortly", maxAdHocBuilds)
	}
	bc := &adHocBuild{done: make(chan struct{})}
	b.building[name] = bc
	b.mu.Unlock()

	e, status, field, msg := b.build(ctx, s, canon, name)
	<-b.slots
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.building, name)
	bc.e, bc.status, bc.field, bc.msg = e, status, field, msg
	close(bc.done)
	if e == nil {
		return nil, status, field, msg
	}
	el := b.lru.PushFront(e)
	b.byName[name] = el
	for b.lru.Len() > b.max {
		old := b.lru.Back()
		b.lru.Remove(old)
		delete(b.byName, old.Value.(*adHoc).h.Name())
		// Not closed: an execution of it may still run (its participants'
		// clients are released by the garbage collector).
	}
	return e, 0, "", ""
}

// build builds the ad-hoc scenario s as the handler name, mounted at its
// canonical config64.
func (b *bridgeRoutes) build(ctx context.Context, s *conversation.Scenario, canon, name string) (*adHoc, int, string, string) {
	// Building may dial (an a2a participant fetches its card): bounded,
	// and not cut short by this request's client going away (others may
	// wait for it).
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), adHocBuildTimeout)
	defer cancel()
	ag, err := conversation.New(bctx, s, conversation.Options{Factory: participantFactory(b.log, b.allow.CheckURL), Logger: b.log, Limits: b.allow.Limits})
	if err != nil {
		var fe *conversation.FieldError
		if errors.As(err, &fe) {
			return nil, http.StatusBadRequest, fe.Field, err.Error()
		}
		return nil, http.StatusBadRequest, "config64", err.Error()
	}
	h := server.NewHandler(b.eng, name, ag, ag.Card(), b.opts)
	return &adHoc{config64: canon, h: h, routes: b.host.Mount(h, "/api/bridge/"+canon+"/a2a")}, 0, "", ""
}
