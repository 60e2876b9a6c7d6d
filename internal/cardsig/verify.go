package cardsig

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/lestrrat-go/jwx/v3/jws/jwsbb"
)

// Errors of Verify; each failure wraps one of them.
var (
	// ErrNoSignatures: the card has no signatures member, or an empty one.
	ErrNoSignatures = errors.New("the agent card is not signed")
	// ErrMalformedSignature: a signature is not a valid AgentCardSignature
	// (not base64url, a protected header that is not a JSON object,
	// missing alg, typ or kid, crit or b64 present, a parameter both
	// protected and unprotected, too large).
	ErrMalformedSignature = errors.New("malformed signature")
	// ErrAlgorithm: the alg is not among the accepted ones ("none" and
	// HMAC never are).
	ErrAlgorithm = errors.New("signature algorithm not accepted")
	// ErrUnknownKey: no key with the signature's kid is known.
	ErrUnknownKey = errors.New("unknown signing key")
	// ErrJKUNotAllowed: the signature's jku may not be fetched.
	ErrJKUNotAllowed = errors.New("jku not allowed")
	// ErrBadSignature: the signature does not verify with the key: the
	// card was changed after signing, or was signed with another key.
	ErrBadSignature = errors.New("signature does not verify")
)

// Limits on what Verify reads from a card.
const (
	maxSignatures      = 16
	maxProtectedLength = 4096 // base64url characters
	maxSignatureLength = 2048 // base64url characters: RSA-8192 needs 1366
)

// Keys looks up the keys a signature may have been made with, from its
// protected header's kid and jku (jku "" when absent). It returns an error
// wrapping ErrUnknownKey when it knows no key with that kid, ErrJKUNotAllowed
// when only jku could have given one and it may not be fetched, or the
// error of a failed key fetch.
type Keys func(ctx context.Context, kid, jku string) ([]Key, error)

// Verified says which signature of a card verified.
type Verified struct {
	// Index is the signature's position in the card's signatures array.
	Index int
	// KeyID, Algorithm and JKU are from its protected header.
	KeyID, Algorithm, JKU string
	// Source is the Source of the key it verified with.
	Source string
	// Payload is the canonical form of the card (Canonicalize): exactly
	// the content the signature covers. A card used because it verified
	// must be read from Payload, not from the document as received,
	// whose members outside the A2A 1.0 AgentCard are not covered.
	Payload []byte
}

// Verify checks the signatures of an Agent Card document, as received
// (A2A 1.0 §8.4.3): it canonicalizes card once, then tries each signature
// in order, with the keys that keys returns for its kid and jku, and
// succeeds with the first that verifies, returning the canonical payload
// with it (Verified.Payload). algs lists the accepted
// algorithms (nil: Algorithms()). A failure wraps ErrMalformedCard,
// ErrNoSignatures, or, when no signature verified, the error of each
// signature (errors.Is finds ErrBadSignature, ErrUnknownKey, …).
func Verify(ctx context.Context, card []byte, algs []string, keys Keys) (Verified, error) {
	sigs, err := signaturesOf(card)
	if err != nil {
		return Verified{}, err
	}
	payload, err := Canonicalize(card)
	if err != nil {
		return Verified{}, err
	}
	if algs == nil {
		algs = Algorithms()
	}
	var errs []error
	for i, s := range sigs {
		v, err := verifyOne(ctx, s, payload, algs, keys)
		if err == nil {
			v.Index, v.Payload = i, payload
			return v, nil
		}
		if len(sigs) > 1 {
			err = fmt.Errorf("signature %d: %w", i, err)
		}
		errs = append(errs, err)
	}
	return Verified{}, errors.Join(errs...)
}

// signaturesOf reads the card's signatures member.
func signaturesOf(card []byte) ([]Signature, error) {
	var doc struct {
		Signatures []Signature `json:"signatures"`
	}
	if err := json.Unmarshal(card, &doc); err != nil {
		return nil, fmt.Errorf("%w: signatures: %v", ErrMalformedSignature, err)
	}
	switch n := len(doc.Signatures); {
	case n == 0:
		return nil, ErrNoSignatures
	case n > maxSignatures:
		return nil, fmt.Errorf("%w: %d signatures, more than %d", ErrMalformedSignature, n, maxSignatures)
	}
	return doc.Signatures, nil
}

