// Package client calls A2A agents: A2A 1.0 over JSON-RPC and HTTP+JSON
// (A2A 1.0 §9, §11) and A2A 0.3.0 over JSON-RPC and HTTP+JSON (the /v1/…
// paths, A2A 0.3.0 §3.2.3), with SSE streams. It finds
// the agent from a base URL or card URL (a 0.3, 1.0 or union card), picks
// the interface to call from the card (1.0 first; see SelectInterface),
// and offers every operation under its A2A 1.0 name; streams are
// iter.Seq2 that survive dropped connections; calls that are safe to
// repeat are retried with backoff and jitter; per-call headers and
// credentials are chosen from the Agent Card's security schemes.
//
//	c, err := client.Dial(ctx, "http://127.0.0.1:8080", client.Options{})
//	if err != nil { … }
//	res, err := c.SendMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))})
//	for ev, err := range c.SendStreamingMessage(ctx, params) { … }
//
// Errors: the agent's A2A errors are *a2a.Error whatever the binding
// (JSON-RPC error objects of either version, HTTP+JSON google.rpc.Status
// bodies and, over 0.3, the JSON-RPC error members of 0.3 HTTP+JSON error
// bodies; errors.Is(err, a2a.ErrTaskNotFound) works); other HTTP-level
// failures are *HTTPError; malformed answers are *ProtocolError; network
// failures are returned as the net/http client reports them.
//
// Trace context: a call whose context carries an OpenTelemetry span sends
// its W3C traceparent (and tracestate) header, so the agent continues the
// caller's trace; a context without one sends none.
package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/grpcdial"
)

// Options configure a Client. The zero value is ready to use.
type Options struct {
	// HTTPClient performs requests; nil means a client with no overall
	// timeout (streams may be long; use ctx deadlines per call).
	HTTPClient *http.Client
	// MaxRetries is how many times a call that is safe to repeat is retried
	// after a transport error or an HTTP 429/5xx; 0 means 3, negative none.
	// Any call (a message too) is retried after HTTP 429 or
	// a2a.ErrRateLimited, which say the request was refused unread, no
	// sooner than the server's Retry-After (at most a minute).
	MaxRetries int
	// RetryBaseDelay is the first backoff delay (doubled per attempt, with
	// full jitter, capped at RetryMaxDelay); 0 means 200 ms.
	RetryBaseDelay time.Duration
	// RetryMaxDelay caps a backoff delay; 0 means 5 s.
	RetryMaxDelay time.Duration
	// Protocol forces the protocol version: "" (the card decides: 1.0
	// when offered, else 0.3), a2a.Version03 or a2a.Version10.
	Protocol string
	// Binding forces the protocol binding: "" (the card's preference),
	// a2a.TransportJSONRPC or a2a.TransportHTTPJSON ("REST" is accepted
	// for it), in either protocol version.
	Binding string
	// ShouldRetry, if set, decides whether err (from attempt 1, 2, …) is
	// retried, replacing the default rule (DefaultShouldRetry). method is
	// the operation's name as sent: the JSON-RPC method (message/send in
	// 0.3, SendMessage in 1.0; HTTP+JSON calls of either version use the
	// 1.0 names), or
	// "agent-card" for the card fetch. Headers gets the same name.
	ShouldRetry func(method string, attempt int, err error) bool
	// RetrySend makes SendMessage (and opening SendStreamingMessage) retryable
	// even when the card does not declare a2a.ExtensionEventLog, whose
	// servers do not process a repeated messageId twice. Without that
	// guarantee a retried send may run twice, so by default it is retried
	// only against servers that declare the extension.
	RetrySend bool
	// NoResume disables resubscribing when a stream breaks before its
	// final event.
	NoResume bool
	// Headers, if set, is called for every request and its headers added
	// (the getHeaders pattern: tracing, custom auth).
	Headers func(ctx context.Context, method string) (http.Header, error)
	// Token is a bearer token, sent in Authorization when the card declares
	// an http "bearer", oauth2 or openIdConnect scheme (or no scheme).
	Token string
	// APIKey is sent where the card's apiKey schemes say (header, query or
	// cookie, under their names; X-API-Key when the card declares none).
	APIKey string
	// CredentialHosts lists other hosts (host or host:port) that may
	// receive Token, APIKey and Headers. By default credentials go only to
	// the host of the URL given to Dial (for New: the card's url), so a
	// card pointing elsewhere, or a redirect to another host, gets none.
	CredentialHosts []string
	// Extensions are the URIs of the extensions every request activates
	// (A2A 1.0 §3.2.6, §4.6): sent comma-separated in the A2A-Extensions
	// header to an A2A 1.0 interface, in X-A2A-Extensions to a 0.3 one
	// (not with the card fetch). An agent whose card declares an extension
	// required: true refuses messages that do not activate it
	// (*a2a.Error with a2a.CodeExtensionSupportRequired, -32008); the
	// response names those the agent applied in the same header.
	Extensions []string
	// CardVerifier, if set, verifies the signatures of every Agent Card
	// fetched (A2A 1.0 §8.4.3: Resolve, GetExtendedAgentCard) before it
	// is used, and the card used is built from its signed content only
	// (CardVerifier.VerifyCard); a card that fails is a
	// *CardSignatureError, not retried. nil: signatures are not checked.
	CardVerifier *CardVerifier
	// CardCache keeps the cards Resolve and Dial fetch, as their HTTP
	// caching headers allow (see CardCache; A2A 1.0 §8.6.2); nil means
	// DefaultCardCache.
	CardCache *CardCache
	// NoCardCache fetches every card anew, neither reading nor filling
	// a CardCache.
	NoCardCache bool
	// MaxCardBytes bounds an Agent Card document (Resolve, Dial, the
	// extended card), in bytes; 0 means DefaultMaxCardBytes (1 MiB). A
	// larger card is a *ProtocolError naming the limit, read no further.
	MaxCardBytes int64
	// MaxResponseBytes bounds one response body, one stream event (its
	// SSE data, or a gRPC message), in bytes; 0 means
	// DefaultMaxResponseBytes (64 MiB). A larger one is a *ProtocolError
	// naming the limit, read no further.
	MaxResponseBytes int64
	// DialControl, if set, is the Control function (net.Dialer.Control)
	// of the connections to a GRPC interface, which does not go through
	// HTTPClient: it may refuse the address dialled. (HTTP requests are
	// dialled by HTTPClient's transport.)
	DialControl func(network, address string, c syscall.RawConn) error
}

