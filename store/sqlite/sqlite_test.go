package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/sqlite"
	"github.com/a2abridge/a2abridge/store/storetest"
)

func open(t testing.TB, path string, opts sqlite.Options) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	for name, opts := range map[string]sqlite.Options{
		"Default":   {},
		"MaxBatch1": {MaxBatch: 1},
		// Every multi-append transaction fails before COMMIT, so every
		// append is retried alone: the fallback path must behave the same.
		"FailingBatches": sqlite.WithBatchHook(sqlite.Options{}, func(int) error { return errors.New("injected") }),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) store.Store {
				return open(t, filepath.Join(t.TempDir(), "a2a.db"), opts)
			})
		})
	}
}

// newTask is the snapshot of a task whose log holds seq messages (see
// appendMessage): they are its history.
func newTask(id string, state a2a.TaskState, seq int64) a2a.Task {
	t := a2a.Task{ID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: state}}
	for i := int64(1); i <= seq; i++ {
		t.History = append(t.History, *message(id, i))
	}
	return t
}

func message(taskID string, seq int64) *a2a.Message {
	id := fmt.Sprintf("%s/%d", taskID, seq)
	return &a2a.Message{MessageID: id, Role: a2a.RoleUser, TaskID: taskID, ContextID: "ctx",
		Parts: []a2a.Part{a2a.NewTextPart("text of " + id)}}
}

// appendMessage appends message (taskID, seq) after seq-1, creating the
// task at seq 1 (its first record is then the Task, holding the message).
func appendMessage(ctx context.Context, s store.Store, taskID string, seq int64, state a2a.TaskState) error {
	m := message(taskID, seq)
	var ev a2a.Event = m
	if seq == 1 {
		created := newTask(taskID, state, 1)
		ev = &created
	}
	return s.Append(ctx, store.Append{Agent: "agent", TaskID: taskID, After: seq - 1,
		Records: []store.Record{{Event: ev}}, Snapshot: newTask(taskID, state, seq), MessageIDs: []string{m.MessageID}})
}

// checkTask asserts that taskID holds messages 1..n intact (at least
// atLeast of them) with a matching snapshot, and returns n.
func checkTask(t *testing.T, s store.Store, taskID string, atLeast int64) int64 {
	t.Helper()
	ctx := context.Background()
	info, err := s.Task(ctx, taskID)
	if err != nil {
		t.Fatalf("Task(%s): %v", taskID, err)
	}
	if info.Seq < atLeast {
		t.Errorf("Task(%s).Seq = %d, want >= %d", taskID, info.Seq, atLeast)
	}
	if got := int64(len(info.Task.History)); got != info.Seq || info.Task.ID != taskID {
		t.Errorf("Task(%s): snapshot %q of seq %v stored with seq %d", taskID, info.Task.ID, got, info.Seq)
	} else if diff := cmp.Diff(newTask(taskID, info.Task.Status.State, info.Seq), info.Task, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Task(%s) (-want +got):\n%s", taskID, diff)
	}
	recs, err := s.Events(ctx, taskID, 0, 0)
	if err != nil {
		t.Fatalf("Events(%s): %v", taskID, err)
	}
	if int64(len(recs)) != info.Seq {
		t.Errorf("Events(%s): %d records, snapshot seq %d", taskID, len(recs), info.Seq)
	}
	for i, r := range recs {
		want := message(taskID, int64(i+1))
		m, ok := r.Event.(*a2a.Message)
		if created, isTask := r.Event.(*a2a.Task); i == 0 && isTask && len(created.History) == 1 {
			m, ok = &created.History[0], true
		}
		if r.Seq != int64(i+1) || !ok || !cmp.Equal(m, want, cmpopts.EquateEmpty()) {
			t.Errorf("Events(%s)[%d] = seq %d %#v, want %#v", taskID, i, r.Seq, r.Event, want)
			continue
		}
		if got, err := s.MessageTask(ctx, "agent", m.MessageID); err != nil || got != taskID {
			t.Errorf("MessageTask(%s) = %q, %v", m.MessageID, got, err)
		}
	}
	return info.Seq
}

