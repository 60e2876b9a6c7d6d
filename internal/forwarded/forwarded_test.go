package forwarded

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestParseHostPort(t *testing.T) {
	for _, c := range []struct {
		in, want string // want "" for not ok
	}{
		{"agents.example.com", "agents.example.com"},
		{"Agents.Example.COM:8443", "agents.example.com:8443"},
		{"10.0.0.1:80", "10.0.0.1:80"},
		{"[::1]", "[::1]"},
		{"[2001:DB8::1]:443", "[2001:db8::1]:443"},
		{"under_score-ok", "under_score-ok"},
		{"", ""}, {"a b", ""}, {"[::1", ""}, {"h:0", ""}, {"h:65536", ""}, {"h:", ""}, {"h/x", ""},
		{"a..b", ""}, {".a", ""}, {"a.", ""}, {"[10.0.0.1]", ""}, {"[fe80::1%eth0]", ""}, {"[::1]x", ""},
		{"h:123456", ""}, {"h:-1", ""}, {strings.Repeat("a", 301), ""},
	} {
		hp, ok := parseHostPort(c.in)
		got := ""
		if ok {
			got = hp.String()
		}
		if got != c.want {
			t.Errorf("parseHostPort(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	if err := CheckAllowedHost("2001:db8::1"); err != nil {
		t.Errorf("a bare IPv6 address is an allowed host: %v", err)
	}
	if err := CheckAllowedHost("evil/path"); err == nil || !strings.Contains(err.Error(), "evil/path") {
		t.Errorf("CheckAllowedHost(evil/path) = %v", err)
	}
}

func TestLastForwarded(t *testing.T) {
	for _, c := range []struct {
		header      []string
		host, proto string
	}{
		{nil, "", ""},
		{[]string{`host=a.example;proto=https`}, "a.example", "https"},
		{[]string{`for=1.2.3.4;host=client.example, for=10.0.0.1;host="proxy.example:8443";proto=https`}, "proxy.example:8443", "https"},
		{[]string{`host=first`, `Host="second";Proto=HTTP`}, "second", "HTTP"},
		{[]string{`host="a,b;c";proto=http`}, "a,b;c", "http"},
		{[]string{`host="esc\"aped"`}, `esc"aped`, ""},
		{[]string{`garbage`}, "", ""},
	} {
		h := http.Header{}
		for _, v := range c.header {
			h.Add("Forwarded", v)
		}
		host, proto := lastForwarded(h)
		if host != c.host || proto != c.proto {
			t.Errorf("lastForwarded(%q) = %q, %q; want %q, %q", c.header, host, proto, c.host, c.proto)
		}
	}
}

// request makes a request from peer to local with Host host and the
// header lines hdr (name, value, …).
func request(peer, local, host string, hdr ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "http://"+host+"/", nil)
	r.Host = host
	r.RemoteAddr = peer
	if local != "" {
		la, _ := net.ResolveTCPAddr("tcp", local)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, la))
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	return r
}

func TestBaseURL(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/104")} // mapped: 10.0.0.0/8
	for _, c := range []struct {
		name string
		o    *Origin
		r    *http.Request
		want string
	}{
		{"public URL wins", New("https://agents.example.com/base/", proxies, nil), request("10.0.0.2:1", "", "x", "X-Forwarded-Host", "y"), "https://agents.example.com/base"},
		{"untrusted peer's headers ignored", New("", proxies, nil), request("192.0.2.1:1", "192.0.2.10:8080", "evil.example", "X-Forwarded-Host", "evil.example"), "http://192.0.2.10:8080"},
		{"trusted proxy", New("", proxies, nil), request("10.0.0.2:1", "192.0.2.10:8080", "internal", "X-Forwarded-Host", "a.example, b.example", "X-Forwarded-Proto", "https"), "https://b.example"},
		{"Forwarded from a trusted proxy", New("", proxies, nil), request("10.0.0.2:1", "192.0.2.10:8080", "internal", "Forwarded", `host=c.example;proto=https`), "https://c.example"},
		{"forwarded host outside the allowed", New("", proxies, []string{"a.example"}), request("10.0.0.2:1", "192.0.2.10:8080", "internal", "X-Forwarded-Host", "evil.example"), "http://192.0.2.10:8080"},
		{"allowed Host header", New("", nil, []string{"a.example:8080"}), request("192.0.2.1:1", "192.0.2.10:8080", "A.example:8080"), "http://a.example:8080"},
		{"allowed host on another port", New("", nil, []string{"a.example:8080"}), request("192.0.2.1:1", "192.0.2.10:8080", "a.example:9090"), "http://192.0.2.10:8080"},
		{"loopback on loopback", New("", nil, nil), request("127.0.0.1:1", "127.0.0.1:8080", "localhost:8080"), "http://localhost:8080"},
		{"loopback name on a public connection", New("", nil, nil), request("192.0.2.1:1", "192.0.2.10:8080", "localhost:8080"), "http://192.0.2.10:8080"},
		{"no local address", New("", nil, nil), request("192.0.2.1:1", "", "x.example"), "http://localhost"},
	} {
		if got := c.o.BaseURL(c.r); got != c.want {
			t.Errorf("%s: BaseURL = %q, want %q", c.name, got, c.want)
		}
	}
	w := httptest.NewRecorder()
	New("", nil, nil).Vary(w)
	if v := w.Header().Get("Vary"); !strings.Contains(v, "X-Forwarded-Host") {
		t.Errorf("Vary = %q", v)
	}
	w = httptest.NewRecorder()
	New("https://a.example", nil, nil).Vary(w)
	if v := w.Header().Get("Vary"); v != "" {
		t.Errorf("Vary with a public URL = %q, want none", v)
	}
}

// FuzzBaseURL: whatever a client and its proxies send, the base URL parses
// as an absolute http(s) URL with a host and nothing after it.
func FuzzBaseURL(f *testing.F) {
	f.Add("agents.example.com", "a.example, b.example", "https", `host="c";proto=http`)
	f.Add("[::1]:80", "", "", `for=x;host="a,b"`)
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	f.Fuzz(func(t *testing.T, host, xfHost, xfProto, fwd string) {
		for _, o := range []*Origin{New("", proxies, nil), New("", proxies, []string{"a.example", host})} {
			r := request("10.0.0.2:1", "192.0.2.10:8080", "placeholder", "X-Forwarded-Host", xfHost, "X-Forwarded-Proto", xfProto, "Forwarded", fwd)
			r.Host = host
			got := o.BaseURL(r)
			u, err := url.Parse(got)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
				t.Fatalf("BaseURL = %q (%v)", got, err)
			}
		}
	})
}
