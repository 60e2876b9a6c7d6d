package server

import (
	"context"
	"fmt"
	"iter"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
)

// Interceptor wraps a binding.Handler in one of its own, which may look at or
// refuse each request before calling next, and see or change its result
// (the pattern of net/http middleware). It is called once, when the
// AgentHandler is made.
type Interceptor func(next binding.Handler) binding.Handler

// engineHandler is an AgentHandler's own implementation of binding.Handler, the
// innermost of its interceptors: the same struct, whose methods answer
// from the engine.
type engineHandler AgentHandler

// chain returns base wrapped in interceptors, the first outermost. It
// panics on an Interceptor that returns nil.
func chain(base binding.Handler, interceptors []Interceptor) binding.Handler {
	h := base
	for i := len(interceptors) - 1; i >= 0; i-- {
		if h = interceptors[i](h); h == nil {
			panic(fmt.Sprintf("server: HandlerOptions.Interceptors[%d] returned a nil Handler", i))
		}
	}
	return h
}

var _ binding.Handler = (*AgentHandler)(nil)

// SendMessage implements SendMessage (A2A 1.0 §3.1.1) and message/send
// (A2A 0.3.0 §7.1): it starts a task or continues one and returns it as a
// *a2a.Task, or, for a MessageResponder that answers a new message
// directly, that *a2a.Message (nothing stored; see MessageResponder). When
// blocking (the default) it returns once the task is terminal or
// interrupted (or ctx ends: then the error is ctx's; for an InlineAgent,
// once Execute has returned), otherwise right after the first durable
// state. The returned Task honours configuration.historyLength. A
// configuration.pushNotificationConfig is checked (PushOptions.CheckURL,
// A2A 1.0 §13.2) before anything is stored: a refused webhook is -32602
// naming /params/configuration/pushNotificationConfig/url, and no task is
// created or continued. So are the message's parts (-32005) and its
// activated extensions (-32008): see NewHandler.
func (h *AgentHandler) SendMessage(ctx context.Context, p a2a.SendMessageRequest) (a2a.Event, error) {
	return h.ops.SendMessage(ctx, p)
}

// SendMessageForTask is SendMessage for a caller that wants a task: a
// MessageResponder is not asked, so the message always starts or
// continues a task, which is returned. It goes through the interceptors
// as SendMessage, with ctx marked so that the agent's own handler makes a
// task: an interceptor must pass the ctx it is given on to the next
// binding.Handler, and one that answers with a message instead is an error here.
func (h *AgentHandler) SendMessageForTask(ctx context.Context, p a2a.SendMessageRequest) (*a2a.Task, error) {
	res, err := h.ops.SendMessage(context.WithValue(ctx, taskOnlyKey{}, true), p)
	if err != nil {
		return nil, err
	}
	t, ok := res.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("agent %q: SendMessage answered %T where a task was asked for", h.name, res)
	}
	return t, nil
}

// taskOnlyKey marks the context of SendMessageForTask's call.
type taskOnlyKey struct{}

// SendStreamingMessage implements SendStreamingMessage (A2A 1.0 §3.1.2)
// and message/stream (A2A 0.3.0 §7.2): after
// the message is accepted it returns the task's events, starting with the
// Task snapshot and ending with a status-update whose final is true. A
// request error is returned before any event. Dropping the stream does not
// cancel the task. For a MessageResponder that answers the message
// directly, the stream is that one *a2a.Message (Seq 0), and ends (A2A
// 1.0 §3.1.2, "Message-only stream").
func (h *AgentHandler) SendStreamingMessage(ctx context.Context, p a2a.SendMessageRequest) (iter.Seq2[binding.StreamEvent, error], error) {
	return h.stream(h.ops.SendStreamingMessage(ctx, p))
}

// stream refuses a stream that an interceptor left nil without an error.
func (h *AgentHandler) stream(events iter.Seq2[binding.StreamEvent, error], err error) (iter.Seq2[binding.StreamEvent, error], error) {
	if err == nil && events == nil {
		return nil, fmt.Errorf("agent %q: an interceptor returned neither a stream nor an error", h.name)
	}
	return events, err
}

// GetTask implements GetTask (A2A 1.0 §3.1.3) and tasks/get (A2A 0.3.0
// §7.3). Unknown id: -32001.
func (h *AgentHandler) GetTask(ctx context.Context, p a2a.GetTaskRequest) (*a2a.Task, error) {
	return h.ops.GetTask(ctx, p)
}

// ListTasks implements ListTasks (A2A 1.0 §3.1.4): this agent's tasks
// that the caller owns (and of its tenant), filtered by contextId, state
// and status timestamp, newest status timestamp first, one page at a
// time: PageSize nil means 50 and more than 100 is -32602; PageToken is
// the NextPageToken of the previous page ("" on the last page), and a
// token that is not one is -32602. HistoryLength applies to each task as
// for GetTask; artifacts are left out unless IncludeArtifacts.
func (h *AgentHandler) ListTasks(ctx context.Context, p a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return h.ops.ListTasks(ctx, p)
}

