package server_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// A client retries a continuation (same messageId) while the first attempt
// is in flight: the retry should get the task (dedupe), not -32004.
func TestConcurrentDuplicateContinuation(t *testing.T) {
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
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
		t1, err := h.SendMessage(ctx, testutil.UserMessage("hi", ""))
		if err != nil {
			t.Fatal(err)
		}
		p := testutil.UserMessage("again", t1.ID)
		p.Configuration = &a2a.MessageSendConfiguration{Blocking: &f}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j := range 2 {
			wg.Add(1)
			go func() { defer wg.Done(); _, errs[j] = h.SendMessage(ctx, p) }()
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
