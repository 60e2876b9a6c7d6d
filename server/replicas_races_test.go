package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/jackc/pgx/v5"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
)

type slowOrphans struct {
	sharedStore
	slow atomic.Bool
}

func (s *slowOrphans) Orphans(ctx context.Context, limit int) ([]store.TaskInfo, error) {
	if s.slow.Swap(false) {
		time.Sleep(700 * time.Millisecond)
	}
	return s.sharedStore.Orphans(ctx, limit)
}

// slowOrphans makes the first Orphans call (the engine's recovery) slow.
// TestReplicaSlowRecovery: a recovery that lasts longer than
// 3/5 of LeaseTime must not leave the engine serving without a lease: a
// replica that starts then does not fail its running task.
func TestReplicaSlowRecovery(t *testing.T) { forClusters(t, testReplicaSlowRecovery) }

func testReplicaSlowRecovery(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pst := c.open(t, ctx)
	defer pst.Close()
	st := &slowOrphans{sharedStore: pst}
	st.slow.Store(true)
	eng, err := server.NewEngine(ctx, st, server.EngineOptions{LeaseTime: time.Second, Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	onA := newCancelAgent()
	h := server.NewHandler(eng, "steps", onA, testutil.Card("steps"), server.HandlerOptions{})
	task := startTask(t, ctx, h)
	testutil.Receive(t, onA.started, 10*time.Second, "A")
	time.Sleep(120 * time.Millisecond)
	b := startReplica(t, ctx, c, newCancelAgent(), server.EngineOptions{LeaseTime: time.Second})
	got, err := b.h.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Errorf("A's live task after B started: %s %v", got.Status.State, err)
	}
}

// completeThenWait completes its task, then waits (cleanup) for its context.
type completeThenWait struct{ completed, ctxDone, canceled chan string }

func (a completeThenWait) Execute(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	if err := u.Complete(ctx, "done"); err != nil {
		return err
	}
	a.completed <- u.TaskID()
	select {
	case <-ctx.Done():
		a.ctxDone <- "ctx"
	case <-time.After(5 * time.Second):
	}
	return nil
}

func (a completeThenWait) Cancel(ctx context.Context, task a2a.Task) error {
	a.canceled <- task.Status.State.String()
	return nil
}

// TestReplicaResyncOwnCompletion: a resync (the listening connection
// replaced) makes the engine check its executions; one that completed its
// own task and has not returned yet is not taken for one whose task
// another process ended (its Canceler does not run).
func TestReplicaResyncOwnCompletion(t *testing.T) {
	c := pgCluster(t)
	dsn := c.dsn
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ag := completeThenWait{make(chan string, 1), make(chan string, 1), make(chan string, 1)}
	a := startReplica(t, ctx, c, ag, server.EngineOptions{})
	startTask(t, ctx, a.h)
	testutil.Receive(t, ag.completed, 10*time.Second, "completed")
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var schema string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(schema))
	ch := "a2abridge_" + hex.EncodeToString(h[:12])
	var n int
	for deadline := time.Now().Add(10 * time.Second); ; { // Watch may still be connecting
		if err := conn.QueryRow(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query = $1", "LISTEN \""+ch+"\"").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no listening connection to terminate within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case s := <-ag.canceled:
		t.Errorf("Canceler ran for a task the agent completed itself (state %s)", s)
	case <-time.After(3 * time.Second):
	}
}

// askThenLinger asks for input, then lingers a while before returning
// (cleanup), as a bridge may.
type askThenLinger struct{ asked chan string }

func (a askThenLinger) Execute(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	if err := u.RequireInput(ctx, "more?"); err != nil {
		return err
	}
	a.asked <- u.TaskID()
	select {
	case <-ctx.Done():
	case <-time.After(1500 * time.Millisecond):
	}
	return nil
}

// TestReplicaContinuedElsewhere: the continuation of A's
// task on B, while A's execution (which left it input-required) has not
// returned yet: A's execution, when it returns, does not settle the task
// that B now runs.
func TestReplicaContinuedElsewhere(t *testing.T) { forClusters(t, testReplicaContinuedElsewhere) }

func testReplicaContinuedElsewhere(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ag := askThenLinger{make(chan string, 1)}
	a := startReplica(t, ctx, c, ag, server.EngineOptions{})
	onB := newCancelAgent()
	b := startReplica(t, ctx, c, onB, server.EngineOptions{})
	time.Sleep(500 * time.Millisecond)
	task := startTask(t, ctx, a.h)
	testutil.Receive(t, ag.asked, 10*time.Second, "asked")
	visible(t, ctx, b.h, task.ID, a2a.TaskStateInputRequired)
	answerTask(t, ctx, b.h, task.ID)
	testutil.Receive(t, onB.started, 10*time.Second, "B's execution")
	time.Sleep(2500 * time.Millisecond) // A's execution returns
	got, err := b.h.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Errorf("B's running task ended by A's old execution: %s", got.Status.State)
	}
}

