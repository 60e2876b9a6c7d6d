package server_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// cardHost is a Host with one agent, "echo", with bearer authentication
// ("Bearer t") and an extended card.
func cardHost(t *testing.T, o server.HostOptions) *server.Host {
	t.Helper()
	eng := servertest.Engine(t, server.EngineOptions{})
	testutil.CloseAtEnd(t, eng.Close)
	o.Transport.Logger = testutil.Logger()
	host := server.NewHost(o)
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"me": "t"})
	if err != nil {
		t.Fatal(err)
	}
	ext := card()
	ext.Description = "extended"
	host.Add(server.NewHandler(eng, "echo", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		return u.Complete(ctx, "ok")
	}), card(), server.HandlerOptions{Auth: auth.Set{bearer}, ExtendedCard: &ext}))
	return host
}

// cardRequest is a request for echo's card as net/http would hand it to
// the Host: from peer remote, on a connection to local ("" for none),
// with Host header hostHdr and the headers hdr (name, value, …).
func cardRequest(remote, local, hostHdr string, hdr ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/a2a/echo/.well-known/agent-card.json", nil)
	r.RemoteAddr, r.Host = remote, hostHdr
	if local != "" {
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(local))))
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	return r
}

// cardURL serves r and returns the card's url and the Vary header.
func cardURL(t *testing.T, host http.Handler, r *http.Request) (string, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	host.ServeHTTP(rec, r)
	var c struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil || rec.Code != 200 {
		t.Fatalf("card: HTTP %d %v %s", rec.Code, err, rec.Body)
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" || u.Path != "/a2a/echo" && !strings.HasSuffix(u.Path, "/a2a/echo") {
		t.Fatalf("card url %q is not a valid URL of the agent (%v)", c.URL, err)
	}
	return c.URL, rec.Header().Get("Vary")
}

const wantVary = "Host, X-Forwarded-Host, X-Forwarded-Proto, Forwarded"

