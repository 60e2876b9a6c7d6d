package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// TestShutdown: during the grace period new messages are refused (-32603,
// nothing stored) while a running task goes on; when the grace period ends
// the task is failed with the shutdown reason, its stream ends with that
// final status-update, and Shutdown reports one task failed.
func TestShutdown(t *testing.T) {
	st := memory.New()
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	wait := server.NewHandler(eng, "wait", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if err := u.Working(ctx, "waiting"); err != nil {
			return err
		}
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}), testutil.Card("wait"), server.HandlerOptions{})
	echo := server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{})
	events, err := wait.SendStreamingMessage(context.Background(), a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("x"))})
	if err != nil {
		t.Fatal(err)
	}
	last := make(chan a2a.Event, 1)
	go func() {
		var ev a2a.Event
		for e, err := range events {
			if err != nil {
				break
			}
			ev = e.Event
		}
		last <- ev
	}()
	<-started

	grace, cancel := context.WithCancel(context.Background())
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() { n, err := eng.Shutdown(grace); done <- result{n, err} }()

	// Refused while draining, until Shutdown has set it: retried briefly.
	var refused error
	for i := 0; i < 200 && refused == nil; i++ {
		m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("late"))
		if _, err := echo.SendMessageForTask(context.Background(), a2a.SendMessageRequest{Message: m}); err != nil {
			refused = err
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	var ae *a2a.Error
	if !errors.As(refused, &ae) || ae.Code != a2a.CodeInternalError {
		t.Fatalf("a message during the grace period: %v, want -32603", refused)
	}
	select {
	case r := <-done:
		t.Fatalf("Shutdown returned %+v before its grace period ended, with a task running", r)
	case <-time.After(100 * time.Millisecond):
	}
	cancel() // the grace period ends
	r := <-done
	if r.err != nil || r.n != 1 {
		t.Fatalf("Shutdown = %d, %v; want 1 task failed", r.n, r.err)
	}
	su, ok := (<-last).(*a2a.TaskStatusUpdateEvent)
	if !ok || !su.Final || su.Status.State != a2a.TaskStateFailed || su.Status.Message == nil ||
		su.Status.Message.Parts[0].Text() != "The server shut down while this task was running." {
		t.Fatalf("the stream ended with %#v, want the final failed status", su)
	}
}

// TestShutdownDoesNotWaitForPush: a webhook that is down keeps its
// delivery worker retrying, but Shutdown with nothing running returns at
// once, not at the end of its grace period (the delivery stays owed).
func TestShutdownDoesNotWaitForPush(t *testing.T) {
	hk := newHook(t)
	hk.fail.Store(true)
	eng, h := pushEngine(t, memory.New(), &fakeSigner{})
	_, err := h.SendMessageForTask(context.Background(), a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("x")),
		Configuration: &a2a.SendMessageConfiguration{PushNotificationConfig: &a2a.PushNotificationConfig{URL: hk.srv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	grace, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := eng.Shutdown(grace); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown waits for a push delivery that keeps failing")
	}
}
