package grpc_test

import (
	"context"
	"errors"
	"io"
	"iter"
	"net"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/binding"
	"github.com/a2abridge/a2abridge/internal/binding/edge"
	a2agrpc "github.com/a2abridge/a2abridge/internal/binding/grpc"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
)

// stub answers every operation from fixed values and records what it got.
type stub struct {
	binding.Handler // the operations a test does not call panic
	tenant          string
	from            *int64
}

func (s *stub) SendMessage(_ context.Context, req a2a.SendMessageRequest) (a2a.Event, error) {
	return &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
		History: []a2a.Message{req.Message}}, nil
}

func (s *stub) GetTask(_ context.Context, req a2a.GetTaskRequest) (*a2a.Task, error) {
	return nil, a2a.ErrTaskNotFound.WithMessage("task %s not found", req.ID)
}

func (s *stub) DeleteTaskPushNotificationConfig(_ context.Context, req a2a.DeleteTaskPushNotificationConfigRequest) error {
	s.tenant = req.Tenant + "/" + req.TaskID + "/" + req.ID
	return nil
}

func (s *stub) GetExtendedAgentCard(context.Context) (*a2a.AgentCard, error) {
	return nil, errors.New("a database is on fire") // internal: its text must not reach the caller
}

func (s *stub) SendStreamingMessage(_ context.Context, req a2a.SendMessageRequest) (iter.Seq2[binding.StreamEvent, error], error) {
	return func(yield func(binding.StreamEvent, error) bool) {
		t := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
		if !yield(binding.StreamEvent{Seq: 1, Event: t}, nil) {
			return
		}
		yield(binding.StreamEvent{Seq: 2, Event: &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1",
			Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, Final: true}}, nil)
	}, nil
}

func (s *stub) SubscribeToTask(_ context.Context, req a2a.SubscribeToTaskRequest, opts binding.SubscribeOptions) (iter.Seq2[binding.StreamEvent, error], error) {
	s.from = opts.From
	return nil, a2a.ErrUnsupportedOperation.WithMessage("task %s is terminal", req.ID)
}

// serve starts the binding on a loopback listener and returns a client
// connection speaking its codec.
func serve(t *testing.T, resolve func(tenant string) (binding.Handler, error)) *gogrpc.ClientConn {
	t.Helper()
	return serveTargets(t, func(r *a2agrpc.Request) (a2agrpc.Target, error) {
		h, err := resolve(r.Tenant)
		if err != nil {
			return a2agrpc.Target{}, err
		}
		return a2agrpc.Target{Agent: &edge.Agent{Handler: h, Name: "stub"}, Tenant: r.Tenant}, nil
	})
}

// serveTargets starts a Server over resolve and returns a client
// connection to it.
func serveTargets(t *testing.T, resolve a2agrpc.Resolver) *gogrpc.ClientConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := a2agrpc.NewServer(a2agrpc.Options{Resolve: resolve})
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return dial(t, ln.Addr().String())
}

