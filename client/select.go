package client

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// Interface is the endpoint a Client calls, chosen from the Agent Card's
// interfaces (A2A 1.0 §4.4.6 AgentInterface; the 0.3 url,
// preferredTransport and additionalInterfaces, A2A 0.3.0 §5.5.5).
type Interface struct {
	// URL is the interface's absolute http(s) URL: the JSON-RPC endpoint,
	// or the base of the HTTP+JSON paths (A2A 1.0 §11); for GRPC, the
	// gRPC target (host:port).
	URL string
	// Binding is a2a.TransportJSONRPC, a2a.TransportHTTPJSON or
	// a2a.TransportGRPC.
	Binding string
	// ProtocolVersion is the version spoken there, a2a.Version03 ("0.3")
	// or a2a.Version10 ("1.0"); CardVersion is the card's own spelling
	// ("1.0.1", "0.3.0", …).
	ProtocolVersion string
	CardVersion     string
	// Tenant is the interface's tenant (A2A 1.0 only): sent as the
	// "tenant" member of JSON-RPC params, or as the first path segment of
	// HTTP+JSON requests, unless a call's params name another tenant.
	Tenant string
}

// String describes the interface: "A2A 1.0 HTTP+JSON at URL (tenant T)".
func (i Interface) String() string {
	s := fmt.Sprintf("A2A %s %s at %s", i.ProtocolVersion, i.Binding, i.URL)
	if i.Tenant != "" {
		s += " (tenant " + i.Tenant + ")"
	}
	return s
}

// protocols are the versions Options.Protocol accepts, besides "" (the
// card decides).
var protocols = []string{a2a.Version03, a2a.Version10}

// checkChoice validates Options.Protocol and Options.Binding and returns
// them in canonical spelling.
func checkChoice(o *Options) (protocol, binding string, err error) {
	protocol, binding = o.Protocol, o.Binding
	if protocol != "" {
		if protocol = forcedVersion(protocol); protocol == "" {
			return "", "", fmt.Errorf("a2a client: Options.Protocol %q: want %q or %q", o.Protocol, a2a.Version03, a2a.Version10)
		}
	}
	if binding == a2a.TransportGRPC && protocol == a2a.Version03 {
		return "", "", fmt.Errorf("a2a client: Options.Binding %q with Options.Protocol %q: this client speaks gRPC in A2A 1.0 only", o.Binding, o.Protocol)
	}
	if binding != "" {
		if binding = bindingOf(binding); binding == "" {
			return "", "", fmt.Errorf("a2a client: Options.Binding %q: want %q, %q or %q", o.Binding, a2a.TransportJSONRPC, a2a.TransportHTTPJSON, a2a.TransportGRPC)
		}
	}
	return protocol, binding, nil
}

// versionOf reduces a protocol version to the one this client speaks:
// "1.0" for major version 1 ("1", "1.0", "1.0.1", "v1.0"), "0.3" for 0.3
// ("0.3", "0.3.0"), "" otherwise.
func versionOf(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	switch {
	case v == "1" || strings.HasPrefix(v, "1."):
		return a2a.Version10
	case v == "0.3" || strings.HasPrefix(v, "0.3."):
		return a2a.Version03
	}
	return ""
}

// forcedVersion reads Options.Protocol: "0.3" or "1.0", also with a patch
// number ("0.3.0", "1.0.1"); "" for anything else.
func forcedVersion(v string) string {
	for _, want := range protocols {
		if v == want || strings.HasPrefix(v, want+".") && !strings.Contains(v[len(want)+1:], ".") {
			return want
		}
	}
	return ""
}

// bindingOf returns the canonical name of a binding this client speaks
// (case-insensitive; "rest" is HTTP+JSON), "" for any other.
func bindingOf(b string) string {
	switch {
	case strings.EqualFold(b, a2a.TransportGRPC):
		return a2a.TransportGRPC
	case strings.EqualFold(b, a2a.TransportJSONRPC):
		return a2a.TransportJSONRPC
	case strings.EqualFold(b, a2a.TransportHTTPJSON), strings.EqualFold(b, "REST"):
		return a2a.TransportHTTPJSON
	}
	return ""
}

// cardInterfaces lists every interface the card declares, preferred first:
// its supportedInterfaces (A2A 1.0), then those of its 0.3 members that
// the list lacks (a union card's url is usually among them).
func cardInterfaces(card *a2a.AgentCard) []a2a.AgentInterface {
	out := v10.SupportedInterfaces(card)
	if len(card.SupportedInterfaces) == 0 {
		return out
	}
	for _, it := range interfaces03(card) {
		dup := false
		for _, have := range out {
			if have.URL == it.URL && strings.EqualFold(have.Transport, it.Transport) && versionOf(have.ProtocolVersion) == versionOf(it.ProtocolVersion) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, it)
		}
	}
	return out
}