func TestPersistence(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a2a.db")
	s := open(t, path, sqlite.Options{})
	for i := range int64(5) {
		if err := appendMessage(ctx, s, "done", i+1, a2a.TaskStateCompleted); err != nil {
			t.Fatal(err)
		}
	}
	for i := range int64(3) {
		if err := appendMessage(ctx, s, "running", i+1, a2a.TaskStateWorking); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := s.Task(ctx, "running")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path, sqlite.Options{})
	if n := checkTask(t, s, "done", 5); n != 5 {
		t.Errorf("done: %d records", n)
	}
	if n := checkTask(t, s, "running", 3); n != 3 {
		t.Errorf("running: %d records", n)
	}
	after, _ := s.Task(ctx, "running")
	if !after.Created.Equal(before.Created) || !after.Updated.Equal(before.Updated) || after.Agent != "agent" {
		t.Errorf("TaskInfo before %+v, after reopen %+v", before, after)
	}
	u, err := s.Unfinished(ctx)
	if err != nil || len(u) != 1 || u[0].Task.ID != "running" {
		t.Errorf("Unfinished after reopen = %+v, %v", u, err)
	}
	// The log continues where it stopped; indexed ids are still duplicates.
	if err := appendMessage(ctx, s, "running", 4, a2a.TaskStateCompleted); err != nil {
		t.Fatal(err)
	}
	err = s.Append(ctx, store.Append{Agent: "agent", TaskID: "x", Records: []store.Record{{Event: message("done", 1)}},
		Snapshot: newTask("x", a2a.TaskStateWorking, 1), MessageIDs: []string{"done/1"}})
	if !errors.Is(err, store.ErrDuplicateMessage) {
		t.Errorf("duplicate after reopen: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, sqlite.Options{})
	defer s.Close()
	checkTask(t, s, "running", 4)
	if u, err := s.Unfinished(ctx); err != nil || len(u) != 0 {
		t.Errorf("Unfinished = %+v, %v; want none", u, err)
	}
}

const crashEnv = "A2ABRIDGE_SQLITE_CRASH_DB"

// TestCrashChild is the child process of TestCrash: it appends to a few
// tasks from several goroutines forever, printing "ack <task> <seq>" after
// each Append returns nil, until it is killed.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper process for TestCrash")
	}
	s, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	for w := range 8 {
		go func() {
			id := fmt.Sprintf("task-%d", w)
			for seq := int64(1); ; seq++ {
				if err := appendMessage(context.Background(), s, id, seq, a2a.TaskStateWorking); err != nil {
					mu.Lock()
					fmt.Fprintln(out, "error", err)
					out.Flush()
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintln(out, "ack", id, seq)
				out.Flush() // the line reaches the pipe before the next append starts
				mu.Unlock()
			}
		}()
	}
	time.Sleep(2 * time.Minute) // the parent kills us long before
	os.Exit(3)
}

// TestCrash kills a writing process with SIGKILL and checks that every
// append it acknowledged is in the database, intact, with a consistent
// snapshot.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	acked := map[string]int64{}
	total := 0
	sc := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(90*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	const killAfter = 400
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "ack" {
			if len(f) > 0 && f[0] == "error" {
				t.Errorf("child: %s", sc.Text())
			}
			continue
		}
		seq, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || len(f) != 3 {
			t.Fatalf("bad line %q", sc.Text())
		}
		if seq != acked[f[1]]+1 {
			t.Errorf("child acknowledged %s %d after %d", f[1], seq, acked[f[1]])
		}
		acked[f[1]] = seq
		total++
		if total == killAfter {
			// Mid-stream: the other goroutines are in the middle of appends.
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	// Lines written before the kill are still read: the loop ends at EOF.
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child exited before %d acknowledgements (%d): %v", killAfter, total, err)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v, want killed by SIGKILL", err)
	}
	t.Logf("child acknowledged %d appends over %d tasks before SIGKILL", total, len(acked))

	s := open(t, path, sqlite.Options{})
	defer s.Close()
	stored := int64(0)
	for id, seq := range acked {
		stored += checkTask(t, s, id, seq)
	}
	t.Logf("database holds %d appends (%d acknowledged)", stored, total)
	// The database is writable again, continuing every log.
	for id := range acked {
		info, err := s.Task(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if err := appendMessage(context.Background(), s, id, info.Seq+1, a2a.TaskStateCompleted); err != nil {
			t.Errorf("append to %s after crash: %v", id, err)
		}
	}
}

// TestCloseWhileAppending closes the store under load: every Append
// returns (nil or ErrClosed), and every nil one is in the reopened database.
func TestCloseWhileAppending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a.db")
	s := open(t, path, sqlite.Options{})
	var (
		wg     sync.WaitGroup
		ok     = make([]int64, 16)
		closed atomic.Int64
	)
	for w := range ok {
		wg.Go(func() {
			id := fmt.Sprintf("t%d", w)
			for seq := int64(1); ; seq++ {
				err := appendMessage(context.Background(), s, id, seq, a2a.TaskStateWorking)
				if errors.Is(err, sqlite.ErrClosed) {
					closed.Add(1)
					return
				}
				if err != nil {
					t.Errorf("append %s %d: %v", id, seq, err)
					return
				}
				ok[w] = seq
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Appends still blocked 30s after Close")
	}
	if closed.Load() != int64(len(ok)) {
		t.Errorf("%d writers saw ErrClosed, want %d", closed.Load(), len(ok))
	}

	ctx := context.Background()
	if err := appendMessage(ctx, s, "late", 1, a2a.TaskStateWorking); !errors.Is(err, sqlite.ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Task(ctx, "t0"); !errors.Is(err, sqlite.ErrClosed) {
		t.Errorf("Task after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Events(ctx, "t0", 0, 0); !errors.Is(err, sqlite.ErrClosed) {
		t.Errorf("Events after Close: %v, want ErrClosed", err)
	}
	if _, err := s.MessageTask(ctx, "agent", "t0/1"); !errors.Is(err, sqlite.ErrClosed) {
		t.Errorf("MessageTask after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Unfinished(ctx); !errors.Is(err, sqlite.ErrClosed) {
		t.Errorf("Unfinished after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	s = open(t, path, sqlite.Options{})
	defer s.Close()
	for w, seq := range ok {
		if seq > 0 {
			checkTask(t, s, fmt.Sprintf("t%d", w), seq)
		}
	}
}

// openCountingBatches opens a store that records the largest number of
// appends committed in one transaction.
// allInOneBatch fails t unless every append in res succeeded, in one
// transaction (biggest: from openCountingBatches).
func allInOneBatch(t *testing.T, res []<-chan error, biggest *atomic.Int64) {
	t.Helper()
	for i, r := range res {
		if err := <-r; err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if biggest.Load() < int64(len(res)) {
		t.Fatalf("largest batch %d, want the %d queued appends in one", biggest.Load(), len(res))
	}
}

func openCountingBatches(t *testing.T) (*sqlite.Store, *atomic.Int64) {
	biggest := new(atomic.Int64)
	opts := sqlite.WithBatchHook(sqlite.Options{}, func(n int) error {
		if int64(n) > biggest.Load() {
			biggest.Store(int64(n))
		}
		return nil
	})
	return open(t, filepath.Join(t.TempDir(), "a2a.db"), opts), biggest
}

// TestGroupCommit checks that concurrent appends share transactions.
func TestGroupCommit(t *testing.T) {
	s, biggest := openCountingBatches(t)
	defer s.Close()
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for seq := int64(1); seq <= 10; seq++ {
				if err := appendMessage(context.Background(), s, fmt.Sprint("t", w), seq, a2a.TaskStateWorking); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("largest batch: %d appends", biggest.Load())
	if biggest.Load() < 2 {
		t.Errorf("no transaction held more than one append")
	}
}

// TestUndecodable: what breaks the invariants readers rely on
// (record.CheckEvent: a Task without ContextID, an invalid state, a
// message without id or role) is refused, not stored. (A snapshot is
// stored only as a checkpoint, and one that breaks them is skipped:
// TestCheckpoints.)
func TestUndecodable(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "a2a.db"), sqlite.Options{})
	defer s.Close()
	bad := a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}} // no ContextID
	good := newTask("t", a2a.TaskStateWorking, 1)
	for name, a := range map[string]store.Append{
		"snapshot state": {Agent: "a", TaskID: "t", Records: []store.Record{{Event: &good}}, Snapshot: newTask("t", a2a.TaskState(42), 1)},
		"record":         {Agent: "a", TaskID: "t", Records: []store.Record{{Event: &bad}}, Snapshot: good},
		"message":        {Agent: "a", TaskID: "t", Records: []store.Record{{Event: &a2a.Message{Role: a2a.RoleUser}}}, Snapshot: good},
	} {
		if err := s.Append(ctx, a); err == nil {
			t.Errorf("%s: Append of an undecodable value succeeded", name)
		}
	}
	if _, err := s.Task(ctx, "t"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Task: %v, want ErrNotFound", err)
	}
}

func TestSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a.db")
	s := open(t, path, sqlite.Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Errorf("user_version = %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", sqlite.SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := sqlite.Open(path, sqlite.Options{}); err == nil {
		s.Close()
		t.Error("Open of a newer schema succeeded")
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "not.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"", ":memory:", "file:x.db", filepath.Join(dir, "a?b"), notDB, filepath.Join(dir, "missing", "dir", "x.db")} {
		if s, err := sqlite.Open(path, sqlite.Options{}); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	for _, batch := range []int{0, 1} {
		b.Run(fmt.Sprintf("MaxBatch=%d", batch), func(b *testing.B) {
			s := open(b, filepath.Join(b.TempDir(), "a2a.db"), sqlite.Options{MaxBatch: batch})
			defer s.Close()
			b.SetParallelism(16) // group commit needs concurrent callers
			storetest.BenchmarkAppend(b, s)
		})
	}
}

// TestMigrateFromV1 opens a database written with schema version 1 (before
// owners and push configs): it is upgraded in place, its tasks intact.
func TestMigrateFromV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	snap := []byte(`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"}}`)
	for _, q := range []string{
		`CREATE TABLE tasks (id TEXT PRIMARY KEY, agent TEXT NOT NULL, context_id TEXT NOT NULL, state TEXT NOT NULL, seq INTEGER NOT NULL, snapshot BLOB NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL)`,
		`CREATE TABLE events (task_id TEXT NOT NULL REFERENCES tasks(id), seq INTEGER NOT NULL, time INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (task_id, seq)) WITHOUT ROWID`,
		`CREATE TABLE messages (agent TEXT NOT NULL, message_id TEXT NOT NULL, task_id TEXT NOT NULL REFERENCES tasks(id), PRIMARY KEY (agent, message_id)) WITHOUT ROWID`,
		`PRAGMA user_version = 1`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO tasks VALUES ('t1', 'echo', 'c1', 'completed', 1, ?, 1, 1)`, snap); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO events VALUES ('t1', 1, 1, ?)`, snap); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info, err := s.Task(context.Background(), "t1")
	if err != nil || info.Owner != "" || info.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("migrated task: %+v %v", info, err)
	}
	if err := s.SetPushConfig(context.Background(), "t1", a2a.PushNotificationConfig{ID: "c", URL: "http://x"}, 1); err != nil {
		t.Fatalf("push configs table after migration: %v", err)
	}
}

// BenchmarkEchoTasks measures the store's share of an echo task as the
// server writes it: a durable create (the Task, with its message id),
// then the agent's artifact and final status queued without waiting, and
// the caller waiting for the final record, from 32 concurrent callers.
// Task ids are a2a.NewID's.
//
//	go test -run '^$' -bench EchoTasks ./store/sqlite
func BenchmarkEchoTasks(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "a2a.db"), sqlite.Options{})
	defer s.Close()
	ctx := context.Background()
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id, ctxID := a2a.NewID(), a2a.NewID()
			m := a2a.Message{MessageID: a2a.NewID(), Role: a2a.RoleUser, TaskID: id, ContextID: ctxID,
				Parts: []a2a.Part{a2a.NewTextPart("hello, benchmark")}}
			task := a2a.Task{ID: id, ContextID: ctxID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: time.Now()},
				History: []a2a.Message{m}}
			c := task
			if err := s.Append(ctx, store.Append{Agent: "echo", TaskID: id, Records: []store.Record{{Event: &c}},
				Snapshot: task, MessageIDs: []string{m.MessageID}}); err != nil {
				b.Error(err)
				return
			}
			art := &a2a.TaskArtifactUpdateEvent{TaskID: id, ContextID: ctxID, LastChunk: true,
				Artifact: a2a.Artifact{ArtifactID: a2a.NewID(), Name: "echo", Parts: []a2a.Part{a2a.NewTextPart("hello, benchmark")}}}
			task.Artifacts = []a2a.Artifact{art.Artifact}
			task.Status.State = a2a.TaskStateWorking
			r1 := s.AppendAsync(ctx, store.Append{TaskID: id, After: 1, Records: []store.Record{{Event: art}}, Snapshot: task})
			done := &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: ctxID, Final: true,
				Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: time.Now()}}
			task.Status = done.Status
			r2 := s.AppendAsync(ctx, store.Append{TaskID: id, After: 2, Records: []store.Record{{Event: done}}, Snapshot: task})
			if err := errors.Join(<-r1, <-r2); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestFailuresInSharedTransactions queues appends that must fail (a
// duplicate message id, a create of an existing task, an append at a stale
// seq, an append to a missing task, another agent's append) in the same
// group-committed transactions as appends that must succeed: each gets its
// own outcome, and the failed ones leave no trace.
func TestFailuresInSharedTransactions(t *testing.T) {
	s, biggest := openCountingBatches(t)
	defer s.Close()
	ctx := context.Background()
	bt := newTask("base", a2a.TaskStateWorking, 1)
	if err := s.Append(ctx, store.Append{Agent: "a", TaskID: "base", Records: []store.Record{{Event: &bt}}, Snapshot: bt, MessageIDs: []string{"taken"}}); err != nil {
		t.Fatal(err)
	}

	for round := range 20 {
		type want struct {
			res <-chan error
			err error
		}
		var ws []want
		queue := func(a store.Append, err error) { ws = append(ws, want{s.AppendAsync(ctx, a), err}) }
		good := fmt.Sprintf("g%d", round)
		gt := newTask(good, a2a.TaskStateSubmitted, 0)
		queue(store.Append{Agent: "a", TaskID: good, Records: []store.Record{{Event: &gt}}, Snapshot: gt,
			MessageIDs: []string{good + "-m1", good + "-m2"}}, nil)
		dup := fmt.Sprintf("d%d", round)
		dt := newTask(dup, a2a.TaskStateSubmitted, 0)
		queue(store.Append{Agent: "a", TaskID: dup, Records: []store.Record{{Event: &dt}}, Snapshot: dt,
			MessageIDs: []string{dup + "-m1", "taken"}}, store.ErrDuplicateMessage)
		queue(store.Append{Agent: "a", TaskID: "base", Records: []store.Record{{Event: &dt}}, Snapshot: newTask("base", a2a.TaskStateWorking, 0)}, store.ErrConflict)
		queue(store.Append{Agent: "a", TaskID: good, After: 1, Records: []store.Record{{Event: status(good, a2a.TaskStateWorking)}},
			Snapshot: newTask(good, a2a.TaskStateWorking, 0)}, nil)
		queue(store.Append{Agent: "a", TaskID: good, After: 1, Records: []store.Record{{Event: status(good, a2a.TaskStateFailed)}},
			Snapshot: newTask(good, a2a.TaskStateFailed, 0)}, store.ErrConflict)
		queue(store.Append{Agent: "a", TaskID: "missing", After: 1, Records: []store.Record{{Event: status("missing", a2a.TaskStateWorking)}},
			Snapshot: newTask("missing", a2a.TaskStateWorking, 0)}, store.ErrNotFound)
		queue(store.Append{Agent: "other", TaskID: good, After: 2, Records: []store.Record{{Event: status(good, a2a.TaskStateFailed)}},
			Snapshot: newTask(good, a2a.TaskStateFailed, 0)}, errors.New("another agent's task"))
		queue(store.Append{Agent: "a", TaskID: good, After: 2, Records: []store.Record{{Event: status(good, a2a.TaskStateCompleted)}},
			Snapshot: newTask(good, a2a.TaskStateCompleted, 0)}, nil)
		for i, w := range ws {
			err := <-w.res
			switch {
			case w.err == nil && err != nil:
				t.Fatalf("round %d append %d: %v", round, i, err)
			case w.err != nil && err == nil:
				t.Fatalf("round %d append %d succeeded, want %v", round, i, w.err)
			case errors.Is(w.err, store.ErrDuplicateMessage) || errors.Is(w.err, store.ErrConflict) || errors.Is(w.err, store.ErrNotFound):
				if !errors.Is(err, w.err) {
					t.Fatalf("round %d append %d: %v, want %v", round, i, err, w.err)
				}
			}
		}
		info, err := s.Task(ctx, good)
		if err != nil || info.Seq != 3 || info.Task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("round %d: task %s = %+v, %v", round, good, info, err)
		}
		if _, err := s.Task(ctx, dup); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("round %d: the duplicate's task exists: %v", round, err)
		}
		for id, wantTask := range map[string]string{good + "-m1": good, good + "-m2": good, dup + "-m1": "", "taken": "base"} {
			if got, err := s.MessageTask(ctx, "a", id); err != nil || got != wantTask {
				t.Fatalf("round %d: MessageTask(%s) = %q, %v; want %q", round, id, got, err, wantTask)
			}
		}
		if info, err := s.Task(ctx, "base"); err != nil || info.Seq != 1 {
			t.Fatalf("round %d: base = %+v, %v", round, info, err)
		}
	}
	t.Logf("largest batch: %d appends", biggest.Load())
	if biggest.Load() < 2 {
		t.Error("no transaction held more than one append")
	}
}

func status(taskID string, state a2a.TaskState) *a2a.TaskStatusUpdateEvent {
	return &a2a.TaskStatusUpdateEvent{TaskID: taskID, ContextID: "ctx", Status: a2a.TaskStatus{State: state}, Final: state.Final()}
}

// TestChainedAppendsInOneTransaction checks that an agent's appends queued
// back to back, which share a transaction and one write of the task row,
// keep every record and the last snapshot, and that a chain whose head
// cannot apply fails as a whole, leaving the other tasks' appends alone.
func TestChainedAppendsInOneTransaction(t *testing.T) {
	s, biggest := openCountingBatches(t)
	defer s.Close()
	ctx := context.Background()
	for _, id := range []string{"c", "other"} {
		tk := newTask(id, a2a.TaskStateSubmitted, 0)
		if err := s.Append(ctx, store.Append{Agent: "a", TaskID: id, Records: []store.Record{{Event: &tk}}, Snapshot: tk}); err != nil {
			t.Fatal(err)
		}
	}
	step := func(id string, after int64, state a2a.TaskState) store.Append {
		return store.Append{Agent: "a", TaskID: id, After: after, Records: []store.Record{{Event: status(id, state)}}, Snapshot: newTask(id, state, 0)}
	}

	release := s.HoldWriter(t)
	res := []<-chan error{
		s.AppendAsync(ctx, step("c", 1, a2a.TaskStateWorking)),
		s.AppendAsync(ctx, step("other", 1, a2a.TaskStateWorking)), // interleaved
		s.AppendAsync(ctx, step("c", 2, a2a.TaskStateInputRequired)),
		s.AppendAsync(ctx, step("c", 3, a2a.TaskStateCompleted)),
	}
	release()
	allInOneBatch(t, res, biggest)
	info, err := s.Task(ctx, "c")
	if err != nil || info.Seq != 4 || info.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task c = seq %d state %s, %v; want seq 4 completed", info.Seq, info.Task.Status.State, err)
	}
	recs, err := s.Events(ctx, "c", 0, 0)
	if err != nil || len(recs) != 4 {
		t.Fatalf("events of c: %d, %v; want 4", len(recs), err)
	}
	for i, want := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateCompleted} {
		if su, ok := recs[i+1].Event.(*a2a.TaskStatusUpdateEvent); !ok || su.Status.State != want || recs[i+1].Seq != int64(i+2) {
			t.Fatalf("record %d = %+v, want status %s", i+2, recs[i+1], want)
		}
	}

	// A chain whose head conflicts: all of it fails, nothing is written;
	// the other task's append in the same transaction succeeds.
	release = s.HoldWriter(t)
	res = []<-chan error{
		s.AppendAsync(ctx, step("other", 1, a2a.TaskStateFailed)), // conflict: other is at seq 2
		s.AppendAsync(ctx, step("other", 2, a2a.TaskStateFailed)), // would fit alone, but is built on the head
		s.AppendAsync(ctx, step("c", 4, a2a.TaskStateCompleted)),  // another task: applies
	}
	release()
	if err := <-res[0]; !errors.Is(err, store.ErrConflict) {
		t.Fatalf("chain head: %v, want ErrConflict", err)
	}
	if err := <-res[1]; !errors.Is(err, store.ErrConflict) {
		t.Fatalf("chained append after a failed head: %v, want ErrConflict", err)
	}
	if err := <-res[2]; err != nil {
		t.Fatalf("the other task's append in the same transaction: %v", err)
	}
	if info, err := s.Task(ctx, "other"); err != nil || info.Seq != 2 || info.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("task other = seq %d state %s, %v; want seq 2 working, untouched", info.Seq, info.Task.Status.State, err)
	}
	if info, err := s.Task(ctx, "c"); err != nil || info.Seq != 5 {
		t.Fatalf("task c = seq %d, %v; want 5", info.Seq, err)
	}

	// A create and its agent's first events in one transaction; a create
	// whose message id is taken fails with the events chained to it.
	create := func(id, msg string) store.Append {
		tk := newTask(id, a2a.TaskStateSubmitted, 0)
		return store.Append{Agent: "a", TaskID: id, Records: []store.Record{{Event: &tk}}, Snapshot: tk, MessageIDs: []string{msg}}
	}
	release = s.HoldWriter(t)
	res = []<-chan error{
		s.AppendAsync(ctx, create("n", "m-n")),
		s.AppendAsync(ctx, create("d", "m-n")), // the same message id
		s.AppendAsync(ctx, step("n", 1, a2a.TaskStateWorking)),
		s.AppendAsync(ctx, step("d", 1, a2a.TaskStateWorking)),
		s.AppendAsync(ctx, step("n", 2, a2a.TaskStateCompleted)),
	}
	release()
	for i, want := range []error{nil, store.ErrDuplicateMessage, nil, store.ErrDuplicateMessage, nil} {
		if err := <-res[i]; !errors.Is(err, want) {
			t.Fatalf("create phase, append %d: %v, want %v", i, err, want)
		}
	}
	if info, err := s.Task(ctx, "n"); err != nil || info.Seq != 3 || info.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task n = seq %d state %s, %v; want seq 3 completed", info.Seq, info.Task.Status.State, err)
	}
	if recs, err := s.Events(ctx, "n", 0, 0); err != nil || len(recs) != 3 {
		t.Fatalf("events of n: %d, %v; want 3", len(recs), err)
	}
	if _, err := s.Task(ctx, "d"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the duplicate's task exists: %v", err)
	}
	if got, err := s.MessageTask(ctx, "a", "m-n"); err != nil || got != "n" {
		t.Fatalf("MessageTask(m-n) = %q, %v; want n", got, err)
	}
}

