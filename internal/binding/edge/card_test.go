package edge

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzNotModified: any If-None-Match and If-Modified-Since values are
// read without a panic, in time linear in their length; a list that
// holds the card's tag (strong or weak, anywhere among valid tags)
// matches, and one that holds only other valid tags does not.
func FuzzNotModified(f *testing.F) {
	for _, s := range []string{`"abc"`, `W/"abc"`, `*`, `"x", "abc"`, `"x",W/"abc"`, `"a,b", "abc"`, `abc`, `"`, `W/`, `,,,`, `"x" "abc"`} {
		f.Add(s, "Mon, 02 Jan 2006 15:04:05 GMT")
	}
	const etag = `"abc"`
	modified := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, inm, ims string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("If-Modified-Since", ims)
		_ = NotModified(r, etag, modified) // If-Modified-Since alone
		r.Header.Set("If-None-Match", inm)
		got := NotModified(r, etag, modified)
		if strings.TrimSpace(inm) == etag || strings.TrimSpace(inm) == "W/"+etag || strings.TrimSpace(inm) == "*" {
			if !got {
				t.Fatalf("If-None-Match %q does not match %s", inm, etag)
			}
		}
		// The card's tag after a list of valid tags that are not it.
		if valid := validTagList(inm); valid && !strings.Contains(inm, `"abc"`) {
			if etagListMatches(inm, etag) {
				t.Fatalf("If-None-Match %q matches %s", inm, etag)
			}
			if l := strings.TrimSpace(inm); l != "" && l != "*" && !etagListMatches(l+", "+etag, etag) {
				t.Fatalf("If-None-Match %q, then %s, does not match", l, etag)
			}
		}
	})
}

// validTagList reports whether s is a comma-separated list of entity
// tags (RFC 9110 §8.8.3) without quotes inside them, with optional white
// space (spaces and tabs, RFC 9110 §5.6.3) around them, or empty.
func validTagList(s string) bool {
	if strings.TrimSpace(s) != strings.Trim(s, " \t") {
		return false // other white space around the list (a header value has none)
	}
	for _, part := range strings.Split(s, ",") {
		p := strings.Trim(part, " \t")
		if p == "" {
			continue
		}
		p = strings.TrimPrefix(p, "W/")
		if len(p) < 2 || p[0] != '"' || p[len(p)-1] != '"' || strings.ContainsAny(p[1:len(p)-1], "\",") {
			return false
		}
		for _, c := range p[1 : len(p)-1] {
			if c < 0x21 || c == 0x7f {
				return false
			}
		}
	}
	return true
}
