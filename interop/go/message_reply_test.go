package interop

// A Go agent of ours that answers a message directly with a Message
// (server.MessageFunc; A2A 1.0 §3.1.1, §3.1.2 "message-only stream"),
// hosted in this test process, called by the official Go clients: a2a-go
// v2 (v2.4.0, A2A 1.0, JSON-RPC and HTTP+JSON) and a2a-go v0.3.15 (A2A 0.3
// JSON-RPC). Each gets the Message from SendMessage, and a stream of
// exactly that Message.

import (
	"context"
	"net/http"
	"testing"

	ba2a "github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	bserver "github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2av2 "github.com/a2aproject/a2a-go/v2/a2a"
	clientv2 "github.com/a2aproject/a2a-go/v2/a2aclient"
	cardv2 "github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

func TestMessageReplyOfficialClients(t *testing.T) {
	eng, err := bserver.NewEngine(context.Background(), memory.New(), bserver.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agent := bserver.MessageFunc(func(ctx context.Context, req *bserver.Request) (*ba2a.Message, error) {
		text := ""
		if tp, ok := req.Message.Parts[0].Content.(ba2a.Text); ok {
			text = string(tp)
		}
		m := ba2a.NewMessage(ba2a.RoleAgent, ba2a.NewTextPart("pong: "+text))
		return &m, nil
	})
	card := ba2a.AgentCard{Name: "ping", Description: "answers with a message", Version: "1.0.0",
		Capabilities:      ba2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []ba2a.AgentSkill{{ID: "ping", Name: "ping", Description: "pong", Tags: []string{"ping"}}}}
	host := bserver.NewHost(bserver.HostOptions{})
	host.Add(bserver.NewHandler(eng, "ping", agent, card, bserver.HandlerOptions{}))
	ts := testutil.Serve(t, host, eng.Close)

	for _, b := range v1Bindings {
		t.Run("a2a-go-v2/"+v1BindingName(b), func(t *testing.T) {
			ctx := v1Ctx(t)
			rc, err := cardv2.DefaultResolver.Resolve(ctx, ts.URL+"/a2a/ping")
			if err != nil {
				t.Fatal(err)
			}
			c, err := clientv2.NewFromCard(ctx, rc, clientv2.WithConfig(clientv2.Config{PreferredTransports: []a2av2.TransportProtocol{b}}))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Destroy() })
			res, err := c.SendMessage(ctx, v1Text("one", "", "ctx-1"))
			m, ok := res.(*a2av2.Message)
			if err != nil || !ok {
				t.Fatalf("SendMessage: %T %v, want a *a2a.Message", res, err)
			}
			if m.Role != a2av2.MessageRoleAgent || m.ContextID != "ctx-1" || m.TaskID != "" || m.ID == "" || v1TextOf(m.Parts) != "pong: one" {
				t.Fatalf("SendMessage result: %+v", m)
			}
			var evs []a2av2.Event
			for ev, err := range c.SendStreamingMessage(ctx, v1Text("two", "", "")) {
				if err != nil {
					t.Fatalf("stream error after %d events: %v", len(evs), err)
				}
				evs = append(evs, ev)
			}
			if len(evs) != 1 {
				t.Fatalf("stream: %d events, want one Message: %+v", len(evs), evs)
			}
			if m, ok := evs[0].(*a2av2.Message); !ok || v1TextOf(m.Parts) != "pong: two" || m.ContextID == "" {
				t.Fatalf("stream event: %#v", evs[0])
			}
		})
	}

	t.Run("a2a-go-v0.3/JSONRPC", func(t *testing.T) {
		h := &harness{base: ts.URL, http: &http.Client{}}
		c := h.client(t, "ping", false)
		ctx := h.ctx(t)
		p := userText("three")
		p.Message.ContextID = "ctx-3"
		res, err := c.SendMessage(ctx, p)
		m, ok := res.(*a2a03.Message)
		if err != nil || !ok {
			t.Fatalf("message/send: %T %v, want a *a2a.Message", res, err)
		}
		if m.Role != a2a03.MessageRoleAgent || m.ContextID != "ctx-3" || m.TaskID != "" || textOf(m.Parts) != "pong: three" {
			t.Fatalf("message/send result: %+v", m)
		}
		evs, err := collect(c.SendStreamingMessage(ctx, userText("four")))
		if err != nil || len(evs) != 1 {
			t.Fatalf("message/stream: %d events, %v; want one Message", len(evs), err)
		}
		if m, ok := evs[0].(*a2a03.Message); !ok || textOf(m.Parts) != "pong: four" {
			t.Fatalf("message/stream event: %#v", evs[0])
		}
	})
}