// dial returns a client connection to addr speaking the binding's codec.
func dial(t *testing.T, addr string) *gogrpc.ClientConn {
	t.Helper()
	conn, err := gogrpc.NewClient(addr, gogrpc.WithTransportCredentials(insecure.NewCredentials()),
		gogrpc.WithDefaultCallOptions(gogrpc.ForceCodecV2(a2agrpc.Codec{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func invoke(ctx context.Context, conn *gogrpc.ClientConn, method string, req []byte) ([]byte, error) {
	var out a2agrpc.Frame
	err := conn.Invoke(ctx, "/"+a2agrpc.ServiceName+"/"+method, &a2agrpc.Frame{B: req}, &out)
	return out.B, err
}

func TestUnary(t *testing.T) {
	h := &stub{}
	conn := serve(t, func(tenant string) (binding.Handler, error) {
		h.tenant = tenant
		return h, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := pb.AppendSendMessageRequest(nil, &a2a.SendMessageRequest{Tenant: "echo",
		Message: a2a.Message{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("hi")}}})
	b, err := invoke(ctx, conn, "SendMessage", req)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := pb.UnmarshalSendMessageResponse(b)
	if err != nil {
		t.Fatal(err)
	}
	if task, ok := ev.(*a2a.Task); !ok || task.ID != "t1" || len(task.History) != 1 || h.tenant != "echo" {
		t.Fatalf("%#v (tenant %q)", ev, h.tenant)
	}
	// A method answering google.protobuf.Empty.
	del, _ := pb.AppendPushConfigIDRequest(nil, &a2a.GetTaskPushNotificationConfigRequest{Tenant: "echo", TaskID: "t1", ID: "p1"})
	b, err = invoke(ctx, conn, "DeleteTaskPushNotificationConfig", del)
	if err != nil || len(b) != 0 || h.tenant != "echo/t1/p1" {
		t.Fatalf("delete: %q %v (%q)", b, err, h.tenant)
	}
}

func TestErrors(t *testing.T) {
	conn := serve(t, func(tenant string) (binding.Handler, error) {
		if tenant == "nobody" {
			return nil, a2a.ErrTaskNotFound.WithMessage("no agent %q", tenant)
		}
		return &stub{}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	get, _ := pb.AppendGetTaskRequest(nil, &a2a.GetTaskRequest{ID: "t9"})
	card, _ := pb.AppendGetExtendedAgentCardRequest(nil, "")
	for _, c := range []struct {
		name, method string
		req          []byte
		md           []string
		code         codes.Code
		reason       string
	}{
		{"unknown task", "GetTask", get, nil, codes.NotFound, "TASK_NOT_FOUND"},
		{"bad request", "GetTask", []byte{0x0a, 0x01, 'x'}, nil, codes.InvalidArgument, "INVALID_PARAMS"},
		{"0.3", "GetTask", get, []string{"a2a-version", "0.3"}, codes.FailedPrecondition, "VERSION_NOT_SUPPORTED"},
		{"internal", "GetExtendedAgentCard", card, nil, codes.Internal, "INTERNAL_ERROR"},
	} {
		ctx := ctx
		if c.md != nil {
			ctx = metadata.AppendToOutgoingContext(ctx, c.md...)
		}
		_, err := invoke(ctx, conn, c.method, c.req)
		st, _ := status.FromError(err)
		if st.Code() != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
			continue
		}
		var info *errdetails.ErrorInfo
		for _, d := range st.Details() {
			if i, ok := d.(*errdetails.ErrorInfo); ok {
				info = i
			}
		}
		if info == nil || info.Reason != c.reason || info.Domain != "a2a-protocol.org" {
			t.Errorf("%s: details %v, want reason %s", c.name, st.Details(), c.reason)
		}
		if c.name == "internal" && st.Message() != a2a.ErrInternal.Message {
			t.Errorf("internal error shows %q", st.Message())
		}
	}
}

func TestStream(t *testing.T) {
	h := &stub{}
	conn := serve(t, func(string) (binding.Handler, error) { return h, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	desc := &gogrpc.StreamDesc{StreamName: "SendStreamingMessage", ServerStreams: true}
	st, err := conn.NewStream(ctx, desc, "/"+a2agrpc.ServiceName+"/SendStreamingMessage")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := pb.AppendSendMessageRequest(nil, &a2a.SendMessageRequest{
		Message: a2a.Message{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("hi")}}})
	if err := st.SendMsg(&a2agrpc.Frame{B: req}); err != nil {
		t.Fatal(err)
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var got []a2a.Event
	for {
		var f a2agrpc.Frame
		err := st.RecvMsg(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ev, err := pb.UnmarshalStreamResponse(f.B)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if len(got) != 2 {
		t.Fatalf("%d events", len(got))
	}
	if u, ok := got[1].(*a2a.TaskStatusUpdateEvent); !ok || u.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("last event %#v", got[1])
	}

	// SubscribeToTask: its resume point from metadata, a refusal as a
	// status before any event.
	sctx := metadata.AppendToOutgoingContext(ctx, "last-event-id", "7")
	sub, err := conn.NewStream(sctx, &gogrpc.StreamDesc{StreamName: "SubscribeToTask", ServerStreams: true}, "/"+a2agrpc.ServiceName+"/SubscribeToTask")
	if err != nil {
		t.Fatal(err)
	}
	sreq, _ := pb.AppendSubscribeToTaskRequest(nil, &a2a.SubscribeToTaskRequest{ID: "t1"})
	_ = sub.SendMsg(&a2agrpc.Frame{B: sreq})
	_ = sub.CloseSend()
	err = sub.RecvMsg(&a2agrpc.Frame{})
	if s, _ := status.FromError(err); s.Code() != codes.FailedPrecondition {
		t.Fatalf("subscribe: %v", err)
	}
	if h.from == nil || *h.from != 7 {
		t.Fatalf("resume point %v", h.from)
	}
}
