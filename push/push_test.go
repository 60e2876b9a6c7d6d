package push

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

const (
	testAud    = "https://client.example.com/webhook/a2a-notifications"
	testIssuer = "https://agent.example.com"
	testTask   = "43667960-d455-4453-b0cf-1bae4955270d"
)

var testBody = []byte(`{"id":"43667960-d455-4453-b0cf-1bae4955270d","kind":"task","status":{"state":"completed"}}`)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fetchLog counts and timestamps the fetches of a JWK Set.
type fetchLog struct {
	mu    sync.Mutex
	times []time.Time
}

// Load returns the number of fetches.
func (f *fetchLog) Load() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int64(len(f.times))
}

// At returns when fetch i (from 1) started.
func (f *fetchLog) At(i int) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.times[i-1]
}

// jwksServer serves s's JWK Set on loopback and logs the fetches.
func jwksServer(t *testing.T, s *Signer) (url string, fetches *fetchLog) {
	t.Helper()
	fetches = new(fetchLog)
	h := s.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.mu.Lock()
		fetches.times = append(fetches.times, time.Now())
		fetches.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/.well-known/jwks.json", fetches
}

// notification builds the POST a server would send.
func notification(t *testing.T, s *Signer, aud string, body []byte) *http.Request {
	t.Helper()
	req, err := s.NewRequest(context.Background(), aud, testTask, "client-token", body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func withToken(tok string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, testAud, strings.NewReader(string(testBody)))
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}

func mustSigner(t *testing.T, o SignerOptions) *Signer {
	t.Helper()
	s, err := NewSigner(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

// decodeSegment decodes one base64url segment of a compact JWS as JSON.
func decodeSegment(t *testing.T, seg string) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRoundTrip(t *testing.T) {
	for _, alg := range []string{AlgES256, AlgRS256} {
		t.Run(alg, func(t *testing.T) {
			s := mustSigner(t, SignerOptions{Algorithm: alg, Issuer: testIssuer})
			if s.Algorithm() != alg {
				t.Fatalf("Algorithm() = %s", s.Algorithm())
			}
			url, _ := jwksServer(t, s)
			v := NewVerifier(VerifierOptions{JWKSURL: url, Audience: testAud, Issuer: testIssuer})

			before := time.Now().Truncate(time.Second)
			req := notification(t, s, testAud, testBody)
			c, err := v.Verify(req, testBody)
			if err != nil {
				t.Fatal(err)
			}
			if c.Issuer != testIssuer || c.Audience != testAud || c.TaskID != testTask || len(c.JTI) != 32 {
				t.Fatalf("claims = %+v", c)
			}
			if c.IssuedAt.Before(before) || c.Expires.Sub(c.IssuedAt) != DefaultTTL {
				t.Fatalf("iat %v exp %v", c.IssuedAt, c.Expires)
			}
			if req.Header.Get("Content-Type") != "application/json" || Token(req) != "client-token" ||
				!TokenEqual(req, "client-token") || TokenEqual(req, "other") || TokenEqual(req, "") {
				t.Fatalf("headers = %v", req.Header)
			}

			// The wire shape: header and claims exactly as documented.
			tok := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
			parts := strings.Split(tok, ".")
			if len(parts) != 3 {
				t.Fatalf("not compact: %q", tok)
			}
			hdr := decodeSegment(t, parts[0])
			if hdr["alg"] != alg || hdr["typ"] != "JWT" || hdr["kid"] != s.KeyID() || len(hdr) != 3 {
				t.Fatalf("header = %v", hdr)
			}
			claims := decodeSegment(t, parts[1])
			sum := sha256.Sum256(testBody)
			if claims["request_body_sha256"] != hex.EncodeToString(sum[:]) || claims["aud"] != testAud ||
				claims["iss"] != testIssuer || claims["taskId"] != testTask || claims["jti"] != c.JTI ||
				claims["exp"].(float64)-claims["iat"].(float64) != DefaultTTL.Seconds() || len(claims) != 7 {
				t.Fatalf("claims = %v", claims)
			}
			if _, err := hex.DecodeString(c.JTI); err != nil || strings.ToLower(c.JTI) != c.JTI {
				t.Fatalf("jti %q is not lowercase hex", c.JTI)
			}
		})
	}
}

func TestJWKSHasNoPrivateMaterial(t *testing.T) {
	for _, alg := range []string{AlgES256, AlgRS256} {
		t.Run(alg, func(t *testing.T) {
			s := mustSigner(t, SignerOptions{Algorithm: alg})
			first := s.KeyID()
			if err := s.Rotate(); err != nil {
				t.Fatal(err)
			}
			var set struct {
				Keys []map[string]any `json:"keys"`
			}
			if err := json.Unmarshal(s.JWKS(), &set); err != nil {
				t.Fatal(err)
			}
			if len(set.Keys) != 2 || set.Keys[0]["kid"] != s.KeyID() || set.Keys[1]["kid"] != first {
				t.Fatalf("JWKS = %s", s.JWKS())
			}
			for _, k := range set.Keys {
				for _, private := range []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"} {
					if _, ok := k[private]; ok {
						t.Fatalf("JWKS key has private member %q: %v", private, k)
					}
				}
				if k["use"] != "sig" || k["alg"] != alg || k["kid"] == "" {
					t.Fatalf("JWKS key = %v", k)
				}
				switch alg {
				case AlgES256:
					if k["kty"] != "EC" || k["crv"] != "P-256" || k["x"] == nil || k["y"] == nil {
						t.Fatalf("EC key = %v", k)
					}
				case AlgRS256:
					if k["kty"] != "RSA" || k["n"] == nil || k["e"] == nil {
						t.Fatalf("RSA key = %v", k)
					}
				}
			}
		})
	}
}

func TestHandler(t *testing.T) {
	s := mustSigner(t, SignerOptions{})
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/jwks.json", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/jwk-set+json" || rec.Body.String() != string(s.JWKS()) {
		t.Fatalf("GET: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	rec = httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/.well-known/jwks.json", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", rec.Code)
	}
}

func TestSignerOptions(t *testing.T) {
	for _, o := range []SignerOptions{
		{Algorithm: "HS256"},
		{Algorithm: "none"},
		{TTL: time.Hour, RetireAfter: time.Minute},
		{TTL: time.Millisecond},
	} {
		if _, err := NewSigner(o); err == nil {
			t.Errorf("NewSigner(%+v) succeeded", o)
		}
	}
	s := mustSigner(t, SignerOptions{})
	if _, err := s.Sign("", testTask, nil); err == nil {
		t.Error("Sign with an empty audience succeeded")
	}
	if _, err := s.Sign(testAud, "", nil); err == nil {
		t.Error("Sign with an empty task id succeeded")
	}
}

func TestTamperedBody(t *testing.T) {
	s := mustSigner(t, SignerOptions{})
	url, _ := jwksServer(t, s)
	v := NewVerifier(VerifierOptions{JWKSURL: url})
	req := notification(t, s, testAud, testBody)
	tampered := []byte(strings.Replace(string(testBody), "completed", "failed", 1))
	_, err := v.Verify(req, tampered)
	wantErr(t, err, ErrBodyMismatch)
	// The jti was not consumed by the failed attempt.
	if _, err := v.Verify(req, testBody); err != nil {
		t.Fatal(err)
	}
}

func TestTamperedToken(t *testing.T) {
	s := mustSigner(t, SignerOptions{})
	url, _ := jwksServer(t, s)
	v := NewVerifier(VerifierOptions{JWKSURL: url})
	tok, err := s.Sign(testAud, testTask, testBody)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")

	// Another payload under the original signature.
	claims := decodeSegment(t, parts[1])
	claims["taskId"] = "someone-elses-task"
	b, _ := json.Marshal(claims)
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
	_, err = v.Verify(withToken(forged), testBody)
	wantErr(t, err, ErrBadSignature)

	// A damaged signature.
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sig[5] ^= 0xff
	damaged := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
	_, err = v.Verify(withToken(damaged), testBody)
	wantErr(t, err, ErrBadSignature)

	// The original still verifies.
	if _, err := v.Verify(withToken(tok), testBody); err != nil {
		t.Fatal(err)
	}
}

func TestAlgorithmConfusionRefused(t *testing.T) {
	s := mustSigner(t, SignerOptions{Algorithm: AlgRS256})
	url, _ := jwksServer(t, s)
	v := NewVerifier(VerifierOptions{JWKSURL: url})
	tok, err := s.Sign(testAud, testTask, testBody)
	if err != nil {
		t.Fatal(err)
	}
	payload := strings.Split(tok, ".")[1]
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}

	// alg "none".
	none := enc(map[string]string{"alg": "none", "typ": "JWT", "kid": s.KeyID()}) + "." + payload + "."
	_, err = v.Verify(withToken(none), testBody)
	wantErr(t, err, ErrBadSignature)

	// HS256 keyed with the public JWK: the classic confusion attack.
	input := enc(map[string]string{"alg": "HS256", "typ": "JWT", "kid": s.KeyID()}) + "." + payload
	mac := hmac.New(sha256.New, s.JWKS())
	mac.Write([]byte(input))
	hs := input + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	_, err = v.Verify(withToken(hs), testBody)
	wantErr(t, err, ErrBadSignature)

	// ES256 header on an RSA key.
	es := enc(map[string]string{"alg": "ES256", "typ": "JWT", "kid": s.KeyID()}) + "." + payload + "." + strings.Split(tok, ".")[2]
	_, err = v.Verify(withToken(es), testBody)
	wantErr(t, err, ErrBadSignature)

	// No kid.
	nokid := enc(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." + payload + "." + strings.Split(tok, ".")[2]
	_, err = v.Verify(withToken(nokid), testBody)
	wantErr(t, err, ErrBadSignature)
}

func TestMissingAndMalformedToken(t *testing.T) {
	v := NewVerifier(VerifierOptions{JWKSURL: "http://127.0.0.1:1/never-fetched"})
	r := httptest.NewRequest(http.MethodPost, testAud, nil)
	_, err := v.Verify(r, nil)
	wantErr(t, err, ErrMissingToken)
	for _, h := range []string{"Basic dXNlcjpwYXNz", "Bearer", "Bearer   ", "token"} {
		r.Header.Set("Authorization", h)
		_, err := v.Verify(r, nil)
		wantErr(t, err, ErrMissingToken)
	}
	for _, tok := range []string{"abc", "a.b", "a.b.c.d", "!!!.???.***", strings.Repeat("a", maxTokenBytes) + ".b.c"} {
		_, err := v.Verify(withToken(tok), nil)
		wantErr(t, err, ErrMalformed)
	}
}

func TestExpiredAndStale(t *testing.T) {
	now := time.Now()
	s := mustSigner(t, SignerOptions{})
	url, _ := jwksServer(t, s)
	verifier := func() *Verifier { return NewVerifier(VerifierOptions{JWKSURL: url}) }

	sign := func(at time.Time, ttl time.Duration) *http.Request {
		s.now = func() time.Time { return at }
		s.ttl = ttl
		defer func() { s.now, s.ttl = time.Now, DefaultTTL }()
		return notification(t, s, testAud, testBody)
	}

	// exp 5m ago.
	_, err := verifier().Verify(sign(now.Add(-10*time.Minute), 5*time.Minute), testBody)
	wantErr(t, err, ErrExpired)
	// exp 10s ago: inside the 30s leeway.
	if _, err := verifier().Verify(sign(now.Add(-5*time.Minute-10*time.Second), 5*time.Minute), testBody); err != nil {
		t.Fatalf("within leeway: %v", err)
	}
	// Not expired (1h TTL) but issued 10m ago: older than MaxAge.
	_, err = verifier().Verify(sign(now.Add(-10*time.Minute), time.Hour), testBody)
	wantErr(t, err, ErrStale)
	// Issued 2m in the future.
	_, err = verifier().Verify(sign(now.Add(2*time.Minute), 5*time.Minute), testBody)
	wantErr(t, err, ErrStale)
	// A larger MaxAge accepts the 10-minute-old token.
	v := NewVerifier(VerifierOptions{JWKSURL: url, MaxAge: 15 * time.Minute})
	if _, err := v.Verify(sign(now.Add(-10*time.Minute), time.Hour), testBody); err != nil {
		t.Fatal(err)
	}
}

func TestReplay(t *testing.T) {
	s := mustSigner(t, SignerOptions{})
	url, _ := jwksServer(t, s)
	v := NewVerifier(VerifierOptions{JWKSURL: url})
	req := notification(t, s, testAud, testBody)
	if _, err := v.Verify(req, testBody); err != nil {
		t.Fatal(err)
	}
	_, err := v.Verify(req, testBody)
	wantErr(t, err, ErrReplay)
	// The same body in a new notification has a new jti.
	if _, err := v.Verify(notification(t, s, testAud, testBody), testBody); err != nil {
		t.Fatal(err)
	}
	// Replay detection can be turned off.
	off := NewVerifier(VerifierOptions{JWKSURL: url, ReplayCacheSize: -1})
	for range 2 {
		if _, err := off.Verify(req, testBody); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReplayCache(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	c := newReplayCache(2)
	if c.seen("a", t0, t0.Add(time.Minute)) || !c.seen("a", t0.Add(time.Second), t0.Add(time.Minute)) {
		t.Fatal("a")
	}
	// Expired entries are forgotten: a jti past its window is not a replay
	// (the iat/exp checks refuse such a token anyway).
	if c.seen("a", t0.Add(2*time.Minute), t0.Add(3*time.Minute)) {
		t.Fatal("expired a")
	}
	c.seen("b", t0.Add(2*time.Minute), t0.Add(3*time.Minute))
	c.seen("c", t0.Add(2*time.Minute), t0.Add(3*time.Minute)) // evicts a, the oldest
	if len(c.until) > 2 || len(c.order) > 2 {
		t.Fatalf("cache grew: %v %v", c.until, c.order)
	}
	if !c.seen("c", t0.Add(2*time.Minute), t0.Add(3*time.Minute)) || !c.seen("b", t0.Add(2*time.Minute), t0.Add(3*time.Minute)) {
		t.Fatal("b, c forgotten")
	}
}

func TestAudienceAndIssuer(t *testing.T) {
	s := mustSigner(t, SignerOptions{Issuer: testIssuer})
	url, _ := jwksServer(t, s)

	v := NewVerifier(VerifierOptions{JWKSURL: url, Audience: "https://other.example.com/hook"})
	_, err := v.Verify(notification(t, s, testAud, testBody), testBody)
	wantErr(t, err, ErrAudience)

	v = NewVerifier(VerifierOptions{JWKSURL: url, Issuer: "https://evil.example.com"})
	_, err = v.Verify(notification(t, s, testAud, testBody), testBody)
	wantErr(t, err, ErrIssuer)

	// No Audience/Issuer configured: not checked; Claims.Audience is the token's.
	v = NewVerifier(VerifierOptions{JWKSURL: url})
	c, err := v.Verify(notification(t, s, "https://anything.example/", testBody), testBody)
	if err != nil || c.Audience != "https://anything.example/" || c.Issuer != testIssuer {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestUnknownKidRefetch(t *testing.T) {
	s := mustSigner(t, SignerOptions{})
	url, fetches := jwksServer(t, s)
	const interval = 300 * time.Millisecond
	v := NewVerifier(VerifierOptions{JWKSURL: url, MinRefetchInterval: interval})

	old := notification(t, s, testAud, testBody)
	if _, err := v.Verify(old, testBody); err != nil {
		t.Fatal(err)
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d, want 1", n)
	}
	// A known kid is answered from the cache.
	if _, err := v.Verify(notification(t, s, testAud, testBody), testBody); err != nil || fetches.Load() != 1 {
		t.Fatalf("err %v, fetches %d", err, fetches.Load())
	}

	// After a rotation the new kid is unknown: the verifier refetches
	// (waiting out the rate limit) and accepts it.
	if err := s.Rotate(); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(notification(t, s, testAud, testBody), testBody); err != nil {
		t.Fatal(err)
	}
	if n := fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d, want 2", n)
	}

	// A kid the sender never published: one more (rate-limited) fetch,
	// then ErrBadSignature.
	stranger := mustSigner(t, SignerOptions{})
	_, err := v.Verify(notification(t, stranger, testAud, testBody), testBody)
	wantErr(t, err, ErrBadSignature)
	if n := fetches.Load(); n != 3 {
		t.Fatalf("fetches = %d, want 3", n)
	}
	if d := fetches.At(3).Sub(fetches.At(2)); d < interval {
		t.Fatalf("refetch %v after the previous fetch, rate limit is %v", d, interval)
	}

	// A burst of unknown kids shares fetches instead of causing one each.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := v.Verify(notification(t, stranger, testAud, testBody), testBody)
			if !errors.Is(err, ErrBadSignature) {
				t.Errorf("burst: %v", err)
			}
		})
	}
	wg.Wait()
	if n := fetches.Load(); n > 5 {
		t.Fatalf("fetches = %d after a burst of 8 unknown kids, want at most 5", n)
	}

	// A caller whose context ends while rate-limited gets ErrKeysUnavailable.
	slow := NewVerifier(VerifierOptions{JWKSURL: url, MinRefetchInterval: time.Hour})
	if _, err := slow.Verify(notification(t, s, testAud, testBody), testBody); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	before := fetches.Load()
	_, err = slow.Verify(notification(t, stranger, testAud, testBody).WithContext(ctx), testBody)
	wantErr(t, err, ErrKeysUnavailable)
	if fetches.Load() != before {
		t.Fatal("a rate-limited verifier fetched")
	}
}

func TestKeysUnavailable(t *testing.T) {
	s := mustSigner(t, SignerOptions{})
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	v := NewVerifier(VerifierOptions{JWKSURL: srv.URL})
	_, err := v.Verify(notification(t, s, testAud, testBody), testBody)
	wantErr(t, err, ErrKeysUnavailable)

	_, err = NewVerifier(VerifierOptions{}).Verify(notification(t, s, testAud, testBody), testBody)
	wantErr(t, err, ErrKeysUnavailable)
}

func TestRotationGrace(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	sc := newClock(t0)
	s := mustSigner(t, SignerOptions{Now: sc.Now, RetireAfter: time.Hour})
	url, _ := jwksServer(t, s)
	// The receivers' clock stays at t0 so that only the key set changes.
	at := func() time.Time { return t0.Add(time.Second) }

	before := notification(t, s, testAud, testBody)
	if err := s.Rotate(); err != nil {
		t.Fatal(err)
	}
	after := notification(t, s, testAud, testBody)

	// During the grace period both keys are published.
	vc := newClock(at())
	v := NewVerifier(VerifierOptions{JWKSURL: url, Now: vc.Now, CacheTTL: time.Millisecond, MinRefetchInterval: time.Millisecond})
	for _, r := range []*http.Request{before, after} {
		if _, err := v.Verify(r, testBody); err != nil {
			t.Fatal(err)
		}
	}

	// After it, the old key is gone from the set: a fresh verifier refuses
	// the old token, and so does one whose cache has expired.
	sc.Add(time.Hour + time.Second)
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(s.JWKS(), &set); err != nil || len(set.Keys) != 1 || set.Keys[0]["kid"] != s.KeyID() {
		t.Fatalf("JWKS after grace = %s", s.JWKS())
	}
	fresh := NewVerifier(VerifierOptions{JWKSURL: url, Now: at})
	_, err := fresh.Verify(before, testBody)
	wantErr(t, err, ErrBadSignature)
	time.Sleep(5 * time.Millisecond)
	vc.Add(time.Hour + time.Second)
	_, err = v.Verify(notification(t, s, testAud, testBody), testBody) // refreshes the cache
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(before, testBody)
	wantErr(t, err, ErrBadSignature)
	if _, err := fresh.Verify(after, testBody); err != nil {
		t.Fatal(err)
	}
}

func TestPersistence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	t0 := time.Now()
	sc := newClock(t0)
	s1 := mustSigner(t, SignerOptions{Dir: dir, Now: sc.Now, RetireAfter: time.Hour})
	kid1 := s1.KeyID()
	tok1 := notification(t, s1, testAud, testBody)

	checkPerms := func() []string {
		t.Helper()
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("dir: %v %v", fi.Mode(), err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			info, _ := e.Info()
			if info.Mode().Perm() != 0o600 {
				t.Fatalf("%s has mode %v, want 0600", e.Name(), info.Mode().Perm())
			}
			names = append(names, e.Name())
		}
		return names
	}
	if names := checkPerms(); len(names) != 2 {
		t.Fatalf("files = %v", names)
	}

	// A restart keeps the kid, and the key verifies earlier tokens.
	s2 := mustSigner(t, SignerOptions{Dir: dir, Now: sc.Now, RetireAfter: time.Hour})
	if s2.KeyID() != kid1 || string(s2.JWKS()) != string(s1.JWKS()) {
		t.Fatalf("kid %s after restart, want %s", s2.KeyID(), kid1)
	}
	url, _ := jwksServer(t, s2)
	if _, err := NewVerifier(VerifierOptions{JWKSURL: url}).Verify(tok1, testBody); err != nil {
		t.Fatal(err)
	}

	// A rotation persists too: current and retired keys survive a restart.
	if err := s2.Rotate(); err != nil {
		t.Fatal(err)
	}
	kid2 := s2.KeyID()
	if names := checkPerms(); len(names) != 3 {
		t.Fatalf("files = %v", names)
	}
	s3 := mustSigner(t, SignerOptions{Dir: dir, Now: sc.Now, RetireAfter: time.Hour})
	if s3.KeyID() != kid2 || !strings.Contains(string(s3.JWKS()), kid1) {
		t.Fatalf("after restart: kid %s, JWKS %s", s3.KeyID(), s3.JWKS())
	}

	// Past the grace period the retired key leaves the set and the disk.
	sc.Add(time.Hour)
	s4 := mustSigner(t, SignerOptions{Dir: dir, Now: sc.Now, RetireAfter: time.Hour})
	if s4.KeyID() != kid2 || strings.Contains(string(s4.JWKS()), kid1) {
		t.Fatalf("after grace: kid %s, JWKS %s", s4.KeyID(), s4.JWKS())
	}
	if _, err := os.Stat(filepath.Join(dir, kid1+".pem")); !os.IsNotExist(err) {
		t.Fatalf("retired key file still there: %v", err)
	}
	if names := checkPerms(); len(names) != 2 {
		t.Fatalf("files = %v", names)
	}

	// A running signer drops it from disk as well.
	if err := s4.Rotate(); err != nil {
		t.Fatal(err)
	}
	kid3 := s4.KeyID()
	sc.Add(time.Hour)
	if strings.Contains(string(s4.JWKS()), kid2) {
		t.Fatal("expired key still published")
	}
	if _, err := os.Stat(filepath.Join(dir, kid2+".pem")); !os.IsNotExist(err) {
		t.Fatalf("expired key file still there: %v", err)
	}

	// Changing the algorithm rotates to a key of the new algorithm.
	s5 := mustSigner(t, SignerOptions{Dir: dir, Now: sc.Now, Algorithm: AlgRS256})
	if s5.KeyID() == kid3 || !strings.Contains(string(s5.JWKS()), kid3) || !strings.Contains(string(s5.JWKS()), `"RS256"`) {
		t.Fatalf("alg change: kid %s, JWKS %s", s5.KeyID(), s5.JWKS())
	}
	if s6 := mustSigner(t, SignerOptions{Dir: dir, Now: sc.Now, Algorithm: AlgRS256}); s6.KeyID() != s5.KeyID() {
		t.Fatal("RS256 key not persisted")
	}
}

func TestPersistenceRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	s := mustSigner(t, SignerOptions{Dir: dir})
	pemPath := filepath.Join(dir, s.KeyID()+".pem")

	if err := os.Chmod(pemPath, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSigner(SignerOptions{Dir: dir}); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("world-readable key accepted: %v", err)
	}
	if err := os.Chmod(pemPath, 0o600); err != nil {
		t.Fatal(err)
	}

	// A key file swapped for another key does not match its kid.
	other := mustSigner(t, SignerOptions{Dir: t.TempDir()})
	b, err := os.ReadFile(filepath.Join(other.dir, other.KeyID()+".pem"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pemPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSigner(SignerOptions{Dir: dir}); err == nil {
		t.Fatal("mismatched key file accepted")
	}
}

func TestConcurrentUse(t *testing.T) {
	s := mustSigner(t, SignerOptions{})
	url, _ := jwksServer(t, s)
	v := NewVerifier(VerifierOptions{JWKSURL: url, MinRefetchInterval: time.Millisecond})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 10 {
				if i == 0 {
					if err := s.Rotate(); err != nil {
						t.Error(err)
					}
				}
				_ = s.JWKS()
				req := notification(t, s, testAud, testBody)
				if _, err := v.Verify(req, testBody); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}
