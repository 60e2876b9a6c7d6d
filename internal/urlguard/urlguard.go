// Package urlguard confines an HTTP client to the URLs a check allows:
// every request its transport is asked to send (redirects included, as
// net/http sends each through the transport) is checked first.
package urlguard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// ErrRefused is wrapped by the error of a request the check refused.
var ErrRefused = errors.New("request refused")

// Transport returns rt with check called on every request's URL before
// it is sent; a request check refuses is not sent (its body is closed)
// and fails with an error wrapping ErrRefused and check's error (which
// should name the URL without its query: http.Client's error names the
// whole URL anyway). A nil check returns rt as is.
func Transport(rt http.RoundTripper, check func(*url.URL) error) http.RoundTripper {
	if check == nil {
		return rt
	}
	return &transport{rt: rt, check: check}
}

type transport struct {
	rt    http.RoundTripper
	check func(*url.URL) error
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.check(req.URL); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return t.rt.RoundTrip(req)
}

// CloseIdleConnections closes the wrapped transport's idle connections
// (http.Client.CloseIdleConnections finds it through this method).
func (t *transport) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
