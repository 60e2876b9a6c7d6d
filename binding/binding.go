// Package binding holds what every protocol binding of A2A serves: the
// Handler interface, one method per A2A operation (A2A 1.0 §3.1) in the
// values of package a2a, and the StreamEvent its streaming operations
// yield. A binding (JSON-RPC 2.0, HTTP+JSON/REST, later gRPC; A2A 1.0
// §9–§11, and A2A 0.3.0's over the same calls) decodes a request in its
// protocol version's wire format, calls one Handler method and encodes
// the result; nothing below a Handler knows which version or binding a
// client spoke.
//
// server.AgentHandler is the Handler of an agent on the durable engine,
// through its interceptors; server.Host serves AgentHandlers over every
// HTTP binding at one origin.
package binding

import (
	"context"
	"iter"

	"github.com/a2abridge/a2abridge/a2a"
)

// Handler answers the A2A operations (A2A 1.0 §3.1), one method per
// operation, with the values of package a2a: whatever protocol version and
// binding a request came in, a binding decodes it, calls one Handler method
// and encodes the result. Errors are *a2a.Error for protocol errors (the
// binding writes their code and ErrorInfo reason); any other error is an
// internal failure (-32603, HTTP 500), logged with a request id. Without
// an error, a result is not nil (a stream, a task, a card). Tasks and
// configs returned are to be read (encoded), not modified: they may share
// their slices and maps with a store.
//
// server.AgentHandler implements it for one agent on the engine. A
// Handler is decoratable: a server.Interceptor wraps one to add
// authorization, rate limits or logging around every binding's calls, and
// a Go program may call a Handler directly.
type Handler interface {
	// SendMessage starts a task or continues one (A2A 1.0 §3.1.1) and
	// returns it as a *a2a.Task, or the agent's direct answer as a
	// *a2a.Message (MessageResponder).
	SendMessage(ctx context.Context, req a2a.SendMessageRequest) (a2a.Event, error)
	// SendStreamingMessage is SendMessage with the task's events streamed
	// (A2A 1.0 §3.1.2); a request error comes before any event.
	SendStreamingMessage(ctx context.Context, req a2a.SendMessageRequest) (iter.Seq2[StreamEvent, error], error)
	// GetTask returns a task (A2A 1.0 §3.1.3).
	GetTask(ctx context.Context, req a2a.GetTaskRequest) (*a2a.Task, error)
	// ListTasks returns a page of the caller's tasks (A2A 1.0 §3.1.4).
	ListTasks(ctx context.Context, req a2a.ListTasksRequest) (*a2a.ListTasksResponse, error)
	// CancelTask asks for a task's cancellation (A2A 1.0 §3.1.5).
	CancelTask(ctx context.Context, req a2a.CancelTaskRequest) (*a2a.Task, error)
	// SubscribeToTask streams a task's events (A2A 1.0 §3.1.6), from a
	// resume point when opts gives one.
	SubscribeToTask(ctx context.Context, req a2a.SubscribeToTaskRequest, opts SubscribeOptions) (iter.Seq2[StreamEvent, error], error)
	// CreateTaskPushNotificationConfig registers a webhook (A2A 1.0 §3.1.7).
	CreateTaskPushNotificationConfig(ctx context.Context, req a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error)
	// GetTaskPushNotificationConfig returns one (A2A 1.0 §3.1.8).
	GetTaskPushNotificationConfig(ctx context.Context, req a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error)
	// ListTaskPushNotificationConfigs returns a task's (A2A 1.0 §3.1.9).
	ListTaskPushNotificationConfigs(ctx context.Context, req a2a.ListTaskPushNotificationConfigsRequest) ([]a2a.TaskPushNotificationConfig, error)
	// DeleteTaskPushNotificationConfig removes one (A2A 1.0 §3.1.10).
	DeleteTaskPushNotificationConfig(ctx context.Context, req a2a.DeleteTaskPushNotificationConfigRequest) error
	// GetExtendedAgentCard returns the card for authenticated callers
	// (A2A 1.0 §3.1.11).
	GetExtendedAgentCard(ctx context.Context) (*a2a.AgentCard, error)
}

// SubscribeOptions are what a subscription asks beyond its request.
type SubscribeOptions struct {
	// From, when not nil, resumes the stream: every event after sequence
	// number *From is replayed (the SSE Last-Event-ID of the event-log
	// extension, a2a.ExtensionEventLog), then live events. nil starts
	// with the Task snapshot.
	From *int64
	// EndOnInterrupt gives A2A 0.3.0's tasks/resubscribe (§7.9): the
	// stream ends with an interrupted state (input-required,
	// auth-required) as with a terminal one, its status update final, and
	// a task already terminal is streamed (its snapshot and final status)
	// instead of refused. false is A2A 1.0's SubscribeToTask: the stream
	// follows an interrupted task on to a terminal state, and a
	// subscription without From to a terminal task is
	// UnsupportedOperationError (-32004).
	EndOnInterrupt bool
}

// StreamEvent is one event of a stream with its sequence number in the
// task's log (the SSE id). A snapshot Task carries the sequence of the last
// event folded into it.
type StreamEvent struct {
	Seq   int64
	Event a2a.Event
	// Hold tells a binding that it may hold this event back instead of
	// writing it at once: the stream's next event is already at hand, or
	// the stream ends right after this one, so writing them together (one
	// write, one TCP segment) delays neither. false means "write now",
	// which is always correct: a Handler that does not know leaves it
	// false, and a Go caller of a stream may ignore it.
	Hold bool
}
