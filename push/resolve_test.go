package push

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// *net.Resolver, what servers use, is a Resolver.
var _ Resolver = (*net.Resolver)(nil)

// mapResolver answers from a map (lowercase names); a name not there does
// not exist. It records the names looked up and each lookup's deadline.
type mapResolver struct {
	names     map[string][]string
	mu        sync.Mutex
	lookups   []string
	deadlines []time.Duration // time left until the context's deadline; -1 without one
}

func (r *mapResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.lookups = append(r.lookups, host)
	left := time.Duration(-1)
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	r.deadlines = append(r.deadlines, left)
	r.mu.Unlock()
	if network != "ip" {
		return nil, errors.New("unexpected network " + network)
	}
	ips, ok := r.names[strings.ToLower(strings.TrimSuffix(host, "."))]
	if !ok {
		// As net.Resolver reports NXDOMAIN, with the server's address.
		return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.53.53.53:53", IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range ips {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func (r *mapResolver) looked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lookups...)
}

// resolverFunc adapts a function to Resolver.
type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

func testHosts() *mapResolver {
	return &mapResolver{names: map[string][]string{
		"loopback.example":  {"127.0.0.1"},
		"private.example":   {"10.0.0.1"},
		"metadata.example":  {"169.254.169.254"},
		"loopback6.example": {"::1"},
		"mapped.example":    {"::ffff:192.168.1.1"},
		"mixed.example":     {"93.184.216.34", "10.0.0.1"}, // any forbidden address refuses
		"public.example":    {"93.184.216.34", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
		"hooks.internal":    {"10.1.2.3"},
		"a.hooks.internal":  {"10.1.2.4"},
	}}
}

func TestCheckURLContextRefusesNamesResolvingToForbiddenAddresses(t *testing.T) {
	r := testHosts()
	for host, addr := range map[string]string{
		"loopback.example": "127.0.0.1", "private.example": "10.0.0.1", "metadata.example": "169.254.169.254",
		"loopback6.example": "::1", "mapped.example": "::ffff:192.168.1.1", "mixed.example": "10.0.0.1",
		"Private.Example.": "10.0.0.1",
	} {
		for _, u := range []string{"http://" + host + "/hook", "https://" + host + ":8443/hook"} {
			err := CheckURLContext(t.Context(), u, nil, r)
			if !errors.Is(err, ErrForbiddenAddress) || errors.Is(err, ErrUnresolvedHost) {
				t.Errorf("CheckURLContext(%q) = %v, want ErrForbiddenAddress", u, err)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, "resolves to "+addr) || !strings.Contains(msg, host) {
				t.Errorf("CheckURLContext(%q) = %q: the message names neither the host nor %s", u, msg, addr)
			}
		}
	}
}

func TestCheckURLContextAcceptsPublicNames(t *testing.T) {
	r := testHosts()
	for _, u := range []string{"https://public.example/hook", "http://PUBLIC.example:8080/hook", "https://public.example./hook"} {
		if err := CheckURLContext(t.Context(), u, nil, r); err != nil {
			t.Errorf("CheckURLContext(%q) = %v", u, err)
		}
	}
	// Literal IPs are checked as by CheckURL, never looked up.
	r = testHosts()
	for _, u := range []string{"http://8.8.8.8/hook", "https://[2606:4700:4700::1111]/hook"} {
		if err := CheckURLContext(t.Context(), u, nil, r); err != nil {
			t.Errorf("CheckURLContext(%q) = %v", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1/", "http://[::1]/", "http://169.254.169.254/"} {
		if err := CheckURLContext(t.Context(), u, nil, r); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("CheckURLContext(%q) = %v, want ErrForbiddenAddress", u, err)
		}
	}
	if got := r.looked(); len(got) != 0 {
		t.Errorf("literal IPs were looked up: %q", got)
	}
	// The URL checks of CheckURL come first.
	for _, u := range []string{"ftp://public.example/", "http:///path", "://bad"} {
		if err := CheckURLContext(t.Context(), u, nil, r); err == nil || errors.Is(err, ErrForbiddenAddress) || errors.Is(err, ErrUnresolvedHost) {
			t.Errorf("CheckURLContext(%q) = %v, want a validation error", u, err)
		}
	}
}

func TestCheckURLContextAllowList(t *testing.T) {
	ok := []struct {
		url   string
		allow []string
	}{
		{"http://hooks.internal/hook", []string{"hooks.internal"}},           // a listed name, whatever it resolves to
		{"http://hooks.internal:9000/hook", []string{"HOOKS.internal:9000"}}, // a listed name and port
		{"http://a.hooks.internal/hook", []string{"*.hooks.internal"}},       // a wildcard
		{"http://private.example/hook", []string{"10.0.0.0/8"}},              // a listed range
		{"http://private.example:9000/hook", []string{"10.0.0.1:9000"}},      // a listed address and port
		{"http://loopback.example/hook", []string{"127.0.0.1"}},
		{"http://loopback6.example/hook", []string{"::1"}},
		{"http://mapped.example/hook", []string{"192.168.0.0/16"}},
	}
	for _, c := range ok {
		if err := CheckURLContext(t.Context(), c.url, c.allow, testHosts()); err != nil {
			t.Errorf("CheckURLContext(%q, allow %q) = %v", c.url, c.allow, err)
		}
	}
	// An allowlisted name is not looked up (it is not at dial time either).
	r := testHosts()
	if err := CheckURLContext(t.Context(), "http://unknown.hooks.internal/", []string{"*.hooks.internal"}, r); err != nil || len(r.looked()) != 0 {
		t.Errorf("allowlisted name: %v, lookups %q", err, r.looked())
	}
	refused := []struct {
		url   string
		allow []string
	}{
		{"http://hooks.internal:9001/hook", []string{"hooks.internal:9000"}}, // another port
		{"http://hooks.internal/hook", []string{"*.hooks.internal"}},         // the wildcard is for subdomains only
		{"http://private.example:9001/hook", []string{"10.0.0.1:9000"}},
		{"http://metadata.example/hook", []string{"10.0.0.0/8", "127.0.0.0/8"}}, // allowing private ranges does not allow metadata
		{"http://mixed.example/hook", []string{"public.example"}},
	}
	for _, c := range refused {
		if err := CheckURLContext(t.Context(), c.url, c.allow, testHosts()); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("CheckURLContext(%q, allow %q) = %v, want ErrForbiddenAddress", c.url, c.allow, err)
		}
	}
}

func TestCheckURLContextRefusesUnresolvedNames(t *testing.T) {
	// NXDOMAIN: refused, without repeating the resolver's address.
	err := CheckURLContext(t.Context(), "https://nxdomain.example/hook", nil, testHosts())
	if !errors.Is(err, ErrUnresolvedHost) || errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("NXDOMAIN: %v, want ErrUnresolvedHost", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `"nxdomain.example": no such host`) || strings.Contains(msg, "10.53.53.53") {
		t.Errorf("NXDOMAIN: %q", msg)
	}
	// The same through a *net.Resolver (the in-process DNS server answers
	// NXDOMAIN for a name it does not know).
	if err := CheckURLContext(t.Context(), "https://nxdomain.example/hook", nil, fakeResolver(t, nil)); !errors.Is(err, ErrUnresolvedHost) || !strings.Contains(err.Error(), "no such host") {
		t.Errorf("NXDOMAIN through net.Resolver: %v", err)
	}
	// A name without addresses.
	empty := resolverFunc(func(context.Context, string, string) ([]netip.Addr, error) { return nil, nil })
	if err := CheckURLContext(t.Context(), "https://empty.example/hook", nil, empty); !errors.Is(err, ErrUnresolvedHost) {
		t.Errorf("no address: %v", err)
	}
	// A resolver that fails.
	broken := resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "server misbehaving", Name: host, Server: "10.53.53.53:53", IsTemporary: true}
	})
	err = CheckURLContext(t.Context(), "https://hooks.example/", nil, broken)
	if !errors.Is(err, ErrUnresolvedHost) || !strings.Contains(err.Error(), "server misbehaving") || !strings.Contains(err.Error(), "try again later") || strings.Contains(err.Error(), "10.53.53.53") {
		t.Errorf("failing resolver: %v", err)
	}
}

