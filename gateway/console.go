package gateway

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/check"
	"github.com/a2abridge/a2abridge/internal/console"
	"github.com/a2abridge/a2abridge/push"
	"github.com/a2abridge/a2abridge/server"
)

// ConsoleConfig is the console block: the web console below /console/,
// a page that lists the hosted agents, shows their cards, chats with
// them over A2A 1.0 and lists, follows and cancels their tasks. It calls
// the same endpoints as any A2A client, with the same authentication.
type ConsoleConfig struct {
	// Enabled serves the console (--console); unset: true.
	Enabled *bool `yaml:"enabled"`
}

// mountConsole serves the console on host: the page below /console/ and
// its list of the hosted agents that may be named to anyone
// (Host.ListedAgents: not the sides of pairs, whose names are their
// capability, nor agents whose card requires authentication), def the
// default one.
//
// What the console has the server do, reading another server's card
// (GET /console/api/card?url=) and running a check (POST
// /console/api/check), needs what the pairs API needs (protect, from
// apiProtection); without any protection configured, only callers on a
// loopback address get them. Other servers' cards are read under the push
// notifications' SSRF rules (allow). A check runs against the gateway's
// own listener (self; tlsOn: HTTPS, whose certificate must be ownCert).
func mountConsole(host *server.Host, def string, allow []string, protect func(http.Handler) http.Handler, self net.Addr, tlsOn bool, ownCert []byte) {
	var h http.Handler = console.New(console.Options{Card: consoleCard(host, allow), Check: consoleCheck(host, self, tlsOn, ownCert), Agents: func() []console.Agent {
		names := host.ListedAgents()
		out := make([]console.Agent, 0, len(names))
		for _, n := range names {
			out = append(out, console.Agent{Name: n, Path: "/a2a/" + n, Default: n == def})
		}
		return out
	}})
	if protect == nil {
		protect = loopbackOnly
	}
	open, guarded := h, protect(h)
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == console.Prefix+"api/check" || r.URL.Path == console.Prefix+"api/card" && r.URL.Query().Has("url") {
			guarded.ServeHTTP(w, r)
			return
		}
		open.ServeHTTP(w, r)
	})
	host.Handle("/console/", h)
	host.Handle("/console", h)
}

// loopbackOnly answers 403 to a request that did not come from a
// loopback address: what the console has the server do, on a server
// without an admin block or authentication.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Unmap().IsLoopback() {
			adminFail(w, http.StatusForbidden, "", "the console's server-side calls (reading another server's card, running a check) are open to callers on this machine only, since the server has neither an admin block nor authentication")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// maxConsoleCard bounds a card the console reads from another server.
const maxConsoleCard = 1 << 20

