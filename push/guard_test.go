package push

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// These tests never send a packet anywhere but loopback: every forbidden
// address is refused before connect(2), either because it is a literal IP
// (checked before a socket exists) or in net.Dialer.Control (checked after
// the socket is created and before it connects). Hostnames are resolved by
// an in-process fake DNS server over net.Pipe.

func TestForbiddenIP(t *testing.T) {
	forbidden := []string{
		"127.0.0.1", "127.255.255.254", "::1", "0.0.0.0", "0.1.2.3", "::",
		"10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "fc00::1", "fd12:3456::1",
		"169.254.169.254", "169.254.0.1", "fe80::1", "fe80::1%eth0",
		"100.64.0.1", "100.127.255.255",
		"224.0.0.1", "239.255.255.250", "ff02::1", "ff05::2", "255.255.255.255", "240.0.0.1",
		"192.0.2.1", "198.51.100.7", "203.0.113.9", "198.18.0.1", "192.0.0.8", "2001:db8::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:0:169.254.169.254",
		"::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "2002:7f00:1::1", "2002:a9fe:a9fe::",
		"2001:0:4136:e378::1", "fec0::1", "64:ff9b:1::1",
	}
	public := []string{
		"8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.0", "172.32.0.1",
		"169.253.255.255", "2606:4700:4700::1111", "2a00:1450:4001::1", "::ffff:8.8.8.8",
		"64:ff9b::808:808", "2002:808:808::1",
	}
	for _, s := range forbidden {
		if !forbiddenIP(netip.MustParseAddr(s)) {
			t.Errorf("%s is allowed, want forbidden", s)
		}
	}
	for _, s := range public {
		if forbiddenIP(netip.MustParseAddr(s)) {
			t.Errorf("%s is forbidden, want allowed", s)
		}
	}
	if !forbiddenIP(netip.Addr{}) {
		t.Error("the zero Addr is allowed")
	}
}

func TestAllowList(t *testing.T) {
	a := parseAllow([]string{"127.0.0.0/8", "10.1.2.3", "fd00::/8", "Hooks.Internal.", "*.corp.example", "10.0.0.0/33", "*.", "bad host"})
	for _, c := range []struct {
		ip   string
		want bool
	}{{"127.0.0.1", true}, {"::ffff:127.0.0.1", true}, {"10.1.2.3", true}, {"10.1.2.4", false}, {"fd00::5", true}, {"::1", false}, {"169.254.169.254", false}} {
		if got := a.allowsIP(netip.MustParseAddr(c.ip)); got != c.want {
			t.Errorf("allowsIP(%s) = %v", c.ip, got)
		}
	}
	for _, c := range []struct {
		host string
		want bool
	}{{"hooks.internal", true}, {"HOOKS.internal.", true}, {"x.hooks.internal", false}, {"a.corp.example", true}, {"a.b.corp.example", true}, {"corp.example", false}, {"evilcorp.example", false}, {"bad host", false}} {
		if got := a.allowsHost(c.host, "80"); got != c.want {
			t.Errorf("allowsHost(%s) = %v", c.host, got)
		}
	}
}

func TestCheckURL(t *testing.T) {
	ok := []struct {
		url   string
		allow []string
	}{
		{"https://client.example.com/webhook", nil},
		{"http://8.8.8.8/hook", nil},
		{"https://[2606:4700:4700::1111]/hook", nil},
		{"http://localhost:8080/hook", nil}, // hostnames are checked at dial time
		{"http://127.0.0.1:9000/hook", []string{"127.0.0.0/8"}},
		{"http://[::1]:9000/hook", []string{"::1"}},
		{"HTTPS://client.example.com/", nil},
	}
	for _, c := range ok {
		if err := CheckURL(c.url, c.allow); err != nil {
			t.Errorf("CheckURL(%q, %q) = %v", c.url, c.allow, err)
		}
	}
	forbidden := []string{
		"http://127.0.0.1/", "http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/",
		"http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://[fe80::1%25eth0]/", "http://0.0.0.0/",
		"http://100.64.0.1/", "https://192.168.0.1:8443/",
	}
	for _, u := range forbidden {
		if err := CheckURL(u, nil); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("CheckURL(%q) = %v, want ErrForbiddenAddress", u, err)
		}
	}
	for _, u := range []string{"ftp://example.com/", "file:///etc/passwd", "gopher://x/", "http:///path", "example.com/hook", "://bad"} {
		if err := CheckURL(u, nil); err == nil || errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("CheckURL(%q) = %v, want a validation error", u, err)
		}
	}
}

// fakeResolver answers A queries from names (lowercase, without the
// trailing dot) and nothing else, in-process over net.Pipe.
func fakeResolver(t *testing.T, names map[string]string) *net.Resolver {
	t.Helper()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			client, server := net.Pipe()
			go serveDNS(server, names)
			return client, nil
		},
	}
}

