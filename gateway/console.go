package gateway

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
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
// Reading another server's card (GET /console/api/card?url=) makes the
// gateway fetch a URL: it needs what the pairs API needs (protect, from
// apiProtection), and obeys the push notifications' SSRF rules (allow).
//
// A check from the console runs against the agent at the gateway's own
// listener (self, HOST:PORT; tlsOn: HTTPS), one at a time.
func mountConsole(host *server.Host, def string, allow []string, protect func(http.Handler) http.Handler, self string, tlsOn bool) {
	var h http.Handler = console.New(console.Options{Card: consoleCard(host, allow), Check: consoleCheck(host, self, tlsOn), Agents: func() []console.Agent {
		names := host.ListedAgents()
		out := make([]console.Agent, 0, len(names))
		for _, n := range names {
			out = append(out, console.Agent{Name: n, Path: "/a2a/" + n, Default: n == def})
		}
		return out
	}})
	if protect != nil {
		open, guarded := h, protect(h)
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == console.Prefix+"api/card" && r.URL.Query().Has("url") {
				guarded.ServeHTTP(w, r)
				return
			}
			open.ServeHTTP(w, r)
		})
	}
	host.Handle("/console/", h)
	host.Handle("/console", h)
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
			if code != http.StatusOK {
				return console.CardReport{}, code, fmt.Errorf("the card of agent %q: HTTP %d", agent, code)
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
			return console.CardReport{}, http.StatusBadGateway, fmt.Errorf("reading %s: %w", cardURL, err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(resp.Body, maxConsoleCard+1))
		switch {
		case err != nil:
			return console.CardReport{}, http.StatusBadGateway, fmt.Errorf("reading %s: %w", cardURL, err)
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
	req.Header.Set("A2A-Version", a2a.Version10)
	req.Header.Set("Accept", "application/json")
	req.Header.Del("Accept-Encoding")
	req.Header.Del("If-None-Match")
	req.Header.Del("If-Modified-Since")
	w := &bufferWriter{header: http.Header{}}
	host.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.status, w.body.Bytes()
}

// bufferWriter is an http.ResponseWriter that keeps what is written, up
// to maxConsoleCard bytes.
type bufferWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferWriter) Header() http.Header { return b.header }

func (b *bufferWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferWriter) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	if room := maxConsoleCard - b.body.Len(); room > 0 {
		b.body.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// consoleCheckTimeout bounds a check run from the console.
const consoleCheckTimeout = 5 * time.Minute

// consoleCheck runs `a2abridge check` (internal/check) for the console
// against the hosted agent named agent at the gateway's own listener
// (self; tlsOn: over HTTPS, the certificate not checked since the
// listener is this process's), with the caller's Authorization header.
// One check runs at a time (429 otherwise: a check sends a few hundred
// requests), for at most consoleCheckTimeout.
func consoleCheck(host *server.Host, self string, tlsOn bool) func(r *http.Request, agent, text, long string) (json.RawMessage, int, error) {
	busy := make(chan struct{}, 1)
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
		o := check.Options{URL: "http://" + self + "/a2a/" + url.PathEscape(agent), Text: text, LongText: long, Header: http.Header{}}
		if tlsOn {
			o.URL = "https://" + self + "/a2a/" + url.PathEscape(agent)
			o.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // our own listener
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
