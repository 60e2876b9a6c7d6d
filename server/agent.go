package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/a2abridge/a2abridge/internal/engine"
	"github.com/a2abridge/a2abridge/internal/extension"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/store"
	"go.opentelemetry.io/otel/trace"
)

// Agent is what a Go author implements to serve an agent over A2A.
//
// Execute runs once per accepted message: for the message that creates a
// task, and again for each message that continues a task waiting in
// input-required or auth-required. It reports progress through t: status
// updates, artifacts (whole or in chunks) and agent messages. Clients see
// these events in the order the agent sent them, each one once it is
// safely recorded; a call of t may return before clients see its event,
// so an agent never waits on its clients (a slow stream does not slow it
// down). t refuses events that do not fit the task (ErrTaskClosed once
// the task ended).
//
// A message is executed once: a retry of a messageId already accepted is
// answered from its task. If the server dies at the moment a task is
// created, before the client got any answer, the task may be lost with
// it, and the client's retry then runs the agent again.
//
// When Execute returns nil, a task still submitted or working is completed;
// a task the agent left in input-required or auth-required waits for the
// client's next message. When Execute returns an error (or panics) the task
// is failed; the error is logged, not shown to clients — call t.Fail with a
// reason for that. ctx is cancelled when a client calls tasks/cancel (the
// task is then already canceled; further events are refused with
// ErrTaskClosed), when the client continues the task while this execution
// is still running after leaving it input-required (a new execution takes
// over; this one's events are refused), when the task is canceled or
// continued through another replica of the server, and when the server
// shuts down.
type Agent interface {
	Execute(ctx context.Context, req *Request, t *TaskUpdater) error
}

// AgentFunc adapts a function to the Agent interface.
type AgentFunc func(ctx context.Context, req *Request, t *TaskUpdater) error

// Execute implements Agent.
func (f AgentFunc) Execute(ctx context.Context, req *Request, t *TaskUpdater) error {
	return f(ctx, req, t)
}

// MessageResponder is optionally implemented by an Agent that may answer
// a message directly with a Message instead of a task (A2A 1.0 §3.1.1:
// "a direct response message for simple interactions that don't require
// task tracking"; A2A 0.3.0 §7.1): a stateless request/response agent.
//
// Respond is consulted for every SendMessage and SendStreamingMessage
// (0.3: message/send, message/stream) whose message names no taskId, over
// every binding, after the request was validated as for a task
// (authentication, acceptedOutputModes, a pushNotificationConfig's
// webhook, attachment limits) and before any task is created. req.Message
// has its ContextID filled in (the client's or a new one) and no TaskID;
// req.Task is the zero Task; files sent by value stay in the message
// (HandlerOptions.Attachments stores files of tasks only). ctx is the
// request's: Respond runs while the client waits, blocking or not.
//
// A non-nil message is the answer: SendMessage's result is {"message": …}
// (0.3: a result of kind "message"), and SendStreamingMessage's stream is
// that one Message, then closes (A2A 1.0 §3.1.2, "Message-only stream";
// its SSE event has no id). Nothing is stored: there is no task to get,
// subscribe to, cancel or push notifications about (a pushNotificationConfig
// in the request is validated, then ignored), and no idempotency by
// messageId: a retried message runs Respond again. An empty messageId,
// role (agent) or contextId (req.Message.ContextID) is filled in; the
// message must have at least one part, no taskId, role agent and the
// request's contextId. Respond returning nil and no error falls back to
// the task path: Execute runs for the message as for any other (with the
// same contextId). An *a2a.Error returned is answered as is (say
// a2a.InvalidParams for a request the agent refuses), but for
// a2a.ErrRateLimited, which says the request was refused unread (clients
// repeat it); it, any other error, a panic, or an invalid message is an
// internal error (-32603), logged and not shown to the client.
//
// Messages that continue a task (taskId set) always go to Execute, and so
// do AgentHandler.SendMessageForTask and RunAgent.
type MessageResponder interface {
	Respond(ctx context.Context, req *Request) (*a2a.Message, error)
}

// MessageFunc adapts a function to an Agent that answers each message
// with a Message of its own (a MessageResponder), storing nothing; see
// MessageResponder for what clients get. Returning a nil message and no
// error is an error of the agent's (-32603).
//
// Where a task is needed all the same (AgentHandler.SendMessageForTask, RunAgent and
// so the conversation bridge, a message that names a taskId), Execute
// calls the function and completes the task with its message as the
// status message (also added to the task's history); an error fails the
// task.
type MessageFunc func(ctx context.Context, req *Request) (*a2a.Message, error)

