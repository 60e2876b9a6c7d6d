// Package client calls A2A agents (A2A 0.3.0 JSON-RPC + SSE): discovery
// from a base URL or card URL, every 0.3.0 method, streams as iter.Seq2
// that survive dropped connections, retries with backoff and jitter for
// calls that are safe to repeat, per-call headers and credentials chosen
// from the Agent Card's security schemes.
//
//	c, err := client.Dial(ctx, "http://127.0.0.1:8080", client.Options{})
//	if err != nil { … }
//	res, err := c.SendMessage(ctx, a2a.MessageSendParams{Message: a2a.NewMessage(a2a.RoleUser, a2a.TextPart{Text: "hi"})})
//	for ev, err := range c.SendStreamingMessage(ctx, params) { … }
//
// Errors: JSON-RPC/A2A errors are *a2a.Error (errors.Is(err,
// a2a.ErrTaskNotFound) works); HTTP-level failures are *HTTPError;
// malformed answers are *ProtocolError; network failures are returned as
// the net/http client reports them.
package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/jsonrpc"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
)

// Options configure a Client. The zero value is ready to use.
type Options struct {
	// HTTPClient performs requests; nil means a client with no overall
	// timeout (streams may be long; use ctx deadlines per call).
	HTTPClient *http.Client
	// MaxRetries is how many times a call that is safe to repeat is retried
	// after a transport error or an HTTP 429/5xx; 0 means 3, negative none.
	MaxRetries int
	// RetryBaseDelay is the first backoff delay (doubled per attempt, with
	// full jitter, capped at RetryMaxDelay); 0 means 200 ms.
	RetryBaseDelay time.Duration
	// RetryMaxDelay caps a backoff delay; 0 means 5 s.
	RetryMaxDelay time.Duration
	// ShouldRetry, if set, decides whether err (from attempt 1, 2, …) is
	// retried, replacing the default rule (DefaultShouldRetry). method is
	// the JSON-RPC method, or "agent-card" for the card fetch.
	ShouldRetry func(method string, attempt int, err error) bool
	// RetrySend makes message/send (and opening message/stream) retryable
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
	// CardVerifier, if set, verifies the signatures of every Agent Card
	// fetched (A2A 1.0 §8.4.3) before it is used; a card that fails is a
	// *CardSignatureError. nil: signatures are not checked.
	CardVerifier *CardVerifier
}

// Client calls one agent. It is safe for concurrent use.
type Client struct {
	card       a2a.AgentCard
	url        string
	http       *http.Client
	opts       Options
	idSeq      atomic.Int64
	credHosts  map[string]bool
	replayable bool // the card declares a2a.ExtensionEventLog
}