// slowWatch delays the notifications of other processes' appends.
type slowWatch struct {
	sharedStore
	delay time.Duration
}

func (s slowWatch) Watch(ctx context.Context, fn func(store.Change)) {
	s.sharedStore.Watch(ctx, func(c store.Change) {
		if !c.Resync {
			time.Sleep(s.delay) // on the watcher's goroutine: later ones wait too
		}
		fn(c)
	})
}

// emitAfterAgent emits a working status once go is closed and returns
// what that returned; its Canceler tells when it runs.
type emitAfterAgent struct {
	started, canceled chan string
	goOn              chan struct{}
	emitErr           chan error
}

func (a emitAfterAgent) Execute(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	a.started <- r.Task.ID
	<-a.goOn
	err := workingTwice(ctx, u, "still here")
	a.emitErr <- err
	return err
}

// workingTwice emits a working status with text and returns what that
// returned; if the event was queued (the engine queues an agent's events)
// and so returned no error, it is refused at its commit, which stops the
// execution: workingTwice waits for that (at most 5 s) and returns what a
// second working status returns, which is refused.
func workingTwice(ctx context.Context, u *server.TaskUpdater, text string) error {
	err := u.Working(ctx, text)
	if err == nil {
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
		err = u.Working(ctx, text+", again")
	}
	return err
}

func (a emitAfterAgent) Cancel(ctx context.Context, task a2a.Task) error {
	a.canceled <- task.ID
	return nil
}

// TestReplicaCancelBeforeNotified: a task canceled on
// replica B whose execution on replica A emits before A hears of the
// cancel: the event is refused (ErrTaskClosed), or, queued, never written
// and the next one refused; the execution ends, and the agent's Canceler
// still runs on A, once; the task stays canceled.
func TestReplicaCancelBeforeNotified(t *testing.T) { forClusters(t, testReplicaCancelBeforeNotified) }

func testReplicaCancelBeforeNotified(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	onA := emitAfterAgent{make(chan string, 2), make(chan string, 2), make(chan struct{}), make(chan error, 1)}
	a := startReplicaOn(t, ctx, c, onA, server.EngineOptions{}, func(st sharedStore) store.Store { return slowWatch{st, 2 * time.Second} }).h
	b := replicaOn(t, ctx, c, newCancelAgent())
	task := startTask(t, ctx, a)
	testutil.Receive(t, onA.started, 10*time.Second, "A started")
	if got, err := b.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel on B: %v %v", got, err)
	}
	close(onA.goOn) // A has not heard of the cancel yet (its notifications lag 2 s)
	select {
	case err := <-onA.emitErr:
		if !errors.Is(err, server.ErrTaskClosed) {
			t.Fatalf("the event after the cancel: %v, want ErrTaskClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not emit")
	}
	if id := testutil.Receive(t, onA.canceled, 10*time.Second, "the Canceler on A"); id != task.ID {
		t.Fatalf("Canceler ran for %s", id)
	}
	time.Sleep(2500 * time.Millisecond) // the lagging notification arrives: nothing runs twice
	select {
	case id := <-onA.canceled:
		t.Fatalf("the Canceler ran again for %s", id)
	default:
	}
	if got, err := a.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("task on A: %v %v", got.Status, err)
	}
}

// askThenEmit leaves its task input-required, then emits once goOn is
// closed (a stale execution, if the task was continued elsewhere).
type askThenEmit struct {
	asked   chan string
	goOn    chan struct{}
	emitErr chan error
}

func (a askThenEmit) Execute(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	if err := u.RequireInput(ctx, "more?"); err != nil {
		return err
	}
	a.asked <- u.TaskID()
	<-a.goOn
	a.emitErr <- workingTwice(ctx, u, "stale execution on A")
	return nil
}

// TestReplicaStaleEmitAfterContinue: A's
// execution left the task input-required and goes on; the client
// continues the task on B; A's execution, not yet notified, emits: its
// event is refused (ErrTaskClosed), or, queued, never written and the
// next one refused, instead of landing on B's run; A does not settle the
// task B runs, and nobody's Canceler runs.
func TestReplicaStaleEmitAfterContinue(t *testing.T) {
	forClusters(t, func(t *testing.T, c cluster) { testStaleEmitAfterContinue(t, c, false) })
}

// TestReplicaStaleEmitAfterRefusedContinue: as
// TestReplicaStaleEmitAfterContinue, but a continuation reaches A before
// A hears of B's and is refused there: that refusal read the log again,
// and A's stale execution must still be stopped, not append after B's
// events and then settle B's run.
func TestReplicaStaleEmitAfterRefusedContinue(t *testing.T) {
	forClusters(t, func(t *testing.T, c cluster) { testStaleEmitAfterContinue(t, c, true) })
}

