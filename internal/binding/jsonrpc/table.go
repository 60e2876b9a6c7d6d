package jsonrpc

import (
	"context"
	"iter"
	"net/http"

	"github.com/a2abridge/a2abridge/internal/binding/edge"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
	v03 "github.com/a2abridge/a2abridge/internal/wire/v03"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// The A2A methods of the JSON-RPC binding (A2A 0.3.0 §7, A2A 1.0 §9.4), in
// one table: each method's entry names its protocol version (rpc03,
// rpc10: what the methods of a version share), decodes its params with
// that version's codec, calls the one binding.Handler operation it stands for and
// encodes the result. The names of the two versions never collide, so a
// request's method alone picks its entry; the A2A-Version the request
// asks for must be the entry's (ServeHTTP checks it).

// rpcVersion is what the methods of one protocol version share.
type rpcVersion struct {
	version string
	// streamEvent appends one event of a stream as the value of a
	// response's "result": the 0.3 object with its kind, or the 1.0
	// StreamResponse.
	streamEvent func(dst []byte, ev a2a.Event) ([]byte, error)
}

var (
	rpc03 = &rpcVersion{version: a2a.Version03, streamEvent: v03.AppendEvent}
	rpc10 = &rpcVersion{version: a2a.Version10, streamEvent: v10.AppendStreamResponse}
)

// rpcMethod is one A2A method: exactly one of call (answered with one
// result) and open (answered with an SSE stream) is set.
type rpcMethod struct {
	v *rpcVersion
	// call decodes params, calls the handler and appends the result's
	// JSON to dst; on error, what it appended must be discarded.
	call func(t *jsonrpcTransport, dst []byte, ctx context.Context, params []byte) ([]byte, error)
	// open decodes params and opens the stream of events; r is the HTTP
	// request (its Last-Event-ID resumes a subscription).
	open func(t *jsonrpcTransport, ctx context.Context, r *http.Request, params []byte) (iter.Seq2[binding.StreamEvent, error], error)
	// subscribe marks a stream that follows a task already running (the
	// subscription methods), which is mostly held long: its connection is
	// taken over (edge.WriteSSE's takeover).
	subscribe bool
}

// rpcMethods are the A2A methods of both versions by name.
var rpcMethods = map[string]*rpcMethod{
	// A2A 0.3.0 (§7).
	binding.MethodSendMessage: {v: rpc03, call: unary(v03.DecodeMessageSendParams, binding.Handler.SendMessage, v03.AppendEvent)},
	binding.MethodSendStreamingMessage: {v: rpc03, open: func(t *jsonrpcTransport, ctx context.Context, _ *http.Request, params []byte) (iter.Seq2[binding.StreamEvent, error], error) {
		p, err := v03.DecodeMessageSendParams(params)
		if err != nil {
			return nil, err
		}
		return t.a.SendStreamingMessage(ctx, p)
	}},
	binding.MethodGetTask:    {v: rpc03, call: unary(v03.DecodeTaskQueryParams, binding.Handler.GetTask, appendTask03)},
	binding.MethodCancelTask: {v: rpc03, call: unary(v03.DecodeTaskIDParams, binding.Handler.CancelTask, appendTask03)},
	binding.MethodResubscribe: {v: rpc03, subscribe: true, open: func(t *jsonrpcTransport, ctx context.Context, r *http.Request, params []byte) (iter.Seq2[binding.StreamEvent, error], error) {
		p, err := v03.DecodeTaskIDParams(params)
		if err != nil {
			return nil, err
		}
		// tasks/resubscribe ends with an interrupted state too (A2A 0.3.0
		// §7.9: the status update of input-required is final).
		return subscribe(t, ctx, r, a2a.SubscribeToTaskRequest(p), true)
	}},
	binding.MethodSetPushConfig: {v: rpc03, call: unary(v03.DecodeTaskPushNotificationConfig, binding.Handler.CreateTaskPushNotificationConfig, appendPushConfig03)},
	binding.MethodGetPushConfig: {v: rpc03, call: unary(func(params []byte) (a2a.GetTaskPushNotificationConfigRequest, error) {
		return v03.DecodeTaskPushConfigParams(params, false)
	}, binding.Handler.GetTaskPushNotificationConfig, appendPushConfig03)}, // a missing config stays -32602 in 0.3 (edge.PushConfigErr10 is 1.0's rule)
	binding.MethodListPushConfig: {v: rpc03, call: unary(func(params []byte) (a2a.ListTaskPushNotificationConfigsRequest, error) {
		p, err := v03.DecodeTaskIDParams(params)
		return a2a.ListTaskPushNotificationConfigsRequest{TaskID: p.ID}, err
	}, binding.Handler.ListTaskPushNotificationConfigs, appendPushConfigs03)},
	binding.MethodDeletePushConfig: {v: rpc03, call: unary(func(params []byte) (a2a.DeleteTaskPushNotificationConfigRequest, error) {
		p, err := v03.DecodeTaskPushConfigParams(params, true)
		return a2a.DeleteTaskPushNotificationConfigRequest(p), err
	}, deletePushConfig, func(dst []byte, _ struct{}) ([]byte, error) { return append(dst, "null"...), nil })},
	binding.MethodGetExtendedCard: {v: rpc03, call: func(t *jsonrpcTransport, dst []byte, ctx context.Context, _ []byte) ([]byte, error) {
		c, err := t.a.GetExtendedAgentCard(ctx)
		if err != nil {
			return dst, edge.ExtendedCardErr03(err)
		}
		b, err := edge.MarshalCard03(c, t.a.SignCard != nil)
		b, err = t.signCard(ctx, b, err)
		return append(dst, b...), err
	}},

	// A2A 1.0 (§9.4).
	binding.Method10SendMessage: {v: rpc10, call: unary(decodeSend10, binding.Handler.SendMessage, v10.AppendSendMessageResponse)},
	binding.Method10SendStreamingMessage: {v: rpc10, open: func(t *jsonrpcTransport, ctx context.Context, _ *http.Request, params []byte) (iter.Seq2[binding.StreamEvent, error], error) {
		p, err := decodeSend10(params)
		if err != nil {
			return nil, err
		}
		return t.a.SendStreamingMessage(ctx, p)
	}},
	binding.Method10GetTask: {v: rpc10, call: unary(v10.DecodeGetTaskRequest, binding.Handler.GetTask, v10.AppendTask)},
	binding.Method10ListTasks: {v: rpc10, call: func(t *jsonrpcTransport, dst []byte, ctx context.Context, params []byte) ([]byte, error) {
		p, err := v10.DecodeListTasksRequest(params)
		if err != nil {
			return dst, err
		}
		res, err := t.a.ListTasks(ctx, p)
		if err != nil {
			return dst, err
		}
		return v10.AppendListTasksResponse(dst, res, p.IncludeArtifacts)
	}},
	binding.Method10CancelTask: {v: rpc10, call: unary(v10.DecodeCancelTaskRequest, binding.Handler.CancelTask, v10.AppendTask)},
	binding.Method10SubscribeToTask: {v: rpc10, subscribe: true, open: func(t *jsonrpcTransport, ctx context.Context, r *http.Request, params []byte) (iter.Seq2[binding.StreamEvent, error], error) {
		p, err := v10.DecodeSubscribeToTaskRequest(params)
		if err != nil {
			return nil, err
		}
		return subscribe(t, ctx, r, p, false)
	}},
	binding.Method10CreatePushConfig: {v: rpc10, call: unary(func(params []byte) (a2a.TaskPushNotificationConfig, error) {
		c, err := v10.DecodeTaskPushNotificationConfig(params)
		c.PushNotificationConfig.ProtocolVersion = a2a.Version10 // its notifications take the 1.0 shape
		return c, err
	}, binding.Handler.CreateTaskPushNotificationConfig, v10.AppendTaskPushNotificationConfig)},
	binding.Method10GetPushConfig: {v: rpc10, call: unary(v10.DecodeGetTaskPushNotificationConfigRequest, func(h binding.Handler, ctx context.Context, p a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
		c, err := h.GetTaskPushNotificationConfig(ctx, p)
		return c, edge.PushConfigErr10(err)
	}, v10.AppendTaskPushNotificationConfig)},
	binding.Method10ListPushConfigs: {v: rpc10, call: unary(v10.DecodeListTaskPushNotificationConfigsRequest, binding.Handler.ListTaskPushNotificationConfigs,
		func(dst []byte, cs []a2a.TaskPushNotificationConfig) ([]byte, error) {
			return v10.AppendListTaskPushNotificationConfigsResponse(dst, cs, "")
		})},
	binding.Method10DeletePushConfig: {v: rpc10, call: unary(v10.DecodeDeleteTaskPushNotificationConfigRequest, func(h binding.Handler, ctx context.Context, p a2a.DeleteTaskPushNotificationConfigRequest) (struct{}, error) {
		_, err := deletePushConfig(h, ctx, p)
		return struct{}{}, edge.PushConfigErr10(err)
	}, func(dst []byte, _ struct{}) ([]byte, error) { return append(dst, "{}"...), nil })},
	binding.Method10GetExtendedCard: {v: rpc10, call: func(t *jsonrpcTransport, dst []byte, ctx context.Context, _ []byte) ([]byte, error) {
		c, err := t.a.GetExtendedAgentCard(ctx)
		if err != nil {
			return dst, err
		}
		b, err := v10.MarshalAgentCard(c, v10.CardOptions{})
		b, err = t.signCard(ctx, b, err)
		return append(dst, b...), err
	}},
}

// unary makes the call of a method answered with one result: decode the
// params, call the operation, encode its result.
func unary[Req, Res any](decode func([]byte) (Req, error), op func(binding.Handler, context.Context, Req) (Res, error), encode func([]byte, Res) ([]byte, error)) func(*jsonrpcTransport, []byte, context.Context, []byte) ([]byte, error) {
	return func(t *jsonrpcTransport, dst []byte, ctx context.Context, params []byte) ([]byte, error) {
		p, err := decode(params)
		if err != nil {
			return dst, err
		}
		res, err := op(t.a.Handler, ctx, p)
		if err != nil {
			return dst, err
		}
		return encode(dst, res)
	}
}

// subscribe opens a subscription, resumed from r's Last-Event-ID when it
// has one.
func subscribe(t *jsonrpcTransport, ctx context.Context, r *http.Request, p a2a.SubscribeToTaskRequest, endOnInterrupt bool) (iter.Seq2[binding.StreamEvent, error], error) {
	from, err := edge.LastEventID(r)
	if err != nil {
		return nil, err
	}
	return t.a.SubscribeToTask(ctx, p, binding.SubscribeOptions{From: from, EndOnInterrupt: endOnInterrupt})
}

// decodeSend10 decodes SendMessage params; a push notification config in
// them is a 1.0 config (edge.PushIn10).
func decodeSend10(params []byte) (a2a.SendMessageRequest, error) {
	p, err := v10.DecodeSendMessageRequest(params)
	return edge.PushIn10(p), err
}

// deletePushConfig is binding.Handler.DeleteTaskPushNotificationConfig with a
// result, as unary takes it.
func deletePushConfig(h binding.Handler, ctx context.Context, p a2a.DeleteTaskPushNotificationConfigRequest) (struct{}, error) {
	return struct{}{}, h.DeleteTaskPushNotificationConfig(ctx, p)
}

func appendTask03(dst []byte, t *a2a.Task) ([]byte, error) { return v03.AppendEvent(dst, t) }

func appendPushConfig03(dst []byte, c *a2a.TaskPushNotificationConfig) ([]byte, error) {
	b, err := v03.MarshalTaskPushNotificationConfig(c)
	return append(dst, b...), err
}

// appendPushConfigs03 appends the result of
// tasks/pushNotificationConfig/list: an array of configs.
func appendPushConfigs03(dst []byte, cs []a2a.TaskPushNotificationConfig) ([]byte, error) {
	dst = append(dst, '[')
	for i := range cs {
		if i > 0 {
			dst = append(dst, ',')
		}
		b, err := v03.MarshalTaskPushNotificationConfig(&cs[i])
		if err != nil {
			return dst, err
		}
		dst = append(dst, b...)
	}
	return append(dst, ']'), nil
}

// lookupMethod returns the A2A method named name, nil for another name.
func lookupMethod(name string) *rpcMethod { return rpcMethods[name] }

// methodVersion returns the protocol version whose JSON-RPC method names
// include method ("0.3": A2A 0.3.0 §7; "1.0": A2A 1.0 §9.4), or "".
func methodVersion(method string) string {
	if m := lookupMethod(method); m != nil {
		return m.v.version
	}
	return ""
}

// streamingMethod reports whether method answers with an SSE stream.
func streamingMethod(method string) bool {
	m := lookupMethod(method)
	return m != nil && m.open != nil
}

// KnownMethod reports whether method is an A2A method of either version (A2A 0.3.0 §7,
// A2A 1.0 §9.4).
func KnownMethod(method string) bool { return lookupMethod(method) != nil }
