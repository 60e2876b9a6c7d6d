package client

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/cardsig"
	wirecard "github.com/a2abridge/a2abridge/internal/wire/card"
)

// Errors of Agent Card signature verification (A2A 1.0 §8.4.3). A
// *CardSignatureError wraps one or more of them (errors.Is finds each).
var (
	// ErrCardNotSigned: the card has no signatures.
	ErrCardNotSigned = cardsig.ErrNoSignatures
	// ErrCardSignatureMalformed: a signature is not a valid JWS
	// (bad base64url, a protected header without alg, typ or kid, crit
	// or b64 present, oversized), or the card itself is not a valid A2A
	// 1.0 AgentCard document (for example a security scheme without any
	// of the five A2A 1.0 wrappers, which the signature cannot cover).
	ErrCardSignatureMalformed = cardsig.ErrMalformedSignature
	// ErrCardAlgorithm: the signature's alg is not accepted ("none" and
	// HMAC algorithms never are).
	ErrCardAlgorithm = cardsig.ErrAlgorithm
	// ErrCardKeyUnknown: no trusted key has the signature's kid.
	ErrCardKeyUnknown = cardsig.ErrUnknownKey
	// ErrCardJKUNotAllowed: the key could only come from the signature's
	// jku, and that URL may not be fetched (another host, scheme or port,
	// http to a host that is not loopback, or more distinct jku URLs in
	// one card than two).
	ErrCardJKUNotAllowed = cardsig.ErrJKUNotAllowed
	// ErrCardSignatureInvalid: the signature does not verify: the card
	// was changed after it was signed, or signed with another key.
	ErrCardSignatureInvalid = cardsig.ErrBadSignature
	// ErrCardEndpointUncovered: the card verified, but its A2A 0.3 url or
	// additionalInterfaces name an endpoint that is not among its signed
	// supportedInterfaces.
	ErrCardEndpointUncovered = cardsig.ErrUncovered
)

// CardSignatureError is a card whose signatures did not verify.
type CardSignatureError struct {
	// URL is where the card was fetched.
	URL string
	// Err says why; it wraps the Err… values above.
	Err error
}

func (e *CardSignatureError) Error() string {
	return "a2a client: agent card at " + e.URL + ": " + e.Err.Error()
}

func (e *CardSignatureError) Unwrap() error { return e.Err }

// CardSignature says how a card was verified.
type CardSignature struct {
	// CardURL is where the card was fetched.
	CardURL string
	// Index is the position of the verified signature in signatures.
	Index int
	// KeyID and Algorithm are the signature's kid and alg.
	KeyID, Algorithm string
	// KeySource is where the key came from: "trusted keys", "JWKS URL
	// <url>" or "jku URL <url>".
	KeySource string
}

// CardVerifierOptions configure a CardVerifier. Keys, JWKS and JWKSURL
// are trusted key sources, searched in that order for a signature's kid.
type CardVerifierOptions struct {
	// Keys are trusted public keys by kid: *ecdsa.PublicKey,
	// *rsa.PublicKey or ed25519.PublicKey.
	Keys map[string]crypto.PublicKey
	// JWKS is a trusted JWK Set document (RFC 7517 §5).
	JWKS []byte
	// JWKSURL is a trusted JWK Set URL, fetched when first needed. A
	// fetched key set (this one or a jku's) is kept for its
	// Cache-Control max-age, bounded to 1 to 10 minutes (10 minutes
	// without one), then fetched again, so that a key removed from the
	// set stops verifying (A2A 1.0 §8.4.3); a kid the set does not have
	// refetches it at most once a minute.
	JWKSURL string
	// JKUHosts lists the hosts ("host", any port, or "host:port") whose
	// URLs a signature's jku may name; keys are then fetched from there.
	// Empty: when no trusted source is set (no Keys, JWKS or JWKSURL),
	// the origin of the URL the card was fetched from (same scheme, host
	// and port, default ports filled in): the key is then one the card's
	// own host publishes, which proves the card is as that host signed
	// it, not who controls the host; otherwise none. A jku must be https,
	// or http to a loopback host. At most two distinct jku
	// URLs are fetched for one card.
	JKUHosts []string
	// Algorithms are the accepted JWS algorithms; nil means all that
	// a2abridge can verify (ES256/384/512, RS256/384/512, PS256/384/512,
	// EdDSA, Ed25519).
	Algorithms []string
	// HTTPClient fetches key sets; nil means a client with a 10 s timeout.
	// Key set fetches never follow redirects.
	HTTPClient *http.Client
	// Verified, if set, is called with each card that verified.
	Verified func(CardSignature)
}

