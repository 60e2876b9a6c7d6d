//go:build linux

package command

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"

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
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 {
		return 0, false
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil || g < 0 {
		return 0, false
	}
	return g, true
}

// strays returns the processes that descend from the running processes
// roots (pids the caller knows to be its run's: the leader before it is
// reaped, strays it holds pidfds of and that still run) and are not in
// the process group pgid: they left it (setsid, setpgid), so a signal to
// the group misses them. Each is held by a pidfd. They are found by their
// parent links in /proc, so a process whose parent already exited (a
// daemon that forked twice) is not found: it was reparented elsewhere.
func strays(pgid int, roots []int) []member {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	group := map[int]int{}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		ppid, pgrp, ok := statParent(b)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], pid)
		group[pid] = pgrp
	}
	var out []member
	seen := map[int]bool{}
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
			if group[c] == pgid {
				continue // the group's signal reaches it
			}
			fd, err := unix.PidfdOpen(c, 0)
			if err != nil {
				continue
			}
			// The pid may have been reused since /proc was read: keep it
			// only if it is still a child of p.
			if pp, _, ok := statParent(readStat(c)); !ok || pp != p || !running(fd) {
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

// statParent returns the parent (4th field) and the process group (5th)
// of a /proc/PID/stat file's contents (see statPgrp).
func statParent(b []byte) (ppid, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 {
		return 0, 0, false
	}
	pp, err1 := strconv.Atoi(string(f[1]))
	g, err2 := strconv.Atoi(string(f[2]))
	return pp, g, err1 == nil && err2 == nil
}

// signal sends sig to m's process through its pidfd (never to a process
// that reused its pid).
func (m member) signal(sig syscall.Signal) { _ = unix.PidfdSendSignal(m.fd, sig, nil, 0) }

// alive reports whether m's process still runs, and its pid then.
func (m member) alive() (int, bool) { return m.pid, running(m.fd) }
