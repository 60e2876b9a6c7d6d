package check

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/schema"
)

func init() {
	card10 := func(c *Check) *Check {
		c.Category, c.Version, c.Binding = "card10", a2a.Version10, ""
		return c
	}
	register(
		card10(&Check{ID: "card10.supported-interfaces", Section: "§8.3.1", Level: Must,
			Title:          "supportedInterfaces declares each interface",
			Requirement:    "The AgentCard MUST properly declare supported protocols (§8.3): supportedInterfaces lists every protocol combination in preference order, and each AgentInterface MUST accurately declare its transport protocol and URL (§8.3.1); url, protocolBinding and protocolVersion are REQUIRED (§4.4.6, §5.7).",
			Recommendation: "List every interface in supportedInterfaces as {\"url\": …, \"protocolBinding\": \"JSONRPC\" | \"HTTP+JSON\" | \"GRPC\", \"protocolVersion\": \"1.0\"}.",
			Run:            checkCard10Interfaces}),
		card10(&Check{ID: "card10.urls", Section: "§8.3.1", Level: Must,
			Title:          "Interface URLs are absolute",
			Requirement:    "Each interface MUST declare its URL (§8.3.1), the address clients send every call to (§8.3.2: use the correct URL for the selected transport): an absolute http(s) URL for JSONRPC and HTTP+JSON.",
			Recommendation: "Publish absolute URLs that clients can reach (derive them from the request's Host or configure the public URL).",
			Run:            checkCard10URLs}),
		card10(&Check{ID: "card10.protocol-version", Section: "§3.6", Level: Should,
			Title:          "protocolVersion is Major.Minor",
			Requirement:    "The protocol version is identified by Major.Minor (e.g. 1.0); patch version numbers SHOULD NOT be used in Agent Cards and MUST NOT be considered when negotiating (§3.6). Clients match the interface's protocolVersion (a2a-js picks \"1.0\" exactly).",
			Recommendation: "Write \"protocolVersion\": \"1.0\" (not \"1.0.1\" or \"v1\") in each 1.0 interface.",
			Run:            checkCard10ProtocolVersion}),
		card10(&Check{ID: "card10.required-fields", Section: "§5.7", Level: Must,
			Title:          "The card has every REQUIRED field",
			Requirement:    "Fields marked REQUIRED in a2a.proto MUST be present and set, and required arrays MUST contain at least one element (§5.7): name, description, supportedInterfaces, version, capabilities, defaultInputModes, defaultOutputModes, skills; each skill's id, name, description, tags (§4.4.1, §4.4.5).",
			Recommendation: "Add the missing fields (and at least one element to each required list).",
			Run:            checkCard10Required}),
		card10(&Check{ID: "card10.schema", Section: "§4.4.1", Level: Must,
			Title:          "The card is a valid A2A 1.0 AgentCard",
			Requirement:    "The Agent Card is an AgentCard (§4.4.1) in ProtoJSON (§5.5: camelCase names, enums by name): valid against #/definitions/Agent Card of the A2A 1.0.1 JSON Schema and readable by an A2A 1.0 decoder. (The A2A 0.3 members of a card that also serves 0.3 clients are left out of the validation.)",
			Recommendation: "Fix the members listed so that the card validates against the A2A 1.0.1 schema (specification/json/a2a.json of release v1.0.1).",
			Run:            checkCard10Schema}),
	)
}

// need10Card returns a skip result when there is no card.
func need10Card(p *Probe) *Result {
	if p.card == nil {
		r := skip("no Agent Card: %s", p.cardErr)
		return &r
	}
	return nil
}

// rawInterfaces returns the card's supportedInterfaces entries as objects.
func rawInterfaces(p *Probe) ([]map[string]any, bool) {
	raw, ok := p.card["supportedInterfaces"].([]any)
	if !ok {
		return nil, p.card["supportedInterfaces"] != nil
	}
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		out[i], _ = x.(map[string]any)
	}
	return out, true
}

func checkCard10Interfaces(_ context.Context, p *Probe) Result {
	if r := need10Card(p); r != nil {
		return *r
	}
	ifs, ok := rawInterfaces(p)
	switch {
	case !ok:
		return fail("the card has no supportedInterfaces: A2A 1.0 clients cannot use it (a2a-go: \"agent card has no supported interfaces\")").with(p.cardEx)
	case ifs == nil && p.card["supportedInterfaces"] != nil:
		return fail("supportedInterfaces is not an array").with(p.cardEx)
	case len(ifs) == 0:
		return fail("supportedInterfaces is empty").with(p.cardEx)
	}
	var problems []string
	n10 := 0
	for i, it := range ifs {
		if it == nil {
			problems = append(problems, fmt.Sprintf("supportedInterfaces[%d] is not an object", i))
			continue
		}
		for _, f := range []string{"url", "protocolBinding", "protocolVersion"} {
			if str(it, f) == "" {
				problems = append(problems, fmt.Sprintf("supportedInterfaces[%d] has no %s", i, f))
			}
		}
		if versionOf(str(it, "protocolVersion")) == a2a.Version10 {
			n10++
		}
	}
	if n10 == 0 {
		problems = append(problems, "no interface has protocolVersion 1.0")
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; ")).with(p.cardEx)
	}
	var names []string
	for _, i := range p.ifaces {
		names = append(names, i.Name())
	}
	return pass("%d interface(s): %s", len(ifs), strings.Join(names, ", ")).with(p.cardEx)
}

