package check

import (
	"context"
	"iter"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/binding"
	_ "github.com/a2abridge/a2abridge/client/grpc" // the gRPC suite's connection
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// serveGRPC serves h (a *server.Host) over HTTP/1.1 and gRPC on one
// loopback port and returns its base URL.
func serveGRPC(t *testing.T, h http.Handler) string {
	t.Helper()
	return "http://" + servertest.ServeGRPC(t, h.(*server.Host))
}

// runGRPC runs the checks of ids (prefixes with *) against base.
func runGRPC(t *testing.T, base string, ids ...string) *Report {
	t.Helper()
	rep, err := Run(context.Background(), Options{URL: base, Only: ids, Text: "0", LongText: "1", Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// wrongState is a fault inside the server: GetTask answers every task as
// working, and streams lose their last event.
type wrongState struct{ binding.Handler }

func (w wrongState) GetTask(ctx context.Context, p a2a.GetTaskRequest) (*a2a.Task, error) {
	t, err := w.Handler.GetTask(ctx, p)
	if err == nil {
		c := *t
		c.Status.State = a2a.TaskStateWorking
		t = &c
	}
	return t, err
}

func (w wrongState) SendStreamingMessage(ctx context.Context, p a2a.SendMessageRequest) (iter.Seq2[binding.StreamEvent, error], error) {
	evs, err := w.Handler.SendStreamingMessage(ctx, p)
	if err != nil {
		return nil, err
	}
	return func(yield func(binding.StreamEvent, error) bool) {
		for ev, err := range evs {
			if u, ok := ev.Event.(*a2a.TaskStatusUpdateEvent); ok && u.Status.State.Terminal() {
				<-ctx.Done() // the final event never comes, the stream stays open
				return
			}
			if !yield(ev, err) {
				return
			}
		}
	}, nil
}

// The gRPC suite: clean against a2abridge served over gRPC (every check
// passes, or is n/a or skipped for want of an agent that asks for input),
// and the faults of a server reach its checks: a wrong task state fails
// grpc10.get, a stream without its final event grpc10.stream-end.
func TestGRPCSuite(t *testing.T) {
	t.Parallel()
	rep := runGRPC(t, serveGRPC(t, newHost(t, hostOpts{push: true}))+"/a2a/slow", "grpc10.*")
	ran := 0
	for _, r := range rep.Results {
		if !strings.HasPrefix(r.ID, "grpc10.") {
			continue
		}
		ran++
		if r.Status == Fail || r.Status == Skip && r.ID != "grpc10.subscribe-interrupted" {
			t.Errorf("%s: %s: %s\n%s", r.ID, r.Status, r.Message, evidenceText(r))
		}
	}
	if ran < 30 {
		t.Fatalf("%d gRPC checks ran", ran)
	}
	broken := newHost(t, hostOpts{intercept: func(next binding.Handler) binding.Handler { return wrongState{next} }})
	rep = runGRPC(t, serveGRPC(t, broken)+"/a2a/slow", "grpc10.get", "grpc10.stream-end")
	for _, id := range []string{"grpc10.get", "grpc10.stream-end"} {
		if r := rep.Result(id); r == nil || r.Status != Fail {
			t.Errorf("behind the fault: %s %+v", id, r)
		}
	}
}

// A server whose errors carry the right ErrorInfo under the wrong gRPC
// status fails grpc10.errors (§5.4), though its A2A errors read right.
func TestGRPCSuiteStatusCodes(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := gogrpc.NewServer(gogrpc.UnknownServiceHandler(func(any, gogrpc.ServerStream) error {
		st, _ := status.New(codes.Internal, "Task not found").WithDetails(&errdetails.ErrorInfo{Reason: "TASK_NOT_FOUND", Domain: "a2a-protocol.org"})
		return st.Err()
	}))
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	card := `{"name":"wrong","description":"d","version":"1","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
	 "supportedInterfaces":[{"url":"` + ln.Addr().String() + `","protocolBinding":"GRPC","protocolVersion":"1.0"}]}`
	cards := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(card))
	}))
	rep := runGRPC(t, cards, "grpc10.get-unknown", "grpc10.errors")
	if r := rep.Result("grpc10.get-unknown"); r == nil || r.Status != Pass {
		t.Errorf("get-unknown: %+v", r)
	}
	r := rep.Result("grpc10.errors")
	if r == nil || r.Status != Fail || !strings.Contains(r.Message, "TASK_NOT_FOUND is gRPC INTERNAL, not NOT_FOUND") {
		t.Errorf("errors: %+v", r)
	}
}
