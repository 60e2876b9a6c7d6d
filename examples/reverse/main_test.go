package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// childEnv makes the test binary run the example's main (with the
// arguments in the variable, \x1f-separated), so tests can kill it.
const childEnv = "REVERSE_TEST_CHILD"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(childEnv); ok {
		os.Args = append([]string{"reverse"}, strings.Split(args, "\x1f")...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestReverseAgent(t *testing.T) {
	h, eng, err := NewServer(context.Background(), memory.New(), Reverse{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	ts := httptest.NewServer(h)
	defer ts.Close()
	_, b := testutil.Post(t, ts.URL+"/",
		`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"one two three"}]}}}`)
	for _, want := range []string{`"state":"completed"`, `"parts":[{"kind":"text","text":"three two one "}]`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("response lacks %s:\n%s", want, b)
		}
	}
	_, cb := testutil.Get(t, ts.URL+"/.well-known/agent-card.json")
	if !strings.Contains(string(cb), `"url":"`+ts.URL+`/a2a/reverse"`) {
		t.Fatalf("card url is not reachable address: %s", cb)
	}
}

type child struct {
	cmd    *exec.Cmd
	proc   *testutil.Process
	base   string
	stderr *testutil.Buffer
}

// start runs the example as its own process on a free 127.0.0.1 port
// (it picks it: -addr 127.0.0.1:0) and waits until it listens.
func start(t *testing.T, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join(append([]string{"-addr", "127.0.0.1:0"}, args...), "\x1f"))
	p, err := testutil.Start(cmd, "listening on ", 30*time.Second)
	if err != nil {
		t.Fatalf("reverse: %v", err)
	}
	t.Cleanup(p.Kill)
	return &child{cmd: cmd, proc: p, base: p.Ready, stderr: p.Stderr}
}

// exited waits (bounded) for the child to exit and returns its status.
func (c *child) exited(t *testing.T) int {
	t.Helper()
	exited, err := c.proc.Wait(30 * time.Second)
	if !exited {
		t.Fatalf("reverse did not exit: %s", c.stderr)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// stream posts a streaming JSON-RPC request and returns its events as they
// arrive; the channel closes when the stream ends, cleanly or cut.
func stream(t *testing.T, url, method, params string, lastEventID string) <-chan testutil.WireTask {
	t.Helper()
	var hdr []string
	if lastEventID != "" {
		hdr = []string{"Last-Event-ID", lastEventID}
	}
	resp := testutil.Open(t, testutil.NewRequest(t, context.Background(), http.MethodPost, url, testutil.RPCBody(method, params), hdr...))
	ch := make(chan testutil.WireTask, 256)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		rd := sse.NewReader(resp.Body)
		for {
			ev, err := rd.Next()
			if err != nil {
				return
			}
			var f struct {
				Result testutil.WireTask `json:"result"`
			}
			if json.Unmarshal(ev.Data, &f) == nil {
				ch <- f.Result
			}
		}
	}()
	return ch
}

func get(t *testing.T, base, id string) testutil.WireTask {
	t.Helper()
	return testutil.CallRPC(t, base+"/", "tasks/get", fmt.Sprintf(`{"id":%q}`, id)).Result
}

func words(n int) string { return strings.TrimSpace(strings.Repeat("w ", n)) }

// TestKill9LeavesNoTaskWorking kills the SDK-built server (this example,
// not `a2abridge serve`) with SIGKILL in the middle of a streamed task and
// of a blocking send, restarts it on the same data directory, and checks
// that nothing waits forever: both clients see their connection end, the
// tasks are failed with server.RecoveryMessage, and a resubscription ends
// with that final status.
func TestKill9LeavesNoTaskWorking(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	c := start(t, "-data", dir, "-word-delay", "100ms")
	events := stream(t, c.base+"/", "message/stream", testutil.SendParams03(words(300), "k-stream", ""), "")
	var task testutil.WireTask
	var seen int
	for r := range events {
		seen++
		if r.Kind == "task" {
			task = r
		}
		if seen == 4 { // the task, working, two words: mid-task
			break
		}
	}
	if task.ID == "" {
		t.Fatal("no task in the stream")
	}
	sendDone := make(chan error, 1)
	go func() {
		resp, err := http.Post(c.base+"/", "application/json", strings.NewReader(
			`{"jsonrpc":"2.0","id":2,"method":"message/send","params":`+testutil.SendParams03(words(300), "k-send", "")+`}`))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		sendDone <- err
	}()
	// The send's task is stored and working once the same message sent
	// again without waiting answers it (a repeated messageId is answered
	// from its task).
	var f struct {
		Result testutil.WireTask `json:"result"`
	}
	if !testutil.Poll(5*time.Second, func() bool {
		_, b := testutil.Post(t, c.base+"/",
			`{"jsonrpc":"2.0","id":4,"method":"message/send","params":`+testutil.SendParams03(words(300), "k-send", `,"configuration":{"blocking":false}`)+`}`)
		f.Result = testutil.WireTask{}
		_ = json.Unmarshal(b, &f)
		return f.Result.Status.State == "working"
	}) {
		t.Fatalf("the blocking send's task is not working: %+v", f.Result)
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.Drain(t, events, 10*time.Second) // the cut stream ends: the client is not left hanging
	select {
	case err := <-sendDone:
		if err == nil {
			t.Fatal("the blocking send was answered although its server was killed mid-task")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking send still waits after its server was killed")
	}
	c.proc.Wait(30 * time.Second)

	c2 := start(t, "-data", dir)
	got := get(t, c2.base, task.ID)
	if got.Status.State != "failed" || got.StatusText() != server.RecoveryMessage {
		t.Fatalf("after restart the streamed task is %q (%q), want failed with the recovery message", got.Status.State, got.StatusText())
	}
	// The task of the blocking send: found by its messageId (a repeated
	// send answers the task the first one created).
	_, b := testutil.Post(t, c2.base+"/",
		`{"jsonrpc":"2.0","id":3,"method":"message/send","params":`+testutil.SendParams03(words(300), "k-send", "")+`}`)
	var sent struct {
		Result testutil.WireTask `json:"result"`
	}
	_ = json.Unmarshal(b, &sent)
	if sent.Result.Status.State != "failed" || sent.Result.StatusText() != server.RecoveryMessage {
		t.Fatalf("after restart the blocking send's task answers %s", b)
	}
	// A client resuming the stream ends with the final failed status.
	rs := testutil.Drain(t, stream(t, c2.base+"/", "tasks/resubscribe", fmt.Sprintf(`{"id":%q}`, task.ID), "3"), 10*time.Second)
	if len(rs) == 0 || !rs[len(rs)-1].Final || rs[len(rs)-1].Status.State != "failed" {
		t.Fatalf("resubscription after the crash ended with %+v", rs)
	}
}

// TestGracefulShutdown: SIGTERM lets a short task finish within the grace
// period and fails a long one when it ends, each stream getting its final
// event; the process exits 0 without an ERROR log line.
func TestGracefulShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	c := start(t, "-data", dir, "-word-delay", "100ms", "-grace", "5s")
	short := stream(t, c.base+"/", "message/stream", testutil.SendParams03(words(5), "g-short", ""), "")
	long := stream(t, c.base+"/", "message/stream", testutil.SendParams03(words(300), "g-long", ""), "")
	var longTask testutil.WireTask
	for r := range long {
		if r.Kind == "task" {
			longTask = r
			break
		}
	}
	<-short // the short task has started
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	// During the grace period: new messages are refused, with an error.
	if resp, err := http.Post(c.base+"/", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"message/send","params":`+testutil.SendParams03("x", "g-new", "")+`}`)); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"error"`) {
			t.Fatalf("a new message during shutdown was accepted: %s", b)
		}
	}
	ss := testutil.Drain(t, short, 20*time.Second)
	if len(ss) == 0 {
		t.Fatal("the short task's stream ended without an event")
	}
	if last := ss[len(ss)-1]; !last.Final || last.Status.State != "completed" {
		t.Fatalf("the short task's stream ended with %+v, want completed within the grace period", last)
	}
	ls := testutil.Drain(t, long, 20*time.Second)
	if len(ls) == 0 {
		t.Fatal("the long task's stream ended without an event")
	}
	if last := ls[len(ls)-1]; !last.Final || last.Status.State != "failed" || !strings.Contains(last.StatusText(), "shut down") {
		t.Fatalf("the long task's stream ended with %+v, want failed by the shutdown", last)
	}
	if code := c.exited(t); code != 0 {
		t.Fatalf("exit status %d: %s", code, c.stderr)
	}
	if strings.Contains(c.stderr.String(), "level=ERROR") {
		t.Fatalf("an ordinary shutdown logged an error:\n%s", c.stderr)
	}
	c2 := start(t, "-data", dir)
	if got := get(t, c2.base, longTask.ID); got.Status.State != "failed" || !strings.Contains(got.StatusText(), "shut down") {
		t.Fatalf("after restart the long task is %q (%q)", got.Status.State, got.StatusText())
	}
}
