package client_test

import (
	"context"
	"crypto"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// cardRequests counts the card requests a server got and the answers it
// gave, and keeps the last request's conditional headers.
type cardRequests struct {
	mu                    sync.Mutex
	n, notModified        int
	ifNoneMatch, ifModSin string
}

func (c *cardRequests) snapshot() (n, notModified int, inm, ims string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n, c.notModified, c.ifNoneMatch, c.ifModSin
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

// countCards wraps next, counting the requests for paths ending in .json.
func countCards(next http.Handler, c *cardRequests) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, ".json") || strings.HasSuffix(r.URL.Path, "jwks.json") {
			next.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		next.ServeHTTP(rec, r)
		c.mu.Lock()
		c.n++
		if rec.status == http.StatusNotModified {
			c.notModified++
		}
		c.ifNoneMatch, c.ifModSin = r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since")
		c.mu.Unlock()
	})
}

// cachingAgent serves the echo agent on a Host (cards with max-age 300,
// ETag, Last-Modified; options o), counting card requests.
func cachingAgent(t *testing.T, o server.HostOptions) (*httptest.Server, *cardRequests) {
	t.Helper()
	eng := servertest.Engine(t, server.EngineOptions{})
	o.Transport.Logger = testutil.Logger()
	host := server.NewHost(o)
	host.Add(server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	c := &cardRequests{}
	ts := testutil.ServeDrained(t, countCards(host, c), eng.Close)
	return ts, c
}

// fakeClock is a settable clock for a CardCache.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeClock) add(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}

func newCache(maxEntries int, maxBytes int64) (*client.CardCache, *fakeClock) {
	cc := client.NewCardCache(maxEntries, maxBytes)
	clk := &fakeClock{t: time.Now()}
	client.SetCardCacheClock(cc, clk.now)
	return cc, clk
}

func resolve(t *testing.T, u string, o client.Options) a2a.AgentCard {
	t.Helper()
	o.MaxRetries = -1
	card, err := client.Resolve(context.Background(), u, o)
	if err != nil {
		t.Fatal(err)
	}
	return card
}

// TestCardCacheReuseAndRevalidate: a card within its max-age is reused
// without a request; after it, the client revalidates with If-None-Match
// and If-Modified-Since and reuses the card on 304 (A2A 1.0 §8.6.2).
func TestCardCacheReuseAndRevalidate(t *testing.T) {
	t.Parallel()
	ts, reqs := cachingAgent(t, server.HostOptions{})
	cc, clk := newCache(0, 0)
	o := client.Options{CardCache: cc}
	first := resolve(t, ts.URL, o)
	for range 3 {
		if c := resolve(t, ts.URL, o); c.Name != first.Name {
			t.Fatalf("cached card %q, first %q", c.Name, first.Name)
		}
	}
	if n, _, _, _ := reqs.snapshot(); n != 1 {
		t.Fatalf("4 resolves within max-age: %d card requests, want 1", n)
	}
	clk.add(299 * time.Second)
	resolve(t, ts.URL, o)
	if n, _, _, _ := reqs.snapshot(); n != 1 {
		t.Fatalf("after 299 s of max-age=300: %d card requests, want 1", n)
	}
	clk.add(2 * time.Second) // stale now
	if c := resolve(t, ts.URL, o); c.Name != first.Name || len(c.SupportedInterfaces) == 0 {
		t.Fatalf("revalidated card: %+v", c)
	}
	n, nm, inm, ims := reqs.snapshot()
	if n != 2 || nm != 1 || !strings.HasPrefix(inm, `"`) || ims == "" {
		t.Fatalf("stale card: %d requests, %d answered 304, If-None-Match %q, If-Modified-Since %q; want 2, 1, the ETag, the Last-Modified", n, nm, inm, ims)
	}
	// The 304 made it fresh for another max-age.
	resolve(t, ts.URL, o)
	if n, _, _, _ := reqs.snapshot(); n != 2 {
		t.Fatalf("after the 304: %d requests, want 2", n)
	}
	// Without the cache, every resolve is a request.
	resolve(t, ts.URL, client.Options{NoCardCache: true})
	resolve(t, ts.URL, client.Options{NoCardCache: true})
	if n, _, inm, _ := reqs.snapshot(); n != 4 || inm != "" {
		t.Fatalf("NoCardCache: %d requests (If-None-Match %q), want 4 and no conditional request", n, inm)
	}
	// Other credentials are another entry: a card fetched with one
	// caller's credentials is not handed to another.
	resolve(t, ts.URL, client.Options{CardCache: cc, Token: "other"})
	if n, _, _, _ := reqs.snapshot(); n != 5 {
		t.Fatalf("other credentials: %d requests, want 5", n)
	}
	if cc.Len() != 2 {
		t.Fatalf("cache holds %d cards, want 2", cc.Len())
	}
}

// TestCardCacheHonoursNoStoreNoCache: no-store is never kept; no-cache is
// kept but revalidated at every use.
func TestCardCacheHonoursNoStoreNoCache(t *testing.T) {
	t.Parallel()
	for _, cc := range []string{"no-store", "no-cache", "max-age=60, no-cache", "private, no-store, max-age=60"} {
		ts, reqs := cachingAgent(t, server.HostOptions{})
		// The Host's card, with the Cache-Control cc instead of its own.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rw := &ccWriter{ResponseWriter: w, cc: cc}
			r2, _ := http.NewRequest(r.Method, ts.URL+r.URL.Path, nil)
			r2.Header = r.Header.Clone()
			resp, err := http.DefaultTransport.RoundTrip(r2)
			if err != nil {
				http.Error(w, err.Error(), 502)
				return
			}
			defer resp.Body.Close()
			for k, v := range resp.Header {
				rw.Header()[k] = v
			}
			rw.WriteHeader(resp.StatusCode)
			var buf [64 << 10]byte
			for {
				n, err := resp.Body.Read(buf[:])
				_, _ = rw.Write(buf[:n])
				if err != nil {
					break
				}
			}
		}))
		t.Cleanup(srv.Close)
		cache, _ := newCache(0, 0)
		for range 3 {
			card, err := client.Resolve(context.Background(), srv.URL+"/.well-known/agent-card.json", client.Options{CardCache: cache, MaxRetries: -1})
			if err != nil || card.Name == "" {
				t.Fatalf("%s: %v", cc, err)
			}
		}
		n, nm, _, _ := reqs.snapshot()
		switch {
		case strings.Contains(cc, "no-store"):
			if n != 3 || nm != 0 || cache.Len() != 0 {
				t.Fatalf("%s: %d requests, %d 304, %d cached; want 3, 0, 0", cc, n, nm, cache.Len())
			}
		default:
			if n != 3 || nm != 2 || cache.Len() != 1 {
				t.Fatalf("%s: %d requests, %d 304, %d cached; want 3, 2 (revalidated), 1", cc, n, nm, cache.Len())
			}
		}
	}
}

