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
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// Execution 1 asks for input, then takes a moment to return. The client
// answers at once. Execution 1's return does not settle the task that
// execution 2 is working on: execution 2 completes it.
func TestStaleExecutionCompletesContinuedTask(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	ex2Err := make(chan error, 1)
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if len(r.Task.History) == 1 {
			if err := u.RequireInput(ctx, "name?"); err != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond) // cleanup after asking
			return nil
		}
		_ = u.Working(ctx, "thinking")
		time.Sleep(300 * time.Millisecond)
		err := u.Complete(ctx, "second turn done")
		ex2Err <- err
		return err
	})
	h := server.NewHandler(eng, "a", agent, card(), server.HandlerOptions{})
	ctx := context.Background()
	t1, err := h.SendMessageForTask(ctx, testutil.UserMessage("hi", ""))
	if err != nil || t1.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("turn 1: %v %v", err, t1)
	}
	t2, err := h.SendMessageForTask(ctx, testutil.UserMessage("bob", t1.ID))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("turn 2 returned state=%s history=%d", t2.Status.State, len(t2.History))
	if t2.Status.Message != nil {
		t.Logf("status message: %v", t2.Status.Message.Parts)
	}
	e2 := <-ex2Err
	t.Logf("execution 2 Complete() returned: %v", e2)
	if e2 != nil {
		t.Errorf("execution 2 could not complete: task already settled by execution 1's finish")
	}
	eng.Close(ctx)
}

// The race of TestStaleExecutionCompletesContinuedTask with no sleep at
// all: the agent returns right after RequireInput.
func TestStaleExecutionRaceNoSleep(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	var closed atomic.Int64
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if len(r.Task.History) == 1 {
			return u.RequireInput(ctx, "name?")
		}
		time.Sleep(2 * time.Millisecond)
		if err := u.Complete(ctx, "done"); err != nil {
			closed.Add(1)
		}
		return nil
	})
	h := server.NewHandler(eng, "a", agent, card(), server.HandlerOptions{})
	ctx := context.Background()
	const n = 300
	for i := 0; i < n; i++ {
		t1, err := h.SendMessageForTask(ctx, testutil.UserMessage("hi", ""))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.SendMessageForTask(ctx, testutil.UserMessage("bob", t1.ID)); err != nil {
			t.Fatal(err)
		}
	}
	eng.Close(ctx)
	t.Logf("%d/%d second turns were completed by the first execution's finish", closed.Load(), n)
	if closed.Load() > 0 {
		t.Fail()
	}
}

type hookAgent struct {
	ex2 chan error // ctx.Err() seen by execution 2 after the task was canceled
}

func (a hookAgent) Execute(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	if len(r.Task.History) == 1 {
		return u.RequireInput(ctx, "more?")
	}
	time.Sleep(200 * time.Millisecond) // "side effects" of turn 2
	err := u.Working(ctx, "still going")
	a.ex2 <- ctx.Err()
	_ = err
	return nil
}

func (a hookAgent) Cancel(ctx context.Context, task a2a.Task) error {
	time.Sleep(50 * time.Millisecond) // releasing resources
	return nil
}

// tasks/cancel on an input-required task races with a continuation message:
// the task ends canceled whichever wins, and no execution runs on after it
// (a continuation that comes after the cancel is refused with -32004; one
// that came first has its execution's context canceled).
func TestCancelRacesContinuation(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	a := hookAgent{ex2: make(chan error, 1)}
	h := server.NewHandler(eng, "a", a, card(), server.HandlerOptions{})
	ctx := context.Background()
	t1, err := h.SendMessageForTask(ctx, testutil.UserMessage("hi", ""))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *a2a.Task, 1)
	go func() {
		ct, err := h.CancelTask(ctx, a2a.CancelTaskRequest{ID: t1.ID})
		if err != nil {
			t.Error(err)
		}
		done <- ct
	}()
	time.Sleep(10 * time.Millisecond)
	p := testutil.UserMessage("go on", t1.ID)
	f := false
	p.Configuration = &a2a.SendMessageConfiguration{Blocking: &f}
	_, contErr := h.SendMessageForTask(ctx, p)
	ct := <-done
	if ct == nil || ct.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel returned %+v", ct)
	}
	if contErr != nil {
		// The cancel won: a continuation of a canceled task is refused.
		if !errors.Is(contErr, a2a.ErrUnsupportedOperation) {
			t.Fatalf("continuation after cancel: %v, want -32004", contErr)
		}
	} else if e := <-a.ex2; e == nil {
		// The continuation won: cancel must have stopped execution 2.
		t.Error("task canceled but execution 2's context was never cancelled")
	}
	got, err := h.GetTask(ctx, a2a.GetTaskRequest{ID: t1.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("task after cancel: %v %v", got, err)
	}
	eng.Close(ctx)
}

// A client retries a continuation (same messageId) while the first attempt
// is in flight: the retry gets the task (deduplicated), not -32004.
func TestConcurrentDuplicateContinuation(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if len(r.Task.History) == 1 {
			return u.RequireInput(ctx, "?")
		}
		return nil
	})
	h := server.NewHandler(eng, "a", agent, card(), server.HandlerOptions{})
	ctx := context.Background()
	f := false
	bad := 0
	for i := 0; i < 300; i++ {
		t1, err := h.SendMessageForTask(ctx, testutil.UserMessage("hi", ""))
		if err != nil {
			t.Fatal(err)
		}
		p := testutil.UserMessage("again", t1.ID)
		p.Configuration = &a2a.SendMessageConfiguration{Blocking: &f}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j := range 2 {
			wg.Add(1)
			go func() { defer wg.Done(); _, errs[j] = h.SendMessageForTask(ctx, p) }()
		}
		wg.Wait()
		for _, e := range errs {
			if errors.Is(e, a2a.ErrUnsupportedOperation) {
				bad++
				if bad == 1 {
					t.Logf("retry of the same messageId answered: %v", e)
				}
			}
		}
	}
	eng.Close(ctx)
	if bad > 0 {
		t.Errorf("%d/300 duplicate continuations answered -32004 instead of the deduplicated task", bad)
	}
}