// serveDNS answers DNS queries framed as over TCP (a 2-byte length, RFC
// 1035 §4.2.2), which is what Go's resolver uses on a non-packet conn.
func serveDNS(c net.Conn, names map[string]string) {
	defer c.Close()
	for {
		var n [2]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := io.ReadFull(c, q); err != nil || len(q) < 12 {
			return
		}
		// The question: labels up to a zero byte, then type and class.
		i, labels := 12, []string{}
		for i < len(q) && q[i] != 0 {
			l := int(q[i])
			if i+1+l > len(q) {
				return
			}
			labels = append(labels, string(q[i+1:i+1+l]))
			i += 1 + l
		}
		if i+5 > len(q) {
			return
		}
		qend := i + 5
		qtype := binary.BigEndian.Uint16(q[i+1:])
		ip, found := names[strings.ToLower(strings.Join(labels, "."))]
		resp := append([]byte{}, q[:2]...)          // id
		resp = append(resp, 0x81, 0x80)             // response, recursion desired and available, NOERROR
		resp = append(resp, 0, 1, 0, 0, 0, 0, 0, 0) // 1 question, answers set below
		resp = append(resp, q[12:qend]...)
		if found && qtype == 1 {
			resp[7] = 1
			a := netip.MustParseAddr(ip).As4()
			resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
			resp = append(resp, a[:]...)
		} else if !found {
			resp[3] = 0x83 // NXDOMAIN
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

// target is a loopback server counting its requests.
func target(t *testing.T) (srv *httptest.Server, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, hits
}

func port(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// get does a GET and returns the status or the error.
func get(c *http.Client, u string) (int, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func wantForbidden(t *testing.T, c *http.Client, u string) {
	t.Helper()
	start := time.Now()
	code, err := get(c, u)
	if !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("GET %s = %d, %v; want ErrForbiddenAddress", u, code, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("GET %s took %v: the refusal must come before any connection attempt", u, d)
	}
}

func TestGuardRefusesLiteralAddresses(t *testing.T) {
	c := NewGuardedClient(GuardOptions{})
	srv, hits := target(t)
	p := port(t, srv)
	for _, u := range []string{
		"http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://100.64.0.1/",
		"http://192.168.0.1:8080/", "http://[fd00::1]/", "http://[fe80::1%25lo]/",
		"http://127.0.0.1:" + p + "/", "http://[::ffff:127.0.0.1]:" + p + "/", "http://0.0.0.0:" + p + "/",
		"https://127.0.0.1:" + p + "/",
	} {
		wantForbidden(t, c, u)
	}
	if hits.Load() != 0 {
		t.Fatal("a refused request reached the server")
	}
	// Allowlisted, loopback is reachable.
	allowed := NewGuardedClient(GuardOptions{Allow: []string{"127.0.0.0/8"}})
	if code, err := get(allowed, srv.URL); err != nil || code != 200 {
		t.Fatalf("allowlisted: %d %v", code, err)
	}
}

func TestGuardChecksResolvedAddress(t *testing.T) {
	srv, hits := target(t)
	p := port(t, srv)

	// "localhost" passes CheckURL but resolves to loopback: refused at dial time.
	if err := CheckURL("http://localhost:"+p+"/", nil); err != nil {
		t.Fatal(err)
	}
	wantForbidden(t, NewGuardedClient(GuardOptions{}), "http://localhost:"+p+"/")
	for _, allow := range [][]string{{"127.0.0.0/8"}, {"localhost"}} {
		c := NewGuardedClient(GuardOptions{Allow: allow})
		if code, err := get(c, "http://localhost:"+p+"/"); err != nil || code != 200 {
			t.Fatalf("allow %q: %d %v", allow, code, err)
		}
	}

	// DNS rebinding: a public-looking name that resolves to loopback or to
	// the metadata address is refused on the resolved IP.
	res := fakeResolver(t, map[string]string{
		"hooks.rebind.example":    "127.0.0.1",
		"metadata.rebind.example": "169.254.169.254",
		"private.rebind.example":  "10.0.0.1",
	})
	c := NewGuardedClient(GuardOptions{Resolver: res})
	before := hits.Load()
	wantForbidden(t, c, "http://hooks.rebind.example:"+p+"/")
	wantForbidden(t, c, "http://metadata.rebind.example/latest/meta-data/")
	wantForbidden(t, c, "http://private.rebind.example/")
	if hits.Load() != before {
		t.Fatal("a refused request reached the server")
	}
	if _, err := get(c, "http://nxdomain.rebind.example/"); err == nil || errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("unknown name: %v", err)
	}
	for _, allow := range [][]string{{"127.0.0.0/8"}, {"hooks.rebind.example"}, {"*.rebind.example"}} {
		c := NewGuardedClient(GuardOptions{Resolver: res, Allow: allow})
		if code, err := get(c, "http://hooks.rebind.example:"+p+"/"); err != nil || code != 200 {
			t.Fatalf("allow %q: %d %v", allow, code, err)
		}
	}
	// Allowing loopback does not allow the metadata address.
	wantForbidden(t, NewGuardedClient(GuardOptions{Resolver: res, Allow: []string{"127.0.0.0/8"}}), "http://metadata.rebind.example/")
}

func TestGuardRedirects(t *testing.T) {
	res := fakeResolver(t, map[string]string{"hooks.example": "127.0.0.1", "sneaky.example": "127.0.0.1"})
	var loops atomic.Int64
	var sneaky string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/sneaky":
			http.Redirect(w, r, sneaky, http.StatusTemporaryRedirect)
		case "/loop":
			loops.Add(1)
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/twice":
			http.Redirect(w, r, "/once", http.StatusFound)
		case "/once":
			http.Redirect(w, r, "/done", http.StatusFound)
		default:
			_, _ = io.WriteString(w, "done")
		}
	}))
	defer srv.Close()
	p := port(t, srv)
	sneaky = "http://sneaky.example:" + p + "/done"
	base := "http://hooks.example:" + p
	c := NewGuardedClient(GuardOptions{Resolver: res, Allow: []string{"hooks.example"}})

	// No redirect is followed: the 3xx itself is the answer (a failed
	// delivery), so nothing reaches the metadata address or another name.
	for _, path := range []string{"/twice", "/metadata", "/sneaky", "/loop"} {
		if code, err := get(c, base+path); err != nil || code/100 != 3 {
			t.Fatalf("%s: %d %v, want the 3xx answer", path, code, err)
		}
	}
	if n := loops.Load(); n != 1 {
		t.Fatalf("followed a redirect loop %d times", n-1)
	}
	_ = sneaky
}

