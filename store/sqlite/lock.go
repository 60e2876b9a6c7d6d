package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// ErrLocked matches (errors.Is) the error Open returns when another Store,
// in this process or another one, has the same database file open: a
// *LockedError naming the file and the holder's pid.
var ErrLocked = errors.New("sqlite: database in use by another Store")

// LockedError is the error Open returns when another Store holds the lock
// of the database file Path (the path given to Open). PID is the process
// id of the holder as written in the lock file (os.Getpid(), the caller's
// own pid when the holder is in the same process), or 0 if it could not
// be read. errors.Is(err, ErrLocked) reports true for it.
type LockedError struct {
	Path string
	PID  int
}

func (e *LockedError) Error() string {
	if e.PID <= 0 {
		return fmt.Sprintf("sqlite: database %s is in use by another process", e.Path)
	}
	return fmt.Sprintf("sqlite: database %s is in use by process %d", e.Path, e.PID)
}

// Is reports whether target is ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// LockSuffix is appended to the database path to name its lock file,
// created next to it by Open and left in place by Close.
const LockSuffix = ".lock"

// dbLock is a held lock on a database: its lock file, open and locked
// (lockFile) until release.
type dbLock struct {
	f      *os.File
	shared bool
}

// acquireLock takes the lock of the database at path without waiting,
// exclusive unless shared, and writes this process's pid into the lock
// file. It fails with a *LockedError if the lock is held in a conflicting
// mode.
func acquireLock(path string, shared bool) (*dbLock, error) {
	name := path + LockSuffix
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock %s: %v", path, err)
	}
	held, err := lockFile(f, shared)
	if err != nil || !held {
		pid := 0
		if err == nil {
			pid = readPID(f)
		}
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("sqlite: lock %s: %v", name, err)
		}
		return nil, &LockedError{Path: path, PID: pid}
	}
	// Write over the previous holder's pid, then cut what is left of it: a
	// reader sees a whole pid, never an empty file (but right after the
	// file was created).
	b := strconv.AppendInt(nil, int64(os.Getpid()), 10)
	b = append(b, '\n')
	if _, err = f.WriteAt(b, 0); err == nil {
		err = f.Truncate(int64(len(b)))
	}
	if err != nil {
		_ = unlockFile(f)
		f.Close()
		return nil, fmt.Errorf("sqlite: lock %s: write pid: %v", name, err)
	}
	return &dbLock{f: f, shared: shared}, nil
}

// readPID returns the pid on the first line of the lock file f, or 0.
func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	line, _, _ := bytes.Cut(b[:n], []byte("\n"))
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// release empties the lock file (an exclusive holder's: shared holders
// may remain) and unlocks it. The file stays: removing it would let a
// process that opened it before the removal lock a file nobody else sees.
func (l *dbLock) release() error {
	if l == nil {
		return nil
	}
	if !l.shared {
		_ = l.f.Truncate(0)
	}
	err := unlockFile(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