func TestCheckURLContextLookupIsBounded(t *testing.T) {
	// The lookup gets at most ResolveTimeout.
	r := testHosts()
	if err := CheckURLContext(context.Background(), "https://public.example/", nil, r); err != nil {
		t.Fatal(err)
	}
	if left := r.deadlines[0]; left <= 0 || left > ResolveTimeout {
		t.Errorf("the lookup had %v left, want at most %v", left, ResolveTimeout)
	}
	// A resolver that does not answer: refused when the deadline passes
	// (here the caller's, shorter), saying so.
	hang := resolverFunc(func(ctx context.Context, _, _ string) ([]netip.Addr, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := CheckURLContext(ctx, "https://slow.example/hook", nil, hang)
	if !errors.Is(err, ErrUnresolvedHost) || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("hanging resolver: %v, want ErrUnresolvedHost (timed out)", err)
	}
	if d := time.Since(start); d > ResolveTimeout {
		t.Errorf("the check took %v", d)
	}
	// As net.Resolver reports a timeout.
	timeout := resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "i/o timeout", Name: host, IsTimeout: true}
	})
	if err := CheckURLContext(t.Context(), "https://slow.example/hook", nil, timeout); !errors.Is(err, ErrUnresolvedHost) || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("DNS timeout: %v", err)
	}
}

// TestCheckURLContextThenRebinding: a name accepted when it was set (it
// resolved to a public address then) and that later resolves to loopback
// is still refused at dial time.
func TestCheckURLContextThenRebinding(t *testing.T) {
	srv, hits := target(t)
	u := "http://rebind.example:" + port(t, srv) + "/hook"
	atSet := &mapResolver{names: map[string][]string{"rebind.example": {"93.184.216.34"}}}
	if err := CheckURLContext(t.Context(), u, nil, atSet); err != nil {
		t.Fatalf("at set: %v", err)
	}
	later := fakeResolver(t, map[string]string{"rebind.example": "127.0.0.1"})
	if err := CheckURLContext(t.Context(), u, nil, later); !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("set again after rebinding: %v, want ErrForbiddenAddress", err)
	}
	wantForbidden(t, NewGuardedClient(GuardOptions{Resolver: later}), u)
	if hits.Load() != 0 {
		t.Fatal("a refused request reached the server")
	}
}
