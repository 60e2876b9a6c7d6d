package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/jsonrpc"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// call is one request of an operation, in the shapes of both bindings: a
// JSON-RPC call (method and params) and an HTTP+JSON request (verb, path,
// query and body). A Client sends the one its interface speaks.
type call struct {
	// method is the JSON-RPC method: the 0.3 method, or the 1.0 operation
	// name (which also names HTTP+JSON calls to hooks and errors).
	method string
	// params are the JSON-RPC params and the HTTP+JSON body (nil: none).
	params []byte
	// verb and path (escaped, below the interface URL and its tenant) and
	// query are the HTTP+JSON request.
	verb, path string
	query      url.Values
	// tenant is the HTTP+JSON path prefix ("" for none).
	tenant string
	// retry: the call is safe to repeat.
	retry bool
	// void: the result means nothing; an absent one is accepted as null.
	void bool
}

// versionHeader is the header that names the protocol version of a
// request (A2A 1.0 §3.6.2); 0.3 requests go without it, as 0.3 clients do.
const versionHeader = "A2A-Version"

// extensionsHeader lists the extensions a request activates (A2A 1.0
// §3.2.6); extensionsHeader03 is its name for A2A 0.3 agents.
const (
	extensionsHeader   = "A2A-Extensions"
	extensionsHeader03 = "X-A2A-Extensions"
)

// readLimited reads r to its end, or fails with a *ProtocolError of
// method once it holds more than limit bytes (what names the limit's
// option).
func readLimited(r io.Reader, limit int64, method, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(method, what, limit)
	}
	return b, nil
}

// ErrResponseTooLarge is wrapped by the *ProtocolError of a card,
// response or stream event over its limit (Options.MaxCardBytes,
// Options.MaxResponseBytes): errors.Is(err, ErrResponseTooLarge).
var ErrResponseTooLarge = errors.New("over its size limit")

// tooLarge is the *ProtocolError of what (a card, a response, a stream
// event) over limit bytes.
func tooLarge(method, what string, limit int64) error {
	return &ProtocolError{Method: method, Reason: fmt.Sprintf("%s is over %d bytes (Options.%s)", what, limit, optionOf(what)), Err: ErrResponseTooLarge}
}

// intLimit is limit as an int, at most math.MaxInt (32-bit platforms).
func intLimit(limit int64) int {
	return int(min(limit, int64(math.MaxInt)))
}

// optionOf names the Options field that bounds what.
func optionOf(what string) string {
	if strings.Contains(what, "Agent Card") {
		return "MaxCardBytes"
	}
	return "MaxResponseBytes"
}

// newRequest builds the HTTP request of cl, with headers and credentials;
// id is its JSON-RPC id (unused over HTTP+JSON).
func (c *Client) newRequest(ctx context.Context, cl *call, id int64, stream bool) (*http.Request, error) {
	var req *http.Request
	var err error
	if c.rest {
		req, err = c.restRequest(ctx, cl)
	} else {
		req, err = c.rpcRequest(ctx, cl, id)
	}
	if err != nil {
		return nil, err
	}
	if c.v10 {
		req.Header.Set(versionHeader, a2a.Version10)
	}
	if c.extensions != "" {
		// Not a credential: sent to whatever host the interface is on.
		if c.v10 {
			req.Header.Set(extensionsHeader, c.extensions)
		} else {
			req.Header.Set(extensionsHeader03, c.extensions)
		}
	}
	// The caller's trace goes on at the agent (W3C Trace Context): a
	// ctx carrying an OpenTelemetry span sends its traceparent.
	telemetry.Inject(ctx, req.Header)
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if err := c.authorize(ctx, req, cl.method); err != nil {
		return nil, err
	}
	return req, nil
}

