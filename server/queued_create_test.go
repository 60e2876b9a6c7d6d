package server_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

// With a store that queues appends (SQLite), a new task's create is queued
// and the agent starts before it is durable. A repeated messageId must
// still run the agent once: sent again after the first, or concurrently.
func TestQueuedCreateRunsAgentOncePerMessage(t *testing.T) {
	var runs atomic.Int64
	eng, err := server.NewEngine(context.Background(), sqliteStore(t), server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	h := server.NewHandler(eng, "a", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		runs.Add(1)
		return u.Complete(ctx, "done")
	}), card(), server.HandlerOptions{})
	ctx := context.Background()

	p := testutil.UserMessage("hi", "")
	first, err := h.SendMessageForTask(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.SendMessageForTask(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || runs.Load() != 1 {
		t.Fatalf("resent message: task %s (first %s), %d runs", again.ID, first.ID, runs.Load())
	}

	for round := range 20 {
		runs.Store(0)
		p := testutil.UserMessage("hi", "")
		var wg sync.WaitGroup
		ids := make([]string, 6)
		for i := range ids {
			wg.Go(func() {
				task, err := h.SendMessageForTask(ctx, p)
				if err != nil {
					t.Errorf("round %d: %v", round, err)
					return
				}
				ids[i] = task.ID
			})
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("round %d: concurrent sends of one message got tasks %v", round, ids)
			}
		}
		if n := runs.Load(); n != 1 {
			t.Fatalf("round %d: agent ran %d times for one message", round, n)
		}
	}
}

// queueStore is a memory store with a queued append whose creates can be
// made to fail after the engine queued them.
type queueStore struct {
	*memory.Store
	failCreates atomic.Bool
	delay       time.Duration
}

func (s *queueStore) AppendAsync(ctx context.Context, a store.Append) <-chan error {
	res := make(chan error, 1)
	go func() {
		time.Sleep(s.delay)
		if a.After == 0 && s.failCreates.Load() {
			res <- errors.New("disk full")
			return
		}
		if a.After > 0 && s.failCreates.Load() {
			// What a store does with an append chained to a failed create.
			res <- store.ErrNotFound
			return
		}
		res <- s.Store.Append(ctx, a)
	}()
	return res
}

// When the queued create fails after the agent started, the send fails,
// the execution's context is cancelled, its events are refused, and the
// engine keeps nothing of the task.
func TestQueuedCreateFailure(t *testing.T) {
	st := &queueStore{Store: memory.New(), delay: 20 * time.Millisecond}
	st.failCreates.Store(true)
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	started := make(chan struct{}, 1)
	ended := make(chan error, 1)
	h := server.NewHandler(eng, "a", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		started <- struct{}{}
		err := u.Working(ctx, "on it")
		<-ctx.Done()
		ended <- u.Complete(context.Background(), "too late")
		return err
	}), card(), server.HandlerOptions{})
	ctx := context.Background()

	p := testutil.UserMessage("hi", "")
	if task, err := h.SendMessageForTask(ctx, p); err == nil {
		t.Fatalf("send succeeded with a failed create: %+v", task)
	}
	<-started
	select {
	case err := <-ended:
		if !errors.Is(err, server.ErrTaskClosed) {
			t.Errorf("an event after the failed create: %v, want ErrTaskClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the execution's context was not cancelled")
	}
	if id, _ := st.MessageTask(ctx, "a", p.Message.MessageID); id != "" {
		t.Errorf("the message id was indexed for task %s", id)
	}

	// The same message goes through once the store works again.
	st.failCreates.Store(false)
	f := false
	p.Configuration = &a2a.SendMessageConfiguration{Blocking: &f}
	task, err := h.SendMessageForTask(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Task(ctx, task.ID); err != nil {
		t.Fatalf("created task: %v", err)
	}
	<-started
}
