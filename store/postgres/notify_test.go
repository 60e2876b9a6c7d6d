package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/postgres"
)

// changes collects what a Watch reports.
type changes struct {
	mu     sync.Mutex
	last   map[string]int64
	resync int
	wake   chan struct{}
}

func watch(t *testing.T, s *postgres.Store) *changes {
	t.Helper()
	c := &changes{last: map[string]int64{}, wake: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Watch(ctx, func(ch store.Change) {
			c.mu.Lock()
			if ch.Resync {
				c.resync++
			} else if ch.Seq > c.last[ch.TaskID] {
				c.last[ch.TaskID] = ch.Seq
			}
			c.mu.Unlock()
			select {
			case c.wake <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// until waits (up to 10 s) for cond over what was reported.
func (c *changes) until(t *testing.T, what string, cond func(last map[string]int64, resync int) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		ok := cond(c.last, c.resync)
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-c.wake:
		case <-deadline:
			c.mu.Lock()
			defer c.mu.Unlock()
			t.Fatalf("%s: not reported within 10 s (seen %v, %d resyncs)", what, c.last, c.resync)
		}
	}
}

func openNotify(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{Notify: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func appendStatus(t *testing.T, s store.Store, id string, after int64) {
	t.Helper()
	snap := task(id, a2a.TaskStateWorking)
	ev := &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := s.Append(context.Background(), store.Append{TaskID: id, After: after, Records: []store.Record{{Event: ev}}, Snapshot: snap}); err != nil {
		t.Fatalf("append %s after %d: %v", id, after, err)
	}
}

// TestWatch: two stores on one schema (two replicas) learn of each
// other's appends, not of their own; a store on another schema hears
// nothing of them; each Watch starts with a resync.
func TestWatch(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openNotify(t, dsn), openNotify(t, dsn)
	other := openNotify(t, pgtest.DSN(t))
	ca, cb, co := watch(t, a), watch(t, b), watch(t, other)
	for _, c := range []*changes{ca, cb, co} {
		c.until(t, "the first resync", func(_ map[string]int64, r int) bool { return r >= 1 })
	}
	create(t, a, "t1")
	appendStatus(t, a, "t1", 1)
	cb.until(t, "b hears a's appends", func(l map[string]int64, _ int) bool { return l["t1"] == 2 })
	create(t, b, "t2")
	ca.until(t, "a hears b's create", func(l map[string]int64, _ int) bool { return l["t2"] == 1 })
	// Many appends: all reported, their last sequence numbers exact.
	for i := range 50 {
		id := fmt.Sprintf("m%02d", i)
		create(t, a, id)
		appendStatus(t, a, id, 1)
		appendStatus(t, a, id, 2)
	}
	cb.until(t, "b hears 50 tasks", func(l map[string]int64, _ int) bool {
		for i := range 50 {
			if l[fmt.Sprintf("m%02d", i)] != 3 {
				return false
			}
		}
		return true
	})
	ca.mu.Lock()
	_, own := ca.last["t1"]
	ca.mu.Unlock()
	co.mu.Lock()
	heard := len(co.last)
	co.mu.Unlock()
	if own || heard != 0 {
		t.Fatalf("a heard its own append (%v), or another schema heard %d tasks", own, heard)
	}
}

// TestWatchWithoutNotify: a Store opened without Options.Notify neither
// sends nor listens: Watch returns at once.
func TestWatchWithoutNotify(t *testing.T) {
	s := open(t, pgtest.DSN(t))
	done := make(chan struct{})
	go func() { s.Watch(context.Background(), func(store.Change) {}); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Watch of a store without Notify did not return")
	}
}

// TestWatchEndsAtClose: Close ends a Watch in progress.
func TestWatchEndsAtClose(t *testing.T) {
	s, err := postgres.Open(context.Background(), pgtest.DSN(t), postgres.Options{Notify: true})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { s.Watch(context.Background(), func(store.Change) {}); close(done) }()
	time.Sleep(50 * time.Millisecond)
	s.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not end at Close")
	}
}

// TestWatchQuietConnection: while no notification comes, Watch pings its
// connection (here every 50 ms instead of 30 s) and keeps it: several
// quiet periods later, an append is still heard, with no resync between.
func TestWatchQuietConnection(t *testing.T) {
	old := *postgres.ListenPing
	*postgres.ListenPing = 50 * time.Millisecond
	t.Cleanup(func() { *postgres.ListenPing = old })
	dsn := pgtest.DSN(t)
	a, b := openNotify(t, dsn), openNotify(t, dsn)
	cb := watch(t, b)
	cb.until(t, "the first resync", func(_ map[string]int64, r int) bool { return r >= 1 })
	time.Sleep(400 * time.Millisecond)
	create(t, a, "quiet")
	cb.until(t, "b hears a's create after quiet periods", func(l map[string]int64, _ int) bool { return l["quiet"] == 1 })
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.resync != 1 {
		t.Fatalf("%d resyncs: the quiet connection was replaced", cb.resync)
	}
}
