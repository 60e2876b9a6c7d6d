package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/gateway"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// endAgent ends each task in a fixed state.
type endAgent struct{ state a2a.TaskState }

func (a endAgent) Execute(ctx context.Context, _ *server.Request, t *server.TaskUpdater) error {
	if a.state == a2a.TaskStateFailed {
		return t.Fail(ctx, "it went wrong")
	}
	return t.SetStatus(ctx, a.state, t.TextMessage("ended "+a.state.String()))
}

// fakeHosts resolves host names from a map (lowercase names; a name not
// there does not exist), without DNS.
type fakeHosts map[string][]netip.Addr

func (f fakeHosts) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[strings.ToLower(host)]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// stateHost serves agents failed, rejected, canceled and chat, with bearer
// authentication (token "tok") when authed, and push notifications with
// webhooks limited to allow when push is set, checked as a2abridge serve
// does (hooks.example resolves to 10.0.0.1, nothing else resolves).
func stateHost(t *testing.T, authed bool, allow []string) *httptest.Server {
	t.Helper()
	eo := server.EngineOptions{Logger: testutil.Logger()}
	if allow != nil {
		eo.Push = &server.PushOptions{CheckURL: gateway.WebhookChecker(allow, fakeHosts{"hooks.example": {netip.MustParseAddr("10.0.0.1")}})}
	}
	eng, err := server.NewEngine(context.Background(), memory.New(), eo)
	if err != nil {
		t.Fatal(err)
	}
	host := servertest.Host("chat")
	ho := server.HandlerOptions{}
	if authed {
		b, err := auth.NewBearerTokens("bearer", map[string]string{"me": "tok"})
		if err != nil {
			t.Fatal(err)
		}
		ho.Auth = auth.Set{b}
	}
	for _, s := range []a2a.TaskState{a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateCanceled} {
		c := agents.Echo{}.Card()
		c.Name = s.String()
		host.Add(server.NewHandler(eng, s.String(), endAgent{s}, c, ho))
	}
	host.Add(server.NewHandler(eng, "chat", agents.Chat{}, agents.Chat{}.Card(), ho))
	host.Add(server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), ho))
	return testutil.Serve(t, host, eng.Close)
}

// The exit status reflects the task: failed/rejected 5, canceled 6
// (success for cancel), input-required 0.
func TestExitStatusFromTaskState(t *testing.T) {
	ts := stateHost(t, false, nil)
	for _, c := range []struct {
		agent string
		code  int
		msg   string
	}{
		{"failed", ExitTaskFailed, "failed"},
		{"rejected", ExitTaskFailed, "was rejected"},
		{"canceled", ExitTaskCanceled, "was canceled"},
		{"chat", ExitOK, ""}, // input-required
	} {
		u := ts.URL + "/a2a/" + c.agent
		out, errs, code := run(t, "", "send", u, "x", "--json")
		if code != c.code || (c.msg != "" && !strings.Contains(errs, c.msg)) {
			t.Errorf("send to %s: exit %d (want %d), stderr %q", c.agent, code, c.code, errs)
			continue
		}
		task := lines(t, out)[0]
		if _, errs, code := run(t, "", "get", u, task.ID); code != c.code {
			t.Errorf("get of a %s task: exit %d (want %d) %s", c.agent, code, c.code, errs)
		}
		if _, errs, code := run(t, "", "stream", u, "x"); code != c.code {
			t.Errorf("stream to %s: exit %d (want %d) %s", c.agent, code, c.code, errs)
		}
		if _, errs, code := run(t, "", "resubscribe", u, task.ID); code != c.code {
			t.Errorf("resubscribe to a %s task: exit %d (want %d) %s", c.agent, code, c.code, errs)
		}
	}
}