func checkCard10URLs(_ context.Context, p *Probe) Result {
	if r := need10Card(p); r != nil {
		return *r
	}
	ifs, _ := rawInterfaces(p)
	if len(ifs) == 0 {
		return skip("the card has no supportedInterfaces (see card10.supported-interfaces)")
	}
	var bad []string
	for i, it := range ifs {
		u := str(it, "url")
		b := bindingName(str(it, "protocolBinding"))
		if (b == BindingJSONRPC || b == BindingREST) && !absoluteHTTP(u) {
			bad = append(bad, fmt.Sprintf("supportedInterfaces[%d].url %q", i, u))
		}
	}
	if len(bad) > 0 {
		return fail("not an absolute http(s) URL: %s", strings.Join(bad, ", ")).with(p.cardEx)
	}
	return pass("every JSONRPC and HTTP+JSON interface has an absolute http(s) URL").with(p.cardEx)
}

var majorMinor = regexp.MustCompile(`^\d+\.\d+$`)

func checkCard10ProtocolVersion(_ context.Context, p *Probe) Result {
	if r := need10Card(p); r != nil {
		return *r
	}
	ifs, _ := rawInterfaces(p)
	if len(ifs) == 0 {
		return skip("the card has no supportedInterfaces (see card10.supported-interfaces)")
	}
	var bad, seen []string
	for i, it := range ifs {
		v := str(it, "protocolVersion")
		seen = append(seen, quote(v))
		if !majorMinor.MatchString(v) {
			bad = append(bad, fmt.Sprintf("supportedInterfaces[%d].protocolVersion %q", i, v))
		}
	}
	if len(bad) > 0 {
		return fail("not Major.Minor: %s", strings.Join(bad, ", ")).with(p.cardEx)
	}
	return pass("protocolVersion values %s", strings.Join(seen, ", ")).with(p.cardEx)
}

func checkCard10Required(_ context.Context, p *Probe) Result {
	if r := need10Card(p); r != nil {
		return *r
	}
	var missing []string
	for _, f := range []string{"name", "description", "version"} {
		if strings.TrimSpace(str(p.card, f)) == "" {
			missing = append(missing, f)
		}
	}
	if _, ok := p.card["capabilities"].(map[string]any); !ok {
		missing = append(missing, "capabilities")
	}
	for _, f := range []string{"supportedInterfaces", "defaultInputModes", "defaultOutputModes", "skills"} {
		if a, _ := p.card[f].([]any); len(a) == 0 {
			missing = append(missing, f+" (at least one element)")
		}
	}
	skills, _ := p.card["skills"].([]any)
	for i, s := range skills {
		m, _ := s.(map[string]any)
		for _, f := range []string{"id", "name", "description"} {
			if str(m, f) == "" {
				missing = append(missing, fmt.Sprintf("skills[%d].%s", i, f))
			}
		}
		if tags, _ := m["tags"].([]any); len(tags) == 0 {
			missing = append(missing, fmt.Sprintf("skills[%d].tags (at least one element)", i))
		}
	}
	if len(missing) > 0 {
		return fail("missing or empty: %s", strings.Join(missing, ", ")).with(p.cardEx)
	}
	return pass("every REQUIRED field is present and set").with(p.cardEx)
}

// members03 are the members an A2A 0.3 card has and an A2A 1.0 card does
// not (wire/card's union card writes both).
var (
	members03       = []string{"protocolVersion", "url", "preferredTransport", "additionalInterfaces", "security", "supportsAuthenticatedExtendedCard"}
	schemeMembers03 = []string{"type", "scheme", "bearerFormat", "in", "name", "description", "flows", "openIdConnectUrl", "oauth2MetadataUrl"}
)

// only10 returns the card document without its A2A 0.3 members.
func only10(card map[string]any) []byte {
	c := maps.Clone(card)
	for _, k := range members03 {
		delete(c, k)
	}
	if caps, ok := c["capabilities"].(map[string]any); ok {
		caps = maps.Clone(caps)
		delete(caps, "stateTransitionHistory")
		c["capabilities"] = caps
	}
	if skills, ok := c["skills"].([]any); ok {
		out := make([]any, len(skills))
		for i, s := range skills {
			if m, ok := s.(map[string]any); ok {
				m = maps.Clone(m)
				delete(m, "security")
				out[i] = m
			} else {
				out[i] = s
			}
		}
		c["skills"] = out
	}
	if schemes, ok := c["securitySchemes"].(map[string]any); ok {
		out := map[string]any{}
		for name, s := range schemes {
			m, ok := s.(map[string]any)
			if !ok {
				out[name] = s
				continue
			}
			m = maps.Clone(m)
			for _, k := range schemeMembers03 {
				delete(m, k)
			}
			out[name] = m
		}
		c["securitySchemes"] = out
	}
	b, err := json.Marshal(c, json.Deterministic(true))
	if err != nil {
		return nil
	}
	return b
}

func checkCard10Schema(_ context.Context, p *Probe) Result {
	if r := need10Card(p); r != nil {
		return *r
	}
	var problems []string
	if err := schema.Validate10("AgentCard", only10(p.card)); err != nil {
		problems = append(problems, err.Error())
	}
	if p.cardDecodeErr != "" {
		problems = append(problems, "an A2A 1.0 decoder refuses it: "+p.cardDecodeErr)
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; ")).with(p.cardEx)
	}
	return pass("the card is a valid A2A 1.0.1 AgentCard").with(p.cardEx)
}
