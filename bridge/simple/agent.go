package simple

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/egress"
	"github.com/a2abridge/a2abridge/internal/h1"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	"github.com/a2abridge/a2abridge/server"
)

// Defaults of Config.
const (
	DefaultTimeoutMS    = 30000
	DefaultRetries      = 2
	DefaultAPIKeyHeader = "X-API-Key"
	DefaultMaxResponse  = 16 << 20
)

// Backoff between attempts: the n-th retry (n = 1, 2, …) waits a random
// time between half and all of min(backoffBase·2^(n-1), backoffMax).
const (
	backoffBase = 100 * time.Millisecond
	backoffMax  = 2 * time.Second
)

// Config configures an `http` agent: the keys of its entry
// in `serve --config` besides the common ones. The zero value of every
// key but URL means its default.
type Config struct {
	// URL is where each message is POSTed: http or https. Required.
	URL string `yaml:"url"`
	// TextField is the key of texts in input and output values ("" means
	// "text"). It may be neither "files" nor "data".
	TextField string `yaml:"text_field"`
	// TimeoutMS bounds each message's call in milliseconds, all attempts
	// and the waits between them included (0 means 30000).
	TimeoutMS int `yaml:"timeout_ms"`
	// Retries is how many times a call is repeated after a connection error
	// or an HTTP 502, 503 or 504, with exponential backoff and jitter (nil
	// means 2; 0 means no retry). No other failure is retried.
	Retries *int `yaml:"retries"`
	// Credentials authenticate the agent to the backend.
	Credentials Credentials `yaml:"credentials"`
	// Headers are extra request headers (name → value). They may not set
	// Content-Type, Content-Length, Host, Transfer-Encoding, Connection or
	// Idempotency-Key (the agent sets it: see IdempotencyKey), nor a
	// header Credentials sets.
	Headers map[string]string `yaml:"headers"`
	// MaxResponse is the largest answer body read, in bytes (0 means
	// 16 MiB); a larger answer fails the task.
	MaxResponse int64 `yaml:"max_response"`
	// AllowHosts lists the link-local or cloud metadata addresses the
	// agent may connect to (IP addresses or CIDRs; host names are
	// accepted too, for the same syntax as the other kinds). By default no
	// connection is made to a link-local (169.254.0.0/16, fe80::/10) or
	// metadata address, checked on the address each connection is made
	// to. (Redirects are never followed: a 3xx answer fails the task.)
	AllowHosts []string `yaml:"allow_hosts"`
}

// Credentials are sent with every call: "Authorization: Bearer
// <BearerToken>" when BearerToken is set, and "<APIKeyHeader>: <APIKey>"
// when APIKey is set. They arrive expanded from ${ENV} and are never
// logged or shown in a reason.
type Credentials struct {
	BearerToken string `yaml:"bearer_token"`
	APIKey      string `yaml:"api_key"`
	// APIKeyHeader is the header of APIKey ("" means "X-API-Key").
	APIKeyHeader string `yaml:"api_key_header"`
}

// reservedHeaders are the headers the agent sets itself (canonical form).
var reservedHeaders = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Host": true, "Transfer-Encoding": true,
	"Connection": true, "Idempotency-Key": true,
}

