package testutil

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// NewRequest builds a request for method and url with body (none when
// empty) and the header pairs hdr (name, value, name, value, …). A pair
// whose name comes first in hdr replaces that header; a later pair of the
// same name adds a value, so a test can send a header twice.
func NewRequest(t testing.TB, ctx context.Context, method, url, body string, hdr ...string) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	SetHeaders(req.Header, hdr...)
	return req
}

// SetHeaders applies the header pairs hdr to h as NewRequest does: the
// first pair of a name replaces that header, later pairs add values.
func SetHeaders(h http.Header, hdr ...string) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(hdr); i += 2 {
		k := http.CanonicalHeaderKey(hdr[i])
		if seen[k] {
			h.Add(k, hdr[i+1])
			continue
		}
		seen[k] = true
		h.Set(k, hdr[i+1])
	}
}

// CallTimeout bounds an exchange of Do (and of Send, Post, Get and RPC,
// which use it): a server that never answers fails the test instead of
// hanging it until go test's own timeout.
const CallTimeout = 2 * time.Minute

// StreamTimeout bounds a stream of Open and OpenEvents, from the request
// to the end of its body.
const StreamTimeout = 5 * time.Minute

var (
	callClient   = &http.Client{Timeout: CallTimeout}
	streamClient = &http.Client{Timeout: StreamTimeout}
)

// Do sends req (with a client whose exchanges end after CallTimeout) and
// returns the response, its body read whole and closed. A transport
// error, a timeout or a failed read fails t.
func Do(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := callClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read the body: %v", req.Method, req.URL, err)
	}
	return resp, b
}

// Send builds a request as NewRequest does, with Content-Type
// application/json unless hdr names one, and sends it with Do.
func Send(t testing.TB, method, url, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req := NewRequest(t, context.Background(), method, url, body, hdr...)
	if !names(hdr, "Content-Type") {
		req.Header.Set("Content-Type", "application/json")
	}
	return Do(t, req)
}

// Post posts the JSON document body to url with the header pairs hdr and
// returns the response and its body.
func Post(t testing.TB, url, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return Send(t, http.MethodPost, url, body, hdr...)
}

// Get sends a GET to url with the header pairs hdr and returns the
// response and its body.
func Get(t testing.TB, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return Do(t, NewRequest(t, context.Background(), http.MethodGet, url, "", hdr...))
}

// RPCBody is the JSON-RPC 2.0 request document with id 1 that calls
// method with params (a JSON value).
func RPCBody(method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params)
}

// RPC posts the JSON-RPC request RPCBody(method, params) to url with the
// header pairs hdr and returns the response and its body.
func RPC(t testing.TB, url, method, params string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return Post(t, url, RPCBody(method, params), hdr...)
}

// WantStatus fails t unless resp has the status code want; body, the
// response's body, goes into the message.
func WantStatus(t testing.TB, resp *http.Response, body []byte, want int) {
	t.Helper()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", resp.Request.Method, resp.Request.URL, resp.StatusCode, want, body)
	}
}

// Open sends req (with a client whose exchanges end after StreamTimeout)
// and returns the response with its body unread, for a stream the test
// reads as it comes. The body is closed when t ends (closing it earlier
// is fine). A transport error fails t.
func Open(t testing.TB, req *http.Request) *http.Response {
	t.Helper()
	resp, err := streamClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// names reports whether the header pairs hdr name the header name.
func names(hdr []string, name string) bool {
	for i := 0; i+1 < len(hdr); i += 2 {
		if http.CanonicalHeaderKey(hdr[i]) == http.CanonicalHeaderKey(name) {
			return true
		}
	}
	return false
}

// Serve serves h on a loopback httptest server until t ends. Then it
// cuts the open connections (a stream still open does not hold the test
// up), closes the server and calls each closer, in order, with a context
// that ends after 5 seconds: the engine's Close, a store's.
func Serve(t testing.TB, h http.Handler, closers ...func(context.Context) error) *httptest.Server {
	t.Helper()
	return serve(t, h, true, closers)
}

// ServeDrained is Serve for a test that leaves requests in flight on
// purpose: when t ends the server waits for them to be answered before
// it closes.
func ServeDrained(t testing.TB, h http.Handler, closers ...func(context.Context) error) *httptest.Server {
	t.Helper()
	return serve(t, h, false, closers)
}

func serve(t testing.TB, h http.Handler, cut bool, closers []func(context.Context) error) *httptest.Server {
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		if cut {
			ts.CloseClientConnections()
		}
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, c := range closers {
			_ = c(ctx)
		}
	})
	return ts
}

// OpenEvents sends req as Open does and requires an event stream: an
// answer of another content type fails t with its status and body.
func OpenEvents(t testing.TB, req *http.Request) *http.Response {
	t.Helper()
	resp := Open(t, req)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: content type %q (%d): %s", req.Method, req.URL, ct, resp.StatusCode, b)
	}
	return resp
}

// CloseAtEnd calls closer when t ends, with a context that ends after 5
// seconds: an engine's or a store's Close.
func CloseAtEnd(t testing.TB, closer func(context.Context) error) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = closer(ctx)
	})
}

// Forward sends r (its method, header and body) to url and writes the
// answer to w: its Content-Type, its status and its body, flushed as it
// comes, so that a stream passes through as the upstream writes it. A
// failed exchange answers 502. For a test server that stands in front of
// another one to watch or alter what goes through.
func Forward(w http.ResponseWriter, r *http.Request, url string) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, url, r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}
