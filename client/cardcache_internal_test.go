package client

import (
	"net/http"
	"testing"
	"time"
)

// TestFreshness: how long a card response may be reused, and whether it
// may be kept at all (RFC 9111 §4.2, §5.2.2).
func TestFreshness(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		cc, age, etag string
		known         bool
		fresh         time.Duration
		store         bool
	}{
		{cc: "public, max-age=300", fresh: 300 * time.Second, store: true},
		{cc: "max-age=300", age: "100", fresh: 200 * time.Second, store: true},
		{cc: "max-age=60, max-age=30", fresh: 30 * time.Second, store: true},
		{cc: `private, max-age="120"`, fresh: 120 * time.Second, store: true},
		{cc: "max-age=300, no-cache", etag: `"x"`, fresh: 0, store: true},
		{cc: "max-age=300, no-store", etag: `"x"`, store: false},
		{cc: "No-Store", store: false},
		{cc: "max-age=abc", etag: `"x"`, fresh: 0, store: true},
		{cc: "", etag: `"x"`, fresh: 0, store: true},
		{cc: "", store: false},
		{cc: "no-cache", store: false},
		{cc: "no-cache", known: true, fresh: 0, store: true}, // a 304 without validators
	} {
		h := http.Header{}
		if c.cc != "" {
			h.Set("Cache-Control", c.cc)
		}
		if c.age != "" {
			h.Set("Age", c.age)
		}
		if c.etag != "" {
			h.Set("ETag", c.etag)
		}
		until, store := freshness(h, now, c.known)
		if store != c.store || (store && until.Sub(now) != c.fresh) {
			t.Errorf("%q (Age %q, ETag %q): fresh %v, store %v; want %v, %v", c.cc, c.age, c.etag, until.Sub(now), store, c.fresh, c.store)
		}
	}
}
