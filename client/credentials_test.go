package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
)

func cardJSON(url, extra string) string {
	return fmt.Sprintf(`{"name":"x","description":"d","url":%q,"version":"1","protocolVersion":"0.3.0","capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]%s}`, url, extra)
}

// cardServer serves a card at the well-known path and rpc elsewhere.
func cardServer(t *testing.T, card func(base string) string, rpc http.HandlerFunc) *httptest.Server {
	var ts *httptest.Server
	ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, card(ts.URL))
			return
		}
		rpc(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func rpcID(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return strings.Split(strings.Split(string(b), `"id":`)[1], ",")[0]
}

// A card fetched from one host that points at another does not get the
// credentials sent there, unless that host is listed in CredentialHosts.
func TestCredentialsStayOnTheNamedHost(t *testing.T) {
	t.Parallel()
	got := make(chan string, 4)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization") + "|" + r.Header.Get("X-API-Key")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"nf"}}`, rpcID(r))
	}))
	defer other.Close()
	// localhost vs 127.0.0.1: another host name for the same server.
	otherURL := "http://localhost:" + strings.TrimPrefix(other.URL, "http://127.0.0.1:")
	a := cardServer(t, func(string) string { return cardJSON(otherURL+"/rpc", "") }, nil)
	for _, tc := range []struct {
		hosts []string
		want  string
	}{{nil, "|"}, {[]string{strings.TrimPrefix(otherURL, "http://")}, "Bearer SECRET|KEY"}} {
		c, err := client.Dial(context.Background(), a.URL, client.Options{Token: "SECRET", APIKey: "KEY", CredentialHosts: tc.hosts})
		if err != nil {
			t.Fatal(err)
		}
		c.GetTask(context.Background(), a2a.GetTaskRequest{ID: "t"})
		if g := <-got; g != tc.want {
			t.Errorf("hosts %v: other host got %q, want %q", tc.hosts, g, tc.want)
		}
	}
}

// A redirect to another host carries no credentials and no hook headers.
func TestRedirectDropsCredentials(t *testing.T) {
	t.Parallel()
	got := make(chan string, 4) // the legacy card path is tried too
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization") + "|" + r.Header.Get("X-API-Key") + "|" + r.Header.Get("X-Tenant-Secret")
		w.WriteHeader(404)
	}))
	defer evil.Close()
	evilURL := "http://localhost:" + strings.TrimPrefix(evil.URL, "http://127.0.0.1:")
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evilURL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer a.Close()
	client.Resolve(context.Background(), a.URL, client.Options{Token: "SECRET", APIKey: "KEY", MaxRetries: -1,
		Headers: func(context.Context, string) (http.Header, error) { return http.Header{"X-Tenant-Secret": {"S"}}, nil }})
	if g := <-got; g != "||" {
		t.Fatalf("redirect target got credentials %q", g)
	}
}

func TestCookieKeyNotEscaped(t *testing.T) {
	t.Parallel()
	got := make(chan string, 4)
	ts := cardServer(t, func(base string) string {
		return cardJSON(base+"/rpc", `,"securitySchemes":{"k":{"type":"apiKey","in":"cookie","name":"session"}}`)
	}, func(w http.ResponseWriter, r *http.Request) {
		ck, _ := r.Cookie("session")
		got <- ck.Value
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"nf"}}`, rpcID(r))
	})
	c, err := client.Dial(context.Background(), ts.URL, client.Options{APIKey: "ab/cd+ef=="})
	if err != nil {
		t.Fatal(err)
	}
	c.GetTask(context.Background(), a2a.GetTaskRequest{ID: "t"})
	if g := <-got; g != "ab/cd+ef==" {
		t.Fatalf("cookie %q", g)
	}
}

func TestQueryKeyRedactedInErrors(t *testing.T) {
	t.Parallel()
	card := a2a.AgentCard{Name: "x", URL: "http://127.0.0.1:1/rpc",
		SecuritySchemes: map[string]a2a.SecurityScheme{"k": a2a.APIKeySecurityScheme{In: "query", Name: "api_key"}}}
	c, _ := client.New(card, client.Options{APIKey: "SECRET", MaxRetries: -1})
	_, err := c.GetTask(context.Background(), a2a.GetTaskRequest{ID: "t"})
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("error leaks the key: %v", err)
	}
}
