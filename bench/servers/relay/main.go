// Command relay is the reference of the benchmark's bridges: an HTTP
// relay that does nothing but forward each request to one backend, over
// net/http's client with pooled keep-alive connections, and copy the
// answer back as it arrives. runbench puts it in front of `a2abridge
// serve --memory` (the target "relay") to show what one more HTTP hop
// costs on the machine of the run, in throughput and in latency at one
// client: any bridge pays it before it does any work of its own, so the
// bridges' goals (against the direct call) are read beside it.
//
// A request to PATH is sent to the backend's base URL + PATH with the
// same method, headers and body; the answer's status, headers and body
// come back, an SSE body flushed chunk by chunk. A backend that cannot be
// reached is answered 502.
//
// Usage: relay --backend http://HOST:PORT [--addr 127.0.0.1:0]. It prints
// `listening on http://ADDR` and serves until SIGINT/SIGTERM.
package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2abridge/a2abridge/bench/servers/internal/peer"
)

// hopByHop are the headers a relay does not forward (RFC 9110 §7.6.1).
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

type relay struct {
	backend string // base URL, without a trailing slash
	client  *http.Client
}

// newRelay forwards to backend, keeping up to 256 idle connections (as the
// bridges do).
func newRelay(backend string) *relay {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
	return &relay{backend: strings.TrimSuffix(backend, "/"), client: &http.Client{Transport: tr}}
}

func (rl *relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The body is read whole first: once the answer's headers are flushed,
	// net/http may close the body of an HTTP/1.1 request, and the client
	// could still be sending it to the backend.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, rl.backend+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out.Header = r.Header.Clone()
	for _, h := range hopByHop {
		out.Header.Del(h)
	}
	resp, err := rl.client.Do(out)
	if err != nil {
		http.Error(w, "relay: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	for _, h := range hopByHop {
		w.Header().Del(h)
	}
	w.WriteHeader(resp.StatusCode)
	stream := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if stream {
				_ = rc.Flush()
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			panic(http.ErrAbortHandler) // cut the answer: the client sees it broken
		}
	}
}

func main() {
	backend := flag.String("backend", "", "the base URL requests are forwarded to (required)")
	ln, _ := peer.Listen("relay")
	u, err := url.Parse(*backend)
	if err == nil && (u.Scheme != "http" && u.Scheme != "https" || u.Host == "") {
		err = errors.New("--backend: want an http or https URL")
	}
	peer.Check("relay", err)
	peer.Serve("relay", ln, &http.Server{Handler: newRelay(*backend)})
}
