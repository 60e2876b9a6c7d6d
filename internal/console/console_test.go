package console

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, hdr ...string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRoutes(t *testing.T) {
	h := New(Options{Agents: func() []Agent {
		return []Agent{{Name: "echo", Path: "/a2a/echo", Default: true}, {Name: "slow", Path: "/a2a/slow"}}
	}})
	for _, c := range []struct {
		method, path string
		status       int
		ctype, has   string
	}{
		{"GET", "/console/", 200, "text/html; charset=utf-8", `<script type="module" src="/console/assets/app.js">`},
		// Every view's path answers the page, so that links survive a reload.
		{"GET", "/console/agents/echo", 200, "text/html; charset=utf-8", "<main"},
		{"GET", "/console/agents/echo/tasks/01a2-x", 200, "text/html; charset=utf-8", "<main"},
		{"HEAD", "/console/agents", 200, "text/html; charset=utf-8", ""},
		{"GET", "/console/assets/app.js", 200, "text/javascript; charset=utf-8", "function route()"},
		{"GET", "/console/assets/a2a.js", 200, "text/javascript; charset=utf-8", "export class Client"},
		{"GET", "/console/assets/style.css", 200, "text/css; charset=utf-8", "prefers-color-scheme: dark"},
		{"GET", "/console/assets/nope.js", 404, "", ""},
		{"GET", "/console/assets/../console.go", 404, "", ""},
		{"GET", "/console/assets/index.html", 404, "", ""},
		{"GET", "/console/api/nope", 404, "", ""},
		{"GET", "/console/api/agents", 200, "application/json", `{"agents":[{"name":"echo","path":"/a2a/echo","default":true},{"name":"slow","path":"/a2a/slow"}]}`},
		{"POST", "/console/", 405, "", ""},
		{"DELETE", "/console/api/agents", 405, "", ""},
		{"GET", "/console", 301, "", ""},
	} {
		res := get(t, h, c.method, c.path)
		b := body(t, res)
		if res.StatusCode != c.status || c.ctype != "" && res.Header.Get("Content-Type") != c.ctype || !strings.Contains(b, c.has) {
			t.Errorf("%s %s: %d %q, want %d %q with %q; body %.200q", c.method, c.path, res.StatusCode, res.Header.Get("Content-Type"), c.status, c.ctype, c.has, b)
		}
		if got := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(got, "default-src 'none'") || !strings.Contains(got, "frame-ancestors 'none'") {
			t.Errorf("%s %s: CSP %q", c.method, c.path, got)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: no nosniff", c.method, c.path)
		}
	}
	if res := get(t, h, "GET", "/console"); res.Header.Get("Location") != "/console/" {
		t.Errorf("/console redirects to %q", res.Header.Get("Location"))
	}
	if res := get(t, h, "POST", "/console/"); res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("405 without Allow: %q", res.Header.Get("Allow"))
	}
}

// An asset is revalidated by its ETag: 304 when unchanged.
func TestETag(t *testing.T) {
	h := New(Options{})
	res := get(t, h, "GET", "/console/assets/app.js")
	etag := res.Header.Get("ETag")
	if etag == "" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", etag, res.Header.Get("Cache-Control"))
	}
	if res := get(t, h, "GET", "/console/assets/app.js", "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", res.StatusCode)
	}
}

// Without agents the list is empty, not null.
func TestNoAgents(t *testing.T) {
	res := get(t, New(Options{}), "GET", "/console/api/agents")
	var v struct{ Agents []Agent }
	if err := json.Unmarshal([]byte(body(t, res)), &v); err != nil || v.Agents == nil {
		t.Errorf("agents %v, %v", v.Agents, err)
	}
}

// POST /console/api/check: a JSON POST only (no other site can make a
// browser send one), a well-formed body, the runner's status on errors.
func TestCheckRoute(t *testing.T) {
	var got []string
	h := New(Options{Check: func(r *http.Request, agent, text, long string) (json.RawMessage, int, error) {
		got = append(got, agent+"|"+text+"|"+long)
		if agent == "busy" {
			return nil, http.StatusTooManyRequests, errors.New("a check is running already")
		}
		return json.RawMessage(`{"score":100}`), http.StatusOK, nil
	}})
	for _, c := range []struct {
		method, ctype, body string
		status              int
		has                 string
	}{
		{"GET", "", "", 405, ""},
		{"POST", "text/plain", `{"agent":"echo"}`, 415, "application/json"},
		{"POST", "application/x-www-form-urlencoded", `agent=echo`, 415, "application/json"},
		{"POST", "application/json", `{"agent":""}`, 400, "want"},
		{"POST", "application/json", `{"agent":"echo","x":1}`, 400, "want"},
		{"POST", "application/json", `not json`, 400, "want"},
		{"POST", "application/json; charset=utf-8", `{"agent":"echo","text":"0","longText":"3"}`, 200, `{"score":100}`},
		{"POST", "application/json", `{"agent":"busy"}`, 429, "running already"},
		{"POST", "application/json", `{"agent":"` + strings.Repeat("x", 70<<10) + `"}`, 413, "64 KiB"},
	} {
		r := httptest.NewRequest(c.method, "/console/api/check", strings.NewReader(c.body))
		if c.ctype != "" {
			r.Header.Set("Content-Type", c.ctype)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.has) {
			t.Errorf("%s %s %s: %d %s, want %d with %q", c.method, c.ctype, c.body, w.Code, w.Body.String(), c.status, c.has)
		}
	}
	if want := []string{"echo|0|3", "busy||"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("runs %q, want %q", got, want)
	}
}

// Without a runner the check route does not exist.
func TestNoCheck(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/console/api/check", strings.NewReader(`{"agent":"echo"}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	New(Options{}).ServeHTTP(w, r)
	if w.Code != http.StatusNotFound {
		t.Errorf("POST /console/api/check without a runner: %d, want 404", w.Code)
	}
}
