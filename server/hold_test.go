package server_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

// TestStreamHold checks StreamEvent's hold hint, which lets the transport send
// events together: it is set only when the next event is at hand or the
// stream ends after the event, never on an event that may be followed
// by a wait.
func TestStreamHold(t *testing.T) {
	eng := memoryEngine(t)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	step := make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, u *server.TaskUpdater) error {
		if err := u.Working(ctx, "thinking"); err != nil {
			return err
		}
		<-step // until the test saw the working status
		if err := u.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("x")}}, false, true); err != nil {
			return err
		}
		return u.Complete(ctx, "")
	})
	h := server.NewHandler(eng, "hold", agent, testutil.Card("hold"), server.HandlerOptions{})
	ctx := context.Background()
	events, err := h.SendStreamingMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	var taskID string
	var got []binding.StreamEvent
	for ev, err := range events {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
		switch e := ev.Event.(type) {
		case *a2a.Task:
			// The snapshot may be held: the working status-update is
			// published before the agent waits, and may be at hand.
			taskID = e.ID
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.State == a2a.TaskStateWorking {
				if ev.Hold {
					t.Error("a status-update with nothing behind it is held")
				}
				close(step)
			}
		}
	}
	last := got[len(got)-1]
	if su, ok := last.Event.(*a2a.TaskStatusUpdateEvent); !ok || !su.Final || !last.Hold {
		t.Errorf("last event %T (hold %v): want the final status-update, held (the stream ends after it)", last.Event, last.Hold)
	}

	// A replay of the finished task: every event is at hand.
	from := int64(0)
	replay, err := h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: taskID}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ev, err := range replay {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if !ev.Hold {
			t.Errorf("replayed event %d (%T) not held", ev.Seq, ev.Event)
		}
	}
	if n != len(got) { // the log's first record is the task as created
		t.Errorf("replay: %d events, want %d", n, len(got))
	}
}

// TestFollowRunningTask checks that a subscriber joining a running task
// gets every event after its starting point once, in order: from the
// engine's tail of recent events or from the log when the tail does not
// reach back far enough.
func TestFollowRunningTask(t *testing.T) {
	eng := memoryEngine(t)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	progressed, finish := make(chan struct{}), make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, u *server.TaskUpdater) error {
		for i := range 20 { // more than the engine's tail holds
			if err := u.Working(ctx, "step "+strconv.Itoa(i)); err != nil {
				return err
			}
		}
		close(progressed)
		<-finish
		return u.Complete(ctx, "")
	})
	h := server.NewHandler(eng, "follow", agent, testutil.Card("follow"), server.HandlerOptions{})
	ctx := context.Background()
	task, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("go")),
		Configuration: &a2a.SendMessageConfiguration{Blocking: new(bool)}})
	if err != nil {
		t.Fatal(err)
	}
	<-progressed // seq 1 (the task) and 2..21 (working) are published
	type result struct {
		seqs []int64
		err  error
	}
	var results []chan result
	for _, from := range []int64{0, 3, 15, 21} {
		events, err := h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
		if err != nil {
			t.Fatal(err)
		}
		c := make(chan result, 1)
		results = append(results, c)
		go func() {
			var r result
			for ev, err := range events {
				if err != nil {
					r.err = err
					break
				}
				r.seqs = append(r.seqs, ev.Seq)
			}
			c <- r
		}()
	}
	time.Sleep(50 * time.Millisecond) // let every subscriber take what was published
	close(finish)
	for i, from := range []int64{0, 3, 15, 21} {
		r := <-results[i]
		if r.err != nil {
			t.Fatalf("from %d: %v", from, r.err)
		}
		want := from + 1
		for _, s := range r.seqs {
			if s != want {
				t.Fatalf("from %d: got seqs %v, want %d..22 each once", from, r.seqs, from+1)
			}
			want++
		}
		if want != 23 {
			t.Fatalf("from %d: got seqs %v, want %d..22", from, r.seqs, from+1)
		}
	}
}

// eventsCounter counts the log reads of a store.
type eventsCounter struct {
	*memory.Store
	reads atomic.Int64
}

func (s *eventsCounter) Events(ctx context.Context, taskID string, after int64, limit int) ([]store.Record, error) {
	s.reads.Add(1)
	return s.Store.Events(ctx, taskID, after, limit)
}

