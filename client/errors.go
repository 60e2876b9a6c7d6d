package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
)

// HTTPError is an answer that is not a usable A2A response at the HTTP
// level: a non-2xx status (401, 403, 404, 5xx…) or a wrong Content-Type.
// Body holds at most the first 4 KiB of the response body.
type HTTPError struct {
	StatusCode  int
	Status      string
	ContentType string
	Body        string
	// RetryAfter is the server's Retry-After delay (0 when absent).
	RetryAfter time.Duration
	// Reason says what was wrong when the status was 2xx (for example an
	// unexpected content type).
	Reason string
}

func (e *HTTPError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("a2a client: HTTP %d: %s", e.StatusCode, e.Reason)
	}
	return fmt.Sprintf("a2a client: HTTP %s", e.Status)
}

// Temporary reports whether repeating the request may succeed (429 and 5xx).
func (e *HTTPError) Temporary() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// ProtocolError is a response that breaks JSON-RPC or A2A: unparseable,
// a response to another request id, or a result of the wrong shape.
type ProtocolError struct {
	Method string
	Reason string
	Err    error
}

func (e *ProtocolError) Error() string {
	if e.Err != nil && e.Err != ErrResponseTooLarge { // (whose reason says it all)
		return fmt.Sprintf("a2a client: %s: %s: %v", e.Method, e.Reason, e.Err)
	}
	return fmt.Sprintf("a2a client: %s: %s", e.Method, e.Reason)
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// protocolError builds a *ProtocolError whose cause never reads as the
// server's JSON-RPC error: a decoder's *a2a.Error becomes plain text, with
// the JSON Pointer of the offending member when it names one ("… at
// /task/artifacts/0/parts/1").
func protocolError(method, reason string, err error) *ProtocolError {
	var ae *a2a.Error
	if errors.As(err, &ae) {
		msg := ae.Message
		if d, ok := ae.Data.(map[string]any); ok {
			if field, ok := d["field"].(string); ok && field != "" {
				msg += " at " + field
			}
		}
		err = errors.New(msg)
	}
	return &ProtocolError{Method: method, Reason: reason, Err: err}
}

// redact removes the query (which may hold an API key) from URLs quoted in
// transport errors.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.RawQuery != "" {
			u.RawQuery = "redacted"
			ue.URL = u.String()
		}
	}
	return err
}
