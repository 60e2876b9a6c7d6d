package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/a2abridge/a2abridge/store"
)

// Ping checks a store that implements store.Pinger (it fails t if s does
// not): Ping answers nil while s is open, and store.ErrClosed after
// Close, which Ping calls.
func Ping(t *testing.T, s store.Store) {
	t.Helper()
	p, ok := s.(store.Pinger)
	if !ok {
		t.Fatalf("%T does not implement store.Pinger", s)
	}
	if err := p.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	_ = s.Close()
	if err := p.Ping(context.Background()); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Ping after Close: %v, want ErrClosed", err)
	}
}
