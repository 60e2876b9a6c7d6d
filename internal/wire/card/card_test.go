package card

import (
	stdjson "encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/schematest"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

var update = flag.Bool("update", false, "rewrite testdata/union_card.json")

// unionCard is a card served at one URL for both versions.
func unionCard() *a2a.AgentCard {
	return &a2a.AgentCard{Name: "Recipe Agent", Description: "Finds recipes", Version: "1.2.0",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "https://agent.example.com/a2a", Transport: a2a.TransportJSONRPC, ProtocolVersion: "1.0"},
			{URL: "https://agent.example.com/a2a", Transport: a2a.TransportJSONRPC, ProtocolVersion: "0.3"},
			{URL: "https://agent.example.com/a2a/rest", Transport: a2a.TransportHTTPJSON, ProtocolVersion: "0.3"},
		},
		Provider: &a2a.AgentProvider{Organization: "Example Org", URL: "https://example.com"},
		Capabilities: a2a.AgentCapabilities{Streaming: true, PushNotifications: true, ExtendedAgentCard: true,
			Extensions: []a2a.AgentExtension{{URI: a2a.ExtensionEventLog, Params: map[string]any{"n": stdjson.Number("1")}}}},
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"},
			"key":    a2a.APIKeySecurityScheme{In: "header", Name: "X-API-Key", Description: "a key"},
			"oauth": a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{ClientCredentials: &a2a.OAuthFlow{TokenURL: "https://auth.example.com/token",
				Scopes: map[string]string{"read": "read things"}}}},
			"oidc": a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: "https://auth.example.com/.well-known/openid-configuration"},
			"mtls": a2a.MutualTLSSecurityScheme{},
		},
		Security:          []map[string][]string{{"bearer": {}}, {"oauth": {"read"}}},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "find", Name: "Find", Description: "Finds recipes", Tags: []string{"cooking"},
			Security: []map[string][]string{{"key": {}}}}},
		Signatures: []a2a.AgentCardSignature{{Protected: "p", Signature: "s"}},
	}
}

// Members that only one version has, by path ("*" is any key or index).
var (
	only03 = []string{"protocolVersion", "url", "preferredTransport", "additionalInterfaces", "security",
		"supportsAuthenticatedExtendedCard", "capabilities/stateTransitionHistory", "skills/*/security",
		"securitySchemes/*/type", "securitySchemes/*/scheme", "securitySchemes/*/bearerFormat", "securitySchemes/*/in",
		"securitySchemes/*/name", "securitySchemes/*/description", "securitySchemes/*/flows",
		"securitySchemes/*/openIdConnectUrl", "securitySchemes/*/oauth2MetadataUrl"}
	only10 = []string{"supportedInterfaces", "securityRequirements", "capabilities/extendedAgentCard", "skills/*/securityRequirements",
		"securitySchemes/*/apiKeySecurityScheme", "securitySchemes/*/httpAuthSecurityScheme", "securitySchemes/*/oauth2SecurityScheme",
		"securitySchemes/*/openIdConnectSecurityScheme", "securitySchemes/*/mtlsSecurityScheme"}
)

// without returns the generic JSON value of doc without the members at paths.
func without(t *testing.T, doc []byte, paths []string) any {
	t.Helper()
	var v any
	if err := stdjson.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		drop(v, strings.Split(p, "/"))
	}
	return v
}

func drop(v any, path []string) {
	switch x := v.(type) {
	case map[string]any:
		if len(path) == 1 {
			delete(x, path[0])
			return
		}
		if path[0] == "*" {
			for _, e := range x {
				drop(e, path[1:])
			}
		} else if e, ok := x[path[0]]; ok {
			drop(e, path[1:])
		}
	case []any:
		for _, e := range x {
			drop(e, path[1:])
		}
	}
}

