package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/suggest"
	"github.com/a2abridge/a2abridge/internal/yamlkeys"
	"github.com/a2abridge/a2abridge/server"
)

// Kind is one kind of agent a gateway hosts: the value of an agents
// entry's kind key, or of a registration through the admin API. The
// gateway registers its own (http, exec, openai, a2a, conversation and
// the built-ins echo, chat, slow); RegisterKind adds more.
type Kind interface {
	// Name is the kind key's value ("http"): letters, digits, '-' or '_'.
	Name() string
	// Config returns a pointer to a new zero value of the kind's
	// configuration: a struct whose yaml tags are the keys the kind takes
	// besides the keys of every entry (AgentKeys). Before Build, an
	// unknown key is refused with an error naming its line and the
	// closest valid key, and a value of the wrong type with one naming
	// the key ("agents.NAME.KEY: want a whole number (line 8)"). nil: the
	// kind takes no keys of its own.
	Config() any
	// Build decodes the entry's keys (b.Decode), validates them and
	// constructs the agent. Each line of an error that starts with a key
	// ("url: required", "credentials.api_key: …") is reported as
	// "agents.NAME.KEY: …", any other line as "agents.NAME: …". The card
	// keys of the entry (description, skills, …) apply to the Built card
	// afterwards.
	Build(ctx context.Context, b *Build) (*Built, error)
}

// Build is what a Kind's Build gets: the entry's name and keys.
type Build struct {
	// Name is the agent's name (its path segment: /a2a/{Name}).
	Name string
	// Logger is the gateway's logger; never nil.
	Logger *slog.Logger
	// CheckURL, when set, confines every HTTP request of the agent
	// (redirects and URLs learned at run time included) to the URLs it
	// allows: a participant of an ad-hoc scenario (conversation.Allow).
	// A kind that makes HTTP requests to a configured URL must apply it
	// (remote.Config.CheckURL, openai.Config.CheckURL).
	CheckURL func(*url.URL) error

	node *yaml.Node   // the agents entry, ${NAME} references expanded
	file *AgentConfig // the entry's common keys
	// startup: the gateway is starting and builds every agent before it
	// serves; a kind that would wait on the network for its card returns
	// a stand-in with LateCard at once and starts fetching (Built.fetched).
	startup bool
}

// Decode decodes the entry's keys into cfg, a pointer to the kind's
// configuration (what Config returns); keys the type does not have are
// ignored (they were checked before Build). The error names the key.
func (b *Build) Decode(cfg any) error {
	if b.node == nil {
		return nil
	}
	if err := b.node.Decode(cfg); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

// Built is a Kind's agent.
type Built struct {
	// Agent executes the agent's tasks.
	Agent server.Agent
	// Card is the agent's card (A2A 1.0 §4.4.1) before the entry's card
	// keys apply; an empty name, description or version is filled in.
	Card a2a.AgentCard
	// Close, when set, releases the agent's resources at shutdown or
	// when the agent is removed.
	Close func() error
	// Methods are JSON-RPC methods of the agent's own
	// (server.HandlerOptions.Methods); nil: none.
	Methods map[string]server.Method
	// NoPush serves the agent without push notifications
	// (server.HandlerOptions.NoPush).
	NoPush bool
	// LateCard, when set, is how the agent's card can be had later: it
	// could not be derived when the agent was built (a remote A2A agent
	// that was unreachable), and Card is a stand-in. The gateway calls it
	// in the background (after 1 s, then twice as long each time, up to a
	// minute) until it succeeds, then serves the agent under that card.
	LateCard func(context.Context) (a2a.AgentCard, error)

	// fetched, when set (at startup, with LateCard), is closed once the
	// card fetch the kind started has ended; LateCard then answers at
	// once when it succeeded (fetchErr is nil).
	fetched  chan struct{}
	fetchErr error
}

// agentKind is a registered Kind: its configuration's type, and whether
// it is a built-in agent (hosted under its own name without a config
// entry, and taking the card and auth keys only).
type agentKind struct {
	name    string
	config  reflect.Type // nil: no keys of its own
	builtin bool
	build   func(ctx context.Context, b *Build) (*Built, error)
}

// kinds are the agent kinds, by name.
var kinds = map[string]*agentKind{}

// RegisterKind adds k to the kinds every gateway of the process hosts.
// Call it before New, typically from an init function; it is not safe to
// call while a gateway starts. It panics when a kind of that name is
// registered already or when Config returns something other than a
// pointer to a struct.
func RegisterKind(k Kind) {
	registerKind(k, false)
}

func registerKind(k Kind, builtin bool) {
	name := k.Name()
	if kinds[name] != nil {
		panic("gateway: kind " + name + " registered twice")
	}
	ak := &agentKind{name: name, builtin: builtin, build: k.Build}
	if c := k.Config(); c != nil {
		t := reflect.TypeOf(c)
		if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
			panic("gateway: kind " + name + ": Config must return a pointer to a struct")
		}
		ak.config = t.Elem()
	}
	kinds[name] = ak
}

