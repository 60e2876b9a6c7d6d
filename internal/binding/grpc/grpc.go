// Package grpc is the gRPC binding of A2A 1.0 (A2A 1.0 §10): the
// lf.a2a.v1.A2AService of a2a.proto served over a binding.Handler, its
// messages in protobuf's binary encoding written and read by
// internal/wire/pb (so nothing here registers the lf.a2a.v1 names in
// protobuf's global registry).
//
// Register adds the service to a grpc-go server made with the Codec
// (ServerOptions). Each request reaches the handler its Resolver returns
// for the request's tenant; errors are gRPC statuses with a
// google.rpc.ErrorInfo detail (reason as A2A 1.0 §10.6 names it, domain
// a2a-protocol.org), the status codes of A2A 1.0 §5.4.
package grpc

import (
	"context"
	"errors"
	"iter"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/binding"
	"github.com/a2abridge/a2abridge/internal/a2aproto"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
)

// ServiceName is the full name of the A2A service (a2a.proto).
const ServiceName = "lf.a2a.v1.A2AService"

// Metadata keys the binding reads (gRPC metadata keys are lower case).
const (
	// MetadataVersion is A2A-Version (A2A 1.0 §3.6): absent or 1.x.
	MetadataVersion = "a2a-version"
	// MetadataLastEventID resumes a SubscribeToTask stream after the
	// event of that sequence number (a2a.ExtensionEventLog), as the SSE
	// Last-Event-ID header does.
	MetadataLastEventID = "last-event-id"
)

// Resolver returns the handler of the agent a request reaches, by the
// tenant of the request; the error is returned to the caller as it is
// (an *a2a.Error becomes its status).
type Resolver func(ctx context.Context, tenant string) (binding.Handler, error)

// Frame is one message in its binary encoding: what the Codec passes
// between grpc-go and the binding, without a copy on the way out.
type Frame struct{ B []byte }

// Codec is the grpc-go codec of the binding: a *Frame is its bytes; any
// other message (the health and reflection services') goes to grpc-go's
// protobuf codec.
type Codec struct{}

// Name is "proto", the content subtype of every gRPC peer.
func (Codec) Name() string { return "proto" }

// Marshal returns the bytes of v.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	if f, ok := v.(*Frame); ok {
		return mem.BufferSlice{mem.SliceBuffer(f.B)}, nil
	}
	return protoCodec().Marshal(v)
}

// Unmarshal copies data into v.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	if f, ok := v.(*Frame); ok {
		f.B = data.Materialize()
		return nil
	}
	return protoCodec().Unmarshal(data, v)
}

func protoCodec() encoding.CodecV2 { return encoding.GetCodecV2("proto") }

// ServerOptions are the options a grpc-go server of this binding needs:
// the Codec.
func ServerOptions() []gogrpc.ServerOption {
	return []gogrpc.ServerOption{gogrpc.ForceServerCodecV2(Codec{})}
}

// Register adds the A2A service to s, over the handlers resolve returns.
func Register(s gogrpc.ServiceRegistrar, resolve Resolver) {
	s.RegisterService(serviceDesc(resolve), struct{}{})
}

// serviceDesc is the service's description: one method or stream per
// method of the proto's A2AService.
func serviceDesc(resolve Resolver) *gogrpc.ServiceDesc {
	sd := &gogrpc.ServiceDesc{ServiceName: ServiceName, HandlerType: (*any)(nil), Metadata: "a2a.proto"}
	for _, svc := range a2aproto.Services() {
		if svc.Name != ServiceName {
			continue
		}
		for _, m := range svc.Methods {
			if m.ServerStreaming {
				sd.Streams = append(sd.Streams, gogrpc.StreamDesc{StreamName: m.Name, ServerStreams: true,
					Handler: streamHandler(m.Name, resolve)})
				continue
			}
			sd.Methods = append(sd.Methods, gogrpc.MethodDesc{MethodName: m.Name, Handler: unaryHandler(m.Name, resolve)})
		}
	}
	return sd
}

// unaryHandler answers one unary method.
func unaryHandler(method string, resolve Resolver) func(srv any, ctx context.Context, dec func(any) error, in gogrpc.UnaryServerInterceptor) (any, error) {
	return func(_ any, ctx context.Context, dec func(any) error, interceptor gogrpc.UnaryServerInterceptor) (any, error) {
		var req Frame
		if err := dec(&req); err != nil {
			return nil, err
		}
		call := func(ctx context.Context, r any) (any, error) {
			b, err := unary(ctx, method, r.(*Frame).B, resolve)
			if err != nil {
				return nil, statusOf(err)
			}
			return &Frame{B: b}, nil
		}
		if interceptor == nil {
			return call(ctx, &req)
		}
		return interceptor(ctx, &req, &gogrpc.UnaryServerInfo{FullMethod: "/" + ServiceName + "/" + method}, call)
	}
}

