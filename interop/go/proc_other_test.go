//go:build !linux

package interop

import "syscall"

// sysProcAttr: outside Linux there is no parent-death signal; the server is
// stopped by the test cleanups (and by exec.CommandContext).
func sysProcAttr() *syscall.SysProcAttr { return nil }
