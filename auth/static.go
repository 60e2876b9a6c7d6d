package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
)

// hashPrefix marks a configured secret that is already a SHA-256 hash.
const hashPrefix = "sha256:"

// HashToken returns "sha256:<hex>", the lowercase hex SHA-256 of token.
// Configuration may hold this instead of the token itself for
// [NewBearerTokens] and [NewAPIKey], so that config files hold no secrets.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// secrets matches presented secrets against configured SHA-256 hashes.
// A presented secret is hashed and compared with every entry using
// subtle.ConstantTimeCompare, without stopping at a match, so the time
// taken does not depend on which entry (if any) matched or on how much of
// a hash matched. The secrets themselves are never stored.
type secrets struct {
	entries []secretEntry
	// eq compares two hashes; subtle.ConstantTimeCompare (replaced in
	// tests to observe that it is used).
	eq func(a, b []byte) int
}

type secretEntry struct {
	subject string
	hash    [sha256.Size]byte
}

// newSecrets parses subject → secret (or "sha256:<hex>") configuration.
func newSecrets(what string, m map[string]string) (*secrets, error) {
	if len(m) == 0 {
		return nil, fmt.Errorf("auth: no %ss configured", what)
	}
	s := &secrets{eq: subtle.ConstantTimeCompare}
	seen := make(map[[sha256.Size]byte]string, len(m))
	// Sorted, so that errors are deterministic.
	subjects := make([]string, 0, len(m))
	for subj := range m {
		subjects = append(subjects, subj)
	}
	sort.Strings(subjects)
	for _, subj := range subjects {
		v := m[subj]
		if subj == "" {
			return nil, fmt.Errorf("auth: %s with an empty subject", what)
		}
		var e secretEntry
		e.subject = subj
		switch {
		case strings.HasPrefix(v, hashPrefix):
			h := v[len(hashPrefix):]
			b, err := hex.DecodeString(h)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("auth: %s of subject %q: %q must be followed by 64 hex digits", what, subj, hashPrefix)
			}
			copy(e.hash[:], b)
		case v == "":
			return nil, fmt.Errorf("auth: %s of subject %q is empty", what, subj)
		default:
			e.hash = sha256.Sum256([]byte(v))
		}
		if other, dup := seen[e.hash]; dup {
			return nil, fmt.Errorf("auth: subjects %q and %q have the same %s", other, subj, what)
		}
		seen[e.hash] = subj
		s.entries = append(s.entries, e)
	}
	return s, nil
}

// match returns the subject whose secret is presented, or "" if none.
func (s *secrets) match(presented string) string {
	h := sha256.Sum256([]byte(presented))
	found := -1
	for i := range s.entries {
		if s.eq(h[:], s.entries[i].hash[:]) == 1 {
			found = i // no break: compare with every entry
		}
	}
	if found < 0 {
		return ""
	}
	return s.entries[found].subject
}

// bearerTokens is the Authenticator of NewBearerTokens.
type bearerTokens struct {
	name    string
	secrets *secrets
}

// NewBearerTokens returns an [Authenticator] for static bearer tokens sent
// as "Authorization: Bearer <token>" (RFC 6750 §2.1). tokens maps each
// subject (the [Principal] Subject) to its token, or to "sha256:<hex>" of
// the token as made by [HashToken]. Only SHA-256 hashes are kept, and a
// presented token is compared in constant time with all of them. A
// configured value that starts with "sha256:" is always read as a hash.
//
// The card scheme is {"type":"http","scheme":"bearer"}; the challenge is
// `Bearer realm="a2a"`. It returns an error if name or tokens is empty, a
// subject or token is empty, a hash is malformed, or two subjects share a
// token.
func NewBearerTokens(name string, tokens map[string]string) (Authenticator, error) {
	if name == "" {
		return nil, errors.New("auth: empty scheme name")
	}
	s, err := newSecrets("token", tokens)
	if err != nil {
		return nil, err
	}
	return &bearerTokens{name: name, secrets: s}, nil
}

func (b *bearerTokens) Name() string { return b.name }

func (b *bearerTokens) SecurityScheme() a2a.SecurityScheme {
	return a2a.HTTPAuthSecurityScheme{Scheme: "bearer", Description: "Static bearer token: Authorization: Bearer <token>"}
}

func (b *bearerTokens) Challenge() string { return bearerChallenge }

func (b *bearerTokens) Authenticate(r *http.Request) (*Principal, error) {
	tok, err := bearerToken(b.name, r)
	if err != nil {
		return nil, err
	}
	subj := b.secrets.match(tok)
	if subj == "" {
		return nil, unrecognised(b.name, "unknown token")
	}
	return &Principal{Subject: subj, Scheme: b.name}, nil
}

