package postgres_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/postgres"
)

func createBy(t *testing.T, s store.Store, id, runner string, state a2a.TaskState) {
	t.Helper()
	snap := task(id, state)
	c := snap
	if err := s.Append(context.Background(), store.Append{Agent: "a", TaskID: id, Records: []store.Record{{Event: &c}}, Snapshot: snap, Runner: runner}); err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
}

func orphanIDs(t *testing.T, s *postgres.Store) []string {
	t.Helper()
	infos, err := s.Orphans(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, i := range infos {
		ids = append(ids, i.Task.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestLeases: an unfinished task is an orphan when its
// runner holds no unexpired lease (none, expired, released); a finished
// or interrupted one never is; an append that names another runner moves
// the task to it.
func TestLeases(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.DSN(t))
	if err := s.Renew(ctx, "alive", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Renew(ctx, "dying", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	createBy(t, s, "t-alive", "alive", a2a.TaskStateWorking)
	createBy(t, s, "t-dying", "dying", a2a.TaskStateSubmitted)
	createBy(t, s, "t-none", "", a2a.TaskStateWorking)
	createBy(t, s, "t-unknown-runner", "ghost", a2a.TaskStateWorking)
	createBy(t, s, "t-done", "dying", a2a.TaskStateCompleted)
	createBy(t, s, "t-waiting", "dying", a2a.TaskStateInputRequired)
	time.Sleep(20 * time.Millisecond)
	if got, want := orphanIDs(t, s), []string{"t-dying", "t-none", "t-unknown-runner"}; !slices.Equal(got, want) {
		t.Fatalf("orphans %v, want %v", got, want)
	}
	// The dying runner renews: its task is its own again.
	if err := s.Renew(ctx, "dying", time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, want := orphanIDs(t, s), []string{"t-none", "t-unknown-runner"}; !slices.Equal(got, want) {
		t.Fatalf("after renewal: orphans %v, want %v", got, want)
	}
	// An append by the alive runner takes t-none over; Release ends
	// dying's lease at once.
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "t-none", ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := s.Append(ctx, store.Append{TaskID: "t-none", After: 1, Records: []store.Record{{Event: ev}}, Snapshot: task("t-none", a2a.TaskStateWorking), Runner: "alive"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, "dying"); err != nil {
		t.Fatal(err)
	}
	if got, want := orphanIDs(t, s), []string{"t-dying", "t-unknown-runner"}; !slices.Equal(got, want) {
		t.Fatalf("after release: orphans %v, want %v", got, want)
	}
	// An append without a runner keeps the task's.
	ev2 := &a2a.TaskStatusUpdateEvent{TaskID: "t-alive", ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := s.Append(ctx, store.Append{TaskID: "t-alive", After: 1, Records: []store.Record{{Event: ev2}}, Snapshot: task("t-alive", a2a.TaskStateWorking)}); err != nil {
		t.Fatal(err)
	}
	if got := orphanIDs(t, s); slices.Contains(got, "t-alive") {
		t.Fatalf("t-alive lost its runner: %v", got)
	}
	if infos, err := s.Orphans(ctx, 1); err != nil || len(infos) != 1 || infos[0].Task.ID != "t-dying" {
		t.Fatalf("Orphans(limit 1): %v %v", infos, err)
	}
}

// TestExclusiveEndsLeases: an exclusive Open (a single server taking over
// the schema) ends every earlier process's lease, so that what a dead
// predecessor left running is an orphan at once.
func TestExclusiveEndsLeases(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s := open(t, dsn)
	if err := s.Renew(ctx, "before", time.Hour); err != nil {
		t.Fatal(err)
	}
	createBy(t, s, "t1", "before", a2a.TaskStateWorking)
	if got := orphanIDs(t, s); len(got) != 0 {
		t.Fatalf("orphans %v before the exclusive open", got)
	}
	x, err := postgres.Open(ctx, dsn, postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if got := orphanIDs(t, x); !slices.Equal(got, []string{"t1"}) {
		t.Fatalf("orphans %v after the exclusive open, want [t1]", got)
	}
}

// TestMigrateToLeases: a schema of version 1 (before leases, push claims,
// watchers and trace contexts) is upgraded with its tasks; an unfinished one, which names no
// runner, is an orphan.
func TestMigrateToLeases(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s := open(t, dsn)
	create(t, s, "old")
	s.Close()
	conn := admin(t, dsn)
	if _, err := conn.Exec(ctx, "ALTER TABLE tasks DROP COLUMN runner, DROP COLUMN watchers, DROP COLUMN moved, DROP COLUMN trace; DROP TABLE replicas; ALTER TABLE push_configs DROP COLUMN claimed_by; DROP TABLE published_keys; UPDATE a2abridge_schema SET version = 1"); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dsn)
	var v int
	if err := conn.QueryRow(ctx, "SELECT version FROM a2abridge_schema").Scan(&v); err != nil || v != postgres.SchemaVersion {
		t.Fatalf("version %d (%v), want %d", v, err, postgres.SchemaVersion)
	}
	if got := orphanIDs(t, s2); !slices.Equal(got, []string{"old"}) {
		t.Fatalf("orphans %v, want [old]", got)
	}
	if info, err := s2.Task(ctx, "old"); err != nil || info.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the old task: %+v %v", info.Task.Status, err)
	}
}

// TestPushClaims: a config's deliveries are claimed by one
// live runner at a time; a claim ends with its runner's lease or its
// release; release tells whether a delivery is owed; UnclaimedPush lists
// the owed configs nobody alive claims.
func TestPushClaims(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.DSN(t))
	for _, r := range []string{"a", "b"} {
		if err := s.Renew(ctx, r, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	createBy(t, s, "t1", "a", a2a.TaskStateWorking)
	if err := s.SetPushConfig(ctx, "t1", a2a.PushNotificationConfig{ID: "c1", URL: "https://hook.example/1"}, 0); err != nil {
		t.Fatal(err)
	}
	unclaimedBy := func(runner string) []string {
		t.Helper()
		pend, err := s.UnclaimedPush(ctx, runner, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range pend {
			ids = append(ids, p.TaskID+"/"+p.Config.ID)
		}
		return ids
	}
	unclaimed := func() []string { t.Helper(); return unclaimedBy("observer") }
	claim := func(runner string, want bool) {
		t.Helper()
		if ok, err := s.ClaimPush(ctx, runner, "t1", "c1"); err != nil || ok != want {
			t.Fatalf("ClaimPush(%s) = %v, %v; want %v", runner, ok, err, want)
		}
	}
	if got := unclaimed(); !slices.Equal(got, []string{"t1/c1"}) {
		t.Fatalf("unclaimed %v, want [t1/c1]", got)
	}
	claim("a", true)
	claim("a", true) // again: still a's
	claim("b", false)
	if got := unclaimed(); len(got) != 0 {
		t.Fatalf("unclaimed %v while a claims", got)
	}
	if got := unclaimedBy("a"); !slices.Equal(got, []string{"t1/c1"}) {
		t.Fatalf("unclaimed for a %v: its own claim is its to deliver, want [t1/c1]", got)
	}
	// b cannot release a's claim; a's release finds the delivery owed.
	if pending, err := s.ReleasePush(ctx, "b", "t1", "c1"); err != nil || !pending {
		t.Fatalf("ReleasePush(b) = %v, %v", pending, err)
	}
	claim("b", false)
	if pending, err := s.ReleasePush(ctx, "a", "t1", "c1"); err != nil || !pending {
		t.Fatalf("ReleasePush(a) = %v, %v; want pending", pending, err)
	}
	claim("b", true)
	if err := s.MarkPushDelivered(ctx, "t1", "c1", 1); err != nil {
		t.Fatal(err)
	}
	if pending, err := s.ReleasePush(ctx, "b", "t1", "c1"); err != nil || pending {
		t.Fatalf("ReleasePush(b) after delivery = %v, %v; want nothing owed", pending, err)
	}
	if got := unclaimed(); len(got) != 0 {
		t.Fatalf("unclaimed %v with nothing owed", got)
	}
	// A claim whose runner's lease ended is nobody's.
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := s.Append(ctx, store.Append{TaskID: "t1", After: 1, Records: []store.Record{{Event: ev}}, Snapshot: task("t1", a2a.TaskStateWorking), Runner: "a"}); err != nil {
		t.Fatal(err)
	}
	claim("a", true)
	if err := s.Release(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got := unclaimed(); !slices.Equal(got, []string{"t1/c1"}) {
		t.Fatalf("unclaimed %v after a's lease ended, want [t1/c1]", got)
	}
	claim("b", true)
	// A deleted config is not claimed, and nothing is owed for it.
	if err := s.DeletePushConfig(ctx, "t1", "c1"); err != nil {
		t.Fatal(err)
	}
	claim("b", false)
	if pending, err := s.ReleasePush(ctx, "b", "t1", "c1"); err != nil || pending {
		t.Fatalf("ReleasePush of a deleted config = %v, %v", pending, err)
	}
}

// TestPushClaimRace: of runners claiming one config at once, exactly one
// wins.
func TestPushClaimRace(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.DSN(t))
	const n = 8
	for i := range n {
		if err := s.Renew(ctx, fmt.Sprint("r", i), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	createBy(t, s, "t1", "r0", a2a.TaskStateWorking)
	if err := s.SetPushConfig(ctx, "t1", a2a.PushNotificationConfig{ID: "c1", URL: "https://hook.example/1"}, 0); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.ClaimPush(ctx, fmt.Sprint("r", i), "t1", "c1")
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d runners won the claim, want 1", wins.Load())
	}
}

// TestPublishedKeys: each publisher's latest JWK Set is listed until it
// expires.
func TestPublishedKeys(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.DSN(t))
	list := func() []string {
		t.Helper()
		sets, err := s.PublishedKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range sets {
			out = append(out, string(b))
		}
		return out
	}
	if err := s.PublishKeys(ctx, "a", []byte(`{"keys":[{"kid":"a1"}]}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.PublishKeys(ctx, "b", []byte(`{"keys":[{"kid":"b1"}]}`), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := s.PublishKeys(ctx, "a", []byte(`{"keys":[{"kid":"a2"}]}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if got := list(); !slices.Equal(got, []string{`{"keys":[{"kid":"a2"}]}`}) {
		t.Fatalf("published %q, want a's latest only (b's expired)", got)
	}
	if err := s.PublishKeys(ctx, "", nil, time.Hour); err == nil {
		t.Fatal("PublishKeys with no publisher: no error")
	}
}

// TestMigrateDropsCheckpoints: a schema of version 5 kept checkpoints
// folded without joining text chunks; version 6 drops them, so that a
// task is read as the fold of its whole log (its chunks joined, not only
// those after the checkpoint), and the next appends checkpoint it again.
func TestMigrateDropsCheckpoints(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s := open(t, dsn)
	created := a2a.Task{ID: "big", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	c := created
	if err := s.Append(ctx, store.Append{Agent: "a", TaskID: "big", Records: []store.Record{{Event: &c}}, Snapshot: created}); err != nil {
		t.Fatal(err)
	}
	// The snapshots as the fold before joining made them: a part a chunk.
	old := created
	old.Artifacts = []a2a.Artifact{{ArtifactID: "out"}}
	var want strings.Builder
	const n = 800
	for i := range n {
		text := fmt.Sprintf("%04d %s\n", i, strings.Repeat("x", 120))
		want.WriteString(text)
		old.Artifacts = slices.Clone(old.Artifacts)
		old.Artifacts[0].Parts = append(slices.Clip(old.Artifacts[0].Parts), a2a.NewTextPart(text))
		ev := &a2a.TaskArtifactUpdateEvent{TaskID: "big", ContextID: "c", Append: i > 0, Artifact: a2a.Artifact{ArtifactID: "out", Parts: []a2a.Part{a2a.NewTextPart(text)}}}
		if err := s.Append(ctx, store.Append{TaskID: "big", After: int64(i + 1), Records: []store.Record{{Event: ev}}, Snapshot: old}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	conn := admin(t, dsn)
	var snaps int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM snapshots").Scan(&snaps); err != nil || snaps != 1 {
		t.Fatalf("%d checkpoints before the migration (%v), want 1", snaps, err)
	}
	if _, err := conn.Exec(ctx, "UPDATE a2abridge_schema SET version = 5"); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dsn)
	var v int
	if err := conn.QueryRow(ctx, "SELECT version FROM a2abridge_schema").Scan(&v); err != nil || v != postgres.SchemaVersion {
		t.Fatalf("version %d (%v), want %d", v, err, postgres.SchemaVersion)
	}
	var bad int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM snapshots) + (SELECT count(*) FROM tasks t WHERE t.snap_size != 0
		OR t.tail != (SELECT sum(octet_length(e.body)) FROM events e WHERE e.task_id = t.id))`).Scan(&bad); err != nil || bad != 0 {
		t.Fatalf("%d checkpoints or tails left (%v), want none", bad, err)
	}
	info, err := s2.Task(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	parts := info.Task.Artifacts[0].Parts
	if len(parts) != 1 || parts[0].Text() != want.String() {
		t.Fatalf("%d parts after the migration, want the whole text in one", len(parts))
	}
	// The task goes on: an append checkpoints it again (its tail is due).
	task := info.Task
	ev := &a2a.TaskArtifactUpdateEvent{TaskID: "big", ContextID: "c", Append: true, Artifact: a2a.Artifact{ArtifactID: "out", Parts: []a2a.Part{a2a.NewTextPart("end")}}}
	if task, err = fold.Apply(task, ev); err != nil {
		t.Fatal(err)
	}
	if err := s2.Append(ctx, store.Append{TaskID: "big", After: info.Seq, Records: []store.Record{{Event: ev}}, Snapshot: task}); err != nil {
		t.Fatal(err)
	}
	s2.Close() // waits for the checkpoint, written apart from the append
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM snapshots").Scan(&snaps); err != nil || snaps != 1 {
		t.Errorf("%d checkpoints after an append (%v), want 1", snaps, err)
	}
	if got, err := open(t, dsn).Task(ctx, "big"); err != nil || !reflect.DeepEqual(got.Task.Artifacts, task.Artifacts) {
		t.Errorf("task after an append: %v, artifacts equal %v", err, err == nil && reflect.DeepEqual(got.Task.Artifacts, task.Artifacts))
	}
}
