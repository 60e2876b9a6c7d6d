//go:build windows

package sqlite

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockOffsetHigh places the locked byte at offset 1<<62, far past the pid
// the file holds: Windows locks are mandatory, and a refused Open must
// still read that pid.
const lockOffsetHigh = 1 << 30

// lockFile takes a LockFileEx lock on f without waiting: exclusive, or
// shared if shared. It reports false if the lock is held in a
// conflicting mode (by another handle, in this process or another one).
// Windows releases it when the process ends.
func lockFile(f *os.File, shared bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if !shared {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	if err == windows.ERROR_LOCK_VIOLATION {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) error {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}
