// Package a2av03 encodes and decodes the a2a domain values as A2A 0.3.0
// JSON, for peers that still speak 0.3: the JSON-RPC binding's objects,
// told apart by their "kind" member ("task", "message", "status-update",
// "artifact-update"), with lowercase enum values ("completed", "agent") and
// the parts' 0.3 shapes ({"kind": "file", "file": {"bytes"|"uri"}}); and the
// bodies of the 0.3 HTTP+JSON binding, which are the JSON of its proto
// (functions named REST).
//
// What 0.3 cannot say is carried as 0.3 peers expect or left out: a Data
// part whose value is not an object is wrapped as {"value": …} and marked in
// its metadata, then unwrapped on decoding; a request's Tenant has no 0.3
// field. The same values in A2A 1.0's JSON are package a2av1's.
package a2av03

import (
	"fmt"
	"reflect"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// Marshal returns the A2A 0.3.0 JSON-RPC JSON of v, which is one of:
//
//   - *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent,
//     *a2a.TaskArtifactUpdateEvent: the object with its "kind" (A2A 0.3.0
//     §6.1, §6.4, §7.2.2, §7.2.3), as a result or a stream event
//   - *a2a.AgentCard: the 0.3 Agent Card (§5.5): url, preferredTransport,
//     additionalInterfaces
//   - *a2a.SendMessageRequest: MessageSendParams (§7.1)
//   - *a2a.GetTaskRequest: TaskQueryParams (§7.3)
//   - *a2a.CancelTaskRequest, *a2a.SubscribeToTaskRequest: TaskIdParams
//     (§7.4, §7.9)
//   - *a2a.TaskPushNotificationConfig (§7.5)
//   - *a2a.GetTaskPushNotificationConfigRequest,
//     *a2a.DeleteTaskPushNotificationConfigRequest: their params (§7.6,
//     §7.8)
//   - *a2a.Error: the JSON-RPC error object {"code", "message", "data"}
//     (Unmarshal also reads A2A 1.0's, whose data lists ErrorInfo details)
//
// It fails for a nil pointer, another type, a string that is not valid
// UTF-8 and a structured value JSON cannot hold (see a2a.ValidateValues).
func Marshal(v any) ([]byte, error) {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, fmt.Errorf("a2av03: cannot marshal a nil %T", v)
	}
	switch v := v.(type) {
	case *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent, *a2a.TaskArtifactUpdateEvent:
		return v03.MarshalEvent(v.(a2a.Event))
	case *a2a.AgentCard:
		return v03.MarshalAgentCard(v)
	case *a2a.SendMessageRequest:
		return v03.EncodeMessageSendParams(v)
	case *a2a.GetTaskRequest:
		return v03.EncodeTaskQueryParams(v)
	case *a2a.CancelTaskRequest:
		return v03.EncodeTaskIDParams(v)
	case *a2a.SubscribeToTaskRequest:
		return v03.EncodeTaskIDParams((*a2a.CancelTaskRequest)(v))
	case *a2a.TaskPushNotificationConfig:
		return v03.MarshalTaskPushNotificationConfig(v)
	case *a2a.GetTaskPushNotificationConfigRequest:
		return v03.EncodeTaskPushConfigParams(v)
	case *a2a.DeleteTaskPushNotificationConfigRequest:
		return v03.EncodeTaskPushConfigParams((*a2a.GetTaskPushNotificationConfigRequest)(v))
	case *a2a.Error:
		return v03.MarshalError(v)
	default:
		return nil, fmt.Errorf("a2av03: cannot marshal %T", v)
	}
}

// Unmarshal decodes A2A 0.3.0 JSON-RPC JSON into v, a non-nil pointer to
// one of the types Marshal takes (another type or a nil pointer is an
// error); what Marshal writes, Unmarshal reads back to an equal value (an
// Agent Card: with its interfaces as the 0.3 card lists them). An event must carry the kind of
// v's type (UnmarshalEvent takes any of them). Decoding is strict: field
// names are case-sensitive and required fields checked; a request that
// breaks the specification is an *a2a.Error with code InvalidParams
// (-32602) naming the member ("/params/message/parts/0/kind").
func Unmarshal(data []byte, v any) error {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return fmt.Errorf("a2av03: cannot unmarshal into a nil %T", v)
	}
	switch v := v.(type) {
	case *a2a.Task:
		return unmarshalEvent(data, v)
	case *a2a.Message:
		return unmarshalEvent(data, v)
	case *a2a.TaskStatusUpdateEvent:
		return unmarshalEvent(data, v)
	case *a2a.TaskArtifactUpdateEvent:
		return unmarshalEvent(data, v)
	}
	var err error
	switch v := v.(type) {
	case *a2a.AgentCard:
		*v, err = v03.UnmarshalAgentCard(data)
	case *a2a.SendMessageRequest:
		*v, err = v03.DecodeMessageSendParams(data)
	case *a2a.GetTaskRequest:
		*v, err = v03.DecodeTaskQueryParams(data)
	case *a2a.CancelTaskRequest:
		*v, err = v03.DecodeTaskIDParams(data)
	case *a2a.SubscribeToTaskRequest:
		var r a2a.CancelTaskRequest
		r, err = v03.DecodeTaskIDParams(data)
		*v = a2a.SubscribeToTaskRequest(r)
	case *a2a.TaskPushNotificationConfig:
		*v, err = v03.UnmarshalTaskPushNotificationConfig(data)
	case *a2a.GetTaskPushNotificationConfigRequest:
		*v, err = v03.DecodeTaskPushConfigParams(data, false)
	case *a2a.DeleteTaskPushNotificationConfigRequest:
		var r a2a.GetTaskPushNotificationConfigRequest
		r, err = v03.DecodeTaskPushConfigParams(data, true)
		*v = a2a.DeleteTaskPushNotificationConfigRequest(r)
	case *a2a.Error:
		var e *a2a.Error
		if e, err = v10.UnmarshalError(data); err == nil {
			*v = *e
		}
	default:
		return fmt.Errorf("a2av03: cannot unmarshal into %T", v)
	}
	return err
}

