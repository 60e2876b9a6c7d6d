package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	_ "github.com/a2abridge/a2abridge/client/grpc"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// grpcServer hosts echo (default), chat, slow and the agents more makes
// on one port that serves HTTP/1.1 and gRPC, and returns its address.
func grpcServer(t *testing.T, o server.EngineOptions, more ...func(*server.Engine) *server.AgentHandler) string {
	t.Helper()
	eng := servertest.Engine(t, o)
	host := servertest.Host("echo",
		server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}),
		server.NewHandler(eng, "chat", agents.Chat{}, agents.Chat{}.Card(), server.HandlerOptions{}),
		server.NewHandler(eng, "slow", agents.Slow{Seconds: 1, Step: 25 * time.Millisecond}, agents.Slow{}.Card(), server.HandlerOptions{}))
	for _, m := range more {
		host.Add(m(eng))
	}
	testutil.CloseAtEnd(t, eng.Close)
	return servertest.ServeGRPC(t, host)
}

// Every operation over a GRPC interface, chosen with Binding "GRPC".
func TestEveryOperationGRPC(t *testing.T) {
	t.Parallel()
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(hook.Close)
	addr := grpcServer(t, server.EngineOptions{Push: &server.PushOptions{CheckURL: func(context.Context, string) error { return nil }}})
	ctx := context.Background()
	opts := client.Options{Binding: "grpc"}
	c := dial(t, "http://"+addr, opts)
	t.Cleanup(func() { _ = c.Close() })
	want := client.Interface{URL: addr, Binding: a2a.TransportGRPC, ProtocolVersion: a2a.Version10, CardVersion: "1.0", Tenant: "echo"}
	if got := c.Interface(); got != want {
		t.Fatalf("interface %+v, want %+v", got, want)
	}
	everyTaskOperation(t, ctx, c, a2a.Version10)
	everyPushOperation(t, ctx, c, hook.URL, a2a.Version10)
	slow, chat := dial(t, "http://"+addr+"/a2a/slow", opts), dial(t, "http://"+addr+"/a2a/chat", opts)
	t.Cleanup(func() { _ = slow.Close(); _ = chat.Close() })
	cancelAndChat(t, ctx, slow, chat)
	if _, err := c.GetExtendedAgentCard(ctx); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Fatalf("extended card: %v", err)
	}
	// A tenant that names no agent: a gRPC status, not an A2A error.
	_, err := c.GetTask(ctx, a2a.GetTaskRequest{Tenant: "nobody", ID: "t"})
	var ge *client.GRPCError
	if !errors.As(err, &ge) || ge.Name != "NOT_FOUND" || ge.Temporary() {
		t.Fatalf("unknown agent: %v", err)
	}
}

// stepper sends one artifact chunk, waits for release, then another, and
// completes.
type stepper struct{ release chan struct{} }

func (s stepper) Execute(ctx context.Context, _ *server.Request, u *server.TaskUpdater) error {
	if err := u.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("one ")}}, false, false); err != nil {
		return err
	}
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := u.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("two")}}, true, true); err != nil {
		return err
	}
	return u.SetStatus(ctx, a2a.TaskStateCompleted, nil)
}

// A gRPC stream cut mid-task resumes after the last event it yielded
// (last-event-id, the frames' sequence numbers): every event once, in
// order, the resumption contiguous.
func TestGRPCStreamResumes(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	addr := grpcServer(t, server.EngineOptions{}, func(e *server.Engine) *server.AgentHandler {
		return server.NewHandler(e, "step", stepper{release}, testutil.Card("step"), server.HandlerOptions{})
	})
	proxy := testutil.StartProxy(t, addr)
	c := dial(t, "http://"+proxy.Addr()+"/a2a/step", client.Options{Binding: "GRPC", RetryBaseDelay: time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	if c.URL() != proxy.Addr() {
		t.Fatalf("the card's gRPC target %s, want the proxy %s", c.URL(), proxy.Addr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var ids []int64
	resumed, gaps := 0, 0
	text := ""
	for ev, err := range c.SendStreamingMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("go"))}) {
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(ev.ID, 10, 64)
		if err != nil {
			t.Fatalf("event without a sequence number: %+v", ev)
		}
		ids = append(ids, n)
		if ev.Resumed {
			resumed++
			if ev.Gap {
				gaps++
			}
		}
		if u, ok := ev.Event.(*a2a.TaskArtifactUpdateEvent); ok {
			text += u.Artifact.Parts[0].Text()
			if text == "one " {
				if proxy.Cut() == 0 {
					t.Fatal("nothing to cut")
				}
				close(release)
			}
		}
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("event ids %v: not increasing (a repeat)", ids)
		}
	}
	if text != "one two" || resumed != 1 || gaps != 0 {
		t.Fatalf("text %q, resumed %d, gaps %d (ids %v)", text, resumed, gaps, ids)
	}
}

// A gRPC stream cut while the server cannot be reached for a moment
// resumes once it can (the resubscription's UNAVAILABLE is retried);
// a call on a closed client is no context error.
func TestGRPCStreamResumesAfterOutage(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	addr := grpcServer(t, server.EngineOptions{}, func(e *server.Engine) *server.AgentHandler {
		return server.NewHandler(e, "step", stepper{release}, testutil.Card("step"), server.HandlerOptions{})
	})
	proxy := testutil.StartProxy(t, addr)
	c := dial(t, "http://"+proxy.Addr()+"/a2a/step", client.Options{Binding: "GRPC", RetryBaseDelay: 100 * time.Millisecond, MaxRetries: 6})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	text := ""
	for ev, err := range c.SendStreamingMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("go"))}) {
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := ev.Event.(*a2a.TaskArtifactUpdateEvent); ok {
			if text += u.Artifact.Parts[0].Text(); text == "one " {
				proxy.Refuse(true) // cut, and refuse for a while
				close(release)
				time.AfterFunc(400*time.Millisecond, func() { proxy.Refuse(false) })
			}
		}
	}
	if text != "one two" {
		t.Fatalf("text %q", text)
	}
	_ = c.Close()
	if _, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: "t"}); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("a call on a closed client: %v", err)
	}
}

// A signed extended card read over gRPC verifies: the card rebuilt from
// protobuf is the card the server signed.
func TestGRPCExtendedCardVerifies(t *testing.T) {
	t.Parallel()
	host, eng := secureHost(t, "echo")
	testutil.CloseAtEnd(t, eng.Close)
	addr := servertest.ServeGRPC(t, host)
	var verified int
	v := verifier(t, client.CardVerifierOptions{Verified: func(client.CardSignature) { verified++ }})
	c := dial(t, "http://"+addr+"/a2a/echo", client.Options{Binding: "GRPC", Token: "alice-token", CardVerifier: v})
	t.Cleanup(func() { _ = c.Close() })
	card, err := c.GetExtendedAgentCard(context.Background())
	if err != nil || card.Description != "extended" || verified != 2 {
		t.Fatalf("extended card over gRPC: %+v %v (signatures verified: %d)", card, err, verified)
	}
}
