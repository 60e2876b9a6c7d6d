package remote_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/remote"
)

// TestConfigYAML: the YAML keys of the kind, with durations as Go
// duration strings.
func TestConfigYAML(t *testing.T) {
	const doc = `
url: https://agents.example.com/weather
protocol: "1.0"
binding: rest
credentials:
  bearer_token: tok
  api_key: key
  api_key_header: X-Weather-Key
timeout: 30s
card_timeout: 2s
`
	var c remote.Config
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	want := remote.Config{URL: "https://agents.example.com/weather", Protocol: "1.0", Binding: "rest",
		Credentials: remote.Credentials{BearerToken: "tok", APIKey: "key", APIKeyHeader: "X-Weather-Key"},
		Timeout:     30 * time.Second, CardTimeout: 2 * time.Second}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("decoded config (-want +got):\n%s", d)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// TestValidate: each problem is reported with its key; several at once.
func TestValidate(t *testing.T) {
	ok := remote.Config{URL: "http://127.0.0.1:8080/a2a/echo"}
	for _, tc := range []struct {
		name string
		edit func(*remote.Config)
		want []string // fragments, "" for valid
	}{
		{"minimal", func(*remote.Config) {}, nil},
		{"card URL, https, forced choice", func(c *remote.Config) {
			c.URL, c.Protocol, c.Binding = "https://x.example/.well-known/agent-card.json", "0.3", "JSONRPC"
		}, nil},
		{"no url", func(c *remote.Config) { c.URL = "" }, []string{"url: required"}},
		{"blank url", func(c *remote.Config) { c.URL = "  " }, []string{"url: required"}},
		{"relative url", func(c *remote.Config) { c.URL = "/a2a/echo" }, []string{"url: scheme"}},
		{"ftp", func(c *remote.Config) { c.URL = "ftp://x/y" }, []string{"url: scheme \"ftp\""}},
		{"no host", func(c *remote.Config) { c.URL = "http:///x" }, []string{"url: no host"}},
		{"password", func(c *remote.Config) { c.URL = "http://u:hunter2@x/" }, []string{"url: must not hold user:password"}},
		{"bad url", func(c *remote.Config) { c.URL = "http://x/%zz" }, []string{"url: not a URL"}},
		{"protocol", func(c *remote.Config) { c.Protocol = "2.0" }, []string{`protocol: "2.0"`}},
		{"binding", func(c *remote.Config) { c.Binding = "soap" }, []string{`binding: "soap"`}},
		{"grpc over 0.3", func(c *remote.Config) { c.Binding, c.Protocol = "grpc", "0.3" }, []string{"binding: grpc with protocol 0.3"}},
		{"timeouts", func(c *remote.Config) { c.Timeout, c.CardTimeout = -1, -time.Second },
			[]string{"timeout: must be > 0", "card_timeout: must be > 0"}},
		{"header name", func(c *remote.Config) { c.Credentials = remote.Credentials{APIKey: "k", APIKeyHeader: "X Key"} },
			[]string{"credentials.api_key_header"}},
		{"header without key", func(c *remote.Config) { c.Credentials.APIKeyHeader = "X-Key" },
			[]string{"credentials.api_key_header: set without api_key"}},
		{"token with newline", func(c *remote.Config) { c.Credentials.BearerToken = "abc\r\nX-Evil: 1" },
			[]string{"credentials.bearer_token"}},
		{"key with space at the end", func(c *remote.Config) { c.Credentials.APIKey = "abc " }, []string{"credentials.api_key"}},
		{"everything", func(c *remote.Config) { *c = remote.Config{Protocol: "x", Binding: "y", Timeout: -1} },
			[]string{"url: required", "protocol:", "binding:", "timeout:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if _, err := remote.New(c); err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: nil, want %q", tc.want)
			}
			for _, f := range tc.want {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("Validate: %q lacks %q", err, f)
				}
			}
			for _, secret := range []string{"hunter2", "abc"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("Validate: %q shows a secret", err)
				}
			}
			if _, nerr := remote.New(c); nerr == nil || nerr.Error() != err.Error() {
				t.Errorf("New: %v, want Validate's error", nerr)
			}
		})
	}
}

