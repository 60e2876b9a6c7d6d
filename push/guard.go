package push

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultGuardTimeout is the default overall timeout of a request made with
// a client from [NewGuardedClient].
const DefaultGuardTimeout = 10 * time.Second

// GuardOptions configures [NewGuardedClient].
type GuardOptions struct {
	// Allow lists destinations that are allowed even though they are not
	// public. Each entry is a CIDR ("127.0.0.0/8", "fd00::/8"), a single IP
	// ("10.1.2.3"), an exact hostname ("hooks.internal") or a wildcard
	// "*.example.com", which matches every subdomain of example.com but not
	// example.com itself. Hostnames match case-insensitively, ignoring a
	// trailing dot; a connection to an allowlisted hostname is allowed
	// whatever it resolves to. An IP or hostname may carry a port
	// ("127.0.0.1:9000", "[::1]:9000", "localhost:9000") to allow that port
	// only. An entry that is not a valid CIDR, IP or hostname (with an
	// optional port) matches nothing.
	Allow []string
	// Timeout bounds each request, redirects included (http.Client.Timeout).
	// Default [DefaultGuardTimeout] (10s).
	Timeout time.Duration
	// Resolver resolves hostnames; nil means net.DefaultResolver. The
	// resolved addresses are checked at dial time whatever resolver is used.
	Resolver *net.Resolver
}

// NewGuardedClient returns an *http.Client for sending notifications to
// client-supplied webhook URLs without Server-Side Request Forgery (the
// "Webhook URL Validation" duty of A2A 0.3.0 §10.2 and of the push
// notification security guidance). Every connection is checked at dial time,
// on the very IP address being connected to (net.Dialer.Control, before the
// connect system call), so DNS rebinding and redirects cannot bypass it: an
// address that is loopback, private (RFC 1918, fc00::/7), link-local
// (169.254.0.0/16, which holds the cloud metadata address 169.254.169.254,
// and fe80::/10), unspecified, multicast, CGNAT (100.64.0.0/10), reserved
// or for documentation, or the IPv4-mapped, NAT64 or 6to4 form of one of
// those, is refused with an error wrapping [ErrForbiddenAddress], unless
// GuardOptions.Allow allows it. The client uses no proxy (the environment's
// HTTP_PROXY is ignored), follows no redirects (a 3xx answer is returned
// as is: a webhook must answer at the URL it was registered with, and the
// notification token must not travel elsewhere), and times out after
// GuardOptions.Timeout.
func NewGuardedClient(o GuardOptions) *http.Client {
	allow := parseAllow(o.Allow)
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultGuardTimeout
	}
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Resolver: o.Resolver}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           guardedDial(dialer, allow),
		ForceAttemptHTTP2:     true,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// guardedDial returns a DialContext that refuses forbidden addresses: a
// literal IP before any socket exists, a resolved one in Control, after the
// socket is created and before it connects.
func guardedDial(d *net.Dialer, allow allowList) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		pn, _ := strconv.ParseUint(port, 10, 16)
		nameAllowed := false
		if ip, err := netip.ParseAddr(host); err == nil {
			if err := allow.checkAddrPort(netip.AddrPortFrom(ip, uint16(pn))); err != nil {
				return nil, &net.OpError{Op: "dial", Net: network, Err: err}
			}
		} else {
			nameAllowed = allow.allowsHost(host, port)
		}
		dd := *d
		dd.Control = func(_, address string, _ syscall.RawConn) error {
			if nameAllowed {
				return nil
			}
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: cannot parse %q", ErrForbiddenAddress, address)
			}
			return allow.checkAddrPort(ap)
		}
		return dd.DialContext(ctx, network, addr)
	}
}

// CheckURL validates a webhook URL when it is configured (for example in
// tasks/pushNotificationConfig/set), before anything is sent: the scheme
// must be http or https, there must be a host, and a host that is a literal
// IP address must not be forbidden (see [NewGuardedClient]) unless allow
// (same syntax as GuardOptions.Allow) allows it. Hostnames are not resolved
// here ([CheckURLContext] resolves them); [NewGuardedClient] checks what
// they resolve to at dial time. A forbidden address yields an error
// wrapping [ErrForbiddenAddress].
func CheckURL(raw string, allow []string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("push: invalid webhook URL: %w", err)
	}
	_, _, err = checkURL(u, parseAllow(allow))
	return err
}

// ResolveTimeout bounds the host name lookup of [CheckURLContext]; a
// shorter deadline on its context wins.
const ResolveTimeout = 2 * time.Second

