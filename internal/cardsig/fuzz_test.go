package cardsig

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzSignVerify: any document either fails to canonicalize with
// ErrMalformedCard, or has an idempotent canonical form, signs, and its
// signed form verifies; Verify never panics on it.
func FuzzSignVerify(f *testing.F) {
	files, _ := filepath.Glob("testdata/canon/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(testCard))
	f.Add([]byte(`{"signatures":[{"protected":"eyJhbGciOiJub25lIn0","signature":""}]}`))
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	s, err := NewSigner(key, "EdDSA", "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	keys := func(context.Context, string, string) ([]Key, error) {
		return []Key{{ID: "fuzz", Public: key.Public()}}, nil
	}
	f.Fuzz(func(t *testing.T, card []byte) {
		_, _ = Verify(context.Background(), card, nil, keys)
		c, err := Canonicalize(card)
		if err != nil {
			if !errors.Is(err, ErrMalformedCard) {
				t.Fatalf("Canonicalize error %v does not wrap ErrMalformedCard", err)
			}
			return
		}
		if again, err := Canonicalize(c); err != nil || !bytes.Equal(again, c) {
			t.Fatalf("canonical form not idempotent: %s → %s (%v)", c, again, err)
		}
		signed, err := s.Sign(card, "")
		if err != nil {
			t.Fatalf("Sign: %v", err)
		}
		if _, err := Verify(context.Background(), signed, nil, keys); err != nil {
			t.Fatalf("signed card does not verify: %v\n%s", err, signed)
		}
	})
}
