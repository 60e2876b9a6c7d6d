package client_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/cardsig"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	wirecard "github.com/a2abridge/a2abridge/internal/wire/card"
	"github.com/a2abridge/a2abridge/server"
)

// signedUnionCard is a union card as a2abridge serves it (scope arrays
// bare), signed by key as kid "k1" with jku.
func signedUnionCard(t *testing.T, key *ecdsa.PrivateKey, jku string) []byte {
	t.Helper()
	c := a2a.AgentCard{Name: "n", Description: "d", Version: "1",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "https://a.example/rpc", Transport: a2a.TransportJSONRPC, ProtocolVersion: "1.0"},
			{URL: "https://a.example/rpc", Transport: a2a.TransportJSONRPC, ProtocolVersion: "0.3"},
		},
		Capabilities:    a2a.AgentCapabilities{Streaming: true},
		SecuritySchemes: map[string]a2a.SecurityScheme{"key": a2a.APIKeySecurityScheme{In: "header", Name: "X-Key"}},
		Security:        []map[string][]string{{"key": {"read"}}},
	}
	b, err := wirecard.MarshalUnion(&c, wirecard.Options{ScopeArrays: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cardsig.NewSigner(key, "ES256", "k1")
	if err != nil {
		t.Fatal(err)
	}
	if b, err = s.Sign(b, jku); err != nil {
		t.Fatal(err)
	}
	return b
}

// tamper decodes card, lets edit change it, and encodes it again.
func tamper(t *testing.T, card []byte, edit func(doc map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(card, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func trusting(t *testing.T, key *ecdsa.PrivateKey) *client.CardVerifier {
	return verifier(t, client.CardVerifierOptions{Keys: map[string]crypto.PublicKey{"k1": key.Public()}})
}

// TestVerifiedCardSecuritySchemesAreSigned: security schemes changed in
// transit through their unsigned A2A 0.3 members neither verify nor
// reach the card the client uses.
func TestVerifiedCardSecuritySchemesAreSigned(t *testing.T) {
	t.Parallel()
	key := ecKey(t)
	card := signedUnionCard(t, key, "")
	v := trusting(t, key)
	ctx := context.Background()
	schemes := func(doc map[string]any) map[string]any { return doc["securitySchemes"].(map[string]any) }

	// A scheme with only the flat 0.3 members (no 1.0 wrapper) is dropped
	// by canonicalization: the card is refused, not read from them.
	added := tamper(t, card, func(doc map[string]any) {
		schemes(doc)["evil"] = map[string]any{"type": "apiKey", "in": "query", "name": "k"}
	})
	if _, _, err := v.VerifyCard(ctx, "https://a.example/card.json", added); !errors.Is(err, client.ErrCardSignatureMalformed) {
		t.Errorf("wrapper-less scheme added: err = %v, want ErrCardSignatureMalformed", err)
	}
	replaced := tamper(t, card, func(doc map[string]any) {
		schemes(doc)["key"] = map[string]any{"type": "apiKey", "in": "query", "name": "X-Key"}
	})
	// The signed scheme replaced by 0.3 members: the signed content changed.
	if _, _, err := v.VerifyCard(ctx, "https://a.example/card.json", replaced); !errors.Is(err, client.ErrCardSignatureInvalid) {
		t.Errorf("wrapper replaced by 0.3 members: err = %v, want ErrCardSignatureInvalid", err)
	}

	// The flat 0.3 "in" rewritten beside the signed wrapper: the card
	// verifies, and the scheme used is the signed one.
	moved := tamper(t, card, func(doc map[string]any) {
		schemes(doc)["key"].(map[string]any)["in"] = "query"
	})
	got, _, err := v.VerifyCard(ctx, "https://a.example/card.json", moved)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := got.SecuritySchemes["key"].(a2a.APIKeySecurityScheme); !ok || s.In != "header" || s.Name != "X-Key" {
		t.Errorf("scheme = %#v, want the signed apiKey in header X-Key", got.SecuritySchemes["key"])
	}
	// Without the verifier, the union decoder would have used "query" had
	// the wrapper been absent; check the request the client builds.
	req := httptest.NewRequest(http.MethodPost, "https://a.example/rpc", nil)
	client.ApplyCredentials(req, &got, "", "secret")
	if req.URL.RawQuery != "" || req.Header.Get("X-Key") != "secret" {
		t.Errorf("API key placed in query %q, header %q", req.URL.RawQuery, req.Header.Get("X-Key"))
	}
}

// TestVerifiedCardIgnoresUnsignedMembers: the A2A 0.3 members and bare
// scope arrays, which the signature does not cover, are not in the card
// the client uses, whatever a man in the middle puts there.
func TestVerifiedCardIgnoresUnsignedMembers(t *testing.T) {
	t.Parallel()
	key := ecKey(t)
	card := tamper(t, signedUnionCard(t, key, ""), func(doc map[string]any) {
		doc["preferredTransport"] = "HTTP+JSON"
		doc["protocolVersion"] = "9.9"
		doc["supportsAuthenticatedExtendedCard"] = true
		doc["capabilities"].(map[string]any)["stateTransitionHistory"] = true
		doc["securityRequirements"] = []any{map[string]any{"schemes": map[string]any{"key": []any{"admin"}}}}
	})
	got, _, err := trusting(t, key).VerifyCard(context.Background(), "https://a.example/card.json", card)
	if err != nil {
		t.Fatal(err)
	}
	if got.PreferredTransport != "" || got.ProtocolVersion != "" || got.URL != "" || len(got.AdditionalInterfaces) != 0 {
		t.Errorf("0.3 members used: %q %q %q %v", got.PreferredTransport, got.ProtocolVersion, got.URL, got.AdditionalInterfaces)
	}
	if got.SupportsAuthenticatedExtendedCard || got.Capabilities.ExtendedAgentCard || got.Capabilities.StateTransitionHistory {
		t.Errorf("unsigned capabilities used: %+v", got.Capabilities)
	}
	if len(got.Security) != 0 {
		t.Errorf("Security = %v, want none (bare scope arrays are not signed)", got.Security)
	}
	if len(got.SupportedInterfaces) != 2 || got.SupportedInterfaces[0].URL != "https://a.example/rpc" || !got.Capabilities.Streaming {
		t.Errorf("signed content lost: %+v", got)
	}
	// A 0.3 url added to a card that had none is refused.
	added := tamper(t, signedUnionCard(t, key, ""), func(doc map[string]any) {
		doc["url"] = "https://evil.example/rpc"
	})
	if _, _, err := trusting(t, key).VerifyCard(context.Background(), "https://a.example/card.json", added); !errors.Is(err, client.ErrCardEndpointUncovered) {
		t.Errorf("url added: err = %v, want ErrCardEndpointUncovered", err)
	}
}

// secureHost hosts the echo agent as name behind bearer "alice-token",
// with the extended card "extended", and signs its cards; eng is its
// engine, for the caller to close.
func secureHost(t *testing.T, name string) (*server.Host, *server.Engine) {
	t.Helper()
	eng := servertest.Engine(t, server.EngineOptions{})
	cs, err := server.NewCardSigner(server.CardSignerOptions{Key: ecKey(t), Algorithm: "ES256", KeyID: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"alice": "alice-token"})
	if err != nil {
		t.Fatal(err)
	}
	host := server.NewHost(server.HostOptions{Transport: server.TransportOptions{Logger: testutil.Logger(), CardSigner: cs}})
	ext := agents.Echo{}.Card()
	ext.Description = "extended"
	host.Add(server.NewHandler(eng, name, agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{Auth: auth.Set{bearer}, ExtendedCard: &ext}))
	return host, eng
}

// secureAgent serves "secure" (secureHost) behind a proxy that lets
// tamper change responses.
func secureAgent(t *testing.T, tamper func(*http.Request, []byte) []byte) *httptest.Server {
	t.Helper()
	host, eng := secureHost(t, "secure")
	origin := httptest.NewServer(host)
	target, _ := url.Parse(origin.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		b, err := readBody(resp)
		if err != nil {
			return err
		}
		b = tamper(resp.Request, b)
		resp.Body, resp.ContentLength = newBody(b), int64(len(b))
		resp.Header.Del("Content-Length")
		return nil
	}
	ts := httptest.NewServer(proxy)
	t.Cleanup(func() {
		ts.Close()
		origin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = eng.Close(ctx)
	})
	return ts
}

func readBody(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func newBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

// TestGetExtendedAgentCardVerifies: the extended card is verified too; a
// tampered one is refused.
func TestGetExtendedAgentCardVerifies(t *testing.T) {
	t.Parallel()
	var change atomic.Bool
	ts := secureAgent(t, func(r *http.Request, b []byte) []byte {
		if change.Load() && !strings.HasSuffix(r.URL.Path, ".json") {
			return []byte(strings.Replace(string(b), `"extended"`, `"EXTENDED"`, 1))
		}
		return b
	})
	for _, o := range []client.Options{{Binding: a2a.TransportJSONRPC}, {Binding: a2a.TransportHTTPJSON}, {Protocol: a2a.Version03}} {
		binding := o.Protocol + o.Binding
		change.Store(false)
		o.Token, o.CardVerifier, o.MaxRetries = "alice-token", verifier(t, client.CardVerifierOptions{}), -1
		c, err := client.Dial(context.Background(), ts.URL+"/a2a/secure", o)
		if err != nil {
			t.Fatal(err)
		}
		ext, err := c.GetExtendedAgentCard(context.Background())
		if err != nil || ext.Description != "extended" {
			t.Fatalf("%s: %v, %+v", binding, err, ext)
		}
		change.Store(true)
		var se *client.CardSignatureError
		if _, err := c.GetExtendedAgentCard(context.Background()); !errors.As(err, &se) || !errors.Is(err, client.ErrCardSignatureInvalid) {
			t.Errorf("%s tampered: err = %v, want a *CardSignatureError with ErrCardSignatureInvalid", binding, err)
		}
	}
}

// jwksServer serves a JWK Set of the keys in set (by kid) with
// Cache-Control cc, counting fetches.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	keys    map[string]crypto.PublicKey
	cc      string
	fetches atomic.Int32
}

func newJWKSServer(t *testing.T, cc string, keys map[string]crypto.PublicKey) *jwksServer {
	t.Helper()
	s := &jwksServer{keys: keys, cc: cc}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		var jwks []string
		for kid, k := range s.keys {
			j, err := cardsig.PublicJWK(k, kid, "ES256")
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			jwks = append(jwks, string(j))
		}
		if s.cc != "" {
			w.Header().Set("Cache-Control", s.cc)
		}
		_, _ = w.Write([]byte(`{"keys":[` + strings.Join(jwks, ",") + `]}`))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) remove(kid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, kid)
}

// TestKeySetExpires: a key removed from a JWKS stops verifying once the
// fetched set is older than its max age (10 minutes by default,
// Cache-Control max-age otherwise); an unknown kid refetches at most
// once a minute.
func TestKeySetExpires(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cc           string
		fresh, stale time.Duration
	}{
		{"", 9 * time.Minute, 10 * time.Minute},
		{"public, max-age=120", 90 * time.Second, 2 * time.Minute},
		{"max-age=0", 30 * time.Second, time.Minute},         // at least a minute
		{"max-age=86400", 9 * time.Minute, 10 * time.Minute}, // at most ten
	} {
		key := ecKey(t)
		js := newJWKSServer(t, tc.cc, map[string]crypto.PublicKey{"k1": key.Public()})
		card := signedUnionCard(t, key, "")
		v := verifier(t, client.CardVerifierOptions{JWKSURL: js.URL})
		start := time.Unix(1_800_000_000, 0)
		now := start
		client.SetCardVerifierClock(v, func() time.Time { return now })
		verify := func() error {
			_, err := v.Verify(context.Background(), "https://a.example/card.json", card)
			return err
		}
		if err := verify(); err != nil {
			t.Fatalf("%q: %v", tc.cc, err)
		}
		js.remove("k1")
		now = start.Add(tc.fresh)
		if err := verify(); err != nil || js.fetches.Load() != 1 {
			t.Errorf("%q: within max age: %v, %d fetches", tc.cc, err, js.fetches.Load())
		}
		now = start.Add(tc.stale)
		if err := verify(); !errors.Is(err, client.ErrCardKeyUnknown) || js.fetches.Load() != 2 {
			t.Errorf("%q: after max age: err = %v, %d fetches; want ErrCardKeyUnknown after a refetch", tc.cc, err, js.fetches.Load())
		}
		// Unknown kid: no refetch within a minute, one after.
		now = now.Add(59 * time.Second)
		_ = verify()
		if n := js.fetches.Load(); n != 2 {
			t.Errorf("%q: %d fetches, want no refetch within a minute", tc.cc, n)
		}
		now = now.Add(time.Second)
		_ = verify()
		if n := js.fetches.Load(); n != 3 {
			t.Errorf("%q: %d fetches, want a refetch after a minute", tc.cc, n)
		}
	}
}

// TestJKUOrigin: with the default trust (the card's own host), a jku must
// have the card URL's scheme, host and port, default ports filled in.
func TestJKUOrigin(t *testing.T) {
	t.Parallel()
	key := ecKey(t)
	v := verifier(t, client.CardVerifierOptions{HTTPClient: &http.Client{Transport: failingTransport{}}})
	for _, tc := range []struct {
		cardURL, jku string
		allowed      bool
	}{
		{"https://a.example/card.json", "https://a.example:8443/jwks.json", false},
		{"https://a.example:8443/card.json", "https://a.example/jwks.json", false},
		{"http://localhost/card.json", "https://localhost/jwks.json", false},
		{"https://b.example/card.json", "https://a.example/jwks.json", false},
		{"https://a.example/card.json", "https://A.example:443/jwks.json", true},
		{"https://a.example:443/card.json", "https://a.example/jwks.json", true},
	} {
		_, err := v.Verify(context.Background(), tc.cardURL, signedUnionCard(t, key, tc.jku))
		if got := !errors.Is(err, client.ErrCardJKUNotAllowed); got != tc.allowed || err == nil {
			t.Errorf("card %s, jku %s: err = %v, want allowed %v (then a failed fetch)", tc.cardURL, tc.jku, err, tc.allowed)
		}
	}
}

// failingTransport fails every request, counting them.
type failingTransport struct{ n *atomic.Int32 }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	if f.n != nil {
		f.n.Add(1)
	}
	return nil, errors.New("no network in this test")
}

// TestCardSignatureNotRetried: a card whose key fetch fails is fetched
// once, not retried like a network error.
func TestCardSignatureNotRetried(t *testing.T) {
	t.Parallel()
	key := ecKey(t)
	var cardGets atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != client.WellKnownCardPath {
			http.NotFound(w, r)
			return
		}
		cardGets.Add(1)
		w.Header().Set("Content-Type", "application/json")
		// The jku names a closed port on the card's host.
		_, _ = w.Write(signedUnionCard(t, key, testutil.ClosedURL(t)+"/jwks.json"))
	}))
	defer ts.Close()
	v := verifier(t, client.CardVerifierOptions{JKUHosts: []string{"127.0.0.1"}})
	_, err := client.Resolve(context.Background(), ts.URL, client.Options{CardVerifier: v, MaxRetries: 3, RetryBaseDelay: time.Millisecond})
	var se *client.CardSignatureError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "fetching the key set") {
		t.Fatalf("err = %v, want a *CardSignatureError about the key set fetch", err)
	}
	if n := cardGets.Load(); n != 1 {
		t.Errorf("the card was fetched %d times, want 1", n)
	}
}

// TestJKUFetchCap: a card whose signatures name many jku URLs gets keys
// fetched from at most two of them.
func TestJKUFetchCap(t *testing.T) {
	t.Parallel()
	key := ecKey(t)
	var n atomic.Int32
	v := verifier(t, client.CardVerifierOptions{HTTPClient: &http.Client{Transport: failingTransport{&n}}})
	card := signedUnionCard(t, key, "")
	var sigs []any
	for i := range 5 {
		c := signedUnionCard(t, key, "https://a.example/jwks/"+string(rune('0'+i)))
		var doc map[string]any
		if err := json.Unmarshal(c, &doc); err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, doc["signatures"].([]any)...)
	}
	card = tamper(t, card, func(doc map[string]any) { doc["signatures"] = sigs })
	_, err := v.Verify(context.Background(), "https://a.example/card.json", card)
	if !errors.Is(err, client.ErrCardJKUNotAllowed) || !strings.Contains(err.Error(), "more than 2 jku URLs") {
		t.Errorf("err = %v, want ErrCardJKUNotAllowed: more than 2 jku URLs", err)
	}
	if got := n.Load(); got != 2 {
		t.Errorf("%d key set fetches, want 2", got)
	}
}