// Dial resolves the agent card at u (a base URL or a card URL; see
// Resolve) and returns a Client for it.
func Dial(ctx context.Context, u string, opts Options) (*Client, error) {
	card, err := Resolve(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	return newClient(card, opts, hostOf(u))
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// New returns a Client for card. It calls the card's JSON-RPC interface:
// url when preferredTransport is JSONRPC (or empty), else the first
// JSONRPC entry of additionalInterfaces. A card without a JSON-RPC
// interface is an error (REST and gRPC are not implemented yet).
func New(card a2a.AgentCard, opts Options) (*Client, error) {
	return newClient(card, opts, "")
}

func newClient(card a2a.AgentCard, opts Options, origin string) (*Client, error) {
	url := ""
	if card.PreferredTransport == "" || strings.EqualFold(card.PreferredTransport, a2a.TransportJSONRPC) {
		url = card.URL
	}
	if url == "" {
		for _, i := range card.AdditionalInterfaces {
			if strings.EqualFold(i.Transport, a2a.TransportJSONRPC) {
				url = i.URL
				break
			}
		}
	}
	if url == "" {
		return nil, fmt.Errorf("a2a client: agent %q offers no JSON-RPC interface (preferred transport %s)", card.Name, card.PreferredTransport)
	}
	if origin == "" {
		origin = hostOf(url)
	}
	c := &Client{card: card, url: url, opts: opts, credHosts: map[string]bool{origin: true}}
	for _, h := range opts.CredentialHosts {
		c.credHosts[strings.ToLower(h)] = true
	}
	for _, x := range card.Capabilities.Extensions {
		if x.URI == a2a.ExtensionEventLog {
			c.replayable = true
		}
	}
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
	return c, nil
}

// Card returns the agent card the client was made from.
func (c *Client) Card() a2a.AgentCard { return c.card }

// URL returns the JSON-RPC endpoint the client calls.
func (c *Client) URL() string { return c.url }

// request builds a JSON-RPC POST with headers and credentials.
func (c *Client) request(ctx context.Context, method string, id int64, params []byte, stream bool) (*http.Request, error) {
	body := make([]byte, 0, len(params)+96)
	body = append(body, `{"jsonrpc":"2.0","id":`...)
	body = strconv.AppendInt(body, id, 10)
	body = append(body, `,"method":`...)
	body = strconv.AppendQuote(body, method)
	if params != nil {
		body = append(body, `,"params":`...)
		body = append(body, params...)
	}
	body = append(body, '}')
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if err := c.authorize(ctx, req, method); err != nil {
		return nil, err
	}
	return req, nil
}

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

// call performs one non-streaming JSON-RPC call and returns its raw result.
func (c *Client) call(ctx context.Context, method string, params []byte, retry bool) (jsontext.Value, error) {
	var result jsontext.Value
	err := c.withRetry(ctx, method, retry, func() error {
		id := c.idSeq.Add(1)
		req, err := c.request(ctx, method, id, params, false)
		if err != nil {
			return err
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return redact(err)
		}
		defer resp.Body.Close()
		if err := checkResponse(resp, "application/json"); err != nil {
			return err
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		if err != nil {
			return redact(err)
		}
		r, err := jsonrpc.ParseResponse(b)
		if err != nil {
			return protocolError(method, "invalid JSON-RPC response", err)
		}
		// An error answered with id null: the server could not read ours.
		nullErr := r.Err != nil && (len(r.ID) == 0 || string(r.ID) == "null")
		if !nullErr && !jsonrpc.SameID(r.ID, jsontext.Value(strconv.FormatInt(id, 10))) {
			return &ProtocolError{Method: method, Reason: fmt.Sprintf("response id %s does not match request id %d", r.ID, id)}
		}
		if r.Err != nil {
			return r.Err
		}
		if r.Result == nil {
			if !voidMethods[method] {
				return &ProtocolError{Method: method, Reason: "response has neither result nor error"}
			}
			r.Result = jsontext.Value("null")
		}
		result = r.Result
		return nil
	})
	return result, err
}

// voidMethods have no meaningful result: a success answer that omits
// "result" (a2a-go v0.3.x does for delete) is accepted as null.
var voidMethods = map[string]bool{"tasks/pushNotificationConfig/delete": true}

const maxResponseBytes = 64 << 20

// jsonLike accepts JSON media types and text/plain, which some servers
// (a2a-go v0.3.x) send for JSON-RPC answers; the body must then still parse
// as a JSON-RPC response, or the call fails with a *ProtocolError.
func jsonLike(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/plain" || mt == ""
}

// checkResponse turns HTTP-level failures into *HTTPError: a non-2xx status,
// or a content type that is not the one wanted (tolerating text/plain for
// JSON, see jsonLike).
func checkResponse(resp *http.Response, want string) error {
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	if resp.StatusCode/100 == 2 && (mt == want || (want == "application/json" && jsonLike(mt))) {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &HTTPError{StatusCode: resp.StatusCode, Status: resp.Status, ContentType: ct, Body: string(b[:min(len(b), 4096)]),
		RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	if resp.StatusCode/100 == 2 {
		e.Reason = fmt.Sprintf("unexpected Content-Type %q (want %s)", ct, want)
		// A JSON-RPC error sent as JSON where a stream was expected is
		// still the server's answer.
		if want == "text/event-stream" && (mt == "application/json") {
			if r, err := jsonrpc.ParseResponse(b); err == nil && r.Err != nil {
				return r.Err
			}
		}
	} else if resp.StatusCode >= 400 && (mt == "application/json") {
		// Some servers answer JSON-RPC errors with 4xx/5xx: keep the code.
		if r, err := jsonrpc.ParseResponse(b); err == nil && r.Err != nil {
			return &statusError{HTTPError: e, rpc: r.Err}
		}
	}
	return e
}

// statusError is an HTTP error status carrying a JSON-RPC error body: it is
// both an *HTTPError and the *a2a.Error for errors.As / errors.Is.
type statusError struct {
	*HTTPError
	rpc *a2a.Error
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s (%s)", e.rpc.Error(), e.HTTPError.Error())
}

func (e *statusError) Unwrap() []error { return []error{e.HTTPError, e.rpc} }

// retryAfter parses a Retry-After header given in seconds (0 otherwise).
func retryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}

func decodeTask(method string, raw jsontext.Value) (*a2a.Task, error) {
	ev, err := v03.UnmarshalEvent(raw)
	if err != nil {
		return nil, protocolError(method, "invalid Task in result", err)
	}
	t, ok := ev.(*a2a.Task)
	if !ok {
		return nil, &ProtocolError{Method: method, Reason: fmt.Sprintf("result is a %T, want a Task", ev)}
	}
	return t, nil
}

// SendMessage calls message/send (A2A 0.3.0 §7.1). The result is a *a2a.Task
// or, for agents that answer directly, a *a2a.Message. It is retried on
// transport errors only when the server does not process a repeated
// messageId twice (its card declares a2a.ExtensionEventLog) or
// Options.RetrySend is set. A message without MessageID gets a fresh one.
func (c *Client) SendMessage(ctx context.Context, p a2a.MessageSendParams) (a2a.Event, error) {
	if p.Message.MessageID == "" {
		p.Message.MessageID = a2a.NewID()
	}
	if p.Message.Role == "" {
		p.Message.Role = a2a.RoleUser
	}
	params, err := v03.EncodeMessageSendParams(&p)
	if err != nil {
		return nil, err
	}
	raw, err := c.call(ctx, "message/send", params, c.sendRetryable())
	if err != nil {
		return nil, err
	}
	ev, err := v03.UnmarshalEvent(raw)
	if err != nil {
		return nil, protocolError("message/send", "invalid result", err)
	}
	switch ev.(type) {
	case *a2a.Task, *a2a.Message:
		return ev, nil
	}
	return nil, &ProtocolError{Method: "message/send", Reason: fmt.Sprintf("result is a %T, want a Task or Message", ev)}
}

// GetTask calls tasks/get (A2A 0.3.0 §7.3); retried when safe.
func (c *Client) GetTask(ctx context.Context, p a2a.TaskQueryParams) (*a2a.Task, error) {
	params, err := v03.EncodeTaskQueryParams(&p)
	if err != nil {
		return nil, err
	}
	raw, err := c.call(ctx, "tasks/get", params, true)
	if err != nil {
		return nil, err
	}
	return decodeTask("tasks/get", raw)
}

// CancelTask calls tasks/cancel (A2A 0.3.0 §7.4). Not retried.
func (c *Client) CancelTask(ctx context.Context, p a2a.TaskIDParams) (*a2a.Task, error) {
	params, err := v03.EncodeTaskIDParams(&p)
	if err != nil {
		return nil, err
	}
	raw, err := c.call(ctx, "tasks/cancel", params, false)
	if err != nil {
		return nil, err
	}
	return decodeTask("tasks/cancel", raw)
}

// SetPushNotificationConfig calls tasks/pushNotificationConfig/set (§7.5).
func (c *Client) SetPushNotificationConfig(ctx context.Context, cfg a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	params, err := v03.MarshalTaskPushNotificationConfig(&cfg)
	if err != nil {
		return nil, err
	}
	raw, err := c.call(ctx, "tasks/pushNotificationConfig/set", params, false)
	if err != nil {
		return nil, err
	}
	out, err := v03.UnmarshalTaskPushNotificationConfig(raw)
	if err != nil {
		return nil, protocolError("tasks/pushNotificationConfig/set", "invalid result", err)
	}
	return &out, nil
}

// GetPushNotificationConfig calls tasks/pushNotificationConfig/get (§7.6);
// an empty config id asks for the task's first config. Retried when safe.
func (c *Client) GetPushNotificationConfig(ctx context.Context, p a2a.GetTaskPushNotificationConfigParams) (*a2a.TaskPushNotificationConfig, error) {
	params, err := v03.EncodeTaskPushConfigParams(&p)
	if err != nil {
		return nil, err
	}
	raw, err := c.call(ctx, "tasks/pushNotificationConfig/get", params, true)
	if err != nil {
		return nil, err
	}
	out, err := v03.UnmarshalTaskPushNotificationConfig(raw)
	if err != nil {
		return nil, protocolError("tasks/pushNotificationConfig/get", "invalid result", err)
	}
	return &out, nil
}

// ListPushNotificationConfigs calls tasks/pushNotificationConfig/list (§7.7); retried when safe.
func (c *Client) ListPushNotificationConfigs(ctx context.Context, p a2a.TaskIDParams) ([]a2a.TaskPushNotificationConfig, error) {
	params, err := v03.EncodeTaskIDParams(&p)
	if err != nil {
		return nil, err
	}
	raw, err := c.call(ctx, "tasks/pushNotificationConfig/list", params, true)
	if err != nil {
		return nil, err
	}
	out, err := v03.UnmarshalTaskPushNotificationConfigs(raw)
	if err != nil {
		return nil, protocolError("tasks/pushNotificationConfig/list", "invalid result", err)
	}
	return out, nil
}

// DeletePushNotificationConfig calls tasks/pushNotificationConfig/delete (§7.8).
func (c *Client) DeletePushNotificationConfig(ctx context.Context, p a2a.DeleteTaskPushNotificationConfigParams) error {
	gp := a2a.GetTaskPushNotificationConfigParams(p)
	params, err := v03.EncodeTaskPushConfigParams(&gp)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, "tasks/pushNotificationConfig/delete", params, false)
	return err
}

// GetAuthenticatedExtendedCard calls agent/getAuthenticatedExtendedCard
// (A2A 0.3.0 §7.10); retried when safe.
func (c *Client) GetAuthenticatedExtendedCard(ctx context.Context) (*a2a.AgentCard, error) {
	raw, err := c.call(ctx, "agent/getAuthenticatedExtendedCard", nil, true)
	if err != nil {
		return nil, err
	}
	card, err := v03.UnmarshalAgentCard(raw)
	if err != nil {
		return nil, protocolError("agent/getAuthenticatedExtendedCard", "invalid Agent Card", err)
	}
	return &card, nil
}

func (c *Client) sendRetryable() bool { return c.replayable || c.opts.RetrySend }
