// Package forwarded works out the base URL (scheme://host[:port]) at
// which a client reached an HTTP server, for the URLs the server writes
// into what it answers (Agent Cards, A2A 1.0 §8.3): from a configured
// public URL; else, behind a trusted reverse proxy, its X-Forwarded-Proto
// and X-Forwarded-Host or RFC 7239 Forwarded headers; else the Host header
// when it names an allowed host (or loopback on a loopback connection);
// else the local address the connection reached. A client cannot choose
// the result outside what the configuration allows, and the result is
// always a valid URL.
package forwarded

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Origin resolves requests' base URLs under one configuration. It is safe
// for concurrent use.
type Origin struct {
	publicURL string
	trusted   []netip.Prefix
	allowed   []hostPort
}

// New returns the Origin of publicURL (used for every request when not
// empty; a trailing slash is dropped), the networks of the trusted proxies
// and the allowed host names (see CheckAllowedHost; entries it refuses are
// ignored). An IPv4-mapped IPv6 prefix is taken as the IPv4 prefix it
// maps.
func New(publicURL string, trustedProxies []netip.Prefix, allowedHosts []string) *Origin {
	o := &Origin{publicURL: strings.TrimRight(publicURL, "/")}
	for _, p := range trustedProxies {
		// Peers are compared unmapped: ::ffff:10.0.0.0/104 is 10.0.0.0/8.
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		o.trusted = append(o.trusted, p.Masked())
	}
	for _, a := range allowedHosts {
		if hp, ok := parseAllowedHost(a); ok {
			o.allowed = append(o.allowed, hp)
		}
	}
	return o
}

// CheckAllowedHost reports an allowed host entry that New would ignore:
// one that is not HOST, HOST:PORT, an IPv6 address or [IPv6]:PORT, with a
// port from 1 to 65535.
func CheckAllowedHost(s string) error {
	if _, ok := parseAllowedHost(s); !ok {
		return fmt.Errorf("allowed host %q: want HOST or HOST:PORT (a name or an IP address, port 1-65535)", s)
	}
	return nil
}

// BaseURL returns the base URL (scheme://host[:port], or the public URL;
// no trailing slash) at which r reached the server:
//
//   - the scheme is a trusted proxy's X-Forwarded-Proto when it is http
//     or https, else https on TLS, else http;
//   - the host is a trusted proxy's X-Forwarded-Host when there are no
//     allowed hosts or it matches them; else the Host header when it
//     matches the allowed hosts, or when it is a loopback name on a
//     connection to a loopback address; else the local address the
//     connection reached (http.LocalAddrContextKey); else "localhost".
//
// A proxy is trusted when r.RemoteAddr is in one of the trusted networks;
// one that sends neither X-Forwarded-Host nor X-Forwarded-Proto may send
// RFC 7239 Forwarded instead (its host= and proto=). Each header counts by
// its last (rightmost) value, the one the nearest proxy wrote. A value
// that is not HOST[:PORT] or [IPv6][:PORT] is never used.
func (o *Origin) BaseURL(r *http.Request) string {
	if o.publicURL != "" {
		return o.publicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	name := ""
	if o.trustedPeer(r) {
		fwdHost, fwdProto := lastListValue(r.Header, "X-Forwarded-Host"), lastListValue(r.Header, "X-Forwarded-Proto")
		if fwdHost == "" && fwdProto == "" {
			// Forwarded only from a proxy that sends no X-Forwarded-*:
			// one that sets those may pass a client's Forwarded through.
			fwdHost, fwdProto = lastForwarded(r.Header)
		}
		if p := strings.ToLower(fwdProto); p == "https" || p == "http" {
			scheme = p
		}
		if hp, ok := parseHostPort(fwdHost); ok && (len(o.allowed) == 0 || o.allows(hp)) {
			name = hp.String()
		}
	}
	if name == "" {
		if hp, ok := parseHostPort(r.Host); ok && (o.allows(hp) || hp.loopback() && localAddr(r).Addr().IsLoopback()) {
			name = hp.String()
		}
	}
	if name == "" {
		if a := localAddr(r); a.IsValid() {
			name = a.String()
		} else {
			name = "localhost"
		}
	}
	return scheme + "://" + name
}

// Vary names in w's Vary header the request headers BaseURL reads (none
// with a public URL): a shared cache must not hand one client a URL that
// another chose.
func (o *Origin) Vary(w http.ResponseWriter) {
	if o.publicURL == "" {
		SetVary(w.Header())
	}
}

// SetVary sets h's Vary to the request headers a base URL derived per
// request depends on: Host, X-Forwarded-Host, X-Forwarded-Proto and
// Forwarded.
func SetVary(h http.Header) {
	h["Vary"] = varyBaseURL // shared, never modified
}

var varyBaseURL = []string{"Host, X-Forwarded-Host, X-Forwarded-Proto, Forwarded"}

// trustedPeer reports whether r's immediate peer is a trusted proxy.
func (o *Origin) trustedPeer(r *http.Request) bool {
	if len(o.trusted) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap().WithZone("")
	for _, p := range o.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// allows reports whether hp matches an allowed host.
func (o *Origin) allows(hp hostPort) bool {
	for _, a := range o.allowed {
		if a.host == hp.host && (a.port == "" || a.port == hp.port) {
			return true
		}
	}
	return false
}

// localAddr is the address (IP and port) the connection of r reached;
// invalid when unknown, as for a request that did not come through a
// net/http server on a TCP listener.
func localAddr(r *http.Request) netip.AddrPort {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			return netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
		}
	}
	return netip.AddrPort{}
}

