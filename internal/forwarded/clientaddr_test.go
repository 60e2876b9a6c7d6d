package forwarded

import (
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestClientAddr(t *testing.T) {
	o := New("", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, nil)
	for _, c := range []struct {
		peer string
		xff  []string
		want string
	}{
		{"192.0.2.7:5000", nil, "192.0.2.7"},
		{"192.0.2.7:5000", []string{"203.0.113.1"}, "192.0.2.7"}, // an untrusted peer's header is ignored
		{"10.1.2.3:5000", nil, "10.1.2.3"},
		{"10.1.2.3:5000", []string{"203.0.113.1"}, "203.0.113.1"},
		{"10.1.2.3:5000", []string{"198.51.100.9, 203.0.113.1, 10.9.9.9"}, "203.0.113.1"}, // the client cannot choose
		{"10.1.2.3:5000", []string{"198.51.100.9", "203.0.113.1"}, "203.0.113.1"},
		{"10.1.2.3:5000", []string{"junk, 10.2.2.2"}, "10.2.2.2"},
		{"10.1.2.3:5000", []string{"10.2.2.2, 10.3.3.3"}, "10.2.2.2"},
		{"[::ffff:10.1.2.3]:5000", []string{"::ffff:203.0.113.1"}, "203.0.113.1"},
		{"[2001:db8::1]:5000", nil, "2001:db8::1"},
		{"bad", nil, "invalid IP"},
		{"10.1.2.3:5000", []string{"203.0.113.1:4711"}, "203.0.113.1"},
		{"10.1.2.3:5000", []string{"[2001:db8::7]:443"}, "2001:db8::7"},
		{"10.1.2.3:5000", []string{"[2001:db8::8]"}, "2001:db8::8"},
		// A client's padding does not hide the entry its proxy appended.
		{"10.1.2.3:5000", []string{strings.Repeat("x", 8000) + ", 203.0.113.5"}, "203.0.113.5"},
		{"10.1.2.3:5000", []string{strings.Repeat("10.0.0.1,", 40) + "10.0.0.2"}, "10.0.0.1"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := o.ClientAddr(r).String(); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
}

func FuzzClientAddr(f *testing.F) {
	f.Add("10.1.2.3:5000", "198.51.100.9, 203.0.113.1, 10.9.9.9")
	f.Add("192.0.2.7:1", "junk")
	f.Add("[::ffff:10.1.2.3]:5000", ",,, ,")
	o := New("", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, nil)
	f.Fuzz(func(t *testing.T, peer, xff string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = peer
		r.Header.Set("X-Forwarded-For", xff)
		a := o.ClientAddr(r)
		ap, err := netip.ParseAddrPort(peer)
		if err != nil {
			return
		}
		// An untrusted peer is the client, whatever it sends.
		if p := ap.Addr().Unmap().WithZone(""); !o.trusts(p) && a != p {
			t.Fatalf("untrusted peer %s reported as %s", p, a)
		}
		if !a.IsValid() || a.Zone() != "" || a.Is4In6() {
			t.Fatalf("ClientAddr = %v", a)
		}
	})
}
