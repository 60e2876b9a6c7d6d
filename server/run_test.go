package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

func TestRunAgent(t *testing.T) {
	ctx := context.Background()
	earlier := []a2a.Task{{ID: "e1"}, {ID: "e2"}}
	var seen []a2a.Event
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, tu *server.TaskUpdater) error {
		h, err := tu.ContextHistory(ctx, 1)
		if err != nil || len(h) != 1 || h[0].ID != "e2" {
			t.Errorf("ContextHistory(1) = %v, %v", h, err)
		}
		if req.Task.ID == "" || req.Message.TaskID != req.Task.ID || req.Task.Status.State != a2a.TaskStateSubmitted {
			t.Errorf("request %+v", req)
		}
		if err := tu.Working(ctx, "thinking"); err != nil {
			return err
		}
		return tu.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("answer")}}, false, true)
	})
	msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("q"))
	task, err := server.RunAgent(ctx, agent, &server.Request{Message: msg, Task: a2a.Task{History: []a2a.Message{msg}}},
		server.RunOptions{ContextHistory: earlier, OnEvent: func(e a2a.Event) { seen = append(seen, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || len(task.History) != 2 || len(seen) != 2 {
		t.Fatalf("task %+v, %d events", task, len(seen))
	}

	// An invalid event fails the task; events after a terminal state are refused.
	task, err = server.RunAgent(ctx, server.AgentFunc(func(ctx context.Context, req *server.Request, tu *server.TaskUpdater) error {
		if err := tu.AddArtifact(ctx, a2a.Artifact{}, false, true); !errors.Is(err, server.ErrInvalidEvent) {
			t.Errorf("artifact without id: %v", err)
		}
		if err := tu.Complete(ctx, ""); !errors.Is(err, server.ErrTaskClosed) {
			t.Errorf("after failure: %v", err)
		}
		return nil
	}), &server.Request{Message: msg}, server.RunOptions{})
	if err != nil || task.Status.State != a2a.TaskStateFailed || !strings.Contains(task.Status.Message.Parts[0].Text(), "artifact without artifactId") {
		t.Fatalf("invalid event: %v %+v", err, task.Status)
	}

	// So does a status update without a state (the zero TaskState): an
	// agent cannot move a task to TaskStateUnspecified.
	task, err = server.RunAgent(ctx, server.AgentFunc(func(ctx context.Context, req *server.Request, tu *server.TaskUpdater) error {
		if err := tu.Emit(ctx, &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{Message: &msg}}); !errors.Is(err, server.ErrInvalidEvent) {
			t.Errorf("status without a state: %v", err)
		}
		return nil
	}), &server.Request{Message: msg}, server.RunOptions{})
	if err != nil || task.Status.State != a2a.TaskStateFailed || !strings.Contains(task.Status.Message.Parts[0].Text(), "status update without a state") {
		t.Fatalf("status without a state: %v %+v", err, task.Status)
	}

	// An error or a panic fails the task and is returned.
	boom := errors.New("boom")
	task, err = server.RunAgent(ctx, server.AgentFunc(func(context.Context, *server.Request, *server.TaskUpdater) error { return boom }), &server.Request{Message: msg}, server.RunOptions{})
	if !errors.Is(err, boom) || task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("error: %v %s", err, task.Status.State)
	}
	task, err = server.RunAgent(ctx, server.AgentFunc(func(context.Context, *server.Request, *server.TaskUpdater) error { panic("oops") }), &server.Request{Message: msg}, server.RunOptions{})
	if err == nil || task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("panic: %v %s", err, task.Status.State)
	}
	// input-required stays.
	task, err = server.RunAgent(ctx, server.AgentFunc(func(ctx context.Context, _ *server.Request, tu *server.TaskUpdater) error {
		return tu.RequireInput(ctx, "more?")
	}), &server.Request{Message: msg}, server.RunOptions{})
	if err != nil || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("input-required: %v %s", err, task.Status.State)
	}
}

type cancelNoter struct{ server.Agent }

func (cancelNoter) CancelMessage(task a2a.Task) *a2a.Message {
	m := a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart("bye "+task.ID))
	return &m
}