// consoleCard reads a card for the console's GET /console/api/card: a
// hosted agent's in process (with the caller's headers, so a card that
// requires authentication is read with the caller's credentials), its
// signature verified with the keys the gateway publishes; or the card at
// an absolute URL, read through a client under the push notifications'
// SSRF rules (allow: push.allow), its signature verified with the keys
// its jku names on the card's own origin (fetched under the same rules).
func consoleCard(host *server.Host, allow []string) func(r *http.Request, agent, u string) (console.CardReport, int, error) {
	guarded := push.NewGuardedClient(push.GuardOptions{Allow: allow})
	return func(r *http.Request, agent, u string) (console.CardReport, int, error) {
		ctx := r.Context()
		if agent != "" {
			path := "/a2a/" + url.PathEscape(agent) + "/.well-known/agent-card.json"
			code, raw := inProcessGet(host, r, path)
			switch {
			case code == http.StatusUnauthorized || code == http.StatusForbidden || code == http.StatusNotFound:
				return console.CardReport{}, code, fmt.Errorf("the card of agent %q: HTTP %d", agent, code)
			case code != http.StatusOK || !json.Valid(raw):
				return console.CardReport{}, http.StatusBadGateway, fmt.Errorf("the card of agent %q: HTTP %d, not a card", agent, code)
			}
			rep := console.CardReport{URL: host.BaseURL(r) + path, Card: raw}
			var opts client.CardVerifierOptions
			if code, jwks := inProcessGet(host, r, "/.well-known/jwks.json"); code == http.StatusOK {
				opts.JWKS = jwks
			}
			rep.Signature = verifyConsoleCard(ctx, rep.URL, raw, opts, len(opts.JWKS) > 0)
			rep.Signature.Detail = strings.Replace(rep.Signature.Detail, "a key from trusted keys", "the gateway's key (/.well-known/jwks.json)", 1)
			return rep, http.StatusOK, nil
		}
		cardURL, err := consoleCardURL(u)
		if err != nil {
			return console.CardReport{}, http.StatusBadRequest, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
		if err != nil {
			return console.CardReport{}, http.StatusBadRequest, err
		}
		req.Header.Set("A2A-Version", a2a.Version10)
		req.Header.Set("Accept", "application/json")
		resp, err := guarded.Do(req)
		if err != nil {
			return console.CardReport{}, http.StatusBadGateway, fmt.Errorf("reading %s: %s", cardURL, fetchFailure(err))
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(resp.Body, maxConsoleCard+1))
		switch {
		case err != nil:
			return console.CardReport{}, http.StatusBadGateway, fmt.Errorf("reading %s: %s", cardURL, fetchFailure(err))
		case resp.StatusCode != http.StatusOK:
			return console.CardReport{}, http.StatusBadGateway, fmt.Errorf("%s answered HTTP %d", cardURL, resp.StatusCode)
		case len(raw) > maxConsoleCard:
			return console.CardReport{}, http.StatusBadGateway, fmt.Errorf("the card at %s is over %d bytes", cardURL, maxConsoleCard)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return console.CardReport{}, http.StatusBadGateway, fmt.Errorf("the card at %s is not a JSON object: %w", cardURL, err)
		}
		rep := console.CardReport{URL: cardURL, Card: raw}
		rep.Signature = verifyConsoleCard(ctx, cardURL, raw, client.CardVerifierOptions{HTTPClient: guarded}, true)
		return rep, http.StatusOK, nil
	}
}

// fetchFailure says why a fetch of another server's card failed, without
// the addresses, resolvers or ports the error names: the console's caller
// must not learn the server's network from it.
func fetchFailure(err error) string {
	var dnsErr *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(err, push.ErrForbiddenAddress):
		return "its address is not allowed: not a public address (push.allow lists the others the server may read)"
	case errors.As(err, &dnsErr):
		return "its host name does not resolve"
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "no answer in time"
	}
	return "the connection failed"
}

// consoleCardURL is the card URL of u: u itself when its path ends in
// .json, else the well-known card path below it (A2A 1.0 §8.2).
func consoleCardURL(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil {
		return "", fmt.Errorf("url %q: want an absolute http(s) URL without userinfo", u)
	}
	if !strings.HasSuffix(p.Path, ".json") {
		p.Path = strings.TrimSuffix(p.Path, "/") + "/.well-known/agent-card.json"
	}
	p.Fragment = ""
	return p.String(), nil
}

// verifyConsoleCard verifies the signatures of raw (read at cardURL)
// with a CardVerifier of opts; canVerify false: there is no key to try.
func verifyConsoleCard(ctx context.Context, cardURL string, raw []byte, opts client.CardVerifierOptions, canVerify bool) console.Signature {
	var c struct {
		Signatures []json.RawMessage `json:"signatures"`
	}
	if json.Unmarshal(raw, &c) != nil || len(c.Signatures) == 0 {
		return console.Signature{Detail: "the card is not signed"}
	}
	sig := console.Signature{Signed: true}
	if !canVerify {
		sig.Detail = "no key to verify it with: the gateway publishes no card signing key"
		return sig
	}
	v, err := client.NewCardVerifier(opts)
	if err != nil {
		sig.Detail = err.Error()
		return sig
	}
	got, err := v.Verify(ctx, cardURL, raw)
	if err != nil {
		sig.Detail = err.Error()
		return sig
	}
	sig.Verified, sig.KeyID, sig.Detail = true, got.KeyID, got.Algorithm+" with a key from "+got.KeySource
	return sig
}

