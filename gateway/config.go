package gateway

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"go.yaml.in/yaml/v3"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/yamlkeys"
)

// telemetryFile is the telemetry block of serve's config file.
type TelemetryConfig struct {
	// OTLPEndpoint is the base URL of an OTLP receiver
	// (--otlp-endpoint).
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// OTLPProtocol is the OTLP transport, "http/protobuf" or "grpc"
	// (--otlp-protocol).
	OTLPProtocol string `yaml:"otlp_protocol"`
	// MetricsAddr is where GET /metrics is served on a listener of its
	// own (--metrics-addr).
	MetricsAddr string `yaml:"metrics_addr"`
	// Metrics serves GET /metrics on the main listener (--metrics).
	Metrics bool `yaml:"metrics"`
}

// serveFile is the `a2abridge serve --config FILE` format (YAML). Values
// may reference environment variables as ${NAME}; an unset variable is an
// error. Flags given on the command line override the file. A key that is
// not a field's yaml tag is an error naming its line and the closest valid
// key (checkKeys derives the valid keys from the tags by reflection).
type Config struct {
	Addr      string `yaml:"addr"`
	PublicURL string `yaml:"public_url"`
	Data      string `yaml:"data"`
	Memory    bool   `yaml:"memory"`
	// Postgres keeps tasks in PostgreSQL (store/postgres) instead of
	// SQLite under data; exclusive with data and memory.
	Postgres *PostgresConfig `yaml:"postgres"`
	Default  string          `yaml:"default"`
	// Retention is how long finished tasks are kept (0: forever); unset:
	// DefaultRetention.
	Retention *Duration `yaml:"retention"`
	// MemoryCap caps what finished tasks hold with the in-memory store,
	// in bytes ("256MiB", "1GB", 1048576; 0: no cap); unset: the default.
	MemoryCap *ByteSize `yaml:"memory_cap"`
	// ShutdownGrace is how long running tasks may finish at SIGTERM or
	// SIGINT before they are failed; unset: DefaultShutdownGrace.
	ShutdownGrace *Duration `yaml:"shutdown_grace"`
	// MaxBatch limits the requests of one JSON-RPC batch (1 or more);
	// unset: server.DefaultMaxBatch.
	MaxBatch *int `yaml:"max_batch"`
	// BodyReadTimeout is the time a client has to send a request body
	// (0: no limit); unset: server.DefaultBodyReadTimeout.
	BodyReadTimeout *Duration `yaml:"body_read_timeout"`
	// TrustedProxies are the reverse proxies (CIDR prefixes or IPs) whose
	// forwarding headers are believed (server.HostOptions.TrustedProxies).
	TrustedProxies []string `yaml:"trusted_proxies"`
	// AllowedHosts are the Host headers (HOST or HOST:PORT) that may be
	// written into agent cards (server.HostOptions.AllowedHosts).
	AllowedHosts []string `yaml:"allowed_hosts"`
	// CardMaxAge is the agent cards' Cache-Control max-age (0: clients
	// revalidate every time); unset: server.DefaultCardMaxAge.
	CardMaxAge *Duration `yaml:"card_max_age"`
	// Protocols are the A2A versions served ("1.0", "0.3"); unset: both.
	Protocols []string `yaml:"protocols"`
	Push      struct {
		Enabled     bool     `yaml:"enabled"`
		Allow       []string `yaml:"allow"`
		GiveUpAfter Duration `yaml:"give_up_after"`
		Keys        string   `yaml:"keys"`
		Algorithm   string   `yaml:"algorithm"`    // ES256 (default) or RS256
		RotateEvery Duration `yaml:"rotate_every"` // 0: never; the previous key stays published for 24 h
	} `yaml:"push"`
	// CardSigning signs the agent cards served (A2A 1.0 §8.4).
	CardSigning *CardSigningConfig `yaml:"card_signing"`
	// Telemetry exports traces and metrics (issue 16).
	Telemetry TelemetryConfig `yaml:"telemetry"`
	// Auth applies to every agent without an auth block of its own.
	Auth   *AuthConfig            `yaml:"auth"`
	Agents map[string]AgentConfig `yaml:"agents"`
	// Builtins hosts the built-in agents echo, chat and slow besides the
	// configured ones; unset: true.
	Builtins *bool `yaml:"builtins"`
	// Admin turns on the admin API (/api/v1/agents) for these bearer
	// tokens (subject: token or "sha256:<hex>"); unset: off.
	Admin *AdminConfig `yaml:"admin"`
	// Conversations turns on ad-hoc conversation scenarios
	// (/api/bridge/{config64}/a2a) and says what they may use.
	Conversations *ConversationsConfig `yaml:"conversations"`
	// Pairs turns on paired participants (POST /api/pairs, bridge/pair).
	Pairs *PairsConfig `yaml:"pairs"`

	agentNodes map[string]*yaml.Node // agents entries, ${NAME} expanded
}

