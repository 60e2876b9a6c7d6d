// Package auth authenticates incoming A2A requests on the server side
// (A2A 0.3.0 §4 "Authentication and Authorization").
//
// The A2A specification (§4.4) says a server MUST authenticate every request
// against the security requirements declared in its Agent Card
// (securitySchemes and security, §5.5.3), SHOULD answer 401 Unauthorized for
// missing or invalid credentials and SHOULD include a WWW-Authenticate header
// naming the accepted schemes. Identity travels in HTTP headers, never in the
// JSON-RPC payload (§4.1).
//
// An [Authenticator] checks one security scheme; this package provides three:
//
//   - [NewBearerTokens]: static bearer tokens (Authorization: Bearer ...),
//     stored only as SHA-256 hashes and compared in constant time;
//   - [NewJWT]: JWT bearer tokens verified against a JWKS, given directly or
//     found by OpenID Connect discovery of the issuer;
//   - [NewAPIKey]: an API key in a header, query parameter or cookie.
//
// A [Set] is the list of schemes of one agent, any one of which is enough
// (every scheme is a separate alternative of the card's "security" list). It
// authenticates requests ([Set.Authenticate]), renders the card fields
// ([Set.CardSecurity]) and the 401 challenges ([Set.ChallengesFor]), and can
// wrap an http.Handler ([Set.Middleware]). The authenticated [Principal] is
// carried in the request context ([NewContext], [FromContext]).
package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
)

// Realm is the realm parameter of every WWW-Authenticate challenge this
// package produces.
const Realm = "a2a"

// Errors returned by [Authenticator.Authenticate] and [Set.Authenticate].
// Use errors.Is: the returned errors wrap one of these together with the
// scheme name and, for ErrInvalidCredentials, a short reason that is safe to
// show to the client (for example "token expired"). Error() of a returned
// error never contains the presented credential.
var (
	// ErrNoCredentials means the request carries no credentials for the
	// scheme (for example no Authorization header, or one with a different
	// auth-scheme). Answer 401 with the challenge (A2A 0.3.0 §4.4).
	ErrNoCredentials = errors.New("auth: no credentials")

	// ErrInvalidCredentials means credentials for the scheme are present but
	// wrong, malformed, expired or otherwise unacceptable. Answer 401 with
	// the challenge; for bearer schemes [ChallengeFor] adds
	// error="invalid_token" (RFC 6750 §3.1).
	ErrInvalidCredentials = errors.New("auth: invalid credentials")

	// ErrUnavailable means the credentials could not be checked because of a
	// server-side problem, such as a JWKS or OpenID Connect discovery
	// document that cannot be fetched. It is not the client's fault: answer
	// 503 Service Unavailable, and log the error (its text carries the
	// details, which are for operators, not clients).
	ErrUnavailable = errors.New("auth: credentials cannot be verified now")
)

// Principal is an authenticated caller, as established by an [Authenticator].
type Principal struct {
	// Subject is the caller's stable identity: the subject a static token
	// or API key was configured for, or the JWT "sub" claim (or the claim
	// named by [JWTOptions].SubjectClaim).
	Subject string
	// Scheme is the name of the security scheme (the Agent Card
	// securitySchemes key) that authenticated the caller.
	Scheme string
	// Claims are the verified JWT claims as decoded by encoding/json
	// (numbers are float64); nil for static tokens and API keys.
	Claims map[string]any
}

// Authenticator checks the credentials of one security scheme of an Agent
// Card (A2A 0.3.0 §4.4, §5.5.3). Implementations are safe for concurrent use.
type Authenticator interface {
	// Name is the scheme's key in the Agent Card's securitySchemes, for
	// example "bearer" or "apiKey".
	Name() string

	// SecurityScheme describes the scheme for the Agent Card.
	SecurityScheme() a2a.SecurityScheme

	// Authenticate checks the request's credentials for this scheme. It
	// returns the principal, or an error that wraps ErrNoCredentials when
	// the request carries no credentials for this scheme, ErrInvalidCredentials
	// (with a reason safe to show) when they are present but wrong, or
	// ErrUnavailable when they cannot be checked now. It does not read the
	// request body.
	Authenticate(r *http.Request) (*Principal, error)

	// Challenge is the WWW-Authenticate value that asks for this scheme's
	// credentials, for example `Bearer realm="a2a"`. [ChallengeFor] gives
	// the variant that explains a failure.
	Challenge() string
}

// authError is the error every authenticator in this package returns.
type authError struct {
	scheme string
	kind   error  // ErrNoCredentials, ErrInvalidCredentials or ErrUnavailable
	reason string // safe to show to the client
	cause  error  // for operators (ErrUnavailable); may be nil
	// weak marks an ErrInvalidCredentials that only says the scheme does
	// not recognise the credential at all ("unknown token", "malformed
	// token"), as opposed to a recognised but unacceptable one ("token
	// expired"). Set.Authenticate prefers the latter.
	weak bool
}

func (e *authError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v (scheme %q)", e.kind, e.scheme)
	if e.reason != "" {
		b.WriteString(": " + e.reason)
	}
	if e.cause != nil {
		b.WriteString(": " + e.cause.Error())
	}
	return b.String()
}

func (e *authError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.kind, e.cause}
	}
	return []error{e.kind}
}

func noCredentials(scheme string) error {
	return &authError{scheme: scheme, kind: ErrNoCredentials}
}

func invalid(scheme, reason string) error {
	return &authError{scheme: scheme, kind: ErrInvalidCredentials, reason: reason}
}

// unrecognised is a weak invalid: the credential is not one of this scheme's.
func unrecognised(scheme, reason string) error {
	return &authError{scheme: scheme, kind: ErrInvalidCredentials, reason: reason, weak: true}
}

func unavailable(scheme string, cause error) error {
	return &authError{scheme: scheme, kind: ErrUnavailable, reason: "signing keys unavailable", cause: cause}
}

// Reason returns the client-safe reason carried by an error of this package
// (for example "token expired" or "unknown API key"), or "" if it has none.
func Reason(err error) string {
	var ae *authError
	if errors.As(err, &ae) {
		return ae.reason
	}
	return ""
}

// ChallengeFor returns the WWW-Authenticate value to send with a 401 for a,
// given the error its Authenticate returned. For a bearer scheme (a
// challenge starting with "Bearer") and an error wrapping
// ErrInvalidCredentials it adds error="invalid_token" and the reason as
// error_description (RFC 6750 §3, §3.1); in every other case it is
// a.Challenge().
func ChallengeFor(a Authenticator, err error) string {
	c := a.Challenge()
	if !errors.Is(err, ErrInvalidCredentials) || !strings.HasPrefix(strings.ToLower(c), "bearer") {
		return c
	}
	c += `, error="invalid_token"`
	if r := Reason(err); r != "" {
		c += `, error_description=` + quote(r)
	}
	return c
}

// quote renders s as an RFC 9110 quoted-string, dropping characters that
// RFC 6750 does not allow in error_description.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

type ctxKey struct{}

// NewContext returns a copy of ctx that carries p.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal stored by [NewContext] (and by
// [Set.Middleware]); ok is false if there is none.
func FromContext(ctx context.Context) (p *Principal, ok bool) {
	p, ok = ctx.Value(ctxKey{}).(*Principal)
	return p, ok && p != nil
}
