package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
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

	mu       sync.Mutex
	union    []byte    // the last union read (complete)
	unionAt  time.Time // when it was read
	ownAtUse []byte    // own() when it was read: a rotation here invalidates it
}

// sharedKeysCache is how long a union of the published sets is served
// before the database is read again: the JWK Set endpoint is public, so
// its requests must not each cost a query.
const sharedKeysCache = 5 * time.Second

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
// key once (by kid, this replica's first), read at most every
// sharedKeysCache (sooner after a rotation here). When the published
// sets cannot be read, it is this replica's own set (logged).
func (k *sharedKeys) JWKS() []byte {
	b, _ := k.jwks()
	return b
}

// jwks is JWKS, and whether it holds the other replicas' keys.
func (k *sharedKeys) jwks() ([]byte, bool) {
	own := k.own()
	k.mu.Lock()
	if k.union != nil && time.Since(k.unionAt) < sharedKeysCache && bytes.Equal(own, k.ownAtUse) {
		b := k.union
		k.mu.Unlock()
		return b, true
	}
	k.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), sharedKeysTimeout)
	defer cancel()
	sets, err := k.pub.PublishedKeys(ctx)
	if err != nil {
		k.log.Warn("reading the other replicas' push signing keys failed; serving this replica's only", "err", err)
		return own, false
	}
	b := merge(own, sets)
	k.mu.Lock()
	k.union, k.unionAt, k.ownAtUse = b, time.Now(), own
	k.mu.Unlock()
	return b, true
}

// merge is the union of the JWK Sets own and sets, each kid once (own's
// first); a set that is not a JWK Set is skipped.
func merge(own []byte, sets [][]byte) []byte {
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
// HEAD, "application/jwk-set+json", cacheable for 60 s (not cacheable
// when it lacks the other replicas' keys); other methods get 405.
func (k *sharedKeys) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		b, complete := k.jwks()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		if complete {
			w.Header().Set("Cache-Control", "public, max-age=60")
		} else {
			w.Header().Set("Cache-Control", "no-store")
		}
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(b)
	})
}