// unary decodes the request of method, calls the handler of its tenant
// and encodes the result.
func unary(ctx context.Context, method string, req []byte, resolve Resolver) ([]byte, error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	op, ok := unaryOps[method]
	if !ok {
		return nil, a2a.ErrMethodNotFound
	}
	return op(ctx, req, resolve)
}

// unaryOp answers one unary method from its request's bytes.
type unaryOp func(ctx context.Context, req []byte, resolve Resolver) ([]byte, error)

// op is the unaryOp of a method: decode its request, resolve the handler
// of the request's tenant, call it, encode its result.
func op[Req, Res any](decode func([]byte) (Req, error), tenant func(*Req) string,
	call func(binding.Handler, context.Context, Req) (Res, error), encode func([]byte, Res) ([]byte, error)) unaryOp {
	return func(ctx context.Context, b []byte, resolve Resolver) ([]byte, error) {
		req, err := decode(b)
		if err != nil {
			return nil, err
		}
		h, err := resolve(ctx, tenant(&req))
		if err != nil {
			return nil, err
		}
		res, err := call(h, ctx, req)
		if err != nil {
			return nil, err
		}
		return encode(nil, res)
	}
}

// unaryOps are the unary methods of A2AService.
var unaryOps = map[string]unaryOp{
	"SendMessage": op(pb.DecodeSendMessageRequest, func(p *a2a.SendMessageRequest) string { return p.Tenant },
		binding.Handler.SendMessage, pb.AppendSendMessageResponse),
	"GetTask": op(pb.DecodeGetTaskRequest, func(p *a2a.GetTaskRequest) string { return p.Tenant },
		binding.Handler.GetTask, pb.AppendTask),
	"ListTasks": op(pb.DecodeListTasksRequest, func(p *a2a.ListTasksRequest) string { return p.Tenant },
		func(h binding.Handler, ctx context.Context, p a2a.ListTasksRequest) (listed, error) {
			r, err := h.ListTasks(ctx, p)
			return listed{r, p.IncludeArtifacts}, err
		},
		func(dst []byte, l listed) ([]byte, error) { return pb.AppendListTasksResponse(dst, l.r, l.artifacts) }),
	"CancelTask": op(pb.DecodeCancelTaskRequest, func(p *a2a.CancelTaskRequest) string { return p.Tenant },
		binding.Handler.CancelTask, pb.AppendTask),
	"CreateTaskPushNotificationConfig": op(pb.DecodeTaskPushNotificationConfig, func(p *a2a.TaskPushNotificationConfig) string { return p.Tenant },
		binding.Handler.CreateTaskPushNotificationConfig, pb.AppendTaskPushNotificationConfig),
	"GetTaskPushNotificationConfig": op(pb.DecodePushConfigIDRequest, func(p *a2a.GetTaskPushNotificationConfigRequest) string { return p.Tenant },
		binding.Handler.GetTaskPushNotificationConfig, pb.AppendTaskPushNotificationConfig),
	"DeleteTaskPushNotificationConfig": op(pb.DecodePushConfigIDRequest, func(p *a2a.GetTaskPushNotificationConfigRequest) string { return p.Tenant },
		func(h binding.Handler, ctx context.Context, p a2a.GetTaskPushNotificationConfigRequest) (struct{}, error) {
			return struct{}{}, h.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigRequest(p))
		},
		func([]byte, struct{}) ([]byte, error) { return []byte{}, nil }), // google.protobuf.Empty: no bytes
	"ListTaskPushNotificationConfigs": op(pb.DecodeListTaskPushNotificationConfigsRequest, func(p *a2a.ListTaskPushNotificationConfigsRequest) string { return p.Tenant },
		binding.Handler.ListTaskPushNotificationConfigs,
		func(dst []byte, cs []a2a.TaskPushNotificationConfig) ([]byte, error) {
			return pb.AppendListTaskPushNotificationConfigsResponse(dst, cs, "")
		}),
	"GetExtendedAgentCard": op(pb.DecodeGetExtendedAgentCardRequest, func(tenant *string) string { return *tenant },
		func(h binding.Handler, ctx context.Context, _ string) (*a2a.AgentCard, error) {
			return h.GetExtendedAgentCard(ctx)
		},
		pb.AppendAgentCard),
}

// listed is a ListTasks result with whether its tasks carry artifacts.
type listed struct {
	r         *a2a.ListTasksResponse
	artifacts bool
}

