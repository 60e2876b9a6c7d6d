package card

import (
	stdjson "encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/cardsig"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// fullCard sets every A2A 1.0 field of a2a.AgentCard (each oneof member
// in some scheme), with no empty value, which canonicalization would drop.
func fullCard() *a2a.AgentCard {
	flow := func(auth, token string) *a2a.OAuthFlow {
		return &a2a.OAuthFlow{AuthorizationURL: auth, TokenURL: token, RefreshURL: "https://auth.example/refresh", Scopes: map[string]string{"read": "read things"}}
	}
	return &a2a.AgentCard{Name: "n", Description: "d", Version: "1", SupportsAuthenticatedExtendedCard: true, IconURL: "https://a.example/icon.png", DocumentationURL: "https://a.example/doc",
		SupportedInterfaces: []a2a.AgentInterface{{URL: "https://a.example/rpc", Transport: a2a.TransportJSONRPC, ProtocolVersion: "1.0", Tenant: "t"}},
		Provider:            &a2a.AgentProvider{Organization: "o", URL: "https://example.com"},
		Capabilities: a2a.AgentCapabilities{Streaming: true, PushNotifications: true, ExtendedAgentCard: true,
			Extensions: []a2a.AgentExtension{{URI: "urn:x", Description: "x", Required: true, Params: map[string]any{"n": stdjson.Number("1")}}}},
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"bearer": a2a.HTTPAuthSecurityScheme{Description: "b", Scheme: "Bearer", BearerFormat: "JWT"},
			"key":    a2a.APIKeySecurityScheme{Description: "k", In: "header", Name: "X-API-Key"},
			"code":   a2a.OAuth2SecurityScheme{Description: "c", OAuth2MetadataURL: "https://auth.example/meta", Flows: a2a.OAuthFlows{AuthorizationCode: flow("https://auth.example/a", "https://auth.example/t")}},
			"cc":     a2a.OAuth2SecurityScheme{Description: "c", Flows: a2a.OAuthFlows{ClientCredentials: flow("", "https://auth.example/t")}},
			"imp":    a2a.OAuth2SecurityScheme{Description: "c", Flows: a2a.OAuthFlows{Implicit: flow("https://auth.example/a", "")}},
			"pw":     a2a.OAuth2SecurityScheme{Description: "c", Flows: a2a.OAuthFlows{Password: flow("", "https://auth.example/t")}},
			"oidc":   a2a.OpenIDConnectSecurityScheme{Description: "o", OpenIDConnectURL: "https://auth.example/.well-known/openid-configuration"},
			"mtls":   a2a.MutualTLSSecurityScheme{Description: "m"},
		},
		Security:          []map[string][]string{{"code": {"read"}}},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "S", Description: "d", Tags: []string{"t"}, Examples: []string{"e"},
			InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain"}, Security: []map[string][]string{{"key": {"k"}}}}},
	}
}

// Fields of a2a.AgentCard that A2A 1.0 does not have (the 0.3 members)
// or that the signature excludes.
var notSigned = []string{"AgentCard.ProtocolVersion", "AgentCard.URL", "AgentCard.PreferredTransport",
	"AgentCard.AdditionalInterfaces", "AgentCard.Signatures", "AgentCapabilities.StateTransitionHistory"}

// TestSignedCoversDecoded: what the signature covers (cardsig's schema)
// and what the A2A 1.0 decoder reads cannot drift apart. fullCard sets
// every field of a2a.AgentCard but the 0.3 ones (checked by reflection,
// so a new field fails here until set), and decoding its canonical form
// gives the same card as decoding it as served.
func TestSignedCoversDecoded(t *testing.T) {
	c := fullCard()
	if unset := unsetFields(reflect.ValueOf(*c)); len(unset) > 0 {
		t.Fatalf("fullCard leaves unset: %s", strings.Join(unset, ", "))
	}
	doc, err := v10.MarshalAgentCard(c, v10.CardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := cardsig.Canonicalize(doc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := v10.UnmarshalAgentCard(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalSigned(doc, payload)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("decoded from the signed content (-as served +signed):\n%s", d)
	}
}

// unsetFields lists the struct fields (Type.Field) reachable from v that
// are zero everywhere, but notSigned.
func unsetFields(v reflect.Value) []string {
	all, set := map[string]bool{}, map[string]bool{}
	walk(v, all, set)
	var out []string
	for f := range all {
		if !set[f] && !slices.Contains(notSigned, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

func walk(v reflect.Value, all, set map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), all, set)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walk(v.Index(i), all, set)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			walk(v.MapIndex(k), all, set)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			name := v.Type().Name() + "." + v.Type().Field(i).Name
			all[name] = true
			if !v.Field(i).IsZero() {
				set[name] = true
			}
			walk(v.Field(i), all, set)
		}
	}
}

// TestUnmarshalSigned: the card built from signed content has no A2A 0.3
// member, and a card whose schemes are not all in the A2A 1.0 form is
// refused.
func TestUnmarshalSigned(t *testing.T) {
	doc, err := MarshalUnion(unionCard(), Options{ScopeArrays: true})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := cardsig.Canonicalize(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalSigned(doc, payload)
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != "" || got.ProtocolVersion != "" || got.PreferredTransport != "" || len(got.AdditionalInterfaces) != 0 {
		t.Errorf("0.3 members read: %+v", got)
	}
	for _, req := range append(slices.Clone(got.Security), got.Skills[0].Security...) {
		for name, scopes := range req {
			if len(scopes) > 0 {
				t.Errorf("scopes of %s read from bare arrays: %v", name, scopes)
			}
		}
	}
	if len(got.Signatures) != 1 || got.Signatures[0].Protected != "p" {
		t.Errorf("Signatures = %+v, want the document's", got.Signatures)
	}
	flat := []byte(strings.Replace(string(doc), `"securitySchemes":{`, `"securitySchemes":{"evil":{"type":"apiKey","in":"query","name":"k"},`, 1))
	if _, err := UnmarshalSigned(flat, payload); err == nil || !strings.Contains(err.Error(), "not a valid A2A 1.0 AgentCard") || !strings.Contains(err.Error(), "none of apiKeySecurityScheme") {
		t.Errorf("wrapper-less scheme: err = %v", err)
	}
	if _, err := UnmarshalSigned(doc, []byte(`{"name":"n"}`)); err == nil || !strings.Contains(err.Error(), "signed content") {
		t.Errorf("signed content without supportedInterfaces: err = %v", err)
	}
}
