package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/postgres"
	"github.com/a2abridge/a2abridge/store/storetest"
)

func openNotify(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	return pgtest.OpenDSN(t, dsn, postgres.Options{Notify: true})
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
// other's appends (here appends naming no runner: each is notified), not
// of their own; a store on another schema hears nothing of them; each
// Watch starts with a resync.
func TestWatch(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openNotify(t, dsn), openNotify(t, dsn)
	other := openNotify(t, pgtest.DSN(t))
	ca, cb, co := storetest.WatchChanges(t, a), storetest.WatchChanges(t, b), storetest.WatchChanges(t, other)
	for _, c := range []*storetest.Changes{ca, cb, co} {
		c.Until(t, "the first resync", func(_ map[string]int64, r int) bool { return r >= 1 })
	}
	create(t, a, "t1")
	appendStatus(t, a, "t1", 1)
	cb.Until(t, "b hears a's appends", func(l map[string]int64, _ int) bool { return l["t1"] == 2 })
	create(t, b, "t2")
	appendStatus(t, b, "t2", 1)
	ca.Until(t, "a hears b's append", func(l map[string]int64, _ int) bool { return l["t2"] == 2 })
	// Many appends: all reported, their last sequence numbers exact.
	for i := range 50 {
		id := fmt.Sprintf("m%02d", i)
		create(t, a, id)
		appendStatus(t, a, id, 1)
		appendStatus(t, a, id, 2)
	}
	cb.Until(t, "b hears 50 tasks", func(l map[string]int64, _ int) bool {
		for i := range 50 {
			if l[fmt.Sprintf("m%02d", i)] != 3 {
				return false
			}
		}
		return true
	})
	_, own := ca.Seen("t1")
	heard := co.Tasks()
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
	cb := storetest.WatchChanges(t, b)
	cb.Until(t, "the first resync", func(_ map[string]int64, r int) bool { return r >= 1 })
	time.Sleep(400 * time.Millisecond)
	create(t, a, "quiet")
	appendStatus(t, a, "quiet", 1)
	cb.Until(t, "b hears a's append after quiet periods", func(l map[string]int64, _ int) bool { return l["quiet"] == 2 })
	if n := cb.Resyncs(); n != 1 {
		t.Fatalf("%d resyncs: the quiet connection was replaced", n)
	}
}

// appendBy appends a working status update to the task after seq after,
// made by runner's execution.
func appendBy(t *testing.T, s store.Store, id, runner string, after int64) {
	t.Helper()
	snap := task(id, a2a.TaskStateWorking)
	ev := &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := s.Append(context.Background(), store.Append{TaskID: id, After: after, Records: []store.Record{{Event: ev}}, Snapshot: snap, Runner: runner}); err != nil {
		t.Fatalf("append %s after %d by %q: %v", id, after, runner, err)
	}
}

// TestWatchOnlyWhereAwaited: creates and the appends of a
// task's own runner are not notified, unless another process watches the
// task (WatchTask); an append by a process that was not the task's runner
// (a cancel or continuation elsewhere) is notified to every process; a
// terminal task is not watched (no write). Each step is followed by a
// notified append of a marker task from the same store, and what was
// notified before the marker arrived is then known.
func TestWatchOnlyWhereAwaited(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a, b := openNotify(t, dsn), openNotify(t, dsn)
	ca, cb := storetest.WatchChanges(t, a), storetest.WatchChanges(t, b)
	for _, c := range []*storetest.Changes{ca, cb} {
		c.Until(t, "the first resync", func(_ map[string]int64, r int) bool { return r >= 1 })
	}
	seen := func(c *storetest.Changes, id string) int64 {
		v, _ := c.Seen(id)
		return v
	}
	create(t, a, "marker-a")
	create(t, b, "marker-b")
	markers := map[*postgres.Store]int64{a: 1, b: 1}
	// mark appends to the marker of s (naming no runner: notified) and
	// waits until c heard it.
	mark := func(s *postgres.Store, c *storetest.Changes, what string) {
		t.Helper()
		id := "marker-a"
		if s == b {
			id = "marker-b"
		}
		appendStatus(t, s, id, markers[s])
		markers[s]++
		want := markers[s]
		c.Until(t, what, func(l map[string]int64, _ int) bool { return l[id] == want })
	}

	createBy(t, a, "t1", "ra", a2a.TaskStateWorking)
	appendBy(t, a, "t1", "ra", 1)
	mark(a, cb, "the marker after ra's own appends")
	if got := seen(cb, "t1"); got != 0 {
		t.Fatalf("b heard t1 up to %d: a create and the runner's own append are not to be notified", got)
	}

	if err := b.WatchTask(ctx, "rb", "t1"); err != nil {
		t.Fatal(err)
	}
	if err := b.WatchTask(ctx, "rb", "t1"); err != nil { // twice: one entry
		t.Fatal(err)
	}
	if err := b.WatchTask(ctx, "rb", "unknown"); err != nil {
		t.Fatalf("WatchTask of an unknown task: %v", err)
	}
	appendBy(t, a, "t1", "ra", 2)
	cb.Until(t, "b, watching t1, hears ra's append", func(l map[string]int64, _ int) bool { return l["t1"] == 3 })

	// b appends as another runner: a (the task's runner) hears it.
	appendBy(t, b, "t1", "rb", 3)
	ca.Until(t, "a hears rb's append to ra's task", func(l map[string]int64, _ int) bool { return l["t1"] == 4 })
	// rb is the runner now; its next append is notified to nobody (rb
	// is the only watcher), and ra's watch would be needed to hear it.
	appendBy(t, b, "t1", "rb", 4)
	mark(b, ca, "the marker after rb's own append")
	if got := seen(ca, "t1"); got != 4 {
		t.Fatalf("a heard t1 up to %d, want 4: rb's own append to a task only rb watches is not to be notified", got)
	}

	conn := admin(t, dsn)
	var n int
	if err := conn.QueryRow(ctx, "SELECT cardinality(watchers) FROM tasks WHERE id = 't1'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("t1 has %d watchers (%v), want 1", n, err)
	}
	createBy(t, a, "done", "ra", a2a.TaskStateCompleted)
	if err := b.WatchTask(ctx, "rb", "done"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT cardinality(watchers) FROM tasks WHERE id = 'done'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the terminal task has %d watchers (%v), want 0", n, err)
	}
	a.Close()
	if err := a.WatchTask(ctx, "ra", "t1"); !errors.Is(err, postgres.ErrClosed) {
		t.Fatalf("WatchTask after Close: %v, want ErrClosed", err)
	}
}

// TestWatchRunnerChangeInOneBatch: appends of one task
// by two runners queued together are not merged into one statement,
// which would tell the runner change of the first only from the last:
// the second runner's append to the first's task is notified.
func TestWatchRunnerChangeInOneBatch(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a, b := openNotify(t, dsn), openNotify(t, dsn)
	cb := storetest.WatchChanges(t, b)
	cb.Until(t, "the first resync", func(_ map[string]int64, r int) bool { return r >= 1 })
	resume := postgres.PauseWriters(a)
	snap := task("t", a2a.TaskStateWorking)
	c := snap
	create := a.AppendAsync(ctx, store.Append{Agent: "a", TaskID: "t", Records: []store.Record{{Event: &c}}, Snapshot: snap, Runner: "rx"})
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	next := a.AppendAsync(ctx, store.Append{TaskID: "t", After: 1, Records: []store.Record{{Event: ev}}, Snapshot: snap, Runner: "ry"})
	resume()
	for _, ch := range []<-chan error{create, next} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	cb.Until(t, "b hears ry's append to rx's task", func(l map[string]int64, _ int) bool { return l["t"] == 2 })
	if statements, _ := postgres.Stats(a); statements != 2 {
		t.Errorf("%d statements, want 2: appends of two runners are not chained", statements)
	}
}
