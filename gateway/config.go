package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"go.yaml.in/yaml/v3"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/yamlkeys"
)

// Config is the gateway's configuration: the YAML of `a2abridge serve
// --config FILE` (LoadConfig reads one), or a value built in code. The
// zero value hosts the built-in agents echo, chat and slow on
// DefaultAddr with SQLite under DefaultDataDir. In a file, values may
// reference environment variables as ${NAME} (an unset one is an error),
// and a key that is not a field's yaml tag is an error naming its line
// and the closest valid key. Overrides (the command line's flags) replace
// what they set.
type Config struct {
	// Addr is the listen address, HOST:PORT (port 0 picks a free port);
	// "": DefaultAddr.
	Addr string `yaml:"addr"`
	// PublicURL is the base URL written into agent cards (http:// or
	// https://); "": an allowed Host, a trusted proxy's forwarded host,
	// or the address the connection reached.
	PublicURL string `yaml:"public_url"`
	// Data is the directory of the SQLite database and the push signing
	// keys; "": DefaultDataDir.
	Data string `yaml:"data"`
	// Memory keeps tasks in memory only: they are lost when the process
	// exits.
	Memory bool `yaml:"memory"`
	// Postgres keeps tasks in PostgreSQL (store/postgres) instead of
	// SQLite under data; exclusive with data and memory.
	Postgres *PostgresConfig `yaml:"postgres"`
	// Default is the agent that also answers at / and
	// /.well-known/agent-card.json; "": echo, or the first configured
	// agent when builtins is false.
	Default string `yaml:"default"`
	// Retention is how long finished tasks are kept (0: forever); unset:
	// DefaultRetention.
	Retention *Duration `yaml:"retention"`
	// MemoryCap caps what finished tasks hold with the in-memory store,
	// in bytes ("256MiB", "1GB", 1048576; 0: no cap); unset:
	// DefaultMemoryCap.
	MemoryCap *ByteSize `yaml:"memory_cap"`
	// ShutdownGrace is how long running tasks may finish at shutdown
	// before they are failed; unset: DefaultShutdownGrace.
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
	// Push configures push notifications (A2A 1.0 §4.3.4).
	Push PushConfig `yaml:"push"`
	// CardSigning signs the agent cards served (A2A 1.0 §8.4); nil:
	// cards are not signed.
	CardSigning *CardSigningConfig `yaml:"card_signing"`
	// Telemetry exports traces and metrics.
	Telemetry TelemetryConfig `yaml:"telemetry"`
	// GRPC configures the gRPC binding (on by default).
	GRPC GRPCConfig `yaml:"grpc"`
	// TLS serves HTTPS (and gRPC over TLS) on addr; nil: cleartext.
	TLS *TLSConfig `yaml:"tls"`
	// Auth applies to every agent without an auth block of its own; nil:
	// no authentication.
	Auth *AuthConfig `yaml:"auth"`
	// Limits is the rate limit of each caller over every agent (see
	// LimitsConfig); nil: none.
	Limits *LimitsConfig `yaml:"limits"`
	// Agents are the configured agents by name (the path segment of
	// /a2a/{name}: 1 to 64 letters, digits, '-', '_', '.' or '~').
	Agents map[string]AgentConfig `yaml:"agents"`
	// Builtins hosts the built-in agents echo, chat and slow besides the
	// configured ones; unset: true.
	Builtins *bool `yaml:"builtins"`
	// Admin turns on the admin API (/api/v1/agents); nil: off.
	Admin *AdminConfig `yaml:"admin"`
	// Conversations turns on ad-hoc conversation scenarios
	// (/api/bridge/{config64}/a2a) and says what they may use.
	Conversations *ConversationsConfig `yaml:"conversations"`
	// Pairs turns on paired participants (POST /api/pairs, bridge/pair).
	Pairs *PairsConfig `yaml:"pairs"`
	// Console configures the web console below /console/ (on by default).
	Console ConsoleConfig `yaml:"console"`

	agentNodes map[string]*yaml.Node // agents entries, ${NAME} expanded
	// loadedKeys is each loaded entry's kind and kind keys as LoadConfig
	// decoded them (entryKeys): an entry changed in code since is built
	// from its values, not from the file's node.
	loadedKeys map[string]string
}

// entryKeys is the kind and kind keys of an agents entry, as one
// comparable string.
func entryKeys(a AgentConfig) string {
	b, err := json.Marshal(struct {
		Kind string
		Keys map[string]any
	}{a.Kind, a.KindKeys})
	if err != nil {
		return "" // unchanged only if it could not be encoded at load either
	}
	return string(b)
}