// kindFunc is a Kind made of its parts.
type kindFunc[C any] struct {
	name  string
	build func(ctx context.Context, b *Build) (*Built, error)
}

func (k kindFunc[C]) Name() string { return k.name }

func (k kindFunc[C]) Config() any {
	if reflect.TypeFor[C]() == reflect.TypeFor[struct{}]() {
		return nil
	}
	return new(C)
}

func (k kindFunc[C]) Build(ctx context.Context, b *Build) (*Built, error) { return k.build(ctx, b) }

// kindNames lists the kinds for error messages: bridges first, then
// built-ins, each alphabetically.
func kindNames() string {
	var bridges, builtins []string
	for n, k := range kinds {
		if k.builtin {
			builtins = append(builtins, n)
		} else {
			bridges = append(bridges, n)
		}
	}
	slices.Sort(bridges)
	slices.Sort(builtins)
	return strings.Join(append(bridges, builtins...), ", ")
}

func init() {
	for _, b := range builtins() {
		registerKind(kindFunc[struct{}]{name: b.name, build: func(ctx context.Context, ab *Build) (*Built, error) {
			return &Built{Agent: b.agent, Card: b.card}, nil
		}}, true)
	}
}

// baseCard is the card of an agent whose kind knows no more than a skill:
// the entry's name, our provider, streaming, text and JSON in and out.
func baseCard(name, description string, skill a2a.AgentSkill) a2a.AgentCard {
	return a2a.AgentCard{
		Name: name, Description: description, Version: "1.0.0",
		Provider:           &a2a.AgentProvider{Organization: "a2abridge", URL: "https://github.com/a2abridge/a2abridge"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, StateTransitionHistory: true},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills:             []a2a.AgentSkill{skill},
	}
}

// kindOf returns the kind of the agents entry name whose mapping node is
// n (before or after ${NAME} expansion): its kind key, else the built-in
// of that name. The error names the key.
func kindOf(name string, n *yaml.Node) (*agentKind, error) {
	k := ""
	if v := mapValue(n, "kind"); v != nil {
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("agents.%s.kind: want one of %s", name, kindNames())
		}
		k = v.Value
	}
	if k == "" {
		if b := kinds[name]; b != nil && b.builtin {
			return b, nil
		}
		return nil, fmt.Errorf("agents.%s.kind: required (one of %s)", name, kindNames())
	}
	kd := kinds[k]
	if kd == nil {
		msg := fmt.Sprintf("agents.%s.kind: unknown kind %q (have %s)", name, k, kindNames())
		if c := suggest.Closest(k, slices.Collect(func(yield func(string) bool) {
			for n := range kinds {
				if !yield(n) {
					return
				}
			}
		})); c != "" {
			msg += fmt.Sprintf("; did you mean %q?", c)
		}
		return nil, errors.New(msg)
	}
	return kd, nil
}