// CardVerifier checks Agent Card signatures (A2A 1.0 §8.4.3). Set it as
// Options.CardVerifier to have every card the client fetches (Resolve,
// GetExtendedAgentCard) verified before it is used; the card used is
// then built from the signed content only (VerifyCard). Signature
// failures are not retried. It is safe for concurrent use.
type CardVerifier struct {
	o       CardVerifierOptions
	trusted []cardsig.Key
	http    *http.Client
	jwks    *keySet // JWKSURL, or nil
	now     func() time.Time

	mu  sync.Mutex
	jku map[string]*keySet
}

const (
	// maxJKUSets bounds the key sets a CardVerifier keeps from jku URLs.
	maxJKUSets = 16
	// maxJKUPerCard bounds the distinct jku URLs one verification
	// fetches keys from.
	maxJKUPerCard = 2
)

// NewCardVerifier checks o and returns a CardVerifier. Errors name the
// key that cannot verify, a JWKS that does not parse, or a JWKSURL that
// is not an absolute http(s) URL.
func NewCardVerifier(o CardVerifierOptions) (*CardVerifier, error) {
	v := &CardVerifier{o: o, http: o.HTTPClient, jku: map[string]*keySet{}, now: time.Now}
	if v.http == nil {
		v.http = &http.Client{Timeout: 10 * time.Second}
	}
	c := *v.http
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	v.http = &c
	for _, kid := range sortedKIDs(o.Keys) {
		if _, err := cardsig.Thumbprint(o.Keys[kid]); err != nil {
			return nil, fmt.Errorf("a2a client: card key %q: %w", kid, err)
		}
		v.trusted = append(v.trusted, cardsig.Key{ID: kid, Public: o.Keys[kid], Source: "trusted keys"})
	}
	if len(o.JWKS) > 0 {
		ks, err := cardsig.ParseJWKS(o.JWKS)
		if err == nil && len(ks) == 0 {
			err = errors.New("no signature key with a kid")
		}
		if err != nil {
			return nil, fmt.Errorf("a2a client: card JWKS: %w", err)
		}
		for _, k := range ks {
			k.Source = "trusted keys"
			v.trusted = append(v.trusted, k)
		}
	}
	if o.JWKSURL != "" {
		if u, err := url.Parse(o.JWKSURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("a2a client: card JWKS URL %q is not an absolute http(s) URL", o.JWKSURL)
		}
		v.jwks = &keySet{url: o.JWKSURL, source: "JWKS URL"}
	}
	return v, nil
}

func sortedKIDs(m map[string]crypto.PublicKey) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Verify checks the signatures of a card document exactly as received
// from cardURL: at least one must verify with a trusted key or a key from
// an allowed jku, every A2A 0.3 endpoint of the card must be among its
// signed supportedInterfaces, and the card must be a valid A2A 1.0
// AgentCard (see VerifyCard). Errors are *CardSignatureError.
func (v *CardVerifier) Verify(ctx context.Context, cardURL string, card []byte) (CardSignature, error) {
	_, sig, err := v.VerifyCard(ctx, cardURL, card)
	return sig, err
}

// VerifyCard verifies card like Verify and returns the Agent Card built
// from what the signature covers only (A2A 1.0 §8.4.1: the card read as
// the A2A 1.0 AgentCard, defaults and empty values dropped): no A2A 0.3
// member (url, preferredTransport, additionalInterfaces, protocolVersion,
// supportsAuthenticatedExtendedCard, the flat members of security
// schemes) is read; securityRequirements scopes served as bare arrays are
// not covered and come back empty. A card whose securitySchemes are not
// all in the A2A 1.0 form is refused (ErrCardSignatureMalformed). Errors
// are *CardSignatureError.
func (v *CardVerifier) VerifyCard(ctx context.Context, cardURL string, card []byte) (a2a.AgentCard, CardSignature, error) {
	c, sig, _, err := v.verifyCard(ctx, cardURL, card)
	return c, sig, err
}

// verify is VerifyCard returning the signed content it verified (for
// wirecard.UnmarshalSigned) instead of the signature.
func (v *CardVerifier) verify(ctx context.Context, cardURL string, card []byte) (a2a.AgentCard, []byte, error) {
	c, _, payload, err := v.verifyCard(ctx, cardURL, card)
	return c, payload, err
}