// PushConfig is the push block: push notifications (A2A 1.0 §4.3.4),
// signed with keys the gateway publishes at /.well-known/jwks.json.
type PushConfig struct {
	// Enabled turns push notifications on.
	Enabled bool `yaml:"enabled"`
	// Allow lists webhook targets allowed although private or loopback:
	// CIDR, IP[:PORT], HOST[:PORT] or *.DOMAIN; non-empty implies
	// Enabled.
	Allow []string `yaml:"allow"`
	// GiveUpAfter is how long a notification is retried; 0: the push
	// package's default.
	GiveUpAfter Duration `yaml:"give_up_after"`
	// Keys is the directory of the signing keys; "": data/push-keys
	// (in memory with memory or postgres).
	Keys string `yaml:"keys"`
	// Algorithm is the signing algorithm, ES256 (the default) or RS256.
	Algorithm string `yaml:"algorithm"`
	// RotateEvery rotates the signing key; 0: never. The previous key
	// stays published for 24 h.
	RotateEvery Duration `yaml:"rotate_every"`
}

// TelemetryConfig is the telemetry block: traces and metrics.
type TelemetryConfig struct {
	// OTLPEndpoint is the base URL of an OTLP receiver (OTLP/HTTP
	// http://HOST:4318, gRPC http://HOST:4317); "": the
	// OTEL_EXPORTER_OTLP_* environment, if set.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// OTLPProtocol is the OTLP transport, "http/protobuf" or "grpc"; "":
	// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf.
	OTLPProtocol string `yaml:"otlp_protocol"`
	// MetricsAddr is where GET /metrics (Prometheus) is served on a
	// listener of its own, HOST:PORT; "": nowhere.
	MetricsAddr string `yaml:"metrics_addr"`
	// Metrics serves GET /metrics on the main listener too
	// (unauthenticated).
	Metrics bool `yaml:"metrics"`
}

// PostgresConfig is the postgres block.
type PostgresConfig struct {
	// DSN is the database's connection string (URL or key=value pairs,
	// as libpq takes them); write its password as ${NAME}.
	DSN string `yaml:"dsn"`
	// Replica: this gateway is one of several replicas on the database.
	Replica bool `yaml:"replica"`
	// Lease is how long a dead replica's running tasks wait before
	// another fails them (1s to 1h); unset: server.DefaultLeaseTime.
	Lease *Duration `yaml:"lease"`
}

// AdminConfig is the admin block: who may use the admin API, and what a
// registration may do.
type AdminConfig struct {
	// BearerTokens maps subjects to the admin tokens (or
	// "sha256:<hex>"); at least one is required.
	BearerTokens map[string]string `yaml:"bearer_tokens"`
	// Kinds are the kinds a registration may have; unset: http, a2a,
	// openai, echo, chat and slow (not exec: a registration of it runs
	// commands).
	Kinds []string `yaml:"kinds"`
	// Env are the environment variables a registration may reference as
	// ${NAME}; unset: none.
	Env []string `yaml:"env"`
}

// defaultAdminKinds are the kinds registrations may have by default.
var defaultAdminKinds = []string{"http", "a2a", "openai", "echo", "chat", "slow"}

// CardSigningConfig is the card_signing block (A2A 1.0 §8.4).
type CardSigningConfig struct {
	// KeyFile is the private key's file, PEM or JWK; required.
	KeyFile string `yaml:"key_file"`
	// KID is the key's id; "": the JWK's kid, else the key's thumbprint.
	KID string `yaml:"kid"`
	// Alg is the JWS algorithm; "": ES256, ES384 or ES512 by the EC
	// key's curve, RS256 for RSA, EdDSA for Ed25519.
	Alg string `yaml:"alg"`
	// JKU is the URL of the key set written into signatures; "": the
	// gateway's /.well-known/jwks.json.
	JKU string `yaml:"jku"`
}

// AuthConfig is an auth block: what callers must send. One scheme or
// more, or None.
type AuthConfig struct {
	// BearerTokens maps subjects to static tokens (or "sha256:<hex>").
	BearerTokens map[string]string `yaml:"bearer_tokens"`
	// JWT accepts bearer JWTs verified with a JWKS.
	JWT *JWTConfig `yaml:"jwt"`
	// APIKeys accepts API keys in a header, query parameter or cookie.
	APIKeys *APIKeysConfig `yaml:"api_keys"`
	// None turns authentication off for an agent when a default is set.
	None bool `yaml:"none"`
}

// JWTConfig is the jwt scheme of an auth block (auth.JWTOptions).
type JWTConfig struct {
	// JWKSURL is where the verification keys are published.
	JWKSURL string `yaml:"jwks_url"`
	// Issuer is the required iss.
	Issuer string `yaml:"issuer"`
	// Audience lists the accepted aud values.
	Audience []string `yaml:"audience"`
	// ClockSkew is the leeway on exp, nbf and iat.
	ClockSkew Duration `yaml:"clock_skew"`
}

