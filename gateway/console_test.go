package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Without an admin block or authentication, what the console has the
// server do is open to callers on this machine only.
func TestConsoleLoopbackOnly(t *testing.T) {
	h := loopbackOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	for addr, want := range map[string]int{
		"127.0.0.1:5000": http.StatusNoContent, "[::1]:5000": http.StatusNoContent, "[::ffff:127.0.0.1]:5000": http.StatusNoContent,
		"10.0.0.1:5000": http.StatusForbidden, "[2001:db8::1]:5000": http.StatusForbidden, "garbage": http.StatusForbidden,
	} {
		r := httptest.NewRequest(http.MethodGet, "/console/api/card?url=x", nil)
		r.RemoteAddr = addr
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("from %s: %d, want %d", addr, w.Code, want)
		}
	}
}

// The console's card URL: the well-known path below a base URL, a card
// URL as it is, anything but an absolute http(s) URL refused.
func TestConsoleCardURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example":                "https://a.example/.well-known/agent-card.json",
		"https://a.example/agents/x/":      "https://a.example/agents/x/.well-known/agent-card.json",
		"https://a.example/card.json#frag": "https://a.example/card.json",
		"http://a.example:8080/x?tenant=1": "http://a.example:8080/x/.well-known/agent-card.json?tenant=1",
		"ftp://a.example":                  "",
		"https://user:pw@a.example":        "",
		"/relative":                        "",
		"https://":                         "",
	} {
		got, err := consoleCardURL(in)
		if want == "" && err == nil || want != "" && got != want {
			t.Errorf("consoleCardURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