func generic(t *testing.T, doc []byte) any {
	t.Helper()
	var v any
	if err := stdjson.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The union card is the 0.3 card plus the 1.0 card: without the 1.0
// members it is exactly the 0.3 card, without the 0.3 members exactly the
// 1.0 card; it is valid against both schemas.
func TestUnionCard(t *testing.T) {
	c := unionCard()
	b, err := MarshalUnion(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "union_card.json")
	if *update {
		_ = os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if want, err := os.ReadFile(golden); err != nil || string(want) != string(b)+"\n" {
		t.Errorf("union card differs from %s (-update rewrites it; err %v):\n%s", golden, err, b)
	}
	schematest.Validate(t, "AgentCard", b)

	c03 := *c
	c03.ProtocolVersion, c03.URL, c03.PreferredTransport = "0.3.0", "https://agent.example.com/a2a", a2a.TransportJSONRPC
	c03.AdditionalInterfaces = []a2a.AgentInterface{{URL: "https://agent.example.com/a2a/rest", Transport: a2a.TransportHTTPJSON}}
	c03.SupportsAuthenticatedExtendedCard = true
	b03, err := v03.MarshalAgentCard(&c03)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(generic(t, b03), without(t, b, only10)); diff != "" {
		t.Errorf("0.3 part (-0.3 card +union card):\n%s", diff)
	}
	b10, err := v10.MarshalAgentCard(c, v10.CardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(generic(t, b10), without(t, b, only03)); diff != "" {
		t.Errorf("1.0 part (-1.0 card +union card):\n%s", diff)
	}
	p10, _ := stdjson.Marshal(without(t, b, only03))
	schematest.Validate10(t, "AgentCard", p10)

	// Each version's decoder reads its part; Unmarshal reads both.
	if _, err := v03.UnmarshalAgentCard(b); err != nil {
		t.Errorf("v03 decoder: %v", err)
	}
	got10, err := v10.UnmarshalAgentCard(b)
	if err != nil {
		t.Fatal(err)
	}
	want10 := *c
	want10.SupportsAuthenticatedExtendedCard = true
	if diff := cmp.Diff(want10, got10, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("v10 decoder (-want +got):\n%s", diff)
	}
	got, version, err := Unmarshal(b)
	if err != nil || version != "union" {
		t.Fatalf("Unmarshal: %q, %v", version, err)
	}
	if diff := cmp.Diff(c03, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Unmarshal (-want +got):\n%s", diff)
	}

	arrays, err := MarshalUnion(c, Options{ScopeArrays: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(arrays), `"securityRequirements":[{"schemes":{"bearer":[]}},{"schemes":{"oauth":["read"]}}]`) {
		t.Errorf("scope arrays: %s", arrays)
	}
}

func TestUnionCardNeeds03Interface(t *testing.T) {
	c := unionCard()
	c.SupportedInterfaces = c.SupportedInterfaces[:1]
	if _, err := MarshalUnion(c, Options{}); err == nil {
		t.Error("a card without a 0.3 interface made a union card")
	}
	// A card with 0.3 fields only: supportedInterfaces come from them.
	c = &a2a.AgentCard{ProtocolVersion: "0.3.0", Name: "n", Description: "d", Version: "1", URL: "http://x/a2a",
		PreferredTransport: a2a.TransportJSONRPC, Skills: []a2a.AgentSkill{}}
	b, err := MarshalUnion(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"supportedInterfaces":[{"url":"http://x/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]`) {
		t.Errorf("%s", b)
	}
}

func TestUnmarshalEachVersion(t *testing.T) {
	c := unionCard()
	b10, _ := v10.MarshalAgentCard(c, v10.CardOptions{})
	got, version, err := Unmarshal(b10)
	if err != nil || version != "1.0" || got.URL != "" || len(got.SupportedInterfaces) != 3 {
		t.Errorf("1.0 card: %q %v %+v", version, err, got)
	}
	c03 := &a2a.AgentCard{ProtocolVersion: "0.3.0", Name: "n", Description: "d", Version: "1", URL: "http://x/a2a",
		PreferredTransport: a2a.TransportJSONRPC, SupportsAuthenticatedExtendedCard: true, Skills: []a2a.AgentSkill{}}
	b03, _ := v03.MarshalAgentCard(c03)
	got, version, err = Unmarshal(b03)
	if err != nil || version != "0.3" || !got.Capabilities.ExtendedAgentCard ||
		!cmp.Equal(got.SupportedInterfaces, []a2a.AgentInterface{{URL: "http://x/a2a", Transport: "JSONRPC", ProtocolVersion: "0.3"}}) {
		t.Errorf("0.3 card: %q %v %+v", version, err, got)
	}
	if _, _, err := Unmarshal([]byte(`{"name":"n"}`)); err == nil {
		t.Error("a card without url or supportedInterfaces decoded")
	}
}

func TestMerge(t *testing.T) {
	got, err := merge([]byte(`{"a":1,"o":{"x":1,"y":[1]},"l":[{"p":1},{"q":1}],"s":["a"],"n":[{"k":1}]}`),
		[]byte(`{"o":{"y":[2],"z":3},"b":2,"l":[{"r":1},{"q":2}],"s":["b"],"n":[{"k":2},{"k":3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":1,"o":{"x":1,"y":[1],"z":3},"l":[{"p":1,"r":1},{"q":1}],"s":["a"],"n":[{"k":1}],"b":2}`
	if string(got) != want {
		t.Errorf("merge = %s\nwant   %s", got, want)
	}
}

// a2a-go v2's union card (a2acompat/a2av0.NewStaticAgentCardProducer)
// writes security schemes in the 0.3 form only, with a nested copy under
// "http" that neither version defines; Unmarshal reads it.
func TestUnmarshalA2AGoUnionCard(t *testing.T) {
	doc := `{"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"description":"d","name":"go","version":"1",
	"skills":[{"description":"d","id":"s","name":"s","tags":["t"]}],
	"securitySchemes":{"bearer":{"type":"http","scheme":"Bearer","http":{"scheme":"Bearer"}}},
	"capabilities":{"streaming":true},
	"supportedInterfaces":[{"url":"http://x/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"http://x/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],
	"securityRequirements":[{"schemes":{"bearer":[]}}],
	"url":"http://x/a2a","protocolVersion":"0.3","preferredTransport":"JSONRPC","security":[{"bearer":[]}]}`
	c, version, err := Unmarshal([]byte(doc))
	if err != nil || version != "union" {
		t.Fatalf("%q, %v", version, err)
	}
	if c.SecuritySchemes["bearer"] != (a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}) || len(c.SupportedInterfaces) != 2 ||
		c.URL != "http://x/a2a" || !cmp.Equal(c.Security, []map[string][]string{{"bearer": {}}}) {
		t.Errorf("%+v", c)
	}
}