// Validate reports every problem of c, each naming its key ("url:
// required", "timeout_ms: must be > 0", …), joined with errors.Join; nil
// when c is usable.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.URL == "" {
		bad("url", "required")
	} else if u, err := url.Parse(c.URL); err != nil {
		bad("url", "not a URL")
	} else if u.Scheme != "http" && u.Scheme != "https" {
		bad("url", "must be an http or https URL, not %q", u.Scheme)
	} else if u.Host == "" {
		bad("url", "has no host")
	}
	switch c.TextField {
	case filesKey, dataKey:
		bad("text_field", "must not be %q (a reserved key)", c.TextField)
	}
	if c.TimeoutMS < 0 {
		bad("timeout_ms", "must be > 0")
	}
	if c.Retries != nil && (*c.Retries < 0 || *c.Retries > 10) {
		bad("retries", "must be between 0 and 10")
	}
	if c.MaxResponse < 0 {
		bad("max_response", "must be > 0")
	}
	if c.URL != "" {
		if _, err := egress.New(c.URL, c.AllowHosts, "allow_hosts"); err != nil && len(c.AllowHosts) > 0 && strings.HasPrefix(err.Error(), "allow_hosts") {
			errs = append(errs, err)
		}
	}
	cr := c.Credentials
	if cr.BearerToken != "" && !validHeaderValue(cr.BearerToken) {
		bad("credentials.bearer_token", "holds characters a header cannot carry")
	}
	if cr.APIKey != "" && !validHeaderValue(cr.APIKey) {
		bad("credentials.api_key", "holds characters a header cannot carry")
	}
	keyHeader := cr.keyHeader()
	if cr.APIKeyHeader != "" {
		switch {
		case !validHeaderName(cr.APIKeyHeader):
			bad("credentials.api_key_header", "%q is not a header name", cr.APIKeyHeader)
		case reservedHeaders[keyHeader]:
			bad("credentials.api_key_header", "%s is set by the agent itself", keyHeader)
		case keyHeader == "Authorization" && cr.BearerToken != "":
			bad("credentials.api_key_header", "Authorization is already set by credentials.bearer_token")
		}
	}
	for name, v := range c.Headers {
		cn := textproto.CanonicalMIMEHeaderKey(name)
		switch {
		case !validHeaderName(name):
			bad("headers", "%q is not a header name", name)
		case reservedHeaders[cn]:
			bad("headers."+name, "%s is set by the agent itself", cn)
		case cn == "Authorization" && cr.BearerToken != "":
			bad("headers."+name, "conflicts with credentials.bearer_token")
		case cn == keyHeader && cr.APIKey != "":
			bad("headers."+name, "conflicts with credentials.api_key")
		case !validHeaderValue(v):
			bad("headers."+name, "value holds characters a header cannot carry")
		}
	}
	return errors.Join(errs...)
}

func (cr Credentials) keyHeader() string {
	if cr.APIKeyHeader == "" {
		return DefaultAPIKeyHeader
	}
	return textproto.CanonicalMIMEHeaderKey(cr.APIKeyHeader)
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s can be sent as a header value: no
// control characters but tab, valid UTF-8.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return utf8.ValidString(s)
}

// Agent is the `http` agent: a server.Agent that POSTs each message to a
// backend in the simple dialect and reports its answer.
//
// For each message (the one that creates a task, and each that continues
// one waiting in input-required) it POSTs {"task_id": <the A2A task id>,
// "input": PartsToValue(message parts)} with the headers "Content-Type:
// application/json", "Idempotency-Key: IdempotencyKey(<the A2A task id>,
// <the A2A messageId>)" (the same on every attempt at the message,
// different for every other message and task, whoever sent it),
// Config.Headers and Config.Credentials, and then:
//
//   - HTTP 2xx, "status": "success": an artifact "output" with the parts
//     ValueToParts(output) (none for a null output), and the task
//     completes;
//   - "status": "error": the task fails with the "error" text as its
//     status message;
//   - "status": "input_required": the task waits in input-required with
//     the backend's question ("error", else the text of "output") as its
//     status message; the client's next message is POSTed with the same
//     task_id;
//   - a malformed answer (not JSON, no or an unknown status, an output or
//     error of the wrong type, another task_id, larger than MaxResponse),
//     an HTTP status other than 2xx, no answer within TimeoutMS, or a
//     backend that cannot be reached: the task fails with a reason that
//     names what was wrong (never a credential).
//
// Redirects are not followed (an HTTP 3xx is a failure). Cancelling the
// task (its execution context) aborts the call.
type Agent struct {
	url         string
	textField   string
	timeout     time.Duration
	retries     int
	maxResponse int64
	header      http.Header
	client      *http.Client
	transport   *h1.Transport
}