// postgresFile is the postgres block.
type PostgresConfig struct {
	// DSN is the database's connection string (URL or key=value pairs,
	// as libpq takes them); write its password as ${NAME}.
	DSN string `yaml:"dsn"`
	// Replica: this serve is one of several replicas on the database
	// (--replica).
	Replica bool `yaml:"replica"`
	// Lease is how long a dead replica's running tasks wait before
	// another fails them (--lease); unset: server.DefaultLeaseTime.
	Lease *Duration `yaml:"lease"`
}

// adminFile is the admin block: who may use the admin API, and what a
// registration may do.
type AdminConfig struct {
	BearerTokens map[string]string `yaml:"bearer_tokens"`
	// Kinds are the kinds a registration may have; unset:
	// defaultAdminKinds (not exec: a registration of it runs commands).
	Kinds []string `yaml:"kinds"`
	// Env are the environment variables a registration may reference as
	// ${NAME}; unset: none.
	Env []string `yaml:"env"`
}

// defaultAdminKinds are the kinds registrations may have by default.
var defaultAdminKinds = []string{"http", "a2a", "openai", "echo", "chat", "slow"}

// cardSigningFile is the card_signing block: the private key (PEM or
// JWK), its kid (default: the JWK's kid, else the key's thumbprint), the
// JWS algorithm (default: ES256, ES384 or ES512 by the EC key's curve,
// RS256 for RSA, EdDSA for Ed25519) and the jku (default: the server's
// /.well-known/jwks.json).
type CardSigningConfig struct {
	KeyFile string `yaml:"key_file"`
	KID     string `yaml:"kid"`
	Alg     string `yaml:"alg"`
	JKU     string `yaml:"jku"`
}

type AuthConfig struct {
	// BearerTokens maps subjects to static tokens (or "sha256:<hex>").
	BearerTokens map[string]string `yaml:"bearer_tokens"`
	JWT          *struct {
		JWKSURL   string   `yaml:"jwks_url"`
		Issuer    string   `yaml:"issuer"`
		Audience  []string `yaml:"audience"`
		ClockSkew Duration `yaml:"clock_skew"`
	} `yaml:"jwt"`
	APIKeys *struct {
		In   string            `yaml:"in"`
		Name string            `yaml:"name"`
		Keys map[string]string `yaml:"keys"`
	} `yaml:"api_keys"`
	// None turns authentication off for an agent when a default is set.
	None bool `yaml:"none"`
}

// agentFile is one entry of agents: the keys every kind has
// (agentCommonKeys); the keys of the kind itself land in KindKeys (checked
// against the kind's Config type by checkAgentKeys, decoded by the kind's
// builder from the entry's node).
type AgentConfig struct {
	AgentKeys `yaml:",inline"`
	// KindKeys holds the keys of the kind (inline: any key lands here).
	KindKeys map[string]any `yaml:",inline"`
}

// agentCommonKeys are the keys of every agents entry, whatever its kind.
type AgentKeys struct {
	// Kind is the agent's kind (kinds.go); empty for a built-in agent
	// configured under its own name (echo, chat, slow).
	Kind string `yaml:"kind"`
	// The card (A2A 1.0 §4.4.1): each one set replaces what the kind
	// derives (a remote agent's card, a kind's default skill).
	Description string        `yaml:"description"`
	Version     string        `yaml:"version"`
	Skills      []SkillConfig `yaml:"skills"`
	InputModes  []string      `yaml:"input_modes"`
	OutputModes []string      `yaml:"output_modes"`
	// Streaming, when set, says whether the card offers streaming (the
	// default: yes).
	Streaming *bool `yaml:"streaming"`
	// Extensions are declared in the card's capabilities.extensions (A2A
	// 1.0 §4.6), beside (or, for the same uri, instead of) the kind's
	// own. One with required: true must be activated by every message
	// (the A2A-Extensions header): others get -32008.
	Extensions []ExtensionConfig `yaml:"extensions"`
	// Auth is what the agent's callers must send (the top-level auth's
	// keys).
	Auth             *AuthConfig `yaml:"auth"`
	CardRequiresAuth bool        `yaml:"card_requires_auth"`
	ExtendedCard     *struct {
		Description string        `yaml:"description"`
		Skills      []SkillConfig `yaml:"skills"`
	} `yaml:"extended_card"`
	// Attachments, when present, stores the files callers send by value
	// and passes them on by URL (server.AttachmentOptions).
	Attachments *AttachmentsConfig `yaml:"attachments"`
}

