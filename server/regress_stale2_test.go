package server_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// Same race with no sleep at all: the agent returns right after RequireInput.
func TestStaleExecutionRaceNoSleep(t *testing.T) {
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
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
		t1, err := h.SendMessage(ctx, testutil.UserMessage("hi", ""))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.SendMessage(ctx, testutil.UserMessage("bob", t1.ID)); err != nil {
			t.Fatal(err)
		}
	}
	eng.Close(ctx)
	t.Logf("%d/%d second turns were completed by the first execution's finish", closed.Load(), n)
	if closed.Load() > 0 {
		t.Fail()
	}
}
