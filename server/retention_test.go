package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// TestRetention: with EngineOptions.Retention, a finished task is deleted
// once it is older than the retention (tasks/get: -32001), while a task
// still running is kept however old.
func TestRetention(t *testing.T) {
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			st := sqliteStore(t)
			if name == "memory" {
				st = memory.New()
			}
			eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger(), Retention: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close(context.Background())
			echo := server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{})
			wait := server.NewHandler(eng, "wait", waitAgent{canceled: make(chan string, 1)}, testutil.Card("wait"), server.HandlerOptions{})
			ctx := context.Background()
			done, err := echo.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("x"))})
			if err != nil || done.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("send: %v %v", done, err)
			}
			blocking := false
			running, err := wait.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("x")),
				Configuration: &a2a.SendMessageConfiguration{Blocking: &blocking}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := echo.GetTask(ctx, a2a.GetTaskRequest{ID: done.ID}); err != nil {
				t.Fatalf("tasks/get right after: %v", err)
			}
			if !testutil.Poll(10*time.Second, func() bool {
				_, err = echo.GetTask(ctx, a2a.GetTaskRequest{ID: done.ID})
				e, ok := err.(*a2a.Error)
				return ok && e.Code == a2a.CodeTaskNotFound
			}) {
				t.Fatalf("the finished task is still there after 10 s (retention 300 ms): %v", err)
			}
			got, err := wait.GetTask(ctx, a2a.GetTaskRequest{ID: running.ID})
			if err != nil || got.Status.State.Terminal() {
				b, _ := json.Marshal(got)
				t.Fatalf("the running task: %s %v", b, err)
			}
		})
	}
}
