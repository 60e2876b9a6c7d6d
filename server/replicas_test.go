package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/postgres"
)

// stepAgent emits a working status-update for each value it receives on
// steps, and completes when steps is closed.
type stepAgent struct{ steps chan string }

func (a stepAgent) Execute(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	for {
		select {
		case s, ok := <-a.steps:
			if !ok {
				return u.Complete(ctx, "done")
			}
			if err := u.Working(ctx, s); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// replica is one replica of a test: its store, engine and handler.
type replica struct {
	st  sharedStore
	eng *server.Engine
	h   *server.AgentHandler
}

// sharedStore is a store as the replicas of a server share it.
type sharedStore interface {
	store.Store
	store.Watcher
	store.Leaser
	store.PushClaimer
}

// cluster is the store a test's replicas share: a PostgreSQL schema
// (dsn), or one memory Store (mem) whose Replicas they are; the same
// engine code runs on both.
type cluster struct {
	dsn string
	mem *memory.Store
}

// pgCluster is a cluster on a new PostgreSQL schema (pgtest.DSN: the test
// is skipped without PostgreSQL, failed under CI).
func pgCluster(t *testing.T) cluster { return cluster{dsn: pgtest.DSN(t)} }

// forClusters runs f on a memory cluster and on a PostgreSQL one.
func forClusters(t *testing.T, f func(t *testing.T, c cluster)) {
	t.Run("memory", func(t *testing.T) { f(t, cluster{mem: memory.New()}) })
	t.Run("postgres", func(t *testing.T) { f(t, pgCluster(t)) })
}

// open returns a new process's handle on the cluster's store: a
// PostgreSQL Store with notifications, or a memory Replica.
func (c cluster) open(t *testing.T, ctx context.Context) sharedStore {
	t.Helper()
	if c.mem != nil {
		return c.mem.Replica()
	}
	st, err := postgres.Open(ctx, c.dsn, postgres.Options{Notify: true})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// replicaOn is a replica on the cluster: its own store handle (with
// notifications) and engine, serving agent as "steps".
func replicaOn(t *testing.T, ctx context.Context, c cluster, agent server.Agent) *server.AgentHandler {
	t.Helper()
	return startReplica(t, ctx, c, agent, server.EngineOptions{}).h
}

func startReplica(t *testing.T, ctx context.Context, c cluster, agent server.Agent, o server.EngineOptions) *replica {
	t.Helper()
	return startReplicaOn(t, ctx, c, agent, o, nil)
}

// startReplicaOn is startReplica with the engine on wrap(store) (nil:
// the store itself): a test's store that fails or delays some calls.
func startReplicaOn(t *testing.T, ctx context.Context, c cluster, agent server.Agent, o server.EngineOptions, wrap func(sharedStore) store.Store) *replica {
	t.Helper()
	st := c.open(t, ctx)
	o.Logger = testutil.Logger()
	var es store.Store = st
	if wrap != nil {
		es = wrap(st)
	}
	eng, err := server.NewEngine(ctx, es, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		eng.Close(cctx)
		st.Close()
	})
	return &replica{st: st, eng: eng, h: server.NewHandler(eng, "steps", agent, testutil.Card("steps"), server.HandlerOptions{})}
}

// cancelAgent works until its context ends; it tells when it started,
// when its context ended, and when its Canceler ran.
type cancelAgent struct{ started, ctxDone, canceled chan string }

func newCancelAgent() cancelAgent {
	return cancelAgent{make(chan string, 4), make(chan string, 4), make(chan string, 4)}
}

func (a cancelAgent) Execute(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	if err := u.Working(ctx, "started"); err != nil {
		return err
	}
	a.started <- r.Task.ID
	<-ctx.Done()
	a.ctxDone <- r.Task.ID
	return ctx.Err()
}

func (a cancelAgent) Cancel(ctx context.Context, task a2a.Task) error {
	a.canceled <- task.ID
	return nil
}

// startTask sends "go" to h without waiting for the task (non-blocking)
// and returns the task as accepted.
func startTask(t *testing.T, ctx context.Context, h *server.AgentHandler) *a2a.Task {
	t.Helper()
	blocking := false
	task, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("go")),
		Configuration: &a2a.SendMessageConfiguration{Blocking: &blocking}})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// answerTask sends the user message "answer" to the task taskID through
// h without waiting for the task to settle, as a client continuing an
// interrupted task does.
func answerTask(t *testing.T, ctx context.Context, h *server.AgentHandler, taskID string) {
	t.Helper()
	m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("answer"))
	m.TaskID = taskID
	if _, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{Blocking: new(false)}}); err != nil {
		t.Fatal(err)
	}
}

