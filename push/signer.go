package push

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// Algorithms a [Signer] can use and a [Verifier] accepts (RFC 7518 §3.1).
const (
	// AlgES256 is ECDSA with the P-256 curve and SHA-256; the default.
	AlgES256 = "ES256"
	// AlgRS256 is RSASSA-PKCS1-v1_5 with SHA-256, with 2048-bit keys.
	AlgRS256 = "RS256"
)

// Defaults of [SignerOptions].
const (
	// DefaultTTL is the default lifetime of a notification token (exp - iat).
	DefaultTTL = 5 * time.Minute
	// DefaultRetireAfter is how long, by default, a key replaced by
	// [Signer.Rotate] stays published in the JWK Set.
	DefaultRetireAfter = 24 * time.Hour
)

// Files a [Signer] keeps in SignerOptions.Dir, all with mode 0600.
const (
	// stateFileName lists the keys, which one is current and when the
	// others were retired.
	stateFileName = "keys.json"
	// pemSuffix: each private key is "<kid>.pem", PKCS #8 "PRIVATE KEY".
	pemSuffix = ".pem"
	// rsaBits is the size of generated RS256 keys.
	rsaBits = 2048
)

// SignerOptions configures [NewSigner]. The zero value is valid: an
// in-memory ES256 signer without an issuer and with 5-minute tokens.
type SignerOptions struct {
	// Dir is where the keys persist, so that a restart keeps the same kid:
	// one PKCS #8 PEM file per private key ("<kid>.pem") and a "keys.json"
	// state file, all written atomically with mode 0600 (the directory is
	// created with mode 0700). NewSigner refuses a key file readable by group
	// or others. "" keeps keys in memory only. One Signer per Dir: two
	// processes must not share it.
	Dir string
	// Algorithm is "ES256" (the default, P-256) or "RS256" (2048-bit RSA).
	// When the persisted current key has another algorithm, NewSigner
	// rotates to a new key of this algorithm.
	Algorithm string
	// Issuer is the iss claim of every token, typically the A2A server's
	// public URL. "" omits the claim.
	Issuer string
	// TTL is the lifetime of a token: exp - iat. Default [DefaultTTL] (5m).
	TTL time.Duration
	// RetireAfter is the grace period during which a key replaced by
	// [Signer.Rotate] is still published, so that receivers can verify
	// notifications signed just before the rotation. It must be at least
	// TTL. Default [DefaultRetireAfter] (24h).
	RetireAfter time.Duration
	// Now is the clock; default time.Now. It sets iat and exp, and decides
	// when a retired key has passed its grace period.
	Now func() time.Time
}

// Signer signs A2A push notifications with JWTs (the "Example Asymmetric
// Key Flow (JWT + JWKS)" of the A2A 0.3.0 push notification security
// guidance) and publishes its public keys as a JWK Set (RFC 7517 §5).
// Create it with [NewSigner]. A Signer is safe for concurrent use.
type Signer struct {
	dir         string
	alg         string
	issuer      string
	ttl         time.Duration
	retireAfter time.Duration
	now         func() time.Time

	mu      sync.RWMutex
	current *signingKey
	retired []*signingKey // oldest first
}

// signingKey is one key pair. It is immutable once built.
type signingKey struct {
	kid     string
	alg     string
	priv    crypto.Signer
	pubJSON []byte // the public JWK: kty, crv/x/y or n/e, kid, use, alg
	created time.Time
	retired time.Time // zero while current
}

