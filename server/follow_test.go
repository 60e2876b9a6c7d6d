package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

func TestFollowStress(t *testing.T) {
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			var st store.Store = memory.New()
			if name == "sqlite" {
				s, err := sqlite.Open(t.TempDir()+"/db", sqlite.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				st = s
			}
			eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
			if err != nil {
				t.Fatal(err)
			}
			const N = 600
			agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
				for i := range N {
					if err := u.AddArtifact(ctx, a2a.Artifact{ArtifactID: fmt.Sprint(i % 7), Parts: []a2a.Part{a2a.NewTextPart("x")}}, i >= 7, false); err != nil {
						return err
					}
				}
				return nil
			})
			h := server.NewHandler(eng, "a", agent, card(), server.HandlerOptions{})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for task := 0; task < 4; task++ {
				evs, err := h.SendStreamingMessage(ctx, testutil.UserMessage("go", ""))
				if err != nil {
					t.Fatal(err)
				}
				var id string
				for ev := range evs {
					id = ev.Event.(*a2a.Task).ID
					break
				}
				for s := 0; s < 8; s++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
						from := int64(rand.IntN(2))
						evs, err := h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: id}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
						if err != nil {
							t.Error(err)
							return
						}
						next := from + 1
						last := a2a.Event(nil)
						for ev, err := range evs {
							if err != nil {
								t.Error(err)
								return
							}
							if ev.Seq != next {
								t.Errorf("task %s: got seq %d want %d", id, ev.Seq, next)
								return
							}
							next++
							last = ev.Event
							if rand.IntN(50) == 0 {
								time.Sleep(time.Millisecond)
							}
						}
						su, ok := last.(*a2a.TaskStatusUpdateEvent)
						if !ok || !su.Final || ctx.Err() != nil {
							t.Errorf("stream did not end on final: %T ctx=%v", last, ctx.Err())
						}
					}()
				}
			}
			wg.Wait()
			eng.Close(context.Background())
		})
	}
}

// The agent asks for input and then attaches an artifact (legal: the task
// is not terminal). A resubscribe from the first event replays past the
// input-required event and then ends by itself: the stream of an
// interrupted task does not wait for another final event.
func TestReplayPastInterruptedEnds(t *testing.T) {
	eng := memoryEngine(t)
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if err := u.RequireInput(ctx, "which one?"); err != nil {
			return err
		}
		return u.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("options")}}, false, true)
	})
	h := server.NewHandler(eng, "a", agent, card(), server.HandlerOptions{})
	ctx := context.Background()
	t1, err := h.SendMessageForTask(ctx, testutil.UserMessage("hi", ""))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	from := int64(0)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	evs, err := h.SubscribeToTask(sctx, a2a.SubscribeToTaskRequest{ID: t1.ID}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
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
