//go:build linux || darwin || freebsd || netbsd || openbsd

package h1

import "syscall"

// alive reports whether an idle connection is still open: a peek at the
// socket that may not wait finds nothing to read. A server that closed
// the connection left EOF (or a reset) there; one that sent something
// unasked is not one to reuse either. One system call, no wait.
func (c *conn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && open
}