// bearerChallenge is the WWW-Authenticate value of bearer schemes.
var bearerChallenge = "Bearer realm=" + quote(Realm)

// maxCredentialLen bounds a credential before any work is done on it.
const maxCredentialLen = 16 << 10

// bearerToken extracts the token of "Authorization: Bearer <token>"
// (RFC 6750 §2.1; the auth-scheme is case-insensitive, RFC 9110 §11.1).
func bearerToken(scheme string, r *http.Request) (string, error) {
	vals := r.Header.Values("Authorization")
	var tok string
	found := 0
	for _, v := range vals {
		v = strings.TrimSpace(v)
		s, rest, _ := strings.Cut(v, " ")
		if !strings.EqualFold(s, "Bearer") {
			continue
		}
		found++
		tok = strings.TrimSpace(rest)
	}
	switch {
	case found == 0:
		return "", noCredentials(scheme)
	case found > 1:
		return "", invalid(scheme, "more than one bearer token")
	case tok == "":
		return "", invalid(scheme, "empty bearer token")
	case len(tok) > maxCredentialLen:
		return "", invalid(scheme, "bearer token too long")
	case strings.ContainsAny(tok, " \t"):
		return "", invalid(scheme, "malformed bearer token")
	}
	return tok, nil
}

// apiKey is the Authenticator of NewAPIKey.
type apiKey struct {
	name, in, param string
	secrets         *secrets
}

// NewAPIKey returns an [Authenticator] for an API key sent in a header, a
// query parameter or a cookie: in is "header", "query" or "cookie" and param
// is the header, parameter or cookie name (OpenAPI 3 apiKey scheme). keys
// maps each subject (the [Principal] Subject) to its key, or to
// "sha256:<hex>" of the key ([HashToken]). Only SHA-256 hashes are kept, and
// a presented key is compared in constant time with all of them.
//
// A present but empty key is ErrInvalidCredentials. Keys in a query
// parameter end up in access logs and browser history; prefer a header.
// The card scheme is {"type":"apiKey","in":in,"name":param}; the challenge
// is `APIKey realm="a2a", in="<in>", name="<param>"`. It returns an error if
// name, param or keys is empty, in is not one of the three locations, or a
// key is invalid as for [NewBearerTokens].
func NewAPIKey(name, in, param string, keys map[string]string) (Authenticator, error) {
	if name == "" {
		return nil, errors.New("auth: empty scheme name")
	}
	switch in {
	case "header", "query", "cookie":
	default:
		return nil, fmt.Errorf("auth: API key location %q: want header, query or cookie", in)
	}
	if param == "" || strings.ContainsAny(param, " \t\r\n\",;=") {
		return nil, fmt.Errorf("auth: invalid API key %s name %q", in, param)
	}
	s, err := newSecrets("API key", keys)
	if err != nil {
		return nil, err
	}
	return &apiKey{name: name, in: in, param: param, secrets: s}, nil
}

func (k *apiKey) Name() string { return k.name }

func (k *apiKey) SecurityScheme() a2a.SecurityScheme {
	return a2a.APIKeySecurityScheme{In: k.in, Name: k.param, Description: "API key in " + k.in + " " + k.param}
}

func (k *apiKey) Challenge() string {
	return "APIKey realm=" + quote(Realm) + ", in=" + quote(k.in) + ", name=" + quote(k.param)
}

func (k *apiKey) Authenticate(r *http.Request) (*Principal, error) {
	var (
		val     string
		present bool
	)
	switch k.in {
	case "header":
		vs := r.Header.Values(k.param)
		if len(vs) > 1 {
			return nil, invalid(k.name, "more than one API key")
		}
		if len(vs) == 1 {
			val, present = strings.TrimSpace(vs[0]), true
		}
	case "query":
		vs, ok := r.URL.Query()[k.param]
		if len(vs) > 1 {
			return nil, invalid(k.name, "more than one API key")
		}
		if ok && len(vs) == 1 {
			val, present = vs[0], true
		}
	case "cookie":
		cs := r.CookiesNamed(k.param)
		if len(cs) > 1 {
			return nil, invalid(k.name, "more than one API key")
		}
		if len(cs) == 1 {
			val, present = cs[0].Value, true
		}
	}
	switch {
	case !present:
		return nil, noCredentials(k.name)
	case val == "":
		return nil, invalid(k.name, "empty API key")
	case len(val) > maxCredentialLen:
		return nil, invalid(k.name, "API key too long")
	}
	subj := k.secrets.match(val)
	if subj == "" {
		return nil, unrecognised(k.name, "unknown API key")
	}
	return &Principal{Subject: subj, Scheme: k.name}, nil
}