// CancelTask implements CancelTask (A2A 1.0 §3.1.5) and tasks/cancel (A2A
// 0.3.0 §7.4): the execution's
// context is cancelled, the agent's Canceler hook runs, and the task ends
// canceled. Unknown id: -32001; a terminal task: -32002.
func (h *AgentHandler) CancelTask(ctx context.Context, p a2a.CancelTaskRequest) (*a2a.Task, error) {
	return h.ops.CancelTask(ctx, p)
}

// SubscribeToTask implements SubscribeToTask (A2A 1.0 §3.1.6) and, with
// opts.EndOnInterrupt, tasks/resubscribe (A2A 0.3.0 §7.9). With opts.From
// nil the stream starts with the Task snapshot, then live events; with
// From set (the SSE Last-Event-ID) it replays every event after sequence
// *From, then live events. It ends with a final status update: on a
// terminal state, or with EndOnInterrupt on an interrupted one too (at
// once for a task already there). Without EndOnInterrupt, a subscription
// without From to a terminal task is -32004 (A2A 1.0 §3.1.6). A From
// beyond the task's last event is -32602; an unknown id -32001.
func (h *AgentHandler) SubscribeToTask(ctx context.Context, p a2a.SubscribeToTaskRequest, opts binding.SubscribeOptions) (iter.Seq2[binding.StreamEvent, error], error) {
	return h.stream(h.ops.SubscribeToTask(ctx, p, opts))
}

// CreateTaskPushNotificationConfig implements
// CreateTaskPushNotificationConfig (A2A 1.0 §3.1.7) and
// tasks/pushNotificationConfig/set (A2A 0.3.0 §7.5): it registers (or, with the same id, replaces) a
// webhook for the task; deliveries start with the task's next event. A
// config without id gets one. -32003 when push notifications are disabled
// (whatever the task: A2A 1.0 §3.3.4, checked first), -32001 for an
// unknown task, -32602 naming
// /params/pushNotificationConfig/url for a webhook URL that
// PushOptions.CheckURL refuses (e.g. a host that resolves to a loopback,
// private or metadata address, or does not resolve), in which case
// nothing is stored.
func (h *AgentHandler) CreateTaskPushNotificationConfig(ctx context.Context, c a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	return h.ops.CreateTaskPushNotificationConfig(ctx, c)
}

// GetTaskPushNotificationConfig implements GetTaskPushNotificationConfig
// (A2A 1.0 §3.1.8) and tasks/pushNotificationConfig/get (A2A 0.3.0 §7.6):
// the config with the given id, or the task's first one
// when no id is given. -32602 when there is no such config.
func (h *AgentHandler) GetTaskPushNotificationConfig(ctx context.Context, p a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	return h.ops.GetTaskPushNotificationConfig(ctx, p)
}

// ListTaskPushNotificationConfigs implements
// ListTaskPushNotificationConfigs (A2A 1.0 §3.1.9) and
// tasks/pushNotificationConfig/list (A2A 0.3.0 §7.7): every config of the
// task, in registration order (one page: a task has at most
// PushOptions.MaxConfigsPerTask; PageSize and PageToken are not read).
func (h *AgentHandler) ListTaskPushNotificationConfigs(ctx context.Context, p a2a.ListTaskPushNotificationConfigsRequest) ([]a2a.TaskPushNotificationConfig, error) {
	return h.ops.ListTaskPushNotificationConfigs(ctx, p)
}

// DeleteTaskPushNotificationConfig implements
// DeleteTaskPushNotificationConfig (A2A 1.0 §3.1.10) and
// tasks/pushNotificationConfig/delete (A2A 0.3.0 §7.8). Deletion is
// idempotent (A2A 1.0 §3.1.10): a config id the task does not have, or no
// longer has, succeeds too (0.3.0 names no error for it either). -32003
// when push notifications are disabled (whatever the task, checked first:
// A2A 1.0 §3.3.4), -32001 for an unknown task.
func (h *AgentHandler) DeleteTaskPushNotificationConfig(ctx context.Context, p a2a.DeleteTaskPushNotificationConfigRequest) error {
	return h.ops.DeleteTaskPushNotificationConfig(ctx, p)
}

// GetExtendedAgentCard implements GetExtendedAgentCard (A2A 1.0 §3.1.11)
// and agent/getAuthenticatedExtendedCard (A2A 0.3.0 §7.10): the extended
// card for an authenticated caller. Errors, in this order (A2A 1.0 §3.3.4):
// UnsupportedOperationError (-32004) when the public card does not declare
// capabilities.extendedAgentCard (the 0.3 bindings answer -32007 there:
// 0.3 has no such rule); ExtendedAgentCardNotConfiguredError (-32007) when
// it declares it but none is configured (HandlerOptions.ExtendedCard with
// Auth); a2a.ErrUnauthenticated when ctx carries no principal. The
// transports authenticate before any method runs: on an agent with Auth,
// a request without valid credentials is answered 401 before these
// errors, so an unauthenticated caller learns no more than the public
// card says.
func (h *AgentHandler) GetExtendedAgentCard(ctx context.Context) (*a2a.AgentCard, error) {
	return h.ops.GetExtendedAgentCard(ctx)
}
