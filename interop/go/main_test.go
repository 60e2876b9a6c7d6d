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
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/client"
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
	binPath = filepath.Join(dir, "a2abridge")
	if runtime.GOOS == "windows" {
		binPath += ".exe"
	}
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
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, mainPkg)
	cmd.Dir = root
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v in %s: %w\n%s", cmd.Args, root, err, buf.String())
	}
	return nil
}

// server is one running `a2abridge serve` process.
type server struct {
	base   string // http://127.0.0.1:PORT
	stderr *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// readyWriter collects the server's stdout and sends its first complete
// line that starts with readyPrefix on ready.
type readyWriter struct {
	syncBuffer
	once  sync.Once
	ready chan string
}

func (w *readyWriter) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	out := w.syncBuffer.String()
	if i := strings.Index(out, readyPrefix); i >= 0 {
		if j := strings.IndexByte(out[i:], '\n'); j >= 0 {
			w.once.Do(func() { w.ready <- out[i : i+j] })
		}
	}
	return n, err
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pick a free port: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatalf("pick a free port: %v", err)
	}
	return port
}

// errPortTaken reports that another process grabbed the port between
// freePort and the server's listen.
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
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	// A short --keep-alive puts SSE comment lines into every stream that
	// lasts a while (slow tasks), so the clients must skip them.
	cmd := exec.CommandContext(ctx, binPath,
		append([]string{"serve", "--addr", addr, "--keep-alive", "250ms", "--log-level", "debug"}, args...)...)
	// Ask for a graceful stop first; WaitDelay escalates to SIGKILL.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = stopTimeout
	// Own process group, and SIGKILL if this test binary dies first (Linux).
	cmd.SysProcAttr = sysProcAttr()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout := &readyWriter{ready: make(chan string, 1)}
	cmd.Stdout = stdout
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start %v: %w", cmd.Args, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	s := &server{base: "http://" + addr, stderr: stderr}
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case line := <-stdout.ready:
		if !strings.HasPrefix(line, readyPrefix+addr+" ") {
			cancel()
			<-exited
			return nil, fmt.Errorf("server listens elsewhere than --addr %s: %q", addr, line)
		}
	case err := <-exited:
		cancel()
		if strings.Contains(stderr.String(), "address already in use") {
			return nil, fmt.Errorf("%w: %s", errPortTaken, addr)
		}
		return nil, fmt.Errorf("server exited before listening (%v); stderr:\n%s", err, stderr.String())
	case <-timer.C:
		cancel()
		<-exited
		return nil, fmt.Errorf("server did not print %q within %s; stderr:\n%s", readyPrefix, startTimeout, stderr.String())
	}

	t.Cleanup(func() {
		cancel()
		select {
		case err := <-exited:
			// Wait reports the cancellation itself even after a clean exit:
			// judge by the exit status.
			if ps := cmd.ProcessState; ps == nil || !ps.Success() {
				t.Errorf("server %s did not exit cleanly on SIGINT: %v (%v)", s.base, err, ps)
			}
		case <-time.After(2 * stopTimeout):
			t.Errorf("server %s did not exit after SIGINT and SIGKILL", s.base)
		}
		if t.Failed() || testing.Verbose() {
			t.Logf("server %s stderr:\n%s", s.base, s.stderr.String())
		}
	})
	return s, nil
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
