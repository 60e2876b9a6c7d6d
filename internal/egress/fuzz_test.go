package egress_test

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/internal/egress"
)

// FuzzPolicy: any configured URL, allow_hosts entries and request target
// are handled without a panic; a policy that builds allows every URL on
// its configured origin whose host is not a refused address, and refuses
// a refused literal address that allow_hosts does not list.
func FuzzPolicy(f *testing.F) {
	f.Add("https://agents.example.com/a2a", "api.example.org,*.example.io,10.0.0.0/8", "https://evil.example.com/x", "agents.example.com:50051")
	f.Add("http://127.0.0.1:8080", "169.254.169.254", "http://169.254.169.254/latest", "dns:///127.0.0.1:1")
	f.Add("http://[::1]:80/", "[::1]:80", "http://[fe80::1%25eth0]/", "[::1]:443")
	f.Fuzz(func(t *testing.T, configured, entries, target, grpcTarget string) {
		p, err := egress.New(configured, strings.Split(entries, ","), "allow_hosts")
		if err != nil {
			return
		}
		if u, err := url.Parse(target); err == nil {
			_ = p.CheckURL(u)
		}
		_ = p.CheckGRPC(grpcTarget)
		_ = p.Control("tcp", grpcTarget, nil)
		c, _ := url.Parse(configured)
		same := &url.URL{Scheme: c.Scheme, Host: c.Host, Path: "/other"}
		ip, lerr := netip.ParseAddr(c.Hostname())
		if lerr == nil && egress.Refused(ip) {
			return // a refused literal address needs allow_hosts, origin or not
		}
		if err := p.CheckURL(same); err != nil {
			t.Fatalf("policy of %q refuses its own origin %s: %v", configured, same, err)
		}
	})
}
