package cardsig

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/lestrrat-go/jwx/v3/jws/jwsbb"
)

// TypeJOSE is the typ of the protected header (A2A 1.0 §8.4.2: "SHOULD be
// set to JOSE").
const TypeJOSE = "JOSE"

// Signature is one AgentCardSignature (A2A 1.0 §4.4.7): the base64url
// protected header, the base64url signature, and the unprotected header.
type Signature struct {
	Protected string         `json:"protected"`
	Signature string         `json:"signature"`
	Header    map[string]any `json:"header,omitempty"`
}

// protectedHeader is what a Signer puts in the protected header, in the
// order of the example of A2A 1.0 §8.4.2.
type protectedHeader struct {
	Alg string `json:"alg"`
	Typ string `json:"typ"`
	Kid string `json:"kid"`
	JKU string `json:"jku,omitempty"`
}

// maxCached bounds a Signer's cache of signed cards (one per distinct
// served card: per agent, per URL the card was served under, public or
// extended); when full it is emptied.
const maxCached = 256

// Signer signs Agent Card documents with one private key. It is safe for
// concurrent use.
type Signer struct {
	key      crypto.Signer
	alg, kid string
	jwk      []byte

	mu    sync.Mutex
	cache map[string][]byte // card bytes + "\x00" + jku → signed card
}

// NewSigner returns a Signer using key with the JWS algorithm alg (see
// Algorithms) under the key id kid; kid "" means the key's RFC 7638
// thumbprint. The key must match alg (CheckKey).
func NewSigner(key crypto.Signer, alg, kid string) (*Signer, error) {
	if key == nil {
		return nil, errors.New("no signing key")
	}
	if err := CheckKey(alg, key.Public()); err != nil {
		return nil, err
	}
	if kid == "" {
		var err error
		if kid, err = Thumbprint(key.Public()); err != nil {
			return nil, err
		}
	}
	pub, err := PublicJWK(key.Public(), kid, alg)
	if err != nil {
		return nil, err
	}
	return &Signer{key: key, alg: alg, kid: kid, jwk: pub, cache: map[string][]byte{}}, nil
}

// KeyID is the kid of the Signer's signatures.
func (s *Signer) KeyID() string { return s.kid }

// Algorithm is the JWS algorithm of the Signer's signatures.
func (s *Signer) Algorithm() string { return s.alg }

// PublicJWK is the public JWK of the signing key, with kid, use and alg.
func (s *Signer) PublicJWK() []byte { return s.jwk }

// Sign returns card with one more signature in its signatures member
// (added when absent, other members and existing signatures kept in
// order): a JWS over Canonicalize(card) whose protected header is
// {"alg", "typ": "JOSE", "kid", "jku"} (jku omitted when ""). The same
// card and jku give the same bytes back from a cache, without signing
// again. Errors are Canonicalize's, or the key's.
func (s *Signer) Sign(card []byte, jku string) ([]byte, error) {
	ck := string(card) + "\x00" + jku
	s.mu.Lock()
	out, ok := s.cache[ck]
	s.mu.Unlock()
	if ok {
		return out, nil
	}
	payload, err := Canonicalize(card)
	if err != nil {
		return nil, err
	}
	sig, err := s.signature(payload, jku)
	if err != nil {
		return nil, err
	}
	if out, err = withSignature(card, sig); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.cache) >= maxCached {
		clear(s.cache)
	}
	s.cache[ck] = out
	s.mu.Unlock()
	return out, nil
}

// signature computes the JWS over payload (RFC 7515 §5.1; the payload is
// detached).
func (s *Signer) signature(payload []byte, jku string) (Signature, error) {
	hdr, err := json.Marshal(protectedHeader{Alg: s.alg, Typ: TypeJOSE, Kid: s.kid, JKU: jku})
	if err != nil {
		return Signature{}, err
	}
	protected := base64.RawURLEncoding.EncodeToString(hdr)
	sig, err := jwsbb.Sign(s.key, s.alg, signingInput(protected, payload), nil)
	if err != nil {
		return Signature{}, fmt.Errorf("signing the agent card: %w", err)
	}
	return Signature{Protected: protected, Signature: base64.RawURLEncoding.EncodeToString(sig)}, nil
}

// signingInput is ASCII(BASE64URL(protected header) || '.' ||
// BASE64URL(payload)) (RFC 7515 §5.1 step 5).
func signingInput(protected string, payload []byte) []byte {
	enc := base64.RawURLEncoding
	b := make([]byte, 0, len(protected)+1+enc.EncodedLen(len(payload)))
	b = append(b, protected...)
	b = append(b, '.')
	return enc.AppendEncode(b, payload)
}

// withSignature writes card with sig appended to its signatures member.
func withSignature(card []byte, sig Signature) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(card))
	if t, err := dec.ReadToken(); err != nil || t.Kind() != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformedCard)
	}
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out)
	_ = enc.WriteToken(jsontext.BeginObject)
	var sigs []jsontext.Value
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformedCard, err)
		}
		name := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformedCard, err)
		}
		if name == "signatures" {
			if err := json.Unmarshal(v, &sigs); err != nil {
				return nil, fmt.Errorf("%w: signatures: %v", ErrMalformedCard, err)
			}
			continue
		}
		if err := errors.Join(enc.WriteToken(jsontext.String(name)), enc.WriteValue(v)); err != nil {
			return nil, err
		}
	}
	mine, err := json.Marshal(sig)
	if err != nil {
		return nil, err
	}
	sigs = append(sigs, mine)
	if err := errors.Join(enc.WriteToken(jsontext.String("signatures")), json.MarshalEncode(enc, sigs), enc.WriteToken(jsontext.EndObject)); err != nil {
		return nil, err
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}
