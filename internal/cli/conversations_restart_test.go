package cli

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// conversationRestartConfig is a scenario whose client turn is followed
// by an echo, and, when the client says "slow", by a participant that
// takes a minute (sleep), so that a restart can land in either phase.
const conversationRestartConfig = `
agents:
  talk:
    kind: conversation
    scenario:
      title: Talk
      agents:
        - {id: you, displayName: You, external: true}
        - {id: echo, displayName: Echo, kind: echo}
        - id: slow
          displayName: Slow
          kind: exec
          config: {command: [sh, -c, 'if grep -q slow; then sleep 60; fi; echo done'], env: [PATH]}
      startingAgentId: you
      rules: {turnPolicy: round-robin, maxTurns: 40, turnTimeout: 2m}
`

// TestConversationSurvivesKill9 kills serve (SQLite) with SIGKILL during
// a conversation and restarts it on the same data: a conversation that
// was waiting for the client keeps every acknowledged turn and goes on
// from there; one killed while an internal participant was speaking is
// failed with the recovery reason, its earlier turns kept (README,
// "Conversations", Restarts).
func TestConversationSurvivesKill9(t *testing.T) {
	for _, tool := range []string{"sh", "grep", "sleep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	dir, addr := t.TempDir(), freeAddr(t)
	cfg := writeConfig(t, conversationRestartConfig)
	args := []string{"--data", dir, "--addr", addr, "--config", cfg}
	child := startChild(t, args...)
	url := "http://" + addr + "/a2a/talk"
	ctx := context.Background()
	c, err := client.Dial(ctx, url, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// A conversation waiting for the client.
	waiting, arts, state, _ := streamTurn(t, c, "", "hello")
	if len(arts) != 2 || state != a2a.TaskStateInputRequired {
		t.Fatalf("first round: artifacts %q, state %s", arts, state)
	}
	// One whose slow participant is speaking when the process dies.
	p := testutil.UserMessage("slow please", "")
	cfgNB := false
	p.Configuration = &a2a.SendMessageConfiguration{Blocking: &cfgNB}
	res, err := c.SendMessage(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	speaking := res.(*a2a.Task).ID
	var task *a2a.Task
	if !testutil.Poll(20*time.Second, func() bool {
		task, err = c.GetTask(ctx, a2a.GetTaskRequest{ID: speaking})
		if err != nil {
			t.Fatal(err)
		}
		return len(task.Artifacts) == 1 // the echo spoke; the slow one is speaking
	}) {
		t.Fatalf("the echo did not speak: %+v", task)
	}

	child.Kill()
	startChild(t, args...)
	c, err = client.Dial(ctx, url, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// The waiting conversation goes on: the same task, the next round.
	id, arts, state, _ := streamTurn(t, c, waiting, "still there?")
	if id != waiting || len(arts) != 2 || state != a2a.TaskStateInputRequired {
		t.Fatalf("after the restart: task %s, artifacts %q, state %s", id, arts, state)
	}
	task, err = c.GetTask(ctx, a2a.GetTaskRequest{ID: waiting})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, h := range task.History {
		for _, p := range h.Parts {
			if tp, ok := p.Content.(a2a.Text); ok {
				texts = append(texts, strings.TrimSpace(string(tp)))
			}
		}
	}
	if len(task.Artifacts) != 4 || len(task.History) < 6 || texts[0] != "hello" {
		t.Fatalf("history after the restart: %d artifacts, history %q", len(task.Artifacts), texts)
	}

	// The one killed mid-turn is failed with a reason; the echo's turn
	// (acknowledged before the kill) is kept.
	task, err = c.GetTask(ctx, a2a.GetTaskRequest{ID: speaking})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateFailed || task.Status.Message == nil || len(task.Artifacts) != 1 {
		t.Fatalf("the conversation killed mid-turn: state %s, message %+v, %d artifacts", task.Status.State, task.Status.Message, len(task.Artifacts))
	}
}