// checkAgentKeys checks the keys of the agents entry name (mapping node
// n): each must be one of AgentKeys' or of its kind's config, checked
// down to nested blocks. The error names the line, the entry and the key.
func checkAgentKeys(name string, n *yaml.Node) error {
	if n == nil || n.Kind != yaml.MappingNode {
		if n != nil && n.ShortTag() != "!!null" {
			return fmt.Errorf("%d: agents.%s: want a mapping of keys (kind, url, …)", n.Line, name)
		}
		return nil
	}
	fields, k, err := agentFields(name, n)
	if err != nil {
		return err
	}
	path := "agents." + name
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, v := n.Content[i], n.Content[i+1]
		if kn.Kind != yaml.ScalarNode || kn.ShortTag() == "!!null" {
			continue
		}
		ft, ok := fields[kn.Value]
		if !ok {
			valid := make([]string, 0, len(fields))
			for f := range fields {
				valid = append(valid, f)
			}
			slices.Sort(valid)
			e := &yamlkeys.UnknownKeyError{Line: kn.Line, Key: kn.Value, Path: path, Suggest: suggest.Closest(kn.Value, valid), Valid: valid}
			if k.builtin {
				return fmt.Errorf("%w (%s is the built-in agent %s: it takes the card and auth keys only)", e, name, k.name)
			}
			return e
		}
		if err := yamlkeys.CheckKeys(v, ft, yamlkeys.JoinPath(path, kn.Value)); err != nil {
			return err
		}
	}
	return nil
}

