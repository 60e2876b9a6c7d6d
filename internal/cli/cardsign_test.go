package cli

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeKey writes k as a PKCS #8 PEM file in dir.
func writeKey(t *testing.T, dir, name string, k crypto.Signer) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCardSigningConfigErrors(t *testing.T) {
	dir := t.TempDir()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	ecFile, smallFile := writeKey(t, dir, "ec.pem", ec), writeKey(t, dir, "small.pem", small)
	notKey := filepath.Join(dir, "not.pem")
	os.WriteFile(notKey, []byte("hello"), 0o600)
	for i, c := range []struct{ body, want string }{
		{"card_signing:\n  kid: x\n", "card_signing.key_file is required"},
		{"card_signing:\n  key_file: " + filepath.Join(dir, "missing.pem") + "\n", "card_signing.key_file: open "},
		{"card_signing:\n  key_file: " + notKey + "\n", "neither a PEM private key nor a JWK"},
		{"card_signing:\n  key_file: " + ecFile + "\n  alg: RS256\n", `card_signing.alg "RS256" and the key in ` + ecFile + `: key does not match the algorithm: an EC key on P-256 cannot be used with RS256`},
		{"card_signing:\n  key_file: " + ecFile + "\n  alg: none\n", `algorithm "none" is not supported`},
		{"card_signing:\n  key_file: " + smallFile + "\n", "the RSA key has 1024 bits, fewer than 2048"},
		{"card_signing:\n  key: " + ecFile + "\n", `unknown key "key" in card_signing`},
	} {
		cfg := filepath.Join(dir, string(rune('a'+i))+".yaml")
		os.WriteFile(cfg, []byte(c.body), 0o600)
		_, errs, code := run(t, "", "serve", "--memory", "--addr", "127.0.0.1:0", "--config", cfg)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q (want %q)", c.body, code, errs, c.want)
		}
	}
}

func TestCardVerifyCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cfg := filepath.Join(dir, "sign.yaml")
	os.WriteFile(cfg, []byte("card_signing:\n  key_file: "+writeKey(t, dir, "ec.pem", ec)+"\n  kid: cli-1\n"), 0o600)
	signed, unsigned := freeAddr(t), freeAddr(t)
	startChild(t, "--memory", "--addr", signed, "--config", cfg, "--push")
	startChild(t, "--memory", "--addr", unsigned)

	out, errs, code := run(t, "", "card", "http://"+signed+"/a2a/chat", "--verify")
	if code != ExitOK || !strings.Contains(out+errs, "signature verified: kid cli-1, ES256, key from jku URL http://"+signed+"/.well-known/jwks.json: a key published by the card's own host, not independently trusted") {
		t.Fatalf("card --verify: exit %d\n%s\n%s", code, out, errs)
	}
	jwks := "http://" + signed + "/.well-known/jwks.json"
	if out, errs, code := run(t, "", "card", "http://"+signed, "--verify", "--jwks", jwks); code != ExitOK || !strings.Contains(out+errs, "key from JWKS URL "+jwks+": a key you gave with --jwks") {
		t.Fatalf("card --verify --jwks URL: exit %d\n%s\n%s", code, out, errs)
	}
	// Another key set: the card's key is not in it, and its jku is not followed.
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"keys":[{"kty":"EC","crv":"P-256","kid":"else","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}`), 0o600)
	if _, errs, code := run(t, "", "card", "http://"+signed, "--verify", "--jwks", other); code != ExitFailure || !strings.Contains(errs, "jku not allowed") {
		t.Errorf("card --verify --jwks other: exit %d, %s", code, errs)
	}
	if _, errs, code := run(t, "", "card", "http://"+unsigned, "--verify"); code != ExitFailure || !strings.Contains(errs, "the agent card is not signed") {
		t.Errorf("unsigned card: exit %d, %s", code, errs)
	}
	if _, errs, code := run(t, "", "card", "http://"+unsigned, "--jwks", other); code != ExitUsage || !strings.Contains(errs, "need --verify") {
		t.Errorf("--jwks without --verify: exit %d, %s", code, errs)
	}
}