// unmarshalEvent decodes data into *dst, refusing an event of another kind.
func unmarshalEvent[T any](data []byte, dst *T) error {
	ev, err := v03.UnmarshalEvent(data)
	if err != nil {
		return err
	}
	got, ok := any(ev).(*T)
	if !ok {
		return fmt.Errorf("a2av03: the JSON holds a %T, not a %T", ev, dst)
	}
	*dst = *got
	return nil
}

// UnmarshalEvent decodes an object told apart by its "kind": a result of
// message/send or tasks/get, an event of message/stream, or a push
// notification's body. The event is a *a2a.Task, *a2a.Message,
// *a2a.TaskStatusUpdateEvent or *a2a.TaskArtifactUpdateEvent.
func UnmarshalEvent(data []byte) (a2a.Event, error) {
	return v03.UnmarshalEvent(data)
}

// MarshalREST returns the A2A 0.3.0 HTTP+JSON body of v (the JSON of the
// 0.3 proto), which is one of:
//
//   - *a2a.Task: the body of GET /v1/tasks/{id} and POST
//     /v1/tasks/{id}:cancel
//   - *a2a.SendMessageRequest: the body of POST /v1/message:send and
//     /v1/message:stream
//   - *a2a.TaskPushNotificationConfig: {"name":
//     "tasks/{taskId}/pushNotificationConfigs/{id}",
//     "pushNotificationConfig": {…}}
//
// The other events travel in a StreamResponse or a SendMessageResponse
// (MarshalRESTStreamResponse). Errors as Marshal's.
func MarshalREST(v any) ([]byte, error) {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, fmt.Errorf("a2av03: cannot marshal a nil %T", v)
	}
	switch v := v.(type) {
	case *a2a.Task:
		return v10.AppendREST03Event(nil, v)
	case *a2a.SendMessageRequest:
		return v10.AppendREST03SendMessageRequest(nil, v)
	case *a2a.TaskPushNotificationConfig:
		return v10.AppendREST03PushConfig(nil, v)
	}
	return nil, fmt.Errorf("a2av03: cannot marshal %T for HTTP+JSON", v)
}

// UnmarshalREST decodes an A2A 0.3.0 HTTP+JSON body into v, a non-nil
// *a2a.Task, *a2a.SendMessageRequest or *a2a.TaskPushNotificationConfig
// (as a client reads a config, with its name). A request body that breaks
// the specification is an *a2a.Error with code InvalidParams (-32602)
// naming the member.
func UnmarshalREST(data []byte, v any) error {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return fmt.Errorf("a2av03: cannot unmarshal into a nil %T", v)
	}
	var err error
	switch v := v.(type) {
	case *a2a.Task:
		*v, err = v10.UnmarshalREST03Task(data)
	case *a2a.SendMessageRequest:
		*v, err = v10.DecodeREST03SendMessage(data)
	case *a2a.TaskPushNotificationConfig:
		*v, err = v10.UnmarshalREST03PushConfig(data)
	default:
		return fmt.Errorf("a2av03: cannot unmarshal HTTP+JSON into %T", v)
	}
	return err
}

// MarshalRESTStreamResponse returns the StreamResponse of the 0.3 proto
// that carries ev: {"task": …}, {"message": …}, {"statusUpdate": …} (with
// "final": true on the last one) or {"artifactUpdate": …}, the data of one
// SSE event of POST /v1/message:stream and /v1/tasks/{id}:subscribe.
// Errors as Marshal's.
func MarshalRESTStreamResponse(ev a2a.Event) ([]byte, error) {
	if err := nonNil(ev); err != nil {
		return nil, err
	}
	return v10.AppendREST03StreamResponse(nil, ev)
}

// UnmarshalRESTStreamResponse decodes such a StreamResponse into the
// *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent or
// *a2a.TaskArtifactUpdateEvent it carries.
func UnmarshalRESTStreamResponse(data []byte) (a2a.Event, error) {
	return v10.UnmarshalREST03StreamResponse(data)
}

// nonNil refuses a nil event or a nil pointer in one, which the encoders
// would dereference.
func nonNil(ev a2a.Event) error {
	if ev == nil {
		return fmt.Errorf("a2av03: a nil event")
	}
	if rv := reflect.ValueOf(ev); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return fmt.Errorf("a2av03: a nil %T event", ev)
	}
	return nil
}
