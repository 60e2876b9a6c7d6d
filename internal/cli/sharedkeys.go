package cli

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
)

// Push signing keys shared by replicas (serve --replica with push): each
// replica signs with keys of its own, publishes its public JWK Set in the
// database (postgres.Store.PublishKeys) and serves at
// /.well-known/jwks.json the union of every replica's published set, so a
// webhook verifies a notification whichever replica signed it and
// whichever replica its JWK Set request reaches.

// keyPublisher is what sharedKeys needs of the store: postgres.Store.
type keyPublisher interface {
	PublishKeys(ctx context.Context, publisher string, jwks []byte, ttl time.Duration) error
	PublishedKeys(ctx context.Context) ([][]byte, error)
}

const (
	// sharedKeysTTL is how long a published set stays served after its
	// replica's last publication: longer than a push token lives (5
	// minutes), so that a notification a replica signed just before it
	// died can still be verified.
	sharedKeysTTL = 15 * time.Minute
	// sharedKeysEvery is how often a replica publishes its set again.
	sharedKeysEvery = time.Minute
	// sharedKeysTimeout bounds one read or write of the published sets.
	sharedKeysTimeout = 5 * time.Second
)

type sharedKeys struct {
	pub keyPublisher
	id  string        // this replica's publisher id
	own func() []byte // this replica's JWK Set (push.Signer.JWKS)
	log *slog.Logger
}

func newSharedKeys(pub keyPublisher, own func() []byte, log *slog.Logger) *sharedKeys {
	return &sharedKeys{pub: pub, id: a2a.NewID(), own: own, log: log}
}

// publish publishes this replica's set now.
func (k *sharedKeys) publish(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, sharedKeysTimeout)
	defer cancel()
	return k.pub.PublishKeys(ctx, k.id, k.own(), sharedKeysTTL)
}

// run publishes the set every sharedKeysEvery until ctx ends.
func (k *sharedKeys) run(ctx context.Context) {
	tk := time.NewTicker(sharedKeysEvery)
	defer tk.Stop()
	for {
		select {
		case <-tk.C:
			if err := k.publish(ctx); err != nil && ctx.Err() == nil {
				k.log.Warn("publishing the push signing keys failed; other replicas stop serving them 15 minutes after the last success", "err", err)
			}
		case <-ctx.Done():
			return
		}
	}
}

// JWKS is the union of this replica's set and the published ones, each
// key once (by kid, this replica's first). When the published sets cannot
// be read, it is this replica's own set (logged).
func (k *sharedKeys) JWKS() []byte {
	own := k.own()
	ctx, cancel := context.WithTimeout(context.Background(), sharedKeysTimeout)
	defer cancel()
	sets, err := k.pub.PublishedKeys(ctx)
	if err != nil {
		k.log.Warn("reading the other replicas' push signing keys failed; serving this replica's only", "err", err)
		return own
	}
	seen := map[string]bool{}
	keys := []json.RawMessage{}
	for _, set := range append([][]byte{own}, sets...) {
		var s struct {
			Keys []json.RawMessage `json:"keys"`
		}
		if json.Unmarshal(set, &s) != nil {
			continue // a set no replica wrote; skipped
		}
		for _, key := range s.Keys {
			var id struct {
				Kid string `json:"kid"`
			}
			if json.Unmarshal(key, &id) != nil || id.Kid == "" || seen[id.Kid] {
				continue
			}
			seen[id.Kid] = true
			keys = append(keys, key)
		}
	}
	b, err := json.Marshal(struct {
		Keys []json.RawMessage `json:"keys"`
	}{keys})
	if err != nil {
		return own
	}
	return b
}

// Handler serves JWKS as push.Signer.Handler serves its set: GET and
// HEAD, "application/jwk-set+json", cacheable for 60 s; other methods get
// 405.
func (k *sharedKeys) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		b := k.JWKS()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "public, max-age=60")
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(b)
	})
}
