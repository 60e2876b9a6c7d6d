package cli

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/cardsig"
	"github.com/a2abridge/a2abridge/server"
)

// cardSigningOptions reads the card_signing block into the options of a
// server.CardSigner and checks them by making one: an unreadable key
// file, a key that is not a private key, or a key that does not suit alg
// is an error naming the key.
func cardSigningOptions(f *cardSigningFile) (*server.CardSignerOptions, error) {
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

// cardVerifier makes the verifier of `card --verify`: keys from --jwks
// (an http(s) URL or a file holding a JWK Set), else the signature's jku
// on the card's host or a --jku-host; what verified, and what that
// proves, is written to w.
// keyTrust says what a verified signature proves, by where its key came
// from.
func keyTrust(s client.CardSignature, jkuHosts []string) string {
	switch {
	case !strings.HasPrefix(s.KeySource, "jku URL"):
		return "a key you gave with --jwks"
	case len(jkuHosts) > 0:
		return "a key published on a --jku-host, trusted as far as that host is"
	}
	return "a key published by the card's own host, not independently trusted: the card is as that host signed it (pin keys with --jwks)"
}

func cardVerifier(jwks string, jkuHosts []string, w io.Writer) (*client.CardVerifier, error) {
	o := client.CardVerifierOptions{JKUHosts: jkuHosts, Verified: func(s client.CardSignature) {
		fmt.Fprintf(w, "signature verified: kid %s, %s, key from %s: %s\n", s.KeyID, s.Algorithm, s.KeySource, keyTrust(s, jkuHosts))
	}}
	switch {
	case strings.HasPrefix(jwks, "http://") || strings.HasPrefix(jwks, "https://"):
		o.JWKSURL = jwks
	case jwks != "":
		b, err := os.ReadFile(jwks)
		if err == nil && len(b) == 0 {
			err = fmt.Errorf("%s is empty", jwks)
		}
		if err != nil {
			return nil, usageError{fmt.Errorf("--jwks: %w", err)}
		}
		o.JWKS = b
	}
	v, err := client.NewCardVerifier(o)
	if err != nil {
		return nil, usageError{fmt.Errorf("--jwks %s: %w", jwks, err)}
	}
	return v, nil
}