func (v *CardVerifier) verifyCard(ctx context.Context, cardURL string, card []byte) (a2a.AgentCard, CardSignature, []byte, error) {
	vr := &verification{v: v, cardURL: cardURL}
	res, err := cardsig.Verify(ctx, card, v.o.Algorithms, vr.keys)
	if err == nil {
		err = cardsig.CheckCovered(card)
	}
	var c a2a.AgentCard
	if err == nil {
		if c, err = wirecard.UnmarshalSigned(card, res.Payload); err != nil {
			err = fmt.Errorf("%w: %w", ErrCardSignatureMalformed, err)
		}
	}
	if err != nil {
		if errors.Is(err, cardsig.ErrMalformedCard) {
			err = fmt.Errorf("%w: %w", ErrCardSignatureMalformed, err)
		}
		return a2a.AgentCard{}, CardSignature{}, nil, &CardSignatureError{URL: cardURL, Err: err}
	}
	sig := CardSignature{CardURL: cardURL, Index: res.Index, KeyID: res.KeyID, Algorithm: res.Algorithm, KeySource: res.Source}
	if v.o.Verified != nil {
		v.o.Verified(sig)
	}
	return c, sig, res.Payload, nil
}

// verification is one Verify call: it counts the jku URLs it fetched.
type verification struct {
	v       *CardVerifier
	cardURL string
	jkus    []string
}

// keys finds the keys for kid: trusted keys, then JWKSURL, then jku.
func (vr *verification) keys(ctx context.Context, kid, jku string) ([]cardsig.Key, error) {
	v := vr.v
	if ks := withKID(v.trusted, kid); len(ks) > 0 {
		return ks, nil
	}
	var searched []string
	if len(v.trusted) > 0 {
		searched = append(searched, "the trusted keys")
	}
	if v.jwks != nil {
		ks, err := v.jwks.get(ctx, v.http, v.now, kid)
		if err != nil || len(ks) > 0 {
			return ks, err
		}
		searched = append(searched, v.jwks.url)
	}
	if jku != "" {
		if err := vr.jkuAllowed(jku); err != nil {
			return nil, err
		}
		ks, err := v.jkuSet(jku).get(ctx, v.http, v.now, kid)
		if err != nil || len(ks) > 0 {
			return ks, err
		}
		searched = append(searched, jku)
	}
	if len(searched) == 0 {
		return nil, fmt.Errorf("%w: kid %q, and no trusted key source or jku", ErrCardKeyUnknown, kid)
	}
	return nil, fmt.Errorf("%w: kid %q is not in %s", ErrCardKeyUnknown, kid, strings.Join(searched, ", "))
}

// jkuAllowed checks a jku against JKUHosts (or its default) and the
// number of distinct jku URLs this verification fetched from.
func (vr *verification) jkuAllowed(jku string) error {
	if err := vr.v.jkuAllowed(vr.cardURL, jku); err != nil {
		return err
	}
	if slices.Contains(vr.jkus, jku) {
		return nil
	}
	if len(vr.jkus) >= maxJKUPerCard {
		return fmt.Errorf("%w: %s: the card's signatures name more than %d jku URLs", ErrCardJKUNotAllowed, jku, maxJKUPerCard)
	}
	vr.jkus = append(vr.jkus, jku)
	return nil
}

func withKID(ks []cardsig.Key, kid string) []cardsig.Key {
	var out []cardsig.Key
	for _, k := range ks {
		if k.ID == kid {
			out = append(out, k)
		}
	}
	return out
}

// jkuAllowed checks a jku against JKUHosts (or its default).
func (v *CardVerifier) jkuAllowed(cardURL, jku string) error {
	u, err := url.Parse(jku)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrCardJKUNotAllowed, jku)
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return fmt.Errorf("%w: %s is http, not https, to a host that is not loopback", ErrCardJKUNotAllowed, jku)
	}
	hosts := v.o.JKUHosts
	if len(hosts) == 0 && len(v.trusted) == 0 && v.jwks == nil {
		cu, err := url.Parse(cardURL)
		if err != nil {
			return fmt.Errorf("%w: %s (the card URL %q does not parse)", ErrCardJKUNotAllowed, jku, cardURL)
		}
		if !sameOrigin(cu, u) {
			return fmt.Errorf("%w: %s is not on the card's own origin %s", ErrCardJKUNotAllowed, jku, origin(cu))
		}
		return nil
	}
	for _, h := range hosts {
		if strings.EqualFold(h, u.Host) || strings.EqualFold(h, u.Hostname()) {
			return nil
		}
	}
	if len(hosts) == 0 {
		return fmt.Errorf("%w: %s (trusted keys are configured and no jku host is allowed)", ErrCardJKUNotAllowed, jku)
	}
	return fmt.Errorf("%w: %s is not on an allowed host (%s)", ErrCardJKUNotAllowed, jku, strings.Join(hosts, ", "))
}

