package client_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/cardsig"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// signedAgent serves the echo agent with cards signed by key (nil: not
// signed) under kid "k1"; jku "" means the host's own JWKS.
func signedAgent(t *testing.T, key crypto.Signer, alg, jku string) *httptest.Server {
	t.Helper()
	eng := servertest.Engine(t, server.EngineOptions{})
	to := server.TransportOptions{Logger: testutil.Logger()}
	if key != nil {
		cs, err := server.NewCardSigner(server.CardSignerOptions{Key: key, Algorithm: alg, KeyID: "k1", JKU: jku})
		if err != nil {
			t.Fatal(err)
		}
		to.CardSigner = cs
	}
	host := server.NewHost(server.HostOptions{Transport: to})
	host.Add(server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	ts := testutil.ServeDrained(t, host, eng.Close)
	return ts
}

func ecKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func verifier(t *testing.T, o client.CardVerifierOptions) *client.CardVerifier {
	t.Helper()
	v, err := client.NewCardVerifier(o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func resolveVerified(t *testing.T, u string, v *client.CardVerifier) error {
	t.Helper()
	_, err := client.Resolve(context.Background(), u, client.Options{CardVerifier: v, MaxRetries: -1})
	var se *client.CardSignatureError
	if err != nil && !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want a *CardSignatureError", err, err)
	}
	return err
}

func TestResolveVerifiesCardFromItsJKU(t *testing.T) {
	t.Parallel()
	ts := signedAgent(t, ecKey(t), "ES256", "")
	var got client.CardSignature
	v := verifier(t, client.CardVerifierOptions{Verified: func(s client.CardSignature) { got = s }})
	if err := resolveVerified(t, ts.URL+"/a2a/echo", v); err != nil {
		t.Fatal(err)
	}
	if got.KeyID != "k1" || got.Algorithm != "ES256" || got.KeySource != "jku URL "+ts.URL+server.JWKSPath || got.CardURL != ts.URL+"/a2a/echo/.well-known/agent-card.json" {
		t.Errorf("CardSignature = %+v", got)
	}
}

func TestResolveWithTrustedKeys(t *testing.T) {
	t.Parallel()
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	ts := signedAgent(t, ed, "EdDSA", "")
	var got client.CardSignature
	v := verifier(t, client.CardVerifierOptions{Keys: map[string]crypto.PublicKey{"k1": ed.Public()}, Verified: func(s client.CardSignature) { got = s }})
	if err := resolveVerified(t, ts.URL, v); err != nil || got.KeySource != "trusted keys" {
		t.Fatalf("err %v, %+v", err, got)
	}
	// A trusted key store that lacks the kid: the jku on the card's own
	// host is not followed then.
	v = verifier(t, client.CardVerifierOptions{Keys: map[string]crypto.PublicKey{"other": ed.Public()}})
	if err := resolveVerified(t, ts.URL, v); !errors.Is(err, client.ErrCardJKUNotAllowed) {
		t.Errorf("err = %v, want ErrCardJKUNotAllowed", err)
	}
	// ... unless its host is allowed.
	v = verifier(t, client.CardVerifierOptions{Keys: map[string]crypto.PublicKey{"other": ed.Public()}, JKUHosts: []string{"127.0.0.1"}})
	if err := resolveVerified(t, ts.URL, v); err != nil {
		t.Errorf("with JKUHosts: %v", err)
	}
	// A JWKS URL.
	v = verifier(t, client.CardVerifierOptions{JWKSURL: ts.URL + server.JWKSPath, Verified: func(s client.CardSignature) { got = s }})
	if err := resolveVerified(t, ts.URL, v); err != nil || got.KeySource != "JWKS URL "+ts.URL+server.JWKSPath {
		t.Errorf("JWKS URL: %v %+v", err, got)
	}
	// The wrong key under the right kid.
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	v = verifier(t, client.CardVerifierOptions{Keys: map[string]crypto.PublicKey{"k1": other.Public()}})
	if err := resolveVerified(t, ts.URL, v); !errors.Is(err, client.ErrCardSignatureInvalid) {
		t.Errorf("wrong key: err = %v, want ErrCardSignatureInvalid", err)
	}
	// An algorithm that is not accepted.
	v = verifier(t, client.CardVerifierOptions{Keys: map[string]crypto.PublicKey{"k1": ed.Public()}, Algorithms: []string{"ES256"}})
	if err := resolveVerified(t, ts.URL, v); !errors.Is(err, client.ErrCardAlgorithm) {
		t.Errorf("algorithms: err = %v, want ErrCardAlgorithm", err)
	}
}

func TestResolveRejectsBadCards(t *testing.T) {
	t.Parallel()
	unsigned := signedAgent(t, nil, "", "")
	if err := resolveVerified(t, unsigned.URL, verifier(t, client.CardVerifierOptions{})); !errors.Is(err, client.ErrCardNotSigned) {
		t.Errorf("unsigned: err = %v, want ErrCardNotSigned", err)
	}
	elsewhere := signedAgent(t, ecKey(t), "ES256", "https://keys.example/jwks.json")
	if err := resolveVerified(t, elsewhere.URL, verifier(t, client.CardVerifierOptions{})); !errors.Is(err, client.ErrCardJKUNotAllowed) || !strings.Contains(err.Error(), "is not on the card's own origin http://127.0.0.1:") {
		t.Errorf("jku to another host: err = %v, want ErrCardJKUNotAllowed", err)
	}
	// A man in the middle changes the card.
	signed := signedAgent(t, ecKey(t), "ES256", "")
	mitm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(signed.URL + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		_, _ = w.Write(bytes.Replace(b, []byte(`"streaming":true`), []byte(`"streaming":false`), 1))
	}))
	defer mitm.Close()
	v := verifier(t, client.CardVerifierOptions{JWKSURL: signed.URL + server.JWKSPath})
	if err := resolveVerified(t, mitm.URL, v); !errors.Is(err, client.ErrCardSignatureInvalid) {
		t.Errorf("tampered: err = %v, want ErrCardSignatureInvalid", err)
	}
}

// TestVerifyUncoveredEndpoint: a card whose A2A 0.3 url is not among its
// signed supportedInterfaces is refused, though its signature verifies.
func TestVerifyUncoveredEndpoint(t *testing.T) {
	t.Parallel()
	key := ecKey(t)
	s, err := cardsig.NewSigner(key, "ES256", "k1")
	if err != nil {
		t.Fatal(err)
	}
	card, err := s.Sign([]byte(`{"name":"n","url":"https://evil.example/rpc","supportedInterfaces":[{"url":"https://a.example/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	v := verifier(t, client.CardVerifierOptions{Keys: map[string]crypto.PublicKey{"k1": key.Public()}})
	_, err = v.Verify(context.Background(), "https://a.example/card.json", card)
	if !errors.Is(err, client.ErrCardEndpointUncovered) {
		t.Errorf("err = %v, want ErrCardEndpointUncovered", err)
	}
}

func TestNewCardVerifierErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    client.CardVerifierOptions
		want string
	}{
		{client.CardVerifierOptions{Keys: map[string]crypto.PublicKey{"x": "not a key"}}, `card key "x"`},
		{client.CardVerifierOptions{JWKS: []byte(`{"keys":1}`)}, "card JWKS"},
		{client.CardVerifierOptions{JWKS: []byte(`{"keys":[]}`)}, "card JWKS: no signature key with a kid"},
		{client.CardVerifierOptions{JWKSURL: "ftp://x"}, "not an absolute http(s) URL"},
	} {
		if _, err := client.NewCardVerifier(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}