// NewSigner returns a Signer. With o.Dir set it loads the keys persisted
// there, drops retired keys past their grace period, and creates a first key
// when there is none; without it, it generates a key in memory. It fails on
// an unknown algorithm, on RetireAfter < TTL, and on unreadable, corrupt or
// over-permissive key files.
func NewSigner(o SignerOptions) (*Signer, error) {
	s := &Signer{
		dir:         o.Dir,
		alg:         o.Algorithm,
		issuer:      o.Issuer,
		ttl:         o.TTL,
		retireAfter: o.RetireAfter,
		now:         o.Now,
	}
	if s.alg == "" {
		s.alg = AlgES256
	}
	if s.alg != AlgES256 && s.alg != AlgRS256 {
		return nil, fmt.Errorf("push: unsupported signing algorithm %q (want %s or %s)", s.alg, AlgES256, AlgRS256)
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.ttl < time.Second {
		return nil, fmt.Errorf("push: token TTL %v is too short", s.ttl)
	}
	if s.retireAfter == 0 {
		s.retireAfter = DefaultRetireAfter
	}
	if s.retireAfter < s.ttl {
		return nil, fmt.Errorf("push: RetireAfter %v is shorter than the token TTL %v", s.retireAfter, s.ttl)
	}
	if s.now == nil {
		s.now = time.Now
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.dir != "" {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, fmt.Errorf("push: key directory: %w", err)
		}
		if err := s.loadLocked(); err != nil {
			return nil, err
		}
		if err := s.pruneLocked(now); err != nil {
			return nil, err
		}
	}
	if s.current == nil || s.current.alg != s.alg {
		if err := s.rotateLocked(now); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Algorithm returns the signing algorithm, "ES256" or "RS256".
func (s *Signer) Algorithm() string { return s.alg }

// KeyID returns the kid of the current signing key: the RFC 7638 JWK
// thumbprint (SHA-256, base64url without padding) of its public key.
func (s *Signer) KeyID() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.current.kid
}

// tokenClaims is the JWT claims set of a notification token. Field order is
// the order on the wire.
type tokenClaims struct {
	Issuer     string `json:"iss,omitempty"`
	Audience   string `json:"aud"`
	IssuedAt   int64  `json:"iat"`
	Expires    int64  `json:"exp"`
	JTI        string `json:"jti"`
	TaskID     string `json:"taskId"`
	BodySHA256 string `json:"request_body_sha256"`
}

// Sign returns a compact JWS (RFC 7515 §7.1) for one notification POST: the
// protected header is {"alg","typ":"JWT","kid"} and the claims are iss (when
// SignerOptions.Issuer is set), aud = audience (the webhook URL, exactly as
// in PushNotificationConfig.url), iat, exp = iat + TTL, jti (128 random bits
// as 32 hex digits), taskId, and request_body_sha256 (the lowercase hex
// SHA-256 of body, which must be the exact bytes POSTed). Send it as
// "Authorization: Bearer <token>" (A2A 0.3.0 §9.5 step 3, and the "Example
// Asymmetric Key Flow (JWT + JWKS)" of the push notification security
// guidance). audience and taskID must not be empty.
func (s *Signer) Sign(audience, taskID string, body []byte) (token string, err error) {
	if audience == "" {
		return "", errors.New("push: Sign: empty audience")
	}
	if taskID == "" {
		return "", errors.New("push: Sign: empty task id")
	}
	s.mu.RLock()
	k := s.current
	s.mu.RUnlock()

	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", fmt.Errorf("push: Sign: %w", err)
	}
	sum := sha256.Sum256(body)
	now := s.now()
	payload, err := json.Marshal(tokenClaims{
		Issuer:     s.issuer,
		Audience:   audience,
		IssuedAt:   now.Unix(),
		Expires:    now.Add(s.ttl).Unix(),
		JTI:        hex.EncodeToString(jti[:]),
		TaskID:     taskID,
		BodySHA256: hex.EncodeToString(sum[:]),
	})
	if err != nil {
		return "", fmt.Errorf("push: Sign: %w", err)
	}
	hdr := jws.NewHeaders()
	if err := hdr.Set(jws.KeyIDKey, k.kid); err != nil {
		return "", fmt.Errorf("push: Sign: %w", err)
	}
	if err := hdr.Set(jws.TypeKey, "JWT"); err != nil {
		return "", fmt.Errorf("push: Sign: %w", err)
	}
	tok, err := jws.Sign(payload, jws.WithKey(sigAlg(k.alg), k.priv, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		return "", fmt.Errorf("push: Sign: %w", err)
	}
	return string(tok), nil
}

// NewRequest builds the notification POST of A2A 0.3.0 §9.5 step 3: method
// POST to webhookURL with body, "Content-Type: application/json",
// "Authorization: Bearer <Sign(webhookURL, taskID, body)>", and, when
// notificationToken (PushNotificationConfig.token) is not empty,
// "X-A2A-Notification-Token: <notificationToken>". Send it with a client
// from [NewGuardedClient].
func (s *Signer) NewRequest(ctx context.Context, webhookURL, taskID, notificationToken string, body []byte) (*http.Request, error) {
	tok, err := s.Sign(webhookURL, taskID, body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, webhookURL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("push: NewRequest: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	if notificationToken != "" {
		req.Header.Set(HeaderNotificationToken, notificationToken)
	}
	return req, nil
}

// JWKS returns the JWK Set (RFC 7517 §5) to publish: {"keys":[...]}, the
// current key first, then the retired keys still in their grace period,
// newest first. Each key holds public members only (kty, crv, x, y for EC;
// kty, n, e for RSA) plus "kid", "use":"sig" and "alg"; never "d" or any
// other private member. Retired keys past their grace period are dropped
// here too (and from Dir, best effort).
func (s *Signer) JWKS() []byte {
	s.mu.Lock()
	_ = s.pruneLocked(s.now()) // a disk error is retried on the next call
	keys := make([]*signingKey, 0, 1+len(s.retired))
	keys = append(keys, s.current)
	for i := len(s.retired) - 1; i >= 0; i-- {
		keys = append(keys, s.retired[i])
	}
	s.mu.Unlock()

	var b bytes.Buffer
	b.WriteString(`{"keys":[`)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(k.pubJSON)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// Handler serves [Signer.JWKS] on GET and HEAD with "Content-Type:
// application/jwk-set+json" and "Cache-Control: public, max-age=60";
// other methods get 405. Mount it where the receivers' VerifierOptions.JWKSURL
// points (for example /.well-known/jwks.json).
func (s *Signer) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		b := s.JWKS()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "public, max-age=60")
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(b)
	})
}