// Respond implements MessageResponder.
func (f MessageFunc) Respond(ctx context.Context, req *Request) (*a2a.Message, error) {
	m, err := f(ctx, req)
	if err == nil && m == nil {
		err = errNoReply
	}
	return m, err
}

// Execute implements Agent: the function's message completes the task.
func (f MessageFunc) Execute(ctx context.Context, req *Request, t *TaskUpdater) error {
	m, err := f.Respond(ctx, req)
	if err != nil {
		return err
	}
	c := *m
	c.TaskID, c.ContextID = "", "" // the task's, filled in by SetStatus
	return t.SetStatus(ctx, a2a.TaskStateCompleted, &c)
}

var errNoReply = errors.New("server: MessageFunc returned neither a message nor an error")

// Canceler is optionally implemented by an Agent that must release
// resources when a task is canceled (A2A 0.3.0 §7.4). Cancel is called
// after the task is canceled and the execution's context cancelled, and
// before tasks/cancel answers; it gets at most 10 s. Its error (or panic)
// is logged; the task is canceled regardless.
type Canceler interface {
	Cancel(ctx context.Context, task a2a.Task) error
}

// CancelMessenger is optionally implemented by an Agent that explains a
// cancellation in the task itself: when a client cancels one of its tasks
// (tasks/cancel, A2A 0.3.0 §7.4; CancelTask, A2A 1.0 §3.1.5), the
// canceled status carries the message CancelMessage returns (nil: none),
// and it is appended to the task's history as the status message is. It
// is called under the task's lock with the task as it was before the
// cancellation, so it must be quick and must not call back into the
// engine; a panic, a message for another task or one that cannot be
// written as JSON is ignored (the status then carries none). Empty ids,
// the message id and the role (agent) are filled in.
type CancelMessenger interface {
	CancelMessage(task a2a.Task) *a2a.Message
}

// cancelMessage calls m's CancelMessage for task, safely.
func cancelMessage(m CancelMessenger, task a2a.Task) (out *a2a.Message) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	msg := m.CancelMessage(task)
	if msg == nil {
		return nil
	}
	c := *msg
	t := &TaskUpdater{taskID: task.ID, ctxID: task.ContextID}
	if t.fill(&c.TaskID, &c.ContextID) != "" {
		return nil
	}
	t.normalizeMessage(&c)
	if a2a.ValidateValues(&c) != nil {
		return nil
	}
	return &c
}

// InlineAgent is optionally implemented by a request/response Agent:
// one whose Execute returns as soon as the task is final (terminal,
// input-required or auth-required) and does nothing slow after that, nor
// waits for anything but its own work. For such an agent (when Inline
// reports true), a blocking message/send (A2A 0.3.0 §7.1) runs Execute on
// the request's own goroutine instead of handing it to another and waiting:
// that saves two goroutine hand-overs per call. The answer then comes when
// Execute returns, so an agent that goes on after the final state, or that
// waits in input-required for the next message, must not claim this.
// Inline is a hint: the engine may still run Execute on a goroutine of
// its own (it does whenever that is faster on the server's store).
type InlineAgent interface {
	Agent
	Inline() bool
}

// Request is what an execution is given.
type Request struct {
	// Message is the client message being handled, with TaskID and
	// ContextID filled in (for MessageResponder.Respond: ContextID only).
	Message a2a.Message
	// Task is the task as it was when the execution started, including
	// Message as the last history entry (zero for
	// MessageResponder.Respond: there is no task).
	Task a2a.Task
	// Params are the message/send or message/stream params as received.
	Params a2a.SendMessageRequest
	// Principal is the authenticated caller that sent Message (nil when
	// the agent has no authentication).
	Principal *auth.Principal
	// Extensions are the extensions the caller activated for this
	// message (its A2A-Extensions header, A2A 1.0 §3.2.6; X-A2A-Extensions
	// from 0.3 clients; or WithExtensions) that the card declares, in the
	// order sent; nil when none. An activated extension the card does not
	// declare is ignored (A2A 1.0 §4.6.1); RequestedExtensions(ctx) of a
	// Method lists every one. A message that leaves out an extension the
	// card declares required: true never reaches the agent (the client gets
	// ExtensionSupportRequiredError, -32008).
	Extensions []string

	// ext is the request's record of applied extensions (nil when it
	// activated none).
	ext *extension.Call
	// attachBase is the base URL of the attachment URLs of this
	// execution's files (TaskUpdater.StoreFiles).
	attachBase string
	// span is the span context of the request that sent Message: the
	// execution's span is its child.
	span trace.SpanContext
	// h, owner and created are the handler, the owner key and the
	// creation time of the task of an execution the engine runs
	// (agentRun).
	h       *AgentHandler
	owner   string
	created time.Time
}

