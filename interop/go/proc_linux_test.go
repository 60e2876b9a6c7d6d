package interop

import "syscall"

// sysProcAttr puts the server in its own process group and has the kernel
// SIGKILL it if the test binary dies without running its cleanups.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
