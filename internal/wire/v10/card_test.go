package v10

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/schematest"
)

func TestGoldenAgentCard(t *testing.T) {
	c := sampleCard()
	b, err := MarshalAgentCard(c, CardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate10(t, "AgentCard", b)
	golden(t, "agent_card", b)
	got, err := UnmarshalAgentCard(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*c, got, eventOpts); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	// The a2a-go v2.4.0 form of the scopes reads back the same.
	arrays, err := MarshalAgentCard(c, CardOptions{ScopeArrays: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "agent_card_scope_arrays", arrays)
	if !strings.Contains(string(arrays), `"securityRequirements":[{"schemes":{"bearer":[]}},{"schemes":{"key":[],"oauth":["read","write"]}}]`) {
		t.Errorf("scope arrays not written: %s", arrays)
	}
	got, err = UnmarshalAgentCard(arrays)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*c, got, eventOpts); diff != "" {
		t.Errorf("scope arrays round trip (-want +got):\n%s", diff)
	}
}

// A card with only A2A 0.3 fields gets supportedInterfaces from them, as
// a2a-go v2's compatibility parser reads such a card.
func TestCardDerivesInterfaces(t *testing.T) {
	c := &a2a.AgentCard{ProtocolVersion: "0.3.0", Name: "n", Description: "d", Version: "1", URL: "http://x/a2a",
		PreferredTransport: a2a.TransportJSONRPC, AdditionalInterfaces: []a2a.AgentInterface{
			{URL: "http://x/a2a", Transport: a2a.TransportJSONRPC}, {URL: "http://x/rest", Transport: a2a.TransportHTTPJSON}},
		SupportsAuthenticatedExtendedCard: true, Skills: []a2a.AgentSkill{}}
	b, err := MarshalAgentCard(c, CardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate10(t, "AgentCard", b)
	golden(t, "agent_card_from_03_fields", b)
	got, err := UnmarshalAgentCard(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []a2a.AgentInterface{{URL: "http://x/a2a", Transport: "JSONRPC", ProtocolVersion: "0.3"},
		{URL: "http://x/rest", Transport: "HTTP+JSON", ProtocolVersion: "0.3"}}
	if diff := cmp.Diff(want, got.SupportedInterfaces); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}
	if !got.Capabilities.ExtendedAgentCard || !got.SupportsAuthenticatedExtendedCard {
		t.Errorf("extendedAgentCard not derived: %s", b)
	}
	for in, want := range map[string]string{"": "0.3", "0.3.0": "0.3", "1.0": "1.0", "1.0.1": "1.0", "2": "2"} {
		if got := majorMinor(in); got != want {
			t.Errorf("majorMinor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnmarshalAgentCardLiberal(t *testing.T) {
	// snake_case names, a deviceCode flow, pkceRequired, an empty StringList
	// object, 0.3 members next to 1.0 ones, an unknown member.
	doc := `{"name":"n","description":"d","version":"1","protocolVersion":"0.3.0","url":"http://x",
	"supported_interfaces":[{"url":"http://x","protocol_binding":"JSONRPC","protocol_version":"1.0"}],
	"capabilities":{"streaming":true,"extended_agent_card":true,"stateTransitionHistory":false},
	"security_schemes":{"o":{"type":"oauth2","oauth2SecurityScheme":{"flows":{"authorizationCode":{"authorizationUrl":"a","tokenUrl":"t","scopes":{"s":"d"},"pkceRequired":true}}}},
	   "dev":{"oauth2SecurityScheme":{"flows":{"deviceCode":{"deviceAuthorizationUrl":"x","tokenUrl":"t","scopes":{}}}}}},
	"security_requirements":[{"schemes":{"o":{}}},{"schemes":{"o":{"list":["s"]},"dev":["a"]}}],
	"default_input_modes":["text/plain"],"defaultOutputModes":[],"skills":[{"id":"s","name":"s","description":"d","tags":[],"security_requirements":[{"schemes":{"o":null}}]}],
	"future":{"x":1}}`
	c, err := UnmarshalAgentCard([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := a2a.AgentCard{Name: "n", Description: "d", Version: "1",
		SupportedInterfaces: []a2a.AgentInterface{{URL: "http://x", Transport: "JSONRPC", ProtocolVersion: "1.0"}},
		Capabilities:        a2a.AgentCapabilities{Streaming: true, ExtendedAgentCard: true}, SupportsAuthenticatedExtendedCard: true,
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"o":   a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{AuthorizationCode: &a2a.OAuthFlow{AuthorizationURL: "a", TokenURL: "t", Scopes: map[string]string{"s": "d"}}}},
			"dev": a2a.OAuth2SecurityScheme{},
		},
		Security:          []map[string][]string{{"o": {}}, {"o": {"s"}, "dev": {"a"}}},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "s", Description: "d", Tags: []string{}, Security: []map[string][]string{{"o": {}}}}},
	}
	if diff := cmp.Diff(want, c, eventOpts); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestUnmarshalAgentCardErrors(t *testing.T) {
	base := `"name":"n","version":"1","supportedInterfaces":[{"url":"http://x","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]`
	for _, tt := range []struct{ doc, field, reason string }{
		{`{"name":"n","version":"1","url":"http://x","protocolVersion":"0.3.0"}`, "/supportedInterfaces", "required"},
		{`{"version":"1","supportedInterfaces":[{"url":"u"}]}`, "/name", "required"},
		{`{"name":"n","supportedInterfaces":[{"url":"u"}]}`, "/version", "required"},
		{`{"name":"n","version":"1","supportedInterfaces":[{"protocolBinding":"JSONRPC"}]}`, "/supportedInterfaces/0/url", "required"},
		{`{` + base + `,"securitySchemes":{"b":{"type":"http","scheme":"bearer"}}}`, "/securitySchemes/b", "none of"},
		{`{` + base + `,"securitySchemes":{"b":{"httpAuthSecurityScheme":{"scheme":"b"},"mtlsSecurityScheme":{}}}}`, "/securitySchemes/b", "both"},
		{`{` + base + `,"securityRequirements":[{"schemes":{"b":{"list":"x"}}}]}`, "/securityRequirements/0/schemes/b/list", "want array"},
		{`{` + base + `,"capabilities":{"streaming":"yes"}}`, "/capabilities/streaming", "want boolean"},
		{`{` + base + `,"skills":[{"id":"s","tags":"t"}]}`, "/skills/0/tags", "want array"},
		{`{` + base + `,"skills":[null]}`, "/skills/0", "want object"},
		{`[]`, "", "want object"},
	} {
		_, err := UnmarshalAgentCard([]byte(tt.doc))
		checkInvalid(t, tt.doc, err, tt.field, tt.reason)
	}
}

// FuzzDecodeAgentCard: decoding never panics; errors are -32602 naming a
// field; a decoded card re-encodes to a schema-valid card that decodes to
// the same value.
func FuzzDecodeAgentCard(f *testing.F) {
	b, _ := MarshalAgentCard(sampleCard(), CardOptions{})
	f.Add(b)
	b, _ = MarshalAgentCard(sampleCard(), CardOptions{ScopeArrays: true})
	f.Add(b)
	f.Add([]byte(`{"name":"n","version":"1","supported_interfaces":[{"url":"u"}],"securitySchemes":{"k":{"apiKeySecurityScheme":{"location":"header","name":"X"}}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := UnmarshalAgentCard(raw)
		if err != nil {
			requireInvalidParams(t, err)
			return
		}
		b, err := MarshalAgentCard(&c, CardOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := schematest.Check10("AgentCard", b); err != nil {
			t.Fatalf("re-encoded card invalid: %v\n%s", err, b)
		}
		c2, err := UnmarshalAgentCard(b)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, b)
		}
		// An OAuth scheme keeps one flow, and a flow only its own URLs.
		b2, err := MarshalAgentCard(&c2, CardOptions{})
		if err != nil || string(b) != string(b2) {
			t.Fatalf("second encoding differs:\n%s\n%s", b, b2)
		}
	})
}
