package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/testutil"
)

type fakePublisher struct {
	sets  [][]byte
	err   error
	got   []byte // last published
	reads int
}

func (f *fakePublisher) PublishKeys(ctx context.Context, publisher string, jwks []byte, ttl time.Duration) error {
	f.got = jwks
	return f.err
}

func (f *fakePublisher) PublishedKeys(ctx context.Context) ([][]byte, error) {
	f.reads++
	return f.sets, f.err
}

// TestSharedKeysJWKS: the served set is this replica's keys, then the
// other published ones, each kid once; a set that is not a JWK Set is
// skipped; when the published sets cannot be read, this replica's own.
func TestSharedKeysJWKS(t *testing.T) {
	own := []byte(`{"keys":[{"kid":"me","kty":"EC"}]}`)
	pub := &fakePublisher{sets: [][]byte{
		own,
		[]byte(`{"keys":[{"kid":"other","kty":"EC"},{"kid":"me","kty":"RSA"},{"kty":"EC"}]}`),
		[]byte(`not json`),
	}}
	k := newSharedKeys(pub, func() []byte { return own }, testutil.Logger())
	if err := k.publish(context.Background()); err != nil || string(pub.got) != string(own) {
		t.Fatalf("publish: %v, published %s", err, pub.got)
	}
	want := `{"keys":[{"kid":"me","kty":"EC"},{"kid":"other","kty":"EC"}]}`
	if got := string(k.JWKS()); got != want {
		t.Fatalf("JWKS %s, want %s", got, want)
	}
	rec := httptest.NewRecorder()
	k.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/jwks.json", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/jwk-set+json" || rec.Body.String() != want {
		t.Fatalf("GET: %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	rec = httptest.NewRecorder()
	k.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/.well-known/jwks.json", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", rec.Code)
	}
	if pub.reads != 1 {
		t.Fatalf("%d reads of the published sets for 3 requests within %s, want 1", pub.reads, sharedKeysCache)
	}
	pub.err = errors.New("database down")
	k.unionAt = time.Time{} // the cache has expired
	if got := string(k.JWKS()); got != string(own) {
		t.Fatalf("JWKS with the database down: %s, want this replica's %s", got, own)
	}
	rec = httptest.NewRecorder()
	k.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/jwks.json", nil))
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("an incomplete set is served with Cache-Control %q, want no-store", cc)
	}
}
