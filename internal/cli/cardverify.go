package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/a2abridge/a2abridge/client"
)

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

// cardVerifier makes the verifier of `card --verify`: keys from --jwks
// (an http(s) URL or a file holding a JWK Set), else the signature's jku
// on the card's host or a --jku-host; what verified, and what that
// proves, is written to w.
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
