package remote

import (
	"net/url"
	"strings"
	"testing"
)

func TestShownURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example/x":                         "https://a.example/x",
		"https://a.example/x?key=s3cret":              "https://a.example/x?…",
		"https://a.example/x?":                        "https://a.example/x",
		"http://u:p@a.example:8080/c.json?k=1&j=2":    "http://a.example:8080/c.json?…",
		"http://127.0.0.1:1/a2a/nobody?key=s#frag":    "http://127.0.0.1:1/a2a/nobody?…",
		"https://a.example/p%20q/?token=%2F%2F&x=%zz": "https://a.example/p%20q/?…",
		"http://[::1]:9/%zz":                          "(a URL that does not parse)",
	} {
		if got := shownURL(in); got != want {
			t.Errorf("shownURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScrub(t *testing.T) {
	a, err := New(Config{URL: "https://a.example/agent?key=s3cret&x=1"})
	if err != nil {
		t.Fatal(err)
	}
	in := `fetching its Agent Card: invalid Agent Card at https://a.example/agent/.well-known/agent-card.json?key=s3cret&x=1: bad`
	got := a.scrub(in)
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "agent-card.json?…: bad") {
		t.Errorf("scrub: %q", got)
	}
	if s := a.Skill().Description; strings.Contains(s, "s3cret") || !strings.Contains(s, "https://a.example/agent?…") {
		t.Errorf("skill: %q", s)
	}
}

// FuzzShownURL: whatever the URL, what shownURL shows holds neither its
// query nor its password.
func FuzzShownURL(f *testing.F) {
	for _, s := range []string{"https://a.example/x?key=s3cret", "http://u:p@h/?a=b", "http://h/?", "http://h/?…", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := shownURL(raw)
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		// The marker "?…" itself may begin like a query of odd bytes
		// ("?\xe2"): look for the query in what is left without it.
		if q := u.RawQuery; q != "" && q != "…" && strings.Contains(strings.Replace(got, "?…", "", 1), "?"+q) {
			t.Fatalf("shownURL(%q) = %q shows the query", raw, got)
		}
		// The password shows when what is shown has user info again
		// (its text may well appear in the path: "//:p@/:p@").
		if p, ok := u.User.Password(); ok && p != "" {
			if gu, err := url.Parse(got); err == nil && gu.User != nil {
				t.Fatalf("shownURL(%q) = %q shows user info", raw, got)
			}
		}
	})
}
