package push

import "errors"

// Sentinel errors returned (wrapped, with detail) by [Verifier.Verify]. Test
// for them with errors.Is. A webhook typically answers 401 Unauthorized for
// all of them except [ErrKeysUnavailable], for which 503 Service Unavailable
// lets the sender retry later.
var (
	// ErrMissingToken: the request has no "Authorization: Bearer <jwt>" header.
	ErrMissingToken = errors.New("push: missing bearer token")
	// ErrMalformed: the token is not a compact JWS, its header or claims are
	// not valid JSON, or a required claim (iat, exp, jti,
	// request_body_sha256) is missing or has the wrong type.
	ErrMalformed = errors.New("push: malformed token")
	// ErrBadSignature: the signature does not verify, the algorithm is not
	// ES256 or RS256, the header has no kid, or the kid is not in the
	// sender's JWK Set (even after a refetch).
	ErrBadSignature = errors.New("push: bad signature")
	// ErrKeysUnavailable: the sender's JWK Set could not be fetched, and no
	// cached key matches the token's kid.
	ErrKeysUnavailable = errors.New("push: signing keys unavailable")
	// ErrExpired: exp is in the past (beyond the leeway).
	ErrExpired = errors.New("push: token expired")
	// ErrStale: iat is older than the verifier's MaxAge, or in the future
	// (beyond the leeway).
	ErrStale = errors.New("push: token issued too long ago or in the future")
	// ErrReplay: a token with the same jti was already accepted recently.
	ErrReplay = errors.New("push: token replayed")
	// ErrBodyMismatch: request_body_sha256 is not the SHA-256 of the body.
	ErrBodyMismatch = errors.New("push: body does not match the token")
	// ErrAudience: aud does not contain the verifier's configured Audience.
	ErrAudience = errors.New("push: wrong audience")
	// ErrIssuer: iss is not the verifier's configured Issuer.
	ErrIssuer = errors.New("push: wrong issuer")
)

// ErrForbiddenAddress is returned (wrapped, inside the *url.Error of an
// http.Client call or from [CheckURL]) when a webhook URL points at, or
// resolves to, an address that the SSRF guard refuses: loopback, private,
// link-local, CGNAT, multicast, unspecified or otherwise non-public, and not
// allowlisted. Test for it with errors.Is.
var ErrForbiddenAddress = errors.New("push: forbidden address")

// ErrUnresolvedHost is returned (wrapped, with detail) by [CheckURLContext]
// when a webhook URL's host name cannot be resolved, so what it points at
// cannot be checked: the name does not exist (NXDOMAIN) or has no address,
// or the lookup failed or did not finish within [ResolveTimeout] (the
// message then says to try again later). Test for it with errors.Is.
var ErrUnresolvedHost = errors.New("push: cannot resolve webhook host")
