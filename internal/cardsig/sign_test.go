package cardsig

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
)

const testCard = `{"protocolVersion":"0.3.0","name":"echo","description":"d","url":"https://a.example/a2a/echo","supportedInterfaces":[{"url":"https://a.example/a2a/echo","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"version":"1","capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`

var (
	keysOnce sync.Once
	keys     map[string]crypto.Signer
)

// testKeys are one key per algorithm family (RSA generation is slow:
// made once).
func testKeys(t *testing.T) map[string]crypto.Signer {
	t.Helper()
	keysOnce.Do(func() {
		ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		rs, _ := rsa.GenerateKey(rand.Reader, 2048)
		_, ed, _ := ed25519.GenerateKey(rand.Reader)
		keys = map[string]crypto.Signer{"ES256": ec, "RS256": rs, "PS256": rs, "EdDSA": ed}
	})
	return keys
}

// given returns a Keys that knows exactly ks.
func given(ks ...Key) Keys {
	return func(_ context.Context, kid, _ string) ([]Key, error) {
		var out []Key
		for _, k := range ks {
			if k.ID == kid {
				out = append(out, k)
			}
		}
		if len(out) == 0 {
			return nil, ErrUnknownKey
		}
		return out, nil
	}
}

func newSigner(t *testing.T, alg, kid string) *Signer {
	t.Helper()
	s, err := NewSigner(testKeys(t)[alg], alg, kid)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keyOf(s *Signer) Key {
	return Key{ID: s.KeyID(), Public: s.key.Public(), Algorithm: s.Algorithm()}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	for _, alg := range []string{"ES256", "RS256", "PS256", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			s := newSigner(t, alg, "k-"+alg)
			signed, err := s.Sign([]byte(testCard), "https://a.example/.well-known/jwks.json")
			if err != nil {
				t.Fatal(err)
			}
			v, err := Verify(context.Background(), signed, nil, given(keyOf(s)))
			if err != nil {
				t.Fatal(err)
			}
			if v.KeyID != "k-"+alg || v.Algorithm != alg || v.JKU != "https://a.example/.well-known/jwks.json" || v.Index != 0 {
				t.Errorf("Verified = %+v", v)
			}
			var doc struct{ Signatures []Signature }
			if err := json.Unmarshal(signed, &doc, json.MatchCaseInsensitiveNames(true)); err != nil || len(doc.Signatures) != 1 {
				t.Fatalf("signatures: %v %s", err, signed)
			}
			hdr, _ := base64.RawURLEncoding.DecodeString(doc.Signatures[0].Protected)
			if want := `{"alg":"` + alg + `","typ":"JOSE","kid":"k-` + alg + `","jku":"https://a.example/.well-known/jwks.json"}`; string(hdr) != want {
				t.Errorf("protected header %s, want %s", hdr, want)
			}
		})
	}
}