// TestMessageFilterAcrossOpen checks that message ids indexed before the
// store was opened again are found (the filter's scan), and that new ones
// are answered without a read.
func TestMessageFilterAcrossOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "msgs.db")
	s, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	create := func(s *sqlite.Store, id, msg string) {
		t.Helper()
		task := a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
		if err := s.Append(ctx, store.Append{Agent: "a", TaskID: id, Records: []store.Record{{Event: &task}}, Snapshot: task, MessageIDs: []string{msg}}); err != nil {
			t.Fatal(err)
		}
	}
	if !s.MessageFilterLoaded() {
		t.Fatal("filter not in use")
	}
	create(s, "t1", "m1")
	if s.MessageFilterAbsent("a", "m1") {
		t.Error("an indexed id is absent from the filter")
	}
	if !s.MessageFilterAbsent("a", "m-new") {
		t.Error("a new id is not answered without a read")
	}
	s.Close()

	s, err = sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.MessageFilterLoaded() {
		t.Fatal("filter not in use after the scan")
	}
	if id, err := s.MessageTask(ctx, "a", "m1"); err != nil || id != "t1" {
		t.Fatalf("MessageTask(m1) after reopening = %q, %v", id, err)
	}
	if id, err := s.MessageTask(ctx, "a", "m2"); err != nil || id != "" {
		t.Fatalf("MessageTask(m2) = %q, %v", id, err)
	}
	create(s, "t2", "m2")
	if id, err := s.MessageTask(ctx, "a", "m2"); err != nil || id != "t2" {
		t.Fatalf("MessageTask(m2) after its create = %q, %v", id, err)
	}
	// A duplicate refused by the table is in the filter afterwards.
	task := a2a.Task{ID: "t3", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	if err := s.Append(ctx, store.Append{Agent: "a", TaskID: "t3", Records: []store.Record{{Event: &task}}, Snapshot: task, MessageIDs: []string{"m1"}}); err != store.ErrDuplicateMessage {
		t.Fatalf("duplicate create: %v", err)
	}
}

