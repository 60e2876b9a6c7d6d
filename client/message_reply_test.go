package client_test

import (
	"context"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// TestMessageReply: an agent that answers with a Message (A2A 1.0
// §3.1.1, §3.1.2) gives SendMessage that *a2a.Message and
// SendStreamingMessage exactly that one event, then the end, over every
// protocol version and binding.
func TestMessageReply(t *testing.T) {
	t.Parallel()
	eng := servertest.Engine(t, server.EngineOptions{})
	agent := server.MessageFunc(func(ctx context.Context, req *server.Request) (*a2a.Message, error) {
		m := a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart("pong"))
		return &m, nil
	})
	card := a2a.AgentCard{Name: "ping", Description: "answers pong", Version: "1.0.0",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "ping", Name: "ping", Description: "pong", Tags: []string{"ping"}}}}
	host := servertest.Host("ping", server.NewHandler(eng, "ping", agent, card, server.HandlerOptions{}))
	ts := testutil.ServeDrained(t, host, eng.Close)
	for _, in := range interfaces {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := dial(t, ts.URL, in.opts)
			if got := c.Interface(); got.ProtocolVersion != in.want.ProtocolVersion || got.Binding != in.want.Binding {
				t.Fatalf("interface %+v, want %+v", got, in.want)
			}
			p := text("ping")
			p.Message.ContextID = "ctx-1"
			res, err := c.SendMessage(ctx, p)
			m, ok := res.(*a2a.Message)
			if err != nil || !ok {
				t.Fatalf("SendMessage: %T %v", res, err)
			}
			if m.Role != a2a.RoleAgent || m.ContextID != "ctx-1" || m.TaskID != "" || m.MessageID == "" || len(m.Parts) != 1 || m.Parts[0].Text() != "pong" {
				t.Fatalf("SendMessage result: %+v", m)
			}
			var evs []client.StreamEvent
			for ev, err := range c.SendStreamingMessage(ctx, text("ping")) {
				if err != nil {
					t.Fatalf("stream error after %d events: %v", len(evs), err)
				}
				evs = append(evs, ev)
			}
			if len(evs) != 1 || evs[0].ID != "" || evs[0].Resumed {
				t.Fatalf("stream: %+v, want one Message", evs)
			}
			if m, ok := evs[0].Event.(*a2a.Message); !ok || m.ContextID == "" || m.Parts[0].Text() != "pong" {
				t.Fatalf("stream event: %#v", evs[0].Event)
			}
		})
	}
}