// New validates c (see Config.Validate) and returns its agent with a
// connection pool of its own. It does no network I/O.
func New(c Config) (*Agent, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	a := &Agent{
		url:         c.URL,
		textField:   c.TextField,
		timeout:     time.Duration(c.TimeoutMS) * time.Millisecond,
		retries:     DefaultRetries,
		maxResponse: c.MaxResponse,
		header:      make(http.Header, len(c.Headers)+5),
	}
	if a.textField == "" {
		a.textField = DefaultTextField
	}
	if a.timeout == 0 {
		a.timeout = DefaultTimeoutMS * time.Millisecond
	}
	if c.Retries != nil {
		a.retries = *c.Retries
	}
	if a.maxResponse == 0 {
		a.maxResponse = DefaultMaxResponse
	}
	for k, v := range c.Headers {
		a.header.Set(k, v)
	}
	a.header.Set("Content-Type", "application/json")
	a.header.Set("Accept", "application/json")
	if a.header.Get("User-Agent") == "" {
		a.header.Set("User-Agent", "a2abridge")
	}
	if c.Credentials.BearerToken != "" {
		a.header.Set("Authorization", "Bearer "+c.Credentials.BearerToken)
	}
	if c.Credentials.APIKey != "" {
		a.header.Set(c.Credentials.keyHeader(), c.Credentials.APIKey)
	}
	policy, err := egress.New(c.URL, c.AllowHosts, "allow_hosts")
	if err != nil {
		return nil, err
	}
	fallback := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           policy.Dialer().DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	a.transport = h1.New(fallback, 256)
	a.transport.Control = policy.Control
	a.client = &http.Client{
		Transport: telemetry.Transport(a.transport, "http"),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return a, nil
}

// IdempotencyKey is the Idempotency-Key header the agent sends with the
// message messageID of the A2A task taskID: the first 32 lowercase hex
// digits (128 bits) of the SHA-256 of taskID, a NUL byte and messageID,
// that is hex(sha256(taskID + "\x00" + messageID))[:32].
//
// A task id is the server's own (a UUID), unique across callers, so the
// key is unique per task and message, even when callers reuse message ids
// (A2A clients numbering their messages "1", "2", …, or two /simple
// callers with the same task_id), and it is the same on every attempt at
// one message, so a backend that honours Idempotency-Key runs each
// message once. The caller's messageId itself is not sent.
func IdempotencyKey(taskID, messageID string) string {
	sum := sha256.Sum256([]byte(taskID + "\x00" + messageID))
	return hex.EncodeToString(sum[:16])
}

// Skill returns a default skill for the agent's card, for when the
// configuration names none. It does not reveal the backend's URL.
func (a *Agent) Skill() a2a.AgentSkill {
	return a2a.AgentSkill{
		ID:          "http",
		Name:        "HTTP service",
		Description: "Forwards each message to an HTTP service in the simple dialect and returns its answer.",
		Tags:        []string{"http", "bridge"},
		InputModes:  []string{"text/plain", "application/json", "*/*"}, // files go to the service as "files"
		OutputModes: []string{"application/json", "text/plain"},
	}
}

// Inline implements server.InlineAgent: Execute returns as soon as the
// task is completed, failed or input-required.
func (a *Agent) Inline() bool { return true }

// Close closes the agent's idle connections. The agent stays usable.
func (a *Agent) Close() error {
	a.transport.CloseIdleConnections()
	return nil
}

// Execute implements server.Agent: one call to the backend per message.
// It returns ctx's error when the task was canceled during the call, and
// the TaskUpdater's error if an event could not be appended; a backend's
// failure is reported with t.Fail, not returned.
func (a *Agent) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	body, err := Marshal(Request{TaskID: t.TaskID(), Input: PartsToValue(req.Message.Parts, a.textField)})
	if err != nil {
		return t.Fail(ctx, "The message cannot be sent to the HTTP service: "+err.Error())
	}
	resp, reason := a.call(ctx, body, IdempotencyKey(t.TaskID(), req.Message.MessageID), t.TaskID())
	if reason != "" {
		if ctx.Err() != nil {
			return ctx.Err() // canceled: the task is closed already
		}
		return t.Fail(ctx, reason)
	}
	switch resp.Status {
	case StatusSuccess:
		if parts := ValueToParts(resp.Output, a.textField); len(parts) > 0 {
			art := a2a.Artifact{ArtifactID: a2a.NewID(), Name: "output", Parts: parts}
			if err := t.AddArtifact(ctx, art, false, true); err != nil {
				return err
			}
		}
		return t.Complete(ctx, "")
	case StatusError:
		return t.Fail(ctx, *resp.Error)
	default: // StatusInputRequired
		parts := []a2a.Part{a2a.NewTextPart(question(resp, a.textField))}
		if o, ok := resp.Output.(map[string]any); ok && len(o) > 0 {
			if _, onlyText := o[a.textField]; !onlyText || len(o) > 1 {
				parts = append(parts, a2a.NewDataPart(o))
			}
		}
		return t.SetStatus(ctx, a2a.TaskStateInputRequired, t.Message(parts...))
	}
}

// question is the question of an input_required answer: its error, else
// the text of its output (checked by check).
func question(r *Response, textField string) string {
	if r.Error != nil && *r.Error != "" {
		return *r.Error
	}
	switch o := r.Output.(type) {
	case string:
		return o
	case map[string]any:
		s, _ := o[textField].(string)
		return s
	}
	return ""
}

// check reports what is wrong with a parsed answer for task taskID.
func (a *Agent) check(r *Response, taskID string) error {
	if r.TaskID != "" && r.TaskID != taskID {
		return fieldErr("task_id", "the answer is for task %s, not %s", quote(r.TaskID, 80), quote(taskID, 80))
	}
	switch r.Status {
	case StatusError:
		if r.Error == nil || *r.Error == "" {
			return fieldErr("error", "a non-empty string is required when status is \"error\"")
		}
	case StatusInputRequired:
		if question(r, a.textField) == "" {
			return fieldErr("error", "a question is required when status is \"input_required\" (in error, or as output.%s)", a.textField)
		}
	}
	return nil
}

