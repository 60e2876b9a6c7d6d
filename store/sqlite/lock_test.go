package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/a2abridge/a2abridge/store/sqlite"
)

// wantLocked checks that err is the refusal of an Open of path held by
// this process.
func wantLocked(t *testing.T, err error, path string) {
	t.Helper()
	var le *sqlite.LockedError
	if !errors.Is(err, sqlite.ErrLocked) || !errors.As(err, &le) {
		t.Fatalf("Open of a database in use: %v, want ErrLocked", err)
	}
	if le.Path != path || le.PID != os.Getpid() {
		t.Fatalf("LockedError{Path: %q, PID: %d}, want %q and this process, %d", le.Path, le.PID, path, os.Getpid())
	}
}

// TestOpenLocked: a second Open of a database in use fails at once with
// ErrLocked naming the path and the holder's pid, whether it asks for
// the database to itself or shared; once the first Store is closed, the
// database opens again.
func TestOpenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a.db")
	a := open(t, path, sqlite.Options{})
	for _, opts := range []sqlite.Options{{}, {Shared: true}} {
		s, err := sqlite.Open(path, opts)
		if err == nil {
			s.Close()
		}
		wantLocked(t, err, path)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := open(t, path, sqlite.Options{})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenShared: Stores opened with Shared have the database together,
// and keep a Store that wants it to itself out until the last one closes.
func TestOpenShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a.db")
	a := open(t, path, sqlite.Options{Shared: true})
	b := open(t, path, sqlite.Options{Shared: true})
	s, err := sqlite.Open(path, sqlite.Options{})
	if err == nil {
		s.Close()
	}
	wantLocked(t, err, path)
	a.Close()
	if s, err = sqlite.Open(path, sqlite.Options{}); err == nil {
		s.Close()
	}
	wantLocked(t, err, path)
	b.Close()
	open(t, path, sqlite.Options{}).Close()
}

// TestOpenFailureUnlocks: an Open that fails after taking the lock (here:
// the file is not a database) releases it.
func TestOpenFailureUnlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a.db")
	if err := os.WriteFile(path, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := sqlite.Open(path, sqlite.Options{}); err == nil || errors.Is(err, sqlite.ErrLocked) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of a file that is not a database: %v", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	open(t, path, sqlite.Options{}).Close()
}
