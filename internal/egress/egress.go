// Package egress guards what a bridge sends to its backend, as the push
// package guards webhooks: a bridge configured with a URL talks to that
// URL's origin, and to nothing else unless its configuration lists more
// hosts (allow_hosts), whatever the backend answers (a redirect, an Agent
// Card whose interface is elsewhere); and it never connects to a
// link-local or cloud metadata address unless allow_hosts lists it,
// checked on the address each connection is made to (after DNS
// resolution, so a name that resolves differently later is caught too).
// Loopback and private addresses stay allowed: a gateway usually bridges
// services next to it.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrRefused is wrapped by every refusal of a Policy.
var ErrRefused = errors.New("egress refused")

// metadataAddrs are addresses of cloud instance metadata services outside
// the link-local ranges (AWS's IPv6 endpoint, Alibaba Cloud's, Azure's
// wire server).
var metadataAddrs = []netip.Prefix{
	netip.MustParsePrefix("fd00:ec2::254/128"),
	netip.MustParsePrefix("100.100.100.200/32"),
	netip.MustParsePrefix("168.63.129.16/32"),
}

// IPv6 forms that carry an IPv4 address: IPv4-compatible (::a.b.c.d,
// deprecated), NAT64 (RFC 6052, in the low 32 bits) and 6to4 (RFC 3056,
// in bits 16 to 47).
var (
	v4compat  = netip.MustParsePrefix("::/96")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Refused reports whether ip is link-local (169.254.0.0/16, where most
// clouds serve instance metadata at 169.254.169.254, or fe80::/10) or
// another cloud metadata address, in any IPv6 form that carries an IPv4
// address (mapped, compatible, NAT64, 6to4).
func Refused(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	if ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() {
		return true
	}
	for _, p := range metadataAddrs {
		if p.Contains(ip) {
			return true
		}
	}
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip), v4compat.Contains(ip) && !ip.IsLoopback() && !ip.IsUnspecified():
			return Refused(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixToFour.Contains(ip):
			return Refused(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	return false
}

// Policy is where a bridge may send requests: see the package doc. The
// zero value allows nothing; build it with New.
type Policy struct {
	scheme, host, port string // the configured URL's origin
	hosts              []string
	suffixes           []string // "*.example.com" as ".example.com"
	hostPorts          map[string]bool
	prefixes           []netip.Prefix // addresses allowed although Refused
}

// New returns the policy of a bridge configured with rawURL (an absolute
// http or https URL) and the allow_hosts entries allow, each a host name
// ("api.example.com", any port), a host and port ("api.example.com:8443"),
// "*.example.com" (any subdomain), an IP address or a CIDR ("10.0.0.0/8",
// "169.254.169.254"): a host allows requests to it besides the origin, an
// address or CIDR allows connections to those addresses although they are
// link-local or metadata ones (and requests to URLs whose host is such a
// literal address). key names the allow_hosts key in errors
// ("allow_hosts[2]: …").
func New(rawURL string, allow []string, key string) (*Policy, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q: not an absolute http or https URL", rawURL)
	}
	p := &Policy{scheme: u.Scheme, host: strings.ToLower(u.Hostname()), port: portOf(u), hostPorts: map[string]bool{}}
	for i, e := range allow {
		e = strings.TrimSpace(e)
		field := fmt.Sprintf("%s[%d]", key, i)
		if pf, err := netip.ParsePrefix(e); err == nil {
			p.prefixes = append(p.prefixes, pf.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(e); err == nil {
			p.prefixes = append(p.prefixes, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			p.hosts = append(p.hosts, ip.Unmap().String())
			continue
		}
		if rest, ok := strings.CutPrefix(e, "*."); ok {
			if !validName(rest) {
				return nil, fmt.Errorf("%s: %q: want a host name, host:port, *.domain, an IP address or a CIDR", field, e)
			}
			p.suffixes = append(p.suffixes, "."+strings.ToLower(rest))
			continue
		}
		if h, port, err := net.SplitHostPort(e); err == nil {
			if !validName(h) && !validIP(h) {
				return nil, fmt.Errorf("%s: %q: want a host name, host:port, *.domain, an IP address or a CIDR", field, e)
			}
			p.hostPorts[strings.ToLower(strings.Trim(h, "[]"))+":"+port] = true
			continue
		}
		if !validName(e) {
			return nil, fmt.Errorf("%s: %q: want a host name, host:port, *.domain, an IP address or a CIDR", field, e)
		}
		p.hosts = append(p.hosts, strings.ToLower(e))
	}
	return p, nil
}

func validIP(s string) bool {
	_, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return err == nil
}

func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// allowsHost reports whether host (lower case, no brackets) and port are
// listed in allow_hosts.
func (p *Policy) allowsHost(host, port string) bool {
	if p.hostPorts[host+":"+port] {
		return true
	}
	for _, h := range p.hosts {
		if h == host {
			return true
		}
	}
	for _, s := range p.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// CheckURL refuses a request to u unless u is on the configured URL's
// origin (scheme, host and port) or its host is listed in allow_hosts;
// and a URL whose host is a literal refused address (Refused) unless
// allow_hosts lists it. The error names u without its query and says
// which key allows it.
func (p *Policy) CheckURL(u *url.URL) error {
	if u == nil {
		return fmt.Errorf("%w: no URL", ErrRefused)
	}
	host, port := strings.ToLower(u.Hostname()), portOf(u)
	if ip, err := netip.ParseAddr(host); err == nil && Refused(ip) && !p.allowsIP(ip) {
		return fmt.Errorf("%w: %s is a link-local or cloud metadata address (list it in allow_hosts to allow it)", ErrRefused, shown(u))
	}
	if u.Scheme == p.scheme && host == p.host && port == p.port || p.allowsHost(host, port) {
		return nil
	}
	return fmt.Errorf("%w: %s is not on the configured URL's origin (%s://%s); list its host in allow_hosts to allow it",
		ErrRefused, shown(u), p.scheme, net.JoinHostPort(p.host, p.port))
}

// CheckGRPC refuses a gRPC target (a card's GRPC interface URL: host:port,
// or a URL) unless its host is the configured URL's (any port: a gRPC
// listener is usually a port of its own) or allow_hosts lists it; a
// literal refused address likewise needs allow_hosts.
func (p *Policy) CheckGRPC(target string) error {
	hp := strings.TrimPrefix(target, "dns:///")
	if u, err := url.Parse(hp); err == nil && u.Host != "" {
		hp = u.Host
	}
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		host, port = hp, "443"
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if ip, err := netip.ParseAddr(host); err == nil && Refused(ip) && !p.allowsIP(ip) {
		return fmt.Errorf("%w: gRPC target %s is a link-local or cloud metadata address (list it in allow_hosts to allow it)", ErrRefused, hp)
	}
	if host == p.host || p.allowsHost(host, port) {
		return nil
	}
	return fmt.Errorf("%w: gRPC target %s is not on the configured URL's host (%s); list its host in allow_hosts to allow it", ErrRefused, hp, p.host)
}

func (p *Policy) allowsIP(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	for _, pf := range p.prefixes {
		if pf.Contains(ip) {
			return true
		}
	}
	return false
}

// Control is a net.Dialer Control function: it refuses to connect to a
// refused address (Refused) that allow_hosts does not list, after the
// name was resolved and before the connection is made. Through a proxy,
// it sees the proxy's address.
func (p *Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse the address %q", ErrRefused, address)
	}
	if Refused(ap.Addr()) && !p.allowsIP(ap.Addr()) {
		return fmt.Errorf("%w: %s is a link-local or cloud metadata address (list it in allow_hosts to allow it)", ErrRefused, ap.Addr())
	}
	return nil
}

// After returns a URL check that applies first (when not nil) and then
// CheckURL: for a bridge confined further by its caller (an ad-hoc
// scenario's allowlist).
func (p *Policy) After(first func(*url.URL) error) func(*url.URL) error {
	if first == nil {
		return p.CheckURL
	}
	return func(u *url.URL) error {
		if err := first(u); err != nil {
			return err
		}
		return p.CheckURL(u)
	}
}

// Dialer returns a net.Dialer with Control (30 s connect timeout, 30 s
// keep-alive, as net/http's default transport dials).
func (p *Policy) Dialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: p.Control}
}

// CheckResolved resolves the configured URL's host (bounded by timeout;
// a literal address is not resolved, nor any host when timeout <= 0) and
// refuses it when an address is
// refused and not listed in allow_hosts. A host that does not resolve is
// not an error here (the backend may come later; each connection is
// checked by Control).
func (p *Policy) CheckResolved(ctx context.Context, timeout time.Duration) error {
	if ip, err := netip.ParseAddr(p.host); err == nil {
		if Refused(ip) && !p.allowsIP(ip) {
			return fmt.Errorf("%w: %s is a link-local or cloud metadata address (list it in allow_hosts to allow it)", ErrRefused, ip)
		}
		return nil
	}
	if timeout <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", p.host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if Refused(a) && !p.allowsIP(a) {
			return fmt.Errorf("%w: %s resolves to %s, a link-local or cloud metadata address (list it in allow_hosts to allow it)", ErrRefused, p.host, a)
		}
	}
	return nil
}

// shown is u without user info, query and fragment.
func shown(u *url.URL) string {
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return v.String()
}