// ApplyExtension records that the agent applied the extension uri to
// this message, so that the response names it in its A2A-Extensions
// header (X-A2A-Extensions for an A2A 0.3 request; A2A 1.0 §4.6), and
// reports whether it was recorded: only an extension of r.Extensions can
// be. The header is written once, with the response's first byte, and
// lists what was applied by then: for a blocking SendMessage (message/send)
// that is after the execution ended or was interrupted, so everything
// Execute applied; for a non-blocking one and for a stream
// (SendStreamingMessage), whose header goes out right after the message
// is accepted, usually nothing of Execute's. An agent that applies an
// extension to streamed or non-blocking answers says so in the events
// themselves as well (Message.Extensions, Artifact.Extensions). The
// server applies a2a.ExtensionEventLog itself to every request that
// activates it. Safe for concurrent use; nil-safe.
func (r *Request) ApplyExtension(uri string) bool {
	if r == nil || !slices.Contains(r.Extensions, uri) {
		return false
	}
	return r.ext.Apply(uri)
}

// ErrTaskClosed ("a2abridge: task is in a terminal state") is returned by
// TaskUpdater methods once the task has reached a terminal state (for
// example after tasks/cancel).
var ErrTaskClosed = engine.ErrTaskClosed

// ErrInvalidEvent ("a2abridge: invalid event from agent; task failed") is
// returned by TaskUpdater methods when the agent emitted an event that
// breaks the task state machine or belongs to another task; the task has
// then been failed.
var ErrInvalidEvent = engine.ErrInvalidEvent

// TaskUpdater appends an execution's events to its task's log. It is safe
// for concurrent use.
type TaskUpdater struct {
	e     *engine.Engine
	agent string
	owner string // the owner key of the task (tenant and principal)
	// created is when the task was created, for ContextHistory.
	created time.Time
	taskID  string
	ctxID   string
	x       *engine.Execution // the engine's handle of the execution
	// local, when set, is the in-memory task of RunAgent: events go
	// there instead of to an engine.
	local *localRun
	// files, when set, stores the files StoreFiles is given (the agent
	// has HandlerOptions.Attachments).
	files *fileSink
}

// TaskID returns the id of the task being executed.
func (t *TaskUpdater) TaskID() string { return t.taskID }

// ContextID returns the task's contextId.
func (t *TaskUpdater) ContextID() string { return t.ctxID }

// MaxContextHistory is the most earlier tasks ContextHistory returns.
const MaxContextHistory = 100

// ContextHistory returns up to maxTasks (at most MaxContextHistory) of the
// tasks that came before this one in its contextId (A2A 1.0 §3.4.1,
// "multi-turn conversations": a client continues a conversation by
// reusing the contextId), oldest first, this task excluded: only tasks of
// the same agent and of the same owner (tenant and authenticated
// principal) as this one, so one caller never sees another's turns. Each
// task comes with its full History and Artifacts. An agent that answers
// each message with a new task (such as a chat model) builds the
// conversation so far from them. maxTasks <= 0 returns nil. Errors are
// the store's.
func (t *TaskUpdater) ContextHistory(ctx context.Context, maxTasks int) ([]a2a.Task, error) {
	if maxTasks <= 0 || t.ctxID == "" {
		return nil, nil
	}
	maxTasks = min(maxTasks, MaxContextHistory)
	if t.local != nil {
		h := t.local.history
		return slices.Clone(h[max(0, len(h)-maxTasks):]), nil
	}
	// Most recently updated first; one more than asked, as this task is
	// (normally) among them.
	page, err := t.e.Store().ListTasks(ctx, store.TaskQuery{Agent: t.agent, Owner: t.owner, ContextID: t.ctxID, Limit: maxTasks + 1})
	if err != nil {
		return nil, err
	}
	out := make([]a2a.Task, 0, len(page.Tasks))
	for _, info := range page.Tasks {
		// Neither this task nor one created after it (a concurrent turn
		// that was updated more recently).
		if info.Task.ID == t.taskID || (!t.created.IsZero() && info.Created.After(t.created)) {
			continue
		}
		if len(out) == maxTasks {
			break
		}
		out = append(out, info.Task)
	}
	slices.Reverse(out)
	return out, nil
}

