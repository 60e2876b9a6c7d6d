package memory_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/storetest"
)

// TestReplicaConformance: a Replica is a store.Store like the Store.
func TestReplicaConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memory.New().Replica() })
}

func createBy(t *testing.T, s store.Store, id, runner string, state a2a.TaskState) {
	t.Helper()
	c := a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: state}}
	if err := s.Append(context.Background(), store.Append{Agent: "a", TaskID: id, Records: []store.Record{{Event: &c}}, Snapshot: c, Runner: runner}); err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
}

// appendBy appends a working status-update to the task after seq after,
// made by runner.
func appendBy(t *testing.T, s store.Store, id, runner string, after int64) {
	t.Helper()
	snap := a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	ev := &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := s.Append(context.Background(), store.Append{TaskID: id, After: after, Records: []store.Record{{Event: ev}}, Snapshot: snap, Runner: runner}); err != nil {
		t.Fatalf("append %s after %d by %q: %v", id, after, runner, err)
	}
}

// TestReplicaWatch: a Replica's Watch starts with a resync and reports
// what store.Watcher's rule says, made through the Store or another
// Replica, never what the Replica itself made: not a create, nor a
// runner's append to its own task, unless another runner watches the
// task (WatchTask); an append by another runner than the task's, or by
// none; every push config change. Each "not reported" is checked after a
// later reported append of a marker task has arrived.
func TestReplicaWatch(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	a, b := s.Replica(), s.Replica()
	ha, hb := storetest.WatchChanges(t, a), storetest.WatchChanges(t, b)
	for _, h := range []*storetest.Changes{ha, hb} {
		h.Until(t, "the first resync", func(_ map[string]int64, r int) bool { return r == 1 })
	}
	seen := func(h *storetest.Changes, id string) (int64, bool) { return h.Seen(id) }
	createBy(t, s, "marker", "", a2a.TaskStateWorking)
	marks := int64(1)
	mark := func(h *storetest.Changes, what string) {
		t.Helper()
		appendBy(t, s, "marker", "", marks)
		marks++
		want := marks
		h.Until(t, what, func(l map[string]int64, _ int) bool { return l["marker"] == want })
	}

	createBy(t, a, "t1", "ra", a2a.TaskStateWorking)
	appendBy(t, a, "t1", "ra", 1)
	mark(hb, "the marker after ra's create and own append")
	if seq, ok := seen(hb, "t1"); ok {
		t.Fatalf("b heard t1 at %d: a create and a runner's own append are not reported", seq)
	}
	if err := b.WatchTask(ctx, "rb", "t1"); err != nil {
		t.Fatal(err)
	}
	appendBy(t, a, "t1", "ra", 2)
	hb.Until(t, "b, watching t1, hears ra's append", func(l map[string]int64, _ int) bool { return l["t1"] == 3 })
	appendBy(t, b, "t1", "rb", 3)
	ha.Until(t, "a hears rb's append to ra's task", func(l map[string]int64, _ int) bool { return l["t1"] == 4 })
	appendBy(t, b, "t1", "rb", 4)
	mark(ha, "the marker after rb's own append")
	if seq, _ := seen(ha, "t1"); seq != 4 {
		t.Fatalf("a heard t1 up to %d, want 4: rb's own append to a task only rb watches is not reported", seq)
	}
	if seq, _ := seen(hb, "t1"); seq > 4 {
		t.Fatalf("b heard its own append (t1 at %d)", seq)
	}

	createBy(t, s, "t2", "", a2a.TaskStateWorking)
	if err := b.SetPushConfig(ctx, "t2", a2a.PushNotificationConfig{ID: "c1", URL: "http://127.0.0.1:1/hook"}, 1); err != nil {
		t.Fatal(err)
	}
	ha.Until(t, "a hears b's push config", func(l map[string]int64, _ int) bool { _, ok := l["t2"]; return ok })

	createBy(t, s, "done", "", a2a.TaskStateCompleted)
	if err := a.WatchTask(ctx, "ra", "done"); err != nil {
		t.Fatalf("WatchTask of a terminal task: %v", err)
	}
	if err := a.WatchTask(ctx, "ra", "unknown"); err != nil {
		t.Fatalf("WatchTask of an unknown task: %v", err)
	}
	a.Close()
	if err := a.Append(ctx, store.Append{TaskID: "t1", After: 5, Records: []store.Record{{Event: &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}},
		Snapshot: a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("append after Close: %v, want ErrClosed", err)
	}
	if err := a.WatchTask(ctx, "ra", "t1"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("WatchTask after Close: %v, want ErrClosed", err)
	}
	if err := a.MarkPushDelivered(ctx, "t2", "c1", 1); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("MarkPushDelivered after Close: %v, want ErrClosed", err)
	}
	if _, err := a.Task(ctx, "t1"); err != nil {
		t.Fatalf("a read after Close: %v", err)
	}
}

