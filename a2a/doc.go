// Package a2a holds the protocol domain model of the Agent2Agent (A2A)
// protocol: tasks, messages, parts, artifacts, streaming events, the Agent
// Card, push notification configuration, and the coded errors of A2A 0.3.0
// §8 and JSON-RPC 2.0 §5.1.
//
// The types here are version-neutral Go values with no JSON encoding of
// their own: each protocol version's wire format (A2A 0.3.0 JSON with
// "kind" discriminators today, A2A 1.0 ProtoJSON later) lives in its own
// codec. The package does no I/O. Numbers inside structured values (a
// Data part's Value, Metadata maps) are encoding/json.Number, their text
// kept exactly as received (see Data).
//
//	msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hello"))
//	task := a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
//	_ = msg
//	_ = task
package a2a