// TestFollowEndedTask checks that a subscriber arriving just after a task
// ended gets its last events from the engine's tail of recently ended
// tasks, without a log read, and from the log once that tail is gone.
func TestFollowEndedTask(t *testing.T) {
	st := &eventsCounter{Store: memory.New()}
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	h := server.NewHandler(eng, "quick", server.AgentFunc(func(ctx context.Context, req *server.Request, u *server.TaskUpdater) error {
		if err := u.Working(ctx, "on it"); err != nil {
			return err
		}
		return u.Complete(ctx, "done")
	}), testutil.Card("quick"), server.HandlerOptions{})
	ctx := context.Background()
	send := func() string {
		task, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("go"))})
		if err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	replay := func(id string) []int64 {
		from := int64(1)
		events, err := h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: id}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for ev, err := range events {
			if err != nil {
				t.Fatal(err)
			}
			seqs = append(seqs, ev.Seq)
		}
		return seqs
	}
	id := send()
	before := st.reads.Load()
	if got := replay(id); !slices.Equal(got, []int64{2, 3}) {
		t.Fatalf("replay of the ended task: seqs %v, want [2 3]", got)
	}
	if n := st.reads.Load() - before; n != 0 {
		t.Errorf("%d log reads for a task that just ended", n)
	}
	for range 1100 { // more tasks than the engine keeps the tails of
		send()
	}
	before = st.reads.Load()
	if got := replay(id); !slices.Equal(got, []int64{2, 3}) {
		t.Fatalf("replay from the log: seqs %v, want [2 3]", got)
	}
	if st.reads.Load() == before {
		t.Error("no log read for a task whose tail the engine no longer keeps")
	}
}

// TestStreamHoldSnapshot: the snapshot that opens a stream is held when
// the execution has published events by then (they leave in one write),
// and sent at once when the agent emits nothing before it waits.
func TestStreamHoldSnapshot(t *testing.T) {
	eng := memoryEngine(t)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	step := make(chan struct{})
	quiet := server.AgentFunc(func(ctx context.Context, req *server.Request, u *server.TaskUpdater) error {
		<-step // until the test saw the snapshot
		return u.Complete(ctx, "")
	})
	h := server.NewHandler(eng, "quiet", quiet, testutil.Card("quiet"), server.HandlerOptions{})
	events, err := h.SendStreamingMessage(context.Background(), a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	first := true
	for ev, err := range events {
		if err != nil {
			t.Fatal(err)
		}
		if first {
			if _, ok := ev.Event.(*a2a.Task); !ok || ev.Hold {
				t.Errorf("first event %T held %v: want the snapshot, not held (nothing follows until the agent goes on)", ev.Event, ev.Hold)
			}
			close(step)
			first = false
		}
	}
	// An agent that has emitted an event by the time the stream decides:
	// the snapshot is held (the event leaves with it in one write). The
	// hook orders the agent's artifact before that decision.
	eng2, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng2.Close(context.Background()) })
	emitted, release := make(chan struct{}), make(chan struct{})
	server.SetBeforeSnapshotHold(eng2, func(string) {
		select {
		case <-emitted:
		case <-time.After(10 * time.Second):
			t.Error("the agent did not emit its artifact within 10 s")
		}
	})
	busy := server.AgentFunc(func(ctx context.Context, req *server.Request, u *server.TaskUpdater) error {
		if err := u.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("x")}}, false, true); err != nil {
			return err
		}
		close(emitted)
		<-release
		return u.Complete(ctx, "")
	})
	hb := server.NewHandler(eng2, "busy", busy, testutil.Card("busy"), server.HandlerOptions{})
	events, err = hb.SendStreamingMessage(context.Background(), a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	first = true
	var kinds []string
	for ev, err := range events {
		if err != nil {
			t.Fatal(err)
		}
		if first {
			if _, ok := ev.Event.(*a2a.Task); !ok || !ev.Hold {
				t.Errorf("first event %T held %v: want the snapshot, held (the agent's artifact is at hand)", ev.Event, ev.Hold)
			}
			close(release)
			first = false
		}
		kinds = append(kinds, fmt.Sprintf("%T", ev.Event))
	}
	if len(kinds) != 3 {
		t.Errorf("stream events %v: want the snapshot, the artifact and the final status", kinds)
	}
}
