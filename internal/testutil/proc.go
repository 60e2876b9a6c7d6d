package testutil

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Process is a child process started by Start, with its output kept.
type Process struct {
	Cmd    *exec.Cmd
	Stdout *Buffer
	Stderr *Buffer
	// Ready is the rest of the first stdout line that contained the ready
	// text, after that text ("http://127.0.0.1:PORT" after "listening on ").
	Ready string

	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
}

// readyWriter keeps a process's stdout and sends the rest of the first
// complete line that contains ready, after ready, on found.
type readyWriter struct {
	*Buffer
	ready string
	once  sync.Once
	found chan string
}

func (w *readyWriter) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	out := w.Buffer.String()
	if i := strings.Index(out, w.ready); i >= 0 {
		if j := strings.IndexByte(out[i:], '\n'); j >= 0 {
			w.once.Do(func() { w.found <- strings.TrimSuffix(out[i+len(w.ready):i+j], "\r") })
		}
	}
	return n, err
}

// Start starts cmd with its stdout and stderr kept (any cmd.Stdout or
// cmd.Stderr set before also gets a copy) and waits up to timeout for a
// stdout line that contains ready. It returns the process with Ready set;
// if the process exits first or timeout passes it kills the process and
// returns an error that holds its stderr. A cmd.WaitDelay of 0 becomes
// 10 s. The caller stops the process
// (Stop, or cmd's context) and waits for it (Wait).
func Start(cmd *exec.Cmd, ready string, timeout time.Duration) (*Process, error) {
	if cmd.WaitDelay == 0 {
		// Wait returns this long after the process exits even when a
		// child of it still holds its output open.
		cmd.WaitDelay = 10 * time.Second
	}
	p := &Process{Cmd: cmd, Stdout: &Buffer{}, Stderr: &Buffer{}, exited: make(chan struct{})}
	w := &readyWriter{Buffer: p.Stdout, ready: ready, found: make(chan string, 1)}
	if cmd.Stdout != nil {
		cmd.Stdout = teeWriter{w, cmd.Stdout}
	} else {
		cmd.Stdout = w
	}
	if cmd.Stderr != nil {
		cmd.Stderr = teeWriter{p.Stderr, cmd.Stderr}
	} else {
		cmd.Stderr = p.Stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %v: %w", cmd.Args, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case p.Ready = <-w.found:
		return p, nil
	case <-p.exited:
		return p, fmt.Errorf("%s exited before it printed %q (%v); stderr:\n%s", cmd.Path, ready, p.err, p.Stderr)
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-p.exited
		return p, fmt.Errorf("%s did not print %q within %s; stderr:\n%s", cmd.Path, ready, timeout, p.Stderr)
	}
}

type teeWriter [2]interface{ Write([]byte) (int, error) }

func (t teeWriter) Write(b []byte) (int, error) {
	n, err := t[0].Write(b)
	if err != nil {
		return n, err
	}
	return t[1].Write(b)
}

// Exited is closed once the process has exited and Wait's result is known.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Wait waits up to timeout for the process to exit. It reports whether
// it did, and cmd.Wait's error if so.
func (p *Process) Wait(timeout time.Duration) (bool, error) {
	select {
	case <-p.exited:
		return true, p.err
	case <-time.After(timeout):
		return false, nil
	}
}

// Kill kills the process and waits for it to exit.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.exited
}
