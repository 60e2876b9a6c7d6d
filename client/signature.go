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
	"strings"
	"sync"
	"time"

	"github.com/a2abridge/a2abridge/internal/cardsig"
)

// Errors of Agent Card signature verification (A2A 1.0 §8.4.3). A
// *CardSignatureError wraps one or more of them (errors.Is finds each).
var (
	// ErrCardNotSigned: the card has no signatures.
	ErrCardNotSigned = cardsig.ErrNoSignatures
	// ErrCardSignatureMalformed: a signature is not a valid JWS
	// (bad base64url, a protected header without alg, typ or kid, crit
	// or b64 present, oversized), or the card itself is not a valid A2A
	// 1.0 AgentCard document.
	ErrCardSignatureMalformed = cardsig.ErrMalformedSignature
	// ErrCardAlgorithm: the signature's alg is not accepted ("none" and
	// HMAC algorithms never are).
	ErrCardAlgorithm = cardsig.ErrAlgorithm
	// ErrCardKeyUnknown: no trusted key has the signature's kid.
	ErrCardKeyUnknown = cardsig.ErrUnknownKey
	// ErrCardJKUNotAllowed: the key could only come from the signature's
	// jku, and that URL may not be fetched (another host, or http to a
	// host that is not loopback).
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
	// JWKSURL is a trusted JWK Set URL, fetched when first needed and
	// again, at most once a minute, for a kid it did not have.
	JWKSURL string
	// JKUHosts lists the hosts ("host" or "host:port") whose URLs a
	// signature's jku may name; keys are then fetched from there. Empty:
	// when no trusted source is set (no Keys, JWKS or JWKSURL), the host
	// of the URL the card was fetched from; otherwise none. A jku must be
	// https, or http to a loopback host.
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
// Options.CardVerifier to have every fetched card verified before it is
// used. It is safe for concurrent use.
type CardVerifier struct {
	o       CardVerifierOptions
	trusted []cardsig.Key
	http    *http.Client
	jwks    *keySet // JWKSURL, or nil

	mu  sync.Mutex
	jku map[string]*keySet
}

// maxJKUSets bounds the key sets a CardVerifier keeps from jku URLs.
const maxJKUSets = 16

// NewCardVerifier checks o and returns a CardVerifier. Errors name the
// key that cannot verify, a JWKS that does not parse, or a JWKSURL that
// is not an absolute http(s) URL.
func NewCardVerifier(o CardVerifierOptions) (*CardVerifier, error) {
	v := &CardVerifier{o: o, http: o.HTTPClient, jku: map[string]*keySet{}}
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
// an allowed jku, and every A2A 0.3 endpoint of the card must be among
// its signed supportedInterfaces. Errors are *CardSignatureError.
func (v *CardVerifier) Verify(ctx context.Context, cardURL string, card []byte) (CardSignature, error) {
	res, err := cardsig.Verify(ctx, card, v.o.Algorithms, func(ctx context.Context, kid, jku string) ([]cardsig.Key, error) {
		return v.keys(ctx, cardURL, kid, jku)
	})
	if err == nil {
		err = cardsig.CheckCovered(card)
	}
	if err != nil {
		if errors.Is(err, cardsig.ErrMalformedCard) {
			err = fmt.Errorf("%w: %w", ErrCardSignatureMalformed, err)
		}
		return CardSignature{}, &CardSignatureError{URL: cardURL, Err: err}
	}
	sig := CardSignature{CardURL: cardURL, Index: res.Index, KeyID: res.KeyID, Algorithm: res.Algorithm, KeySource: res.Source}
	if v.o.Verified != nil {
		v.o.Verified(sig)
	}
	return sig, nil
}

// keys finds the keys for kid: trusted keys, then JWKSURL, then jku.
func (v *CardVerifier) keys(ctx context.Context, cardURL, kid, jku string) ([]cardsig.Key, error) {
	if ks := withKID(v.trusted, kid); len(ks) > 0 {
		return ks, nil
	}
	var searched []string
	if len(v.trusted) > 0 {
		searched = append(searched, "the trusted keys")
	}
	if v.jwks != nil {
		ks, err := v.jwks.get(ctx, v.http, kid)
		if err != nil || len(ks) > 0 {
			return ks, err
		}
		searched = append(searched, v.jwks.url)
	}
	if jku != "" {
		if err := v.jkuAllowed(cardURL, jku); err != nil {
			return nil, err
		}
		ks, err := v.jkuSet(jku).get(ctx, v.http, kid)
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
		if cu, err := url.Parse(cardURL); err == nil {
			hosts = []string{cu.Host}
		}
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

// keySet is a JWK Set fetched from url, kept, and fetched again for an
// unknown kid at most every refetchAfter.
type keySet struct {
	url, source string

	mu      sync.Mutex
	keys    []cardsig.Key
	fetched time.Time
}

const (
	refetchAfter = time.Minute
	maxJWKSBytes = 1 << 20
)

func (s *keySet) get(ctx context.Context, hc *http.Client, kid string) ([]cardsig.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ks := withKID(s.keys, kid); len(ks) > 0 || time.Since(s.fetched) < refetchAfter {
		return ks, nil
	}
	keys, err := s.fetch(ctx, hc)
	if err != nil {
		return nil, fmt.Errorf("fetching the key set %s: %w", s.url, err)
	}
	s.keys, s.fetched = keys, time.Now()
	return withKID(keys, kid), nil
}

func (s *keySet) fetch(ctx context.Context, hc *http.Client) ([]cardsig.Key, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxJWKSBytes)
	}
	keys, err := cardsig.ParseJWKS(b)
	for i := range keys {
		keys[i].Source = s.source + " " + s.url
	}
	return keys, err
}