// hostPort is a syntactically valid host (a lower-case name, an IPv4
// address or a bracketed IPv6 address) and port ("" when absent).
type hostPort struct{ host, port string }

func (hp hostPort) String() string {
	if hp.port == "" {
		return hp.host
	}
	return hp.host + ":" + hp.port
}

// loopback reports a name that always means this machine: localhost,
// *.localhost (RFC 6761 §6.3), or a loopback IP address.
func (hp hostPort) loopback() bool {
	if hp.host == "localhost" || strings.HasSuffix(hp.host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(hp.host, "[]"))
	return err == nil && a.IsLoopback()
}

// parseHostPort parses s as HOST, HOST:PORT, [IPv6] or [IPv6]:PORT (the
// forms of a Host header, RFC 9110 §7.2): HOST is a name of letters,
// digits, '-' and '_' in non-empty dot-separated labels, or an IPv4
// address; the port is 1-65535. Anything else ("", "a b", "[::1",
// "h:0", "h/x") is not ok.
func parseHostPort(s string) (hostPort, bool) {
	if s == "" || len(s) > 300 {
		return hostPort{}, false
	}
	var h, port string
	if s[0] == '[' {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return hostPort{}, false
		}
		a, err := netip.ParseAddr(s[1:end])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return hostPort{}, false
		}
		h = "[" + a.String() + "]"
		rest := s[end+1:]
		if rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return hostPort{}, false
			}
			port = p
		}
	} else {
		h = s
		if i := strings.LastIndexByte(s, ':'); i >= 0 {
			h, port = s[:i], s[i+1:]
		}
		if !validHostName(h) {
			return hostPort{}, false
		}
		h = strings.ToLower(h)
	}
	if s[len(s)-1] == ':' || port != "" && !validPort(port) {
		return hostPort{}, false
	}
	return hostPort{host: h, port: port}, true
}

// parseAllowedHost parses an AllowedHosts entry: what parseHostPort takes,
// or a bare IPv6 address.
func parseAllowedHost(s string) (hostPort, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil && a.Is6() && a.Zone() == "" {
		return hostPort{host: "[" + a.String() + "]"}, true
	}
	return parseHostPort(s)
}

func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	label := 0
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case c == '.':
			if label == 0 {
				return false
			}
			label = 0
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
			label++
		default:
			return false
		}
	}
	return label > 0
}

func validPort(p string) bool {
	if len(p) == 0 || len(p) > 5 {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		n = n*10 + int(p[i]-'0')
	}
	return n >= 1 && n <= 65535
}

// lastListValue returns the last comma-separated value of the last
// header line named key, trimmed: the one the nearest proxy added.
func lastListValue(h http.Header, key string) string {
	vs := h.Values(key)
	if len(vs) == 0 {
		return ""
	}
	v := vs[len(vs)-1]
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return strings.TrimSpace(v)
}

// lastForwarded returns host= and proto= of the last element of the
// Forwarded header (RFC 7239 §4: elements separated by commas, pairs by
// semicolons, values tokens or quoted strings).
func lastForwarded(h http.Header) (host, proto string) {
	vs := h.Values("Forwarded")
	if len(vs) == 0 {
		return "", ""
	}
	elems := splitUnquoted(vs[len(vs)-1], ',')
	for _, pair := range splitUnquoted(elems[len(elems)-1], ';') {
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = unquotePair(v[1 : len(v)-1])
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "host":
			host = v
		case "proto":
			proto = v
		}
	}
	return host, proto
}

// splitUnquoted splits s at each sep outside a quoted string.
func splitUnquoted(s string, sep byte) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if quoted {
				i++
			}
		case '"':
			quoted = !quoted
		case sep:
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// unquotePair undoes the quoted-pairs (backslash escapes) of a quoted
// string's content.
func unquotePair(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ClientAddr returns the address of the client that sent r: its peer's
// address, or, when the peer is a trusted proxy, the last address of
// X-Forwarded-For (every value of the header, in order) that is not a
// trusted proxy's, read from the right as each proxy appends the peer it
// saw. Entries may carry a port ("192.0.2.1:443", "[2001:db8::1]:443").
// The walk stops at an entry it cannot parse, and after
// maxForwardedHops entries, at the last good address: what lies further
// left is the client's to write. An IPv4-mapped address is returned as
// IPv4; the zero Addr when the peer address cannot be parsed.
func (o *Origin) ClientAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	a := ap.Addr().Unmap().WithZone("")
	if !o.trusts(a) {
		return a
	}
	vals := r.Header.Values("X-Forwarded-For")
	hops := 0
	for i := len(vals) - 1; i >= 0; i-- {
		v := vals[i]
		for v != "" {
			if hops++; hops > maxForwardedHops {
				return a
			}
			var item string
			if j := strings.LastIndexByte(v, ','); j >= 0 {
				item, v = v[j+1:], v[:j]
			} else {
				item, v = v, ""
			}
			next, ok := parseForwardedFor(strings.TrimSpace(item))
			if !ok {
				return a
			}
			a = next
			if !o.trusts(a) {
				return a
			}
		}
	}
	return a
}

// maxForwardedHops bounds the X-Forwarded-For entries ClientAddr reads.
const maxForwardedHops = 32

// parseForwardedFor parses one X-Forwarded-For entry: an IP address,
// with a port or not (an IPv6 address with a port in brackets).
func parseForwardedFor(s string) (netip.Addr, bool) {
	if len(s) > 64 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.Unmap().WithZone(""), true
}

// trusts reports whether a is a trusted proxy's address.
func (o *Origin) trusts(a netip.Addr) bool {
	for _, p := range o.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
