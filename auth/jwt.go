package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/a2abridge/a2abridge/a2a"
)

// Defaults of [JWTOptions].
const (
	// DefaultClockSkew is the leeway for "exp", "nbf" and "iat".
	DefaultClockSkew = 30 * time.Second
	// DefaultRefreshInterval is how long a fetched JWKS is used.
	DefaultRefreshInterval = 15 * time.Minute
	// DefaultMinRefreshInterval is the minimum time between two JWKS
	// fetches caused by unknown key ids.
	DefaultMinRefreshInterval = time.Minute
	// DefaultSubjectClaim is the claim that names the principal.
	DefaultSubjectClaim = "sub"
)

// JWTOptions configure [NewJWT]. One of JWKSURL and Issuer is required, and
// so is Audience.
type JWTOptions struct {
	// JWKSURL is the URL of the JSON Web Key Set (RFC 7517 §5) holding the
	// issuer's public signing keys. If empty, it is found by OpenID Connect
	// discovery of Issuer: the "jwks_uri" of
	// <Issuer>/.well-known/openid-configuration (OpenID Connect Discovery
	// 1.0 §4), whose "issuer" must equal Issuer.
	JWKSURL string

	// Issuer is the expected "iss" claim, compared exactly. If empty (only
	// allowed with JWKSURL), "iss" is not checked.
	Issuer string

	// Audience lists the accepted audiences: the token's "aud" (a string or
	// an array of strings) must contain at least one of them. Required, so
	// that tokens minted by the same issuer for other services are refused.
	Audience []string

	// ClockSkew is the leeway allowed when checking "exp", "nbf" and "iat".
	// 0 means [DefaultClockSkew] (30s); it must not be negative.
	ClockSkew time.Duration

	// HTTPClient fetches the discovery document and the JWKS. nil means a
	// client with a 10 s timeout.
	HTTPClient *http.Client

	// SubjectClaim names the claim used as [Principal].Subject; it must be
	// a non-empty string in every token. "" means "sub".
	SubjectClaim string

	// RefreshInterval is how long a fetched JWKS is used before it is
	// fetched again (on the next request after that). 0 means
	// [DefaultRefreshInterval] (15 min).
	RefreshInterval time.Duration

	// MinRefreshInterval rate-limits the extra fetches of the JWKS caused by
	// tokens whose "kid" is not in the cached set (key rotation): at most
	// one per MinRefreshInterval. It also spaces out retries after a failed
	// fetch. 0 means [DefaultMinRefreshInterval] (1 min).
	MinRefreshInterval time.Duration
}

// allowedAlgs are the JWS algorithms accepted for tokens. "none" and the
// HMAC algorithms (HS256/384/512) are never accepted.
var allowedAlgs = map[string]jwa.SignatureAlgorithm{
	"RS256": jwa.RS256(), "RS384": jwa.RS384(), "RS512": jwa.RS512(),
	"PS256": jwa.PS256(), "PS384": jwa.PS384(), "PS512": jwa.PS512(),
	"ES256": jwa.ES256(), "ES384": jwa.ES384(), "ES512": jwa.ES512(),
	"EdDSA": jwa.EdDSA(), "Ed25519": jwa.EdDSAEd25519(),
}

// jwtAuth is the Authenticator of NewJWT.
type jwtAuth struct {
	name     string
	issuer   string
	audience []string
	skew     time.Duration
	subject  string
	keys     *keySource
	now      func() time.Time
}