// The reported attack, over a real connection: a Host header of the
// caller's choosing is not written into the card (nor into the extended
// card, nor into the 404 listing), and the card varies on the headers its
// url depends on.
func TestCardURLIgnoresCallersHost(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(cardHost(t, server.HostOptions{}))
	t.Cleanup(ts.Close)
	get := func(path string) (*http.Response, string) {
		req := testutil.NewRequest(t, context.Background(), http.MethodGet, ts.URL+path, "", "X-Forwarded-Proto", "https", "X-Forwarded-Host", "evil.example")
		req.Host = "evil.example"
		resp, b := testutil.Do(t, req)
		return resp, string(b)
	}
	resp, b := get("/a2a/echo/.well-known/agent-card.json")
	if strings.Contains(b, "evil") || !strings.Contains(b, `"url":"`+ts.URL+`/a2a/echo"`) {
		t.Fatalf("card for Host: evil.example: %s", b)
	}
	if v := resp.Header.Get("Vary"); v != wantVary {
		t.Fatalf("Vary %q, want %q", v, wantVary)
	}
	if resp, b := get("/a2a/nosuch"); resp.StatusCode != 404 || strings.Contains(b, "evil") || !strings.Contains(b, ts.URL+"/a2a/echo") {
		t.Fatalf("404 for Host: evil.example: %d %s", resp.StatusCode, b)
	}
	req := testutil.NewRequest(t, context.Background(), http.MethodPost, ts.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":1,"method":"agent/getAuthenticatedExtendedCard"}`, "Authorization", "Bearer t", "Content-Type", "application/json")
	req.Host = "evil.example"
	_, raw := testutil.Do(t, req)
	if b := string(raw); strings.Contains(b, "evil") || !strings.Contains(b, `"url":"`+ts.URL+`/a2a/echo"`) || !strings.Contains(b, "extended") {
		t.Fatalf("extended card for Host: evil.example: %s", b)
	}
}

func TestCardURLSources(t *testing.T) {
	t.Parallel()
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	plain := cardHost(t, server.HostOptions{})
	trusting := cardHost(t, server.HostOptions{TrustedProxies: proxies})
	allowing := cardHost(t, server.HostOptions{AllowedHosts: []string{"agents.example.com", "pinned.example:8443", "::1"}})
	both := cardHost(t, server.HostOptions{TrustedProxies: proxies, AllowedHosts: []string{"agents.example.com"}})
	const peer, proxy, local = "192.0.2.7:40000", "10.1.2.3:40000", "192.0.2.10:8080"
	for _, c := range []struct {
		name string
		host *server.Host
		req  *http.Request
		want string
	}{
		// Forwarding headers: only from a trusted proxy.
		{"trusted X-Forwarded", trusting, cardRequest(proxy, local, "internal:8080", "X-Forwarded-Host", "agents.example.com", "X-Forwarded-Proto", "https"), "https://agents.example.com"},
		{"trusted proxy over IPv6", trusting, cardRequest("[fd00::5]:1234", local, "internal", "X-Forwarded-Host", "agents.example.com:8443", "X-Forwarded-Proto", "HTTPS"), "https://agents.example.com:8443"},
		{"trusted IPv4-mapped peer", trusting, cardRequest("[::ffff:10.0.0.1]:1", local, "x", "X-Forwarded-Host", "agents.example.com"), "http://agents.example.com"},
		{"rightmost forwarded value", trusting, cardRequest(proxy, local, "internal", "X-Forwarded-Host", "evil.example, agents.example.com", "X-Forwarded-Proto", "http, https"), "https://agents.example.com"},
		{"Forwarded", trusting, cardRequest(proxy, local, "internal", "Forwarded", `for=192.0.2.60;host=evil.example;proto=http, for="[2001:db8::1]:80";Host="agents.example.com:8443";proto=https`), "https://agents.example.com:8443"},
		{"no Forwarded with X-Forwarded-*", trusting, cardRequest(proxy, local, "internal", "X-Forwarded-Host", "agents.example.com", "Forwarded", "host=other.example;proto=https"), "http://agents.example.com"},
		{"no Forwarded with X-Forwarded-Proto alone", trusting, cardRequest(proxy, local, "internal", "X-Forwarded-Proto", "https", "Forwarded", "host=evil.example"), "https://192.0.2.10:8080"},
		{"malformed forwarded host", trusting, cardRequest(proxy, local, "internal", "X-Forwarded-Host", "a b", "X-Forwarded-Proto", "https"), "https://192.0.2.10:8080"},
		{"unknown forwarded proto", trusting, cardRequest(proxy, local, "internal", "X-Forwarded-Host", "agents.example.com", "X-Forwarded-Proto", "gopher"), "http://agents.example.com"},
		{"untrusted peer", trusting, cardRequest(peer, local, "evil.example", "X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https", "Forwarded", "host=evil.example;proto=https"), "http://192.0.2.10:8080"},
		{"no trusted proxies", plain, cardRequest(proxy, local, "evil.example", "X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https"), "http://192.0.2.10:8080"},
		{"forwarded host not allowed", both, cardRequest(proxy, local, "internal", "X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https"), "https://192.0.2.10:8080"},
		{"forwarded host allowed", both, cardRequest(proxy, local, "internal", "X-Forwarded-Host", "agents.example.com", "X-Forwarded-Proto", "https"), "https://agents.example.com"},
		// The Host header: only when allowed, or loopback on loopback.
		{"allowed host, any port", allowing, cardRequest(peer, local, "Agents.Example.COM:9000"), "http://agents.example.com:9000"},
		{"allowed host:port", allowing, cardRequest(peer, local, "pinned.example:8443"), "http://pinned.example:8443"},
		{"allowed host, other port", allowing, cardRequest(peer, local, "pinned.example:9000"), "http://192.0.2.10:8080"},
		{"allowed IPv6", allowing, cardRequest(peer, "[2001:db8::2]:8080", "[::1]:9000"), "http://[::1]:9000"},
		{"host not allowed", allowing, cardRequest(peer, local, "evil.example"), "http://192.0.2.10:8080"},
		{"localhost on loopback", plain, cardRequest("127.0.0.1:5000", "127.0.0.1:8080", "localhost:8080"), "http://localhost:8080"},
		{"sub.localhost on loopback", plain, cardRequest("127.0.0.1:5000", "127.0.0.1:8080", "a2a.localhost:8080"), "http://a2a.localhost:8080"},
		{"[::1] on loopback", plain, cardRequest("[::1]:5000", "[::1]:8080", "[::1]:8080"), "http://[::1]:8080"},
		{"localhost on a public address", plain, cardRequest(peer, local, "localhost:8080"), "http://192.0.2.10:8080"},
		{"other name on loopback", plain, cardRequest("127.0.0.1:5000", "127.0.0.1:8080", "evil.example:8080"), "http://127.0.0.1:8080"},
		// Empty or malformed Host headers: the local address.
		{"empty Host", plain, cardRequest(peer, local, ""), "http://192.0.2.10:8080"},
		{"Host with a space", allowing, cardRequest(peer, local, "a b"), "http://192.0.2.10:8080"},
		{"unclosed IPv6", plain, cardRequest("[::1]:5000", "[::1]:8080", "[::1"), "http://[::1]:8080"},
		{"Host with a path", allowing, cardRequest(peer, local, "agents.example.com/x"), "http://192.0.2.10:8080"},
		{"Host with a bad port", allowing, cardRequest(peer, local, "agents.example.com:99999"), "http://192.0.2.10:8080"},
		{"Host with an empty port", allowing, cardRequest(peer, local, "agents.example.com:"), "http://192.0.2.10:8080"},
		{"Host with user info", allowing, cardRequest(peer, local, "x@agents.example.com"), "http://192.0.2.10:8080"},
		{"zoned local address", plain, cardRequest("[fe80::2%eth0]:5000", "[fe80::1%eth0]:8080", ""), "http://[fe80::1]:8080"},
		{"no local address", plain, cardRequest(peer, "", "evil.example"), "http://localhost"},
	} {
		got, vary := cardURL(t, c.host, c.req)
		if got != c.want+"/a2a/echo" {
			t.Errorf("%s: card url %q, want %q", c.name, got, c.want+"/a2a/echo")
		}
		if vary != wantVary {
			t.Errorf("%s: Vary %q", c.name, vary)
		}
	}
}

// PublicURL wins over every request header, and the card then does not vary.
func TestCardURLPublicURLWins(t *testing.T) {
	t.Parallel()
	host := cardHost(t, server.HostOptions{PublicURL: "https://pub.example/base/", TrustedProxies: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")},
		AllowedHosts: []string{"agents.example.com"}})
	got, vary := cardURL(t, host, cardRequest("10.0.0.1:1", "127.0.0.1:8080", "agents.example.com", "X-Forwarded-Host", "other.example", "X-Forwarded-Proto", "http"))
	if got != "https://pub.example/base/a2a/echo" || vary != "" {
		t.Fatalf("card url %q, Vary %q", got, vary)
	}
}

func TestHostOptionsValidate(t *testing.T) {
	for _, ok := range []string{"agents.example.com", "agents.example.com:8443", "127.0.0.1", "127.0.0.1:80", "::1", "[::1]", "[2001:db8::1]:443", "my_host"} {
		if err := (server.HostOptions{AllowedHosts: []string{ok}}).Validate(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "[::1", "h:0", "h:65536", "http://h", "h/x", "*.example.com", "a..b", "fe80::1%eth0"} {
		if err := (server.HostOptions{AllowedHosts: []string{bad}}).Validate(); err == nil || !strings.Contains(err.Error(), "allowed host") {
			t.Errorf("%q: %v, want an error", bad, err)
		}
	}
}

// A path under /a2a/ that names no agent gets a 404 whose JSON body lists
// the agents, their URLs and card URLs (not those whose card requires
// authentication); other unknown paths keep net/http's plain 404, and a
// known agent's routes are unchanged.
func TestUnknownAgent404ListsAgents(t *testing.T) {
	t.Parallel()
	ts := secureHost(t) // agents "secure" and "locked" (whose card requires authentication)
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/a2a/nosuch"}, {http.MethodPost, "/a2a/nosuch"}, {http.MethodGet, "/a2a/nosuch/"},
		{http.MethodGet, "/a2a/nosuch/.well-known/agent-card.json"}, {http.MethodGet, "/a2a/nosuch/tasks/x/events"},
		{http.MethodGet, "/a2a/%ff"},
	} {
		req, _ := http.NewRequest(c.method, ts.URL+c.path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b := readAll(t, resp)
		var body struct {
			Error   string `json:"error"`
			Message string `json:"message"`
			Agents  []struct {
				Name, URL, Card string
			} `json:"agents"`
		}
		if err := json.Unmarshal(b, &body, json.MatchCaseInsensitiveNames(true)); err != nil || resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: HTTP %d %q %v: %s", c.method, c.path, resp.StatusCode, resp.Header.Get("Content-Type"), err, b)
		}
		want := ts.URL + "/a2a/secure"
		if body.Error == "" || !strings.Contains(body.Message, "No agent named") || len(body.Agents) != 1 ||
			body.Agents[0].Name != "secure" || body.Agents[0].URL != want || body.Agents[0].Card != want+"/.well-known/agent-card.json" {
			t.Fatalf("%s %s: %s", c.method, c.path, b)
		}
	}
	for path, status := range map[string]int{
		"/nosuch": 404, "/a2a/": 404, "/a2a/secure/nosuch": 404, // plain net/http 404s
		"/a2a/secure/.well-known/agent-card.json": 200, "/a2a/secure": 401, "/a2a/./secure/.well-known/agent-card.json": 200,
	} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b := readAll(t, resp)
		if resp.StatusCode != status || status == 404 && strings.Contains(string(b), `"agents"`) {
			t.Errorf("GET %s: HTTP %d, want %d: %s", path, resp.StatusCode, status, b)
		}
	}
}

