package check

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/card"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// Interface is one interface an endpoint offers: a protocol version and a
// binding at a URL (A2A 1.0 §4.4.6 AgentInterface; A2A 0.3.0 §5.6 url,
// preferredTransport and additionalInterfaces).
type Interface struct {
	// Version is the protocol version as Major.Minor: "0.3", "1.0".
	Version string `json:"version"`
	// Binding is BindingJSONRPC, BindingREST or BindingGRPC, or the
	// card's name of a binding the checker does not speak.
	Binding string `json:"binding"`
	URL     string `json:"url"`
	Tenant  string `json:"tenant,omitempty"`
}

// Suite returns the key of the interface's suite: "1.0/rest".
func (i Interface) Suite() string { return suiteKey(i.Version, i.Binding) }

// Name returns the interface as people read it: "A2A 1.0 HTTP+JSON".
func (i Interface) Name() string { return suiteName(i.Version, i.Binding) }

func suiteKey(version, binding string) string { return version + "/" + binding }

func suiteName(version, binding string) string {
	switch binding {
	case BindingJSONRPC:
		binding = "JSON-RPC"
	case BindingREST:
		binding = "HTTP+JSON"
	case BindingGRPC:
		binding = "gRPC"
	case "":
		binding = "Agent Card"
	}
	return "A2A " + version + " " + binding
}

// bindingName maps a card's transport or protocolBinding to the
// checker's binding name.
func bindingName(transport string) string {
	switch strings.ToUpper(transport) {
	case a2a.TransportJSONRPC, "":
		return BindingJSONRPC
	case a2a.TransportHTTPJSON, "REST", "HTTP_JSON":
		return BindingREST
	case a2a.TransportGRPC:
		return BindingGRPC
	}
	return transport
}

// versionOf reduces a protocolVersion to the Major.Minor the checker
// knows ("1.0.1" is "1.0", "1" is "1.0"), or returns it as it is.
func versionOf(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	switch {
	case v == "1" || v == "1.0" || strings.HasPrefix(v, "1.0."):
		return a2a.Version10
	case v == "" || v == "0.3" || strings.HasPrefix(v, "0.3."):
		return a2a.Version03
	}
	return v
}

// readInterfaces lists the card's interfaces: decoded with card.Unmarshal
// (any card, 0.3, 1.0 or union), the 1.0 supportedInterfaces first, then
// those of the 0.3 members; a card the decoder refuses is read member by
// member, so that it can still be checked (card10.decode says why).
func (p *Probe) readInterfaces() {
	_, p.has10 = p.card["supportedInterfaces"]
	c, _, err := card.Unmarshal(p.cardBody)
	if err != nil {
		p.cardDecodeErr = err.Error()
		c = rawCard(p.card)
	}
	add := func(it a2a.AgentInterface, version string) {
		i := Interface{Version: versionOf(version), Binding: bindingName(it.Transport), URL: it.URL, Tenant: it.Tenant}
		for _, have := range p.ifaces {
			if have == i {
				return
			}
		}
		p.ifaces = append(p.ifaces, i)
	}
	for _, it := range c.SupportedInterfaces {
		add(it, it.ProtocolVersion)
	}
	c.SupportedInterfaces = nil
	for _, it := range v10.SupportedInterfaces(&c) {
		add(it, it.ProtocolVersion)
	}
}

// rawCard reads the interfaces of a card document member by member.
func rawCard(m map[string]any) a2a.AgentCard {
	c := a2a.AgentCard{URL: str(m, "url"), PreferredTransport: str(m, "preferredTransport"), ProtocolVersion: str(m, "protocolVersion")}
	list := func(name, transport string) []a2a.AgentInterface {
		raw, _ := m[name].([]any)
		var out []a2a.AgentInterface
		for _, x := range raw {
			o, _ := x.(map[string]any)
			out = append(out, a2a.AgentInterface{URL: str(o, "url"), Transport: str(o, transport),
				ProtocolVersion: str(o, "protocolVersion"), Tenant: str(o, "tenant")})
		}
		return out
	}
	c.AdditionalInterfaces = list("additionalInterfaces", "transport")
	c.SupportedInterfaces = list("supportedInterfaces", "protocolBinding")
	return c
}

// offered returns the first interface of the card for (version, binding).
func (p *Probe) offered(version, binding string) (Interface, bool) {
	for _, i := range p.ifaces {
		if i.Version == version && i.Binding == binding {
			return i, true
		}
	}
	return Interface{}, false
}

// runsSuite reports whether the checks of (version, binding) apply to the
// endpoint: the card offers such an interface (binding "": any of the
// version; for 1.0 also a card with a supportedInterfaces member the
// checker could not read). The 0.3 JSON-RPC checks also run without a card
// and on a card without supportedInterfaces (a 0.3 card, judged by them).
func (p *Probe) runsSuite(version, binding string) bool {
	if binding == "" {
		if version == a2a.Version10 && p.has10 {
			return true
		}
		for _, i := range p.ifaces {
			if i.Version == version {
				return true
			}
		}
		return false
	}
	if version == a2a.Version03 && binding == BindingJSONRPC && (p.card == nil || !p.has10) {
		return true
	}
	_, ok := p.offered(version, binding)
	return ok
}

// selected reports whether the options let the suite of c run.
func (o Options) selected(c *Check) bool {
	if o.Protocol != "" && o.Protocol != c.Version {
		return false
	}
	return o.Binding == "" || c.Binding == "" || o.Binding == c.Binding
}

// validateSuiteOptions checks Options.Protocol and Options.Binding.
func (o Options) validateSuiteOptions() error { return ValidateSuite(o.Protocol, o.Binding) }

// ValidateSuite checks a protocol version ("", "0.3" or "1.0") and a
// binding ("", BindingJSONRPC or BindingREST) as Options take them; the
// error names the valid values.
func ValidateSuite(protocol, binding string) error {
	switch protocol {
	case "", a2a.Version03, a2a.Version10:
	default:
		return fmt.Errorf("unknown protocol version %q (have 0.3, 1.0)", protocol)
	}
	switch binding {
	case "", BindingJSONRPC, BindingREST, BindingGRPC:
	default:
		return fmt.Errorf("unknown binding %q (have jsonrpc, rest, grpc)", binding)
	}
	return nil
}

// absoluteHTTP reports whether u is an absolute http(s) URL.
func absoluteHTTP(u string) bool {
	x, err := url.Parse(u)
	return err == nil && (x.Scheme == "http" || x.Scheme == "https") && x.Host != ""
}