func TestTimeoutPrintsTask(t *testing.T) {
	ts, _ := testHost(t)
	_, errs, code := run(t, "", "stream", ts.URL+"/a2a/slow", "30", "--timeout", "300ms")
	m := followRe.FindStringSubmatch(errs)
	if code != ExitTransport || !strings.Contains(errs, "--timeout 300ms expired") || m == nil || m[3] == "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// A blocking send: the task is found by its messageId.
	_, errs, code = run(t, "", "send", ts.URL+"/a2a/slow", "30", "--timeout", "300ms")
	if code != ExitTransport || !cancelRe.MatchString(errs) || !strings.Contains(errs, "is working") {
		t.Fatalf("send: exit %d, stderr %q", code, errs)
	}
	// chat: --timeout bounds each turn; the next turn works.
	out, errs, code := run(t, "30\n0\n", "chat", ts.URL+"/a2a/slow", "--timeout", "500ms")
	if code != ExitOK || !strings.Contains(errs, "--timeout 500ms expired") || !strings.Contains(out, "[completed]") {
		t.Fatalf("chat: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestVersion(t *testing.T) {
	old := readBuildInfo
	t.Cleanup(func() { readBuildInfo = old })
	readBuildInfo = func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/a2abridge/a2abridge", Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}}}, true
	}
	out, _, code := run(t, "", "version")
	for _, want := range []string{"a2abridge v1.2.3\n", "commit    0123456789abcdef (modified)", "committed 2026-01-02T03:04:05Z", "go        go1.99.1 ", "\n  A2A       1.0 and 0.3.0 over JSON-RPC and HTTP+JSON, SSE streaming; A2A 1.0 over gRPC\n"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("version: %d %q lacks %q", code, out, want)
		}
	}
	flag, _, code := run(t, "", "--version")
	if code != ExitOK || flag != out {
		t.Errorf("--version %q differs from version %q", flag, out)
	}
	js, _, _ := run(t, "", "version", "--json")
	var v versionInfo
	if err := json.Unmarshal([]byte(js), &v); err != nil || v.Version != "v1.2.3" || v.Commit != "0123456789abcdef" || !v.Modified ||
		v.Go != "go1.99.1" || !slices.Equal(v.ProtocolVersions, []string{"1.0", "0.3.0"}) || !slices.Equal(v.Bindings, []string{"JSONRPC", "HTTP+JSON", "GRPC"}) {
		t.Errorf("version --json: %s (%v)", js, err)
	}
	readBuildInfo = func() (*debug.BuildInfo, bool) { return nil, false }
	if out, _, _ := run(t, "", "version"); !strings.Contains(out, "a2abridge (unknown)") || strings.Contains(out, "commit") {
		t.Errorf("without build info: %q", out)
	}
}

// TestNamesVersionsAndBindings: the help of a2abridge and of check, and
// serve's banner and startup log, name both A2A versions served and both
// bindings.
func TestNamesVersionsAndBindings(t *testing.T) {
	out, _, code := run(t, "", "--help")
	if code != ExitOK || !strings.Contains(out, "(A2A 1.0 and 0.3.0, each over JSON-RPC\nand HTTP+JSON, streaming over SSE)") ||
		!strings.Contains(out, "Check an A2A endpoint (1.0 and 0.3.0, JSON-RPC and HTTP+JSON)") {
		t.Errorf("--help: %d %q", code, out)
	}
	out, _, code = run(t, "", "check", "--help")
	if code != ExitOK || !strings.Contains(out, "A2A 1.0 over JSON-RPC, HTTP+JSON and\ngRPC") || !strings.Contains(out, "A2A 0.3.0 over JSON-RPC and,") {
		t.Errorf("check --help: %d %q", code, out)
	}
	addr := freeAddr(t)
	p := runInProcess(t, "serve", "--memory", "--addr", addr)
	banner := waitLines(t, p.Stdout, "listening on", 1, 10*time.Second)[0]
	if want := "a2abridge listening on http://" + addr + " (A2A 1.0 and 0.3.0 over JSON-RPC and HTTP+JSON, SSE streaming; A2A 1.0 over gRPC at " + addr + "; default agent"; !strings.HasPrefix(banner, want) {
		t.Errorf("banner %q, want it to start with %q", banner, want)
	}
	logged := waitLines(t, p.Stderr, "a2abridge serving", 1, 10*time.Second)[0]
	if !strings.Contains(logged, `a2a="1.0, 0.3.0"`) || !strings.Contains(logged, `bindings="JSONRPC, HTTP+JSON, GRPC"`) {
		t.Errorf("startup log %q lacks the versions and bindings", logged)
	}
}