// APIKeysConfig is the api_keys scheme of an auth block.
type APIKeysConfig struct {
	// In is where the key is sent: header (the default), query or
	// cookie.
	In string `yaml:"in"`
	// Name is the header, parameter or cookie; "": X-API-Key.
	Name string `yaml:"name"`
	// Keys maps subjects to keys (or "sha256:<hex>").
	Keys map[string]string `yaml:"keys"`
}

// AgentConfig is one entry of agents: the keys every kind has
// (AgentKeys), and the keys of its kind in KindKeys (checked against the
// Kind's Config type, decoded by its Build).
type AgentConfig struct {
	AgentKeys `yaml:",inline"`
	// KindKeys holds the keys of the kind, such as url for http (inline:
	// any key that is not one of AgentKeys lands here).
	KindKeys map[string]any `yaml:",inline"`
}

// AgentKeys are the keys of every agents entry, whatever its kind.
type AgentKeys struct {
	// Kind is the agent's kind (a registered Kind's name); "" for a
	// built-in agent configured under its own name (echo, chat, slow).
	Kind string `yaml:"kind"`
	// Description is the card's (A2A 1.0 §4.4.1). This key and the
	// next four, each when set, replace what the kind derives (a remote
	// agent's card, a kind's default skill).
	Description string `yaml:"description"`
	// Version is the card's version of the agent.
	Version string `yaml:"version"`
	// Skills are the card's skills.
	Skills []SkillConfig `yaml:"skills"`
	// InputModes are the card's defaultInputModes (media types).
	InputModes []string `yaml:"input_modes"`
	// OutputModes are the card's defaultOutputModes (media types).
	OutputModes []string `yaml:"output_modes"`
	// Streaming, when set, says whether the card offers streaming (the
	// default: yes).
	Streaming *bool `yaml:"streaming"`
	// Extensions are declared in the card's capabilities.extensions (A2A
	// 1.0 §4.6), beside (or, for the same uri, instead of) the kind's
	// own. One with required: true must be activated by every message
	// (the A2A-Extensions header): others get -32008.
	Extensions []ExtensionConfig `yaml:"extensions"`
	// Auth is what the agent's callers must send (the top-level auth's
	// keys); nil: the top-level auth.
	Auth *AuthConfig `yaml:"auth"`
	// CardRequiresAuth serves the card to authenticated callers only.
	CardRequiresAuth bool `yaml:"card_requires_auth"`
	// ExtendedCard is the card authenticated callers get (A2A 1.0
	// §9.1, GetExtendedAgentCard); it needs authentication.
	ExtendedCard *ExtendedCardConfig `yaml:"extended_card"`
	// Attachments, when present, stores the files callers send by value
	// and passes them on by URL (server.AttachmentOptions).
	Attachments *AttachmentsConfig `yaml:"attachments"`
	// Limits is the rate limit of each caller of this agent, and with
	// Total of all its callers together (see LimitsConfig); nil: none
	// (the top-level limits apply whatever this says).
	Limits *AgentLimitsConfig `yaml:"limits"`
}

// LimitsConfig is a rate limit per caller: the authenticated subject,
// else the client's address (behind trusted_proxies, from
// X-Forwarded-For). Every request counts, on every binding and version
// (a JSON-RPC batch and a stream once, when they arrive; an open stream
// is never cut). Past the limit a request is answered HTTP 429 with
// Retry-After, JSON-RPC error -32029 (reason RATE_LIMITED), gRPC
// RESOURCE_EXHAUSTED, and nothing is stored. Each replica counts
// its own requests: behind a balancer over N replicas a caller gets up
// to N times the rate.
type LimitsConfig struct {
	// Rate is the requests per second allowed (> 0), on average.
	Rate float64 `yaml:"rate"`
	// Burst is how many requests may come at once (a token bucket's
	// size); 0: the rate rounded up (at least 1).
	Burst int `yaml:"burst"`
}

// AgentLimitsConfig is an agent's limits block: a LimitsConfig per
// caller of the agent, and Total for all its callers together.
type AgentLimitsConfig struct {
	LimitsConfig `yaml:",inline"`
	// Total is the limit of all the agent's callers together; nil: none.
	Total *LimitsConfig `yaml:"total"`
}

// ExtendedCardConfig is what an agent's extended card adds to its public
// card.
type ExtendedCardConfig struct {
	// Description replaces the public card's; "": the same.
	Description string `yaml:"description"`
	// Skills are added to the public card's.
	Skills []SkillConfig `yaml:"skills"`
}

