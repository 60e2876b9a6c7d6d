// Package a2av1 encodes and decodes the a2a domain values as A2A 1.0 JSON:
// the ProtoJSON form of the lf.a2a.v1 messages (A2A 1.0 §5.5, §9, §11)
// that the JSON-RPC binding carries in params and results and the
// HTTP+JSON binding in bodies. Enums are written by name
// ("TASK_STATE_COMPLETED", "ROLE_AGENT"), bytes as base64, timestamps as
// RFC 3339 in UTC. Decoding checks what the specification requires (types,
// required fields, enum values; field names are case-sensitive, and a
// member the schema does not name is ignored, as ProtoJSON readers do) and
// keeps the numbers of structured values exact (as encoding/json.Number).
//
// A library user holding an a2a value encodes it with Marshal and reads it
// back with Unmarshal; the stream and SendMessage responses, whose JSON
// names the member that holds the event ({"task": …}, {"statusUpdate": …}),
// have functions of their own. The same values in A2A 0.3's JSON are
// package a2av03's. The server and the client use the same encoders
// through the bindings; this package is their public face.
package a2av1

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// Marshal returns the A2A 1.0 JSON of v, which is one of:
//
//   - *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent,
//     *a2a.TaskArtifactUpdateEvent: the object itself (A2A 1.0 §4.1.1,
//     §4.1.4, §4.2.1, §4.2.2); a status update's Final is not written
//     (1.0 has no such field)
//   - *a2a.AgentCard: the Agent Card (§4.4.1) with its supportedInterfaces
//   - *a2a.SendMessageRequest, *a2a.GetTaskRequest, *a2a.ListTasksRequest,
//     *a2a.CancelTaskRequest, *a2a.SubscribeToTaskRequest,
//     *a2a.GetTaskPushNotificationConfigRequest,
//     *a2a.DeleteTaskPushNotificationConfigRequest,
//     *a2a.ListTaskPushNotificationConfigsRequest: the request message
//     (§3.1, the JSON-RPC params)
//   - *a2a.ListTasksResponse: the ListTasksResponse (§3.1.4), artifacts
//     included
//   - *a2a.TaskPushNotificationConfig (§4.3.1)
//   - *a2a.Error: the JSON-RPC error object (§9.5) with its
//     google.rpc.ErrorInfo detail
//
// It fails for a nil pointer, another type, a string that is not valid
// UTF-8 and a structured value JSON cannot hold (see a2a.ValidateValues).
func Marshal(v any) ([]byte, error) {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, fmt.Errorf("a2av1: cannot marshal a nil %T", v)
	}
	switch v := v.(type) {
	case *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent, *a2a.TaskArtifactUpdateEvent:
		return v10.AppendEvent(nil, v.(a2a.Event))
	case *a2a.AgentCard:
		return v10.AppendAgentCard(nil, v, v10.CardOptions{})
	case *a2a.SendMessageRequest:
		return v10.AppendSendMessageRequest(nil, v)
	case *a2a.GetTaskRequest:
		return v10.AppendGetTaskRequest(nil, v)
	case *a2a.ListTasksRequest:
		return v10.AppendListTasksRequest(nil, v)
	case *a2a.CancelTaskRequest:
		return v10.AppendCancelTaskRequest(nil, v)
	case *a2a.SubscribeToTaskRequest:
		return v10.AppendSubscribeToTaskRequest(nil, v)
	case *a2a.GetTaskPushNotificationConfigRequest:
		return v10.AppendPushConfigIDRequest(nil, v)
	case *a2a.DeleteTaskPushNotificationConfigRequest:
		return v10.AppendPushConfigIDRequest(nil, (*a2a.GetTaskPushNotificationConfigRequest)(v))
	case *a2a.ListTaskPushNotificationConfigsRequest:
		return v10.AppendListTaskPushNotificationConfigsRequest(nil, v)
	case *a2a.ListTasksResponse:
		return v10.AppendListTasksResponse(nil, v, true)
	case *a2a.TaskPushNotificationConfig:
		return v10.AppendTaskPushNotificationConfig(nil, v)
	case *a2a.Error:
		return v10.AppendError(nil, v), nil
	default:
		return nil, fmt.Errorf("a2av1: cannot marshal %T", v)
	}
}

