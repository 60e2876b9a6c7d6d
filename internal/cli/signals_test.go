package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// cliProc is `a2abridge ARGS` in a child process (this test binary, whose
// TestMain runs Main as cmd/a2abridge does), with its stdin a pipe.
type cliProc struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	out, err testutil.Buffer
	done     chan struct{}
	code     int
}

func startCLI(t *testing.T, args ...string) *cliProc {
	t.Helper()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	p := &cliProc{done: make(chan struct{})}
	p.cmd = childCommand(args...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	in, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.stdin = in
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p
}

func (p *cliProc) signal(t *testing.T, s os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(s); err != nil {
		t.Fatal(err)
	}
}

func (p *cliProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(30 * time.Second):
		t.Fatalf("a2abridge did not exit; stdout %q stderr %q", p.out.String(), p.err.String())
		return 0
	}
}

var followRe = regexp.MustCompile(`follow it: a2abridge resubscribe (\S+) (\S+)(?: --from (\d+))?\n`)
var cancelRe = regexp.MustCompile(`cancel it: a2abridge cancel (\S+) (\S+)\n`)

// Ctrl-C during `stream` stops following, exits 130 and prints the exact
// commands to continue; both work.
func TestCtrlCStreamProcess(t *testing.T) {
	ts, _ := testHost(t)
	p := startCLI(t, "stream", ts.URL+"/a2a/slow", "30", "--human")
	waitFor(t, &p.out, "progress:", 2)
	p.signal(t, os.Interrupt)
	if code := p.wait(t); code != ExitInterrupted {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitInterrupted, p.err.String())
	}
	errs := p.err.String()
	m, c := followRe.FindStringSubmatch(errs), cancelRe.FindStringSubmatch(errs)
	if m == nil || c == nil || m[3] == "" || !strings.Contains(errs, "interrupted") {
		t.Fatalf("stderr lacks the commands to continue: %q", errs)
	}
	if m[1] != ts.URL+"/a2a/slow" || c[1] != m[1] || c[2] != m[2] || !strings.Contains(p.out.String(), "#"+m[3]+" ") {
		t.Fatalf("commands %q / %q do not name the stream's URL, task and last event", m[0], c[0])
	}
	// The printed resubscribe continues right after the last event shown.
	out, _, code := run(t, "", "resubscribe", m[1], m[2], "--from", m[3], "--json", "--timeout", "300ms")
	_, ids := streamLines(t, out, true)
	if code != ExitTransport || ids[0] != fmt.Sprint(atoi(t, m[3])+1) {
		t.Fatalf("resubscribe --from %s: exit %d, first id %q: %s", m[3], code, ids[0], out)
	}
	out, errs, code = run(t, "", "cancel", c[1], c[2], "--json")
	if code != ExitOK || lines(t, out)[0].Status.State != "canceled" {
		t.Fatalf("printed cancel command: exit %d %s %s", code, out, errs)
	}
}

func atoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// In chat, Ctrl-C during a turn stops that turn only: the hint is printed,
// the prompt comes back and the next line works (no "interrupt signal
// received"); Ctrl-C at the idle prompt exits 130.
func TestCtrlCChatProcess(t *testing.T) {
	ts, _ := testHost(t)
	p := startCLI(t, "chat", ts.URL+"/a2a/slow")
	waitFor(t, &p.out, "you> ", 1)
	fmt.Fprintln(p.stdin, "30")
	waitFor(t, &p.out, "progress:", 1)
	p.signal(t, os.Interrupt)
	waitFor(t, &p.err, "cancel it: a2abridge cancel", 1)
	waitFor(t, &p.out, "you> ", 2)
	fmt.Fprintln(p.stdin, "0")
	waitFor(t, &p.out, "[completed]", 1)
	waitFor(t, &p.out, "you> ", 3)
	p.signal(t, os.Interrupt)
	if code := p.wait(t); code != ExitInterrupted {
		t.Fatalf("Ctrl-C at the prompt: exit %d, want %d; stdout %q stderr %q", code, ExitInterrupted, p.out.String(), p.err.String())
	}
	out, errs := p.out.String(), p.err.String()
	if strings.Contains(out+errs, "interrupt signal received") || strings.Contains(out, "agent error") {
		t.Fatalf("the turn after Ctrl-C failed: stdout %q stderr %q", out, errs)
	}
	if m := followRe.FindStringSubmatch(errs); m == nil {
		t.Fatalf("no hint after the interrupted turn: %q", errs)
	}
	// The interrupted task goes on: the second turn was a new task.
	if strings.Count(out, "working for") != 2 {
		t.Fatalf("want two tasks (30s then 0s): %q", out)
	}
}

