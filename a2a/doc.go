// Package a2a holds the domain model of the Agent2Agent (A2A) protocol with
// the names of A2A 1.0: Task, TaskStatus and TaskState (numbered as in
// a2a.proto), Message, Part (text | raw | url | data), Artifact, the
// streaming events, the Agent Card, push notification configs, the request
// of each operation (SendMessageRequest, GetTaskRequest, CancelTaskRequest,
// SubscribeToTaskRequest, ListTasksRequest, …) and the coded errors of
// A2A 1.0 §3.3 / 0.3.0 §8 and JSON-RPC 2.0 §5.1.
//
// The model is the superset of A2A 1.0 and 0.3.0. Its types are Go values
// with no JSON encoding of their own: each protocol version's wire format
// (A2A 1.0 ProtoJSON; A2A 0.3.0 JSON with "kind" discriminators) lives in
// its own codec, at the edge, and every other package speaks only this
// model. The package does no I/O. Numbers inside structured values (a
// Data part's Value, Metadata maps) are encoding/json.Number, their text
// kept exactly as received (see Data).
//
//	msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hello"))
//	task := a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
//	_ = msg
//	_ = task
package a2a