// Port-scoped allowlist entries allow that port only.
func TestGuardPortScopedAllow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	p := port(t, srv)
	c := NewGuardedClient(GuardOptions{Allow: []string{"127.0.0.1:" + p}})
	if code, err := get(c, "http://127.0.0.1:"+p+"/"); err != nil || code != 200 {
		t.Fatalf("allowed port: %d %v", code, err)
	}
	other := NewGuardedClient(GuardOptions{Allow: []string{"127.0.0.1:1"}})
	wantForbidden(t, other, "http://127.0.0.1:"+p+"/")
	if err := CheckURL("http://127.0.0.1:"+p+"/hook", []string{"127.0.0.1:" + p}); err != nil {
		t.Fatalf("CheckURL on the allowed port: %v", err)
	}
	if err := CheckURL("http://127.0.0.1:2/hook", []string{"127.0.0.1:" + p}); err == nil {
		t.Fatal("CheckURL allowed another port")
	}
	named := NewGuardedClient(GuardOptions{Allow: []string{"localhost:" + p}})
	if code, err := get(named, "http://localhost:"+p+"/"); err != nil || code != 200 {
		t.Fatalf("allowed name:port: %d %v", code, err)
	}
	wantForbidden(t, NewGuardedClient(GuardOptions{Allow: []string{"localhost:1"}}), "http://localhost:"+p+"/")
}

func TestGuardIgnoresProxyEnvironment(t *testing.T) {
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		http.Error(w, "proxy", http.StatusBadGateway)
	}))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")

	srv, hits := target(t)
	res := fakeResolver(t, map[string]string{"hooks.example": "127.0.0.1"})
	c := NewGuardedClient(GuardOptions{Resolver: res, Allow: []string{"hooks.example"}})
	if tr, ok := c.Transport.(*http.Transport); !ok || tr.Proxy != nil {
		t.Fatal("the transport has a proxy")
	}
	if code, err := get(c, "http://hooks.example:"+port(t, srv)+"/"); err != nil || code != 200 {
		t.Fatalf("%d %v", code, err)
	}
	if proxied.Load() != 0 || hits.Load() != 1 {
		t.Fatalf("proxied %d, direct %d", proxied.Load(), hits.Load())
	}
}

func TestGuardedNotificationEndToEnd(t *testing.T) {
	// A server sends a signed notification through the guarded client to a
	// webhook that verifies it: the whole push path on loopback.
	s := mustSigner(t, SignerOptions{Issuer: testIssuer})
	jwksURL, _ := jwksServer(t, s)
	res := fakeResolver(t, map[string]string{"webhook.example": "127.0.0.1"})

	var got atomic.Pointer[Claims]
	var hookURL string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		v := NewVerifier(VerifierOptions{JWKSURL: jwksURL, Audience: hookURL, Issuer: testIssuer})
		c, err := v.Verify(r, body)
		if err != nil || !TokenEqual(r, "secure-client-token-for-task-aaa") {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		got.Store(c)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()
	hookURL = "http://webhook.example:" + port(t, hook) + "/webhook/a2a-notifications"
	if err := CheckURL(hookURL, nil); err != nil {
		t.Fatal(err)
	}

	send := func(c *http.Client) (int, error) {
		req, err := s.NewRequest(context.Background(), hookURL, testTask, "secure-client-token-for-task-aaa", testBody)
		if err != nil {
			return 0, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	// Not allowlisted: the name resolves to loopback.
	if _, err := send(NewGuardedClient(GuardOptions{Resolver: res})); !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("unguarded send: %v", err)
	}
	code, err := send(NewGuardedClient(GuardOptions{Resolver: res, Allow: []string{"webhook.example"}}))
	if err != nil || code != http.StatusNoContent {
		t.Fatalf("send: %d %v", code, err)
	}
	if c := got.Load(); c == nil || c.TaskID != testTask || c.Audience != hookURL {
		t.Fatalf("claims = %+v", c)
	}
}
