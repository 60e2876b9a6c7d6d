package server_test

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// A blocking message/send answers when the task is final, whatever the
// agent does after that, and when the client gives up.
func TestBlockingSendAnswersAtFinalState(t *testing.T) {
	newHandler := func(t *testing.T, agent server.AgentFunc) *server.AgentHandler {
		eng := servertest.Engine(t, server.EngineOptions{})
		t.Cleanup(func() { eng.Close(context.Background()) })
		return server.NewHandler(eng, "a", agent, card(), server.HandlerOptions{})
	}
	t.Run("input-required agent that keeps running", func(t *testing.T) {
		h := newHandler(t, func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
			if err := u.RequireInput(ctx, "more?"); err != nil {
				return err
			}
			<-ctx.Done() // until the next message supersedes this execution
			return nil
		})
		task, err := sendWithin(t, h, context.Background(), 3*time.Second)
		if err != nil || task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("task %+v, %v; want input-required", task, err)
		}
	})
	t.Run("agent that cleans up after completing", func(t *testing.T) {
		h := newHandler(t, func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
			if err := u.Complete(ctx, "done"); err != nil {
				return err
			}
			time.Sleep(time.Second)
			return nil
		})
		if task, err := sendWithin(t, h, context.Background(), 500*time.Millisecond); err != nil || task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("task %+v, %v; want completed", task, err)
		}
	})
	t.Run("client that gives up", func(t *testing.T) {
		h := newHandler(t, func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
			time.Sleep(time.Second)
			return nil
		})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := sendWithin(t, h, ctx, 500*time.Millisecond); err == nil {
			t.Fatal("no error for a send whose context ended")
		}
	})
}

// sendWithin sends a blocking message and fails t if no answer comes
// within limit.
func sendWithin(t *testing.T, h *server.AgentHandler, ctx context.Context, limit time.Duration) (*a2a.Task, error) {
	t.Helper()
	type answer struct {
		task *a2a.Task
		err  error
	}
	c := make(chan answer, 1)
	go func() {
		task, err := h.SendMessageForTask(ctx, testutil.UserMessage("hi", ""))
		c <- answer{task, err}
	}()
	select {
	case a := <-c:
		return a.task, a.err
	case <-time.After(limit):
		t.Fatalf("blocking message/send did not answer within %v", limit)
		return nil, nil
	}
}

// inlineAgent reports the goroutine its Execute runs on.
type inlineAgent struct{ ran chan uint64 }

func (a inlineAgent) Inline() bool { return true }

func (a inlineAgent) Execute(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	a.ran <- goroutineID()
	return u.Complete(ctx, "done")
}

func goroutineID() uint64 {
	var buf [64]byte
	b := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// An InlineAgent runs on the goroutine of a blocking send (memory store),
// and on its own for a non-blocking one.
func TestInlineAgentRunsOnTheSendersGoroutine(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	defer eng.Close(context.Background())
	agent := inlineAgent{ran: make(chan uint64, 2)}
	h := server.NewHandler(eng, "a", agent, card(), server.HandlerOptions{})
	if _, err := h.SendMessageForTask(context.Background(), testutil.UserMessage("hi", "")); err != nil {
		t.Fatal(err)
	}
	if got, want := <-agent.ran, goroutineID(); got != want {
		t.Errorf("blocking send: Execute ran on goroutine %d, the sender is %d", got, want)
	}
	p := testutil.UserMessage("hi", "")
	p.Configuration = &a2a.SendMessageConfiguration{Blocking: new(bool)}
	if _, err := h.SendMessageForTask(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := <-agent.ran; got == goroutineID() {
		t.Error("non-blocking send: Execute ran on the sender's goroutine")
	}
}
