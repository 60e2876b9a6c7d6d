package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// testKey is a signing key of the test identity provider.
type testKey struct {
	kid  string
	alg  jwa.SignatureAlgorithm
	priv crypto.Signer
	jwk  json.RawMessage // public JWK with kid, alg and use
}

func newTestKey(t testing.TB, kid string, alg jwa.SignatureAlgorithm, priv crypto.Signer) *testKey {
	t.Helper()
	k, err := jwk.Import(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{jwk.KeyIDKey: kid, jwk.AlgorithmKey: alg, jwk.KeyUsageKey: "sig"} {
		if err := k.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	return &testKey{kid: kid, alg: alg, priv: priv, jwk: b}
}

// Keys are generated once per test binary: RSA generation is slow under -race.
var testKeys = sync.OnceValues(func() (map[string]*testKey, error) {
	ks := map[string]*testKey{}
	for _, kid := range []string{"ec-1", "ec-2", "ec-3"} {
		p, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		ks[kid] = &testKey{kid: kid, alg: jwa.ES256(), priv: p}
	}
	p, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	ks["rsa-1"] = &testKey{kid: "rsa-1", alg: jwa.RS256(), priv: p}
	return ks, nil
})

func key(t testing.TB, kid string) *testKey {
	t.Helper()
	ks, err := testKeys()
	if err != nil {
		t.Fatal(err)
	}
	k := ks[kid]
	return newTestKey(t, k.kid, k.alg, k.priv)
}

// sign makes a compact JWS of claims with k, with header kid (unless
// noKid) and typ JWT.
func sign(t testing.TB, k *testKey, claims map[string]any) string {
	t.Helper()
	return signWith(t, k, claims, k.kid)
}

func signWith(t testing.TB, k *testKey, claims map[string]any, kid string) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	hdr := jws.NewHeaders()
	if kid != "" {
		if err := hdr.Set(jws.KeyIDKey, kid); err != nil {
			t.Fatal(err)
		}
	}
	if err := hdr.Set(jws.TypeKey, "JWT"); err != nil {
		t.Fatal(err)
	}
	b, err := jws.Sign(payload, jws.WithKey(k.alg, k.priv, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// unsignedJWS builds a compact JWS by hand with the given header and a
// signature computed by sig over the signing input.
func unsignedJWS(t testing.TB, header, claims map[string]any, sig func(input []byte) []byte) string {
	t.Helper()
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	return input + "." + base64.RawURLEncoding.EncodeToString(sig([]byte(input)))
}

// idp is a test identity provider on loopback: a JWKS at /jwks.json and
// OpenID Provider Metadata at /.well-known/openid-configuration.
type idp struct {
	srv *httptest.Server

	mu         sync.Mutex
	keys       []json.RawMessage
	status     int    // JWKS status; 0 means 200
	metaIssuer string // issuer in the metadata; "" means the server URL

	jwksFetches, discoveryFetches atomic.Int32
}

func newIDP(t *testing.T, keys ...*testKey) *idp {
	t.Helper()
	p := &idp{}
	p.setKeys(keys...)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks.json", func(w http.ResponseWriter, r *http.Request) {
		p.jwksFetches.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.status != 0 {
			http.Error(w, "down", p.status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": p.keys})
	})
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		p.discoveryFetches.Add(1)
		p.mu.Lock()
		iss := p.metaIssuer
		p.mu.Unlock()
		if iss == "" {
			iss = p.issuer()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss, "jwks_uri": p.jwksURL(),
			"id_token_signing_alg_values_supported": []string{"ES256", "RS256"},
		})
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *idp) issuer() string  { return p.srv.URL }
func (p *idp) jwksURL() string { return p.srv.URL + "/jwks.json" }

func (p *idp) setKeys(keys ...*testKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = nil
	for _, k := range keys {
		p.keys = append(p.keys, k.jwk)
	}
}

func (p *idp) addRaw(raw string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, json.RawMessage(raw))
}

func (p *idp) setStatus(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = code
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newJWT builds the authenticator, optionally on a fake clock.
func newJWT(t *testing.T, o JWTOptions, clk *clock) Authenticator {
	t.Helper()
	a, err := NewJWT("jwt", o)
	if err != nil {
		t.Fatal(err)
	}
	if clk != nil {
		a.(*jwtAuth).now = clk.Now
	}
	return a
}

func bearer(tok string) *http.Request { return request("/a2a/echo", "Authorization", "Bearer "+tok) }

// claims returns valid claims for the idp and audience, then applies edits
// (a nil value deletes the claim).
func claims(iss string, now time.Time, edits map[string]any) map[string]any {
	c := map[string]any{
		"iss": iss, "sub": "user-1", "aud": "a2a://agents/echo",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"scope": "a2a.send",
	}
	for k, v := range edits {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func TestJWT(t *testing.T) {
	t.Parallel()
	ec, rs := key(t, "ec-1"), key(t, "rsa-1")
	hmacKey := []byte("0123456789abcdef0123456789abcdef")
	p := newIDP(t, ec, rs)
	// An "oct" key in the JWKS must never be used: HS* is not supported.
	p.addRaw(`{"kty":"oct","kid":"hmac-1","alg":"HS256","k":"` + base64.RawURLEncoding.EncodeToString(hmacKey) + `"}`)
	const aud = "a2a://agents/echo"
	base := JWTOptions{JWKSURL: p.jwksURL(), Issuer: p.issuer(), Audience: []string{"other", aud}}
	a := newJWT(t, base, nil)
	now := time.Now()
	iss := p.issuer()
	hs256 := func(key []byte) func([]byte) []byte {
		return func(in []byte) []byte {
			m := hmac.New(sha256.New, key)
			m.Write(in)
			return m.Sum(nil)
		}
	}
	tests := []struct {
		name       string
		a          Authenticator
		token      string
		subject    string
		err        error
		wantReason string
	}{
		{"valid ES256", a, sign(t, ec, claims(iss, now, nil)), "user-1", nil, ""},
		{"valid RS256", a, sign(t, rs, claims(iss, now, nil)), "user-1", nil, ""},
		{"valid without kid", a, signWith(t, ec, claims(iss, now, nil), ""), "user-1", nil, ""},
		{"aud array with one accepted", a, sign(t, ec, claims(iss, now, map[string]any{"aud": []string{"x", aud}})), "user-1", nil, ""},
		{"expired", a, sign(t, ec, claims(iss, now, map[string]any{"exp": now.Add(-time.Minute).Unix()})), "", ErrInvalidCredentials, "token expired"},
		{"not yet valid", a, sign(t, ec, claims(iss, now, map[string]any{"nbf": now.Add(time.Minute).Unix()})), "", ErrInvalidCredentials, "token not yet valid"},
		{"issued in the future", a, sign(t, ec, claims(iss, now, map[string]any{"iat": now.Add(time.Minute).Unix()})), "", ErrInvalidCredentials, "token issued in the future"},
		{"no exp", a, sign(t, ec, claims(iss, now, map[string]any{"exp": nil})), "", ErrInvalidCredentials, "token has no exp claim"},
		{"exp not a number", a, sign(t, ec, claims(iss, now, map[string]any{"exp": "tomorrow"})), "", ErrInvalidCredentials, "malformed exp claim"},
		{"wrong iss", a, sign(t, ec, claims("https://evil.example", now, nil)), "", ErrInvalidCredentials, "wrong issuer"},
		{"no iss", a, sign(t, ec, claims(iss, now, map[string]any{"iss": nil})), "", ErrInvalidCredentials, "wrong issuer"},
		{"wrong aud", a, sign(t, ec, claims(iss, now, map[string]any{"aud": "a2a://agents/chat"})), "", ErrInvalidCredentials, "wrong audience"},
		{"wrong aud array", a, sign(t, ec, claims(iss, now, map[string]any{"aud": []string{"x", "y"}})), "", ErrInvalidCredentials, "wrong audience"},
		{"no aud", a, sign(t, ec, claims(iss, now, map[string]any{"aud": nil})), "", ErrInvalidCredentials, "wrong audience"},
		{"no sub", a, sign(t, ec, claims(iss, now, map[string]any{"sub": nil})), "", ErrInvalidCredentials, "token has no sub claim"},
		{"custom subject claim", newJWT(t, JWTOptions{JWKSURL: p.jwksURL(), Audience: []string{aud}, SubjectClaim: "client_id"}, nil),
			sign(t, ec, claims(iss, now, map[string]any{"client_id": "svc-7"})), "svc-7", nil, ""},
		{"unknown kid", a, signWith(t, ec, claims(iss, now, nil), "nobody"), "", ErrInvalidCredentials, "unknown signing key"},
		{"signed by a key not in the JWKS", a, sign(t, newTestKey(t, "ec-1", jwa.ES256(), key(t, "ec-2").priv), claims(iss, now, nil)), "", ErrInvalidCredentials, "invalid signature"},
		{"tampered payload", a, func() string {
			tok := sign(t, ec, claims(iss, now, nil))
			parts := strings.Split(tok, ".")
			c, _ := json.Marshal(claims(iss, now, map[string]any{"sub": "admin"}))
			return parts[0] + "." + base64.RawURLEncoding.EncodeToString(c) + "." + parts[2]
		}(), "", ErrInvalidCredentials, "invalid signature"},
		{"alg none", a, unsignedJWS(t, map[string]any{"alg": "none", "kid": "ec-1"}, claims(iss, now, nil), func([]byte) []byte { return nil }) + "",
			"", ErrInvalidCredentials, ""},
		{"alg none with a signature part", a, unsignedJWS(t, map[string]any{"alg": "none"}, claims(iss, now, nil), func([]byte) []byte { return []byte("x") }),
			"", ErrInvalidCredentials, "unsupported signing algorithm"},
		{"HS256 with the JWKS oct key", a, unsignedJWS(t, map[string]any{"alg": "HS256", "kid": "hmac-1"}, claims(iss, now, nil), hs256(hmacKey)),
			"", ErrInvalidCredentials, "unsupported signing algorithm"},
		{"HS256 keyed with the RSA public JWK (alg confusion)", a, unsignedJWS(t, map[string]any{"alg": "HS256", "kid": "rsa-1"}, claims(iss, now, nil), hs256(rs.jwk)),
			"", ErrInvalidCredentials, "unsupported signing algorithm"},
		{"alg differs from the JWK's alg", a, unsignedJWS(t, map[string]any{"alg": "ES384", "kid": "ec-1"}, claims(iss, now, nil), func([]byte) []byte { return make([]byte, 96) }),
			"", ErrInvalidCredentials, "signing algorithm does not match the key"},
		{"crit header", a, func() string {
			hdr := jws.NewHeaders()
			_ = hdr.Set(jws.KeyIDKey, ec.kid)
			_ = hdr.Set(jws.CriticalKey, []string{"exp"})
			_ = hdr.Set("exp", 1)
			c, _ := json.Marshal(claims(iss, now, nil))
			b, err := jws.Sign(c, jws.WithKey(ec.alg, ec.priv, jws.WithProtectedHeaders(hdr)))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}(), "", ErrInvalidCredentials, "invalid signature"},
		{"not a JWT", a, "opaque-token-123", "", ErrInvalidCredentials, "malformed token"},
		{"JSON serialization", a, `{"payload":"e30","signatures":[]}`, "", ErrInvalidCredentials, "malformed token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.a.Authenticate(bearer(tt.token))
			wantResult(t, got, err, "jwt", tt.subject, tt.err, tt.wantReason)
			if err == nil && (got.Claims["scope"] != "a2a.send" || got.Claims["iss"] == nil) {
				t.Errorf("Claims = %v, want the token's claims", got.Claims)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		_, err := a.Authenticate(request("/"))
		wantResult(t, nil, err, "jwt", "", ErrNoCredentials, "")
	})
	t.Run("challenge", func(t *testing.T) {
		t.Parallel()
		_, err := a.Authenticate(bearer(sign(t, ec, claims(iss, now, map[string]any{"exp": now.Add(-time.Hour).Unix()}))))
		if got, want := ChallengeFor(a, err), `Bearer realm="a2a", error="invalid_token", error_description="token expired"`; got != want {
			t.Errorf("ChallengeFor = %q, want %q", got, want)
		}
	})
}

func TestJWTClockSkew(t *testing.T) {
	t.Parallel()
	ec := key(t, "ec-1")
	p := newIDP(t, ec)
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	now := clk.Now()
	opts := func(skew time.Duration) JWTOptions {
		return JWTOptions{JWKSURL: p.jwksURL(), Audience: []string{"a2a://agents/echo"}, ClockSkew: skew}
	}
	def := newJWT(t, opts(0), clk) // 30s
	tight := newJWT(t, opts(time.Second), clk)
	wide := newJWT(t, opts(2*time.Minute), clk)
	at := func(d time.Duration) int64 { return now.Add(d).Unix() }
	tests := []struct {
		name   string
		a      Authenticator
		edits  map[string]any
		reason string // "" = accepted
	}{
		{"expired 10s ago, default skew 30s", def, map[string]any{"exp": at(-10 * time.Second)}, ""},
		{"expired 10s ago, skew 1s", tight, map[string]any{"exp": at(-10 * time.Second)}, "token expired"},
		{"expired 40s ago, default skew", def, map[string]any{"exp": at(-40 * time.Second)}, "token expired"},
		{"expired exactly skew ago", def, map[string]any{"exp": at(-30 * time.Second)}, "token expired"},
		{"expired 90s ago, skew 2m", wide, map[string]any{"exp": at(-90 * time.Second)}, ""},
		{"nbf 20s ahead, default skew", def, map[string]any{"nbf": at(20 * time.Second)}, ""},
		{"nbf 20s ahead, skew 1s", tight, map[string]any{"nbf": at(20 * time.Second)}, "token not yet valid"},
		{"iat 20s ahead, default skew", def, map[string]any{"iat": at(20 * time.Second)}, ""},
		{"iat 40s ahead, default skew", def, map[string]any{"iat": at(40 * time.Second)}, "token issued in the future"},
		{"fractional exp", def, map[string]any{"exp": float64(now.Unix()) + 0.5}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.a.Authenticate(bearer(sign(t, ec, claims("", now, tt.edits))))
			if tt.reason == "" {
				wantResult(t, got, err, "jwt", "user-1", nil, "")
			} else {
				wantResult(t, got, err, "jwt", "", ErrInvalidCredentials, tt.reason)
			}
		})
	}
}

// TestJWTKeyRotation: a token whose kid is not in the cached JWKS makes the
// authenticator fetch the JWKS again, so a key added by the issuer verifies
// at once; such fetches are rate-limited.
func TestJWTKeyRotation(t *testing.T) {
	t.Parallel()
	ec1, ec2, ec3 := key(t, "ec-1"), key(t, "ec-2"), key(t, "ec-3")
	aud := []string{"a2a://agents/echo"}

	t.Run("new key verifies after refresh", func(t *testing.T) {
		t.Parallel()
		p := newIDP(t, ec1)
		a := newJWT(t, JWTOptions{JWKSURL: p.jwksURL(), Audience: aud}, nil)
		now := time.Now()
		if _, err := a.Authenticate(bearer(sign(t, ec1, claims("", now, nil)))); err != nil {
			t.Fatal(err)
		}
		p.setKeys(ec1, ec2) // the issuer rotates in ec-2
		got, err := a.Authenticate(bearer(sign(t, ec2, claims("", now, nil))))
		wantResult(t, got, err, "jwt", "user-1", nil, "")
		if n := p.jwksFetches.Load(); n != 2 {
			t.Errorf("JWKS fetched %d times, want 2 (initial + refresh on unknown kid)", n)
		}
	})

	t.Run("refresh on unknown kid is rate-limited", func(t *testing.T) {
		t.Parallel()
		p := newIDP(t, ec1)
		clk := &clock{t: time.Now()}
		a := newJWT(t, JWTOptions{JWKSURL: p.jwksURL(), Audience: aud, MinRefreshInterval: time.Minute}, clk)
		auth := func(k *testKey) error {
			_, err := a.Authenticate(bearer(sign(t, k, claims("", clk.Now(), nil))))
			return err
		}
		if err := auth(ec1); err != nil {
			t.Fatal(err)
		}
		// ec-2 is unknown: one refresh, still unknown.
		if err := auth(ec2); Reason(err) != "unknown signing key" {
			t.Fatalf("unknown kid: err = %v", err)
		}
		if n := p.jwksFetches.Load(); n != 2 {
			t.Fatalf("JWKS fetched %d times, want 2", n)
		}
		// More unknown kids within the minute cause no fetch.
		p.setKeys(ec1, ec2)
		for range 5 {
			if err := auth(ec3); Reason(err) != "unknown signing key" {
				t.Fatalf("unknown kid: err = %v", err)
			}
			if err := auth(ec2); Reason(err) != "unknown signing key" {
				t.Fatalf("rate-limited kid: err = %v", err)
			}
		}
		if n := p.jwksFetches.Load(); n != 2 {
			t.Fatalf("JWKS fetched %d times within the rate limit, want 2", n)
		}
		// After the interval the rotated-in key is found.
		clk.Advance(time.Minute)
		if err := auth(ec2); err != nil {
			t.Fatalf("rotated key after the rate limit: %v", err)
		}
		if n := p.jwksFetches.Load(); n != 3 {
			t.Fatalf("JWKS fetched %d times, want 3", n)
		}
		// Known kids never cause a fetch.
		for range 5 {
			if err := auth(ec1); err != nil {
				t.Fatal(err)
			}
		}
		if n := p.jwksFetches.Load(); n != 3 {
			t.Fatalf("JWKS fetched %d times, want 3", n)
		}
	})
}

// TestJWTPeriodicRefresh: the JWKS is fetched again after RefreshInterval,
// so a key the issuer removed stops verifying.
func TestJWTPeriodicRefresh(t *testing.T) {
	t.Parallel()
	ec1, ec2 := key(t, "ec-1"), key(t, "ec-2")
	p := newIDP(t, ec1, ec2)
	clk := &clock{t: time.Now()}
	a := newJWT(t, JWTOptions{JWKSURL: p.jwksURL(), Audience: []string{"a2a://agents/echo"}, RefreshInterval: 10 * time.Minute}, clk)
	auth := func(k *testKey) error {
		_, err := a.Authenticate(bearer(sign(t, k, claims("", clk.Now(), nil))))
		return err
	}
	if err := auth(ec1); err != nil {
		t.Fatal(err)
	}
	p.setKeys(ec2) // ec-1 revoked
	clk.Advance(9 * time.Minute)
	if err := auth(ec1); err != nil {
		t.Fatalf("cached key before the refresh interval: %v", err)
	}
	if n := p.jwksFetches.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times, want 1", n)
	}
	clk.Advance(time.Minute)
	if err := auth(ec1); Reason(err) != "unknown signing key" {
		t.Fatalf("revoked key after the refresh interval: err = %v", err)
	}
	if err := auth(ec2); err != nil {
		t.Fatal(err)
	}
	if n := p.jwksFetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2", n)
	}
}

// TestJWTUnavailable: when no JWKS can be fetched the error is
// ErrUnavailable (not the client's fault); a later JWKS outage keeps the
// cached keys in use; retries are spaced out.
func TestJWTUnavailable(t *testing.T) {
	t.Parallel()
	ec1 := key(t, "ec-1")
	p := newIDP(t, ec1)
	p.setStatus(http.StatusInternalServerError)
	clk := &clock{t: time.Now()}
	a := newJWT(t, JWTOptions{JWKSURL: p.jwksURL(), Audience: []string{"a2a://agents/echo"}, RefreshInterval: time.Hour}, clk)
	tok := func() string { return sign(t, ec1, claims("", clk.Now(), nil)) }

	_, err := a.Authenticate(bearer(tok()))
	wantResult(t, nil, err, "jwt", "", ErrUnavailable, "")
	if errors.Is(err, ErrInvalidCredentials) || errors.Is(err, ErrNoCredentials) {
		t.Errorf("unavailable error %v also matches a client error", err)
	}
	if !strings.Contains(err.Error(), "500") {
		t.Errorf("error %q does not tell operators why", err)
	}
	// Malformed tokens and refused algorithms are rejected without a fetch.
	_, err = a.Authenticate(bearer("not-a-jwt"))
	wantResult(t, nil, err, "jwt", "", ErrInvalidCredentials, "malformed token")
	// Retries are spaced out.
	for range 3 {
		if _, err := a.Authenticate(bearer(tok())); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
	}
	if n := p.jwksFetches.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times while backing off, want 1", n)
	}
	p.setStatus(0)
	clk.Advance(5 * time.Second)
	if _, err := a.Authenticate(bearer(tok())); err != nil {
		t.Fatalf("after the JWKS recovered: %v", err)
	}
	// A JWKS outage after the keys are cached does not lock clients out.
	p.setStatus(http.StatusBadGateway)
	clk.Advance(2 * time.Hour)
	if _, err := a.Authenticate(bearer(tok())); err != nil {
		t.Fatalf("stale keys during an outage: %v", err)
	}
}

// TestJWTDiscovery: with only Issuer, the JWKS is found through
// /.well-known/openid-configuration.
func TestJWTDiscovery(t *testing.T) {
	t.Parallel()
	ec1, rs := key(t, "ec-1"), key(t, "rsa-1")
	aud := []string{"a2a://agents/echo"}

	t.Run("ok", func(t *testing.T) {
		t.Parallel()
		p := newIDP(t, ec1, rs)
		a := newJWT(t, JWTOptions{Issuer: p.issuer() + "/", Audience: aud}, nil)
		// The issuer is compared exactly: the trailing slash makes it a
		// different issuer, so discovery must refuse the metadata.
		_, err := a.Authenticate(bearer(sign(t, ec1, claims(p.issuer(), time.Now(), nil))))
		wantResult(t, nil, err, "jwt", "", ErrUnavailable, "")

		a = newJWT(t, JWTOptions{Issuer: p.issuer(), Audience: aud}, nil)
		if p.jwksFetches.Load() != 0 {
			t.Fatal("NewJWT fetched the JWKS; it must be lazy")
		}
		for _, k := range []*testKey{ec1, rs, ec1} {
			got, err := a.Authenticate(bearer(sign(t, k, claims(p.issuer(), time.Now(), nil))))
			wantResult(t, got, err, "jwt", "user-1", nil, "")
		}
		_, err = a.Authenticate(bearer(sign(t, ec1, claims("https://other.example", time.Now(), nil))))
		wantResult(t, nil, err, "jwt", "", ErrInvalidCredentials, "wrong issuer")
		if d, j := p.discoveryFetches.Load(), p.jwksFetches.Load(); d != 2 || j != 1 {
			t.Errorf("discovery fetched %d times (want 2: one refused, one ok), JWKS %d times (want 1)", d, j)
		}
	})

	t.Run("metadata for another issuer is refused", func(t *testing.T) {
		t.Parallel()
		p := newIDP(t, ec1)
		p.metaIssuer = "https://evil.example"
		a := newJWT(t, JWTOptions{Issuer: p.issuer(), Audience: aud}, nil)
		_, err := a.Authenticate(bearer(sign(t, ec1, claims(p.issuer(), time.Now(), nil))))
		wantResult(t, nil, err, "jwt", "", ErrUnavailable, "")
		if p.jwksFetches.Load() != 0 {
			t.Error("JWKS fetched from unverified metadata")
		}
	})
}

// TestJWTConcurrent: parallel requests share one JWKS fetch (run with -race).
func TestJWTConcurrent(t *testing.T) {
	t.Parallel()
	ec1 := key(t, "ec-1")
	p := newIDP(t, ec1)
	a := newJWT(t, JWTOptions{JWKSURL: p.jwksURL(), Audience: []string{"a2a://agents/echo"}}, nil)
	tok := sign(t, ec1, claims("", time.Now(), nil))
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			if _, err := a.Authenticate(bearer(tok)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := p.jwksFetches.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times, want 1", n)
	}
}

func TestJWTSkipsUnusableKeys(t *testing.T) {
	t.Parallel()
	ec1 := key(t, "ec-1")
	p := newIDP(t)
	// Keys that must be skipped without failing the set: unknown kty, an
	// encryption key, an unparsable key, and garbage.
	ecPub := strings.TrimSuffix(string(newTestKey(t, "x", jwa.ES256(), key(t, "ec-2").priv).jwk), "}")
	for _, raw := range []string{
		`{"kty":"AKP","kid":"pq","alg":"ML-DSA-44","pub":"AAAA"}`,
		strings.Replace(ecPub, `"use":"sig"`, `"use":"enc"`, 1) + `}`,
		`{"kty":"RSA","kid":"bad","n":"!!","e":"AQAB"}`,
		`42`,
	} {
		p.addRaw(raw)
	}
	p.mu.Lock()
	p.keys = append(p.keys, ec1.jwk)
	p.mu.Unlock()
	ks, err := parseJWKS([]byte(`{"keys":[` + string(ec1.jwk) + `,{"kty":"EC","use":"enc","crv":"P-256","kid":"e","x":"` +
		jwkField(t, ec1.jwk, "x") + `","y":"` + jwkField(t, ec1.jwk, "y") + `"},{"kty":"EC","key_ops":["encrypt"],"crv":"P-256","kid":"o","x":"` +
		jwkField(t, ec1.jwk, "x") + `","y":"` + jwkField(t, ec1.jwk, "y") + `"},{"kty":"EC","alg":"ECDH-ES","crv":"P-256","kid":"a","x":"` +
		jwkField(t, ec1.jwk, "x") + `","y":"` + jwkField(t, ec1.jwk, "y") + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 || ks[0].kid != "ec-1" || ks[0].alg != "ES256" {
		t.Fatalf("parseJWKS kept %+v, want only ec-1", ks)
	}
	a := newJWT(t, JWTOptions{JWKSURL: p.jwksURL(), Audience: []string{"a2a://agents/echo"}}, nil)
	got, err := a.Authenticate(bearer(sign(t, ec1, claims("", time.Now(), nil))))
	wantResult(t, got, err, "jwt", "user-1", nil, "")
	if _, err := parseJWKS([]byte(`{"nokeys":[]}`)); err == nil {
		t.Error(`parseJWKS accepted a document without "keys"`)
	}
}

func jwkField(t *testing.T, raw json.RawMessage, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	s, _ := m[name].(string)
	return s
}

func TestNewJWTErrors(t *testing.T) {
	t.Parallel()
	aud := []string{"a"}
	tests := []struct {
		name string
		n    string
		o    JWTOptions
	}{
		{"empty name", "", JWTOptions{JWKSURL: "https://idp.example/jwks", Audience: aud}},
		{"no JWKS URL nor issuer", "jwt", JWTOptions{Audience: aud}},
		{"relative JWKS URL", "jwt", JWTOptions{JWKSURL: "/jwks", Audience: aud}},
		{"non-http JWKS URL", "jwt", JWTOptions{JWKSURL: "file:///etc/jwks", Audience: aud}},
		{"issuer not a URL for discovery", "jwt", JWTOptions{Issuer: "idp", Audience: aud}},
		{"no audience", "jwt", JWTOptions{JWKSURL: "https://idp.example/jwks"}},
		{"empty audience", "jwt", JWTOptions{JWKSURL: "https://idp.example/jwks", Audience: []string{""}}},
		{"negative skew", "jwt", JWTOptions{JWKSURL: "https://idp.example/jwks", Audience: aud, ClockSkew: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if a, err := NewJWT(tt.n, tt.o); err == nil {
				t.Fatalf("NewJWT = %v, want an error", a)
			}
		})
	}
	// A non-URL issuer is fine when the JWKS URL is given.
	if _, err := NewJWT("jwt", JWTOptions{JWKSURL: "https://idp.example/jwks", Issuer: "idp", Audience: aud}); err != nil {
		t.Fatal(err)
	}
}
