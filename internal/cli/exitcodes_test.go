package cli

import (
	"net/http"
	"strings"
	"testing"
)

// TestAgentsExitCodes: the agents commands exit as the client commands
// do: a registration the server refuses as invalid (400) is a usage
// error (2), a refused token (401) an HTTP error (4), and the server's
// 401 says whether the token was missing or refused.
func TestAgentsExitCodes(t *testing.T) {
	cfg := writeConfig(t, "admin:\n  bearer_tokens:\n    ops: adm1n\npairs:\n  enabled: true\n")
	base := startServe(t, "--config", cfg)
	t.Setenv("A2ABRIDGE_ADMIN_TOKEN", "")

	// 400: the http kind without its url.
	_, errs, code := run(t, "", "agents", "add", "weather", "--kind", "http", "--server", base, "--token", "adm1n")
	if code != ExitUsage || !strings.Contains(errs, "HTTP 400") || !strings.Contains(errs, "url") {
		t.Fatalf("agents add without --url: exit %d %q, want %d naming url", code, errs, ExitUsage)
	}
	// 401 with a wrong token: exit 4, and the server says it refused it.
	_, errs, code = run(t, "", "agents", "list", "--server", base, "--token", "wrong")
	if code != ExitTransport || !strings.Contains(errs, "refused the credentials sent") || strings.Contains(errs, "requires") || !strings.Contains(errs, "hint: give the server's admin token") {
		t.Fatalf("agents list with a wrong token: exit %d %q, want %d saying it was refused", code, errs, ExitTransport)
	}
	_, errs, code = run(t, "", "agents", "rm", "nope", "--server", base, "--token", "wrong")
	if code != ExitTransport {
		t.Fatalf("agents rm with a wrong token: exit %d %q, want %d", code, errs, ExitTransport)
	}
	// No token at all: the server still says what it requires.
	for _, api := range []string{"/api/v1/agents", "/api/pairs"} {
		method := "GET"
		if api == "/api/pairs" {
			method = "POST"
		}
		code, body := adminCall(t, method, base+api, "", "")
		if code != http.StatusUnauthorized || !strings.Contains(body, "requires an admin bearer token") {
			t.Fatalf("%s %s without a token: %d %s", method, api, code, body)
		}
		code, body = adminCall(t, method, base+api, "wrong", "")
		if code != http.StatusUnauthorized || strings.Contains(body, "requires") || !strings.Contains(body, "refused the credentials sent") {
			t.Fatalf("%s %s with a wrong token: %d %s", method, api, code, body)
		}
	}
	// 404 for an unknown agent: an HTTP error, 4.
	if _, errs, code := run(t, "", "agents", "rm", "nope", "--server", base, "--token", "adm1n"); code != ExitTransport || !strings.Contains(errs, "HTTP 404") {
		t.Fatalf("agents rm of an unknown agent: exit %d %q", code, errs)
	}
}

// TestUnknownFlagSuggestion: a mistyped flag is a usage error that names
// the command's nearest flag (its own, or one it inherits), the same
// every time; a name near none gets no suggestion.
func TestUnknownFlagSuggestion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" for no suggestion
	}{
		{[]string{"get", "localhost:1", "t1", "--histroy", "3"}, "--history"},
		{[]string{"send", "localhost:1", "hi", "--push_url", "http://x"}, "--push-url"},
		{[]string{"send", "localhost:1", "hi", "--contxt", "c"}, "--context"},
		{[]string{"list", "localhost:1", "--page-siz", "3"}, "--page-size"},
		{[]string{"agents", "list", "--servr", "http://x"}, "--server"},
		{[]string{"serve", "--memroy"}, "--memory"},
		{[]string{"send", "localhost:1", "hi", "--hist", "3"}, "--history"},
		{[]string{"send", "localhost:1", "hi", "--xyzzy"}, ""},
	} {
		for range 2 {
			_, errs, code := run(t, "", tc.args...)
			if code != ExitUsage || !strings.Contains(errs, "unknown flag") {
				t.Fatalf("%v: exit %d %q, want %d", tc.args, code, errs, ExitUsage)
			}
			if tc.want == "" && strings.Contains(errs, "did you mean") {
				t.Fatalf("%v: %q suggests a flag", tc.args, errs)
			}
			if tc.want != "" && !strings.Contains(errs, "(did you mean "+tc.want+"?)") {
				t.Fatalf("%v: %q, want a suggestion of %s", tc.args, errs, tc.want)
			}
		}
	}
}