// NewJWT returns an [Authenticator] for JWT bearer tokens (RFC 7519) sent as
// "Authorization: Bearer <jwt>", verified against the issuer's JWKS.
//
// A token is accepted when all of these hold:
//   - it is a compact JWS whose protected header "alg" is one of RS256,
//     RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA or
//     Ed25519 ("none" and HS256/384/512 are always refused, as are tokens
//     with a "crit" header);
//   - its signature verifies with a key of the JWKS: the key with the
//     header's "kid" (or, without "kid", any key), whose "alg" (if the JWK
//     has one) equals the header's and whose "use" (if any) is "sig".
//     Symmetric ("oct") keys in the JWKS are ignored. URLs in the token
//     ("jku", "x5u") are never followed;
//   - "exp" is present and in the future, "nbf" and "iat" (if present) are
//     not in the future, each with [JWTOptions].ClockSkew of leeway;
//   - "iss" equals Issuer (if set) and "aud" contains one of Audience;
//   - the subject claim is a non-empty string.
//
// The JWKS (and the discovery document) is fetched on first use, not by
// NewJWT, and cached. It is fetched again after RefreshInterval, and at once
// (at most once per MinRefreshInterval) when a token names a "kid" the
// cached set lacks, so a newly rotated-in key is picked up. If a refresh
// fails the previous set stays in use. No goroutines are started.
//
// Failures wrap ErrNoCredentials (no bearer token), ErrInvalidCredentials
// (with a client-safe reason such as "token expired", "wrong audience",
// "unknown signing key") or ErrUnavailable (no JWKS could be fetched).
// The card scheme is {"type":"http","scheme":"bearer","bearerFormat":"JWT"}
// and the challenge `Bearer realm="a2a"`. NewJWT returns an error for an
// empty name, no JWKSURL nor Issuer, a URL that is not absolute http(s),
// an empty Audience or negative durations.
func NewJWT(name string, o JWTOptions) (Authenticator, error) {
	if name == "" {
		return nil, errors.New("auth: empty scheme name")
	}
	if o.JWKSURL == "" && o.Issuer == "" {
		return nil, errors.New("auth: JWT: JWKSURL or Issuer is required")
	}
	if o.JWKSURL != "" {
		if err := checkURL(o.JWKSURL); err != nil {
			return nil, fmt.Errorf("auth: JWT: JWKSURL: %w", err)
		}
	} else if err := checkURL(o.Issuer); err != nil {
		return nil, fmt.Errorf("auth: JWT: Issuer (used for discovery): %w", err)
	}
	if len(o.Audience) == 0 || slices.Contains(o.Audience, "") {
		return nil, errors.New("auth: JWT: Audience is required and must not contain empty strings")
	}
	if o.ClockSkew < 0 || o.RefreshInterval < 0 || o.MinRefreshInterval < 0 {
		return nil, errors.New("auth: JWT: durations must not be negative")
	}
	if o.ClockSkew == 0 {
		o.ClockSkew = DefaultClockSkew
	}
	if o.RefreshInterval == 0 {
		o.RefreshInterval = DefaultRefreshInterval
	}
	if o.MinRefreshInterval == 0 {
		o.MinRefreshInterval = DefaultMinRefreshInterval
	}
	if o.SubjectClaim == "" {
		o.SubjectClaim = DefaultSubjectClaim
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	j := &jwtAuth{
		name:     name,
		issuer:   o.Issuer,
		audience: slices.Clone(o.Audience),
		skew:     o.ClockSkew,
		subject:  o.SubjectClaim,
		now:      time.Now,
	}
	j.keys = &keySource{
		client:       o.HTTPClient,
		jwksURL:      o.JWKSURL,
		issuer:       o.Issuer,
		refreshEvery: o.RefreshInterval,
		minRefresh:   o.MinRefreshInterval,
		now:          func() time.Time { return j.now() },
	}
	return j, nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	return nil
}

func (j *jwtAuth) Name() string { return j.name }

func (j *jwtAuth) SecurityScheme() a2a.SecurityScheme {
	d := "JWT bearer token: Authorization: Bearer <jwt>"
	if j.issuer != "" {
		d = "JWT bearer token issued by " + j.issuer + ": Authorization: Bearer <jwt>"
	}
	return a2a.HTTPAuthSecurityScheme{Scheme: "bearer", BearerFormat: "JWT", Description: d}
}

func (j *jwtAuth) Challenge() string { return bearerChallenge }

// joseHeader is the part of the JOSE header read before verification.
type joseHeader struct {
	alg, kid string
}

// parseHeader decodes the protected header of a compact JWS. Member names
// are matched exactly (encoding/json's struct matching is case-insensitive).
func parseHeader(tok string) (joseHeader, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return joseHeader{}, errors.New("not a compact JWS")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return joseHeader{}, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return joseHeader{}, err
	}
	var h joseHeader
	if v, ok := m["alg"]; ok {
		if err := json.Unmarshal(v, &h.alg); err != nil {
			return joseHeader{}, err
		}
	}
	if v, ok := m["kid"]; ok {
		if err := json.Unmarshal(v, &h.kid); err != nil {
			return joseHeader{}, err
		}
	}
	return h, nil
}

