//go:build linux

package command

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// waitExited waits until the process pid, our child, has exited, without
// reaping it (waitid with WNOWAIT): while it is a zombie its pid, and so
// its process group id, cannot be reused. It returns false when it could
// not wait (the caller then just reaps).
func waitExited(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil
	}
}

// member is a process found in a command's process group, held by a
// pidfd (which stays bound to that process, whatever pid reuse happens).
type member struct {
	pid, fd int
}

// inGroup reports whether m still runs and is in the process group pgid.
func (m member) inGroup(pgid int) bool {
	if !running(m.fd) {
		return false
	}
	// m.pid is m's until m is reaped, and it was running just before.
	g, err := unix.Getpgid(m.pid)
	return err == nil && g == pgid
}

func (m member) close() { _ = unix.Close(m.fd) }

// running reports whether the process of a pidfd has not exited (its
// pidfd is readable once it has).
func running(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n == 0
	}
}

// groupMembers returns the processes of the process group pgid, each
// held by a pidfd, found in /proc. tracked is false when they cannot be
// found that way (no /proc, no pidfd_open): the caller then does without.
func groupMembers(pgid int) (ms []member, tracked bool) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, false
	}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 || pgrpOf(pid) != pgid {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			for _, m := range ms {
				m.close()
			}
			return nil, false
		}
		// The pid may have been reused between the two looks: check that
		// the process the pidfd holds is in the group.
		m := member{pid: pid, fd: fd}
		if !m.inGroup(pgid) {
			m.close()
			continue
		}
		ms = append(ms, m)
	}
	return ms, true
}

// pgrpOf returns the process group of pid from /proc/PID/stat, or -1.
func pgrpOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	g, ok := statPgrp(b)
	if !ok {
		return -1
	}
	return g
}

// statPgrp returns the process group (the 5th field) of the contents of
// a /proc/PID/stat file (proc(5)): "PID (COMM) STATE PPID PGRP …", where
// COMM may hold spaces and parentheses, so the fields are counted from
// the last ')'.
func statPgrp(b []byte) (int, bool) {
	p, ok := statProc(b)
	if !ok || p.pgrp < 0 {
		return 0, false
	}
	return p.pgrp, true
}

// Bounds of freezing a run before its processes outside the group are
// looked for (freeze).
const (
	// stopWait is how long freeze waits for the processes it stopped to
	// be stopped: SIGSTOP takes effect when a process returns to user
	// mode, so one in an uninterruptible wait (state D) stops later.
	stopWait = 100 * time.Millisecond
	// strayRounds bounds the rounds of stopping the strays found and
	// looking again for what they started before they stopped.
	strayRounds = 8
)

// proc is one process of a /proc snapshot.
type proc struct {
	ppid, pgrp int
	state      byte // 'R', 'S', 'D', 'T', 't', 'Z', 'X'…
}

// stopped reports whether p can no longer run: stopped, traced or gone.
func (p proc) stopped() bool {
	switch p.state {
	case 'T', 't', 'Z', 'X', 'x':
		return true
	}
	return false
}

// procTable reads every process's parent, group and state from /proc; nil
// when /proc cannot be read.
func procTable() map[int]proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	t := make(map[int]proc, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		if p, ok := statProc(b); ok {
			t[pid] = p
		}
	}
	return t
}