// visible waits until h shows the task in state: an agent's event has
// returned once queued, and is in the store (and on every replica) once
// committed, a moment later.
func visible(t *testing.T, ctx context.Context, h *server.AgentHandler, id string, state a2a.TaskState) {
	t.Helper()
	var got *a2a.Task
	var err error
	if !testutil.Poll(10*time.Second, func() bool {
		got, err = h.GetTask(ctx, a2a.GetTaskRequest{ID: id})
		return err == nil && got.Status.State == state
	}) {
		t.Fatalf("task %s: not %s within 10 s: %+v %v", id, state, got.Status, err)
	}
}

// lastEvent drains a stream and returns its last event's state and the
// number of events.
func lastEvent(t *testing.T, evs func(func(binding.StreamEvent, error) bool)) (a2a.TaskState, int) {
	t.Helper()
	var st a2a.TaskState
	n := 0
	for ev, err := range evs {
		if err != nil {
			t.Fatal(err)
		}
		n++
		switch e := ev.Event.(type) {
		case *a2a.Task:
			st = e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			st = e.Status.State
		}
	}
	return st, n
}

// TestReplicaCancel: tasks/cancel on replica B of a task
// running on replica A stops the execution on A (its context ends, the
// agent's Canceler runs there); streams on A, open before or resumed
// after, end with the canceled status.
func TestReplicaCancel(t *testing.T) { forClusters(t, testReplicaCancel) }

func testReplicaCancel(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	onA, onB := newCancelAgent(), newCancelAgent()
	a := startReplica(t, ctx, c, onA, server.EngineOptions{})
	b := startReplica(t, ctx, c, onB, server.EngineOptions{})
	task := startTask(t, ctx, a.h)
	testutil.Receive(t, onA.started, 10*time.Second, "the execution on A")
	visible(t, ctx, b.h, task.ID, a2a.TaskStateWorking)
	before, err := a.h.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID})
	if err != nil || before.Status.State != a2a.TaskStateWorking {
		t.Fatalf("before the cancel: %+v %v", before.Status, err)
	}
	live, err := a.h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, binding.SubscribeOptions{EndOnInterrupt: true})
	if err != nil {
		t.Fatal(err)
	}
	liveDone := make(chan a2a.TaskState, 1)
	go func() { st, _ := lastEvent(t, live); liveDone <- st }()

	canceled, err := b.h.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel on B: %+v %v", canceled, err)
	}
	if id := testutil.Receive(t, onA.ctxDone, 10*time.Second, "the execution's context on A"); id != task.ID {
		t.Fatalf("context of %s ended", id)
	}
	testutil.Receive(t, onA.canceled, 10*time.Second, "the Canceler on A")
	select {
	case st := <-liveDone:
		if st != a2a.TaskStateCanceled {
			t.Fatalf("the stream on A ended with %s", st)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream on A did not end")
	}
	// Resumed on A after the last event it knew before the cancel.
	from := int64(2)
	resumed, err := a.h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
	if err != nil {
		t.Fatal(err)
	}
	if st, n := lastEvent(t, resumed); st != a2a.TaskStateCanceled || n == 0 {
		t.Fatalf("resumed on A: %s after %d events", st, n)
	}
	if got, err := a.h.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("on A: %+v %v", got.Status, err)
	}
}

// TestReplicaLeases: a replica that starts does not fail
// the tasks another live replica runs, however long they run; when that
// replica dies (here: its store is closed under its engine, so it can
// neither renew its lease nor fail its own tasks), another one fails its
// running task with the recovery reason within the lease time, and a
// stream on it gets that final event.
func TestReplicaLeases(t *testing.T) { forClusters(t, testReplicaLeases) }

func testReplicaLeases(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const lease = time.Second
	onA := newCancelAgent()
	a := startReplica(t, ctx, c, onA, server.EngineOptions{LeaseTime: lease})
	task := startTask(t, ctx, a.h)
	testutil.Receive(t, onA.started, 10*time.Second, "the execution on A")
	b := startReplica(t, ctx, c, newCancelAgent(), server.EngineOptions{LeaseTime: lease})
	time.Sleep(3 * lease)
	if got, err := b.h.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("A's running task after B started and %v passed: %+v %v", 3*lease, got.Status, err)
	}
	live, err := b.h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, binding.SubscribeOptions{EndOnInterrupt: true})
	if err != nil {
		t.Fatal(err)
	}
	died := time.Now()
	a.st.Close()
	st, _ := lastEvent(t, live)
	took := time.Since(died)
	if st != a2a.TaskStateFailed || took > lease+2*time.Second {
		t.Fatalf("after A died: the stream on B ended with %s after %v (lease time %v)", st, took, lease)
	}
	got, err := b.h.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateFailed || got.Status.Message == nil ||
		got.Status.Message.Parts[0].Text() != server.RecoveryMessage {
		t.Fatalf("A's task on B: %+v %v", got.Status, err)
	}
	t.Logf("A's running task failed by B %v after A died (lease time %v)", took.Round(time.Millisecond), lease)
}

