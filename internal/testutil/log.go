package testutil

import (
	"bytes"
	"io"
	"log/slog"
	"sync"
)

// Logger returns a logger that formats records as text and writes them
// nowhere: the code under test runs its logging paths, the test output
// stays quiet.
func Logger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Buffer is a bytes.Buffer safe for concurrent writers and readers, for
// a child process's output or a logger's that a test reads while it runs.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Len returns the number of bytes written so far.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}