// freeze stops the run whose process group is pgid and whose leader (pid
// pgid) is not reaped yet, and returns the run's processes outside the
// group (they called setsid or setpgid), each held by a pidfd and
// stopped too. The caller sends them and the group the signal it means
// to, then SIGCONT (thaw).
//
// Stopping first is what makes the look reliable: a running process can
// leave the group between the look and the group's signal, and its
// parent can exit meanwhile, which hides it (reparented away). The group
// gets SIGSTOP, and freeze waits (at most stopWait) until its processes
// are stopped; then no process of the group can leave it or fork, the
// leader cannot exit, and the parent links under it hold still. The
// processes found outside the group are stopped in turn, and looked under
// again for what they started meanwhile (at most strayRounds rounds).
// A process whose parent exited before the stop (a daemon that forked
// twice) is not found.
func freeze(pgid int) []member {
	_ = syscall.Kill(-pgid, syscall.SIGSTOP)
	inGroup := func(pid int, p proc) bool { return p.pgrp == pgid }
	t := waitStopped(inGroup)
	var out []member
	held := map[int]bool{}
	// Each round looks again under the leader as well as under the held
	// processes: one that was still leaving the group when the last
	// snapshot was read (a thread of it in setsid, or in an
	// uninterruptible wait) shows up outside it in the next. At least
	// two snapshots are read.
	for round := 0; round < strayRounds && t != nil; round++ {
		roots := []int{pgid}
		for pid := range held {
			roots = append(roots, pid)
		}
		found := strays(t, pgid, roots, held)
		if len(found) == 0 && round > 0 {
			break
		}
		for _, m := range found {
			m.signal(syscall.SIGSTOP)
			held[m.pid] = true
		}
		out = append(out, found...)
		t = waitStopped(func(pid int, p proc) bool { return held[pid] || inGroup(pid, p) })
	}
	return out
}

// thaw sends SIGCONT to the process group pgid and to ms (after freeze).
func thaw(pgid int, ms []member) {
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
	for _, m := range ms {
		m.signal(syscall.SIGCONT)
	}
}

// waitStopped reads /proc until every process that watched selects is
// stopped, at most stopWait, and returns the last snapshot (nil when
// /proc cannot be read).
func waitStopped(watched func(pid int, p proc) bool) map[int]proc {
	deadline := time.Now().Add(stopWait)
	for {
		t := procTable()
		if t == nil {
			return nil
		}
		all := true
		for pid, p := range t {
			if watched(pid, p) && !p.stopped() {
				all = false
				break
			}
		}
		if all || time.Now().After(deadline) {
			return t
		}
		time.Sleep(time.Millisecond)
	}
}

// strays returns the processes of snapshot t that descend from roots
// (pids the caller knows to be its run's: the leader before it is reaped,
// strays it holds pidfds of) and are not in the process group pgid, nor
// in skip: they left the group (setsid, setpgid), so a signal to the
// group misses them. Each is held by a pidfd. They are found by their
// parent links, so a process whose parent already exited (a daemon that
// forked twice) is not found: it was reparented elsewhere.
func strays(t map[int]proc, pgid int, roots []int, skip map[int]bool) []member {
	children := map[int][]int{}
	for pid, p := range t {
		children[p.ppid] = append(children[p.ppid], pid)
	}
	var out []member
	seen := map[int]bool{}
	for _, r := range roots {
		seen[r] = true
	}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if seen[c] {
				continue
			}
			seen[c] = true
			queue = append(queue, c)
			if t[c].pgrp == pgid || skip[c] {
				continue // the group's signal reaches it, or it is held
			}
			fd, err := unix.PidfdOpen(c, 0)
			if err != nil {
				continue
			}
			// The pid may have been reused since /proc was read: keep it
			// only if it is still a child of p.
			if now, ok := statProc(readStat(c)); !ok || now.ppid != p || !running(fd) {
				_ = unix.Close(fd)
				continue
			}
			out = append(out, member{pid: c, fd: fd})
		}
	}
	return out
}

func readStat(pid int) []byte {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return b
}

// statProc returns the state (3rd field), parent (4th) and process group
// (5th) of a /proc/PID/stat file's contents (see statPgrp).
func statProc(b []byte) (proc, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return proc{}, false
	}
	pp, err1 := strconv.Atoi(string(f[1]))
	g, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return proc{}, false
	}
	return proc{ppid: pp, pgrp: g, state: f[0][0]}, true
}

// signal sends sig to m's process through its pidfd (never to a process
// that reused its pid).
func (m member) signal(sig syscall.Signal) { _ = unix.PidfdSendSignal(m.fd, sig, nil, 0) }

// alive reports whether m's process still runs, and its pid then.
func (m member) alive() (int, bool) { return m.pid, running(m.fd) }
