package remote_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/remote"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

// A turn of a conversation (server.RunAgent) whose context ends while the
// remote task is working cancels the remote task: it
// does not keep running on the remote.
func TestRunAgentAbandonedCancelsRemoteTask(t *testing.T) {
	st := memory.New()
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	hang := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if err := u.Working(ctx, "thinking"); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-stop: // the test ends: a remote task left running must not hold it
			return errors.New("test over")
		}
	})
	host := servertest.Host("", server.NewHandler(eng, "hang", hang, testCard("hang", true), server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	defer ts.Close()
	defer eng.Shutdown(context.Background())
	defer close(stop)

	ag, err := remote.New(remote.Config{URL: ts.URL + "/a2a/hang"})
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))
	// The turn is given up as soon as the remote task is known.
	onEvent := func(ev a2a.Event) {
		if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && su.Metadata[remote.MetadataKey] != nil {
			cancel()
		}
	}
	res, err := server.RunAgent(ctx, ag, &server.Request{Message: msg, Task: a2a.Task{History: []a2a.Message{msg}}}, server.RunOptions{OnEvent: onEvent})
	if !errors.Is(err, context.Canceled) || res.Status.State != a2a.TaskStateFailed {
		t.Fatalf("turn: state %s, err %v; want failed, context.Canceled", res.Status.State, err)
	}
	ref, ok := remote.RefOf(res)
	if !ok {
		t.Fatalf("the turn's task names no remote task: %+v", res.Metadata)
	}
	page, err := st.ListTasks(context.Background(), store.TaskQuery{Agent: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 1 {
		t.Fatalf("%d remote tasks; want 1", len(page.Tasks))
	}
	if got := page.Tasks[0].Task; got.ID != ref.TaskID || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("remote task %s is %s; want %s canceled", got.ID, got.Status.State, ref.TaskID)
	}
}