// TestDeriveCard: what is kept and what is dropped, and no sharing.
func TestDeriveCard(t *testing.T) {
	in := a2a.AgentCard{
		ProtocolVersion: "1.0", Name: "n", Description: "d", URL: "http://remote/rpc", PreferredTransport: "JSONRPC",
		AdditionalInterfaces: []a2a.AgentInterface{{URL: "http://remote/rest", Transport: "HTTP+JSON"}},
		IconURL:              "http://remote/icon.png", Provider: &a2a.AgentProvider{Organization: "o", URL: "http://o"},
		Version: "7", DocumentationURL: "http://remote/docs",
		Capabilities: a2a.AgentCapabilities{Streaming: true, PushNotifications: true, StateTransitionHistory: true,
			ExtendedAgentCard: true, Extensions: []a2a.AgentExtension{{URI: "urn:x"}}},
		SecuritySchemes:    map[string]a2a.SecurityScheme{"b": a2a.HTTPAuthSecurityScheme{Scheme: "bearer"}},
		Security:           []map[string][]string{{"b": {}}},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"application/json"},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "S", Description: "sd", Tags: []string{"t"}, Examples: []string{"e"},
			InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain"}, Security: []map[string][]string{{"b": {}}}}},
		SupportsAuthenticatedExtendedCard: true,
		Signatures:                        []a2a.AgentCardSignature{{Protected: "p", Signature: "s"}},
		SupportedInterfaces:               []a2a.AgentInterface{{URL: "http://remote/rpc", Transport: "JSONRPC", ProtocolVersion: "1.0"}},
	}
	want := a2a.AgentCard{
		Name: "n", Description: "d", IconURL: "http://remote/icon.png", Provider: &a2a.AgentProvider{Organization: "o", URL: "http://o"},
		Version: "7", DocumentationURL: "http://remote/docs", Capabilities: a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"application/json"},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "S", Description: "sd", Tags: []string{"t"}, Examples: []string{"e"},
			InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain"}}},
	}
	got := remote.DeriveCard(in)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("DeriveCard (-want +got):\n%s", d)
	}
	got.Skills[0].Tags[0] = "changed"
	got.Provider.Organization = "changed"
	got.DefaultInputModes[0] = "changed"
	if in.Skills[0].Tags[0] != "t" || in.Provider.Organization != "o" || in.DefaultInputModes[0] != "text/plain" {
		t.Error("the derived card shares memory with the remote card")
	}
}

// TestRefOf: the metadata shape, and what is not a reference.
func TestRefOf(t *testing.T) {
	for _, tc := range []struct {
		md   map[string]any
		want remote.Ref
		ok   bool
	}{
		{nil, remote.Ref{}, false},
		{map[string]any{remote.MetadataKey: "x"}, remote.Ref{}, false},
		{map[string]any{remote.MetadataKey: map[string]any{"contextId": "c"}}, remote.Ref{}, false},
		{map[string]any{remote.MetadataKey: map[string]any{"taskId": ""}}, remote.Ref{}, false},
		{map[string]any{remote.MetadataKey: map[string]any{"taskId": 5}}, remote.Ref{}, false},
		{map[string]any{remote.MetadataKey: map[string]any{"taskId": "t"}}, remote.Ref{TaskID: "t"}, true},
		{map[string]any{remote.MetadataKey: map[string]any{"taskId": "t", "contextId": "c", "url": "u", "other": 1}},
			remote.Ref{TaskID: "t", ContextID: "c", URL: "u"}, true},
		{map[string]any{remote.MetadataKey: map[string]any{"taskId": "t", "contextId": 7}}, remote.Ref{TaskID: "t"}, true},
	} {
		got, ok := remote.RefOf(a2a.Task{Metadata: tc.md})
		if got != tc.want || ok != tc.ok {
			t.Errorf("RefOf(%v) = %+v, %v; want %+v, %v", tc.md, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSkill(t *testing.T) {
	ag, err := remote.New(remote.Config{URL: "https://agents.example.com/w"})
	if err != nil {
		t.Fatal(err)
	}
	s := ag.Skill()
	if s.ID == "" || s.Name == "" || !strings.Contains(s.Description, "https://agents.example.com/w") || len(s.Tags) == 0 {
		t.Errorf("Skill() = %+v", s)
	}
}

// TestCredentialsPrinted: printing a Config shows no secret.
func TestCredentialsPrinted(t *testing.T) {
	c := remote.Config{URL: "http://x", Credentials: remote.Credentials{BearerToken: "tok-SECRET", APIKey: "key-SECRET"}}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(f, c)
		if strings.Contains(out, "SECRET") || !strings.Contains(out, "bearer_token: set") {
			t.Errorf("%s: %s", f, out)
		}
	}
}
