package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/grpcframe"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
)

// BindingGRPC is the gRPC binding of A2A 1.0 (§10): the URL is the gRPC
// target (host:port, cleartext), requests go to lf.a2a.v1.A2AService with
// Options.Tenant and the a2a-version 1.0 metadata.
const BindingGRPC = "grpc"

// grpcPerConn is how many workers share one connection: gRPC clients
// multiplex calls over one HTTP/2 connection, a server reads each
// connection on one goroutine.
const grpcPerConn = 4

// grpcClient is a run's connections to its gRPC target.
type grpcClient struct {
	conns []*gogrpc.ClientConn
	md    metadata.MD
}

// newGRPCClient connects to the target of o (lazily: errors come with the
// first call).
func newGRPCClient(o Options) (*grpcClient, error) {
	g := &grpcClient{md: metadata.Pairs("a2a-version", Protocol10)}
	for k, vs := range o.Header {
		for _, v := range vs {
			g.md.Append(strings.ToLower(k), v)
		}
	}
	target := strings.TrimPrefix(o.URL, "grpc://")
	for range (o.Concurrency + grpcPerConn - 1) / grpcPerConn {
		cc, err := gogrpc.NewClient(target, gogrpc.WithTransportCredentials(insecure.NewCredentials()),
			gogrpc.WithDefaultCallOptions(gogrpc.ForceCodecV2(grpcframe.Codec{})),
			gogrpc.WithUserAgent("a2abridge-bench"))
		if err != nil {
			g.close()
			return nil, err
		}
		g.conns = append(g.conns, cc)
	}
	return g, nil
}

func (g *grpcClient) close() {
	for _, cc := range g.conns {
		_ = cc.Close()
	}
}

// onceGRPC performs one SendMessage or SendStreamingMessage over gRPC and
// checks its answer: a Task or Message; for a stream, every event up to a
// status in a terminal or interrupted state, and the stream's clean end.
func (r *runner) onceGRPC(ctx context.Context, st *stats, w int, id int64) error {
	stream := r.o.Mode == ModeStream
	p := a2a.SendMessageRequest{Tenant: r.o.Tenant, Message: a2a.Message{MessageID: r.runID + "-" + strconv.FormatInt(id, 10),
		Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart(r.text)}}}
	var err error
	if st.req, err = pb.AppendSendMessageRequest(st.req[:0], &p); err != nil {
		return err
	}
	// The buffer goes to grpc-go, which may hold it past the call.
	req := &grpcframe.Frame{B: append([]byte(nil), st.req...)}
	cc := r.grpc.conns[w/grpcPerConn%len(r.grpc.conns)]
	ctx = metadata.NewOutgoingContext(ctx, r.grpc.md)
	if r.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.o.Timeout)
		defer cancel()
	}
	if !stream {
		var out grpcframe.Frame
		if err := cc.Invoke(ctx, "/lf.a2a.v1.A2AService/SendMessage", req, &out); err != nil {
			return grpcFailure(err)
		}
		st.bytes += int64(len(out.B))
		if kind, _ := scanResponse(out.B); kind != "task" && kind != "message" {
			return fail("bad response", "SendMessage answered neither a task nor a message")
		}
		return nil
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := cc.NewStream(ctx, &gogrpc.StreamDesc{StreamName: "SendStreamingMessage", ServerStreams: true}, "/lf.a2a.v1.A2AService/SendStreamingMessage")
	if err == nil {
		err = s.SendMsg(req)
	}
	if err == nil {
		err = s.CloseSend()
	}
	if err != nil {
		return grpcFailure(err)
	}
	events, final := 0, false
	for {
		var f grpcframe.Frame
		err := s.RecvMsg(&f)
		if errors.Is(err, io.EOF) {
			if events > 0 && final {
				return nil
			}
			return fail("stream ended early", "stream ended after %d events without a final status-update", events)
		}
		if err != nil {
			return grpcFailure(err)
		}
		st.bytes += int64(len(f.B))
		kind, fin := scanResponse(f.B)
		if kind == "" {
			return fail("bad response", "an event that is not a Task, a Message, a status update or an artifact update")
		}
		if events == 0 {
			st.firstD = time.Since(start)
		}
		events++
		st.events++
		final = fin || kind == "message"
	}
}

// grpcFailure classifies a call's error: a status is its code's name.
func grpcFailure(err error) error {
	if s, ok := status.FromError(err); ok {
		return fail("gRPC "+s.Code().String(), "%s", s.Message())
	}
	return err
}