// agentNode is the node of an agents entry made in code rather than read
// from a file: its kind and its kind's keys (KindKeys), checked as a
// file's entry is.
func agentNode(name string, af *AgentConfig) (*yaml.Node, error) {
	m := maps.Clone(af.KindKeys)
	if m == nil {
		m = map[string]any{}
	}
	if af.Kind != "" {
		m["kind"] = af.Kind
	}
	var n yaml.Node
	if err := n.Encode(m); err != nil {
		return nil, fmt.Errorf("agents.%s: %w", name, err)
	}
	if err := checkAgentKeys(name, &n); err != nil {
		return nil, err
	}
	if err := checkAgentTypes(name, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// buildAgent builds the agents entry name from its decoded entry f and its
// node n (expanded): the kind's agent and card, then the entry's card keys
// over it. Errors name the entry (agents.NAME…).
func buildAgent(ctx context.Context, log *slog.Logger, name string, f *AgentConfig, n *yaml.Node) (*Built, error) {
	return buildAgentChecked(ctx, log, name, f, n, nil)
}

// buildAgentChecked is buildAgent with Build.CheckURL.
func buildAgentChecked(ctx context.Context, log *slog.Logger, name string, f *AgentConfig, n *yaml.Node, checkURL func(*url.URL) error) (*Built, error) {
	return buildAgentWith(ctx, &Build{Name: name, node: n, file: f, Logger: log, CheckURL: checkURL})
}

// buildAgentWith builds the agents entry bd describes (buildAgent).
func buildAgentWith(ctx context.Context, bd *Build) (*Built, error) {
	name, f, n := bd.Name, bd.file, bd.node
	k, err := kindOf(name, n)
	if err != nil {
		return nil, err
	}
	b, err := k.build(ctx, bd)
	if err != nil {
		return nil, agentError(name, err)
	}
	if err := applyCardKeys(name, f, &b.Card); err != nil {
		return nil, err
	}
	if late := b.LateCard; late != nil {
		b.LateCard = func(ctx context.Context) (a2a.AgentCard, error) {
			c, err := late(ctx)
			if err == nil {
				err = applyCardKeys(name, f, &c)
			}
			return c, err
		}
	}
	return b, nil
}

// applyCardKeys applies an entry's card keys (description, version,
// skills, input and output modes, streaming, extensions) to the card its kind built,
// and fills in what is missing (name, description, version).
func applyCardKeys(name string, f *AgentConfig, c *a2a.AgentCard) error {
	if f.Description != "" {
		c.Description = f.Description
	}
	if f.Version != "" {
		c.Version = f.Version
	}
	if len(f.Skills) > 0 {
		c.Skills = nil
		for i, s := range f.Skills {
			if s.ID == "" || s.Name == "" {
				return fmt.Errorf("agents.%s.skills[%d]: id and name are required", name, i)
			}
			c.Skills = append(c.Skills, s.skill())
		}
	}
	if len(f.InputModes) > 0 {
		c.DefaultInputModes = f.InputModes
	}
	if len(f.OutputModes) > 0 {
		c.DefaultOutputModes = f.OutputModes
	}
	if f.Streaming != nil {
		c.Capabilities.Streaming = *f.Streaming
	}
	if err := applyExtensions(name, f.Extensions, c); err != nil {
		return err
	}
	if c.Name == "" {
		c.Name = name
	}
	if c.Description == "" {
		c.Description = "Agent " + name
	}
	if c.Version == "" {
		c.Version = "1.0.0"
	}
	return nil
}

// keyPrefix matches an error line that starts with a config key
// ("url: required", "credentials.api_key: …", "command[0]: …").
var keyPrefix = regexp.MustCompile(`^[a-z][a-z0-9_]*([.\[][^ :]*)?: `)

// agentError names the agent in a kind's error: each line "KEY: …"
// becomes "agents.NAME.KEY: …", any other "agents.NAME: …".
func agentError(name string, err error) error {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		if keyPrefix.MatchString(l) {
			lines[i] = "agents." + name + "." + l
		} else {
			lines[i] = "agents." + name + ": " + l
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

// agentFields are the keys of the agents entry name (node n): the common
// ones and those of its kind, with their Go types.
func agentFields(name string, n *yaml.Node) (map[string]reflect.Type, *agentKind, error) {
	k, err := kindOf(name, n)
	if err != nil {
		return nil, nil, err
	}
	fields := yamlkeys.Fields(reflect.TypeFor[AgentKeys]())
	if k.config != nil {
		for key, t := range yamlkeys.Fields(k.config) {
			fields[key] = t
		}
	}
	return fields, k, nil
}

// checkAgentTypes checks that each value of the agents entry name (node n,
// ${NAME} expanded) has its key's type, key by key and down nested blocks,
// so that an error names the key ("agents.x.max_tokens: want a whole
// number (line 8)") and never quotes the value (it may be an expanded
// secret). Unknown keys are checkAgentKeys' job and are skipped here.
func checkAgentTypes(name string, n *yaml.Node) error {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	fields, _, err := agentFields(name, n)
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if ft, ok := fields[n.Content[i].Value]; ok {
			if err := checkTypes(n.Content[i+1], ft, "agents."+name+"."+n.Content[i].Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTypes decodes n into a value of type t piece by piece and returns
// the first piece that does not fit, as "PATH: want DESCRIPTION (line N)".
func checkTypes(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.ShortTag() == "!!null" {
		return nil
	}
	custom := yamlkeys.Custom(t)
	switch {
	case t == durationType || t == byteSizeType:
		if parseUnit(n, t) == nil {
			return nil
		}
	case custom:
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlkeys.Fields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if ft, ok := fields[n.Content[i].Value]; ok {
				if err := checkTypes(n.Content[i+1], ft, yamlkeys.JoinPath(path, n.Content[i].Value)); err != nil {
					return err
				}
			}
		}
		return nil
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkTypes(n.Content[i+1], t.Elem(), yamlkeys.JoinPath(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
		return nil
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		for i, c := range n.Content {
			if err := checkTypes(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		msg := fmt.Sprintf("%s: want %s", path, describeType(t))
		if n.Line > 0 {
			msg += fmt.Sprintf(" (line %d)", n.Line)
		}
		return errors.New(msg)
	}
	return nil
}

// describeType says what a value of type t is written as in YAML.
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Duration]() || t == reflect.TypeFor[Duration]():
		return "a duration such as 30s or 1m30s"
	case t == reflect.TypeFor[ByteSize]():
		return "a size in bytes such as 1048576 or 256MiB"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number (in range)"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "a "), "an ") + "s"
	case reflect.Map, reflect.Struct:
		return "a mapping of keys to values"
	}
	return "a value of another type"
}