// Resolver looks up the IP addresses of a host name, as
// (*net.Resolver).LookupNetIP does: network is "ip" and host a name, never
// an IP literal. *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckURLContext is [CheckURL] for a webhook URL being configured (A2A
// 0.3.0 §7.5 tasks/pushNotificationConfig/set, §9.5, and the "Webhook URL
// Validation" duty of §10.2), and it also resolves a host that is a name,
// with r (nil means net.DefaultResolver) and at most [ResolveTimeout]:
//
//   - if any resolved address is forbidden (as defined by
//     [NewGuardedClient]) and allow does not allow it (by CIDR, IP or
//     IP:port), the error wraps [ErrForbiddenAddress] and names the host and
//     the address;
//   - if the name has no address (NXDOMAIN, or no A or AAAA record), or the
//     lookup fails or times out, the error wraps [ErrUnresolvedHost]: a
//     webhook that cannot be checked is refused, not accepted unchecked.
//
// A literal IP is only checked as by CheckURL. A host name that allow
// lists (exactly, with its port, or by a "*.domain" wildcard) is not
// resolved: as at dial time, it is allowed whatever it resolves to. The
// lookup's own error text is not repeated (it can name the server's DNS
// resolver). Passing this check does not make a name safe for later: it
// may resolve elsewhere by the time a notification is sent (DNS
// rebinding), which is why [NewGuardedClient] checks every connection.
func CheckURLContext(ctx context.Context, raw string, allow []string, r Resolver) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("push: invalid webhook URL: %w", err)
	}
	a := parseAllow(allow)
	host, port, err := checkURL(u, a)
	if err != nil {
		return err
	}
	if _, err := netip.ParseAddr(host); err == nil || a.allowsHost(host, strconv.Itoa(int(port))) {
		return nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, ResolveTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return lookupError(host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("%w: %q has no address", ErrUnresolvedHost, host)
	}
	for _, ip := range addrs {
		if a.checkAddrPort(netip.AddrPortFrom(ip, port)) != nil {
			return fmt.Errorf("%w: host %q resolves to %s, which is not a public address", ErrForbiddenAddress, host, ip)
		}
	}
	return nil
}

// lookupError describes a failed lookup of host without the resolver's
// address (a *net.DNSError's text names the DNS server).
func lookupError(host string, err error) error {
	var de *net.DNSError
	isDNS := errors.As(err, &de)
	switch {
	case isDNS && de.IsNotFound:
		return fmt.Errorf("%w: %q: no such host", ErrUnresolvedHost, host)
	case errors.Is(err, context.DeadlineExceeded), isDNS && de.IsTimeout:
		return fmt.Errorf("%w: looking up %q timed out; try again later", ErrUnresolvedHost, host)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: looking up %q was canceled", ErrUnresolvedHost, host)
	case isDNS:
		return fmt.Errorf("%w: looking up %q failed (%s); try again later", ErrUnresolvedHost, host, de.Err)
	}
	return fmt.Errorf("%w: looking up %q failed (%v); try again later", ErrUnresolvedHost, host, err)
}

// checkURL is CheckURL on a parsed URL; it returns the host (without
// brackets) and the port (the scheme's default when the URL has none).
func checkURL(u *url.URL, allow allowList) (host string, port uint16, err error) {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return "", 0, fmt.Errorf("push: webhook URL scheme must be http or https, not %q", u.Scheme)
	}
	host = u.Hostname()
	if host == "" {
		return "", 0, errors.New("push: webhook URL has no host")
	}
	ps := u.Port()
	if ps == "" {
		ps = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	pn, err := strconv.ParseUint(ps, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("push: invalid webhook URL port %q", ps)
	}
	port = uint16(pn)
	if ip, err := netip.ParseAddr(host); err == nil {
		return host, port, allow.checkAddrPort(netip.AddrPortFrom(ip, port))
	}
	if strings.ContainsAny(host, "%/\\") {
		return "", 0, fmt.Errorf("push: invalid webhook URL host %q", host)
	}
	return host, port, nil
}

// allowList is a parsed GuardOptions.Allow.
type allowList struct {
	prefixes  []netip.Prefix
	addrPorts map[netip.AddrPort]bool
	hosts     map[string]bool // "name", or "name:port"
	suffixes  []string        // ".example.com" for "*.example.com"
}

