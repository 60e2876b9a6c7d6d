package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

func card() a2a.AgentCard {
	return a2a.AgentCard{Name: "x", Description: "x", Version: "1", Capabilities: a2a.AgentCapabilities{Streaming: true}}
}

// Execution 1 asks for input, then takes a moment to return. The client
// answers at once. Execution 1's finish() completes the task that
// execution 2 is still working on.
func TestStaleExecutionCompletesContinuedTask(t *testing.T) {
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
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
	t1, err := h.SendMessage(ctx, testutil.UserMessage("hi", ""))
	if err != nil || t1.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("turn 1: %v %v", err, t1)
	}
	t2, err := h.SendMessage(ctx, testutil.UserMessage("bob", t1.ID))
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
