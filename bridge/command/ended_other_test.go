//go:build unix && !linux

package command_test

import "testing"

// ended would check that pid, a grandchild, has exited; without pidfds
// there is no way to wait for a process that is not our child.
func ended(t *testing.T, pid int) { t.Logf("not checked: process %d has exited", pid) }