// Rotate generates a new current key. The previous one is retired: it is no
// longer used to sign but stays in [Signer.JWKS] for SignerOptions.RetireAfter,
// so that receivers can still verify notifications signed just before. With
// SignerOptions.Dir set the new key is on disk before it is used; an error
// leaves the signer unchanged.
func (s *Signer) Rotate() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rotateLocked(s.now())
}

// rotateLocked makes a new current key, retiring the old one, persists the
// result, and then prunes.
func (s *Signer) rotateLocked(now time.Time) error {
	priv, err := generateKey(s.alg)
	if err != nil {
		return fmt.Errorf("push: generating a key: %w", err)
	}
	k, err := newSigningKey(s.alg, priv, now, time.Time{})
	if err != nil {
		return err
	}
	retired := append([]*signingKey(nil), s.retired...)
	if s.current != nil {
		old := *s.current
		old.retired = now
		retired = append(retired, &old)
	}
	if s.dir != "" {
		der, err := x509.MarshalPKCS8PrivateKey(priv)
		if err != nil {
			return fmt.Errorf("push: encoding the key: %w", err)
		}
		pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
		if err := writeFileAtomic(filepath.Join(s.dir, k.kid+pemSuffix), pemBytes); err != nil {
			return err
		}
		if err := s.writeState(k, retired); err != nil {
			_ = os.Remove(filepath.Join(s.dir, k.kid+pemSuffix))
			return err
		}
	}
	s.current, s.retired = k, retired
	_ = s.pruneLocked(now) // best effort: the rotation itself succeeded; JWKS retries
	return nil
}

