package check

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// TestMessageReplyAgent: check against a Go agent that answers every
// message directly with a Message (server.MessageFunc; A2A 1.0 §3.1.1,
// §3.1.2) finds nothing to fail over any interface: its answers and
// message-only streams conform, and the checks that need a task skip.
func TestMessageReplyAgent(t *testing.T) {
	t.Parallel()
	// Push on: with push off, card.cap-push, finding no task of this
	// agent's to use, probes an unknown task id, and so tests which of
	// TaskNotFound and PushNotificationNotSupported comes first, not
	// message answers.
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: testutil.Logger(),
		Push: &server.PushOptions{CheckURL: func(context.Context, string) error { return nil }}})
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, eng.Close)
	agent := server.MessageFunc(func(ctx context.Context, req *server.Request) (*a2a.Message, error) {
		m := a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart("pong"))
		return &m, nil
	})
	card := a2a.AgentCard{Name: "ping", Description: "answers with a message", Version: "1.0.0",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "ping", Name: "ping", Description: "pong", Tags: []string{"ping"}}}}
	host := server.NewHost(server.HostOptions{Default: "ping", Transport: server.TransportOptions{Logger: testutil.Logger(), KeepAlive: 100 * time.Millisecond}})
	host.Add(server.NewHandler(eng, "ping", agent, card, server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	rep, err := Run(t.Context(), Options{URL: ts.URL + "/a2a/ping", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	passed := map[string]bool{}
	for _, r := range rep.Results {
		switch r.Status {
		case Fail:
			t.Errorf("%s failed: %s", r.ID, r.Message)
		case Pass:
			passed[r.ID] = true
		}
	}
	for _, i := range rep.Interfaces {
		if !i.Checked || i.Counts.Pass == 0 {
			t.Errorf("%s: checked %v, %+v", i.Name, i.Checked, i.Counts)
		}
	}
	// The message-only streams were checked, not skipped.
	for _, id := range []string{"rpc10.stream-first", "rpc10.stream-end", "rest10.stream-first", "rest10.stream-end", "stream.first-event", "stream.closed", "rest03.stream", "message.send", "rpc10.send", "rest10.send", "rest03.send"} {
		if !passed[id] {
			t.Errorf("%s did not pass", id)
		}
	}
}
