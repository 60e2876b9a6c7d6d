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

// The agent asks for input and then attaches an artifact (legal: the task
// is not terminal). A resubscribe with Last-Event-ID replays past the final
// input-required event, then waits forever for another final event.
func TestReplayPastInterruptedEnds(t *testing.T) {
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if err := u.RequireInput(ctx, "which one?"); err != nil {
			return err
		}
		return u.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart{Text: "options"}}}, false, true)
	})
	h := server.NewHandler(eng, "a", agent, card(), server.HandlerOptions{})
	ctx := context.Background()
	t1, err := h.SendMessage(ctx, testutil.UserMessage("hi", ""))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	from := int64(0)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	evs, err := h.SubscribeToTask(sctx, a2a.TaskIDParams{ID: t1.ID}, &from)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n := 0
	for ev, err := range evs {
		if err != nil {
			break
		}
		n++
		t.Logf("seq %d %T", ev.Seq, ev.Event)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("replay stream of an input-required task did not end by itself (%d events, ended by ctx after %v)", n, el.Round(time.Millisecond))
	}
	eng.Close(ctx)
}