// inProcessGet serves GET path on host as r's caller would send it (r's
// headers, host and address; A2A-Version 1.0), without the network, and
// returns the status and up to maxConsoleCard bytes of the body.
func inProcessGet(host *server.Host, r *http.Request, path string) (int, []byte) {
	req := r.Clone(r.Context())
	req.Method = http.MethodGet
	req.URL = &url.URL{Path: path}
	req.RequestURI = path
	req.Body = http.NoBody
	req.ContentLength = 0
	req.TransferEncoding = nil
	req.Header.Set("A2A-Version", a2a.Version10)
	req.Header.Set("Accept", "application/json")
	for _, k := range []string{"Accept-Encoding", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "Range",
		"Content-Type", "Content-Length", "Content-Encoding", "Upgrade", "Connection", "Transfer-Encoding"} {
		req.Header.Del(k)
	}
	w := &bufferWriter{header: http.Header{}}
	host.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.over {
		return http.StatusBadGateway, nil
	}
	return w.status, w.body.Bytes()
}

// bufferWriter is an http.ResponseWriter that keeps what is written, up
// to maxConsoleCard bytes (over: more was written).
type bufferWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
	over   bool
}

func (b *bufferWriter) Header() http.Header { return b.header }

func (b *bufferWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferWriter) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	room := maxConsoleCard - b.body.Len()
	if len(p) > room {
		b.over = true
		p = p[:max(room, 0)]
	}
	b.body.Write(p)
	return len(p), nil
}

// consoleCheckTimeout bounds a check run from the console.
const consoleCheckTimeout = 5 * time.Minute

// consoleCheck runs `a2abridge check` (internal/check) for the console
// against the hosted agent named agent at the gateway's own listener
// (self, dialed at its loopback address when it listens on all; tlsOn:
// over HTTPS, the certificate the one the gateway serves, ownCert), with
// the caller's Authorization header, sent to that address and to the
// card's host (the base URL the caller reached) only; no proxy is used.
// One check runs at a time (429 otherwise: a check sends a few hundred
// requests), for at most consoleCheckTimeout.
func consoleCheck(host *server.Host, self net.Addr, tlsOn bool, ownCert []byte) func(r *http.Request, agent, text, long string) (json.RawMessage, int, error) {
	busy := make(chan struct{}, 1)
	at := self.String()
	if ta, ok := self.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		lo := "127.0.0.1"
		if ta.IP.To4() == nil {
			lo = "::1"
		}
		at = net.JoinHostPort(lo, strconv.Itoa(ta.Port))
	}
	return func(r *http.Request, agent, text, long string) (json.RawMessage, int, error) {
		if !slices.Contains(host.Agents(), agent) {
			return nil, http.StatusNotFound, fmt.Errorf("no agent named %q is hosted here", agent)
		}
		select {
		case busy <- struct{}{}:
			defer func() { <-busy }()
		default:
			return nil, http.StatusTooManyRequests, errors.New("a check is running already: the console runs one at a time")
		}
		scheme := "http"
		tr := &http.Transport{Proxy: nil, ForceAttemptHTTP2: true}
		if tlsOn {
			scheme = "https"
			tr.TLSClientConfig = &tls.Config{
				// The listener is this process's: its certificate is the one
				// expected, whatever names it holds.
				InsecureSkipVerify: true, //nolint:gosec // verified by VerifyConnection
				VerifyConnection: func(cs tls.ConnectionState) error {
					if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, ownCert) {
						return errors.New("not the gateway's own certificate")
					}
					return nil
				},
			}
		}
		defer tr.CloseIdleConnections()
		o := check.Options{URL: scheme + "://" + at + "/a2a/" + url.PathEscape(agent), Text: text, LongText: long,
			Header: http.Header{}, HTTPClient: &http.Client{Transport: tr}}
		if u, err := url.Parse(host.BaseURL(r)); err == nil && u.Host != "" {
			o.CredentialHosts = []string{u.Host}
		}
		if v := r.Header.Get("Authorization"); v != "" {
			o.Header.Set("Authorization", v)
		}
		ctx, cancel := context.WithTimeout(r.Context(), consoleCheckTimeout)
		defer cancel()
		rep, err := check.Run(ctx, o)
		if err != nil {
			return nil, http.StatusBadGateway, err
		}
		var b bytes.Buffer
		if err := rep.WriteJSON(&b); err != nil {
			return nil, http.StatusInternalServerError, err
		}
		return b.Bytes(), http.StatusOK, nil
	}
}