// Defaults of Options' size limits.
const (
	// DefaultMaxCardBytes is Options.MaxCardBytes when 0: 1 MiB.
	DefaultMaxCardBytes = 1 << 20
	// DefaultMaxResponseBytes is Options.MaxResponseBytes when 0: 64 MiB.
	DefaultMaxResponseBytes = 64 << 20
)

// maxCard is the card size limit in force.
func (o Options) maxCard() int64 {
	if o.MaxCardBytes > 0 {
		return o.MaxCardBytes
	}
	return DefaultMaxCardBytes
}

// maxResponse is the response size limit in force.
func (o Options) maxResponse() int64 {
	if o.MaxResponseBytes > 0 {
		return o.MaxResponseBytes
	}
	return DefaultMaxResponseBytes
}

// Client calls one agent over one interface of its card (see Interface).
// It is safe for concurrent use.
type Client struct {
	card       a2a.AgentCard
	iface      Interface
	v10        bool // the interface speaks A2A 1.0
	rest       bool // the interface is HTTP+JSON
	http       *http.Client
	opts       Options
	idSeq      atomic.Int64
	credHosts  map[string]bool
	replayable bool   // the card declares a2a.ExtensionEventLog
	extensions string // Options.Extensions, comma-separated
	// grpc is the connection to a GRPC interface (nil for HTTP ones), at
	// grpcHost (its host:port).
	grpc     grpcdial.Conn
	grpcHost string
}

