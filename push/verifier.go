package push

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// HeaderNotificationToken is the header in which an A2A server sends the
// client's opaque PushNotificationConfig.token with every notification
// (A2A 0.3.0 §9.5 step 3).
const HeaderNotificationToken = "X-A2A-Notification-Token"

// Token returns the X-A2A-Notification-Token header of a notification
// request ("" when absent). Compare it with [TokenEqual].
func Token(r *http.Request) string { return r.Header.Get(HeaderNotificationToken) }

// TokenEqual reports, in constant time, whether the request's
// X-A2A-Notification-Token header equals want, the token the client put in
// its PushNotificationConfig. An empty want never matches.
func TokenEqual(r *http.Request, want string) bool {
	got := Token(r)
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// Defaults of [VerifierOptions].
const (
	// DefaultMaxAge is how old, by default, a token's iat may be.
	DefaultMaxAge = 5 * time.Minute
	// DefaultLeeway is the default clock skew tolerated on exp, iat and nbf.
	DefaultLeeway = 30 * time.Second
	// DefaultReplayCacheSize is how many recent jti values a Verifier
	// remembers by default.
	DefaultReplayCacheSize = 100_000
	// DefaultCacheTTL is how long, by default, a fetched JWK Set is used
	// before it is fetched again.
	DefaultCacheTTL = 10 * time.Minute
	// DefaultMinRefetchInterval is the default minimum time between two
	// fetches of the JWK Set.
	DefaultMinRefetchInterval = time.Second
	// maxJWKSBytes bounds the size of a fetched JWK Set.
	maxJWKSBytes = 1 << 20
	// maxTokenBytes bounds the size of a bearer token.
	maxTokenBytes = 16 << 10
)

// VerifierOptions configures [NewVerifier]. Only JWKSURL is needed; the
// zero value of every other field selects its default.
type VerifierOptions struct {
	// JWKSURL is where the sender's JWK Set is fetched (for an a2abridge
	// server, its Signer's Handler). Without it every Verify fails with
	// ErrKeysUnavailable.
	JWKSURL string
	// Audience is the expected aud: this receiver's webhook URL, exactly as
	// given in PushNotificationConfig.url. "" skips the check.
	Audience string
	// Issuer is the expected iss. "" skips the check.
	Issuer string
	// MaxAge is the oldest iat accepted (plus Leeway), and how long a jti is
	// remembered. Default [DefaultMaxAge] (5m).
	MaxAge time.Duration
	// Leeway is the clock skew tolerated on exp, iat and nbf. Default
	// [DefaultLeeway] (30s); negative means none.
	Leeway time.Duration
	// HTTPClient fetches the JWK Set. Default: a client with a 10s timeout.
	HTTPClient *http.Client
	// ReplayCacheSize bounds how many jti values are remembered. Default
	// [DefaultReplayCacheSize]; negative disables replay detection. When full,
	// the oldest entry is forgotten first.
	ReplayCacheSize int
	// CacheTTL is how long a fetched JWK Set is trusted before it is fetched
	// again (a key removed from the set is refused after that). Default
	// [DefaultCacheTTL] (10m). If that fetch fails, the cached keys stay in use.
	CacheTTL time.Duration
	// MinRefetchInterval rate-limits fetches of the JWK Set: a token with an
	// unknown kid waits until this long after the previous fetch, and
	// concurrent waiters share one fetch. Default
	// [DefaultMinRefetchInterval] (1s).
	MinRefetchInterval time.Duration
	// Now is the clock used to check exp, iat, nbf and replay; default
	// time.Now. (Fetch caching and rate limiting use the real clock.)
	Now func() time.Time
}

// Claims are the verified claims of a notification token.
type Claims struct {
	// Issuer is the iss claim ("" when absent).
	Issuer string
	// Audience is the aud claim: VerifierOptions.Audience when that is set
	// (it matched), otherwise the first audience in the token.
	Audience string
	// TaskID is the taskId claim: the task the notification is about.
	TaskID string
	// JTI is the jti claim, unique per notification.
	JTI string
	// IssuedAt is the iat claim.
	IssuedAt time.Time
	// Expires is the exp claim.
	Expires time.Time
}

// Verifier checks the JWTs that an A2A server sends with push notifications
// (the receiver side of the A2A 0.3.0 push notification security guidance:
// signature against the sender's JWKS, iss, aud, iat, exp, jti replay), plus
// the request_body_sha256 claim that binds a token to its body. Create it
// with [NewVerifier]; it is safe for concurrent use.
type Verifier struct {
	o      VerifierOptions
	now    func() time.Time
	client *http.Client

	// sem serialises fetches of the JWK Set (a 1-slot semaphore that a
	// waiter can leave when its context ends).
	sem chan struct{}

	mu          sync.Mutex
	keys        map[string]verifyKey
	fetched     time.Time // last successful fetch (real clock)
	lastAttempt time.Time // last fetch attempt (real clock)
	lastErr     error     // error of the last attempt
	// started counts the fetches begun; doneStarted is started's value
	// when the latest finished fetch began: a fetch that began before a
	// call saw a kid unknown may not have the key yet.
	started, doneStarted uint64

	replay *replayCache
}

// verifyKey is one public key of the sender's JWK Set.
type verifyKey struct {
	alg string // "" when the JWK has no alg member
	raw any    // *ecdsa.PublicKey or *rsa.PublicKey
}

// NewVerifier returns a Verifier for the given options, with defaults
// applied. It does not fetch anything until the first Verify.
func NewVerifier(o VerifierOptions) *Verifier {
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.Leeway == 0 {
		o.Leeway = DefaultLeeway
	}
	if o.Leeway < 0 {
		o.Leeway = 0
	}
	if o.ReplayCacheSize == 0 {
		o.ReplayCacheSize = DefaultReplayCacheSize
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = DefaultCacheTTL
	}
	if o.MinRefetchInterval <= 0 {
		o.MinRefetchInterval = DefaultMinRefetchInterval
	}
	v := &Verifier{o: o, now: o.Now, client: o.HTTPClient, sem: make(chan struct{}, 1)}
	if v.now == nil {
		v.now = time.Now
	}
	if v.client == nil {
		v.client = &http.Client{Timeout: 10 * time.Second}
	}
	if o.ReplayCacheSize > 0 {
		v.replay = newReplayCache(o.ReplayCacheSize)
	}
	return v
}

// Verify authenticates one notification request whose body the caller has
// already read (body must be those exact bytes). It reads
// "Authorization: Bearer <jwt>", verifies the JWS signature (ES256 or RS256)
// with the key named by the header's kid in the sender's JWK Set (fetched
// and cached; an unknown kid triggers a rate-limited refetch), then checks,
// in this order: exp, iat (not older than MaxAge, not in the future), nbf
// when present, aud and iss when configured, request_body_sha256 against
// body, and finally that the jti was not accepted before. The returned error
// wraps one of ErrMissingToken, ErrMalformed, ErrBadSignature,
// ErrKeysUnavailable, ErrExpired, ErrStale, ErrAudience, ErrIssuer,
// ErrBodyMismatch or ErrReplay. The jti is remembered only when every check
// passed. The JWK Set is fetched with r's context. This is the "Validates
// the Authorization header" duty of A2A 0.3.0 §9.5 step 4; check the
// X-A2A-Notification-Token with [TokenEqual] as well.
func (v *Verifier) Verify(r *http.Request, body []byte) (*Claims, error) {
	tok, ok := bearerToken(r)
	if !ok {
		return nil, ErrMissingToken
	}
	if len(tok) > maxTokenBytes || strings.Count(tok, ".") != 2 {
		return nil, fmt.Errorf("%w: not a compact JWS", ErrMalformed)
	}
	msg, err := jws.Parse([]byte(tok), jws.WithCompact())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	sigs := msg.Signatures()
	if len(sigs) != 1 {
		return nil, fmt.Errorf("%w: %d signatures", ErrMalformed, len(sigs))
	}
	hdr := sigs[0].ProtectedHeaders()
	alg, ok := hdr.Algorithm()
	if !ok || (alg.String() != AlgES256 && alg.String() != AlgRS256) {
		return nil, fmt.Errorf("%w: algorithm %q is not accepted", ErrBadSignature, alg.String())
	}
	if typ, ok := hdr.Type(); ok && !strings.EqualFold(typ, "JWT") {
		return nil, fmt.Errorf("%w: typ %q", ErrMalformed, typ)
	}
	if crit, ok := hdr.Critical(); ok && len(crit) > 0 {
		return nil, fmt.Errorf("%w: unsupported critical header parameters %q", ErrMalformed, crit)
	}
	kid, _ := hdr.KeyID()
	if kid == "" {
		return nil, fmt.Errorf("%w: no kid in the header", ErrBadSignature)
	}
	key, err := v.key(r.Context(), kid)
	if err != nil {
		return nil, err
	}
	if key.alg != "" && key.alg != alg.String() {
		return nil, fmt.Errorf("%w: key %s is for %s, the token says %s", ErrBadSignature, kid, key.alg, alg.String())
	}
	payload, err := jws.Verify([]byte(tok), jws.WithKey(alg, key.raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}

	c, err := parseClaims(payload)
	if err != nil {
		return nil, err
	}
	now := v.now()
	lee := v.o.Leeway
	if now.After(c.exp.Add(lee)) {
		return nil, fmt.Errorf("%w: exp %s", ErrExpired, c.exp.UTC().Format(time.RFC3339))
	}
	if c.iat.After(now.Add(lee)) {
		return nil, fmt.Errorf("%w: iat %s is in the future", ErrStale, c.iat.UTC().Format(time.RFC3339))
	}
	if now.Sub(c.iat) > v.o.MaxAge+lee {
		return nil, fmt.Errorf("%w: iat %s is older than %v", ErrStale, c.iat.UTC().Format(time.RFC3339), v.o.MaxAge)
	}
	if c.hasNbf && c.nbf.After(now.Add(lee)) {
		return nil, fmt.Errorf("%w: nbf %s is in the future", ErrStale, c.nbf.UTC().Format(time.RFC3339))
	}
	aud := ""
	if len(c.aud) > 0 {
		aud = c.aud[0]
	}
	if v.o.Audience != "" {
		found := false
		for _, a := range c.aud {
			if a == v.o.Audience {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: aud %q, want %q", ErrAudience, c.aud, v.o.Audience)
		}
		aud = v.o.Audience
	}
	if v.o.Issuer != "" && c.iss != v.o.Issuer {
		return nil, fmt.Errorf("%w: iss %q, want %q", ErrIssuer, c.iss, v.o.Issuer)
	}
	want, err := hex.DecodeString(c.bodySHA256)
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("%w: request_body_sha256 is not 64 hex digits", ErrMalformed)
	}
	sum := sha256.Sum256(body)
	if subtle.ConstantTimeCompare(sum[:], want) != 1 {
		return nil, ErrBodyMismatch
	}
	if v.replay != nil {
		until := c.iat.Add(v.o.MaxAge)
		if c.exp.After(until) {
			until = c.exp
		}
		if v.replay.seen(c.jti, now, until.Add(lee)) {
			return nil, fmt.Errorf("%w: jti %s", ErrReplay, c.jti)
		}
	}
	return &Claims{
		Issuer:   c.iss,
		Audience: aud,
		TaskID:   c.taskID,
		JTI:      c.jti,
		IssuedAt: c.iat,
		Expires:  c.exp,
	}, nil
}

// bearerToken extracts the token of "Authorization: Bearer <token>" (the
// scheme is case-insensitive, RFC 7235 §2.1).
func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// parsedClaims are the claims Verify checks.
type parsedClaims struct {
	iss, jti, taskID, bodySHA256 string
	aud                          []string
	iat, exp, nbf                time.Time
	hasNbf                       bool
}

// parseClaims decodes the JWT claims set. JSON member names are matched
// case-sensitively and duplicate names are refused.
func parseClaims(payload []byte) (parsedClaims, error) {
	var w struct {
		Iss        *string        `json:"iss"`
		Aud        jsontext.Value `json:"aud"`
		Iat        *float64       `json:"iat"`
		Exp        *float64       `json:"exp"`
		Nbf        *float64       `json:"nbf"`
		JTI        *string        `json:"jti"`
		TaskID     *string        `json:"taskId"`
		BodySHA256 *string        `json:"request_body_sha256"`
	}
	var c parsedClaims
	if err := json.Unmarshal(payload, &w); err != nil {
		return c, fmt.Errorf("%w: claims: %v", ErrMalformed, err)
	}
	switch {
	case w.Iat == nil:
		return c, fmt.Errorf("%w: no iat claim", ErrMalformed)
	case w.Exp == nil:
		return c, fmt.Errorf("%w: no exp claim", ErrMalformed)
	case w.JTI == nil || *w.JTI == "":
		return c, fmt.Errorf("%w: no jti claim", ErrMalformed)
	case w.BodySHA256 == nil:
		return c, fmt.Errorf("%w: no request_body_sha256 claim", ErrMalformed)
	}
	var ok bool
	if c.iat, ok = numericDate(*w.Iat); !ok {
		return c, fmt.Errorf("%w: bad iat", ErrMalformed)
	}
	if c.exp, ok = numericDate(*w.Exp); !ok {
		return c, fmt.Errorf("%w: bad exp", ErrMalformed)
	}
	if w.Nbf != nil {
		if c.nbf, ok = numericDate(*w.Nbf); !ok {
			return c, fmt.Errorf("%w: bad nbf", ErrMalformed)
		}
		c.hasNbf = true
	}
	if w.Iss != nil {
		c.iss = *w.Iss
	}
	if w.TaskID != nil {
		c.taskID = *w.TaskID
	}
	c.jti, c.bodySHA256 = *w.JTI, *w.BodySHA256
	switch w.Aud.Kind() {
	case 0: // absent
	case '"':
		var a string
		if err := json.Unmarshal(w.Aud, &a); err != nil {
			return c, fmt.Errorf("%w: aud: %v", ErrMalformed, err)
		}
		c.aud = []string{a}
	case '[':
		if err := json.Unmarshal(w.Aud, &c.aud); err != nil {
			return c, fmt.Errorf("%w: aud: %v", ErrMalformed, err)
		}
	default:
		return c, fmt.Errorf("%w: aud must be a string or an array of strings", ErrMalformed)
	}
	return c, nil
}

// numericDate converts a JWT NumericDate (RFC 7519 §2, seconds since the
// epoch, possibly fractional) to a time.
func numericDate(f float64) (time.Time, bool) {
	if math.IsNaN(f) || f < 0 || f > 1e11 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}

// key returns the sender's public key kid. A known kid of a fresh set is
// answered from the cache. A known kid of a set older than CacheTTL
// triggers a refresh if no fetch is running and the rate limit allows;
// the cached key is used if that fails. An unknown kid waits for its turn
// and the rate limit, then refetches, unless a fetch completed meanwhile.
func (v *Verifier) key(ctx context.Context, kid string) (verifyKey, error) {
	if v.o.JWKSURL == "" {
		return verifyKey{}, fmt.Errorf("%w: no JWKS URL configured", ErrKeysUnavailable)
	}
	k, known, fresh, gen := v.peek(kid)
	if known && fresh {
		return k, nil
	}
	if known {
		select {
		case v.sem <- struct{}{}:
			v.mu.Lock()
			due := time.Since(v.lastAttempt) >= v.o.MinRefetchInterval
			v.mu.Unlock()
			if due {
				_ = v.fetch(ctx) // on error the cached set stays
			}
			<-v.sem
		default: // a fetch is running: use the cached key meanwhile
		}
		if k, known, _, _ = v.peek(kid); known {
			return k, nil
		}
		return verifyKey{}, fmt.Errorf("%w: key %s is no longer in the sender's key set", ErrBadSignature, kid)
	}

	select {
	case v.sem <- struct{}{}:
	case <-ctx.Done():
		return verifyKey{}, fmt.Errorf("%w: waiting for the key set: %w", ErrKeysUnavailable, ctx.Err())
	}
	defer func() { <-v.sem }()
	k, known, _, _ = v.peek(kid)
	if known {
		return k, nil
	}
	v.mu.Lock()
	fetchedSince := v.doneStarted > gen
	v.mu.Unlock()
	if fetchedSince {
		// A fetch that began after this call saw kid unknown has
		// finished meanwhile, and did not have it.
		return verifyKey{}, v.unknownKid(kid)
	}
	v.mu.Lock()
	wait := v.o.MinRefetchInterval - time.Since(v.lastAttempt)
	v.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return verifyKey{}, fmt.Errorf("%w: waiting to refetch the key set: %w", ErrKeysUnavailable, ctx.Err())
		}
	}
	_ = v.fetch(ctx)
	if k, known, _, _ = v.peek(kid); known {
		return k, nil
	}
	return verifyKey{}, v.unknownKid(kid)
}

