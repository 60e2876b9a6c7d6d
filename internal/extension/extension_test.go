package extension

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
)

// FuzzFromRequest: any A2A-Extensions and X-A2A-Extensions values are
// read without a panic into at most MaxURIs distinct, trimmed,
// non-empty URIs, or refused with -32602 when they list more.
func FuzzFromRequest(f *testing.F) {
	f.Add("https://a/x, https://b/y", "https://a/x")
	f.Add(",, ,", "")
	f.Add(strings.Repeat("u,", 70), "")
	f.Fuzz(func(t *testing.T, v1, v03 string) {
		r := httptest.NewRequest("POST", "/", nil)
		r.Header["A2a-Extensions"] = []string{v1}
		r.Header["X-A2a-Extensions"] = []string{v03}
		_, ec, err := FromRequest(t.Context(), r)
		if err != nil {
			if ec != nil || err.Code != -32602 {
				t.Fatalf("refused with %v and %v", ec, err)
			}
			return
		}
		if ec == nil {
			return
		}
		seen := map[string]bool{}
		for _, u := range ec.Requested() {
			if u == "" || u != strings.TrimSpace(u) || strings.Contains(u, ",") || seen[u] {
				t.Fatalf("requested %q", ec.Requested())
			}
			seen[u] = true
		}
		if len(ec.Requested()) > MaxURIs {
			t.Fatalf("%d URIs", len(ec.Requested()))
		}
	})
}

// TestFromRequest: both headers, repeated and comma-separated, are joined
// in the order sent without repeats; the event-log extension is applied
// when activated; a request without them costs no allocation.
func TestFromRequest(t *testing.T) {
	r := httptest.NewRequest("POST", "/", nil)
	r.Header.Add(Header, " https://a/x ,"+a2a.ExtensionEventLog)
	r.Header.Add(Header, "https://b/y")
	r.Header.Add(Header03, "https://a/x, https://c/z")
	ctx, c, err := FromRequest(context.Background(), r)
	if err != nil || c == nil || From(ctx) != c {
		t.Fatalf("FromRequest: %v, %v", c, err)
	}
	want := []string{"https://a/x", a2a.ExtensionEventLog, "https://b/y", "https://c/z"}
	if !slices.Equal(c.Requested(), want) {
		t.Fatalf("requested %q, want %q", c.Requested(), want)
	}
	if c.Apply("https://other") || !c.Apply("https://c/z") {
		t.Fatal("Apply must record only an activated extension")
	}
	for version, name := range map[string]string{a2a.Version10: Header, a2a.Version03: Header03} {
		w := httptest.NewRecorder()
		c.WriteHeader(w, version)
		if got := w.Header().Get(name); got != a2a.ExtensionEventLog+",https://c/z" {
			t.Fatalf("%s %s: %q", version, name, got)
		}
	}
	plain := httptest.NewRequest("POST", "/", nil)
	bg := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		if c2, ec, err := FromRequest(bg, plain); c2 != bg || ec != nil || err != nil {
			t.Fatal("FromRequest without headers")
		}
	}); n != 0 {
		t.Fatalf("%v allocations without headers", n)
	}
	var none *Call
	if none.Requested() != nil || none.Apply(a2a.ExtensionEventLog) {
		t.Fatal("a nil Call activates nothing")
	}
	none.WriteHeader(httptest.NewRecorder(), a2a.Version10)
	if With(bg, " ", "") != bg || !slices.Equal(From(With(bg, "u", " u ")).Requested(), []string{"u"}) {
		t.Fatal("With")
	}
}