// scanResponse reads which member a SendMessageResponse or StreamResponse
// holds (task = 1, message = 2, statusUpdate = 3, artifactUpdate = 4) and
// whether a task's or status update's state (status = 3, state = 1) is
// terminal or interrupted, without decoding the rest.
func scanResponse(b []byte) (kind string, final bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", false
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return "", false
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return "", false
		}
		b = b[n:]
		switch num {
		case 1:
			return "task", stateFinal(v)
		case 2:
			return "message", true
		case 3:
			return "statusUpdate", stateFinal(v)
		case 4:
			return "artifactUpdate", false
		}
	}
	return "", false
}

// stateFinal reads status.state of a Task or TaskStatusUpdateEvent.
func stateFinal(b []byte) bool {
	status := field(b, 3)
	if status == nil {
		return false
	}
	for len(status) > 0 {
		num, typ, n := protowire.ConsumeTag(status)
		if n < 0 {
			return false
		}
		status = status[n:]
		if num == 1 && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(status)
			s := a2a.TaskState(v)
			return s.Terminal() || s.Interrupted()
		}
		if n = protowire.ConsumeFieldValue(num, typ, status); n < 0 {
			return false
		}
		status = status[n:]
	}
	return false
}

// field returns the bytes of the first length-delimited field num of b.
func field(b []byte, num protowire.Number) []byte {
	for len(b) > 0 {
		n0, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		b = b[n:]
		if n0 == num && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b)
			return v
		}
		if n = protowire.ConsumeFieldValue(n0, typ, b); n < 0 {
			return nil
		}
		b = b[n:]
	}
	return nil
}

// verifyGRPC is Verify over gRPC: a SendMessage answered with a completed
// task echoing the text, and a SendStreamingMessage whose events, decoded
// fully, end in a completed status and echo it too.
func verifyGRPC(ctx context.Context, o Options) error {
	o.Concurrency = 1
	g, err := newGRPCClient(o)
	if err != nil {
		return err
	}
	defer g.close()
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(ctx, g.md), o.Timeout)
	defer cancel()
	text := payloadText(o.Payload)
	msg := func() []byte {
		b, _ := pb.AppendSendMessageRequest(nil, &a2a.SendMessageRequest{Tenant: o.Tenant, Message: a2a.Message{MessageID: newRunID(),
			Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart(text)}}})
		return b
	}
	var out grpcframe.Frame
	if err := g.conns[0].Invoke(ctx, "/lf.a2a.v1.A2AService/SendMessage", &grpcframe.Frame{B: msg()}, &out); err != nil {
		return fmt.Errorf("SendMessage: %w", grpcFailure(err))
	}
	ev, err := pb.UnmarshalSendMessageResponse(out.B)
	if err != nil {
		return fmt.Errorf("SendMessage: %w", err)
	}
	var got strings.Builder
	t, _ := ev.(*a2a.Task)
	if t != nil {
		artifactText(&got, t.Artifacts...)
	}
	if t == nil || t.Status.State != a2a.TaskStateCompleted || got.String() != text {
		return fmt.Errorf("SendMessage: got a %s with artifact text %q; want a completed task echoing %q", kindOf(ev), got.String(), text)
	}
	s, err := g.conns[0].NewStream(ctx, &gogrpc.StreamDesc{StreamName: "SendStreamingMessage", ServerStreams: true}, "/lf.a2a.v1.A2AService/SendStreamingMessage")
	if err == nil {
		err = s.SendMsg(&grpcframe.Frame{B: msg()})
	}
	if err == nil {
		err = s.CloseSend()
	}
	if err != nil {
		return fmt.Errorf("SendStreamingMessage: %w", grpcFailure(err))
	}
	got.Reset()
	var last a2a.Event
	for {
		var f grpcframe.Frame
		if err := s.RecvMsg(&f); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("SendStreamingMessage: %w", grpcFailure(err))
		}
		if last, err = pb.UnmarshalStreamResponse(f.B); err != nil {
			return fmt.Errorf("SendStreamingMessage: %w", err)
		}
		if u, ok := last.(*a2a.TaskArtifactUpdateEvent); ok {
			artifactText(&got, u.Artifact)
		}
	}
	if u, ok := last.(*a2a.TaskStatusUpdateEvent); !ok || u.Status.State != a2a.TaskStateCompleted || got.String() != text {
		return fmt.Errorf("SendStreamingMessage: the stream ended with a %s, artifact text %q; want a completed status, %q", kindOf(last), got.String(), text)
	}
	return nil
}
