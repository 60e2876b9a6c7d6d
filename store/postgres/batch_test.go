package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/postgres"
	"github.com/a2abridge/a2abridge/store/storetest"
)

// createAppend is the create of task id (submitted), indexing msgs.
func createAppend(id string, msgs ...string) store.Append {
	snap := task(id, a2a.TaskStateSubmitted)
	c := snap
	return store.Append{Agent: "a", TaskID: id, Records: []store.Record{{Event: &c}}, Snapshot: snap, MessageIDs: msgs}
}

// statusAppend appends a status-update to state after seq after.
func statusAppend(id string, after int64, state a2a.TaskState) store.Append {
	return store.Append{Agent: "a", TaskID: id, After: after,
		Records:  []store.Record{{Event: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: state}, Final: state.Terminal()}}},
		Snapshot: task(id, state)}
}

// openExclusive opens an Exclusive Store on a new schema, and a
// connection of its own to that schema; both are closed when t ends.
func openExclusive(t *testing.T) (*postgres.Store, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s := pgtest.OpenDSN(t, dsn, postgres.Options{Exclusive: true})
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(ctx) })
	return s, conn
}

// TestGroupCommit: appends queued while the writers wait go in one batch
// each; a task's create and its continuations become one statement; an
// append that cannot apply leaves the others of its batch committed (the
// continuations chained to it fail with it); a message id indexed already
// rolls its batch back, and each append is then applied alone, with its
// own outcome.
func TestGroupCommit(t *testing.T) {
	s := pgtest.OpenWith(t, postgres.Options{Exclusive: true})
	ctx := context.Background()
	create, next := createAppend, statusAppend
	type pending struct {
		what string
		res  <-chan error
		want error
	}
	run := func(queue func(add func(what string, a store.Append, want error))) {
		t.Helper()
		var ps []pending
		resume := postgres.PauseWriters(s)
		queue(func(what string, a store.Append, want error) {
			ps = append(ps, pending{what, s.AppendAsync(ctx, a), want})
		})
		resume()
		for _, p := range ps {
			if err := <-p.res; !errors.Is(err, p.want) || (err == nil) != (p.want == nil) {
				t.Errorf("%s: %v, want %v", p.what, err, p.want)
			}
		}
	}
	states := func(id string) []a2a.TaskState {
		recs, err := s.Events(ctx, id, 0, 0)
		if err != nil {
			t.Fatalf("events of %s: %v", id, err)
		}
		var out []a2a.TaskState
		for _, r := range recs {
			switch e := r.Event.(type) {
			case *a2a.Task:
				out = append(out, e.Status.State)
			case *a2a.TaskStatusUpdateEvent:
				out = append(out, e.Status.State)
			}
		}
		return out
	}

	// Ten tasks, each created, working and completed in one batch.
	st0, b0 := postgres.Stats(s)
	run(func(add func(string, store.Append, error)) {
		for i := range 10 {
			id := fmt.Sprintf("t%d", i)
			add(id+" create", create(id, "m-"+id), nil)
			add(id+" working", next(id, 1, a2a.TaskStateWorking), nil)
			add(id+" completed", next(id, 2, a2a.TaskStateCompleted), nil)
		}
	})
	st1, b1 := postgres.Stats(s)
	if st1-st0 != 10 || b1-b0 > 2 {
		t.Errorf("30 appends of 10 tasks queued together: %d statements in %d batches, want 10 in at most 2 (one per writer)", st1-st0, b1-b0)
	}
	for i := range 10 {
		id := fmt.Sprintf("t%d", i)
		if got := fmt.Sprint(states(id)); got != "[submitted working completed]" {
			t.Errorf("%s: %s", id, got)
		}
		info, err := s.Task(ctx, id)
		if err != nil || info.Seq != 3 || info.Task.Status.State != a2a.TaskStateCompleted {
			t.Errorf("%s: seq %d state %s err %v", id, info.Seq, info.Task.Status.State, err)
		}
	}

	// Appends that cannot apply, beside ones that do.
	run(func(add func(string, store.Append, error)) {
		add("t1 stale", next("t1", 1, a2a.TaskStateWorking), store.ErrConflict)
		add("t1 on the stale one", next("t1", 2, a2a.TaskStateCompleted), store.ErrConflict)
		add("unknown task", next("nope", 1, a2a.TaskStateWorking), store.ErrNotFound)
		add("t0 again", create("t0", "m-other"), store.ErrConflict)
		for i := range 6 {
			id := fmt.Sprintf("u%d", i)
			add(id+" create", create(id, "m-"+id), nil)
			add(id+" working", next(id, 1, a2a.TaskStateWorking), nil)
		}
	})
	for i := range 6 {
		if got := fmt.Sprint(states(fmt.Sprintf("u%d", i))); got != "[submitted working]" {
			t.Errorf("u%d: %s", i, got)
		}
	}
	if got := fmt.Sprint(states("t1")); got != "[submitted working completed]" {
		t.Errorf("t1 after the stale appends: %s", got)
	}

	// A duplicate message id fails in SQL: its batch is applied again
	// append by append.
	run(func(add func(string, store.Append, error)) {
		for i := range 6 {
			id := fmt.Sprintf("v%d", i)
			add(id+" create", create(id, "m-"+id), nil)
			add(id+" working", next(id, 1, a2a.TaskStateWorking), nil)
		}
		add("dup create", create("dup", "m-t0"), store.ErrDuplicateMessage)
		add("on the dup", next("dup", 1, a2a.TaskStateWorking), store.ErrNotFound)
		add("dup2 create", create("dup2", "m-u0"), store.ErrDuplicateMessage) // tasks on two writers have no order between them: ids committed before
	})
	for i := range 6 {
		if got := fmt.Sprint(states(fmt.Sprintf("v%d", i))); got != "[submitted working]" {
			t.Errorf("v%d: %s", i, got)
		}
	}
	for _, id := range []string{"dup", "dup2"} {
		if _, err := s.Task(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v, want not found", id, err)
		}
	}
	if id, err := s.MessageTask(ctx, "a", "m-v0"); err != nil || id != "v0" {
		t.Errorf("m-v0 indexed for %q (%v), want v0", id, err)
	}
}

