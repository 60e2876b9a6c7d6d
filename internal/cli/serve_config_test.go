package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/testutil"
)

// startListener runs `a2abridge push listen` in-process, waits for its
// banner (on stderr) and returns its stdout.
func startListener(t *testing.T, args ...string) *testutil.Buffer {
	t.Helper()
	p := runInProcess(t, append([]string{"push", "listen", "--human"}, args...)...)
	waitLines(t, p.Stderr, "listening on", 1, 10*time.Second)
	return p.Stdout
}

// TestSecureConfigEndToEnd runs `serve --config examples/secure.yaml`:
// unauthenticated calls are refused, the token from the environment works,
// the extended card is served, and push notifications reach a local
// `push listen` that verifies their signatures against the server's JWKS.
// Then notifications owed while the webhook was down survive a kill -9 of
// the server and are delivered after restart.
func TestSecureConfigEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Setenv("A2ABRIDGE_TOKEN", "e2e-secret")
	cfg, err := filepath.Abs("../../examples/secure.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	base := "http://" + addr
	hookAddr, downAddr := freeAddr(t), freeAddr(t)
	// The example allows webhooks on 127.0.0.1:9000 only; the test's ports
	// replace that list.
	child := startChild(t, "--config", cfg, "--data", dir, "--addr", addr, "--push-allow", hookAddr, "--push-allow", downAddr)

	if _, _, code := run(t, "", "get", base, "x"); code != ExitTransport {
		t.Fatalf("unauthenticated get: exit %d, want %d (HTTP 401)", code, ExitTransport)
	}
	out, errs, code := run(t, "", "extended-card", base, "--token", "e2e-secret", "--json")
	if code != ExitOK || !strings.Contains(out, "authenticated callers only") {
		t.Fatalf("extended card: %d %s %s", code, out, errs)
	}

	hookURL := "http://" + hookAddr + "/hook"
	listener := startListener(t, "--addr", hookAddr, "--server", base, "--push-token", "tok")
	out, errs, code = run(t, "", "send", base, "hello", "--token", "e2e-secret", "--push-url", hookURL, "--push-token", "tok", "--json")
	if code != ExitOK {
		t.Fatalf("send with push: %d %s %s", code, out, errs)
	}
	got := waitLines(t, listener, "verified", 3, 15*time.Second)
	if !strings.Contains(got[0], "submitted") || !strings.Contains(got[2], "completed") {
		t.Fatalf("notifications: %q", got)
	}

	// Another loopback port is refused.
	if _, errs, code := run(t, "", "send", base, "x", "--token", "e2e-secret", "--push-url", "http://"+freeAddr(t)+"/hook"); code != ExitA2AError || !strings.Contains(errs, "not allowed") {
		t.Fatalf("webhook on a port not allowlisted: %d %s", code, errs)
	}
	// A webhook that is down: the notifications stay owed across kill -9.
	out, _, code = run(t, "", "send", base+"/a2a/slow", "30", "--no-blocking", "--token", "e2e-secret", "--push-url", "http://"+downAddr+"/hook", "--json")
	if code != ExitOK {
		t.Fatalf("send to slow: %d %s", code, out)
	}
	time.Sleep(300 * time.Millisecond) // a first failed delivery attempt
	child.Kill()
	late := startListener(t, "--addr", downAddr, "--server", base)
	startChild(t, "--config", cfg, "--data", dir, "--addr", addr, "--push-allow", hookAddr, "--push-allow", downAddr)
	// Everything owed arrives, in order, verified; the last is the failed
	// status the restarted server gave the interrupted task.
	got = waitLines(t, late, "verified", 3, 30*time.Second)
	if !strings.Contains(got[0], "submitted") {
		t.Fatalf("owed notifications after restart: %q", got)
	}
	if !strings.Contains(got[len(got)-1], "failed") {
		waitLines(t, late, "failed", 1, 30*time.Second)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	cases := []struct{ body, want string }{
		{"auth:\n  bearer_tokens:\n    me: ${A2ABRIDGE_SURELY_UNSET_VAR}\n", "A2ABRIDGE_SURELY_UNSET_VAR"},
		{"adress: 1\n", "adress"},
		{"agents:\n  nope: {}\n", "agents.nope.kind: required (one of "},
		{"agents:\n  mine:\n    kind: ech0\n", `agents.mine.kind: unknown kind "ech0"`},
		{"agents:\n  mine:\n    kind: echo\n    url: http://x\n", `.yaml:4: unknown key "url" in agents.mine`},
		{"agents:\n  bad/name:\n    kind: echo\n", "agents.bad/name: name"},
		{"builtins: false\n", "no agents"},
		{"agents:\n  weather:\n    kind: http\n", "agents.weather.url: required"},
		{"agents:\n  weather:\n    kind: http\n    url: http://x\n    timeout_msec: 5\n", `.yaml:5: unknown key "timeout_msec" in agents.weather: did you mean "timeout_ms"?`},
		{"agents:\n  m:\n    kind: openai\n    base_url: http://x/v1\n    model: m\n    api_key: ${A2ABRIDGE_SURELY_UNSET_KEY}\n", "agents.m.api_key: environment variable A2ABRIDGE_SURELY_UNSET_KEY is not set (line 6)"},
		// A value of the wrong type for a kind's key: the key is named, the
		// (expanded, maybe secret) value is not shown.
		{"agents:\n  m:\n    kind: openai\n    base_url: http://x/v1\n    model: m\n    max_tokens: ${A2ABRIDGE_TEST_SECRET}\n", "agents.m.max_tokens: want a whole number (in range) (line 6)"},
		{"agents:\n  w:\n    kind: http\n    url: http://x\n    timeout_ms: soon\n", "agents.w.timeout_ms: want a whole number"},
		{"agents:\n  a:\n    kind: a2a\n    url: http://x\n    timeout: 30\n", "agents.a.timeout: want a duration such as 30s"},
		{"agents:\n  r:\n    kind: a2a\n    url: ftp://x\n", "agents.r.url:"},
		{"agents:\n  x:\n    kind: exec\n    command: []\n", "agents.x.command:"},
		{"agents:\n  w:\n    kind: http\n    url: http://x\n    credentials:\n      bearer: t\n", `unknown key "bearer" in agents.w.credentials`},
		{"default: chat2\n", `default "chat2": no such agent (have echo, chat, slow)`},
		{"agents:\n  echo:\n    extended_card: {description: x}\n", "extended_card needs authentication"},
		{"auth: {}\n", "no scheme"},
		{"push:\n  give_up_after: soon\n", "not a duration"},
		{"auth:\n#  bearer_tokens: {me: x}\n", "block is empty"},
		{"agents:\n  echo:\n    auth:\n", "block is empty"},
		{"auth:\n  none: true\n  bearer_tokens: {me: x}\n", "choose one"},
		{"agents:\n  echo:\n    card_requires_auth: true\n", "card_requires_auth needs authentication"},
		// An unknown key is named with its line (as written, comments
		// included) whatever the file references; its value is not shown.
		{"memory: ${A2ABRIDGE_TEST_BOOL}\nauth: {bearer_tokens: {me: x}}\n# a comment\nadress: ${A2ABRIDGE_TEST_SECRET}\n", `.yaml:4: unknown key "adress"`},
		// A value of the wrong type, in a file that references the
		// environment: the decoder's message would quote the value.
		{"memory: ${A2ABRIDGE_TEST_SECRET}\n", "details withheld"},
		{"push:\n  enabeld: true\n", `.yaml:2: unknown key "enabeld" in push: did you mean "enabled"?`},
		{"\n# typo below\npusj:\n  enabled: true\n", `.yaml:3: unknown key "pusj": did you mean "push"?`},
		{"agents:\n  echo:\n    extended_card:\n      skills:\n        - id: x\n          nmae: y\n", `.yaml:6: unknown key "nmae" in agents.echo.extended_card.skills[0]: did you mean "name"?`},
		{"auth:\n  jwt:\n    jwks: https://x\n", `unknown key "jwks" in auth.jwt (valid keys: audience, clock_skew, issuer, jwks_url)`},
		{"push:\n  give_up_after: soon\n# pad\n", "line 2:"},
	}
	t.Setenv("A2ABRIDGE_TEST_BOOL", "true")
	t.Setenv("A2ABRIDGE_TEST_SECRET", "hunter2")
	for i, c := range cases {
		_, errs, code := run(t, "", "serve", "--memory", "--addr", "127.0.0.1:0", "--config", write(string(rune('a'+i))+".yaml", c.body))
		if code != ExitUsage || !strings.Contains(errs, c.want) || strings.Contains(errs, "hunter2") {
			t.Errorf("%q: exit %d, stderr %q (want %q)", c.body, code, errs, c.want)
		}
	}
}
