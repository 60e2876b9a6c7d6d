//go:build unix && !aix && !hurd

package sqlite

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an flock(2) lock on f without waiting: exclusive, or
// shared if shared. It reports false if the lock is held in a
// conflicting mode. flock locks belong to the open file, so a second Open
// in the same process conflicts too, and the kernel releases them when
// the process ends, however it ends.
func lockFile(f *os.File, shared bool) (bool, error) {
	how := unix.LOCK_EX
	if shared {
		how = unix.LOCK_SH
	}
	return flock(f, how|unix.LOCK_NB)
}

func unlockFile(f *os.File) error {
	_, err := flock(f, unix.LOCK_UN)
	return err
}

func flock(f *os.File, how int) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if ferr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	if ferr == unix.EWOULDBLOCK {
		return false, nil
	}
	return ferr == nil, ferr
}