func TestSignKeepsMembersAndCaches(t *testing.T) {
	s := newSigner(t, "ES256", "")
	card := `{"name":"n","signatures":[{"protected":"cA","signature":"cw"}],"x":{"a":[1,2]}}`
	a, err := s.Sign([]byte(card), "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(a), `{"name":"n","x":{"a":[1,2]},"signatures":[{"protected":"cA","signature":"cw"},{"protected":"`) {
		t.Errorf("signed card = %s", a)
	}
	b, _ := s.Sign([]byte(card), "")
	if string(a) != string(b) {
		t.Error("the same card was signed twice (ECDSA signatures differ): not cached")
	}
	tp, _ := Thumbprint(testKeys(t)["ES256"].Public())
	if s.KeyID() != tp {
		t.Errorf("kid = %q, want the thumbprint %q", s.KeyID(), tp)
	}
}

func TestVerifyTamperedCardFails(t *testing.T) {
	s := newSigner(t, "ES256", "k")
	signed, _ := s.Sign([]byte(testCard), "")
	for name, tamper := range map[string]func(string) string{
		"name": func(c string) string { return strings.Replace(c, `"name":"echo"`, `"name":"evil"`, 1) },
		"supportedInterfaces": func(c string) string {
			return strings.Replace(c, `"url":"https://a.example/a2a/echo","protocolBinding"`, `"url":"https://evil.example","protocolBinding"`, 1)
		},
		"capability added": func(c string) string {
			return strings.Replace(c, `"streaming":true`, `"streaming":true,"pushNotifications":false`, 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := tamper(string(signed))
			if c == string(signed) {
				t.Fatal("tamper changed nothing")
			}
			_, err := Verify(context.Background(), []byte(c), nil, given(keyOf(s)))
			if !errors.Is(err, ErrBadSignature) {
				t.Errorf("err = %v, want ErrBadSignature", err)
			}
		})
	}
	// Members outside the 1.0 AgentCard are not covered (see the package doc).
	c := strings.Replace(string(signed), `"url":"https://a.example/a2a/echo","supportedInterfaces"`, `"url":"https://evil.example","supportedInterfaces"`, 1)
	if _, err := Verify(context.Background(), []byte(c), nil, given(keyOf(s))); err != nil {
		t.Errorf("0.3 url changed: %v (not covered, should verify)", err)
	}
}

func TestVerifyKeyRotationByKid(t *testing.T) {
	old, cur := newSigner(t, "RS256", "2025"), newSigner(t, "ES256", "2026")
	signed, _ := old.Sign([]byte(testCard), "")
	signed, _ = cur.Sign(signed, "")
	// Only the new key is still trusted: the second signature verifies.
	v, err := Verify(context.Background(), signed, nil, given(keyOf(cur)))
	if err != nil || v.Index != 1 || v.KeyID != "2026" {
		t.Fatalf("Verified %+v, %v; want signature 1 by kid 2026", v, err)
	}
	// Only the old key: the first one does.
	if v, err := Verify(context.Background(), signed, nil, given(keyOf(old))); err != nil || v.Index != 0 {
		t.Fatalf("Verified %+v, %v; want signature 0", v, err)
	}
	// A key under the right kid but the wrong key material fails.
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	wrong := Key{ID: "2026", Public: other.Public()}
	_, err = Verify(context.Background(), signed, nil, given(wrong))
	if !errors.Is(err, ErrBadSignature) || !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "signature 1:") {
		t.Errorf("err = %v, want signature 0 ErrUnknownKey, signature 1 ErrBadSignature", err)
	}
}

func TestVerifyAlgorithmRestriction(t *testing.T) {
	s := newSigner(t, "RS256", "k")
	signed, _ := s.Sign([]byte(testCard), "")
	_, err := Verify(context.Background(), signed, []string{"ES256"}, given(keyOf(s)))
	if !errors.Is(err, ErrAlgorithm) {
		t.Errorf("err = %v, want ErrAlgorithm", err)
	}
	// An ES256 header over an RSA key: the key does not match.
	k := keyOf(s)
	k.Algorithm = ""
	bad := withHeader(t, signed, `{"alg":"ES256","typ":"JOSE","kid":"k"}`)
	if _, err := Verify(context.Background(), bad, nil, given(k)); !errors.Is(err, ErrKeyMismatch) {
		t.Errorf("err = %v, want ErrKeyMismatch", err)
	}
}

// withHeader replaces the protected header of the card's only signature.
func withHeader(t *testing.T, card []byte, hdr string) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(card, &doc); err != nil {
		t.Fatal(err)
	}
	sig := doc["signatures"].([]any)[0].(map[string]any)
	sig["protected"] = base64.RawURLEncoding.EncodeToString([]byte(hdr))
	b, _ := json.Marshal(doc)
	return b
}

func TestVerifyHostileSignatures(t *testing.T) {
	s := newSigner(t, "ES256", "k")
	signed, _ := s.Sign([]byte(testCard), "")
	good := given(keyOf(s))
	base := strings.TrimSuffix(testCard, "}")
	for _, tc := range []struct {
		name string
		card []byte
		want error
	}{
		{"unsigned", []byte(testCard), ErrNoSignatures},
		{"empty signatures", []byte(base + `,"signatures":[]}`), ErrNoSignatures},
		{"signatures not an array", []byte(base + `,"signatures":{"protected":"a"}}`), ErrMalformedSignature},
		{"protected not a string", []byte(base + `,"signatures":[{"protected":1,"signature":"a"}]}`), ErrMalformedSignature},
		{"garbage base64", []byte(base + `,"signatures":[{"protected":"!!!","signature":"a"}]}`), ErrMalformedSignature},
		{"padded base64", []byte(base + `,"signatures":[{"protected":"eyJ9=","signature":"a"}]}`), ErrMalformedSignature},
		{"header not JSON", withHeader(t, signed, `alg`), ErrMalformedSignature},
		{"huge header", withHeader(t, signed, `{"alg":"ES256","typ":"JOSE","kid":"k","x":"`+strings.Repeat("a", 8000)+`"}`), ErrMalformedSignature},
		{"huge signature", []byte(strings.Replace(string(signed), `"signature":"`, `"signature":"`+strings.Repeat("A", 5000), 1)), ErrMalformedSignature},
		{"too many signatures", []byte(base + `,"signatures":[` + strings.Repeat(`{"protected":"a","signature":"b"},`, 16) + `{"protected":"a","signature":"b"}]}`), ErrMalformedSignature},
		{"alg none", withHeader(t, signed, `{"alg":"none","typ":"JOSE","kid":"k"}`), ErrAlgorithm},
		{"alg HS256", withHeader(t, signed, `{"alg":"HS256","typ":"JOSE","kid":"k"}`), ErrAlgorithm},
		{"no kid", withHeader(t, signed, `{"alg":"ES256","typ":"JOSE"}`), ErrMalformedSignature},
		{"no typ", withHeader(t, signed, `{"alg":"ES256","kid":"k"}`), ErrMalformedSignature},
		{"crit", withHeader(t, signed, `{"alg":"ES256","typ":"JOSE","kid":"k","crit":["x"],"x":1}`), ErrMalformedSignature},
		{"b64 false", withHeader(t, signed, `{"alg":"ES256","typ":"JOSE","kid":"k","b64":false,"crit":["b64"]}`), ErrMalformedSignature},
		{"unknown kid", withHeader(t, signed, `{"alg":"ES256","typ":"JOSE","kid":"other"}`), ErrUnknownKey},
		{"header changed after signing", withHeader(t, signed, `{"alg":"ES256","typ":"JOSE","kid":"k","jku":"https://evil.example/jwks.json"}`), ErrBadSignature},
		{"garbage signature bytes", []byte(strings.Replace(string(signed), `"signature":"`, `"signature":"AAAA`, 1)), ErrBadSignature},
		{"card not JSON", []byte(`{"signatures":[{"protected":"a","signature":"b"}]`), ErrMalformedSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(context.Background(), tc.card, nil, good)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	dup := []byte(strings.Replace(string(signed), `"signature":"`, `"header":{"kid":"k"},"signature":"`, 1))
	if _, err := Verify(context.Background(), dup, nil, good); !errors.Is(err, ErrMalformedSignature) || !strings.Contains(err.Error(), "both") {
		t.Errorf("kid in both headers: err = %v", err)
	}
}

func TestNewSignerRejectsMismatchedKeys(t *testing.T) {
	ks := testKeys(t)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	for _, tc := range []struct {
		key crypto.Signer
		alg string
	}{
		{ks["ES256"], "RS256"}, {ks["RS256"], "ES256"}, {ks["EdDSA"], "PS256"}, {p384, "ES256"}, {ks["ES256"], "HS256"}, {ks["ES256"], "none"},
	} {
		if _, err := NewSigner(tc.key, tc.alg, "k"); err == nil {
			t.Errorf("%T with %s: no error", tc.key, tc.alg)
		}
	}
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	if _, err := NewSigner(small, "RS256", "k"); !errors.Is(err, ErrKeyMismatch) {
		t.Errorf("1024-bit RSA: err = %v", err)
	}
}

func TestLoadPrivateKey(t *testing.T) {
	dir := t.TempDir()
	ks := testKeys(t)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(ks["EdDSA"])
	sec1, _ := x509.MarshalECPrivateKey(ks["ES256"].(*ecdsa.PrivateKey))
	pkcs1 := x509.MarshalPKCS1PrivateKey(ks["RS256"].(*rsa.PrivateKey))
	for name, tc := range map[string]struct {
		file string
		pub  crypto.PublicKey
	}{
		"pkcs8": {write("ed.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})), ks["EdDSA"].Public()},
		"sec1":  {write("ec.pem", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})), ks["ES256"].Public()},
		"pkcs1": {write("rsa.pem", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: pkcs1})), ks["RS256"].Public()},
	} {
		k, kid, err := LoadPrivateKey(tc.file)
		if err != nil || kid != "" {
			t.Fatalf("%s: %v %q", name, err, kid)
		}
		if !k.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(tc.pub) {
			t.Errorf("%s: a different key", name)
		}
	}
	jwkFile := write("ec.jwk", []byte(`{"kty":"EC","crv":"P-256","kid":"from-file","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"jpsQnnGQmL-YBIffH1136cLyWs_Dcra0yCbVoiQNTUU"}`))
	if k, kid, err := LoadPrivateKey(jwkFile); err != nil || kid != "from-file" || k == nil {
		t.Errorf("JWK: %v %q", err, kid)
	}
	pubJWK := write("pub.jwk", []byte(`{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}`))
	cert := write("cert.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}}))
	for _, tc := range []struct{ file, want string }{
		{pubJWK, "no private key"},
		{cert, `"CERTIFICATE" is not a private key`},
		{write("junk", []byte("junk")), "neither a PEM private key nor a JWK"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		if _, _, err := LoadPrivateKey(tc.file); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.file, err, tc.want)
		}
	}
}

func TestParseJWKS(t *testing.T) {
	a, b := newSigner(t, "ES256", "a"), newSigner(t, "EdDSA", "b")
	set := `{"keys":[` + string(a.PublicJWK()) + `,` + string(b.PublicJWK()) +
		`,{"kty":"EC","crv":"P-256","use":"enc","kid":"enc","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}` +
		`,{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}`
	ks, err := ParseJWKS([]byte(set))
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 2 || ks[0].ID != "a" || ks[0].Algorithm != "ES256" || ks[1].ID != "b" || ks[1].Algorithm != "EdDSA" {
		t.Fatalf("keys = %+v, want a (ES256) and b (EdDSA); the enc key and the key without kid skipped", ks)
	}
	signed, _ := b.Sign([]byte(testCard), "")
	if _, err := Verify(context.Background(), signed, nil, given(ks...)); err != nil {
		t.Errorf("verify with the parsed set: %v", err)
	}
	for _, jwk := range []string{string(a.PublicJWK()), string(b.PublicJWK())} {
		if strings.Contains(jwk, `"d"`) {
			t.Errorf("public JWK has private member d: %s", jwk)
		}
	}
	if _, err := ParseJWKS([]byte(`{"keys":7}`)); err == nil {
		t.Error("a bad set parsed")
	}
}