// Emit appends one event: *a2a.TaskStatusUpdateEvent,
// *a2a.TaskArtifactUpdateEvent or *a2a.Message (an agent message added to
// the history). Empty TaskID/ContextID, message ids and roles (agent) and
// zero status timestamps are filled in; Final is set by the engine. An event for another task, or a state
// transition the state machine forbids, fails the task and returns
// ErrInvalidEvent. After a terminal state it returns ErrTaskClosed.
func (t *TaskUpdater) Emit(ctx context.Context, ev a2a.Event) error {
	if t.local != nil {
		return t.local.emit(t, ev)
	}
	out, bad := t.prepare(ev)
	return t.e.Emit(ctx, t.x, out, bad)
}

// SetStatus appends a status update; msg, if not nil, is an agent message
// explaining it (A2A 0.3.0 §7.2.3).
func (t *TaskUpdater) SetStatus(ctx context.Context, state a2a.TaskState, msg *a2a.Message) error {
	return t.Emit(ctx, &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: state, Message: msg}})
}

// AddArtifact appends an artifact update. With appendParts the parts extend
// the artifact of the same ArtifactID; lastChunk marks its final chunk
// (A2A 0.3.0 §7.2.4).
func (t *TaskUpdater) AddArtifact(ctx context.Context, a a2a.Artifact, appendParts, lastChunk bool) error {
	return t.Emit(ctx, &a2a.TaskArtifactUpdateEvent{Artifact: a, Append: appendParts, LastChunk: lastChunk})
}

// Message returns an agent message for this task with the given parts.
func (t *TaskUpdater) Message(parts ...a2a.Part) *a2a.Message {
	m := a2a.NewMessage(a2a.RoleAgent, parts...)
	m.TaskID, m.ContextID = t.taskID, t.ctxID
	return &m
}

// TextMessage returns an agent message holding one text part, or nil for "".
func (t *TaskUpdater) TextMessage(text string) *a2a.Message {
	if text == "" {
		return nil
	}
	return t.Message(a2a.NewTextPart(text))
}

// Working sets state working with an optional progress text.
func (t *TaskUpdater) Working(ctx context.Context, text string) error {
	return t.SetStatus(ctx, a2a.TaskStateWorking, t.TextMessage(text))
}

// Complete sets state completed with an optional closing text.
func (t *TaskUpdater) Complete(ctx context.Context, text string) error {
	return t.SetStatus(ctx, a2a.TaskStateCompleted, t.TextMessage(text))
}

// Fail sets state failed; reason is shown to clients.
func (t *TaskUpdater) Fail(ctx context.Context, reason string) error {
	return t.SetStatus(ctx, a2a.TaskStateFailed, t.TextMessage(reason))
}

// RequireInput sets state input-required with a question for the client.
func (t *TaskUpdater) RequireInput(ctx context.Context, question string) error {
	return t.SetStatus(ctx, a2a.TaskStateInputRequired, t.TextMessage(question))
}

// cancelHookTimeout bounds an agent's Canceler, as the engine bounds it.
const cancelHookTimeout = engine.CancelHookTimeout

// now is the engine clock (engine.Now).
func now() time.Time { return engine.Now() }

// normalizeMessage fills what an agent may leave out of its messages.
func (t *TaskUpdater) normalizeMessage(m *a2a.Message) {
	if m.MessageID == "" {
		m.MessageID = a2a.NewID()
	}
	if m.Role == "" {
		m.Role = a2a.RoleAgent
	}
	if m.Parts == nil {
		m.Parts = []a2a.Part{}
	}
	if m.TaskID == "" {
		m.TaskID = t.taskID
	}
	if m.ContextID == "" {
		m.ContextID = t.ctxID
	}
}

// fill sets empty ids to the task's and reports a mismatch.
func (t *TaskUpdater) fill(taskID, ctxID *string) string {
	if *taskID == "" {
		*taskID = t.taskID
	} else if *taskID != t.taskID {
		return fmt.Sprintf("event for task %q emitted by the execution of task %q", *taskID, t.taskID)
	}
	if *ctxID == "" {
		*ctxID = t.ctxID
	} else if *ctxID != t.ctxID {
		return fmt.Sprintf("event with contextId %q for a task in context %q", *ctxID, t.ctxID)
	}
	return ""
}
