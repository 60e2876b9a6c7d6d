package server_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

// blockAgent works until its context ends.
type blockAgent struct{ started chan struct{} }

func (a blockAgent) Execute(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	if err := u.Working(ctx, "w"); err != nil {
		return err
	}
	a.started <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

// TestNoTaskStateLeft: on SQLite (queued appends),
// tasks canceled while running, and tasks completed, leave no state in
// the engine once their executions returned.
func TestNoTaskStateLeft(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng, err := server.NewEngine(ctx, st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)
	ag := blockAgent{make(chan struct{}, 1)}
	h := server.NewHandler(eng, "b", ag, testutil.Card("b"), server.HandlerOptions{})
	blocking := false
	for range 5 {
		task, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("x")),
			Configuration: &a2a.SendMessageConfiguration{Blocking: &blocking}})
		if err != nil {
			t.Fatal(err)
		}
		<-ag.started
		if _, err := h.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID}); err != nil {
			t.Fatal(err)
		}
	}
	echo := server.NewHandler(eng, "echo", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		return u.Complete(ctx, "done")
	}), testutil.Card("echo"), server.HandlerOptions{})
	for range 5 {
		if _, err := echo.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("x"))}); err != nil {
			t.Fatal(err)
		}
	}
	var n, pipes int
	if !testutil.Poll(5*time.Second, func() bool { n, pipes = server.TaskStates(eng); return n == 0 }) {
		t.Fatalf("%d task states left (%d with a pipe) after 5 canceled and 5 completed tasks", n, pipes)
	}
}