// absoluteHTTP reports whether u is an absolute http(s) URL.
func absoluteHTTP(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}

// SelectInterface picks the interface a Client for card calls: A2A 1.0
// when the card offers it (an interface whose protocolVersion has major
// version 1), else 0.3; within the version, the first of the card's
// interfaces in its order of preference (for 1.0 the supportedInterfaces
// order, A2A 1.0 §4.4.6; for 0.3 the url with its preferredTransport, then
// the additionalInterfaces, A2A 0.3.0 §3.4.2, §5.5) whose binding the client
// speaks (JSON-RPC or HTTP+JSON, in either version) at an absolute http(s)
// URL. protocol ("" | "0.3" | "1.0") and binding ("" | a2a.TransportJSONRPC
// | a2a.TransportHTTPJSON | a2a.TransportGRPC) force the choice. GRPC is
// chosen when forced, or when the card offers nothing else (a gRPC-only
// agent): the card's first A2A 1.0 GRPC interface whose url is a gRPC
// target (host:port, dns:///host:port; a URL with a scheme or a path is
// not, as the official clients cannot dial one). It fails, naming what
// the card offers, when no interface fits.
func SelectInterface(card *a2a.AgentCard, protocol, binding string) (Interface, error) {
	o := Options{Protocol: protocol, Binding: binding}
	protocol, binding, err := checkChoice(&o)
	if err != nil {
		return Interface{}, err
	}
	all := cardInterfaces(card)
	if it, ok := selectIn(card, all, protocol, binding); ok {
		return it, nil
	}
	if binding == "" && protocol != a2a.Version03 {
		// A gRPC-only agent.
		if it, ok := selectIn(card, all, protocol, a2a.TransportGRPC); ok {
			return it, nil
		}
	}
	return Interface{}, noInterfaceError(card, all, protocol, binding)
}

// selectIn is SelectInterface's choice among all, the card's interfaces,
// with protocol and binding checked.
func selectIn(card *a2a.AgentCard, all []a2a.AgentInterface, protocol, binding string) (Interface, bool) {
	for _, version := range []string{a2a.Version10, a2a.Version03} {
		if protocol != "" && protocol != version {
			continue
		}
		candidates := all
		if version == a2a.Version03 {
			candidates = append(interfaces03(card), all...)
		}
		for _, it := range candidates {
			v, b := versionOf(it.ProtocolVersion), bindingOf(it.Transport)
			if v != version || b == "" || (binding != "" && b != binding) {
				continue
			}
			if b == a2a.TransportGRPC {
				if _, ok := grpcTarget(it.URL); !ok || binding != a2a.TransportGRPC || v != a2a.Version10 {
					continue
				}
			} else if !absoluteHTTP(it.URL) {
				continue
			}
			return Interface{URL: it.URL, Binding: b, ProtocolVersion: v, CardVersion: it.ProtocolVersion, Tenant: it.Tenant}, true
		}
	}
	return Interface{}, false
}

// interfaces03 lists the interfaces of the card's A2A 0.3 members (url
// and preferredTransport first, then additionalInterfaces), which say the
// 0.3 preference even when supportedInterfaces lists them in another
// order; none when the card has no 0.3 url.
func interfaces03(card *a2a.AgentCard) []a2a.AgentInterface {
	if card.URL == "" {
		return nil
	}
	c03 := *card
	c03.SupportedInterfaces = nil
	return v10.SupportedInterfaces(&c03)
}

// noInterfaceError says that the card offers no interface that fits, and
// what it offers.
func noInterfaceError(card *a2a.AgentCard, all []a2a.AgentInterface, protocol, binding string) error {
	want := "an interface this client speaks (A2A 1.0 or 0.3, JSON-RPC or HTTP+JSON, at an http(s) URL)"
	if binding == a2a.TransportGRPC {
		protocol = a2a.Version10
	}
	if protocol != "" || binding != "" {
		want = strings.TrimSpace(fmt.Sprintf("an A2A %s %s interface", orAny(protocol, "1.0 or 0.3"), orAny(binding, "JSON-RPC or HTTP+JSON")))
	}
	offers := make([]string, 0, len(all))
	for _, it := range all {
		offers = append(offers, fmt.Sprintf("%s %s at %q", orAny(it.Transport, "(no binding)"), orAny(it.ProtocolVersion, "(no version)"), it.URL))
	}
	if len(offers) == 0 {
		offers = append(offers, "no interface")
	}
	return fmt.Errorf("a2a client: agent %q offers no %s; its card offers: %s", card.Name, strings.TrimPrefix(want, "an "), strings.Join(offers, ", "))
}

func orAny(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