// Dial resolves the agent card at u (a base URL or a card URL; see
// Resolve) and returns a Client for it (see New for the interface it
// calls).
func Dial(ctx context.Context, u string, opts Options) (*Client, error) {
	if _, _, err := checkChoice(&opts); err != nil {
		return nil, err
	}
	card, err := Resolve(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	return newClient(card, opts, hostOf(u), strings.HasPrefix(strings.ToLower(u), "https:"))
}

// hostname is the host of host:port, without the port (and brackets).
func hostname(hp string) string {
	u, err := url.Parse("//" + hp)
	if err != nil {
		return hp
	}
	return u.Hostname()
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// New returns a Client for card. It calls the interface SelectInterface
// picks with Options.Protocol and Options.Binding: A2A 1.0 (JSON-RPC or
// HTTP+JSON, in the card's order) when the card offers it, else A2A 0.3
// (JSON-RPC or HTTP+JSON, the card's preferredTransport first). A card
// without such an interface, or without the one forced, is an error naming
// what the card offers.
func New(card a2a.AgentCard, opts Options) (*Client, error) {
	return newClient(card, opts, "", cardOverTLS(&card))
}

// cardOverTLS guesses, for New, whether the card came over TLS: its
// first HTTP interface's scheme says so; a card without one is taken to.
func cardOverTLS(card *a2a.AgentCard) bool {
	for _, it := range cardInterfaces(card) {
		if absoluteHTTP(it.URL) {
			return strings.HasPrefix(strings.ToLower(it.URL), "https:")
		}
	}
	return true
}

// newClient returns a Client for card, fetched from origin (host:port;
// "" for New) over TLS when secure (which a GRPC interface then uses too).
func newClient(card a2a.AgentCard, opts Options, origin string, secure bool) (*Client, error) {
	iface, err := SelectInterface(&card, opts.Protocol, opts.Binding)
	if err != nil {
		return nil, err
	}
	c := newBare(card, iface, opts, origin)
	for _, x := range card.Capabilities.Extensions {
		if x.URI == a2a.ExtensionEventLog {
			c.replayable = true
		}
	}
	if iface.Binding == a2a.TransportGRPC {
		if err := c.dialGRPC(secure); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Close releases the client's connection to a GRPC interface; for HTTP
// interfaces (whose connections belong to Options.HTTPClient) it does
// nothing. Calls after Close fail.
func (c *Client) Close() error {
	if c.grpc != nil {
		return c.grpc.Close()
	}
	return nil
}

// newBare returns a Client for iface with opts' defaults applied.
func newBare(card a2a.AgentCard, iface Interface, opts Options, origin string) *Client {
	grpcHost := ""
	if iface.Binding == a2a.TransportGRPC {
		grpcHost, _ = grpcTarget(iface.URL)
		grpcHost = strings.ToLower(grpcHost)
	}
	if origin == "" {
		origin = hostOf(iface.URL)
		if grpcHost != "" {
			origin = grpcHost
		}
	}
	c := &Client{card: card, iface: iface, credHosts: map[string]bool{origin: true}, grpcHost: grpcHost,
		v10: iface.ProtocolVersion == a2a.Version10, rest: iface.Binding == a2a.TransportHTTPJSON}
	for _, h := range opts.CredentialHosts {
		c.credHosts[strings.ToLower(h)] = true
	}
	if grpcHost != "" {
		// The card's host serving gRPC on another port (serve
		// --grpc-addr) is the card's origin still, and a credential host
		// named without a port covers the target's port.
		for h := range c.credHosts {
			_, _, err := net.SplitHostPort(h)
			if hostname(h) == hostname(grpcHost) && (h == origin || err != nil) {
				c.credHosts[grpcHost] = true
			}
		}
	}
	var exts []string
	for _, u := range opts.Extensions {
		if u = strings.TrimSpace(u); u != "" && !slices.Contains(exts, u) {
			exts = append(exts, u)
		}
	}
	c.extensions = strings.Join(exts, ",")
	base := opts.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	// A copy whose redirects never carry credentials to another host.
	hc := *base
	prev := base.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if !c.credHosts[strings.ToLower(req.URL.Host)] {
			stripCredentials(req, &c.opts)
		}
		if prev != nil {
			return prev(req, via)
		}
		return nil
	}
	c.http = &hc
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 3
	}
	if opts.RetryBaseDelay <= 0 {
		opts.RetryBaseDelay = 200 * time.Millisecond
	}
	if opts.RetryMaxDelay <= 0 {
		opts.RetryMaxDelay = 5 * time.Second
	}
	c.opts = opts
	return c
}

// Card returns the agent card the client was made from.
func (c *Client) Card() a2a.AgentCard { return c.card }

// Interface returns the interface the client calls: its URL, binding,
// protocol version and tenant.
func (c *Client) Interface() Interface { return c.iface }

// URL returns the URL of the interface the client calls (Interface().URL).
func (c *Client) URL() string { return c.iface.URL }

// authorize adds per-call headers and credentials, for allowed hosts only.
func (c *Client) authorize(ctx context.Context, req *http.Request, method string) error {
	if !c.credHosts[strings.ToLower(req.URL.Host)] {
		return nil
	}
	applyCredentials(req, &c.card, c.opts.Token, c.opts.APIKey)
	if c.opts.Headers != nil {
		h, err := c.opts.Headers(ctx, method)
		if err != nil {
			return fmt.Errorf("a2a client: headers for %s: %w", method, err)
		}
		for k, vs := range h {
			req.Header.Del(k)
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
	}
	return nil
}

func (c *Client) sendRetryable() bool { return c.replayable || c.opts.RetrySend }
