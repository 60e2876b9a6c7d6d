package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

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
// the task ends canceled, but execution 2 runs on with a live context.
func TestCancelRacesContinuation(t *testing.T) {
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	a := hookAgent{ex2: make(chan error, 1)}
	h := server.NewHandler(eng, "a", a, card(), server.HandlerOptions{})
	ctx := context.Background()
	t1, err := h.SendMessage(ctx, testutil.UserMessage("hi", ""))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *a2a.Task, 1)
	go func() {
		ct, err := h.CancelTask(ctx, a2a.TaskIDParams{ID: t1.ID})
		if err != nil {
			t.Error(err)
		}
		done <- ct
	}()
	time.Sleep(10 * time.Millisecond)
	p := testutil.UserMessage("go on", t1.ID)
	f := false
	p.Configuration = &a2a.MessageSendConfiguration{Blocking: &f}
	_, contErr := h.SendMessage(ctx, p)
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
	got, err := h.GetTask(ctx, a2a.TaskQueryParams{ID: t1.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("task after cancel: %v %v", got, err)
	}
	eng.Close(ctx)
}
