// Package interop runs the official A2A Go SDK (github.com/a2aproject/a2a-go)
// against the `a2abridge serve` binary, treated as a black box: TestMain
// builds the binary from the repository root (../..) and each store variant
// starts its own server process on a free loopback port.
package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

const (
	// mainPkg is the command under test, built from the repository root.
	mainPkg = "github.com/a2abridge/a2abridge/cmd/a2abridge"
	// readyPrefix is what `a2abridge serve` prints on stdout once it accepts connections.
	readyPrefix = "a2abridge listening on http://"
	// startTimeout bounds how long a server may take to print readyPrefix.
	startTimeout = 30 * time.Second
	// stopTimeout bounds a graceful shutdown (SIGINT) before the server is killed.
	stopTimeout = 10 * time.Second
)

// binPath is the a2abridge binary built by TestMain.
var binPath string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "a2abridge-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, exe("a2abridge"))
	if err := buildBinary(binPath); err != nil {
		fmt.Fprintln(os.Stderr, "interop: building the a2abridge binary:", err)
		return 1
	}
	// The tests start and stop many servers (ours and the peers) on ports
	// the system hands out again: a card the process-wide cache kept
	// from one must not stand for another's at the same URL.
	client.DefaultCardCache = nil
	return m.Run()
}

// buildBinary runs `go build -o out github.com/a2abridge/a2abridge/cmd/a2abridge`
// in the repository root, two levels above this package.
func buildBinary(out string) error {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return fmt.Errorf("repository root %s has no go.mod: %w", root, err)
	}
	return goBuild(context.Background(), root, out, mainPkg)
}

// goBuild runs `go build -o out pkg` in dir, for at most 5 minutes; its
// error holds go's output.
func goBuild(ctx context.Context, dir, out, pkg string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v in %s: %w\n%s", cmd.Args, dir, err, buf.String())
	}
	return nil
}

// exe is name as an executable's file name on this system (name.exe on
// Windows).
func exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// server is one running `a2abridge serve` process.
type server struct {
	base   string // http://127.0.0.1:PORT
	stderr *testutil.Buffer
}

// errPortTaken reports that another process grabbed the port between
// testutil.FreePort and the server's listen.
var errPortTaken = errors.New("port taken")

// startServer starts `a2abridge serve --addr 127.0.0.1:PORT args...`, waits
// for its listening line and registers a cleanup that stops it (SIGINT, then
// SIGKILL after stopTimeout) and checks that it exited cleanly.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	for attempt := 1; ; attempt++ {
		s, err := tryStartServer(t, args)
		if err == nil {
			return s
		}
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("retrying: %v", err)
	}
}

func tryStartServer(t *testing.T, args []string) (*server, error) {
	addr := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	// A short --keep-alive puts SSE comment lines into every stream that
	// lasts a while (slow tasks), so the clients must skip them.
	cmd := exec.CommandContext(ctx, binPath,
		append([]string{"serve", "--addr", addr, "--keep-alive", "250ms", "--log-level", "debug"}, args...)...)
	p, err := startStoppable(cmd, cancel, readyPrefix)
	if err != nil {
		if p != nil && strings.Contains(p.Stderr.String(), "address already in use") {
			return nil, fmt.Errorf("%w: %s", errPortTaken, addr)
		}
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &server{base: "http://" + addr, stderr: p.Stderr}
	if !strings.HasPrefix(p.Ready, addr+" ") {
		cancel()
		p.Wait(2 * stopTimeout)
		return nil, fmt.Errorf("server listens elsewhere than --addr %s: %q", addr, readyPrefix+p.Ready)
	}
	stopAtCleanup(t, "server", s.base, p, cancel)
	return s, nil
}

// startStoppable starts cmd, whose context cancel ends, so that cancel
// asks for a graceful stop (SIGINT) and SIGKILL follows after stopTimeout,
// in its own process group (killed with this test binary on Linux); it
// waits up to startTimeout for the stdout line that holds ready.
func startStoppable(cmd *exec.Cmd, cancel context.CancelFunc, ready string) (*testutil.Process, error) {
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = stopTimeout
	cmd.SysProcAttr = sysProcAttr()
	p, err := testutil.Start(cmd, ready, startTimeout)
	if err != nil {
		cancel()
	}
	return p, err
}

// stopAtCleanup registers a cleanup that stops p (cancel: SIGINT, then
// SIGKILL after stopTimeout), checks that it exited cleanly, and logs its
// stderr when t failed or runs verbose; what and base name it.
func stopAtCleanup(t *testing.T, what, base string, p *testutil.Process, cancel context.CancelFunc) {
	t.Cleanup(func() {
		cancel()
		if exited, err := p.Wait(2 * stopTimeout); !exited {
			t.Errorf("%s %s did not exit after SIGINT and SIGKILL", what, base)
		} else if ps := p.Cmd.ProcessState; ps == nil || !ps.Success() {
			// Wait reports the cancellation itself even after a clean exit:
			// judge by the exit status.
			t.Errorf("%s %s did not exit cleanly on SIGINT: %v (%v)", what, base, err, ps)
		}
		if t.Failed() || testing.Verbose() {
			t.Logf("%s %s stderr:\n%s", what, base, p.Stderr.String())
		}
	})
}

// skipOrFail skips t with why, except under CI (the CI environment
// variable set), where a missing prerequisite fails the test: a suite
// that CI relies on must not pass by not running.
func skipOrFail(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("under CI this test must run, but: %s", why)
	}
	t.Skip(why)
}