// pruneLocked drops retired keys whose grace period is over, from memory
// and from Dir.
func (s *Signer) pruneLocked(now time.Time) error {
	var keep, drop []*signingKey
	for _, k := range s.retired {
		if now.Before(k.retired.Add(s.retireAfter)) {
			keep = append(keep, k)
		} else {
			drop = append(drop, k)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	s.retired = keep
	if s.dir == "" {
		return nil
	}
	if err := s.writeState(s.current, keep); err != nil {
		return err
	}
	var errs []error
	for _, k := range drop {
		if err := os.Remove(filepath.Join(s.dir, k.kid+pemSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("push: removing a retired key: %w", err))
		}
	}
	return errors.Join(errs...)
}

// stateFile is keys.json.
type stateFile struct {
	Version int          `json:"version"`
	Keys    []stateEntry `json:"keys"`
}

// stateEntry describes one persisted key; Retired is absent for the
// current key.
type stateEntry struct {
	KID     string    `json:"kid"`
	Alg     string    `json:"alg"`
	Created time.Time `json:"created"`
	Retired time.Time `json:"retired,omitzero"`
}

// writeState persists the list of keys (current first).
func (s *Signer) writeState(current *signingKey, retired []*signingKey) error {
	st := stateFile{Version: 1}
	for _, k := range append([]*signingKey{current}, retired...) {
		if k == nil {
			continue
		}
		st.Keys = append(st.Keys, stateEntry{KID: k.kid, Alg: k.alg, Created: k.created, Retired: k.retired})
	}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("push: encoding the key state: %w", err)
	}
	return writeFileAtomic(filepath.Join(s.dir, stateFileName), append(b, '\n'))
}

// loadLocked reads keys.json and the PEM files it names. A missing state
// file means no keys yet. A missing retired key file is skipped; a missing
// current key file is an error.
func (s *Signer) loadLocked() error {
	b, err := os.ReadFile(filepath.Join(s.dir, stateFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("push: reading the key state: %w", err)
	}
	var st stateFile
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("push: %s: %w", filepath.Join(s.dir, stateFileName), err)
	}
	if st.Version != 1 {
		return fmt.Errorf("push: %s: unsupported version %d", filepath.Join(s.dir, stateFileName), st.Version)
	}
	for _, e := range st.Keys {
		if !validKID(e.KID) {
			return fmt.Errorf("push: %s: invalid kid %q", filepath.Join(s.dir, stateFileName), e.KID)
		}
		path := filepath.Join(s.dir, e.KID+pemSuffix)
		priv, err := readPrivateKey(path)
		if errors.Is(err, fs.ErrNotExist) && !e.Retired.IsZero() {
			continue
		}
		if err != nil {
			return err
		}
		k, err := newSigningKey(e.Alg, priv, e.Created, e.Retired)
		if err != nil {
			return fmt.Errorf("push: %s: %w", path, err)
		}
		if k.kid != e.KID {
			return fmt.Errorf("push: %s: the key's thumbprint %s does not match its kid", path, k.kid)
		}
		if e.Retired.IsZero() {
			if s.current != nil {
				return fmt.Errorf("push: %s: more than one current key", filepath.Join(s.dir, stateFileName))
			}
			s.current = k
		} else {
			s.retired = append(s.retired, k)
		}
	}
	return nil
}

// readPrivateKey reads a PKCS #8 PEM private key, refusing a file that
// group or others may access.
func readPrivateKey(path string) (crypto.Signer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("push: reading a key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("push: reading a key: %w", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("push: key file %s has mode %#o; it must not be accessible by group or others (want 0600)", path, fi.Mode().Perm())
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("push: reading a key: %w", err)
	}
	block, _ := pem.Decode(buf.Bytes())
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("push: %s: not a PEM \"PRIVATE KEY\"", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("push: %s: %w", path, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("push: %s: unsupported key type %T", path, key)
	}
	return signer, nil
}

// writeFileAtomic writes data to path with mode 0600 through a temporary
// file and a rename, so that a crash never leaves a torn file.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("push: writing %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("push: writing %s: %w", path, err)
	}
	if err := f.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("push: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("push: writing %s: %w", path, err)
	}
	return nil
}

// generateKey makes a P-256 key for ES256 or a 2048-bit key for RS256.
func generateKey(alg string) (crypto.Signer, error) {
	switch alg {
	case AlgES256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case AlgRS256:
		return rsa.GenerateKey(rand.Reader, rsaBits)
	}
	return nil, fmt.Errorf("push: unsupported signing algorithm %q", alg)
}

// newSigningKey checks that priv suits alg, computes its kid and encodes its
// public JWK.
func newSigningKey(alg string, priv crypto.Signer, created, retired time.Time) (*signingKey, error) {
	switch p := priv.(type) {
	case *ecdsa.PrivateKey:
		if alg != AlgES256 || p.Curve != elliptic.P256() {
			return nil, fmt.Errorf("push: an ECDSA key must be P-256 and used with ES256, not %s", alg)
		}
	case *rsa.PrivateKey:
		if alg != AlgRS256 || p.N.BitLen() < rsaBits {
			return nil, fmt.Errorf("push: an RSA key must have at least %d bits and be used with RS256, not %s", rsaBits, alg)
		}
	default:
		return nil, fmt.Errorf("push: unsupported key type %T", priv)
	}
	pub, err := jwk.Import(priv.Public())
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	kid := base64.RawURLEncoding.EncodeToString(tp)
	for _, kv := range []struct {
		k string
		v any
	}{{jwk.KeyIDKey, kid}, {jwk.KeyUsageKey, "sig"}, {jwk.AlgorithmKey, sigAlg(alg)}} {
		if err := pub.Set(kv.k, kv.v); err != nil {
			return nil, fmt.Errorf("push: %w", err)
		}
	}
	if private, err := jwk.IsPrivateKey(pub); err != nil || private {
		return nil, errors.New("push: internal error: the published key is not public")
	}
	pubJSON, err := json.Marshal(pub)
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	return &signingKey{kid: kid, alg: alg, priv: priv, pubJSON: pubJSON, created: created, retired: retired}, nil
}

// sigAlg maps "ES256"/"RS256" to jwx's algorithm value.
func sigAlg(alg string) jwa.SignatureAlgorithm {
	if alg == AlgRS256 {
		return jwa.RS256()
	}
	return jwa.ES256()
}

// validKID reports whether kid is a base64url thumbprint (and so a safe
// file name).
func validKID(kid string) bool {
	if kid == "" || len(kid) > 128 {
		return false
	}
	return strings.Trim(kid, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == ""
}