// TestChainedEventsInSeveralStatements checks a chain with more events than
// one INSERT writes: every one is stored, in order.
func TestChainedEventsInSeveralStatements(t *testing.T) {
	s, biggest := openCountingBatches(t)
	defer s.Close()
	ctx := context.Background()
	tk := newTask("many", a2a.TaskStateSubmitted, 0)
	release := s.HoldWriter(t)
	res := []<-chan error{s.AppendAsync(ctx, store.Append{Agent: "a", TaskID: "many", Records: []store.Record{{Event: &tk}}, Snapshot: tk})}
	seq := int64(1)
	for _, n := range []int{3, 1, 5, 2} { // 12 events in all, with the create
		recs := make([]store.Record, n)
		for i := range recs {
			recs[i] = store.Record{Event: status("many", a2a.TaskStateWorking)}
		}
		res = append(res, s.AppendAsync(ctx, store.Append{TaskID: "many", After: seq, Records: recs, Snapshot: newTask("many", a2a.TaskStateWorking, 0)}))
		seq += int64(n)
	}
	release()
	allInOneBatch(t, res, biggest)
	recs, err := s.Events(ctx, "many", 0, 0)
	if err != nil || int64(len(recs)) != seq {
		t.Fatalf("events: %d, %v; want %d", len(recs), err, seq)
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
	}
}

