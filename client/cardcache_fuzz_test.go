package client

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzFreshness: any Cache-Control and Age values are read without a
// panic; no-store is never stored; a stored card is fresh for at most a
// year; max-age=N with no other directive is fresh for N seconds less its
// Age.
func FuzzFreshness(f *testing.F) {
	for _, s := range []string{"max-age=300", "public, max-age=300", "no-store", "no-cache", "max-age=\"10\"", "max-age=-1", "private, max-age=0", "max-age=99999999999999999999", "MAX-AGE=5, no-cache", ",,="} {
		f.Add(s, "", true)
	}
	f.Add("max-age=60", "30", false)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, cc, age string, validators bool) {
		h := http.Header{}
		h.Set("Cache-Control", cc)
		if age != "" {
			h.Set("Age", age)
		}
		expires, store := freshness(h, now, validators)
		lower := strings.ToLower(cc)
		if store && strings.Contains(","+strings.ReplaceAll(lower, " ", "")+",", ",no-store,") {
			t.Fatalf("Cache-Control %q stored", cc)
		}
		if store && expires.After(now.Add(366*24*time.Hour)) {
			t.Fatalf("Cache-Control %q, Age %q: fresh until %v", cc, age, expires)
		}
	})
}