// attachmentsFile is an agent's attachments block.
type AttachmentsConfig struct {
	// MaxBytes is the largest file accepted; unset or 0:
	// server.DefaultAttachmentMaxBytes.
	MaxBytes ByteSize `yaml:"max_bytes"`
}

// skillFile is an AgentSkill (A2A 1.0 §4.4.5) in the config file.
type SkillConfig struct {
	ID          string   `yaml:"id"`
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Tags        []string `yaml:"tags"`
	Examples    []string `yaml:"examples"`
	InputModes  []string `yaml:"input_modes"`
	OutputModes []string `yaml:"output_modes"`
}

// extensionFile is an AgentExtension (A2A 1.0 §4.4.4) in the config
// file.
type ExtensionConfig struct {
	URI         string         `yaml:"uri"`
	Description string         `yaml:"description"`
	Required    bool           `yaml:"required"`
	Params      map[string]any `yaml:"params"`
}

// applyExtensions adds the extensions of an agents entry (its key
// extensions) to card, checked: each uri is an absolute URI without
// spaces or commas (the A2A-Extensions header is a comma-separated list of
// them), declared once, and not a2abridge's own event-log extension
// (which every card declares, not required). The error names the key.
func applyExtensions(name string, exts []ExtensionConfig, c *a2a.AgentCard) error {
	for i, x := range exts {
		key := fmt.Sprintf("agents.%s.extensions[%d].uri", name, i)
		u, err := url.Parse(x.URI)
		switch {
		case x.URI == "":
			return fmt.Errorf("%s: required", key)
		case strings.ContainsAny(x.URI, ", \t\r\n") || err != nil || u.Scheme == "":
			return fmt.Errorf("%s: %q is not an absolute URI (such as https://example.com/ext/name/v1)", key, x.URI)
		case x.URI == a2a.ExtensionEventLog:
			return fmt.Errorf("%s: %s is a2abridge's own extension, declared on every card", key, x.URI)
		}
		for j := range i {
			if exts[j].URI == x.URI {
				return fmt.Errorf("%s: %s is declared twice (also extensions[%d])", key, x.URI, j)
			}
		}
		ext := a2a.AgentExtension{URI: x.URI, Description: x.Description, Required: x.Required, Params: x.Params}
		if k := slices.IndexFunc(c.Capabilities.Extensions, func(e a2a.AgentExtension) bool { return e.URI == x.URI }); k >= 0 {
			c.Capabilities.Extensions = slices.Clone(c.Capabilities.Extensions)
			c.Capabilities.Extensions[k] = ext
		} else {
			c.Capabilities.Extensions = append(slices.Clip(c.Capabilities.Extensions), ext)
		}
	}
	return nil
}

func (s SkillConfig) skill() a2a.AgentSkill {
	return a2a.AgentSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags, Examples: s.Examples,
		InputModes: s.InputModes, OutputModes: s.OutputModes}
}

type Duration time.Duration

func init() { yamlkeys.Opaque(reflect.TypeFor[AgentConfig]()) }

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (e.g. 30s, 24h)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// byteSize is a size in bytes written as a number or with a unit (256MiB,
// 1.5GB, 512KiB; SI and IEC units).
type ByteSize int64

func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*b = ByteSize(v)
	return nil
}

// ParseSize reads a size such as 256MiB, 1GB or 1048576.
func ParseSize(s string) (int64, error) {
	v, err := humanize.ParseBytes(s)
	if err != nil || v > math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size in bytes (e.g. 268435456, 256MiB, 1GB)", s)
	}
	return int64(v), nil
}

var envRef = yamlkeys.EnvRef

// envName matches an environment variable name; onlyEnvRef a value that is
// one ${NAME} reference and nothing else.
var (
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	onlyEnvRef = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)
)

