package remote_test

import (
	"fmt"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/remote"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
)

// TestFirstExecutionWithHistory: a task's first execution goes to the
// remote as a new message even when the task was created with a history
// of several user messages (the conversation bridge gives each turn of an
// a2a participant the conversation so far, server.RunAgent); it used to
// fail "cannot continue" from the participant's second turn on. A task
// past its first execution without the remote's reference still fails.
func TestFirstExecutionWithHistory(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			ctx := testCtx(t)
			raw := startRawRemote(t, streaming, "")
			ag, err := remote.New(remote.Config{URL: raw.URL})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ag.Close() })
			now := a2a.NewMessage(a2a.RoleUser, a2a.TextPart{Text: "Bob: and you?"})
			hist := []a2a.Message{
				a2a.NewMessage(a2a.RoleUser, a2a.TextPart{Text: "Alice: hello"}),
				a2a.NewMessage(a2a.RoleAgent, a2a.TextPart{Text: "hi"}),
				now,
			}
			task, err := server.RunAgent(ctx, ag, &server.Request{Message: now, Task: a2a.Task{History: hist},
				Params: a2a.MessageSendParams{Message: now}}, server.RunOptions{})
			if err != nil || task.Status.State != a2a.TaskStateCompleted || testutil.StatusText(task.Status) != "direct answer" {
				t.Fatalf("first execution: %s %q %v, want completed with the remote's answer", task.Status.State, testutil.StatusText(task.Status), err)
			}
			task, _ = server.RunAgent(ctx, ag, &server.Request{Message: now, Task: a2a.Task{History: hist, Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}},
				Params: a2a.MessageSendParams{Message: now}}, server.RunOptions{})
			if task.Status.State != a2a.TaskStateFailed {
				t.Fatalf("continuation without the remote's reference: %s, want failed", task.Status.State)
			}
		})
	}
}
