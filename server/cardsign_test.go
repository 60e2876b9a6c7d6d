package server_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/cardsig"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// signingHost serves echo and secure (bearer "alice-token", with an
// extended card) with cards signed by an ES256 key "card-1".
func signingHost(t *testing.T, o server.CardSignerOptions) *httptest.Server {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	o.Key, o.Algorithm, o.KeyID = key, "ES256", "card-1"
	cs, err := server.NewCardSigner(o)
	if err != nil {
		t.Fatal(err)
	}
	eng := servertest.Engine(t, server.EngineOptions{})
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"alice": "alice-token"})
	if err != nil {
		t.Fatal(err)
	}
	host := server.NewHost(server.HostOptions{Default: "echo", Transport: server.TransportOptions{Logger: testutil.Logger(), CardSigner: cs}})
	host.Add(server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	ext := testutil.Card("secure")
	ext.Description = "extended"
	host.Add(server.NewHandler(eng, "secure", whoAmI, testutil.Card("secure"), server.HandlerOptions{Auth: auth.Set{bearer}, ExtendedCard: &ext}))
	ts := testutil.ServeDrained(t, host, eng.Close)
	return ts
}

func get(t *testing.T, url string, hdr ...string) []byte {
	t.Helper()
	resp, b := testutil.Get(t, url, hdr...)
	testutil.WantStatus(t, resp, b, http.StatusOK)
	return b
}

// verifyServed verifies card with the keys the host publishes and
// returns what verified.
func verifyServed(t *testing.T, ts *httptest.Server, card []byte) cardsig.Verified {
	t.Helper()
	keys, err := cardsig.ParseJWKS(get(t, ts.URL+server.JWKSPath))
	if err != nil {
		t.Fatal(err)
	}
	v, err := cardsig.Verify(context.Background(), card, nil, func(_ context.Context, kid, _ string) ([]cardsig.Key, error) {
		return keys, nil
	})
	if err != nil {
		t.Fatalf("served card does not verify: %v\n%s", err, card)
	}
	return v
}

func TestSignedCards(t *testing.T) {
	t.Parallel()
	ts := signingHost(t, server.CardSignerOptions{})
	card := get(t, ts.URL+"/a2a/echo/.well-known/agent-card.json")
	v := verifyServed(t, ts, card)
	if v.KeyID != "card-1" || v.Algorithm != "ES256" || v.JKU != ts.URL+server.JWKSPath {
		t.Errorf("Verified = %+v, want kid card-1, ES256, jku %s", v, ts.URL+server.JWKSPath)
	}
	// ECDSA signatures are randomized: equal bytes mean the cache served them.
	if again := get(t, ts.URL+"/a2a/echo/.well-known/agent-card.json"); !bytes.Equal(card, again) {
		t.Error("a second fetch signed the card again")
	}
	// The card under another host name (localhost) is signed for it.
	other := get(t, strings.Replace(ts.URL, "127.0.0.1", "localhost", 1)+"/.well-known/agent-card.json")
	if v := verifyServed(t, ts, other); !strings.HasPrefix(v.JKU, "http://localhost:") || !bytes.Contains(other, []byte(`"url":"http://localhost:`)) {
		t.Errorf("card at localhost: jku %q, card %s", v.JKU, other)
	}
	jwks := string(get(t, ts.URL+server.JWKSPath))
	if strings.Contains(jwks, `"d"`) || !strings.Contains(jwks, `"kid":"card-1"`) {
		t.Errorf("JWKS = %s", jwks)
	}
}

func TestSignedExtendedCards(t *testing.T) {
	t.Parallel()
	ts := signingHost(t, server.CardSignerOptions{JKU: "https://keys.example/jwks.json"})
	url := ts.URL + "/a2a/secure"
	rest := get(t, url+"/extendedAgentCard", "A2A-Version", "1.0", "Authorization", "Bearer alice-token")
	for name, card := range map[string][]byte{
		"REST":         rest,
		"JSON-RPC 1":   rpcResultOf(t, url, "GetExtendedAgentCard", "A2A-Version", "1.0"),
		"JSON-RPC 0.3": rpcResultOf(t, url, "agent/getAuthenticatedExtendedCard"),
		"REST 0.3":     get(t, url+"/v1/card", "Authorization", "Bearer alice-token"),
	} {
		if !bytes.Contains(card, []byte(`"extended"`)) {
			t.Errorf("%s: not the extended card: %s", name, card)
		}
		if v := verifyServed(t, ts, card); v.JKU != "https://keys.example/jwks.json" {
			t.Errorf("%s: jku %q, want the configured one", name, v.JKU)
		}
		// The signature covers the 1.0 members only: every endpoint must
		// be among the signed supportedInterfaces (0.3 gets the union card).
		if err := cardsig.CheckCovered(card); err != nil || !bytes.Contains(card, []byte(`"supportedInterfaces"`)) {
			t.Errorf("%s: %v: %s", name, err, card)
		}
	}
}

// rpcResultOf calls method without params as alice and returns the result.
func rpcResultOf(t *testing.T, url, method string, hdr ...string) []byte {
	t.Helper()
	_, b := testutil.Post(t, url, `{"jsonrpc":"2.0","id":1,"method":"`+method+`"}`, append(hdr, "Authorization", "Bearer alice-token")...)
	var r struct {
		Result jsontext.Value `json:"result"`
	}
	if err := json.Unmarshal(b, &r, json.RejectUnknownMembers(false)); err != nil || len(r.Result) == 0 {
		t.Fatalf("%s: %v %s", method, err, b)
	}
	return r.Result
}

func TestCardSignerJWKSWithExtraKeys(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cs, err := server.NewCardSigner(server.CardSignerOptions{Key: key, Algorithm: "ES256", KeyID: "card",
		ExtraKeys: func() []byte { return []byte(`{"keys":[{"kty":"oct","kid":"push"}]}`) }})
	if err != nil {
		t.Fatal(err)
	}
	var set struct{ Keys []map[string]any }
	if err := json.Unmarshal(cs.JWKS(), &set, json.MatchCaseInsensitiveNames(true)); err != nil || len(set.Keys) != 2 || set.Keys[0]["kid"] != "card" || set.Keys[1]["kid"] != "push" {
		t.Fatalf("JWKS = %s (%v)", cs.JWKS(), err)
	}
	rec := httptest.NewRecorder()
	cs.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, server.JWKSPath, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}

func TestNewCardSignerErrors(t *testing.T) {
	t.Parallel()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	for _, tc := range []struct {
		o    server.CardSignerOptions
		want string
	}{
		{server.CardSignerOptions{Algorithm: "ES256"}, "no signing key"},
		{server.CardSignerOptions{Key: ec, Algorithm: "RS256"}, "an EC key on P-256 cannot be used with RS256"},
		{server.CardSignerOptions{Key: ec, Algorithm: "HS256"}, `algorithm "HS256" is not supported`},
		{server.CardSignerOptions{Key: small, Algorithm: "RS256"}, "fewer than 2048"},
	} {
		if _, err := server.NewCardSigner(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.o.Algorithm, err, tc.want)
		}
	}
}
