package server

import (
	"bytes"
	"crypto"
	"fmt"
	"net/http"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/internal/cardsig"
)

// JWKSPath is where a Host publishes its public keys (JWK Set, RFC 7517
// §5): the card signing key and, with push notifications, the push
// signing keys.
const JWKSPath = "/.well-known/jwks.json"

// CardSignerOptions configure a CardSigner.
type CardSignerOptions struct {
	// Key is the private key: Ed25519, ECDSA (P-256 for ES256, P-384 for
	// ES384, P-521 for ES512) or RSA of at least 2048 bits. Required.
	Key crypto.Signer
	// Algorithm is the JWS algorithm (RFC 7518 §3.1): "EdDSA", "ES256",
	// "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384" or
	// "PS512"; it must suit Key. Required.
	Algorithm string
	// KeyID is the signatures' kid and the published key's; "" means the
	// key's RFC 7638 SHA-256 thumbprint (base64url).
	KeyID string
	// JKU is the jku written into each signature's protected header: the
	// URL of a JWK Set holding the key. "" means the JWKSPath of the base
	// URL each card is served under (HostOptions.PublicURL, or the
	// per-request base URL; none when a transport is used without a
	// Host).
	JKU string
	// ExtraKeys, if set, returns another JWK Set ({"keys": […]}) whose
	// keys are published with the card signing key by Handler: the push
	// signing keys (push.Signer.JWKS), which share the JWKSPath.
	ExtraKeys func() []byte
}

// CardSigner signs the Agent Cards a Host serves (A2A 1.0 §8.4): the
// public card and the extended card (GetExtendedAgentCard, and
// agent/getAuthenticatedExtendedCard in A2A 0.3) each get one more entry
// in signatures, a JWS (RFC 7515) with the payload detached, over the
// card's canonical form: the card as served, read as the A2A 1.0
// AgentCard, with default and empty values removed and signatures
// excluded, serialized per RFC 8785 (JCS). This is the form
// @a2a-js/sdk 1.3.0 signs and verifies; its members outside the A2A 1.0
// AgentCard (the A2A 0.3 url, preferredTransport, additionalInterfaces,
// protocolVersion) are not covered. The protected header is {"alg",
// "typ": "JOSE", "kid", "jku"}. A served card is signed once and the
// result cached by its bytes. Set it as TransportOptions.CardSigner. It
// is safe for concurrent use.
type CardSigner struct {
	s     *cardsig.Signer
	jku   string
	extra func() []byte
}

// NewCardSigner checks o and returns a CardSigner. Errors name what is
// wrong: no key, an unsupported algorithm, or a key that does not suit
// the algorithm (for example an RSA key for ES256, or RSA below 2048
// bits).
func NewCardSigner(o CardSignerOptions) (*CardSigner, error) {
	s, err := cardsig.NewSigner(o.Key, o.Algorithm, o.KeyID)
	if err != nil {
		return nil, fmt.Errorf("card signing: %w", err)
	}
	return &CardSigner{s: s, jku: o.JKU, extra: o.ExtraKeys}, nil
}

// KeyID is the kid of the CardSigner's signatures.
func (s *CardSigner) KeyID() string { return s.s.KeyID() }

// JWKS is the JWK Set the CardSigner publishes: the public card signing
// key (with kid, "use": "sig" and alg) and the keys of
// CardSignerOptions.ExtraKeys.
func (s *CardSigner) JWKS() []byte {
	var b bytes.Buffer
	b.WriteString(`{"keys":[`)
	b.Write(s.s.PublicJWK())
	if s.extra != nil {
		var set struct {
			Keys []jsontext.Value `json:"keys"`
		}
		if err := json.Unmarshal(s.extra(), &set); err == nil {
			for _, k := range set.Keys {
				b.WriteByte(',')
				b.Write(k)
			}
		}
	}
	b.WriteString("]}")
	return b.Bytes()
}

// Handler serves JWKS on GET and HEAD with "Content-Type:
// application/jwk-set+json"; other methods get 405. A Host mounts it at
// JWKSPath unless HostOptions.JWKS is set.
func (s *CardSigner) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodGet {
			_, _ = w.Write(s.JWKS())
		}
	})
}

// sign adds the signature to an encoded card served under base (the
// Host's base URL, "" when unknown).
func (s *CardSigner) sign(card []byte, base string) ([]byte, error) {
	jku := s.jku
	if jku == "" && base != "" {
		jku = base + JWKSPath
	}
	return s.s.Sign(card, jku)
}
