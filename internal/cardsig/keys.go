package cardsig

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

// MinRSABits is the smallest RSA modulus accepted for signing and
// verifying (RFC 7518 §3.3, §3.5: 2048 bits or larger).
const MinRSABits = 2048

// family is a key type.
type family uint8

const (
	famEC family = iota + 1
	famRSA
	famEd25519
)

// algorithm is one JWS algorithm (RFC 7518 §3.1, RFC 8037 §3.1, RFC 9864).
type algorithm struct {
	fam   family
	curve elliptic.Curve // for famEC
}

// algorithms are the JWS algorithms a card may be signed with. "none" and
// the HMAC algorithms are not among them: a card's signature must be
// verifiable by anyone with the public key.
var algorithms = map[string]algorithm{
	"ES256":   {famEC, elliptic.P256()},
	"ES384":   {famEC, elliptic.P384()},
	"ES512":   {famEC, elliptic.P521()},
	"RS256":   {fam: famRSA},
	"RS384":   {fam: famRSA},
	"RS512":   {fam: famRSA},
	"PS256":   {fam: famRSA},
	"PS384":   {fam: famRSA},
	"PS512":   {fam: famRSA},
	"EdDSA":   {fam: famEd25519},
	"Ed25519": {fam: famEd25519},
}

// Algorithms lists the JWS algorithms Verify accepts by default and a
// Signer may use, sorted.
func Algorithms() []string {
	out := make([]string, 0, len(algorithms))
	for a := range algorithms {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// ErrKeyMismatch is wrapped when a key cannot be used with an algorithm.
var ErrKeyMismatch = errors.New("key does not match the algorithm")

// CheckKey reports whether pub can verify (its private key sign) alg:
// an EC key on the algorithm's curve, an RSA key of at least MinRSABits,
// an Ed25519 key for EdDSA. Errors wrap ErrKeyMismatch, or name an
// algorithm that is not supported.
func CheckKey(alg string, pub crypto.PublicKey) error {
	a, ok := algorithms[alg]
	if !ok {
		return fmt.Errorf("algorithm %q is not supported (want one of %v)", alg, Algorithms())
	}
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if a.fam == famEC && k.Curve == a.curve {
			return nil
		}
		return fmt.Errorf("%w: an EC key on %s cannot be used with %s", ErrKeyMismatch, k.Curve.Params().Name, alg)
	case *rsa.PublicKey:
		if a.fam != famRSA {
			return fmt.Errorf("%w: an RSA key cannot be used with %s", ErrKeyMismatch, alg)
		}
		if k.N.BitLen() < MinRSABits {
			return fmt.Errorf("%w: the RSA key has %d bits, fewer than %d", ErrKeyMismatch, k.N.BitLen(), MinRSABits)
		}
		return nil
	case ed25519.PublicKey:
		if a.fam == famEd25519 {
			return nil
		}
		return fmt.Errorf("%w: an Ed25519 key cannot be used with %s", ErrKeyMismatch, alg)
	}
	return fmt.Errorf("%w: unsupported key type %T", ErrKeyMismatch, pub)
}

// LoadPrivateKey reads a private key file: PEM ("PRIVATE KEY" PKCS #8,
// "RSA PRIVATE KEY" PKCS #1 or "EC PRIVATE KEY" SEC 1) or a JWK (RFC 7517)
// with its private members. kid is the JWK's "kid" ("" for PEM). Errors
// name the file.
func LoadPrivateKey(path string) (key crypto.Signer, kid string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		key, kid, err = parseJWKPrivate(t)
	} else {
		key, err = parsePEMPrivate(b)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return key, kid, nil
}

func parsePEMPrivate(b []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("neither a PEM private key nor a JWK")
	}
	var k any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block %q is not a private key (want PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)", block.Type)
	}
	if err != nil {
		return nil, err
	}
	return asSigner(k)
}