// parseAllow classifies allowlist entries.
func parseAllow(entries []string) allowList {
	a := allowList{hosts: map[string]bool{}, addrPorts: map[netip.AddrPort]bool{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if ap, err := netip.ParseAddrPort(e); err == nil {
			a.addrPorts[netip.AddrPortFrom(ap.Addr().WithZone("").Unmap(), ap.Port())] = true
			continue
		}
		if h, port, err := net.SplitHostPort(e); err == nil {
			if _, perr := strconv.ParseUint(port, 10, 16); perr == nil && validHostname(normHost(h)) {
				a.hosts[normHost(h)+":"+port] = true
			}
			continue
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			a.prefixes = append(a.prefixes, p.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(e); err == nil {
			a.prefixes = append(a.prefixes, netip.PrefixFrom(ip.WithZone(""), ip.BitLen()))
			continue
		}
		h := normHost(e)
		if rest, ok := strings.CutPrefix(h, "*."); ok {
			if validHostname(rest) {
				a.suffixes = append(a.suffixes, "."+rest)
			}
			continue
		}
		if validHostname(h) {
			a.hosts[h] = true
		}
	}
	return a
}

// validHostname reports whether h (lowercased) is made of DNS name
// characters only.
func validHostname(h string) bool {
	return h != "" && len(h) <= 253 && strings.Trim(h, "abcdefghijklmnopqrstuvwxyz0123456789-._") == ""
}

// normHost lowercases a hostname and strips one trailing dot.
func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// allowsHost reports whether a hostname (on port) is allowlisted.
func (a allowList) allowsHost(host, port string) bool {
	h := normHost(host)
	if h == "" {
		return false
	}
	if a.hosts[h] || (port != "" && a.hosts[h+":"+port]) {
		return true
	}
	for _, s := range a.suffixes {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}

// allowsIP reports whether ip (or its unmapped IPv4 form) is in an
// allowlisted prefix.
func (a allowList) allowsIP(ip netip.Addr) bool {
	ip = ip.WithZone("")
	for _, p := range a.prefixes {
		if p.Contains(ip) || p.Contains(ip.Unmap()) {
			return true
		}
	}
	return false
}

// checkIP returns an error wrapping ErrForbiddenAddress if ip is forbidden
// and not allowlisted (on any port).
func (a allowList) checkIP(ip netip.Addr) error {
	if !forbiddenIP(ip) || a.allowsIP(ip) {
		return nil
	}
	return fmt.Errorf("%w: %s is not a public address", ErrForbiddenAddress, ip)
}

// checkAddrPort is checkIP, also honouring port-scoped entries.
func (a allowList) checkAddrPort(ap netip.AddrPort) error {
	err := a.checkIP(ap.Addr())
	if err != nil && a.addrPorts[netip.AddrPortFrom(ap.Addr().WithZone("").Unmap(), ap.Port())] {
		return nil
	}
	return err
}

// forbiddenV4 and forbiddenV6 are the non-public ranges, beyond what
// netip.Addr's predicates cover.
var (
	forbiddenV4 = prefixes(
		"0.0.0.0/8",          // "this network" (RFC 791); 0.0.0.0 reaches the local host
		"10.0.0.0/8",         // private (RFC 1918)
		"100.64.0.0/10",      // CGNAT shared address space (RFC 6598)
		"127.0.0.0/8",        // loopback
		"169.254.0.0/16",     // link-local, cloud metadata (RFC 3927)
		"172.16.0.0/12",      // private (RFC 1918)
		"192.0.0.0/24",       // IETF protocol assignments (RFC 6890)
		"192.0.2.0/24",       // documentation (RFC 5737)
		"192.88.99.0/24",     // 6to4 relay anycast (RFC 7526)
		"192.168.0.0/16",     // private (RFC 1918)
		"198.18.0.0/15",      // benchmarking (RFC 2544)
		"198.51.100.0/24",    // documentation
		"203.0.113.0/24",     // documentation
		"224.0.0.0/4",        // multicast
		"240.0.0.0/4",        // reserved, and 255.255.255.255 broadcast
		"255.255.255.255/32", // limited broadcast
	)
	forbiddenV6 = prefixes(
		"::/96",          // unspecified, loopback, IPv4-compatible (deprecated)
		"64:ff9b:1::/48", // local-use NAT64 (RFC 8215)
		"100::/64",       // discard-only (RFC 6666)
		"2001::/23",      // IETF protocol assignments, Teredo (RFC 2928, 4380)
		"2001:db8::/32",  // documentation (RFC 3849)
		"fc00::/7",       // unique local (RFC 4193)
		"fe80::/10",      // link-local
		"fec0::/10",      // site-local (deprecated)
		"ff00::/8",       // multicast
	)
	nat64     = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052: IPv4 in the low 32 bits
	sixToFour = netip.MustParsePrefix("2002::/16")       // RFC 3056: IPv4 in bits 16..47
	siit      = netip.MustParsePrefix("::ffff:0:0:0/96") // RFC 2765 IPv4-translated
)

// prefixes parses CIDRs.
func prefixes(cidrs ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		ps[i] = netip.MustParsePrefix(c)
	}
	return ps
}

// forbiddenIP reports whether ip is not a public unicast address: loopback,
// private, link-local, unspecified, multicast, CGNAT, reserved or
// documentation ranges, including the IPv4-mapped, IPv4-compatible,
// IPv4-translated, NAT64 and 6to4 forms of forbidden IPv4 addresses.
func forbiddenIP(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	ip = ip.WithZone("").Unmap()
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return true
	}
	if ip.Is4() {
		for _, p := range forbiddenV4 {
			if p.Contains(ip) {
				return true
			}
		}
		return false
	}
	for _, p := range forbiddenV6 {
		if p.Contains(ip) {
			return true
		}
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip), siit.Contains(ip):
		return forbiddenIP(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixToFour.Contains(ip):
		return forbiddenIP(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	return false
}