// rpcRequest builds a JSON-RPC POST.
func (c *Client) rpcRequest(ctx context.Context, cl *call, id int64) (*http.Request, error) {
	body := make([]byte, 0, len(cl.params)+96)
	body = append(body, `{"jsonrpc":"2.0","id":`...)
	body = strconv.AppendInt(body, id, 10)
	body = append(body, `,"method":`...)
	body = strconv.AppendQuote(body, cl.method)
	if cl.params != nil {
		body = append(body, `,"params":`...)
		body = append(body, cl.params...)
	}
	body = append(body, '}')
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.iface.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// restPrefix03 is the path prefix of every request of the A2A 0.3
// HTTP+JSON binding (A2A 0.3.0 §3.2.3: /v1/message:send, …).
const restPrefix03 = "/v1"

// restRequest builds an HTTP+JSON request: the interface URL, then
// /{tenant} when there is one (A2A 1.0 §11.3) or, over A2A 0.3, /v1 (A2A
// 0.3.0 §3.2.3), then the operation's path.
func (c *Client) restRequest(ctx context.Context, cl *call) (*http.Request, error) {
	if strings.Contains(cl.path, "//") || strings.HasSuffix(cl.path, "/") || strings.Contains(cl.path, "/:") {
		return nil, fmt.Errorf("a2a client: %s: a task or config id is empty (HTTP+JSON path %q)", cl.method, cl.path)
	}
	u := strings.TrimRight(c.iface.URL, "/")
	if !c.v10 {
		u += restPrefix03
	} else if cl.tenant != "" {
		u += "/" + pathSegment(cl.tenant)
	}
	u += cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	var body io.Reader
	if cl.params != nil {
		body = bytes.NewReader(cl.params)
	}
	req, err := http.NewRequestWithContext(ctx, cl.verb, u, body)
	if err != nil {
		return nil, err
	}
	if cl.params != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// call performs one non-streaming call and returns its raw result: the
// JSON-RPC result, or the HTTP+JSON response body ("null" when a void
// call's is empty).
func (c *Client) call(ctx context.Context, cl *call) (jsontext.Value, error) {
	var result jsontext.Value
	err := c.withRetry(ctx, cl.method, cl.retry, func() error {
		id := c.idSeq.Add(1)
		req, err := c.newRequest(ctx, cl, id, false)
		if err != nil {
			return err
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return redact(err)
		}
		defer resp.Body.Close()
		if err := c.checkResponse(resp, "application/json"); err != nil {
			return err
		}
		b, err := readLimited(resp.Body, c.opts.maxResponse(), cl.method, "the response")
		if err != nil {
			return redact(err)
		}
		if c.rest {
			result, err = restResult(cl, b)
		} else {
			result, err = c.rpcResult(cl, id, b)
		}
		return err
	})
	return result, err
}

// restResult checks an HTTP+JSON success body.
func restResult(cl *call, b []byte) (jsontext.Value, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		if !cl.void {
			return nil, &ProtocolError{Method: cl.method, Reason: "empty response body"}
		}
		return jsontext.Value("null"), nil
	}
	return b, nil
}

// rpcResult checks a JSON-RPC response to request id and returns its
// result, or the server's error.
func (c *Client) rpcResult(cl *call, id int64, b []byte) (jsontext.Value, error) {
	r, err := jsonrpc.ParseResponse(b)
	if err != nil {
		return nil, protocolError(cl.method, "invalid JSON-RPC response", err)
	}
	// An error answered with id null: the server could not read ours.
	nullErr := r.Err != nil && (len(r.ID) == 0 || string(r.ID) == "null")
	if !nullErr && !jsonrpc.SameID(r.ID, jsontext.Value(strconv.FormatInt(id, 10))) {
		return nil, &ProtocolError{Method: cl.method, Reason: fmt.Sprintf("response id %s does not match request id %d", r.ID, id)}
	}
	if r.Err != nil {
		return nil, c.rpcError(r.Err)
	}
	if r.Result == nil {
		// a2a-go answers a void method (delete) without "result".
		if !cl.void {
			return nil, &ProtocolError{Method: cl.method, Reason: "response has neither result nor error"}
		}
		r.Result = jsontext.Value("null")
	}
	return r.Result, nil
}

// rpcError is the domain error of a JSON-RPC error object: a 1.0 error's
// google.rpc.ErrorInfo details are read (A2A 1.0 §9.5).
func (c *Client) rpcError(e *a2a.Error) *a2a.Error {
	if c.v10 {
		return v10.NormalizeError(e)
	}
	return e
}

// jsonLike accepts JSON media types and text/plain, which some servers
// (a2a-go v0.3.x) send for JSON-RPC answers; the body must then still parse
// as a JSON-RPC response, or the call fails with a *ProtocolError.
func jsonLike(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/plain" || mt == ""
}

// checkResponse turns HTTP-level failures into errors: the server's A2A
// error when the body carries one (a JSON-RPC error object, or over
// HTTP+JSON a google.rpc.Status), else an *HTTPError for a non-2xx status
// or a content type that is not the one wanted (tolerating text/plain for
// JSON, see jsonLike).
func (c *Client) checkResponse(resp *http.Response, want string) error {
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	ok2xx := resp.StatusCode/100 == 2
	if ok2xx && (mt == want || (want == "application/json" && jsonLike(mt))) {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &HTTPError{StatusCode: resp.StatusCode, Status: resp.Status, ContentType: ct, Body: string(b[:min(len(b), 4096)]),
		RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	if ok2xx {
		e.Reason = fmt.Sprintf("unexpected Content-Type %q (want %s)", ct, want)
	}
	if !jsonLike(mt) || (ok2xx && want != "text/event-stream") {
		return e
	}
	if c.rest {
		return c.restError(e, b)
	}
	// A JSON-RPC error sent as JSON where a stream was expected is still
	// the server's answer; some servers answer JSON-RPC errors with 4xx/5xx:
	// keep the code.
	if r, err := jsonrpc.ParseResponse(b); err == nil && r.Err != nil {
		if ok2xx {
			return c.rpcError(r.Err)
		}
		return &statusError{HTTPError: e, rpc: c.rpcError(r.Err)}
	}
	return e
}

// restError is the error of an HTTP+JSON answer e whose body is b: the
// server's A2A error when b is an error document (A2A 1.0 §11.6: a
// google.rpc.Status; over A2A 0.3 also the JSON-RPC error members, see
// v10.ParseREST03Error), which is also e when the status says to try
// again later (429, 503), so that retries apply; else e.
func (c *Client) restError(e *HTTPError, b []byte) error {
	parse := v10.ParseRESTError
	if !c.v10 {
		parse = v10.ParseREST03Error
	}
	ae, ok := parse(e.StatusCode, b)
	switch {
	case !ok:
		return e
	case e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusServiceUnavailable:
		return &statusError{HTTPError: e, rpc: ae}
	}
	return ae
}

// statusError is an HTTP error status carrying an A2A error body: it is
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