// verifyOne checks one signature against payload.
func verifyOne(ctx context.Context, s Signature, payload []byte, algs []string, keys Keys) (Verified, error) {
	h, err := parseProtected(s)
	if err != nil {
		return Verified{}, err
	}
	v := Verified{KeyID: h.Kid, Algorithm: h.Alg, JKU: h.JKU}
	if !slices.Contains(algs, h.Alg) {
		return v, fmt.Errorf("%w: %q (accepted: %s)", ErrAlgorithm, h.Alg, strings.Join(algs, ", "))
	}
	if len(s.Signature) > maxSignatureLength {
		return v, fmt.Errorf("%w: the signature has %d characters, more than %d", ErrMalformedSignature, len(s.Signature), maxSignatureLength)
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(s.Signature)
	if err != nil {
		return v, fmt.Errorf("%w: the signature is not base64url: %v", ErrMalformedSignature, err)
	}
	candidates, err := keys(ctx, h.Kid, h.JKU)
	if err != nil {
		return v, err
	}
	input := signingInput(s.Protected, payload)
	var errs []error
	for _, k := range candidates {
		if k.Algorithm != "" && k.Algorithm != h.Alg {
			errs = append(errs, fmt.Errorf("%w: key %q is for %s, the signature says %s", ErrKeyMismatch, k.ID, k.Algorithm, h.Alg))
			continue
		}
		if err := CheckKey(h.Alg, k.Public); err != nil {
			errs = append(errs, fmt.Errorf("key %q: %w", k.ID, err))
			continue
		}
		if jwsbb.Verify(k.Public, h.Alg, input, sig) == nil {
			v.Source = k.Source
			return v, nil
		}
		errs = append(errs, fmt.Errorf("%w with key %q (%s)", ErrBadSignature, k.ID, h.Alg))
	}
	if len(errs) == 0 {
		return v, fmt.Errorf("%w: kid %q", ErrUnknownKey, h.Kid)
	}
	return v, errors.Join(errs...)
}

// header is the part of a protected header Verify reads.
type header struct {
	Alg  string `json:"alg"`
	Typ  string `json:"typ"`
	Kid  string `json:"kid"`
	JKU  string `json:"jku"`
	Crit any    `json:"crit"`
	B64  any    `json:"b64"`
}

// parseProtected decodes and checks a signature's protected header: alg,
// typ and kid are required (A2A 1.0 §8.4.2), crit and b64 (RFC 7797) are
// refused, and no parameter may be in both headers (RFC 7515 §7.2.1).
func parseProtected(s Signature) (header, error) {
	if len(s.Protected) > maxProtectedLength {
		return header{}, fmt.Errorf("%w: the protected header has %d characters, more than %d", ErrMalformedSignature, len(s.Protected), maxProtectedLength)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s.Protected)
	if err != nil {
		return header{}, fmt.Errorf("%w: the protected header is not base64url: %v", ErrMalformedSignature, err)
	}
	var members map[string]any
	if err := json.Unmarshal(raw, &members); err != nil {
		return header{}, fmt.Errorf("%w: the protected header is not a JSON object: %v", ErrMalformedSignature, err)
	}
	var h header
	if err := json.Unmarshal(raw, &h); err != nil {
		return header{}, fmt.Errorf("%w: protected header: %v", ErrMalformedSignature, err)
	}
	switch {
	case h.Alg == "":
		return h, fmt.Errorf("%w: the protected header has no alg", ErrMalformedSignature)
	case h.Alg == "none":
		return h, fmt.Errorf("%w: alg \"none\" (an unsigned JWS)", ErrAlgorithm)
	case h.Kid == "":
		return h, fmt.Errorf("%w: the protected header has no kid", ErrMalformedSignature)
	case h.Typ == "":
		return h, fmt.Errorf("%w: the protected header has no typ", ErrMalformedSignature)
	case h.Crit != nil:
		return h, fmt.Errorf("%w: crit is not supported", ErrMalformedSignature)
	case h.B64 != nil:
		return h, fmt.Errorf("%w: b64 (RFC 7797) is not supported", ErrMalformedSignature)
	}
	for name := range s.Header {
		if _, dup := members[name]; dup {
			return h, fmt.Errorf("%w: %q is in both the protected and the unprotected header", ErrMalformedSignature, name)
		}
	}
	return h, nil
}

// ErrUncovered is wrapped by CheckCovered's errors.
var ErrUncovered = errors.New("endpoint not covered by the signature")

// CheckCovered reports an A2A 0.3 endpoint of a union card (url, or an
// additionalInterfaces url) that is not also among its
// supportedInterfaces: the signature covers only the latter, so a client
// that trusts the card because it verified must not use the former.
func CheckCovered(card []byte) error {
	var doc struct {
		URL        string `json:"url"`
		Additional []struct {
			URL string `json:"url"`
		} `json:"additionalInterfaces"`
		Supported []struct {
			URL string `json:"url"`
		} `json:"supportedInterfaces"`
	}
	if err := json.Unmarshal(card, &doc); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedCard, err)
	}
	signed := make(map[string]bool, len(doc.Supported))
	for _, it := range doc.Supported {
		signed[it.URL] = true
	}
	urls := []string{doc.URL}
	for _, it := range doc.Additional {
		urls = append(urls, it.URL)
	}
	for _, u := range urls {
		if u != "" && !signed[u] {
			return fmt.Errorf("%w: the A2A 0.3 endpoint %q is not among the signed supportedInterfaces", ErrUncovered, u)
		}
	}
	return nil
}
