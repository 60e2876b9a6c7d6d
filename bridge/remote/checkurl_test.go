package remote_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/remote"
	"github.com/a2abridge/a2abridge/server"
)

// Config.CheckURL sees every request the agent sends, not only the
// configured URL: the interface URL of the fetched card and a redirect to
// another host are refused before anything reaches that host.
func TestCheckURLConfinesEveryRequest(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		http.NotFound(w, r)
	}))
	defer other.Close()
	mux := http.NewServeMux()
	// A card on the allowed host whose endpoint is on the other host.
	cardPointingAt(mux, "/card", other.URL+"/rpc")
	// A card fetch redirected to the other host.
	mux.HandleFunc("GET /redirect/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/internal-admin", http.StatusFound)
	})
	allowed := httptest.NewServer(mux)
	defer allowed.Close()
	allowedURL, _ := url.Parse(allowed.URL)
	errNotAllowed := errors.New("not on the allowlist")
	check := func(u *url.URL) error {
		if u.Scheme == "http" && u.Host == allowedURL.Host {
			return nil
		}
		return errNotAllowed
	}

	run := func(t *testing.T, path string, check func(*url.URL) error) a2a.Task {
		t.Helper()
		// allow_hosts lets the agent reach the other host: what refuses
		// it here is CheckURL.
		otherURL, _ := url.Parse(other.URL)
		ag, err := remote.New(remote.Config{URL: allowed.URL + path, CheckURL: check, AllowHosts: []string{otherURL.Host}})
		if err != nil {
			t.Fatal(err)
		}
		defer ag.Close()
		msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))
		res, _ := server.RunAgent(testCtx(t), ag, &server.Request{Message: msg, Task: a2a.Task{History: []a2a.Message{msg}}}, server.RunOptions{})
		return res
	}
	for _, path := range []string{"/card", "/redirect"} {
		t.Run(path, func(t *testing.T) {
			otherHits.Store(0)
			res := run(t, path, check)
			if res.Status.State != a2a.TaskStateFailed {
				t.Fatalf("state %s; want failed", res.Status.State)
			}
			if n := otherHits.Load(); n != 0 {
				t.Fatalf("the host outside the allowlist got %d requests", n)
			}
			if reason := res.Status.Message.Parts[0].Text(); !strings.Contains(reason, "not on the allowlist") {
				t.Errorf("reason %q does not say why", reason)
			}
			// Without the check, the same configuration reaches it.
			run(t, path, nil)
			if otherHits.Load() == 0 {
				t.Fatal("without CheckURL the other host got no request: the test proves nothing")
			}
		})
	}
	// The check lets the allowed host's own requests through.
	raw := startRawRemote(t, false, "")
	rawURL, _ := url.Parse(raw.URL)
	ag, err := remote.New(remote.Config{URL: raw.URL, CheckURL: func(u *url.URL) error {
		if u.Host != rawURL.Host {
			return errNotAllowed
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))
	res, err := server.RunAgent(testCtx(t), ag, &server.Request{Message: msg, Task: a2a.Task{History: []a2a.Message{msg}}}, server.RunOptions{})
	if err != nil || res.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("allowed remote: state %s, err %v", res.Status.State, err)
	}
}

// By default (no allow_hosts) the agent's requests stay on the configured
// URL's origin: a card whose interface is on another host, or a redirect
// there, fails the task before anything reaches that host, with a reason
// naming allow_hosts; a redirect to a link-local (metadata) address is
// refused too. allow_hosts lets the listed host through.
func TestEgressConfinedToOrigin(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		http.NotFound(w, r)
	}))
	defer other.Close()
	mux := http.NewServeMux()
	cardPointingAt(mux, "/card", other.URL+"/rpc")
	mux.HandleFunc("GET /redirect/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/internal-admin", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("GET /metadata/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusTemporaryRedirect)
	})
	origin := httptest.NewServer(mux)
	defer origin.Close()
	otherURL, _ := url.Parse(other.URL)
	run := func(t *testing.T, path string, allow []string) a2a.Task {
		t.Helper()
		ag, err := remote.New(remote.Config{URL: origin.URL + path, AllowHosts: allow})
		if err != nil {
			t.Fatal(err)
		}
		defer ag.Close()
		msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))
		res, _ := server.RunAgent(testCtx(t), ag, &server.Request{Message: msg, Task: a2a.Task{History: []a2a.Message{msg}}}, server.RunOptions{})
		return res
	}
	for _, c := range []struct{ path, want string }{
		{"/card", "is not on the configured URL's origin"},
		{"/redirect", "is not on the configured URL's origin"},
		{"/metadata", "169.254.169.254/latest/meta-data/ is a link-local or cloud metadata address"},
	} {
		t.Run(c.path, func(t *testing.T) {
			otherHits.Store(0)
			res := run(t, c.path, nil)
			reason := res.Status.Message.Parts[0].Text()
			if res.Status.State != a2a.TaskStateFailed || !strings.Contains(reason, c.want) || !strings.Contains(reason, "allow_hosts") {
				t.Fatalf("%s %q; want failed naming %q and allow_hosts", res.Status.State, reason, c.want)
			}
			if n := otherHits.Load(); n != 0 {
				t.Fatalf("the other host got %d requests", n)
			}
		})
	}
	// Listed in allow_hosts, the other host is reached.
	run(t, "/card", []string{otherURL.Host})
	if otherHits.Load() == 0 {
		t.Fatal("with allow_hosts the other host got no request")
	}
	// Bad entries are refused by name.
	if _, err := remote.New(remote.Config{URL: origin.URL, AllowHosts: []string{"ok.example", "bad host"}}); err == nil || !strings.Contains(err.Error(), "allow_hosts[1]") {
		t.Fatalf("New with a bad allow_hosts entry: %v", err)
	}
}

// cardPointingAt serves at path's well-known location a 0.3 card whose
// JSON-RPC interface is iface.
func cardPointingAt(mux *http.ServeMux, path, iface string) {
	mux.HandleFunc("GET "+path+"/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name":"x","description":"x","url":%q,"version":"1","protocolVersion":"0.3.0",
"preferredTransport":"JSONRPC","capabilities":{"streaming":false},"defaultInputModes":["text/plain"],
"defaultOutputModes":["text/plain"],"skills":[{"id":"x","name":"x","description":"x","tags":["x"]}]}`, iface)
	})
}
