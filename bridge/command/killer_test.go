//go:build unix

package command

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// startGroup starts `sleep 1000` in the process group pgid (0: its own)
// and returns it; the test kills and reaps it at the end.
func startGroup(t *testing.T, pgid int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// signalOf ends cmd with SIGUSR1 and returns the signal that ended it:
// SIGUSR1 unless another signal had come first.
func signalOf(t *testing.T, cmd *exec.Cmd) syscall.Signal {
	t.Helper()
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGUSR1)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("wait: %v", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() {
		t.Fatalf("exit status %v", ws)
	}
	return ws.Signal()
}

// Once the run's leader was reaped, a group with its id that is not the
// run's (the id was reused) gets no signal from the killer: neither
// SIGTERM nor the delayed SIGKILL.
func TestKillerSparesReusedGroup(t *testing.T) {
	for _, tracked := range []bool{true, false} {
		stranger := startGroup(t, 0)
		k := &killer{pgid: stranger.Process.Pid, grace: time.Hour, reaped: true, tracked: tracked}
		k.start()
		k.kill()
		if !k.over {
			t.Errorf("tracked=%v: the killer is not over", tracked)
		}
		if sig := signalOf(t, stranger); sig != syscall.SIGUSR1 {
			t.Errorf("tracked=%v: the stranger's group got %v", tracked, sig)
		}
	}
}

// When the leader is reaped and the group is empty, the pending SIGKILL
// is cancelled.
func TestKillerStopsOnEmptyGroup(t *testing.T) {
	leader := startGroup(t, 0)
	k := &killer{pgid: leader.Process.Pid, grace: time.Hour}
	k.start() // SIGTERM ends sleep
	k.reap(leader)
	if !k.over || k.timer.Stop() {
		t.Fatalf("over=%v: the SIGKILL is still pending", k.over)
	}
}

// A process the run left in its group still gets the SIGKILL after the
// leader was reaped.
func TestKillerKillsLeftover(t *testing.T) {
	leader := startGroup(t, 0)
	left := startGroup(t, leader.Process.Pid)
	k := &killer{pgid: leader.Process.Pid, grace: time.Hour}
	_ = leader.Process.Signal(syscall.SIGKILL)
	k.reap(leader)
	if k.over {
		t.Fatal("the killer is over with a process left in the group")
	}
	if runtime.GOOS == "linux" && (!k.tracked || len(k.members) != 1) {
		t.Errorf("tracked=%v members=%v, want the leftover", k.tracked, k.members)
	}
	k.kill()
	if !k.over || len(k.members) != 0 {
		t.Errorf("after SIGKILL: over=%v members=%v", k.over, k.members)
	}
	if sig := signalOf(t, left); sig != syscall.SIGKILL {
		t.Errorf("the leftover ended by %v, want SIGKILL", sig)
	}
}