// Ctrl-C during a blocking send stops waiting; against a server that
// declares the event log extension, the task's id is found (a repeat of
// the same messageId, non-blocking) and printed.
func TestCtrlCBlockingSendProcess(t *testing.T) {
	ts, seen := testHost(t)
	p := startCLI(t, "send", ts.URL+"/a2a/slow", "30", "--human")
	if !testutil.Poll(30*time.Second, func() bool {
		n, _ := seen.Load("POST")
		return n != nil && n.(*atomic.Int64).Load() > 0
	}) {
		t.Fatal("message/send never arrived")
	}
	time.Sleep(200 * time.Millisecond) // let the task start
	p.signal(t, os.Interrupt)
	if code := p.wait(t); code != ExitInterrupted {
		t.Fatalf("exit %d; stderr %q", code, p.err.String())
	}
	c := cancelRe.FindStringSubmatch(p.err.String())
	if c == nil || !strings.Contains(p.err.String(), "is working") {
		t.Fatalf("no task id after Ctrl-C: %q", p.err.String())
	}
	out, _, code := run(t, "", "get", c[1], c[2], "--json")
	got := lines(t, out)[0]
	if code != ExitOK || got.Status.State != "working" || len(got.History) == 0 {
		t.Fatalf("the task named: %d %s", code, out)
	}
	// One message, one task: the lookup did not send it twice.
	if strings.Count(out, `"role":"ROLE_USER"`) != 1 {
		t.Fatalf("the message was processed twice: %s", out)
	}
	run(t, "", "cancel", c[1], c[2])
}

// SIGTERM stops a client command with 143 and the same hint.
func TestSIGTERMStopsStream(t *testing.T) {
	ts, _ := testHost(t)
	sigs := make(chan os.Signal, 1)
	var out, errb testutil.Buffer
	p := Program{Stdout: &out, Stderr: &errb, Signals: sigs}
	done := make(chan int, 1)
	go func() { done <- p.Run(context.Background(), []string{"stream", ts.URL + "/a2a/slow", "30"}) }()
	waitFor(t, &out, "progress:", 1)
	sigs <- syscall.SIGTERM
	select {
	case code := <-done:
		if code != 128+int(syscall.SIGTERM) || !cancelRe.MatchString(errb.String()) {
			t.Fatalf("exit %d, stderr %q", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("stream did not stop")
	}
}

// A second Ctrl-C while the first is still being handled (here: the task
// lookup after an interrupted blocking send hangs) exits at once.
func TestSecondCtrlCExitsAtOnce(t *testing.T) {
	release := make(chan struct{})
	posts := make(chan struct{}, 10)
	var ts *httptest.Server
	ts = testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"name":"hang","description":"d","url":"%s","version":"1","protocolVersion":"0.3.0","capabilities":{"extensions":[{"uri":%q}]},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`, ts.URL, a2a.ExtensionEventLog)
			return
		}
		posts <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "released", http.StatusServiceUnavailable)
	}))
	var once sync.Once
	defer once.Do(func() { close(release) })
	sigs := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	var errb testutil.Buffer
	p := Program{Stdout: io.Discard, Stderr: &errb, Signals: sigs, Exit: func(code int) {
		exited <- code
		once.Do(func() { close(release) })
	}}
	done := make(chan int, 1)
	go func() { done <- p.Run(context.Background(), []string{"send", ts.URL, "hi"}) }()
	<-posts // the send waits
	sigs <- os.Interrupt
	<-posts // the lookup waits too
	select {
	case <-exited:
		t.Fatal("the first Ctrl-C exited at once")
	default:
	}
	sigs <- os.Interrupt
	select {
	case code := <-exited:
		if code != ExitInterrupted {
			t.Fatalf("second Ctrl-C: exit %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second Ctrl-C did not exit")
	}
	if code := <-done; code != ExitInterrupted {
		t.Fatalf("Run: %d %s", code, errb.String())
	}
}

// The router gives each SIGINT to the innermost waiter and the base
// handler back once an inner one is gone.
func TestInterruptRouting(t *testing.T) {
	var got []string
	var exits []int
	in := &interrupts{exit: func(c int) { exits = append(exits, c) }}
	in.push(func(os.Signal) { got = append(got, "base") })
	popPrompt := in.push(func(os.Signal) { got = append(got, "prompt") })
	popTurn := in.push(func(os.Signal) { got = append(got, "turn") })
	in.deliver(os.Interrupt)
	popTurn()
	popTurn2 := in.push(func(os.Signal) { got = append(got, "turn2") })
	in.deliver(syscall.SIGTERM) // always the base handler
	popTurn2()
	in.deliver(os.Interrupt)
	popPrompt()
	in.deliver(os.Interrupt) // the base already fired (SIGTERM): exit
	if strings.Join(got, ",") != "turn,base,prompt" || len(exits) != 1 || exits[0] != ExitInterrupted {
		t.Fatalf("handlers %v, exits %v", got, exits)
	}
}