func TestMountNoPushCancelMessage(t *testing.T) {
	ctx := context.Background()
	eng, err := server.NewEngine(ctx, memory.New(), server.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Shutdown(ctx)
	agent := cancelNoter{server.AgentFunc(func(ctx context.Context, _ *server.Request, tu *server.TaskUpdater) error {
		return tu.RequireInput(ctx, "more?")
	})}
	h := server.NewHandler(eng, "m", agent, a2a.AgentCard{Name: "m", Description: "d", Version: "1"}, server.HandlerOptions{NoPush: true})
	host := server.NewHost(server.HostOptions{PublicURL: "http://example.test"})
	mux := http.NewServeMux()
	mux.Handle("/custom/x/", host.Mount(h, "/custom/x/"))
	mux.Handle("/custom/x", host.Mount(h, "/custom/x"))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/custom/x/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_, _ = readAllTo(&b, resp)
	if resp.StatusCode != 200 || !strings.Contains(b.String(), `"url":"http://example.test/custom/x"`) || !strings.Contains(b.String(), `"pushNotifications":false`) {
		t.Fatalf("card: %d %s", resp.StatusCode, b.String())
	}
	if len(host.Agents()) != 0 {
		t.Fatalf("Mount listed the agent: %v", host.Agents())
	}
	msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("q"))
	task, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: msg, Configuration: &a2a.SendMessageConfiguration{PushNotificationConfig: &a2a.PushNotificationConfig{URL: "https://x"}}})
	if !errors.Is(err, a2a.ErrPushNotificationNotSupported) {
		t.Fatalf("send with push config: %v", err)
	}
	if task, err = h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: msg}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: task.ID}); !errors.Is(err, a2a.ErrPushNotificationNotSupported) {
		t.Fatalf("push set: %v", err)
	}
	if err := h.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID}); !errors.Is(err, a2a.ErrPushNotificationNotSupported) {
		t.Fatalf("push delete: %v", err)
	}
	c, err := h.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	last := c.History[len(c.History)-1]
	if c.Status.Message == nil || last.Parts[0].Text() != "bye "+task.ID || last.Role != a2a.RoleAgent || last.TaskID != task.ID {
		t.Fatalf("cancel message: %+v / %+v", c.Status, last)
	}
}

func readAllTo(b *strings.Builder, resp *http.Response) (int64, error) {
	defer resp.Body.Close()
	return io.Copy(b, resp.Body)
}

// cancelRecorder is an agent whose Execute runs exec and whose Cancel
// records the tasks it is called with.
type cancelRecorder struct {
	exec     func(ctx context.Context, tu *server.TaskUpdater) error
	canceled []a2a.Task
	ctxErr   error // Cancel's context's error when it was called
	fail     error
	panics   bool
}

func (c *cancelRecorder) Execute(ctx context.Context, req *server.Request, tu *server.TaskUpdater) error {
	return c.exec(ctx, tu)
}

func (c *cancelRecorder) Cancel(ctx context.Context, task a2a.Task) error {
	c.canceled = append(c.canceled, task)
	c.ctxErr = ctx.Err()
	if c.panics {
		panic("boom")
	}
	return c.fail
}