func (j *jwtAuth) Authenticate(r *http.Request) (*Principal, error) {
	tok, err := bearerToken(j.name, r)
	if err != nil {
		return nil, err
	}
	hdr, err := parseHeader(tok)
	if err != nil {
		return nil, unrecognised(j.name, "malformed token")
	}
	alg, ok := allowedAlgs[hdr.alg]
	if !ok {
		return nil, invalid(j.name, "unsupported signing algorithm")
	}
	keys, err := j.keys.candidates(r.Context(), hdr.kid)
	if err != nil {
		return nil, unavailable(j.name, err)
	}
	if len(keys) == 0 {
		return nil, invalid(j.name, "unknown signing key")
	}
	var payload []byte
	tried := 0
	for _, k := range keys {
		if k.alg != "" && k.alg != hdr.alg {
			continue
		}
		tried++
		if p, err := jws.VerifyCompactFast(k.key, []byte(tok), alg); err == nil {
			payload = p
			break
		}
	}
	switch {
	case tried == 0:
		return nil, invalid(j.name, "signing algorithm does not match the key")
	case payload == nil:
		return nil, invalid(j.name, "invalid signature")
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil || claims == nil {
		return nil, invalid(j.name, "malformed claims")
	}
	subj, reason := j.validate(claims)
	if reason != "" {
		return nil, invalid(j.name, reason)
	}
	return &Principal{Subject: subj, Scheme: j.name, Claims: claims}, nil
}

// validate checks the registered claims (RFC 7519 §4.1) and returns the
// subject, or a client-safe reason for refusing the token.
func (j *jwtAuth) validate(c map[string]any) (subject, reason string) {
	now := j.now()
	exp, ok, bad := numericDate(c, "exp")
	switch {
	case bad:
		return "", "malformed exp claim"
	case !ok:
		return "", "token has no exp claim"
	case !now.Before(exp.Add(j.skew)):
		return "", "token expired"
	}
	if nbf, ok, bad := numericDate(c, "nbf"); bad {
		return "", "malformed nbf claim"
	} else if ok && now.Add(j.skew).Before(nbf) {
		return "", "token not yet valid"
	}
	if iat, ok, bad := numericDate(c, "iat"); bad {
		return "", "malformed iat claim"
	} else if ok && now.Add(j.skew).Before(iat) {
		return "", "token issued in the future"
	}
	if j.issuer != "" {
		if iss, _ := c["iss"].(string); iss != j.issuer {
			return "", "wrong issuer"
		}
	}
	if !j.audienceOK(c["aud"]) {
		return "", "wrong audience"
	}
	subject, _ = c[j.subject].(string)
	if subject == "" {
		return "", "token has no " + j.subject + " claim"
	}
	return subject, ""
}

func (j *jwtAuth) audienceOK(aud any) bool {
	switch aud := aud.(type) {
	case string:
		return slices.Contains(j.audience, aud)
	case []any:
		for _, a := range aud {
			if s, ok := a.(string); ok && slices.Contains(j.audience, s) {
				return true
			}
		}
	}
	return false
}

// maxNumericDate is 9999-12-31T23:59:59Z; larger values are refused.
const maxNumericDate = 253402300799

// numericDate reads a NumericDate claim (RFC 7519 §2): ok reports presence,
// bad a value that is not a number in range.
func numericDate(c map[string]any, name string) (t time.Time, ok, bad bool) {
	v, present := c[name]
	if !present {
		return time.Time{}, false, false
	}
	f, isNum := v.(float64)
	if !isNum || math.IsNaN(f) || math.Abs(f) > maxNumericDate {
		return time.Time{}, false, true
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, false
}
