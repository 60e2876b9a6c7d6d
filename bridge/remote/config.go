package remote

import (
	"errors"

	"fmt"
	"github.com/a2abridge/a2abridge/internal/egress"
	"net/url"
	"strings"
	"time"
)

// Defaults applied by New to zero Config fields.
const (
	// DefaultTimeout bounds each call to the remote that does not stream
	// (SendMessage, GetTask, CancelTask).
	DefaultTimeout = 60 * time.Second
	// DefaultCardTimeout bounds the fetch of the remote's Agent Card.
	DefaultCardTimeout = 10 * time.Second
	// DefaultAPIKeyHeader is the header that carries Credentials.APIKey.
	DefaultAPIKeyHeader = "X-API-Key"
	// DefaultMaxOutput bounds what a task takes from the remote: 64 MiB.
	DefaultMaxOutput = 64 << 20
	// DefaultMaxCardBytes bounds the remote's Agent Card: 1 MiB.
	DefaultMaxCardBytes = 1 << 20
	// DefaultFirstEventTimeout bounds the wait for a stream's first
	// event.
	DefaultFirstEventTimeout = 60 * time.Second
	// DefaultIdleTimeout bounds the wait between two events of a stream.
	DefaultIdleTimeout = 5 * time.Minute
)

// Config configures an Agent that forwards to a remote A2A agent (kind
// "a2a" of `a2abridge serve --config`). Its YAML keys are those of the
// kind; the keys every kind shares (kind, description, skills, modes, auth,
// …) are not here. The zero value of every field but URL has a default.
type Config struct {
	// URL is the remote agent's Agent Card URL (its path ends in ".json"),
	// or a base URL under which /.well-known/agent-card.json is fetched
	// (then the legacy /.well-known/agent.json on 404). http or https;
	// required; must not hold user:password (use Credentials). It may
	// have a query (e.g. ?key=…), sent with the card fetch, but never
	// shown: wherever the agent shows the URL (the default skill of the
	// card, failure reasons, errors, task metadata) the query reads "…".
	URL string `yaml:"url"`
	// Protocol forces the A2A version spoken to the remote: "" (the card
	// decides: 1.0 when offered, else 0.3), "0.3" or "1.0".
	Protocol string `yaml:"protocol"`
	// Binding forces the protocol binding: "" (the card's preference
	// among JSON-RPC and HTTP+JSON; its GRPC interface when it offers
	// nothing else), "jsonrpc" or "rest" (HTTP+JSON), in either version,
	// or "grpc" (A2A 1.0); case is ignored.
	Binding string `yaml:"binding"`
	// Credentials are what this agent sends to the remote; they are
	// separate from the authentication of the callers of this agent.
	Credentials Credentials `yaml:"credentials"`
	// Timeout bounds each call that does not stream (a blocking
	// SendMessage, GetTask, CancelTask); 0 means DefaultTimeout (60s).
	// Set, it also bounds the whole of an execution's exchange with the
	// remote: a stream (resubscriptions included) or the polling of a
	// task that a blocking send left working; the task then fails with
	// the reason and the remote task is canceled. Left at 0, a stream is
	// bounded by FirstEventTimeout, IdleTimeout and MaxOutput.
	Timeout time.Duration `yaml:"timeout"`
	// FirstEventTimeout bounds the wait for the first event of a stream
	// (the remote accepted the request and sends nothing); 0 means
	// DefaultFirstEventTimeout (60s). The task then fails with the
	// reason, naming first_event_timeout.
	FirstEventTimeout time.Duration `yaml:"first_event_timeout"`
	// IdleTimeout bounds the wait between two events of a stream; 0
	// means DefaultIdleTimeout (5m). The task then fails with the
	// reason, naming idle_timeout, and the remote task is canceled.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxOutput bounds, in bytes, what a task takes from the remote: the
	// parts and metadata of its artifacts, messages and status messages
	// (as internal/outsize counts them, about their JSON size) plus 100
	// bytes per event, counted over the task's executions; 0 means
	// DefaultMaxOutput (64 MiB). The event that would pass it is not
	// kept: the task fails with a reason naming max_output and the
	// remote task is canceled. Every answer of the remote counts, stream
	// events and responses that add nothing to the task included (100
	// bytes each besides their content). One response or stream event is
	// read up to MaxOutput × 4/3 plus 1 MiB (a task at the limit, its
	// files in base64), no further. At most 1 TiB.
	MaxOutput int64 `yaml:"max_output"`
	// MaxCardBytes bounds the remote's Agent Card document, in bytes; 0
	// means DefaultMaxCardBytes (1 MiB). A larger card is refused (the
	// agent is served under a generic card until a fetch succeeds), and
	// the card served (DeriveCard) keeps only a small part of it.
	MaxCardBytes int64 `yaml:"max_card_bytes"`
	// AllowHosts lists where the agent may send requests besides the
	// configured URL's origin (scheme, host and port), and which
	// link-local or cloud metadata addresses it may connect to. By
	// default every request (the card fetch, the calls, each redirect)
	// must be on that origin, the card's interface URL too (a GRPC
	// interface may be on another port of the same host), and no
	// connection is made to a link-local (169.254.0.0/16, fe80::/10) or
	// metadata address, checked on the address each connection is made to.
	// Each entry is a host name (any port), host:port, *.domain, an IP
	// address or a CIDR (internal/egress).
	AllowHosts []string `yaml:"allow_hosts"`
	// CardTimeout bounds the fetch of the remote's Agent Card, retries
	// included; 0 means DefaultCardTimeout (10s).
	CardTimeout time.Duration `yaml:"card_timeout"`
	// CheckURL, if set, is called with the URL of every HTTP request the
	// agent is about to send (redirects included, and the interface URLs of the fetched card): an error refuses
	// the request, which then fails as an unreachable remote does. Not a
	// config key: a program whose callers choose the configuration (the
	// ad-hoc scenarios of the conversation bridge) confines the agent to
	// an allowlist with it.
	CheckURL func(*url.URL) error `yaml:"-"`
}

