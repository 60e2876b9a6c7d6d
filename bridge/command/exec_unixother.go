//go:build unix && !linux

package command

import "syscall"

// waitExited would wait for pid's exit without reaping it; here it does
// not (the caller then just reaps).
func waitExited(pid int) bool { return false }

// member is a process of a command's process group; there is none here:
// without pidfds, groupMembers does not track them.
type member struct{}

func (member) inGroup(pgid int) bool { return false }
func (member) close()                {}

// groupMembers cannot track processes here (no /proc, no pidfd).
func groupMembers(pgid int) ([]member, bool) { return nil, false }

// proc would be a process of a /proc snapshot; there is none here.
type proc struct{}

// procTable cannot read processes here (no /proc).
func procTable() map[int]proc { return nil }

// freeze would stop the run and find its processes outside the group;
// here it does neither: a process that left the command's process group
// is not signalled.
func freeze(pgid int) []member { return nil }

// thaw has nothing to continue here (freeze stops nothing).
func thaw(pgid int, ms []member) {}

// strays cannot be found here (no /proc, no pidfd).
func strays(t map[int]proc, pgid int, roots []int, skip map[int]bool) []member { return nil }

func (member) signal(sig syscall.Signal) {}
func (member) alive() (int, bool)        { return 0, false }