// Credentials without the command line: A2ABRIDGE_CLIENT_TOKEN and
// profiles of the client config file; flag > env > profile.
func TestClientCredentials(t *testing.T) {
	ts := stateHost(t, true, nil)
	echo := ts.URL + "/a2a/echo"
	t.Setenv(envClientConfig, writeFile(t, "client.yaml", fmt.Sprintf(`# profiles
profiles:
  good:
    url: %s
    token: ${A2ABRIDGE_TEST_PROFILE_TOKEN}
    headers:
      X-Tenant: acme
  bad:
    url: %s
    token: wrong-profile-secret
  keyless:
    token: tok
  unset:
    url: %s
    token: ${A2ABRIDGE_SURELY_UNSET_TOKEN}
`, echo, echo, echo)))
	t.Setenv("A2ABRIDGE_TEST_PROFILE_TOKEN", "tok")

	ok := func(name string, code int, errs string) {
		t.Helper()
		if code != ExitOK {
			t.Errorf("%s: exit %d, stderr %q", name, code, errs)
		}
	}
	refused := func(name string, code int, errs string) {
		t.Helper()
		if code != ExitTransport || !strings.Contains(errs, "401") {
			t.Errorf("%s: exit %d (want 401), stderr %q", name, code, errs)
		}
		for _, secret := range []string{"wrong-flag-secret", "wrong-env-secret", "wrong-profile-secret"} {
			if strings.Contains(errs, secret) {
				t.Errorf("%s: a token was printed: %q", name, errs)
			}
		}
	}
	_, errs, code := run(t, "", "send", echo, "x")
	refused("no credentials", code, errs)
	if !strings.Contains(errs, "--token") || !strings.Contains(errs, envClientToken) {
		t.Errorf("401 without credentials: no hint: %q", errs)
	}
	_, errs, code = run(t, "", "send", "good", "x") // the URL argument names a profile
	ok("profile by name", code, errs)
	_, errs, code = run(t, "", "send", echo, "x", "--profile", "keyless") // a profile for credentials only
	ok("--profile without url", code, errs)
	_, errs, code = run(t, "", "send", "bad", "x")
	refused("profile with a wrong token", code, errs)
	if !strings.Contains(errs, "refused the credentials") {
		t.Errorf("401 with credentials: hint %q", errs)
	}

	t.Setenv(envClientToken, "tok")
	_, errs, code = run(t, "", "send", echo, "x")
	ok("A2ABRIDGE_CLIENT_TOKEN", code, errs)
	_, errs, code = run(t, "", "send", "bad", "x")
	ok("env over profile", code, errs)
	_, errs, code = run(t, "", "send", echo, "x", "--token", "wrong-flag-secret")
	refused("flag over env", code, errs)
	t.Setenv(envClientToken, "wrong-env-secret")
	_, errs, code = run(t, "", "send", "good", "x", "--token", "tok")
	ok("flag over env and profile", code, errs)
	_, errs, code = run(t, "", "send", "good", "x")
	refused("env over profile (wrong)", code, errs)
	t.Setenv(envClientToken, "")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"send", "unset", "x"}, "A2ABRIDGE_SURELY_UNSET_TOKEN"},
		{[]string{"send", "nosuch", "x"}, `"nosuch" has no scheme and is not a profile in`},
		{[]string{"send", "keyless", "x"}, "has no url"},
		{[]string{"send", echo, "x", "--profile", "nosuch"}, "no such profile"},
		{[]string{"send", "good", "x", "--profile", "bad"}, "give one"},
		// A profile's credentials stay with its host.
		{[]string{"send", "http://other.example:8080", "x", "--profile", "good"}, "are not sent to other.example:8080"},
	} {
		if _, errs, code := run(t, "", c.args...); code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q (want %q)", c.args, code, errs, c.want)
		}
	}

	// The profile's headers are sent (the hint to resubscribe names the
	// profile, never its token).
	var gotTenant string
	hs := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotTenant = r.Header.Get("X-Tenant")
		http.NotFound(w, r)
	}))
	t.Setenv(envClientConfig, writeFile(t, "c2.yaml", "profiles:\n  h:\n    url: "+hs.URL+"\n    headers: {X-Tenant: acme}\n"))
	run(t, "", "card", "h")
	if gotTenant != "acme" {
		t.Errorf("profile headers not sent: %q", gotTenant)
	}
}

func TestClientConfigErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"profiles:\n  p:\n    url: http://x\n    tokne: hunter2\n", `:4: unknown key "tokne" in profiles.p: did you mean "token"?`},
		{"profile:\n  p: {}\n", `:1: unknown key "profile": did you mean "profiles"?`},
		{"profiles:\n  p:\n    headers: [hunter2]\n", "line 3"},
		{"profiles:\n  'a b': {}\n", "a name is letters"},
		{"profiles: [\n", "yaml"},
	} {
		t.Setenv(envClientConfig, writeFile(t, "client.yaml", c.body))
		_, errs, code := run(t, "", "get", "p", "task")
		if code != ExitUsage || !strings.Contains(errs, c.want) || strings.Contains(errs, "hunter2") {
			t.Errorf("%q: exit %d, stderr %q (want %q, no value)", c.body, code, errs, c.want)
		}
	}
	t.Setenv(envClientConfig, filepath.Join(t.TempDir(), "missing.yaml"))
	if _, errs, code := run(t, "", "get", "p", "task"); code != ExitUsage || !strings.Contains(errs, "missing.yaml") {
		t.Errorf("missing $%s: exit %d %q", envClientConfig, code, errs)
	}
	// A URL never reads the file.
	if _, errs, code := run(t, "", "get", "http://127.0.0.1:1", "task"); code != ExitTransport {
		t.Errorf("URL with a missing config file: exit %d %q", code, errs)
	}
}

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"localhost:8080":           "http://localhost:8080",
		"LOCALHOST":                "http://LOCALHOST",
		"127.0.0.1:8080/a2a/x":     "http://127.0.0.1:8080/a2a/x",
		"127.1.2.3":                "http://127.1.2.3",
		"[::1]:8080":               "http://[::1]:8080",
		"http://example.com":       "http://example.com",
		"https://example.com/a":    "https://example.com/a",
		"example.com":              "",
		"10.0.0.1:80":              "",
		"localhost.example.com":    "",
		"ftp://example.com":        "",
		"":                         "",
		"/a2a/echo":                "",
		"http://":                  "",
		"[::ffff:127.0.0.1]:80":    "http://[::ffff:127.0.0.1]:80",
		"127.0.0.1.example.com:":   "",
		"localhost:1/x?u=http://y": "http://localhost:1/x?u=http://y",
		"ftp:/x":                   "",
	} {
		got, err := normalizeURL(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("normalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err != nil && want == "" && strings.Contains(in, ".com") && !strings.Contains(in, "://") && !strings.Contains(err.Error(), "add https://") {
			t.Errorf("normalizeURL(%q): %v does not say to add https://", in, err)
		}
	}
	ts, _ := testHost(t)
	hostport := strings.TrimPrefix(ts.URL, "http://")
	if out, errs, code := run(t, "", "card", hostport, "--json"); code != ExitOK || !strings.Contains(out, `"name":"echo"`) {
		t.Errorf("card %s: %d %s", hostport, code, errs)
	}
	if _, errs, code := run(t, "", "card", "agents.example.com"); code != ExitUsage || !strings.Contains(errs, "add https://") {
		t.Errorf("card without scheme: %d %s", code, errs)
	}
}

func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"localhost:8080", "[::1]:1", "http://x", "example.com", "127.0.0.1", "%zz", "a@b:c", "Http://0", "HTTPS://example.com/a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := normalizeURL(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			t.Fatalf("%q → %q: not http(s)", s, u)
		}
		if again, err := normalizeURL(u); err != nil || again != u {
			t.Fatalf("%q → %q → %q, %v: not stable", s, u, again, err)
		}
	})
}