// LoadConfig reads and validates a config file. ${NAME} references are
// expanded inside YAML string values (after parsing, so a value can never
// change the document's structure).
func LoadConfig(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Unknown keys first, on the file as written (before ${NAME}
	// expansion: keys are reported, never values).
	if err := yamlkeys.CheckKeys(&doc, reflect.TypeFor[Config](), ""); err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	// Each agent's keys against its kind's.
	if agents := mapValue(root(&doc), "agents"); agents != nil && agents.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(agents.Content); i += 2 {
			if err := checkAgentKeys(agents.Content[i].Value, agents.Content[i+1]); err != nil {
				var uk *yamlkeys.UnknownKeyError
				if errors.As(err, &uk) {
					return nil, fmt.Errorf("%s:%w", path, err)
				}
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	if missing := expandEnv(&doc, ""); len(missing) > 0 {
		return nil, fmt.Errorf("%s: %s", path, joinRefs(missing))
	}
	// The types of each agent's keys, named one by one (the decoder
	// below would quote values, which may be expanded secrets).
	if agents := mapValue(root(&doc), "agents"); agents != nil && agents.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(agents.Content); i += 2 {
			if err := checkAgentTypes(agents.Content[i].Value, agents.Content[i+1]); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	// Decoded from the expanded tree itself, so errors name the lines of
	// the file as written.
	var f Config
	if doc.Kind == 0 {
		return &f, nil // an empty file
	}
	if err := doc.Decode(&f); err != nil {
		if len(envRef.FindAll(raw, -1)) > 0 {
			// The decoder quotes values, which may be expanded secrets.
			return nil, fmt.Errorf("%s: invalid configuration (details withheld: the file references environment variables): %s", path, yamlkeys.RedactError(err))
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The agents' nodes, expanded, for their kinds to decode their keys.
	if agents := mapValue(root(&doc), "agents"); agents != nil && agents.Kind == yaml.MappingNode {
		f.agentNodes = map[string]*yaml.Node{}
		for i := 0; i+1 < len(agents.Content); i += 2 {
			f.agentNodes[agents.Content[i].Value] = agents.Content[i+1]
		}
		resolveScenarioFiles(f.agentNodes, filepath.Dir(path))
	}
	// A present but empty auth block (every line commented out) must not
	// silently mean "no authentication".
	if authBlockEmpty(&doc, "auth") {
		return nil, fmt.Errorf("%s: auth: the block is empty; configure a scheme or remove it", path)
	}
	for name, a := range f.Agents {
		if a.Auth == nil && agentAuthKeyPresent(&doc, name) {
			return nil, fmt.Errorf("%s: agents.%s.auth: the block is empty; configure a scheme, `none: true`, or remove it", path, name)
		}
	}
	return &f, nil
}

// envRefAt is one ${NAME} reference in a config document: the dotted path
// of its value (agents.weather.url), its line (0 when the document was not
// read from a file) and the variable's name.
type envRefAt struct {
	path, name string
	line       int
}

func (r envRefAt) String() string {
	s := fmt.Sprintf("%s: environment variable %s is not set", r.path, r.name)
	if r.line > 0 {
		s += fmt.Sprintf(" (line %d)", r.line)
	}
	return s
}

// walkScalars calls f for each scalar value below n with its dotted path
// (path is n's own; mapping keys are not values and are not visited).
func walkScalars(n *yaml.Node, path string, f func(n *yaml.Node, path string)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkScalars(c, path, f)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			walkScalars(n.Content[i+1], yamlkeys.JoinPath(path, n.Content[i].Value), f)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkScalars(c, fmt.Sprintf("%s[%d]", path, i), f)
		}
	case yaml.ScalarNode:
		f(n, path)
	}
}

// envRefs lists the ${NAME} references in the values below n.
func envRefs(n *yaml.Node, path string) []envRefAt {
	var refs []envRefAt
	walkScalars(n, path, func(n *yaml.Node, path string) {
		for _, m := range envRef.FindAllStringSubmatch(n.Value, -1) {
			refs = append(refs, envRefAt{path: path, name: m[1], line: n.Line})
		}
	})
	return refs
}

// expandEnv replaces ${NAME} references inside the scalar values below n
// (whose own path is path) by the environment's values, in place, and
// returns the references to variables that are not set (or are empty),
// in document order.
func expandEnv(n *yaml.Node, path string) []envRefAt {
	var missing []envRefAt
	walkScalars(n, path, func(n *yaml.Node, path string) {
		if !strings.Contains(n.Value, "${") {
			return
		}
		n.Value = envRef.ReplaceAllStringFunc(n.Value, func(m string) string {
			name := envRef.FindStringSubmatch(m)[1]
			v, ok := os.LookupEnv(name)
			if !ok || v == "" {
				missing = append(missing, envRefAt{path: path, name: name, line: n.Line})
			}
			return v
		})
		// Let the expanded value resolve like a literal one would (a
		// bool stays a bool); the encoder quotes it when needed.
		n.Tag = ""
	})
	return missing
}

// joinRefs writes one line per reference.
func joinRefs(refs []envRefAt) string {
	lines := make([]string, len(refs))
	for i, r := range refs {
		lines[i] = r.String()
	}
	return strings.Join(lines, "\n")
}

// mapValue returns the value node of key in mapping node m.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func root(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0]
	}
	return doc
}

// authBlockEmpty reports a top-level key present with a null value.
func authBlockEmpty(doc *yaml.Node, key string) bool {
	v := mapValue(root(doc), key)
	return v != nil && v.Tag == "!!null"
}

func agentAuthKeyPresent(doc *yaml.Node, agent string) bool {
	v := mapValue(mapValue(mapValue(root(doc), "agents"), agent), "auth")
	return v != nil && v.Tag == "!!null"
}

// build turns an auth block into authenticators.
func (a *AuthConfig) build() (auth.Set, error) {
	if a == nil {
		return nil, nil
	}
	if a.None {
		if len(a.BearerTokens) > 0 || a.JWT != nil || a.APIKeys != nil {
			return nil, fmt.Errorf("`none: true` together with schemes: choose one")
		}
		return nil, nil
	}
	var set auth.Set
	if len(a.BearerTokens) > 0 {
		b, err := auth.NewBearerTokens("bearer", a.BearerTokens)
		if err != nil {
			return nil, err
		}
		set = append(set, b)
	}
	if j := a.JWT; j != nil {
		v, err := auth.NewJWT("jwt", auth.JWTOptions{JWKSURL: j.JWKSURL, Issuer: j.Issuer, Audience: j.Audience, ClockSkew: time.Duration(j.ClockSkew)})
		if err != nil {
			return nil, err
		}
		set = append(set, v)
	}
	if k := a.APIKeys; k != nil {
		in := k.In
		if in == "" {
			in = "header"
		}
		name := k.Name
		if name == "" {
			name = "X-API-Key"
		}
		v, err := auth.NewAPIKey("apiKey", in, name, k.Keys)
		if err != nil {
			return nil, err
		}
		set = append(set, v)
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("auth block configures no scheme (bearer_tokens, jwt or api_keys)")
	}
	return set, set.Validate()
}

// extendedCard builds an agent's extended card from its public card.
func (a *AgentConfig) extendedCard(pub a2a.AgentCard) *a2a.AgentCard {
	if a == nil || a.ExtendedCard == nil {
		return nil
	}
	c := pub
	if a.ExtendedCard.Description != "" {
		c.Description = a.ExtendedCard.Description
	}
	c.Skills = slices.Clone(pub.Skills)
	for _, s := range a.ExtendedCard.Skills {
		c.Skills = append(c.Skills, s.skill())
	}
	return &c
}

// ConfigKeys lists every key of the YAML config as a dotted path, sorted:
// a map level is NAME ("agents.NAME.url"), a list of mappings is []
// ("agents.NAME.skills[].id"). An agent's keys are the common ones
// (AgentKeys) and every registered kind's; an agent's auth block has the
// top-level auth's keys and is not descended into.
func ConfigKeys() []string { return configKeys(reflect.TypeFor[Config](), "") }

// configKeys lists the dotted paths of every key of the config type t: a map level is NAME, a list of mappings is [], and an agent's auth
// block (the same keys as the top-level one) is not descended into.
func configKeys(t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for key, ft := range yamlkeys.Fields(t) {
		p := yamlkeys.JoinPath(path, key)
		out = append(out, p)
		if p == "agents.NAME.auth" {
			continue
		}
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			out = append(out, configKeys(ft, p)...)
		case ft.Kind() == reflect.Map && ft.Elem() == reflect.TypeFor[AgentConfig]():
			// An agent's keys: the common ones and every kind's.
			out = append(out, configKeys(reflect.TypeFor[AgentKeys](), p+".NAME")...)
			for _, k := range kinds {
				if k.config != nil {
					out = append(out, configKeys(k.config, p+".NAME")...)
				}
			}
			out = slices.Compact(slices.Sorted(slices.Values(out)))
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			out = append(out, configKeys(ft.Elem(), p+".NAME")...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, configKeys(ft.Elem(), p+"[]")...)
		}
	}
	slices.Sort(out)
	return out
}