// Credentials are sent with every request to the remote (card fetch
// included), and only to the host of Config.URL: a card whose interface is
// on another host gets none, nor does a redirect to another host.
type Credentials struct {
	// BearerToken, if set, is sent as "Authorization: Bearer TOKEN".
	BearerToken string `yaml:"bearer_token"`
	// APIKey, if set, is sent in the header APIKeyHeader.
	APIKey string `yaml:"api_key"`
	// APIKeyHeader names the API key's header; "" means
	// DefaultAPIKeyHeader (X-API-Key).
	APIKeyHeader string `yaml:"api_key_header"`
}

// String describes the credentials without their secrets, so that a
// Config printed with fmt (%v, %+v) or logged shows which are set, not
// what they are.
func (c Credentials) String() string {
	set := func(s string) string {
		if s == "" {
			return "unset"
		}
		return "set"
	}
	return fmt.Sprintf("{bearer_token: %s, api_key: %s, api_key_header: %q}", set(c.BearerToken), set(c.APIKey), c.APIKeyHeader)
}

// GoString is String, for %#v.
func (c Credentials) GoString() string { return c.String() }

// Validate reports every problem of c, each as an error naming its YAML
// key ("url: required", "timeout: must be > 0", …), joined with
// errors.Join; nil when c is usable. Secrets are never quoted.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	switch u, err := url.Parse(c.URL); {
	case strings.TrimSpace(c.URL) == "":
		bad("url", "required")
	case err != nil:
		bad("url", "not a URL: %v", redactedParseError(err))
	case u.Scheme != "http" && u.Scheme != "https":
		bad("url", "scheme %q: want http or https", u.Scheme)
	case u.Host == "":
		bad("url", "no host")
	case u.User != nil:
		bad("url", "must not hold user:password (use credentials)")
	case u.Fragment != "":
		bad("url", "must not have a fragment")
	}
	switch c.Protocol {
	case "", "0.3", "1.0":
	default:
		bad("protocol", "%q: want \"0.3\" or \"1.0\" (or leave it out: the remote's card decides)", c.Protocol)
	}
	if b, _ := bindingName(c.Binding); b == "GRPC" && c.Protocol == "0.3" {
		bad("binding", "grpc with protocol 0.3: the gRPC binding is spoken in A2A 1.0 only")
	}
	if _, ok := bindingName(c.Binding); !ok {
		bad("binding", "%q: want \"jsonrpc\", \"rest\" or \"grpc\" (or leave it out: the remote's card decides)", c.Binding)
	}
	if c.Timeout < 0 {
		bad("timeout", "must be > 0")
	}
	if c.CardTimeout < 0 {
		bad("card_timeout", "must be > 0")
	}
	if c.FirstEventTimeout < 0 {
		bad("first_event_timeout", "must be > 0")
	}
	if c.IdleTimeout < 0 {
		bad("idle_timeout", "must be > 0")
	}
	if c.MaxOutput < 0 || c.MaxOutput > 1<<40 {
		bad("max_output", "must be 0 (the default, %d bytes) to 1 TiB", DefaultMaxOutput)
	}
	if u, err := url.Parse(c.URL); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		if _, err := egress.New(c.URL, c.AllowHosts, "allow_hosts"); err != nil {
			errs = append(errs, err)
		}
	}
	if c.MaxCardBytes < 0 {
		bad("max_card_bytes", "must be >= 0 (0: the default, %d bytes)", DefaultMaxCardBytes)
	}
	cr := c.Credentials
	if !validHeaderValue(cr.BearerToken) {
		bad("credentials.bearer_token", "holds characters an HTTP header cannot carry")
	}
	if !validHeaderValue(cr.APIKey) {
		bad("credentials.api_key", "holds characters an HTTP header cannot carry")
	}
	if cr.APIKeyHeader != "" {
		if !validHeaderName(cr.APIKeyHeader) {
			bad("credentials.api_key_header", "%q is not an HTTP header name", cr.APIKeyHeader)
		} else if strings.EqualFold(cr.APIKeyHeader, "Authorization") && cr.BearerToken != "" {
			bad("credentials.api_key_header", "Authorization also carries bearer_token: set one of them")
		}
		if cr.APIKey == "" {
			bad("credentials.api_key_header", "set without api_key")
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns c with the defaults of its zero fields.
func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.FirstEventTimeout == 0 {
		c.FirstEventTimeout = DefaultFirstEventTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxOutput == 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.MaxCardBytes == 0 {
		c.MaxCardBytes = DefaultMaxCardBytes
	}
	if c.CardTimeout == 0 {
		c.CardTimeout = DefaultCardTimeout
	}
	if c.Credentials.APIKeyHeader == "" {
		c.Credentials.APIKeyHeader = DefaultAPIKeyHeader
	}
	return c
}

// bindingName maps Config.Binding to the client's binding name.
func bindingName(b string) (string, bool) {
	switch strings.ToLower(b) {
	case "":
		return "", true
	case "jsonrpc":
		return "JSONRPC", true
	case "rest":
		return "HTTP+JSON", true
	case "grpc":
		return "GRPC", true
	}
	return "", false
}

// redactedParseError is a url.Parse error without the URL it quotes (which
// may hold a password).
func redactedParseError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// validHeaderName reports whether s is an HTTP field name (RFC 9110 §5.1:
// a token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s can be sent as an HTTP field value
// as is: visible ASCII and spaces or tabs inside, none at the ends.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' || c == 0x7f || c >= 0x80 {
			return false
		}
	}
	return strings.TrimSpace(s) == s
}