// unknownKid is the error for a kid absent after the latest fetch:
// ErrKeysUnavailable if that fetch failed, else ErrBadSignature.
func (v *Verifier) unknownKid(kid string) error {
	v.mu.Lock()
	err := v.lastErr
	v.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKeysUnavailable, err)
	}
	return fmt.Errorf("%w: unknown kid %q", ErrBadSignature, kid)
}

// peek looks kid up in the cache.
func (v *Verifier) peek(kid string) (k verifyKey, known, fresh bool, gen uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k, known = v.keys[kid]
	fresh = !v.fetched.IsZero() && time.Since(v.fetched) < v.o.CacheTTL
	return k, known, fresh, v.started
}

// fetch downloads and parses the JWK Set, replacing the cache on success.
// The caller holds sem.
func (v *Verifier) fetch(ctx context.Context) error {
	v.mu.Lock()
	v.started++
	began := v.started
	v.mu.Unlock()
	keys, err := v.download(ctx)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.doneStarted = began
	v.lastAttempt = time.Now()
	v.lastErr = err
	if err == nil {
		v.keys = keys
		v.fetched = v.lastAttempt
	}
	return err
}

// download GETs JWKSURL and keeps the usable signature keys: EC P-256 and
// RSA (at least 2048 bits) keys that have a kid and whose use, if present,
// is "sig". A private key's public half is used.
func (v *Verifier) download(ctx context.Context) (map[string]verifyKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.o.JWKSURL, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching the key set: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the key set: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the key set %s: HTTP %s", v.o.JWKSURL, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fetching the key set: %w", err)
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("fetching the key set %s: larger than %d bytes", v.o.JWKSURL, maxJWKSBytes)
	}
	return parseJWKS(b)
}