// ccWriter replaces the Cache-Control of a response.
type ccWriter struct {
	http.ResponseWriter
	cc string
}

func (w *ccWriter) WriteHeader(code int) {
	w.Header().Set("Cache-Control", w.cc)
	w.ResponseWriter.WriteHeader(code)
}

// TestCardCacheBounded: the cache keeps at most its entries and bytes,
// the least recently used dropped first.
func TestCardCacheBounded(t *testing.T) {
	t.Parallel()
	ts, reqs := cachingAgent(t, server.HostOptions{})
	cc, _ := newCache(2, 0)
	o := client.Options{CardCache: cc}
	urls := []string{ts.URL, ts.URL + "/a2a/echo", ts.URL + "/.well-known/agent.json"}
	for _, u := range urls {
		resolve(t, u, o)
	}
	if cc.Len() != 2 {
		t.Fatalf("cache of 2 entries holds %d", cc.Len())
	}
	resolve(t, urls[2], o) // still cached
	resolve(t, urls[0], o) // dropped: fetched again
	if n, _, _, _ := reqs.snapshot(); n != 4 {
		t.Fatalf("%d requests, want 4", n)
	}
	small, _ := newCache(10, 100) // cards are larger than 100 bytes
	resolve(t, ts.URL, client.Options{CardCache: small})
	if small.Len() != 0 {
		t.Fatalf("a card over the byte bound was kept")
	}
	// Safe for concurrent use.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := client.Resolve(context.Background(), urls[i%3], o); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

// TestCardCacheKeepsVerification: a signed card verified once is reused
// as verified, without checking its signature again, for the same
// verifier; another verifier verifies it itself.
func TestCardCacheKeepsVerification(t *testing.T) {
	t.Parallel()
	key := ecKey(t)
	ts := signedAgent(t, key, "ES256", "")
	var verified atomic.Int32
	v := verifier(t, client.CardVerifierOptions{Keys: map[string]crypto.PublicKey{"k1": key.Public()}, Verified: func(client.CardSignature) { verified.Add(1) }})
	cc, clk := newCache(0, 0)
	o := client.Options{CardCache: cc, CardVerifier: v}
	for range 3 {
		if c := resolve(t, ts.URL, o); c.Name == "" || len(c.SupportedInterfaces) == 0 {
			t.Fatalf("verified card from the cache: %+v", c)
		}
	}
	if n := verified.Load(); n != 1 {
		t.Fatalf("verified %d times, want once", n)
	}
	clk.add(time.Hour) // revalidated with a 304: still the verified card
	resolve(t, ts.URL, o)
	if n := verified.Load(); n != 1 {
		t.Fatalf("after a 304: verified %d times, want once", n)
	}
	other := verifier(t, client.CardVerifierOptions{Keys: map[string]crypto.PublicKey{"k1": ecKey(t).Public()}})
	if _, err := client.Resolve(context.Background(), ts.URL, client.Options{CardCache: cc, CardVerifier: other, MaxRetries: -1}); err == nil {
		t.Fatal("a verifier with another key accepted the card verified by the first one")
	}
}

// TestDial10OnlyCard: from a card of a Host serving A2A 1.0 only, the
// client picks 1.0 over each binding and its calls are served.
func TestDial10OnlyCard(t *testing.T) {
	t.Parallel()
	ts, _ := cachingAgent(t, server.HostOptions{Transport: server.TransportOptions{ProtocolVersions: []string{a2a.Version10}}})
	for _, binding := range []string{"", a2a.TransportJSONRPC, a2a.TransportHTTPJSON} {
		c, err := client.Dial(context.Background(), ts.URL, client.Options{Binding: binding, NoCardCache: true})
		if err != nil {
			t.Fatalf("binding %q: %v", binding, err)
		}
		if it := c.Interface(); it.ProtocolVersion != a2a.Version10 {
			t.Fatalf("binding %q: picked %+v", binding, it)
		}
		if _, err := c.SendMessage(context.Background(), text("hi")); err != nil {
			t.Fatalf("binding %q: SendMessage: %v", binding, err)
		}
	}
}
