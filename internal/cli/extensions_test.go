package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// An agents entry declares extensions (uri, description, required,
// params) in its card; a required one is enforced on messages (-32008),
// and send/stream --extension activate it.
func TestServeConfigExtensions(t *testing.T) {
	const ext = "https://example.com/ext/signed/v1"
	base := startServe(t, "--config", writeConfig(t, fmt.Sprintf(`agents:
  signed:
    kind: echo
    extensions:
      - uri: %s
        description: Messages are signed.
        required: true
        params: {alg: ES256, keys: [1, 2]}
      - uri: https://example.com/ext/citations/v1
`, ext)))
	var card struct {
		Capabilities struct {
			Extensions []struct {
				URI         string         `json:"uri"`
				Description string         `json:"description"`
				Required    bool           `json:"required"`
				Params      map[string]any `json:"params"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	if code := getJSON(t, base+"/a2a/signed/.well-known/agent-card.json", &card); code != http.StatusOK {
		t.Fatalf("card: %d", code)
	}
	x := card.Capabilities.Extensions
	if len(x) != 3 || x[0].URI != ext || !x[0].Required || x[0].Description != "Messages are signed." || x[0].Params["alg"] != "ES256" ||
		x[1].URI != "https://example.com/ext/citations/v1" || x[1].Required || x[2].URI != "urn:a2abridge:ext:event-log:v1" || x[2].Required {
		t.Fatalf("card extensions: %+v", x)
	}
	for _, cmd := range []string{"send", "stream"} {
		for _, proto := range []string{"0.3", "1.0"} {
			_, errs, code := run(t, "", cmd, base+"/a2a/signed", "hi", "--protocol", proto)
			if code != ExitA2AError || !strings.Contains(errs, "-32008") || !strings.Contains(errs, ext) {
				t.Fatalf("%s %s without --extension: exit %d, %s", cmd, proto, code, errs)
			}
			out, errs, code := run(t, "", cmd, base+"/a2a/signed", "hi", "--protocol", proto, "--extension", ext, "--json")
			if code != ExitOK || !strings.Contains(strings.ToLower(out), "completed") {
				t.Fatalf("%s %s --extension: exit %d, %s %s", cmd, proto, code, out, errs)
			}
		}
	}
	// The built-in agents require nothing.
	if _, errs, code := run(t, "", "send", base+"/a2a/echo", "hi"); code != ExitOK {
		t.Fatalf("echo: exit %d %s", code, errs)
	}
}

// Bad extensions entries are usage errors naming the key.
func TestServeConfigExtensionErrors(t *testing.T) {
	const entry = "agents:\n  a:\n    kind: echo\n    extensions: "
	wantServeUsageErrors(t, []serveUsage{
		{[]string{"--config", entry + "[{description: x}]\n"}, "agents.a.extensions[0].uri: required"},
		{[]string{"--config", entry + "[{uri: not a uri}]\n"}, `agents.a.extensions[0].uri: "not a uri" is not an absolute URI`},
		{[]string{"--config", entry + "[{uri: 'https://e.com/a,https://e.com/b'}]\n"}, "agents.a.extensions[0].uri: \"https://e.com/a,https://e.com/b\" is not an absolute URI"},
		{[]string{"--config", entry + "[{uri: relative/path}]\n"}, "is not an absolute URI"},
		{[]string{"--config", entry + "[{uri: 'https://e.com/x'}, {uri: 'https://e.com/x'}]\n"}, "agents.a.extensions[1].uri: https://e.com/x is declared twice (also extensions[0])"},
		{[]string{"--config", entry + "[{uri: 'urn:a2abridge:ext:event-log:v1', required: true}]\n"}, "agents.a.extensions[0].uri: urn:a2abridge:ext:event-log:v1 is a2abridge's own extension"},
		{[]string{"--config", entry + "[{uri: 'https://e.com/x', requird: true}]\n"}, `did you mean "required"?`},
		{[]string{"--config", entry + "[{uri: 'https://e.com/x', params: [1]}]\n"}, "agents.a.extensions[0].params: want a mapping"},
	})
}