// A turn whose context ends before the agent reached a terminal state
// calls the agent's Canceler (a remote task is then canceled); one that
// ends on its own does not.
func TestRunAgentCancelsAbandonedTask(t *testing.T) {
	hang := func(ctx context.Context, tu *server.TaskUpdater) error {
		if err := tu.Working(ctx, "thinking"); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	}
	msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))
	req := func() *server.Request {
		return &server.Request{Message: msg, Task: a2a.Task{History: []a2a.Message{msg}}}
	}

	t.Run("ctx ended", func(t *testing.T) {
		ag := &cancelRecorder{exec: hang}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { cancel() }()
		task, err := server.RunAgent(ctx, ag, req(), server.RunOptions{})
		if !errors.Is(err, context.Canceled) || task.Status.State != a2a.TaskStateFailed {
			t.Fatalf("RunAgent = %s, %v; want failed, context.Canceled", task.Status.State, err)
		}
		if len(ag.canceled) != 1 || ag.canceled[0].ID != task.ID || ag.canceled[0].Status.State != a2a.TaskStateFailed {
			t.Fatalf("Cancel called with %+v; want once with the failed task %s", ag.canceled, task.ID)
		}
		if ag.ctxErr != nil {
			t.Errorf("Cancel's context already ended: %v", ag.ctxErr)
		}
	})
	t.Run("interrupted, then ctx ended", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		ag := &cancelRecorder{exec: func(ctx context.Context, tu *server.TaskUpdater) error {
			err := tu.RequireInput(ctx, "which one?")
			cancel()
			return err
		}}
		task, err := server.RunAgent(ctx, ag, req(), server.RunOptions{})
		if !errors.Is(err, context.Canceled) || task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("RunAgent = %s, %v", task.Status.State, err)
		}
		if len(ag.canceled) != 1 {
			t.Fatalf("Cancel called %d times; want 1", len(ag.canceled))
		}
	})
	t.Run("cancel error and panic joined", func(t *testing.T) {
		for _, ag := range []*cancelRecorder{{exec: hang, fail: errors.New("remote unreachable")}, {exec: hang, panics: true}} {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := server.RunAgent(ctx, ag, req(), server.RunOptions{})
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancel hook") {
				t.Errorf("RunAgent error %v; want context.Canceled joined with the cancel hook's", err)
			}
		}
	})
	t.Run("ended by the agent", func(t *testing.T) {
		for _, exec := range []func(context.Context, *server.TaskUpdater) error{
			func(ctx context.Context, tu *server.TaskUpdater) error { return tu.Complete(ctx, "done") },
			func(ctx context.Context, tu *server.TaskUpdater) error { return nil },
			func(ctx context.Context, tu *server.TaskUpdater) error { return errors.New("broken") },
			func(ctx context.Context, tu *server.TaskUpdater) error { return tu.RequireInput(ctx, "more?") },
		} {
			ag := &cancelRecorder{exec: exec}
			if _, err := server.RunAgent(context.Background(), ag, req(), server.RunOptions{}); len(ag.canceled) != 0 {
				t.Errorf("Cancel called for a task the agent ended (err %v)", err)
			}
		}
	})
	t.Run("terminal, then ctx ended", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		ag := &cancelRecorder{exec: func(c context.Context, tu *server.TaskUpdater) error {
			err := tu.Complete(c, "done")
			cancel()
			return err
		}}
		task, _ := server.RunAgent(ctx, ag, req(), server.RunOptions{})
		if task.Status.State != a2a.TaskStateCompleted || len(ag.canceled) != 0 {
			t.Errorf("state %s, Cancel called %d times; want completed, 0", task.Status.State, len(ag.canceled))
		}
	})
}

// An agent whose output passes RunOptions.MaxOutputBytes is stopped: the
// event that passes it is refused, the task failed with the limit named,
// its context cancelled and its Cancel called; what came before is kept.
func TestRunAgentOutputLimit(t *testing.T) {
	msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))
	chunk := strings.Repeat("x", 1000)
	var emitted int
	var emitErr error
	ag := &cancelRecorder{exec: func(ctx context.Context, tu *server.TaskUpdater) error {
		for ctx.Err() == nil {
			if emitErr = tu.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart(chunk)}}, emitted > 0, false); emitErr != nil {
				<-ctx.Done() // the limit cancelled the execution
				return emitErr
			}
			emitted++
		}
		return ctx.Err()
	}}
	task, err := server.RunAgent(context.Background(), ag, &server.Request{Message: msg, Task: a2a.Task{History: []a2a.Message{msg}}},
		server.RunOptions{MaxOutputBytes: 10_500})
	if !errors.Is(err, server.ErrOutputLimit) || !errors.Is(emitErr, server.ErrOutputLimit) {
		t.Fatalf("RunAgent error %v, Emit error %v; want ErrOutputLimit", err, emitErr)
	}
	if task.Status.State != a2a.TaskStateFailed || task.Status.Message == nil || !strings.Contains(task.Status.Message.Parts[0].Text(), "limit of 10500 bytes") {
		t.Fatalf("task status %+v; want failed naming the limit", task.Status)
	}
	if n := len(artifactText(task)); emitted != 10 || n != 10*len(chunk) {
		t.Fatalf("%d chunks accepted, artifact of %d bytes; want the 10 that fit", emitted, n)
	}
	if len(ag.canceled) != 1 {
		t.Fatalf("Cancel called %d times; want 1", len(ag.canceled))
	}
}

// artifactText is the text of a task's artifacts.
func artifactText(task a2a.Task) string {
	var b strings.Builder
	for _, art := range task.Artifacts {
		for _, p := range art.Parts {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}
