package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

// maxDocumentSize bounds a fetched JWKS or discovery document.
const maxDocumentSize = 1 << 20

// fetchTimeout bounds one fetch even if the HTTP client has no timeout.
const fetchTimeout = 10 * time.Second

// verifyKey is one usable public key of a JWKS.
type verifyKey struct {
	kid string
	alg string // the JWK's "alg", or "" if it has none
	key any    // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

// keySource is a lazily fetched, cached JWKS (optionally found by OpenID
// Connect discovery). It runs no goroutines: fetches happen on the request
// path, one at a time, while mu is held, so concurrent requests wait for a
// fetch in progress instead of starting their own.
type keySource struct {
	client       *http.Client
	jwksURL      string // configured; "" means discover from issuer
	issuer       string
	refreshEvery time.Duration
	minRefresh   time.Duration
	now          func() time.Time

	mu         sync.Mutex
	resolved   string      // JWKS URL found by discovery
	keys       []verifyKey // current set; valid if have
	have       bool
	fetched    time.Time // last successful fetch
	nextTry    time.Time // after a failed fetch, no fetch before this
	lastForced time.Time // last fetch caused by an unknown kid
	lastErr    error
	fetches    int // successful and failed fetch attempts, for tests
}

// candidates returns the keys that may have signed a token with this kid
// (all keys if kid is ""). It fetches the JWKS if there is none yet or it
// is older than refreshEvery, and once more, rate-limited, if kid is
// unknown. The error is non-nil only if no JWKS has ever been fetched.
func (s *keySource) candidates(ctx context.Context, kid string) ([]verifyKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	justFetched := false
	if (!s.have || now.Sub(s.fetched) >= s.refreshEvery) && !now.Before(s.nextTry) {
		s.fetchLocked(ctx)
		justFetched = true
	}
	if !s.have {
		return nil, s.lastErr
	}
	ks := s.lookupLocked(kid)
	if len(ks) == 0 && kid != "" && !justFetched && !now.Before(s.nextTry) &&
		(s.lastForced.IsZero() || now.Sub(s.lastForced) >= s.minRefresh) {
		s.lastForced = now
		s.fetchLocked(ctx)
		ks = s.lookupLocked(kid)
	}
	return ks, nil
}

func (s *keySource) lookupLocked(kid string) []verifyKey {
	if kid == "" {
		return s.keys
	}
	var out []verifyKey
	for _, k := range s.keys {
		if k.kid == kid {
			out = append(out, k)
		}
	}
	return out
}

// fetchLocked fetches the JWKS (discovering its URL first if need be) and
// replaces the cached keys; on failure it keeps them and records the error.
func (s *keySource) fetchLocked(ctx context.Context) {
	// A client that goes away must not fail the fetch for everyone else
	// waiting on it; the fetch is bounded by fetchTimeout instead.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	s.fetches++
	keys, err := s.fetch(ctx)
	now := s.now()
	if err != nil {
		s.lastErr = err
		s.nextTry = now.Add(min(s.minRefresh, 5*time.Second))
		return
	}
	s.keys, s.have, s.fetched, s.lastErr = keys, true, now, nil
	s.nextTry = time.Time{}
}

func (s *keySource) fetch(ctx context.Context) ([]verifyKey, error) {
	u := s.jwksURL
	if u == "" {
		if s.resolved == "" {
			r, err := s.discover(ctx)
			if err != nil {
				return nil, err
			}
			s.resolved = r
		}
		u = s.resolved
	}
	b, err := getDocument(ctx, s.client, u)
	if err != nil {
		return nil, err
	}
	return parseJWKS(b)
}

// discover reads the OpenID Provider Metadata of the issuer (OpenID Connect
// Discovery 1.0 §4) and returns its jwks_uri.
func (s *keySource) discover(ctx context.Context) (string, error) {
	u := strings.TrimSuffix(s.issuer, "/") + "/.well-known/openid-configuration"
	b, err := getDocument(ctx, s.client, u)
	if err != nil {
		return "", err
	}
	var meta struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return "", fmt.Errorf("OpenID configuration %s: %w", u, err)
	}
	// §4.3: the issuer in the metadata MUST be identical to the one used
	// for discovery.
	if meta.Issuer != s.issuer {
		return "", fmt.Errorf("OpenID configuration %s: issuer %q, want %q", u, meta.Issuer, s.issuer)
	}
	if err := checkURL(meta.JWKSURI); err != nil {
		return "", fmt.Errorf("OpenID configuration %s: jwks_uri: %w", u, err)
	}
	return meta.JWKSURI, nil
}

// getDocument GETs a JSON document of at most maxDocumentSize bytes.
func getDocument(ctx context.Context, cl *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := cl.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %s", u, res.Status)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, maxDocumentSize+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(b) > maxDocumentSize {
		return nil, fmt.Errorf("GET %s: document larger than %d bytes", u, maxDocumentSize)
	}
	return b, nil
}

// parseJWKS extracts the public signature keys of a JWK Set (RFC 7517 §5).
// Keys that cannot be parsed (for example of a kty this build does not
// know), symmetric keys, keys for encryption and keys whose "alg" is not an
// accepted signature algorithm are skipped rather than failing the set.
func parseJWKS(b []byte) ([]verifyKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	if set.Keys == nil {
		return nil, errors.New(`JWKS: no "keys" member`)
	}
	out := make([]verifyKey, 0, len(set.Keys))
	for _, raw := range set.Keys {
		k, err := jwk.ParseKey(raw)
		if err != nil {
			continue
		}
		if k.KeyType() == jwa.OctetSeq() {
			continue
		}
		if use, ok := k.KeyUsage(); ok && use != "sig" {
			continue
		}
		if ops, ok := k.KeyOps(); ok && len(ops) > 0 && !containsOp(ops, jwk.KeyOpVerify) {
			continue
		}
		var vk verifyKey
		if a, ok := k.Algorithm(); ok {
			if _, allowed := allowedAlgs[a.String()]; !allowed {
				continue
			}
			vk.alg = a.String()
		}
		vk.kid, _ = k.KeyID()
		pub, err := k.PublicKey()
		if err != nil {
			continue
		}
		if err := jwk.Export(pub, &vk.key); err != nil {
			continue
		}
		out = append(out, vk)
	}
	return out, nil
}

func containsOp(ops jwk.KeyOperationList, op jwk.KeyOperation) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}