// TestReplicaMessageIDs: one message sent at once to two
// replicas (a client's retry that a load balancer sends elsewhere) makes
// one task: the database decides, and the replica that lost answers
// with the winner's task. A different message under the same id is
// refused on either replica.
func TestReplicaMessageIDs(t *testing.T) { forClusters(t, testReplicaMessageIDs) }

func testReplicaMessageIDs(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, b := replicaOn(t, ctx, c, agents.Echo{}), replicaOn(t, ctx, c, agents.Echo{})
	for round := range 20 {
		m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(fmt.Sprint("hello ", round)))
		type res struct {
			task *a2a.Task
			err  error
		}
		out := make(chan res, 2)
		for _, h := range []*server.AgentHandler{a, b} {
			go func() {
				task, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: m})
				out <- res{task, err}
			}()
		}
		r1, r2 := <-out, <-out
		if r1.err != nil || r2.err != nil {
			t.Fatalf("round %d: %v, %v", round, r1.err, r2.err)
		}
		if r1.task.ID != r2.task.ID {
			t.Fatalf("round %d: one message made two tasks, %s and %s", round, r1.task.ID, r2.task.ID)
		}
		other := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("something else"))
		other.MessageID = m.MessageID
		for _, h := range []*server.AgentHandler{a, b} {
			if _, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: other}); err == nil {
				t.Fatalf("round %d: a different message under a used messageId was accepted", round)
			}
		}
	}
}

// TestReplicaStreams: two engines on one PostgreSQL schema,
// as two replicas: a task runs on replica A; streams on replica B (from
// the snapshot, and resumed after a Last-Event-ID) get each of its events
// once, in order, live, up to the final one.
func TestReplicaStreams(t *testing.T) { forClusters(t, testReplicaStreams) }

func testReplicaStreams(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	replica := func(agent server.Agent) *server.AgentHandler { return replicaOn(t, ctx, c, agent) }
	steps := make(chan string)
	a := replica(stepAgent{steps: steps})
	b := replica(stepAgent{steps: make(chan string)}) // runs nothing here

	task := startTask(t, ctx, a)
	type got struct {
		seq  int64
		text string
	}
	follow := func(from *int64) (<-chan got, <-chan error) {
		evs, err := b.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, binding.SubscribeOptions{From: from, EndOnInterrupt: true})
		if err != nil {
			t.Fatal(err)
		}
		out, done := make(chan got, 64), make(chan error, 1)
		go func() {
			defer close(out)
			for ev, err := range evs {
				if err != nil {
					done <- err
					return
				}
				g := got{seq: ev.Seq}
				switch e := ev.Event.(type) {
				case *a2a.Task:
					g.text = "task:" + e.Status.State.String()
				case *a2a.TaskStatusUpdateEvent:
					g.text = e.Status.State.String()
					if e.Status.Message != nil {
						g.text += ":" + e.Status.Message.Parts[0].Text()
					}
				}
				out <- g
			}
			done <- nil
		}()
		return out, done
	}
	next := func(c <-chan got, what string) got {
		t.Helper()
		select {
		case g, ok := <-c:
			if !ok {
				t.Fatalf("%s: the stream ended", what)
			}
			return g
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no event within 10 s on replica B", what)
		}
		return got{}
	}
	live, liveDone := follow(nil)
	first := next(live, "snapshot")
	if first.text != "task:submitted" && first.text != "task:working" {
		t.Fatalf("snapshot: %+v", first)
	}
	last := first.seq
	for i := range 5 {
		want := fmt.Sprintf("working:step %d", i)
		steps <- fmt.Sprintf("step %d", i)
		for {
			g := next(live, want)
			if g.seq <= last {
				t.Fatalf("event %+v after seq %d: repeated or out of order", g, last)
			}
			last = g.seq
			if g.text == want {
				break
			}
			if g.text != "working" { // the execution's own start
				t.Fatalf("event %+v, want %s", g, want)
			}
		}
	}
	// A second stream on B resumes after the third step's event.
	from := last - 2
	resumed, resumedDone := follow(&from)
	for _, want := range []string{"working:step 3", "working:step 4"} {
		if g := next(resumed, "resumed "+want); g.text != want || g.seq != from+1 {
			t.Fatalf("resumed: %+v, want %s at %d", g, want, from+1)
		}
		from++
	}
	close(steps)
	for _, c := range []struct {
		events <-chan got
		done   <-chan error
		name   string
	}{{live, liveDone, "live"}, {resumed, resumedDone, "resumed"}} {
		g := next(c.events, c.name+" completion")
		if g.text != "completed:done" || g.seq != last+1 {
			t.Fatalf("%s: %+v, want completed:done at %d", c.name, g, last+1)
		}
		if _, more := <-c.events; more {
			t.Fatalf("%s: events after the final one", c.name)
		}
		if err := <-c.done; err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
}
