package sqlite

import (
	"context"
	"database/sql"
)

// WithBatchHook returns o with a hook called before COMMIT of every
// transaction holding n > 1 Appends; an error from it fails the transaction.
func WithBatchHook(o Options, hook func(n int) error) Options {
	o.batchHook = hook
	return o
}

// HoldWriter blocks the writer goroutine (inside a transaction of its own)
// until release is called, so that appends queued meanwhile share the
// next transaction.
func (s *Store) HoldWriter(t interface{ Fatal(...any) }) (release func()) {
	held, free := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.write(context.Background(), func(context.Context, *sql.Conn) error {
			close(held)
			<-free
			return nil
		})
	}()
	<-held
	return func() {
		close(free)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// MessageFilterLoaded waits until the message id filter has scanned the
// table and reports whether it is in use.
func (s *Store) MessageFilterLoaded() bool {
	<-s.msgs.Done()
	return s.msgs.Ready()
}

// MessageFilterAbsent reports whether the filter answers (agent, id)
// without a read.
func (s *Store) MessageFilterAbsent(agent, id string) bool { return s.msgs.Absent(agent, id) }