// parseJWKS decodes a JWK Set into usable verification keys by kid.
func parseJWKS(b []byte) (map[string]verifyKey, error) {
	set, err := jwk.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("parsing the key set: %w", err)
	}
	keys := make(map[string]verifyKey, set.Len())
	for i := range set.Len() {
		k, ok := set.Key(i)
		if !ok {
			continue
		}
		kid, _ := k.KeyID()
		if kid == "" {
			continue
		}
		if use, ok := k.KeyUsage(); ok && use != "sig" {
			continue
		}
		var alg string
		if a, ok := k.Algorithm(); ok {
			alg = a.String()
		}
		var raw any
		if err := jwk.Export(k, &raw); err != nil {
			continue
		}
		switch p := raw.(type) {
		case *ecdsa.PrivateKey:
			raw = &p.PublicKey
		case *rsa.PrivateKey:
			raw = &p.PublicKey
		}
		switch p := raw.(type) {
		case *ecdsa.PublicKey:
			if p.Curve != elliptic.P256() || (alg != "" && alg != AlgES256) {
				continue
			}
		case *rsa.PublicKey:
			if p.N.BitLen() < rsaBits || (alg != "" && alg != AlgRS256) {
				continue
			}
		default:
			continue
		}
		keys[kid] = verifyKey{alg: alg, raw: raw}
	}
	return keys, nil
}

// replayCache remembers accepted jti values until they expire, bounded in
// size (oldest insertions are forgotten first).
type replayCache struct {
	mu    sync.Mutex
	max   int
	until map[string]time.Time
	order []string // insertion order
}

func newReplayCache(max int) *replayCache {
	return &replayCache{max: max, until: make(map[string]time.Time)}
}

// seen reports whether jti is remembered and not expired at now; if not, it
// remembers it until the given time.
func (c *replayCache) seen(jti string, now, until time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u, ok := c.until[jti]; ok && now.Before(u) {
		return true
	}
	for len(c.order) > 0 {
		head := c.order[0]
		u, ok := c.until[head]
		if ok && now.Before(u) && len(c.until) < c.max {
			break
		}
		delete(c.until, head)
		c.order = c.order[1:]
	}
	if _, ok := c.until[jti]; !ok {
		c.order = append(c.order, jti)
	}
	c.until[jti] = until
	return false
}