// A trusted proxy given as an IPv4-mapped IPv6 prefix trusts the IPv4
// peers it covers (peers are compared unmapped).
func TestTrustedProxyMappedPrefix(t *testing.T) {
	t.Parallel()
	host := cardHost(t, server.HostOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/104")}})
	got, _ := cardURL(t, host, cardRequest("10.1.2.3:40000", "192.0.2.10:8080", "ignored.example",
		"X-Forwarded-Host", "agents.example.com", "X-Forwarded-Proto", "https"))
	if got != "https://agents.example.com/a2a/echo" {
		t.Fatalf("card url %q: the mapped prefix of the proxy was not trusted", got)
	}
}

func newHost(t *testing.T) *httptest.Server {
	eng := servertest.Engine(t, server.EngineOptions{})
	host := servertest.Host("",
		server.NewHandler(eng, "echo", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error { return nil }), card(), server.HandlerOptions{}))
	return testutil.ServeDrained(t, host, eng.Close)
}

func TestInvalidUTF8TaskIDInPath(t *testing.T) {
	ts := newHost(t)
	resp, b := testutil.Get(t, ts.URL+"/a2a/echo/tasks/%ff/events")
	t.Logf("HTTP %d: %s", resp.StatusCode, b)
	if !jsontext.Value(b).IsValid() {
		t.Errorf("response body is not valid JSON")
	}
}

func TestLoneSurrogateTaskID(t *testing.T) {
	ts := newHost(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"\ud800"}}`
	resp, b := testutil.Post(t, ts.URL+"/a2a/echo", body)
	t.Logf("HTTP %d: %s", resp.StatusCode, b)
	if !jsontext.Value(b).IsValid() {
		t.Errorf("response body is not valid JSON")
	}
}