// TestMessageFilterSharedFile: an id that another Store on the same file
// indexed is refused here too, and from then on MessageTask finds it,
// whether the refused append was a create or a continuation.
func TestMessageFilterSharedFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	a, err := sqlite.Open(path, sqlite.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlite.Open(path, sqlite.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a.MessageFilterLoaded()
	b.MessageFilterLoaded()
	tk := a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}}
	if err := a.Append(ctx, store.Append{Agent: "ag", TaskID: "t1", Records: []store.Record{{Event: &tk}}, Snapshot: tk, MessageIDs: []string{"m1"}}); err != nil {
		t.Fatal(err)
	}
	m := a2a.Message{MessageID: "m2", Role: a2a.RoleUser, TaskID: "t1", ContextID: "c", Parts: []a2a.Part{a2a.NewTextPart("x")}}
	if err := a.Append(ctx, store.Append{Agent: "ag", TaskID: "t1", After: 1, Records: []store.Record{{Event: &m}}, Snapshot: tk, MessageIDs: []string{"m2"}}); err != nil {
		t.Fatal(err)
	}
	// A continuation with m2 through b: refused, then found.
	if err := b.Append(ctx, store.Append{Agent: "ag", TaskID: "t1", After: 2, Records: []store.Record{{Event: &m}}, Snapshot: tk, MessageIDs: []string{"m2"}}); err != store.ErrDuplicateMessage {
		t.Fatalf("continuation with an id indexed by the other store: %v", err)
	}
	if id, err := b.MessageTask(ctx, "ag", "m2"); err != nil || id != "t1" {
		t.Fatalf("MessageTask(m2) after the refused continuation = %q, %v; want t1", id, err)
	}
	// A create with m1 through b: refused, then found.
	t2 := a2a.Task{ID: "t2", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	if err := b.Append(ctx, store.Append{Agent: "ag", TaskID: "t2", Records: []store.Record{{Event: &t2}}, Snapshot: t2, MessageIDs: []string{"m1"}}); err != store.ErrDuplicateMessage {
		t.Fatalf("create with an id indexed by the other store: %v", err)
	}
	if id, err := b.MessageTask(ctx, "ag", "m1"); err != nil || id != "t1" {
		t.Fatalf("MessageTask(m1) after the refused create = %q, %v; want t1", id, err)
	}
}

// TestPing: Ping reads the database while it is open, and
// answers ErrClosed after Close.
func TestPing(t *testing.T) {
	storetest.Ping(t, open(t, filepath.Join(t.TempDir(), "a2a.db"), sqlite.Options{}))
}