// TEXT from stdin: "-", or omitted with stdin not a terminal.
func TestTextFromStdin(t *testing.T) {
	ts, _ := testHost(t)
	artifactText := func(out string) string {
		var b strings.Builder
		for _, p := range lines(t, out)[0].Artifacts[0].Parts {
			if s, ok := p["text"].(string); ok {
				b.WriteString(s)
			}
		}
		return b.String()
	}
	out, errs, code := run(t, "hi there\n", "send", ts.URL, "-", "--json")
	if code != ExitOK || artifactText(out) != "hi there" {
		t.Fatalf("send URL -: %d %s %s", code, out, errs)
	}
	out, _, code = run(t, "line 1\nline 2\n", "send", ts.URL, "--json")
	if code != ExitOK || artifactText(out) != "line 1\nline 2" {
		t.Fatalf("send URL < stdin: %d %s", code, out)
	}
	// With another part and no TEXT, stdin is not read.
	out, _, code = run(t, "not this", "send", ts.URL, "--data", `{"n":1}`, "--json")
	if code != ExitOK || strings.Contains(out, "not this") {
		t.Fatalf("--data only: %d %s", code, out)
	}
	if _, errs, code := run(t, "\xff\xfe", "send", ts.URL, "-"); code != ExitUsage || !strings.Contains(errs, "UTF-8") {
		t.Fatalf("binary stdin: %d %s", code, errs)
	}
}

// Streamed chunks continue one line; other events keep their own lines.
func TestInlineChunks(t *testing.T) {
	ts, _ := testHost(t)
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 8) // 6 chunks of 64 bytes
	out, _, code := run(t, "", "stream", ts.URL, text, "--human")
	ls := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != ExitOK || len(ls) != 3 || !strings.Contains(ls[1], "artifact [echo] "+text+" +last") || !strings.Contains(ls[2], "status completed") {
		t.Fatalf("stream: %d lines: %q", len(ls), out)
	}
	out, _, _ = run(t, text+"\n", "chat", ts.URL)
	if !strings.Contains(out, "agent> [echo] "+strings.TrimSpace(text)+"\n") {
		t.Fatalf("chat: %q", out)
	}
}

// colourTerminal sets the environment of a colour terminal (TERM=xterm,
// NO_COLOR empty) for the test, and returns a function that makes the
// commands' output a terminal (isTerminal) until the test ends.
func colourTerminal(t *testing.T) (becomeTerminal func()) {
	old := isTerminal
	t.Cleanup(func() { isTerminal = old })
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm")
	return func() { isTerminal = func(any) bool { return true } }
}

// Colour on a terminal only, never with NO_COLOR or TERM=dumb.
func TestColour(t *testing.T) {
	ts, _ := testHost(t)
	becomeTerminal := colourTerminal(t)
	if out, _, _ := run(t, "", "stream", ts.URL, "x"); strings.Contains(out, "\033[") {
		t.Fatalf("colour when not a terminal: %q", out)
	}
	becomeTerminal()
	out, _, _ := run(t, "", "stream", ts.URL, "x")
	if !strings.Contains(out, "status "+sgrGreen+"completed"+sgrReset) {
		t.Fatalf("no colour on a terminal: %q", out)
	}
	out, _, _ = run(t, "", "send", ts.URL, "x")
	if !strings.Contains(out, sgrGreen+"COMPLETED"+sgrReset) {
		t.Fatalf("send: no colour on a terminal: %q", out)
	}
	t.Setenv("NO_COLOR", "1")
	if out, _, _ := run(t, "", "stream", ts.URL, "x"); strings.Contains(out, "\033[") {
		t.Fatalf("colour with NO_COLOR: %q", out)
	}
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "dumb")
	if out, _, _ := run(t, "", "stream", ts.URL, "x"); strings.Contains(out, "\033[") {
		t.Fatalf("colour with TERM=dumb: %q", out)
	}
}

// A blocking send shows a spinner on a terminal's stderr, and leaves
// nothing there otherwise.
func TestSpinner(t *testing.T) {
	ts, _ := testHost(t)
	becomeTerminal := colourTerminal(t)
	_, errs, code := run(t, "", "send", ts.URL+"/a2a/slow", "1", "--human")
	if code != ExitOK || errs != "" {
		t.Fatalf("not a terminal: stderr %q", errs)
	}
	becomeTerminal()
	_, errs, code = run(t, "", "send", ts.URL+"/a2a/slow", "1", "--human")
	if code != ExitOK || !strings.Contains(errs, "waiting for the agent") || !strings.HasSuffix(errs, "\r\033[K") {
		t.Fatalf("terminal: stderr %q", errs)
	}
}