// TestConformanceExclusive: the store contract on a Store opened
// Exclusive (its message id filter, its queued appends).
func TestConformanceExclusive(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return pgtest.OpenWith(t, postgres.Options{Exclusive: true}) })
}

// TestMessageFilterAcrossOpen: an Exclusive Store answers for new message
// ids without a read, and finds the ids indexed before it was opened (its
// filter's scan); a shared one has no filter.
func TestMessageFilterAcrossOpen(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	createTask := func(s *postgres.Store, id, msg string) error { return s.Append(ctx, createAppend(id, msg)) }
	s, err := postgres.Open(ctx, dsn, postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := createTask(s, "t1", "m1"); err != nil {
		t.Fatal(err)
	}
	if filtered, ready, absent := postgres.MessageFilter(s, "a", "m1"); !filtered || !ready || absent {
		t.Errorf("indexed id: filtered %v ready %v absent %v", filtered, ready, absent)
	}
	if _, _, absent := postgres.MessageFilter(s, "a", "m-new"); !absent {
		t.Error("a new id is not answered without a read")
	}
	_ = s.Close()

	s, err = postgres.Open(ctx, dsn, postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ready, absent := postgres.MessageFilter(s, "a", "m1"); !ready || absent {
		t.Errorf("id indexed before Open: ready %v absent %v", ready, absent)
	}
	if id, err := s.MessageTask(ctx, "a", "m1"); err != nil || id != "t1" {
		t.Errorf("MessageTask(m1) after reopening = %q, %v", id, err)
	}
	if id, err := s.MessageTask(ctx, "a", "m2"); err != nil || id != "" {
		t.Errorf("MessageTask(m2) = %q, %v", id, err)
	}
	if err := createTask(s, "t2", "m2"); err != nil {
		t.Fatal(err)
	}
	if id, err := s.MessageTask(ctx, "a", "m2"); err != nil || id != "t2" {
		t.Errorf("MessageTask(m2) after its create = %q, %v", id, err)
	}
	if err := createTask(s, "t3", "m1"); !errors.Is(err, store.ErrDuplicateMessage) {
		t.Errorf("duplicate create: %v", err)
	}
	// A continuation indexing ids without naming its agent: the filter
	// cannot tell the key, and stops answering.
	msg := &a2a.Message{MessageID: "m4", Role: a2a.RoleUser, TaskID: "t2", ContextID: "ctx", Parts: []a2a.Part{a2a.NewTextPart("x")}}
	if err := s.Append(ctx, store.Append{TaskID: "t2", After: 1, Records: []store.Record{{Event: msg}}, Snapshot: task("t2", a2a.TaskStateWorking), MessageIDs: []string{"m4"}}); err != nil {
		t.Fatal(err)
	}
	if id, err := s.MessageTask(ctx, "a", "m4"); err != nil || id != "t2" {
		t.Errorf("MessageTask(m4), indexed by an append without agent = %q, %v", id, err)
	}

	shared, err := postgres.Open(ctx, pgtest.DSN(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	if filtered, _, _ := postgres.MessageFilter(shared, "a", "m1"); filtered {
		t.Error("a shared store filters message ids")
	}
}

// TestAppendWaitsForItsBatch: an Append whose ctx ends while its batch is
// in flight answers with the batch's outcome, not ctx.Err(): the append
// may commit, and "on error nothing is written" must hold.
func TestAppendWaitsForItsBatch(t *testing.T) {
	ctx := context.Background()
	s, conn := openExclusive(t)
	if err := s.Append(ctx, createAppend("locked")); err != nil {
		t.Fatal(err)
	}
	// Another session holds the task's row: the batch waits for it.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "UPDATE tasks SET updated = updated WHERE id = $1", []byte("locked")); err != nil {
		t.Fatal(err)
	}
	callCtx, cancel := context.WithCancel(ctx)
	resume := postgres.PauseWriters(s)
	res := make(chan error, 1)
	go func() {
		res <- s.Append(callCtx, statusAppend("locked", 1, a2a.TaskStateWorking))
	}()
	time.Sleep(100 * time.Millisecond) // queued
	// The task's next append goes to the same writer, in the same batch
	// (one alone would run on its caller's ctx, cancelled with it).
	other := s.AppendAsync(ctx, statusAppend("locked", 2, a2a.TaskStateCompleted))
	resume()
	time.Sleep(200 * time.Millisecond) // the batch waits on the row
	cancel()
	time.Sleep(100 * time.Millisecond)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-res; err != nil {
		t.Errorf("the append whose caller gave up while its batch ran: %v, want its outcome (committed)", err)
	}
	if err := <-other; err != nil {
		t.Errorf("the append queued after it: %v", err)
	}
	info, err := s.Task(ctx, "locked")
	if err != nil || info.Seq != 3 {
		t.Errorf("task after the appends: seq %d, %v", info.Seq, err)
	}
}

// TestCommitErrorRetried: an error raised at the commit (here a deferred
// constraint trigger refusing one task) rolls the batch back like a
// statement's error: each append is applied again alone, and only the
// refused one fails.
func TestCommitErrorRetried(t *testing.T) {
	ctx := context.Background()
	s, conn := openExclusive(t)
	for _, q := range []string{
		`CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.id = '\x626164'::bytea THEN RAISE EXCEPTION 'bad task' USING ERRCODE = '23514'; END IF; RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER refuse_bad AFTER INSERT ON tasks DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_bad()`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	resume := postgres.PauseWriters(s)
	bad := s.AppendAsync(ctx, createAppend("bad"))
	var good []<-chan error
	for i := range 8 {
		good = append(good, s.AppendAsync(ctx, createAppend(fmt.Sprintf("good-%d", i))))
	}
	resume()
	if err := <-bad; err == nil || !strings.Contains(err.Error(), "bad task") {
		t.Errorf("the refused create: %v", err)
	}
	for i, res := range good {
		if err := <-res; err != nil {
			t.Errorf("good-%d, in a batch whose commit failed for another: %v", i, err)
		}
	}
}

// TestExclusiveOpenSettles: a predecessor killed with a
// batch in flight leaves its session to commit it after the death; an
// exclusive Open reads the indexed message ids only once the transactions
// then in progress in the application's other sessions have ended, so
// its filter knows a message id that such a batch indexed. A session
// stuck in a transaction delays Open by at most SettleWait.
func TestExclusiveOpenSettles(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s, err := postgres.Open(ctx, dsn, postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, createAppend("t0", "m0")); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	// The dead predecessor's session: same application_name as a Store's
	// (the default), its batch under way.
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	conn, err := pgx.Connect(ctx, dsn+sep+"application_name=a2abridge")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO messages (agent, message_id, task_id) VALUES ('a', 'late', 't0')"); err != nil {
		t.Fatal(err)
	}
	opened := make(chan *postgres.Store, 1)
	go func() {
		x, err := postgres.Open(ctx, dsn, postgres.Options{Exclusive: true})
		if err != nil {
			t.Error(err)
		}
		opened <- x
	}()
	select {
	case x := <-opened:
		if x != nil {
			x.Close()
		}
		t.Fatal("Open returned while a predecessor's transaction was in progress")
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var x *postgres.Store
	select {
	case x = <-opened:
	case <-time.After(5 * time.Second):
		t.Fatal("Open did not return within 5 s of the commit")
	}
	if x == nil {
		return
	}
	if _, ready, absent := postgres.MessageFilter(x, "a", "late"); !ready || absent {
		t.Errorf("the id the predecessor's batch indexed: ready %v absent %v", ready, absent)
	}
	_ = x.Close()

	// A session that stays in its transaction delays Open by SettleWait
	// only.
	old := *postgres.SettleWait
	*postgres.SettleWait = 200 * time.Millisecond
	t.Cleanup(func() { *postgres.SettleWait = old })
	tx, err = conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	x, err = postgres.Open(ctx, dsn, postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = x.Close()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Open took %v beside a stuck transaction (SettleWait 200ms)", took)
	}
}
