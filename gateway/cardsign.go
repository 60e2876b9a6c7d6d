package gateway

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"

	"github.com/a2abridge/a2abridge/internal/cardsig"
	"github.com/a2abridge/a2abridge/server"
)

// cardSigningOptions reads the card_signing block into the options of a
// server.CardSigner and checks them by making one: an unreadable key
// file, a key that is not a private key, or a key that does not suit alg
// is an error naming the key.
func cardSigningOptions(f *CardSigningConfig) (*server.CardSignerOptions, error) {
	if f == nil {
		return nil, nil
	}
	if f.KeyFile == "" {
		return nil, errors.New("card_signing.key_file is required")
	}
	key, kid, err := cardsig.LoadPrivateKey(f.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("card_signing.key_file: %w", err)
	}
	o := &server.CardSignerOptions{Key: key, Algorithm: f.Alg, KeyID: f.KID, JKU: f.JKU}
	if o.KeyID == "" {
		o.KeyID = kid
	}
	if o.Algorithm == "" {
		o.Algorithm = defaultAlg(key)
	}
	if err := cardsig.CheckKey(o.Algorithm, key.Public()); err != nil {
		return nil, fmt.Errorf("card_signing.alg %q and the key in %s: %w", o.Algorithm, f.KeyFile, err)
	}
	if _, err := server.NewCardSigner(*o); err != nil {
		return nil, fmt.Errorf("card_signing: %w", err)
	}
	return o, nil
}

// defaultAlg is the JWS algorithm for a key: ES256/ES384/ES512 by the EC
// curve's size, RS256 for RSA, EdDSA for Ed25519.
func defaultAlg(k crypto.Signer) string {
	switch p := k.(type) {
	case *ecdsa.PrivateKey:
		switch p.Curve.Params().BitSize {
		case 384:
			return "ES384"
		case 521:
			return "ES512"
		}
		return "ES256"
	case *rsa.PrivateKey:
		return "RS256"
	case ed25519.PrivateKey:
		return "EdDSA"
	}
	return ""
}