// push listen: the banner on stderr, stdout only notifications (JSON
// lines with --json).
func TestPushListenOutput(t *testing.T) {
	for _, mode := range []string{"--json", "--human"} {
		addr := freeAddr(t)
		p := runInProcess(t, "push", "listen", "--addr", addr, mode)
		waitLines(t, p.Stderr, "listening on", 1, 10*time.Second)
		testutil.Post(t, "http://"+addr+"/hook", `{"kind":"task","id":"t1","contextId":"c","status":{"state":"completed"}}`)
		got := waitLines(t, p.Stdout, "t1", 1, 10*time.Second)
		p.stop()
		all := p.Stdout.String()
		if strings.Contains(all, "listening") {
			t.Errorf("%s: banner on stdout: %q", mode, all)
		}
		if mode == "--json" {
			var v map[string]jsontext.Value
			if err := json.Unmarshal([]byte(got[0]), &v); err != nil || v["task"] == nil || v["verdict"] == nil {
				t.Errorf("--json: not a notification JSON line: %q (%v)", got[0], err)
			}
		}
	}
}

// Every command has a description and an example; flags appear only
// where they apply.
func TestHelp(t *testing.T) {
	var cmds []*cobra.Command
	out, _, _ := run(t, "", "--help")
	if !strings.Contains(out, "Exit status") {
		t.Errorf("root help: %q", out)
	}
	root := &cobra.Command{Use: "a2abridge"}
	root.AddCommand(newServeCmd(nil, nil), newBenchCmd(nil, nil), newCheckCmd(nil, nil, nil), newVersionCmd(nil))
	addClientCommands(root, &clientEnv{intr: &interrupts{}})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			cmds = append(cmds, s)
			walk(s)
		}
	}
	walk(root)
	if len(cmds) < 18 {
		t.Fatalf("only %d commands", len(cmds))
	}
	flags := map[string][]string{}
	for _, c := range cmds {
		if strings.TrimSpace(c.Long) == "" || strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no description or example", c.CommandPath())
		}
		c.Flags().VisitAll(func(f *pflagFlag) { flags[c.CommandPath()] = append(flags[c.CommandPath()], f.Name) })
	}
	has := func(cmd, flag string) bool {
		for _, f := range flags["a2abridge "+cmd] {
			if f == flag {
				return true
			}
		}
		return false
	}
	for _, f := range []string{"token", "header", "api-key", "json", "human", "timeout", "profile"} {
		if has("serve", f) || has("push listen", f) && f != "json" && f != "human" {
			t.Errorf("--%s shown where it does not apply", f)
		}
		if !has("send", f) || !has("check", f) || !has("push set", f) {
			t.Errorf("--%s missing on a client command", f)
		}
		if has("bench", f) != (f != "api-key") {
			t.Errorf("bench --%s: %v", f, has("bench", f))
		}
	}
	// Defaults shown in help.
	out, _, _ = run(t, "", "check", "--help")
	if !strings.Contains(out, `limit of each request and each stream (default 10s)`) {
		t.Errorf("check --timeout default not shown: %q", out)
	}
	out, _, _ = run(t, "", "serve", "--help")
	if !strings.Contains(out, "CIDR, IP[:PORT], HOST[:PORT] or *.DOMAIN") {
		t.Errorf("serve --push-allow forms: %q", out)
	}
}

