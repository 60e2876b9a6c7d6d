package auth

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/a2abridge/a2abridge/a2a"
)

// Set is the security schemes of one agent, any one of which authenticates
// a request: each scheme is a separate alternative of the card's "security"
// list (A2A 0.3.0 §5.5.3). Scheme names must be unique ([Set.Validate]).
// An empty Set means the agent requires no authentication.
type Set []Authenticator

// Validate reports an error if a member is nil, has an empty name, or
// shares its name with another member. Call it once at startup.
func (s Set) Validate() error {
	seen := make(map[string]bool, len(s))
	for i, a := range s {
		if a == nil {
			return fmt.Errorf("auth: set member %d is nil", i)
		}
		n := a.Name()
		if n == "" {
			return fmt.Errorf("auth: set member %d has an empty scheme name", i)
		}
		if seen[n] {
			return fmt.Errorf("auth: scheme name %q is used twice", n)
		}
		seen[n] = true
	}
	return nil
}

// rank orders failures by how much they tell: a scheme that could not check
// the credentials beats one that rejected them, which beats one that did
// not recognise them, which beats one that found none.
func rank(err error) int {
	var ae *authError
	switch {
	case errors.Is(err, ErrNoCredentials):
		return 0
	case errors.Is(err, ErrInvalidCredentials):
		if errors.As(err, &ae) && ae.weak {
			return 1
		}
		return 2
	default: // ErrUnavailable, or an unexpected error of a foreign Authenticator
		return 3
	}
}

// Authenticate tries each scheme in order and returns the first principal
// found. If every scheme fails it returns the most specific failure:
// ErrUnavailable beats ErrInvalidCredentials, which beats ErrNoCredentials.
// Among invalid credentials, a recognised but unacceptable one ("token
// expired" from the JWT scheme) beats an unrecognised one ("unknown token"
// from a static-token scheme that was shown the same JWT); among equals the
// earliest scheme's error wins. An empty Set returns an
// error wrapping ErrNoCredentials. Pass the error to [Set.ChallengesFor] for
// the WWW-Authenticate values of the 401 response.
func (s Set) Authenticate(r *http.Request) (*Principal, error) {
	var best error
	for _, a := range s {
		p, err := a.Authenticate(r)
		if err == nil {
			if p == nil {
				// A foreign Authenticator broke its contract; never treat
				// that as success.
				err = invalid(a.Name(), "no principal")
			} else {
				return p, nil
			}
		}
		if best == nil || rank(err) > rank(best) {
			best = err
		}
	}
	if best == nil {
		best = fmt.Errorf("%w: no security schemes configured", ErrNoCredentials)
	}
	return nil, best
}

// Challenges returns the WWW-Authenticate values of the schemes, in order,
// for a 401 response to a request without credentials (A2A 0.3.0 §4.4).
// Schemes with the same challenge (static bearer tokens and JWTs are both
// `Bearer realm="a2a"`) share one entry.
func (s Set) Challenges() []string {
	return s.ChallengesFor(nil)
}

// ChallengesFor is [Set.Challenges] for a 401 response to a request that
// failed with err (from [Set.Authenticate]): the challenge of the scheme
// that rejected the credentials becomes [ChallengeFor] that scheme and err,
// so a bearer scheme's carries error="invalid_token" (RFC 6750 §3.1); other
// schemes with the same plain challenge share that entry.
func (s Set) ChallengesFor(err error) []string {
	var base, failed string
	var ae *authError
	if err != nil && errors.As(err, &ae) {
		for _, a := range s {
			if a.Name() == ae.scheme {
				base, failed = a.Challenge(), ChallengeFor(a, err)
				break
			}
		}
	}
	out := make([]string, 0, len(s))
	for _, a := range s {
		c := a.Challenge()
		if failed != "" && c == base {
			c = failed
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// CardSecurity returns the Agent Card's securitySchemes and security fields
// for the set (A2A 0.3.0 §5.5.3): every scheme keyed by its name, and one
// security requirement per scheme, in order, each listing just that scheme
// with no scopes, so that any one scheme satisfies the card. An empty set
// returns nil, nil (no authentication required).
func (s Set) CardSecurity() (schemes map[string]a2a.SecurityScheme, security []map[string][]string) {
	if len(s) == 0 {
		return nil, nil
	}
	schemes = make(map[string]a2a.SecurityScheme, len(s))
	security = make([]map[string][]string, 0, len(s))
	for _, a := range s {
		schemes[a.Name()] = a.SecurityScheme()
		security = append(security, map[string][]string{a.Name(): {}})
	}
	return schemes, security
}

// Middleware returns a handler that authenticates every request with the
// set, then calls next with the [Principal] in the request context
// ([FromContext]). A request that fails gets [Set.WriteError] and does not
// reach next. An empty set returns next itself (no authentication).
//
// Do not wrap the public Agent Card route (A2A 0.3.0 §5.3): clients must be
// able to read securitySchemes before they have credentials.
func (s Set) Middleware(next http.Handler) http.Handler {
	if len(s) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.Authenticate(r)
		if err != nil {
			s.WriteError(w, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), p)))
	})
}

// WriteError answers a request that [Set.Authenticate] rejected with err.
// For ErrNoCredentials and ErrInvalidCredentials it writes 401 Unauthorized
// with one WWW-Authenticate header per scheme ([Set.ChallengesFor]), as A2A
// 0.3.0 §4.4 recommends; otherwise (ErrUnavailable) 503 Service Unavailable
// without the details. The body is a short plain-text message with the
// client-safe reason.
func (s Set) WriteError(w http.ResponseWriter, err error) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if rank(err) >= 3 {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("authentication is temporarily unavailable\n"))
		return
	}
	for _, c := range s.ChallengesFor(err) {
		h.Add("WWW-Authenticate", c)
	}
	w.WriteHeader(http.StatusUnauthorized)
	msg := "unauthorized: credentials required"
	if errors.Is(err, ErrInvalidCredentials) {
		msg = "unauthorized: invalid credentials"
		if r := Reason(err); r != "" {
			msg += ": " + r
		}
	}
	_, _ = w.Write([]byte(msg + "\n"))
}
