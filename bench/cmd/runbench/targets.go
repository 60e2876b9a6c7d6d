//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

// target is one server under test.
type target struct {
	key   string // short name for flags and logs
	name  string // name in the tables
	peer  bool   // a peer SDK (the "best peer" is the fastest of these)
	ours  bool   // a2abridge
	argv  []string
	dir   string
	path  string // JSON-RPC endpoint path
	needs string // what it needs that may be missing ("node")
	data  string // a data directory, emptied before every start

	cmd  *exec.Cmd
	url  string // JSON-RPC endpoint
	base string
	pid  int
	log  *os.File
	skip string // why it is not measured
}

var listening = regexp.MustCompile(`listening on (http://[^\s)]+)`)

// start runs the target's server and waits for its `listening on URL` line.
func (t *target) start(ctx context.Context, logDir string) error {
	if t.data != "" {
		if err := os.RemoveAll(t.data); err != nil {
			return err
		}
	}
	cmd := exec.Command(t.argv[0], t.argv[1:]...)
	cmd.Dir = t.dir
	dieWithParent(cmd)
	lf, err := os.OpenFile(filepath.Join(logDir, t.key+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	t.log = lf
	cmd.Stderr = lf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	t.cmd, t.pid = cmd, cmd.Process.Pid
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(lf, out)
	}()
	select {
	case base := <-found:
		t.base = base
		t.url = base + t.path
		return nil
	case <-time.After(60 * time.Second):
		t.stop()
		return fmt.Errorf("%s did not report its address within 60 s (log: %s)", t.name, lf.Name())
	case <-ctx.Done():
		t.stop()
		return ctx.Err()
	}
}

// restart stops the server and starts it again (with an empty store).
func (t *target) restart(ctx context.Context, logDir string) error {
	t.stop()
	return t.start(ctx, logDir)
}

// stop ends the server: SIGINT, then SIGKILL after 10 s.
func (t *target) stop() {
	if t.cmd == nil {
		return
	}
	_ = t.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- t.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = t.cmd.Process.Kill()
		<-done
	}
	t.cmd = nil
	if t.log != nil {
		t.log.Close()
	}
}

func run(dir string, stderr io.Writer, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v (in %s): %w", name, args, dir, err)
	}
	return nil
}

// build compiles a2abridge and the Go peers into bin, and installs the JS
// peer's locked dependencies when they are missing.
func build(benchDir, bin string, stderr io.Writer, js bool) (jsErr error, err error) {
	fmt.Fprintln(stderr, "building a2abridge and the Go peers…")
	if err := run(filepath.Dir(benchDir), stderr, "go", "build", "-o", filepath.Join(bin, "a2abridge"), "./cmd/a2abridge"); err != nil {
		return nil, err
	}
	if err := run(benchDir, stderr, "go", "build", "-o", bin+string(filepath.Separator), "./servers/baseline", "./servers/a2ago", "./servers/trpc"); err != nil {
		return nil, err
	}
	if !js {
		return nil, nil
	}
	if _, err := exec.LookPath("node"); err != nil {
		return errors.New("node is not installed"), nil
	}
	jsDir := filepath.Join(benchDir, "servers", "js")
	if _, err := os.Stat(filepath.Join(jsDir, "node_modules", "@a2a-js", "sdk", "package.json")); err != nil {
		fmt.Fprintln(stderr, "installing the JS peer's dependencies (npm ci)…")
		if err := run(jsDir, stderr, "npm", "ci", "--no-audit", "--no-fund"); err != nil {
			return err, nil
		}
	}
	return nil, nil
}

func targets(benchDir, bin, dataDir string) []*target {
	a2ab := filepath.Join(bin, "a2abridge")
	serve := []string{a2ab, "serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}
	return []*target{
		{key: "baseline", name: "net/http baseline", argv: []string{filepath.Join(bin, "baseline")}, path: "/a2a/echo"},
		{key: "memory", name: "**a2abridge** (memory)", ours: true, argv: append(append([]string{}, serve...), "--memory"), path: "/a2a/echo"},
		{key: "sqlite", name: "**a2abridge** (SQLite)", ours: true, argv: append(append([]string{}, serve...), "--data", dataDir), path: "/a2a/echo", data: dataDir},
		{key: "a2ago", name: "a2a-go v0.3.15", peer: true, argv: []string{filepath.Join(bin, "a2ago")}, path: "/a2a/echo"},
		{key: "trpc", name: "trpc-a2a-go v0.2.5", peer: true, argv: []string{filepath.Join(bin, "trpc")}, path: "/a2a/echo"},
		{key: "js", name: "@a2a-js/sdk 0.3.14", peer: true, argv: []string{"node", "server.mjs"}, dir: filepath.Join(benchDir, "servers", "js"), path: "/a2a/echo", needs: "node"},
	}
}