// Errors say what to do next, keyed on codes and statuses.
func TestErrorHints(t *testing.T) {
	plain := stateHost(t, false, nil)
	out, _, _ := run(t, "", "send", plain.URL, "x", "--json")
	_, errs, code := run(t, "", "push", "set", plain.URL, lines(t, out)[0].ID, "http://127.0.0.1:9/hook")
	if code != ExitA2AError || !strings.Contains(errs, "--push") {
		t.Errorf("push not enabled: %d %q", code, errs)
	}
	pushing := stateHost(t, false, []string{})
	const refusedHint = "hint: the server refused this webhook URL"
	_, errs, code = run(t, "", "send", pushing.URL+"/a2a/echo", "x", "--push-url", "http://127.0.0.1:9/hook")
	if code != ExitA2AError || !strings.Contains(errs, refusedHint) || !strings.Contains(errs, "--push-allow HOST:PORT") {
		t.Errorf("webhook refused: %d %q", code, errs)
	}
	// A host name that resolves to a private address is refused when set,
	// naming the address, with the same hint.
	_, errs, code = run(t, "", "send", pushing.URL+"/a2a/echo", "x", "--push-url", "http://hooks.example:9/hook")
	if code != ExitA2AError || !strings.Contains(errs, "resolves to 10.0.0.1") || !strings.Contains(errs, refusedHint) {
		t.Errorf("webhook resolving to a private address: %d %q", code, errs)
	}
	out, _, _ = run(t, "", "send", pushing.URL+"/a2a/chat", "x", "--json")
	_, errs, code = run(t, "", "push", "set", pushing.URL+"/a2a/chat", lines(t, out)[0].ID, "http://hooks.example:9/hook")
	if code != ExitA2AError || !strings.Contains(errs, "resolves to 10.0.0.1") || !strings.Contains(errs, refusedHint) {
		t.Errorf("push set of a webhook resolving to a private address: %d %q", code, errs)
	}
	// An unknown agent: the server's 404 lists the hosted agents, and so
	// does the hint.
	_, errs, code = run(t, "", "card", plain.URL+"/a2a/nosuch")
	if code != ExitTransport || !strings.Contains(errs, "no agent by that name is hosted there") || !strings.Contains(errs, "echo  "+plain.URL+"/a2a/echo") {
		t.Errorf("unknown agent: %d %q", code, errs)
	}
	_, errs, code = run(t, "", "get", "http://127.0.0.1:1", "t")
	if code != ExitTransport || !strings.Contains(errs, "is the server running at that address") {
		t.Errorf("connection refused: %d %q", code, errs)
	}
	// Codes decide, not words: a server's wording does not add a hint.
	ts := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			fmt.Fprintf(w, `{"name":"x","description":"d","url":"http://%s/","version":"1","protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`, r.Host)
			return
		}
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"push --push-allow webhook not allowed","data":{"field":"/params/message"}}}`)
	}))
	_, errs, _ = run(t, "", "get", ts.URL, "t")
	if strings.Contains(errs, "hint") {
		t.Errorf("a hint from the server's words: %q", errs)
	}
}

type pflagFlag = pflag.Flag

// TestTextPartsOnLines: the human output puts each text part of a message
// or an artifact on a line of its own (never run together, as "You:
// hiEcho: You: hi"); the chat agent quotes a message of several text parts
// with a newline between them, and echo's artifact keeps them apart; over
// each version and binding.
func TestTextPartsOnLines(t *testing.T) {
	if got := partsText([]a2a.Part{a2a.NewTextPart("You: hi"), a2a.NewTextPart("Echo: You: hi"), a2a.NewDataPart(map[string]any{"n": "1"}), a2a.NewTextPart("end")}); got != "You: hi\nEcho: You: hi {\"n\":\"1\"} end" {
		t.Errorf("partsText %q", got)
	}
	ts, _ := testHost(t)
	ctx := context.Background()
	for _, o := range []client.Options{
		{Protocol: a2a.Version10, Binding: a2a.TransportJSONRPC},
		{Protocol: a2a.Version10, Binding: a2a.TransportHTTPJSON},
		{Protocol: a2a.Version03, Binding: a2a.TransportJSONRPC},
	} {
		args := []string{"--protocol", o.Protocol, "--binding", map[string]string{a2a.TransportJSONRPC: "jsonrpc", a2a.TransportHTTPJSON: "rest"}[o.Binding]}
		for _, agent := range []string{"echo", "chat"} {
			c, err := client.Dial(ctx, ts.URL+"/a2a/"+agent, o)
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.SendMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("You: hi"), a2a.NewTextPart("Echo: You: hi"))})
			task, ok := res.(*a2a.Task)
			if err != nil || !ok {
				t.Fatalf("%s over %+v: %v %T", agent, o, err, res)
			}
			out, errs, code := run(t, "", append([]string{"get", ts.URL + "/a2a/" + agent, task.ID, "--human"}, args...)...)
			want := "\n  artifact [echo] You: hi\nEcho: You: hi\n"
			if agent == "chat" {
				want = "\n  status   turn 1: you said \"You: hi\\nEcho: You: hi\". Say more"
			}
			if code != ExitOK || !strings.Contains(out, want) || !strings.Contains(out, "\n    user   You: hi\nEcho: You: hi\n") {
				t.Errorf("get %s %v: %d %q %s; want %q and the message on two lines", agent, args, code, out, errs, want)
			}
		}
	}
}
