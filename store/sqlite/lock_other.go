//go:build !(unix && !aix && !hurd) && !windows

package sqlite

import "os"

// lockFile does not lock on this system (no flock(2) or LockFileEx): Open
// always succeeds in taking the lock, so nothing stops two Stores from
// opening the same database here.
func lockFile(*os.File, bool) (bool, error) { return true, nil }

func unlockFile(*os.File) error { return nil }