func parseJWKPrivate(b []byte) (crypto.Signer, string, error) {
	k, err := jwk.ParseKey(b)
	if err != nil {
		return nil, "", fmt.Errorf("JWK: %w", err)
	}
	if private, err := jwk.IsPrivateKey(k); err != nil || !private {
		return nil, "", errors.New("the JWK holds no private key")
	}
	var raw any
	if err := jwk.Export(k, &raw); err != nil {
		return nil, "", fmt.Errorf("JWK: %w", err)
	}
	s, err := asSigner(raw)
	if err != nil {
		return nil, "", err
	}
	kid, _ := k.KeyID()
	return s, kid, nil
}

func asSigner(k any) (crypto.Signer, error) {
	switch p := k.(type) {
	case *ecdsa.PrivateKey:
		return p, nil
	case *rsa.PrivateKey:
		return p, nil
	case ed25519.PrivateKey:
		return p, nil
	case *ed25519.PrivateKey:
		return *p, nil
	}
	return nil, fmt.Errorf("unsupported key type %T (want EC, RSA or Ed25519)", k)
}

// Key is one public key a signature may be verified with.
type Key struct {
	// ID is the key's kid.
	ID string
	// Public is an *ecdsa.PublicKey, *rsa.PublicKey or ed25519.PublicKey.
	Public crypto.PublicKey
	// Algorithm is the JWK's "alg", or "" when it names none (then any
	// algorithm of the key's type may be used).
	Algorithm string
	// Source says where the key came from, for messages ("JWKS
	// https://…").
	Source string
}

// PublicJWK is the public JWK (RFC 7517) of pub with kid, "use": "sig" and
// alg.
func PublicJWK(pub crypto.PublicKey, kid, alg string) ([]byte, error) {
	k, err := jwk.Import(pub)
	if err != nil {
		return nil, err
	}
	for name, v := range map[string]string{jwk.KeyIDKey: kid, jwk.KeyUsageKey: "sig", jwk.AlgorithmKey: alg} {
		if err := k.Set(name, v); err != nil {
			return nil, err
		}
	}
	if private, err := jwk.IsPrivateKey(k); err != nil || private {
		return nil, errors.New("internal error: the published key is not public")
	}
	return json.Marshal(k)
}

// Thumbprint is the RFC 7638 SHA-256 thumbprint of pub, base64url: a kid
// for a key that has none.
func Thumbprint(pub crypto.PublicKey) (string, error) {
	k, err := jwk.Import(pub)
	if err != nil {
		return "", err
	}
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(tp), nil
}

// ParseJWKS reads a JWK Set (RFC 7517 §5), or a single JWK, into its
// signature keys: keys whose "use", when present, is "sig", that have a
// kid and whose type this package can verify with (for a private JWK, its
// public half). Other keys are skipped; a document that is not a JWK Set
// is an error.
func ParseJWKS(b []byte) ([]Key, error) {
	set, err := jwk.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("not a JWK Set: %w", err)
	}
	var out []Key
	for i := range set.Len() {
		k, _ := set.Key(i)
		if key, ok := sigKey(k); ok {
			out = append(out, key)
		}
	}
	return out, nil
}

func sigKey(k jwk.Key) (Key, bool) {
	kid, _ := k.KeyID()
	if use, ok := k.KeyUsage(); kid == "" || ok && use != "sig" {
		return Key{}, false
	}
	pk, err := jwk.PublicKeyOf(k)
	if err != nil {
		return Key{}, false
	}
	var raw any
	if err := jwk.Export(pk, &raw); err != nil {
		return Key{}, false
	}
	if p, ok := raw.(*ed25519.PublicKey); ok {
		raw = *p
	}
	key := Key{ID: kid, Public: raw}
	if a, ok := k.Algorithm(); ok {
		key.Algorithm = a.String()
	}
	switch raw.(type) {
	case *ecdsa.PublicKey, *rsa.PublicKey, ed25519.PublicKey:
		return key, true
	}
	return Key{}, false
}