// call POSTs body with the Idempotency-Key idemKey, with retries, within
// the agent's timeout. It returns the parsed answer, or a reason for the
// task's failure.
func (a *Agent) call(ctx context.Context, body []byte, idemKey, taskID string) (*Response, string) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		code, status, b, err := a.post(ctx, body, idemKey)
		after := ""
		if attempt > 1 {
			after = fmt.Sprintf(" (after %d attempts)", attempt)
		}
		retry := attempt <= a.retries
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Sprintf("The HTTP service did not answer within %d ms (timeout_ms)%s.", a.timeout.Milliseconds(), after)
		case errors.Is(err, errTooLarge):
			return nil, fmt.Sprintf("The HTTP service answered more than %d bytes (max_response).", a.maxResponse)
		case err != nil:
			if retry && retryable(err) {
				backoff(ctx, attempt) // when the deadline passes, the next attempt reports it
				continue
			}
			return nil, fmt.Sprintf("The HTTP service could not be reached%s: %s.", after, netReason(err))
		case code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
			if retry {
				backoff(ctx, attempt)
				continue
			}
			return nil, a.statusReason(status, b, after)
		case code < 200 || code > 299:
			return nil, a.statusReason(status, b, after)
		}
		r, err := ParseResponse(b)
		if err == nil {
			err = a.check(r, taskID)
		}
		if err != nil {
			return nil, fmt.Sprintf("The HTTP service's answer is malformed: %v.", err)
		}
		return r, ""
	}
}

// statusReason explains an HTTP status other than 2xx, with the answer's
// error (a dialect answer) or the start of its body.
func (a *Agent) statusReason(status string, body []byte, after string) string {
	reason := fmt.Sprintf("The HTTP service answered HTTP %s%s", status, after)
	if r, err := ParseResponse(body); err == nil && r.Error != nil && *r.Error != "" {
		return reason + ": " + *r.Error
	}
	if s := snippet(body, 300); s != "" {
		return reason + ": " + s
	}
	return reason + "."
}

// snippet is the start of body as printable text: invalid UTF-8 and
// control characters replaced, white space runs collapsed.
func snippet(body []byte, max int) string {
	var sb strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(string(body[:min(len(body), 4*max)]), "\uFFFD") {
		if r < 0x20 || r == 0x7f || r == ' ' {
			space = sb.Len() > 0
			continue
		}
		if space {
			sb.WriteByte(' ')
			space = false
		}
		sb.WriteRune(r)
		if sb.Len() >= max {
			sb.WriteString("…")
			break
		}
	}
	return sb.String()
}

var errTooLarge = errors.New("answer too large")

// post makes one attempt. err is a transport error (or errTooLarge).
func (a *Agent) post(ctx context.Context, body []byte, idemKey string) (code int, status string, b []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header = a.header.Clone()
	req.Header.Set("Idempotency-Key", idemKey)
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err = io.ReadAll(io.LimitReader(resp.Body, a.maxResponse+1))
	if err != nil {
		return 0, "", nil, err
	}
	if int64(len(b)) > a.maxResponse {
		return 0, "", nil, errTooLarge
	}
	return resp.StatusCode, resp.Status, b, nil
}

// retryable reports whether a transport error is a connection error: the
// connection could not be made, or broke before the answer came. TLS
// certificate failures and the like are not: they do not go away.
func retryable(err error) bool {
	var cv *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	return !errors.As(err, &cv) && !errors.As(err, &rh) && !errors.As(err, &ua) &&
		!errors.As(err, &hn) && !errors.As(err, &ci)
}

// netReason describes a transport error without the backend's URL or
// address (which are not the A2A client's business, and a URL's query
// could hold a credential).
func netReason(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	var ue *url.Error
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		strings.Contains(err.Error(), "server closed idle connection"):
		return "the connection was closed before an answer came"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return "its host name could not be resolved"
	case errors.As(err, &op):
		return op.Op + ": " + op.Err.Error()
	case errors.As(err, &ue):
		return ue.Err.Error()
	}
	return err.Error()
}

// backoff waits before retry n (n ≥ 1); false when ctx ended first.
func backoff(ctx context.Context, n int) bool {
	d := backoffBase << (n - 1)
	if d > backoffMax || d <= 0 {
		d = backoffMax
	}
	d = d/2 + rand.N(d/2+1)
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}