func testStaleEmitAfterContinue(t *testing.T, c cluster, refusedHere bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	onA := askThenEmit{make(chan string, 1), make(chan struct{}), make(chan error, 1)}
	a := startReplicaOn(t, ctx, c, onA, server.EngineOptions{}, func(st sharedStore) store.Store { return slowWatch{st, 3 * time.Second} }).h
	onB := newCancelAgent()
	b := startReplica(t, ctx, c, onB, server.EngineOptions{})
	task := startTask(t, ctx, a)
	testutil.Receive(t, onA.asked, 10*time.Second, "A asked")
	visible(t, ctx, b.h, task.ID, a2a.TaskStateInputRequired)
	answerTask(t, ctx, b.h, task.ID)
	testutil.Receive(t, onB.started, 10*time.Second, "B's execution")
	if refusedHere {
		// A continuation that reaches A meanwhile conflicts with B's
		// appends there and is refused (the task is working): A reads
		// the log again, which must not let the stale execution go on.
		visible(t, ctx, b.h, task.ID, a2a.TaskStateWorking)
		m2 := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("answer again"))
		m2.TaskID = task.ID
		if _, err := a.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: m2, Configuration: &a2a.SendMessageConfiguration{Blocking: new(false)}}); err == nil {
			t.Fatal("a continuation of the task B runs was accepted on A")
		}
	}
	close(onA.goOn)
	if err := <-onA.emitErr; !errors.Is(err, server.ErrTaskClosed) {
		t.Fatalf("A's stale event: %v, want ErrTaskClosed", err)
	}
	time.Sleep(500 * time.Millisecond) // A's execution returned and finished
	got, err := b.h.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the task B runs is %s: A's stale execution wrote to it", got.Status.State)
	}
	for _, m := range got.History {
		for _, p := range m.Parts {
			if tp, ok := p.Content.(a2a.Text); ok && string(tp) == "stale execution on A" {
				t.Fatal("A's stale event is in the task's history")
			}
		}
	}
	select {
	case id := <-onB.canceled:
		t.Fatalf("B's Canceler ran for %s", id)
	case <-time.After(3500 * time.Millisecond): // A's lagging notification has arrived meanwhile
	}
}

// lateWatch starts watching only once open is closed (a replica whose
// LISTEN connection comes up late, or comes back: its Resync then stands
// for every notification missed), and holds the first Task read made
// once armed until proceed is closed, telling reached.
type lateWatch struct {
	sharedStore
	open             chan struct{}
	armed            *atomic.Bool
	reached, proceed chan struct{}
}

func (w lateWatch) Watch(ctx context.Context, fn func(store.Change)) {
	select {
	case <-w.open:
	case <-ctx.Done():
		return
	}
	w.sharedStore.Watch(ctx, fn)
}

func (w lateWatch) Task(ctx context.Context, id string) (store.TaskInfo, error) {
	if w.armed.CompareAndSwap(true, false) {
		close(w.reached)
		<-w.proceed
	}
	return w.sharedStore.Task(ctx, id)
}

// TestReplicaCancelStreamDuringResync: a stream on A that subscribes
// while A's resync is finding out that B canceled the task (after the
// resync woke the streams there were, before the execution's published
// tail was marked foreign) is woken when it is, and ends with the
// canceled status, instead of waiting for events A will never publish.
func TestReplicaCancelStreamDuringResync(t *testing.T) {
	forClusters(t, testReplicaCancelStreamDuringResync)
}

func testReplicaCancelStreamDuringResync(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := lateWatch{open: make(chan struct{}), armed: new(atomic.Bool), reached: make(chan struct{}), proceed: make(chan struct{})}
	onA := newCancelAgent()
	a := startReplicaOn(t, ctx, c, onA, server.EngineOptions{}, func(st sharedStore) store.Store { w.sharedStore = st; return w })
	b := replicaOn(t, ctx, c, newCancelAgent())
	task := startTask(t, ctx, a.h)
	testutil.Receive(t, onA.started, 10*time.Second, "the execution on A")
	visible(t, ctx, b, task.ID, a2a.TaskStateWorking)
	live, err := a.h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, binding.SubscribeOptions{EndOnInterrupt: true}) // the task as A has it: working
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID}); err != nil {
		t.Fatal(err)
	}
	w.armed.Store(true)
	close(w.open) // A's resync: it checks its execution, whose read of the task waits
	select {
	case <-w.reached:
	case <-ctx.Done():
		t.Fatal("A's resync did not check its execution")
	}
	done := make(chan a2a.TaskState, 1)
	go func() { st, _ := lastEvent(t, live); done <- st }()
	for server.Subscribers(a.eng, task.ID) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the stream on A did not subscribe")
		}
		time.Sleep(time.Millisecond)
	}
	close(w.proceed)
	select {
	case st := <-done:
		if st != a2a.TaskStateCanceled {
			t.Fatalf("the stream on A ended with %s", st)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream on A did not end")
	}
}