// sameOrigin reports whether a and b have the same scheme, host and port
// (RFC 6454 §4), an absent port being the scheme's default.
func sameOrigin(a, b *url.URL) bool {
	return origin(a) == origin(b)
}

// origin is "scheme://host:port" of u, lower case, with the default port
// of http and https filled in.
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (v *CardVerifier) jkuSet(jku string) *keySet {
	v.mu.Lock()
	defer v.mu.Unlock()
	s, ok := v.jku[jku]
	if !ok {
		if len(v.jku) >= maxJKUSets {
			clear(v.jku)
		}
		s = &keySet{url: jku, source: "jku URL"}
		v.jku[jku] = s
	}
	return s
}

// keySet is a JWK Set fetched from url and kept for maxAge; a kid it
// does not have refetches it, at most every refetchAfter. One fetch runs
// at a time (the others wait for it), outside mu.
type keySet struct {
	url, source string

	mu      sync.Mutex
	keys    []cardsig.Key
	fetched time.Time     // zero: never
	maxAge  time.Duration // of keys
	flight  *fetchCall    // the fetch under way, or nil
}

// fetchCall is one key set fetch, which several callers may wait for.
type fetchCall struct {
	done chan struct{}
	keys []cardsig.Key
	err  error
}

const (
	refetchAfter = time.Minute
	keySetMaxAge = 10 * time.Minute
	maxJWKSBytes = 1 << 20
	keySetMinAge = refetchAfter
)

// get returns the keys of the set with kid, fetching the set when it was
// never fetched, is older than its max age, or lacks kid and was fetched
// more than refetchAfter ago.
func (s *keySet) get(ctx context.Context, hc *http.Client, now func() time.Time, kid string) ([]cardsig.Key, error) {
	s.mu.Lock()
	if !s.fetched.IsZero() {
		age := now().Sub(s.fetched)
		if ks := withKID(s.keys, kid); age < s.maxAge && (len(ks) > 0 || age < refetchAfter) {
			s.mu.Unlock()
			return ks, nil
		}
	}
	call, leader := s.flight, s.flight == nil
	if leader {
		call = &fetchCall{done: make(chan struct{})}
		s.flight = call
	}
	s.mu.Unlock()
	if leader {
		s.run(ctx, hc, now, call)
	} else {
		select {
		case <-call.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if call.err != nil {
		return nil, fmt.Errorf("fetching the key set %s: %w", s.url, call.err)
	}
	return withKID(call.keys, kid), nil
}

// run fetches the set for call and keeps it when the fetch succeeded.
func (s *keySet) run(ctx context.Context, hc *http.Client, now func() time.Time, call *fetchCall) {
	keys, maxAge, err := s.fetch(ctx, hc)
	call.keys, call.err = keys, err
	s.mu.Lock()
	if err == nil {
		s.keys, s.fetched, s.maxAge = keys, now(), maxAge
	}
	s.flight = nil
	s.mu.Unlock()
	close(call.done)
}

// cacheMaxAge is how long a key set fetched with Cache-Control header cc
// is kept: its max-age bounded to [keySetMinAge, keySetMaxAge], the
// minimum for no-cache or no-store, keySetMaxAge without either.
func cacheMaxAge(cc string) time.Duration {
	age := keySetMaxAge
	for _, d := range strings.Split(cc, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch strings.ToLower(name) {
		case "no-cache", "no-store":
			return keySetMinAge
		case "max-age":
			if n, err := strconv.ParseInt(strings.Trim(val, `"`), 10, 64); err == nil && n >= 0 {
				age = time.Duration(min(n, int64(keySetMaxAge/time.Second))) * time.Second
			}
		}
	}
	return max(age, keySetMinAge)
}

// fetch GETs the key set and returns its keys and how long to keep them.
func (s *keySet) fetch(ctx context.Context, hc *http.Client) ([]cardsig.Key, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("HTTP %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, 0, err
	}
	if len(b) > maxJWKSBytes {
		return nil, 0, fmt.Errorf("larger than %d bytes", maxJWKSBytes)
	}
	keys, err := cardsig.ParseJWKS(b)
	if err != nil {
		return nil, 0, err
	}
	for i := range keys {
		keys[i].Source = s.source + " " + s.url
	}
	return keys, cacheMaxAge(resp.Header.Get("Cache-Control")), nil
}