// Unmarshal decodes the A2A 1.0 JSON in data into v, a non-nil pointer to
// one of the types Marshal takes (another type or a nil pointer is an
// error); what Marshal writes, Unmarshal reads back to an equal value, but
// for a status update's Final, which its state implies (true on a terminal
// or interrupted state), and an Agent Card, whose interfaces come back in
// SupportedInterfaces (the 0.3 members URL, PreferredTransport and
// AdditionalInterfaces are folded into them on writing).
// Requests are read as a server reads them: a violation of the
// specification is an *a2a.Error with code InvalidParams (-32602) whose
// message names the offending member by its JSON Pointer. An *a2a.Error is
// filled from a JSON-RPC error object.
func Unmarshal(data []byte, v any) error {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return fmt.Errorf("a2av1: cannot unmarshal into a nil %T", v)
	}
	var err error
	switch v := v.(type) {
	case *a2a.Task:
		*v, err = v10.UnmarshalTask(data)
	case *a2a.Message:
		*v, err = v10.UnmarshalMessage(data)
	case *a2a.TaskStatusUpdateEvent:
		err = unmarshalMember("statusUpdate", data, v)
	case *a2a.TaskArtifactUpdateEvent:
		err = unmarshalMember("artifactUpdate", data, v)
	case *a2a.AgentCard:
		*v, err = v10.UnmarshalAgentCard(data)
	case *a2a.SendMessageRequest:
		*v, err = v10.DecodeSendMessageRequest(data)
	case *a2a.GetTaskRequest:
		*v, err = v10.DecodeGetTaskRequest(data)
	case *a2a.ListTasksRequest:
		*v, err = v10.DecodeListTasksRequest(data)
	case *a2a.CancelTaskRequest:
		*v, err = v10.DecodeCancelTaskRequest(data)
	case *a2a.SubscribeToTaskRequest:
		*v, err = v10.DecodeSubscribeToTaskRequest(data)
	case *a2a.GetTaskPushNotificationConfigRequest:
		*v, err = v10.DecodeGetTaskPushNotificationConfigRequest(data)
	case *a2a.DeleteTaskPushNotificationConfigRequest:
		*v, err = v10.DecodeDeleteTaskPushNotificationConfigRequest(data)
	case *a2a.ListTaskPushNotificationConfigsRequest:
		*v, err = v10.DecodeListTaskPushNotificationConfigsRequest(data)
	case *a2a.ListTasksResponse:
		*v, err = v10.UnmarshalListTasksResponse(data)
	case *a2a.TaskPushNotificationConfig:
		*v, err = v10.UnmarshalTaskPushNotificationConfig(data)
	case *a2a.Error:
		var e *a2a.Error
		if e, err = v10.UnmarshalError(data); err == nil {
			*v = *e
		}
	default:
		return fmt.Errorf("a2av1: cannot unmarshal into %T", v)
	}
	return err
}

// unmarshalMember decodes data, which must be one JSON object, as the
// member name of a StreamResponse into *dst: the StreamResponse decoder is
// the one that reads a bare status or artifact update.
func unmarshalMember[T any](name string, data []byte, dst *T) error {
	obj := jsontext.Value(bytes.TrimSpace(data))
	if !obj.IsValid() || obj.Kind() != '{' {
		return a2a.ErrParse.WithMessage("a2av1: a %s is a JSON object", name)
	}
	b := make([]byte, 0, len(obj)+len(name)+5)
	b = append(b, `{"`...)
	b = append(b, name...)
	b = append(b, `":`...)
	b = append(b, obj...)
	b = append(b, '}')
	ev, err := UnmarshalStreamResponse(b)
	if err != nil {
		return err
	}
	got, ok := any(ev).(*T)
	if !ok {
		return fmt.Errorf("a2av1: the JSON holds a %T, not a %T", ev, dst)
	}
	*dst = *got
	return nil
}

// MarshalStreamResponse returns the StreamResponse (A2A 1.0 §3.2.3) that
// carries ev: {"task": …}, {"message": …}, {"statusUpdate": …} or
// {"artifactUpdate": …}. It is the result of each JSON-RPC streaming
// response, the data of each HTTP+JSON SSE event and the body of a push
// notification. Errors as Marshal's.
func MarshalStreamResponse(ev a2a.Event) ([]byte, error) {
	if err := nonNil(ev); err != nil {
		return nil, err
	}
	return v10.AppendStreamResponse(nil, ev)
}

// UnmarshalStreamResponse decodes a StreamResponse into the *a2a.Task,
// *a2a.Message, *a2a.TaskStatusUpdateEvent (Final set on a terminal or
// interrupted state, or when the frame says "final": true, as 0.3 peers
// write) or *a2a.TaskArtifactUpdateEvent it carries. A frame
// {"error": {…}}, with which an HTTP+JSON stream ends in an error, is
// returned as that *a2a.Error (the event nil).
func UnmarshalStreamResponse(data []byte) (a2a.Event, error) {
	ev, err := v10.UnmarshalStreamResponse(data)
	if se := (*v10.StreamError)(nil); errors.As(err, &se) {
		return nil, se.Err
	}
	return ev, err
}

// MarshalSendMessageResponse returns the SendMessageResponse (A2A 1.0
// §3.2.2) of SendMessage's result, a *a2a.Task or a *a2a.Message:
// {"task": …} or {"message": …}.
func MarshalSendMessageResponse(ev a2a.Event) ([]byte, error) {
	switch ev.(type) {
	case *a2a.Task, *a2a.Message:
	default:
		return nil, fmt.Errorf("a2av1: a SendMessageResponse holds a task or a message, not %T", ev)
	}
	if err := nonNil(ev); err != nil {
		return nil, err
	}
	return v10.AppendSendMessageResponse(nil, ev)
}

// UnmarshalSendMessageResponse decodes a SendMessageResponse into the
// *a2a.Task or *a2a.Message it holds.
func UnmarshalSendMessageResponse(data []byte) (a2a.Event, error) {
	return v10.UnmarshalSendMessageResponse(data)
}

// nonNil refuses a nil event or a nil pointer in one, which the encoders
// would dereference.
func nonNil(ev a2a.Event) error {
	if ev == nil {
		return fmt.Errorf("a2av1: a nil event")
	}
	if rv := reflect.ValueOf(ev); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return fmt.Errorf("a2av1: a nil %T event", ev)
	}
	return nil
}
