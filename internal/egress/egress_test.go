package egress_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/internal/egress"
)

func TestPolicy(t *testing.T) {
	p, err := egress.New("https://agents.example.com/a2a", []string{"api.example.org", "cdn.example.net:8443", "*.example.io", "169.254.10.0/24", "fd00:ec2::254"}, "allow_hosts")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url  string
		want string // "" allowed, else a fragment of the error
	}{
		{"https://agents.example.com/other", ""},
		{"https://agents.example.com:443/x", ""},
		{"https://AGENTS.example.com/x", ""},
		{"http://agents.example.com/x", "not on the configured URL's origin"},
		{"https://agents.example.com:8443/x", "not on the configured URL's origin"},
		{"https://evil.example.com/x", "not on the configured URL's origin (https://agents.example.com:443)"},
		{"https://api.example.org:9999/x", ""},
		{"https://cdn.example.net:8443/x", ""},
		{"https://cdn.example.net/x", "not on the configured URL's origin"},
		{"https://a.b.example.io/x", ""},
		{"https://example.io/x", "not on the configured URL's origin"},
		{"http://169.254.169.254/latest/meta-data/", "link-local or cloud metadata address"},
		{"http://[::ffff:169.254.169.254]/", "link-local or cloud metadata address"},
		{"http://169.254.10.7/x", "not on the configured URL's origin"}, // an allowed address, not an allowed host
		{"http://user:pw@evil.example.com/x?key=secret", "http://evil.example.com/x is not on the configured URL's origin"},
	} {
		u, _ := url.Parse(c.url)
		err := p.CheckURL(u)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckURL(%s) = %v; want allowed", c.url, err)
		case c.want != "" && (err == nil || !errors.Is(err, egress.ErrRefused) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckURL(%s) = %v; want refused with %q", c.url, err, c.want)
		case err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "pw")):
			t.Errorf("CheckURL(%s) shows the URL's secrets: %v", c.url, err)
		}
	}
	for _, c := range []struct {
		addr string
		ok   bool
	}{
		{"93.184.216.34:443", true}, {"127.0.0.1:80", true}, {"10.1.2.3:80", true}, {"[::1]:80", true},
		{"169.254.169.254:80", false}, {"[fe80::1]:80", false}, {"[::ffff:169.254.169.254]:80", false},
		{"100.100.100.200:80", false}, {"169.254.10.9:80", true}, {"[fd00:ec2::254]:80", true},
		{"[64:ff9b::a9fe:a9fe]:80", false}, {"[::a9fe:a9fe]:80", false}, {"[2002:a9fe:a9fe::]:80", false},
		{"168.63.129.16:80", false}, {"[64:ff9b::5db8:d822]:80", true}, {"[2002:5db8:d822::]:80", true},
	} {
		if err := p.Control("tcp", c.addr, nil); (err == nil) != c.ok {
			t.Errorf("Control(%s) = %v; want ok %v", c.addr, err, c.ok)
		}
	}
	for _, c := range []struct {
		target string
		ok     bool
	}{
		{"agents.example.com:50051", true}, {"http://agents.example.com:50051", true}, {"other.example.com:50051", false},
		{"dns:///agents.example.com:50051", true}, {"dns:///other.example.com:50051", false},
		{"api.example.org:1", true}, {"169.254.169.254:50051", false},
	} {
		if err := p.CheckGRPC(c.target); (err == nil) != c.ok {
			t.Errorf("CheckGRPC(%s) = %v; want ok %v", c.target, err, c.ok)
		}
	}
	if _, err := egress.New("https://x.example", []string{"ok", "bad/host"}, "agents.a.allow_hosts"); err == nil || !strings.Contains(err.Error(), "agents.a.allow_hosts[1]") {
		t.Errorf("bad entry: %v", err)
	}
}