// TestReplicaLeases: an unfinished task is an orphan once its runner's
// lease has expired or been released, or when no append named a runner.
func TestReplicaLeases(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	a := s.Replica()
	orphans := func() []string {
		t.Helper()
		infos, err := a.Orphans(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, i := range infos {
			ids = append(ids, i.Task.ID)
		}
		return ids
	}
	if err := a.Renew(ctx, "live", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := a.Renew(ctx, "short", 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	createBy(t, a, "live", "live", a2a.TaskStateWorking)
	createBy(t, a, "short", "short", a2a.TaskStateWorking)
	createBy(t, a, "none", "", a2a.TaskStateSubmitted)
	createBy(t, a, "done", "gone", a2a.TaskStateCompleted)
	if got := orphans(); !slices.Equal(got, []string{"none"}) {
		t.Fatalf("orphans %v, want [none]", got)
	}
	time.Sleep(40 * time.Millisecond)
	if got := orphans(); !slices.Equal(got, []string{"short", "none"}) {
		t.Fatalf("orphans %v after the short lease expired, want [short none]", got)
	}
	if err := a.Release(ctx, "live"); err != nil {
		t.Fatal(err)
	}
	if got := orphans(); !slices.Equal(got, []string{"live", "short", "none"}) {
		t.Fatalf("orphans %v after release, want [live short none]", got)
	}
	if err := a.Renew(ctx, "", time.Hour); err == nil {
		t.Fatal("Renew of an empty runner: no error")
	}
}

// TestReplicaPushClaims: a config's deliveries are claimed by one live
// runner at a time; a claim ends with its runner's lease or its release;
// release tells whether a delivery is owed; UnclaimedPush lists the owed
// configs nobody alive claims; a deleted config is not claimable.
func TestReplicaPushClaims(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	a, b := s.Replica(), s.Replica()
	for _, r := range []string{"ra", "rb"} {
		if err := a.Renew(ctx, r, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	createBy(t, a, "t", "ra", a2a.TaskStateWorking)
	if err := a.SetPushConfig(ctx, "t", a2a.PushNotificationConfig{ID: "c", URL: "http://127.0.0.1:1/hook"}, 0); err != nil {
		t.Fatal(err)
	}
	unclaimed := func(runner string) int {
		t.Helper()
		l, err := a.UnclaimedPush(ctx, runner, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(l)
	}
	if n := unclaimed("rb"); n != 1 {
		t.Fatalf("%d unclaimed before any claim, want 1", n)
	}
	if ok, err := a.ClaimPush(ctx, "ra", "t", "c"); !ok || err != nil {
		t.Fatalf("ra's claim: %v %v", ok, err)
	}
	if ok, _ := b.ClaimPush(ctx, "rb", "t", "c"); ok {
		t.Fatal("rb claimed a config ra holds")
	}
	if n := unclaimed("rb"); n != 0 {
		t.Fatalf("%d unclaimed for rb while ra holds the claim, want 0", n)
	}
	if n := unclaimed("ra"); n != 1 {
		t.Fatalf("%d unclaimed for ra, its own claim, want 1", n)
	}
	if pending, err := a.ReleasePush(ctx, "ra", "t", "c"); !pending || err != nil {
		t.Fatalf("release: pending %v (%v), want true: seq 1 is not delivered", pending, err)
	}
	if ok, _ := b.ClaimPush(ctx, "rb", "t", "c"); !ok {
		t.Fatal("rb could not claim a released config")
	}
	if err := b.Release(ctx, "rb"); err != nil { // rb's lease ends: its claim with it
		t.Fatal(err)
	}
	if ok, _ := a.ClaimPush(ctx, "ra", "t", "c"); !ok {
		t.Fatal("ra could not claim a config whose claimant has no lease")
	}
	if err := a.MarkPushDelivered(ctx, "t", "c", 1); err != nil {
		t.Fatal(err)
	}
	if pending, _ := a.ReleasePush(ctx, "ra", "t", "c"); pending {
		t.Fatal("release: pending after everything was delivered")
	}
	if err := a.DeletePushConfig(ctx, "t", "c"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.ClaimPush(ctx, "ra", "t", "c"); ok {
		t.Fatal("a deleted config was claimed")
	}
}
