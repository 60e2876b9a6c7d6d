package client

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CardCache keeps the Agent Cards that Resolve (and Dial) fetch, as the
// HTTP caching headers of their responses allow (RFC 9111; A2A 1.0
// §8.6.2): a card within its Cache-Control max-age (less its Age) is
// reused without a request; after that, or when the response said
// no-cache, the next fetch revalidates it with If-None-Match (its ETag)
// and If-Modified-Since (its Last-Modified), and a 304 Not Modified
// reuses it for a new max-age. A response with no-store, or with neither
// max-age nor a validator, is not kept. Only 200 answers are kept.
//
// Entries are per card URL and per request: the credentials and other
// headers a fetch sends (Options.Token, APIKey, Headers; not the tracing
// headers traceparent, tracestate and baggage) and the HTTP client's
// cookie jar are part of the key, so a card fetched with one caller's
// credentials (a "private" card) is never handed to another. A card that
// was verified by a CardVerifier is reused as verified by that same
// verifier without checking its signature again (its bytes are those
// that were verified; a changed card is fetched in full and verified).
//
// The cache holds at most MaxEntries cards and MaxBytes of card
// documents, dropping the least recently used first. It is safe for
// concurrent use, and may be shared by any number of clients.
type CardCache struct {
	maxEntries int
	maxBytes   int64
	now        func() time.Time

	mu    sync.Mutex
	bytes int64
	lru   *list.List // of *cardEntry, most recently used first
	byKey map[string]*list.Element
}

// Default bounds of NewCardCache.
const (
	DefaultCardCacheEntries = 256
	DefaultCardCacheBytes   = 16 << 20
)

// DefaultCardCache is the cache of clients whose Options set neither
// CardCache nor NoCardCache.
var DefaultCardCache = NewCardCache(0, 0)

// NewCardCache returns an empty CardCache of at most maxEntries cards
// (< 1: DefaultCardCacheEntries) and maxBytes bytes of card documents
// (< 1: DefaultCardCacheBytes); a card larger than maxBytes is not kept.
func NewCardCache(maxEntries int, maxBytes int64) *CardCache {
	if maxEntries < 1 {
		maxEntries = DefaultCardCacheEntries
	}
	if maxBytes < 1 {
		maxBytes = DefaultCardCacheBytes
	}
	return &CardCache{maxEntries: maxEntries, maxBytes: maxBytes, now: time.Now, lru: list.New(), byKey: map[string]*list.Element{}}
}

// Len returns the number of cards held.
func (cc *CardCache) Len() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.lru.Len()
}

// Clear drops every card.
func (cc *CardCache) Clear() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.lru.Init()
	clear(cc.byKey)
	cc.bytes = 0
}

// cardEntry is one cached card document. Its fields do not change once
// it is in the cache but expires, which is read and written under the
// cache's lock; a revalidated card replaces its entry.
type cardEntry struct {
	key          string
	body         []byte
	etag         string
	lastModified string
	expires      time.Time // fresh before it
	// verifiedBy is the CardVerifier that verified body, and payload the
	// signed content it verified; nil: not verified.
	verifiedBy *CardVerifier
	payload    []byte
}

// get returns the entry under key and whether it is fresh.
func (cc *CardCache) get(key string) (*cardEntry, bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	el := cc.byKey[key]
	if el == nil {
		return nil, false
	}
	cc.lru.MoveToFront(el)
	e := el.Value.(*cardEntry)
	return e, cc.now().Before(e.expires)
}

// put stores e (replacing the entry under its key), dropping the least
// recently used entries beyond the bounds.
func (cc *CardCache) put(e *cardEntry) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.removeLocked(e.key)
	if int64(len(e.body)) > cc.maxBytes {
		return
	}
	cc.byKey[e.key] = cc.lru.PushFront(e)
	cc.bytes += int64(len(e.body))
	for cc.lru.Len() > cc.maxEntries || cc.bytes > cc.maxBytes {
		cc.removeLocked(cc.lru.Back().Value.(*cardEntry).key)
	}
}

// putVerified replaces e, if still cached, by a copy that v verified
// (payload: the signed content).
func (cc *CardCache) putVerified(e *cardEntry, v *CardVerifier, payload []byte) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	el := cc.byKey[e.key]
	if el == nil || el.Value != e {
		return
	}
	n := *e
	n.verifiedBy, n.payload = v, payload
	el.Value = &n
}

// remove drops the entry under key, if any.
func (cc *CardCache) remove(key string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.removeLocked(key)
}

func (cc *CardCache) removeLocked(key string) {
	if el := cc.byKey[key]; el != nil {
		cc.bytes -= int64(len(el.Value.(*cardEntry).body))
		cc.lru.Remove(el)
		delete(cc.byKey, key)
	}
}

// refresh gives e a new expiry after a 304 with header h (RFC 9111
// §4.3.4); a 304 saying no-store drops it.
func (cc *CardCache) refresh(e *cardEntry, h http.Header) {
	// A 304 need not repeat the validators: the stored ones hold.
	fresh, store := freshness(h, cc.now(), e.etag != "" || e.lastModified != "")
	if !store {
		cc.remove(e.key)
		return
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	e.expires = fresh
}

// cardCacheKey is the key of a fetch of u with the request headers h by
// an HTTP client with cookie jar jar: the URL and a hash of every header
// but the tracing ones (which change with each request).
func cardCacheKey(u string, h http.Header, jar http.CookieJar) string {
	names := make([]string, 0, len(h))
	for k := range h {
		switch http.CanonicalHeaderKey(k) {
		case "Traceparent", "Tracestate", "Baggage", "If-None-Match", "If-Modified-Since":
			continue
		}
		names = append(names, k)
	}
	slices.Sort(names)
	sum := sha256.New()
	for _, k := range names {
		fmt.Fprintf(sum, "%q:%q\n", k, h[k])
	}
	if jar != nil {
		fmt.Fprintf(sum, "jar:%p\n", jar)
	}
	return u + " " + hex.EncodeToString(sum.Sum(nil))
}

// freshness reads the caching headers of a response received at now: the
// time it stays fresh until, and whether it may be stored at all.
// no-store: not stored. no-cache: stored, stale at once (always
// revalidated). max-age=N: fresh for N seconds less its Age. Neither: a
// card with a validator (in h, or validators: known from before) is
// stored stale (revalidated each time), one without is not stored.
func freshness(h http.Header, now time.Time, validators bool) (time.Time, bool) {
	var maxAge int64 = -1
	noCache := false
	for _, line := range h.Values("Cache-Control") {
		for _, d := range strings.Split(line, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(name) {
			case "no-store":
				return time.Time{}, false
			case "no-cache":
				noCache = true
			case "max-age":
				n, err := strconv.ParseInt(strings.Trim(val, `"`), 10, 64)
				if err != nil || n < 0 {
					noCache = true // an invalid max-age is stale (RFC 9111 §4.2.1)
				} else if maxAge < 0 || n < maxAge {
					maxAge = n
				}
			}
		}
	}
	if noCache || maxAge < 0 {
		return now, validators || h.Get("ETag") != "" || h.Get("Last-Modified") != ""
	}
	if age, err := strconv.ParseInt(h.Get("Age"), 10, 64); err == nil && age > 0 {
		maxAge -= age
	}
	maxAge = min(maxAge, int64(365*24*time.Hour/time.Second))
	return now.Add(time.Duration(maxAge) * time.Second), true
}
