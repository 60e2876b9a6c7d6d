package interop

// The gRPC binding of A2A 1.0 (server.Host.EnableGRPC, in this test
// process) under the official Go SDK v2's gRPC client, with its default
// factory: the client dials the GRPC interface's url, copies its
// tenant into every request, and reads our binary encoding with the
// generated code of a2a-go (which registers the lf.a2a.v1 names; ours
// registers nothing, so both live in this test binary).

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	abserver "github.com/a2abridge/a2abridge/server"
)

func TestGRPCBindingWithA2AGoClient(t *testing.T) {
	e := servertest.Engine(t, abserver.EngineOptions{})
	// The default agent (an empty tenant) is chat: only the card's
	// tenant reaches echo.
	host := servertest.Host("chat",
		abserver.NewHandler(e, "chat", agents.Chat{}, agents.Chat{}.Card(), abserver.HandlerOptions{}),
		abserver.NewHandler(e, "echo", agents.Echo{}, agents.Echo{}.Card(), abserver.HandlerOptions{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := host.EnableGRPC(abserver.GRPCOptions{})
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)

	card := &a2a.AgentCard{Name: "echo", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{URL: ln.Addr().String(), ProtocolBinding: a2a.TransportProtocolGRPC,
			ProtocolVersion: a2a.Version, Tenant: "echo"}},
		Capabilities: a2a.AgentCapabilities{Streaming: true}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := a2aclient.NewFromCard(ctx, card, a2agrpcv1.WithGRPCTransport(gogrpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()

	res, err := c.SendMessage(ctx, v1Text("hello over grpc", "", ""))
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || v1ArtifactText(task) != "hello over grpc" {
		t.Fatalf("SendMessage: %#v", res)
	}
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("GetTask: %v %v", got, err)
	}
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("GetTask of an unknown task: %v, want ErrTaskNotFound", err)
	}
	evs, err := collectN(c.SendStreamingMessage(ctx, v1Text("streamed over grpc", "", "")), 50)
	if err != nil {
		t.Fatalf("SendStreamingMessage: %v", err)
	}
	last, ok := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
	if len(evs) < 2 || !ok || last.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("stream: %d events, last %#v", len(evs), evs[len(evs)-1])
	}
}
