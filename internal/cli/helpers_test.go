package cli

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// childEnv makes this test binary, re-executed, run `a2abridge ARGS` as
// main does: its value is ARGS joined by \x1f.
const childEnv = "A2ABRIDGE_TEST_CHILD_ARGS"

func TestMain(m *testing.M) {
	if os.Getenv(hostileEnv) != "" {
		os.Exit(hostileMain()) // the hostile backend of hostile_test.go
	}
	if args := os.Getenv(childEnv); args != "" {
		// The child is a2abridge as main runs it.
		os.Exit(Main(strings.Split(args, "\x1f")))
	}
	// The tests start and stop hundreds of servers on ports the system
	// hands out again: a card the process-wide cache kept from one must
	// not stand for another's at the same URL.
	client.DefaultCardCache = nil
	os.Exit(m.Run())
}

// childCommand is `a2abridge args...` as a child process: this test
// binary, re-executed, whose TestMain runs Main.
func childCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join(args, "\x1f"))
	return cmd
}

// startChild runs `a2abridge serve args...` in a child process and waits
// until it listens; the child is killed when the test ends. Its stderr
// (the logs) is in the returned process's Stderr.
func startChild(t *testing.T, args ...string) *testutil.Process {
	t.Helper()
	p, err := testutil.Start(childCommand(append([]string{"serve"}, args...)...), "listening on", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

// freeAddr is a loopback host:port that was free a moment ago.
func freeAddr(t *testing.T) string { return testutil.FreeAddr(t) }

// run runs `a2abridge args...` in this process with stdin and returns its
// stdout, its stderr and its exit status.
func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// inProcess is `a2abridge ARGS` run by Run in a goroutine of this test,
// its stdout and stderr kept.
type inProcess struct {
	Stdout, Stderr *testutil.Buffer
	cancel         context.CancelFunc
	done           chan int
	code           int
	stopped        bool
}

// runInProcess starts `a2abridge args...` in this process; it is stopped
// (its context canceled) when the test ends, if not before.
func runInProcess(t *testing.T, args ...string) *inProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &inProcess{Stdout: &testutil.Buffer{}, Stderr: &testutil.Buffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() { p.done <- Run(ctx, args, nil, p.Stdout, p.Stderr) }()
	t.Cleanup(func() { p.stop() })
	return p
}

// stop cancels the command's context and returns its exit status once Run
// has returned.
func (p *inProcess) stop() int {
	if !p.stopped {
		p.cancel()
		p.code = <-p.done
		p.stopped = true
	}
	return p.code
}

// startServe runs `a2abridge serve --memory args...` in this process on a
// free loopback port and returns its base URL.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	addr := freeAddr(t)
	p := runInProcess(t, append([]string{"serve", "--memory", "--addr", addr, "--log-level", "error"}, args...)...)
	waitLines(t, p.Stdout, "listening on", 1, 10*time.Second)
	return "http://" + addr
}

// waitLines waits up to timeout until out holds n complete lines that
// contain want, and returns the first n.
func waitLines(t *testing.T, out *testutil.Buffer, want string, n int, timeout time.Duration) []string {
	t.Helper()
	var got []string
	if !testutil.Poll(timeout, func() bool {
		got = got[:0]
		s := out.String()
		for _, l := range strings.SplitAfter(s[:strings.LastIndexByte(s, '\n')+1], "\n") {
			if strings.Contains(l, want) {
				got = append(got, l)
			}
		}
		return len(got) >= n
	}) {
		t.Fatalf("got %d lines with %q, want %d: %q", len(got), want, n, got)
	}
	return got[:n]
}

// waitFor waits until out holds sub n times (a generous limit, not a
// timing assertion) and returns out then.
func waitFor(t *testing.T, out *testutil.Buffer, sub string, n int) string {
	t.Helper()
	var s string
	if !testutil.Poll(30*time.Second, func() bool { s = out.String(); return strings.Count(s, sub) >= n }) {
		t.Fatalf("output never held %q %d time(s): %q", sub, n, s)
	}
	return s
}

// call sends a request of method to url with body (none when empty) and
// the header pairs hdr, and returns the status and the body.
func call(t *testing.T, method, url, body string, hdr ...string) (int, string) {
	t.Helper()
	resp, b := testutil.Do(t, testutil.NewRequest(t, context.Background(), method, url, body, hdr...))
	return resp.StatusCode, string(b)
}

// bearer is the header pair of an Authorization with the bearer token,
// none when token is empty.
func bearer(token string) []string {
	if token == "" {
		return nil
	}
	return []string{"Authorization", "Bearer " + token}
}

// getJSON GETs u and decodes its body into v (unless v is nil) with
// encoding/json (names matched without regard to case); a body that does
// not decode fails t. It returns the status.
func getJSON(t *testing.T, u string, v any) int {
	t.Helper()
	resp, b := testutil.Get(t, u)
	if v != nil {
		if err := stdjson.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %d %s: %v", u, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

// writeFile writes body to a file called name in a new temporary
// directory and returns its path.
func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeConfig writes body as a serve config file and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	return writeFile(t, "serve.yaml", body)
}

// serveUsage is a case of wantServeUsageErrors: serve's arguments, or
// "--config" and the body of a config file, and what its error says.
type serveUsage struct {
	args []string
	want string
}

// wantServeUsageErrors runs `serve --memory --addr 127.0.0.1:0` with the
// arguments of each case and checks that it is a usage error whose stderr
// holds the case's want.
func wantServeUsageErrors(t *testing.T, cases []serveUsage) {
	t.Helper()
	for _, c := range cases {
		args := c.args
		if args[0] == "--config" {
			args = []string{"--config", writeConfig(t, args[1])}
		}
		_, errs, code := run(t, "", append([]string{"serve", "--memory", "--addr", "127.0.0.1:0"}, args...)...)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want usage error with %q", c.args, code, errs, c.want)
		}
	}
}
