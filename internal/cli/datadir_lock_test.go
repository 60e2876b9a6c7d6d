package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
)

// waitWorking waits until the task id at url is working (a generous
// limit, not a timing assertion).
func waitWorking(t *testing.T, url, id string) {
	t.Helper()
	var st string
	if !testutil.Poll(30*time.Second, func() bool {
		st = testutil.CallRPC(t, url, "tasks/get", fmt.Sprintf(`{"id":%q}`, id)).Result.Status.State
		if st != "working" && st != "submitted" {
			t.Fatalf("task %s: %q, want working", id, st)
		}
		return st == "working"
	}) {
		t.Fatalf("task %s: %q, want working", id, st)
	}
}

// TestServeDataDirLocked: a second `a2abridge serve` on the data directory
// of a running one exits 1 with one line naming the directory and the
// first one's pid, and the first one's running task goes on (a second
// server would have failed it as left by a dead process). Once the first
// is killed with SIGKILL, the kernel has released its lock: a third serve
// starts on the directory and fails the task left running, as after any
// crash.
func TestServeDataDirLocked(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	base := "http://" + addr
	first := startChild(t, "--data", dir, "--addr", addr)
	r := testutil.CallRPC(t, base+"/a2a/slow", "message/send", testutil.SendParams03("60", "lock-slow", `,"configuration":{"blocking":false}`))
	id := r.Result.ID
	if id == "" {
		t.Fatalf("message/send: %+v", r)
	}
	waitWorking(t, base+"/a2a/slow", id)

	second := startCLI(t, "serve", "--data", dir, "--addr", freeAddr(t))
	if !testutil.Poll(30*time.Second, func() bool {
		select {
		case <-second.done:
			return true
		default:
		}
		if strings.Contains(second.out.String(), "listening on") {
			t.Fatalf("a second serve started on the data directory in use: %q", second.out.String())
		}
		return false
	}) {
		t.Fatalf("the second serve did not exit; stdout %q stderr %q", second.out.String(), second.err.String())
	}
	want := fmt.Sprintf("a2abridge: the data directory %s is in use by another a2abridge process (pid %d); stop it or use another --data directory\n", dir, first.Cmd.Process.Pid)
	if second.code != ExitFailure || second.err.String() != want || second.out.String() != "" {
		t.Fatalf("second serve: exit %d, stdout %q, stderr %q; want exit %d and stderr %q", second.code, second.out.String(), second.err.String(), ExitFailure, want)
	}
	// The first server's task still runs, and the server still answers.
	waitWorking(t, base+"/a2a/slow", id)
	if r := testutil.CallRPC(t, base+"/a2a/echo", "message/send", testutil.SendParams03("still here", "lock-echo", "")); r.Result.Status.State != "completed" {
		t.Fatalf("echo on the first server after the refusal: %+v", r)
	}

	first.Kill()
	startChild(t, "--data", dir, "--addr", addr)
	r = testutil.CallRPC(t, base+"/a2a/slow", "tasks/get", fmt.Sprintf(`{"id":%q}`, id))
	if r.Result.Status.State != "failed" || r.Result.Status.Message == nil || r.Result.Status.Message.Parts[0].Text != server.RecoveryMessage {
		t.Fatalf("running task after kill -9 and restart: %+v", r.Result.Status)
	}
}