// AttachmentsConfig is an attachments block.
type AttachmentsConfig struct {
	// MaxBytes is the largest file accepted; unset or 0:
	// server.DefaultAttachmentMaxBytes.
	MaxBytes ByteSize `yaml:"max_bytes"`
}

// SkillConfig is an AgentSkill (A2A 1.0 §4.4.5); ID and Name are
// required.
type SkillConfig struct {
	// ID is the skill's unique id.
	ID string `yaml:"id"`
	// Name is its human-readable name.
	Name string `yaml:"name"`
	// Description says what it does.
	Description string `yaml:"description"`
	// Tags are keywords.
	Tags []string `yaml:"tags"`
	// Examples are sample prompts.
	Examples []string `yaml:"examples"`
	// InputModes override the card's default input media types.
	InputModes []string `yaml:"input_modes"`
	// OutputModes override the card's default output media types.
	OutputModes []string `yaml:"output_modes"`
}

// ExtensionConfig is an AgentExtension (A2A 1.0 §4.4.4). URI is
// required: an absolute URI without spaces or commas, declared once.
type ExtensionConfig struct {
	// URI identifies the extension.
	URI string `yaml:"uri"`
	// Description says how the agent uses it.
	Description string `yaml:"description"`
	// Required: every message must activate it (A2A-Extensions header),
	// or gets -32008.
	Required bool `yaml:"required"`
	// Params are the extension's parameters, as the card shows them.
	Params map[string]any `yaml:"params"`
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

// Duration is a time.Duration written in YAML as Go writes durations
// ("30s", "1m30s", "24h").
type Duration time.Duration

// ByteSize is a size in bytes written as a number or with a unit (256MiB,
// 1.5GB, 512KiB; SI and IEC units).
type ByteSize int64

func init() { yamlkeys.Opaque(reflect.TypeFor[AgentConfig]()) }

var (
	durationType = reflect.TypeFor[Duration]()
	byteSizeType = reflect.TypeFor[ByteSize]()
)

// parseUnit reads the scalar n as a Duration or a ByteSize (t) and
// rewrites it into the integer it stands for (nanoseconds, bytes), tagged
// so that a second pass keeps it, for the decoder to store in those
// integer types. The error names n's line.
func parseUnit(n *yaml.Node, t reflect.Type) error {
	if n.Tag == "!!int" && n.Style&yaml.TaggedStyle != 0 {
		return nil // rewritten already
	}
	var v int64
	if t == durationType {
		d, err := time.ParseDuration(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %q is not a duration (e.g. 30s, 24h)", n.Line, n.Value)
		}
		v = int64(d)
	} else {
		b, err := ParseSize(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		v = b
	}
	n.Kind, n.Value, n.Tag, n.Style, n.Content = yaml.ScalarNode, strconv.FormatInt(v, 10), "!!int", yaml.TaggedStyle, nil
	return nil
}

// parseUnits runs parseUnit on every Duration and ByteSize value below n
// (decoded into t), the agents' entries aside (checkAgentTypes does
// theirs).
func parseUnits(n *yaml.Node, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := parseUnits(c, t); err != nil {
				return err
			}
		}
		return nil
	case yaml.AliasNode:
		n = n.Alias
	}
	if n.ShortTag() == "!!null" {
		return nil
	}
	switch {
	case t == durationType || t == byteSizeType:
		return parseUnit(n, t)
	case t == reflect.TypeFor[AgentConfig]():
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlkeys.Fields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if ft, ok := fields[n.Content[i].Value]; ok {
				if err := parseUnits(n.Content[i+1], ft); err != nil {
					return err
				}
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := parseUnits(n.Content[i+1], t.Elem()); err != nil {
				return err
			}
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			if err := parseUnits(c, t.Elem()); err != nil {
				return err
			}
		}
	}
	return nil
}

// ParseSize reads a size in bytes such as 256MiB, 1.5GB, 512KiB or
// 1048576 (SI and IEC units), as memory_cap and max_bytes take it; the
// error quotes s.
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

// LoadConfig reads and checks the YAML config file at path: every key
// known (the agents' by their kind), every value of its key's type, every
// ${NAME} reference set (they are expanded inside string values after
// parsing, so a value can never change the document's structure). A
// relative scenario_file is made relative to the file's directory. Errors
// name the file, the line and the key, never a value (it may be an
// expanded secret). What depends on more than one key (agents built, the
// store, authentication) is checked by New.
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
	err = parseUnits(&doc, reflect.TypeFor[Config]())
	if err == nil {
		err = doc.Decode(&f)
	}
	if err != nil {
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
		f.loadedKeys = map[string]string{}
		for name, a := range f.Agents {
			f.loadedKeys[name] = entryKeys(a)
		}
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
