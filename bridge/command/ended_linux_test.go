package command_test

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// ended waits until pid, a process that is not our child (a grandchild,
// reparented to init), has exited: its pidfd becomes readable then. The
// exec agent returns once the pipes a stopped process held are closed,
// which happens while the process exits, a moment before it is done.
func ended(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		// The bound only keeps a failing test from hanging.
		n, err := unix.Poll(fds, 30_000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll pidfd: %v", err)
		}
		if n == 0 {
			t.Fatalf("process %d still runs", pid)
		}
		return
	}
}