// streamHandler answers one streaming method: each event a StreamResponse.
func streamHandler(method string, resolve Resolver) gogrpc.StreamHandler {
	return func(_ any, stream gogrpc.ServerStream) error {
		var req Frame
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		ctx := stream.Context()
		events, err := openStream(ctx, method, req.B, resolve)
		if err != nil {
			return statusOf(err)
		}
		for ev, err := range events {
			if err != nil {
				return statusOf(err)
			}
			// A buffer of its own per frame: grpc-go may still be
			// writing one when SendMsg returns.
			b, err := pb.AppendStreamResponse(nil, ev.Event)
			if err != nil {
				return statusOf(err)
			}
			if err := stream.SendMsg(&Frame{B: b}); err != nil {
				return err
			}
		}
		return nil
	}
}

// openStream decodes the request of a streaming method and opens its
// events.
func openStream(ctx context.Context, method string, req []byte, resolve Resolver) (iter.Seq2[binding.StreamEvent, error], error) {
	if err := checkVersion(ctx); err != nil {
		return nil, err
	}
	if method == "SendStreamingMessage" {
		p, err := pb.DecodeSendMessageRequest(req)
		if err != nil {
			return nil, err
		}
		h, err := resolve(ctx, p.Tenant)
		if err != nil {
			return nil, err
		}
		return h.SendStreamingMessage(ctx, p)
	}
	p, err := pb.DecodeSubscribeToTaskRequest(req)
	if err != nil {
		return nil, err
	}
	var opts binding.SubscribeOptions
	if v := metadata.ValueFromIncomingContext(ctx, MetadataLastEventID); len(v) > 0 {
		seq, err := strconv.ParseInt(v[0], 10, 64)
		if err != nil || seq < 0 {
			return nil, a2a.InvalidParams(MetadataLastEventID, "last-event-id must be a non-negative event sequence number")
		}
		opts.From = &seq
	}
	h, err := resolve(ctx, p.Tenant)
	if err != nil {
		return nil, err
	}
	return h.SubscribeToTask(ctx, p, opts)
}

// checkVersion refuses an A2A-Version other than 1.x (A2A 1.0 §3.6): the
// gRPC binding of 0.3 is another service (a2a.v1), not served here.
func checkVersion(ctx context.Context) error {
	v := metadata.ValueFromIncomingContext(ctx, MetadataVersion)
	if len(v) == 0 || v[0] == "" || v[0] == "1" || strings.HasPrefix(v[0], "1.") {
		return nil
	}
	return a2a.ErrVersionNotSupported.WithMessage("A2A-Version %q is not supported over gRPC: this service speaks 1.0", v[0])
}

// statusOf is the gRPC status of err (A2A 1.0 §5.4, §10.6): an *a2a.Error
// with its code's status and an ErrorInfo; anything else is INTERNAL,
// without its text.
func statusOf(err error) error {
	if _, ok := status.FromError(err); ok && !isA2A(err) {
		return err // already a status (a transport error from grpc-go)
	}
	var e *a2a.Error
	if !errors.As(err, &e) {
		e = a2a.ErrInternal
	}
	st := status.New(grpcCode(e.Code), e.Message)
	info := &errdetails.ErrorInfo{Reason: a2a.Reason(e.Code), Domain: "a2a-protocol.org"}
	if data, ok := e.Data.(map[string]any); ok {
		for k, v := range data {
			if s, ok := v.(string); ok {
				if info.Metadata == nil {
					info.Metadata = map[string]string{}
				}
				info.Metadata[k] = s
			}
		}
	}
	if info.Reason == "" {
		return st.Err()
	}
	if withInfo, err := st.WithDetails(info); err == nil {
		st = withInfo
	}
	return st.Err()
}

func isA2A(err error) bool {
	var e *a2a.Error
	return errors.As(err, &e)
}

// grpcCode is the gRPC status code of an A2A error code (A2A 1.0 §5.4).
func grpcCode(code int) codes.Code {
	switch code {
	case a2a.CodeTaskNotFound:
		return codes.NotFound
	case a2a.CodeTaskNotCancelable, a2a.CodePushNotificationNotSupported, a2a.CodeUnsupportedOperation,
		a2a.CodeAuthenticatedExtendedCardNotConfigured, a2a.CodeExtensionSupportRequired, a2a.CodeVersionNotSupported:
		return codes.FailedPrecondition
	case a2a.CodeContentTypeNotSupported, a2a.CodeInvalidParams, a2a.CodeInvalidRequest, a2a.CodeParseError:
		return codes.InvalidArgument
	case a2a.CodeMethodNotFound:
		return codes.Unimplemented
	case a2a.CodeUnauthenticated:
		return codes.Unauthenticated
	}
	return codes.Internal
}
