package server_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/agents"
	grpcbinding "github.com/a2abridge/a2abridge/internal/binding/grpc"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
	"github.com/a2abridge/a2abridge/server"
)

// grpcHost serves host over HTTP/1.1 and cleartext gRPC on one port
// (SplitListener) and returns its address and a gRPC client connection.
func grpcHost(t *testing.T, host *server.Host, eng *server.Engine) (string, *gogrpc.ClientConn) {
	t.Helper()
	testutil.CloseAtEnd(t, eng.Close)
	addr := servertest.ServeGRPC(t, host)
	conn, err := gogrpc.NewClient(addr, gogrpc.WithTransportCredentials(insecure.NewCredentials()),
		gogrpc.WithDefaultCallOptions(gogrpc.ForceCodecV2(grpcbinding.Codec{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return addr, conn
}

func grpcCall(ctx context.Context, conn *gogrpc.ClientConn, method string, req []byte, opts ...gogrpc.CallOption) ([]byte, error) {
	var out grpcbinding.Frame
	err := conn.Invoke(ctx, "/"+server.GRPCServiceName+"/"+method, &grpcbinding.Frame{B: req}, &out, opts...)
	return out.B, err
}

// grpcStream opens a server stream of method and returns its events.
func grpcStream(ctx context.Context, conn *gogrpc.ClientConn, method string, req []byte) ([]a2a.Event, error) {
	st, err := conn.NewStream(ctx, &gogrpc.StreamDesc{StreamName: method, ServerStreams: true}, "/"+server.GRPCServiceName+"/"+method)
	if err != nil {
		return nil, err
	}
	if err := st.SendMsg(&grpcbinding.Frame{B: req}); err != nil {
		return nil, err
	}
	if err := st.CloseSend(); err != nil {
		return nil, err
	}
	var evs []a2a.Event
	for {
		var f grpcbinding.Frame
		if err := st.RecvMsg(&f); err == io.EOF {
			return evs, nil
		} else if err != nil {
			return evs, err
		}
		ev, err := pb.UnmarshalStreamResponse(f.B)
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func grpcSend(t *testing.T, ctx context.Context, conn *gogrpc.ClientConn, tenant, text string) *a2a.Task {
	t.Helper()
	p := testutil.UserMessage(text, "")
	p.Tenant = tenant
	req, _ := pb.AppendSendMessageRequest(nil, &p)
	b, err := grpcCall(ctx, conn, "SendMessage", req)
	if err != nil {
		t.Fatalf("SendMessage to %q: %v", tenant, err)
	}
	ev, err := pb.UnmarshalSendMessageResponse(b)
	task, ok := ev.(*a2a.Task)
	if err != nil || !ok {
		t.Fatalf("SendMessage to %q: %#v %v", tenant, ev, err)
	}
	return task
}

func grpcGet(ctx context.Context, conn *gogrpc.ClientConn, tenant, id string) (a2a.Task, error) {
	req, _ := pb.AppendGetTaskRequest(nil, &a2a.GetTaskRequest{Tenant: tenant, ID: id})
	b, err := grpcCall(ctx, conn, "GetTask", req)
	if err != nil {
		return a2a.Task{}, err
	}
	return pb.UnmarshalTask(b)
}

// The tenant names the agent: "echo", "echo/acme" (another tenant of
// echo, whose tasks are apart), "" (the default agent); one naming no
// agent is NOT_FOUND with the agents listed. The cards list the GRPC
// interface that reaches each agent.
func TestGRPCTenantsReachAgents(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	host := servertest.Host("echo",
		server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}),
		server.NewHandler(eng, "chat", agents.Chat{}, agents.Chat{}.Card(), server.HandlerOptions{}))
	addr, conn := grpcHost(t, host, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	task := grpcSend(t, ctx, conn, "echo", "hello over grpc")
	if task.Status.State != a2a.TaskStateCompleted || testutil.ArtifactText(task) != "hello over grpc" {
		t.Fatalf("echo: %+v", task)
	}
	if _, err := grpcGet(ctx, conn, "", task.ID); err != nil {
		t.Fatalf("the default agent is echo: %v", err)
	}
	if _, err := grpcGet(ctx, conn, "echo/acme", task.ID); status.Code(err) != codes.NotFound {
		t.Fatalf("a task of another tenant: %v", err)
	}
	if _, err := grpcGet(ctx, conn, "chat", task.ID); status.Code(err) != codes.NotFound {
		t.Fatalf("a task of another agent: %v", err)
	}
	acme := grpcSend(t, ctx, conn, "echo/acme", "for acme")
	if got, err := grpcGet(ctx, conn, "echo/acme", acme.ID); err != nil || got.ID != acme.ID {
		t.Fatalf("acme's own task: %v", err)
	}
	_, err := grpcGet(ctx, conn, "nobody", "t1")
	if st, _ := status.FromError(err); st.Code() != codes.NotFound || !strings.Contains(st.Message(), `"echo", "chat"`) {
		t.Fatalf("unknown agent: %v", err)
	}

	// A stream, then its replay after the first event.
	p := testutil.UserMessage("streamed", "")
	p.Tenant = "echo"
	req, _ := pb.AppendSendMessageRequest(nil, &p)
	evs, err := grpcStream(ctx, conn, "SendStreamingMessage", req)
	if err != nil || len(evs) < 2 {
		t.Fatalf("stream: %d events, %v", len(evs), err)
	}
	id := evs[0].(*a2a.Task).ID
	sub, _ := pb.AppendSubscribeToTaskRequest(nil, &a2a.SubscribeToTaskRequest{Tenant: "echo", ID: id})
	replay, err := grpcStream(metadata.AppendToOutgoingContext(ctx, "last-event-id", "1"), conn, "SubscribeToTask", sub)
	if err != nil || len(replay) != len(evs)-1 {
		t.Fatalf("replay after event 1: %d events of %d, %v", len(replay), len(evs), err)
	}

	// The card names the gRPC target and the agent's tenant.
	_, body := testutil.Get(t, "http://"+addr+"/a2a/chat/.well-known/agent-card.json")
	var card struct {
		SupportedInterfaces []struct {
			URL             string `json:"url"`
			ProtocolBinding string `json:"protocolBinding"`
			ProtocolVersion string `json:"protocolVersion"`
			Tenant          string `json:"tenant"`
		} `json:"supportedInterfaces"`
	}
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	var bindings []string
	for _, i := range card.SupportedInterfaces {
		bindings = append(bindings, i.ProtocolBinding+" "+i.ProtocolVersion)
		if i.ProtocolBinding == "GRPC" && (i.URL != addr || i.Tenant != "chat") {
			t.Fatalf("GRPC interface %+v, want url %s and tenant chat", i, addr)
		}
	}
	if got := strings.Join(bindings, ", "); got != "JSONRPC 1.0, HTTP+JSON 1.0, GRPC 1.0, JSONRPC 0.3, HTTP+JSON 0.3" {
		t.Fatalf("interfaces %s", got)
	}
}

// Authentication reads the call's metadata: none is UNAUTHENTICATED with
// the challenges in the trailer; a bearer token is the principal that
// owns the task; the extended card names the gRPC interface.
func TestGRPCAuthentication(t *testing.T) {
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"alice": "alice-token", "bob": "bob-token"})
	if err != nil {
		t.Fatal(err)
	}
	eng := servertest.Engine(t, server.EngineOptions{})
	ext := testutil.Card("secure")
	ext.Description = "extended"
	host := servertest.Host("secure", server.NewHandler(eng, "secure", agents.Echo{}, testutil.Card("secure"),
		server.HandlerOptions{Auth: auth.Set{bearer}, ExtendedCard: &ext}))
	addr, conn := grpcHost(t, host, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	p := testutil.UserMessage("who", "")
	p.Tenant = "secure"
	req, _ := pb.AppendSendMessageRequest(nil, &p)
	var trailer metadata.MD
	_, err = grpcCall(ctx, conn, "SendMessage", req, gogrpc.Trailer(&trailer))
	if status.Code(err) != codes.Unauthenticated || len(trailer.Get("www-authenticate")) == 0 {
		t.Fatalf("without credentials: %v, trailer %v", err, trailer)
	}
	_, err = grpcCall(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer wrong"), conn, "SendMessage", req)
	if st, _ := status.FromError(err); st.Code() != codes.Unauthenticated || !strings.Contains(st.Message(), "Invalid credentials") {
		t.Fatalf("wrong token: %v", err)
	}
	alice := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer alice-token")
	task := grpcSend(t, alice, conn, "secure", "mine")
	if _, err := grpcGet(alice, conn, "secure", task.ID); err != nil {
		t.Fatalf("alice reads her task: %v", err)
	}
	bob := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer bob-token")
	if _, err := grpcGet(bob, conn, "secure", task.ID); status.Code(err) != codes.NotFound {
		t.Fatalf("bob reads alice's task: %v", err)
	}
	creq, _ := pb.AppendGetExtendedAgentCardRequest(nil, "secure")
	b, err := grpcCall(alice, conn, "GetExtendedAgentCard", creq)
	if err != nil {
		t.Fatal(err)
	}
	card, err := pb.UnmarshalAgentCard(b)
	if err != nil || card.Description != "extended" {
		t.Fatalf("extended card: %+v %v", card, err)
	}
	found := false
	for _, i := range card.SupportedInterfaces {
		found = found || (i.Transport == a2a.TransportGRPC && i.URL == addr && i.Tenant == "secure")
	}
	if !found {
		t.Fatalf("extended card interfaces %+v", card.SupportedInterfaces)
	}
}

// A retired agent's tasks stay readable over gRPC; a message to it is
// NOT_FOUND, and nothing is stored.
func TestGRPCRetiredAgent(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	host := servertest.Host("echo", server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	_, conn := grpcHost(t, host, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	task := grpcSend(t, ctx, conn, "echo", "before")
	host.Add(server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{Retired: true}))
	if _, err := grpcGet(ctx, conn, "echo", task.ID); err != nil {
		t.Fatalf("a retired agent's task: %v", err)
	}
	p := testutil.UserMessage("after", "")
	p.Tenant = "echo"
	req, _ := pb.AppendSendMessageRequest(nil, &p)
	if _, err := grpcCall(ctx, conn, "SendMessage", req); status.Code(err) != codes.NotFound {
		t.Fatalf("a message to a retired agent: %v", err)
	}
	lreq, _ := pb.AppendListTasksRequest(nil, &a2a.ListTasksRequest{Tenant: "echo"})
	b, err := grpcCall(ctx, conn, "ListTasks", lreq)
	if err != nil {
		t.Fatal(err)
	}
	list, err := pb.UnmarshalListTasksResponse(b)
	if err != nil || len(list.Tasks) != 1 {
		t.Fatalf("tasks after the refused message: %d, %v", len(list.Tasks), errors.Join(err))
	}
}

// A message to a retired agent that requires authentication is
// UNAUTHENTICATED without credentials, as over HTTP (who may not call it
// does not learn it was retired); a Host serving 0.3 alone answers gRPC
// calls with VERSION_NOT_SUPPORTED.
func TestGRPCRetiredAfterAuthAndVersions(t *testing.T) {
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"alice": "alice-token"})
	if err != nil {
		t.Fatal(err)
	}
	eng := servertest.Engine(t, server.EngineOptions{})
	host := servertest.Host("gone", server.NewHandler(eng, "gone", agents.Echo{}, testutil.Card("gone"), server.HandlerOptions{Auth: auth.Set{bearer}, Retired: true}))
	_, conn := grpcHost(t, host, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := testutil.UserMessage("hi", "")
	p.Tenant = "gone"
	req, _ := pb.AppendSendMessageRequest(nil, &p)
	if _, err := grpcCall(ctx, conn, "SendMessage", req); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("without credentials: %v", err)
	}
	if _, err := grpcCall(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer alice-token"), conn, "SendMessage", req); status.Code(err) != codes.NotFound {
		t.Fatalf("with credentials: %v", err)
	}

	eng03 := servertest.Engine(t, server.EngineOptions{})
	host03 := server.NewHost(server.HostOptions{Transport: server.TransportOptions{Logger: testutil.Logger(), ProtocolVersions: []string{"0.3"}}})
	host03.Add(server.NewHandler(eng03, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	_, conn03 := grpcHost(t, host03, eng03)
	p.Tenant = "echo"
	req, _ = pb.AppendSendMessageRequest(nil, &p)
	if _, err := grpcCall(ctx, conn03, "SendMessage", req); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "A2A 1.0 is not served") {
		t.Fatalf("0.3 alone: %v", err)
	}
}
