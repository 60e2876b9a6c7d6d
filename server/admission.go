package server

import (
	"context"
	"errors"
	"strings"

	"github.com/a2abridge/a2abridge/internal/extension"

	"github.com/a2abridge/a2abridge/a2a"
	taskfold "github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	"github.com/a2abridge/a2abridge/store"
)

// The admission of a message (SendMessage and SendStreamingMessage, A2A
// 1.0 §3.1.1-§3.1.2), in named steps:
//
//  1. admit: the request's checks, before anything is stored or an agent
//     is asked: accepted output modes, required extensions, the parts'
//     media types, push notifications supported, the engine not draining,
//     the caller's identity, the webhook's headers and URL, the files by
//     value. A refused message leaves nothing behind.
//  2. offer (a new message to a MessageResponder only): the agent may
//     answer it directly; nothing is stored then.
//  3. createTask (no taskId) or continueTask (a taskId): the message is
//     stored with the task's first events, or appended to an interrupted
//     task, under the task's lock, and the agent's execution starts. A
//     messageId accepted before is not processed again: the same message
//     (a retry) gets the task it went to as it is now, a different one
//     reusing the id is -32602 (duplicate, retryDuplicate). A push config
//     of the request is stored once the message is accepted, from the
//     task's first event on.

// admission is a message on its way into a task: what the checks of admit
// found about its request, and what storing it needs. The request and the
// inline slot of accept are passed beside it, not kept in it: it holds no
// pointer to its caller's frame, so it stays there.
type admission struct {
	// msg is the message as it is to be stored: its task's ids filled in,
	// its files by value replaced by URLs (HandlerOptions.Attachments).
	msg a2a.Message
	// sent is the message as the client sent it, which a retry is
	// compared with.
	sent    a2a.Message
	owner   string // the task owner's key (AgentHandler.owner)
	msgKey  string // the messageId's key in the store's index
	pushCfg *a2a.PushNotificationConfig
	exts    []string // the extensions the request activated
	ec      *extension.Call
	// attach: msg has files by value to store; stored are those stored,
	// to be deleted if the message is not accepted after all.
	attach bool
	stored []string
}

// accept admits a message, then creates a task or continues one and
// starts the agent's execution (see the steps above).
//
// When inline is not nil, the agent is an InlineAgent and the store
// appends at once (no group commit to share with the agent's first
// events), an execution started for the message is not started but left
// in *inline for the caller to run.
//
// When reply is not nil and the agent is a MessageResponder, a message
// that names no task is first offered to its Respond: a message it
// answers with is left in *reply (and info is zero), nothing stored.
func (h *AgentHandler) accept(ctx context.Context, p *a2a.SendMessageRequest, inline *func(), reply **a2a.Message) (info store.TaskInfo, err error) {
	if h.e.Telemetry() != nil {
		defer func() {
			if err == nil {
				telemetry.CallFrom(ctx).SetTask(info.Task.ID)
			}
		}()
	}
	if ia, ok := h.agent.(InlineAgent); h.e.GroupCommitter() != nil || !ok || !ia.Inline() {
		inline = nil
	}
	// The admission stays in this frame (admit returns it by value): a
	// message costs no allocation for it.
	a, err := h.admit(ctx, p)
	if err != nil {
		return store.TaskInfo{}, err
	}
	if a.msg.TaskID != "" {
		return h.continueTask(ctx, p, &a, inline)
	}
	if r, ok := h.agent.(MessageResponder); ok && reply != nil {
		m, err := h.offer(ctx, r, p, &a)
		if err != nil || m != nil {
			*reply = m
			return store.TaskInfo{}, err
		}
	}
	return h.createTask(ctx, p, &a, inline)
}

// admit runs the request's checks (step 1) and returns the admission of
// its message.
func (h *AgentHandler) admit(ctx context.Context, p *a2a.SendMessageRequest) (admission, error) {
	a := admission{msg: p.Message, sent: p.Message}
	if p.Configuration != nil && !h.outputModesOK(p.Configuration.AcceptedOutputModes) {
		return admission{}, a2a.ErrContentTypeNotSupported.WithMessage(
			"Incompatible content types: the agent produces %s", strings.Join(h.card.DefaultOutputModes, ", "))
	}
	if err := h.checkExtensions(ctx); err != nil {
		return admission{}, err
	}
	if err := h.in.check(&a.msg); err != nil {
		return admission{}, err
	}
	a.ec = extension.From(ctx)
	a.exts = h.activated(a.ec)
	if p.Configuration != nil && p.Configuration.PushNotificationConfig != nil {
		if h.e.Push() == nil || h.opts.NoPush {
			return admission{}, a2a.ErrPushNotificationNotSupported
		}
		a.pushCfg = p.Configuration.PushNotificationConfig
	}
	if h.e.Draining() {
		return admission{}, errShuttingDown
	}
	owner, ok := h.owner(ctx)
	if !ok {
		return admission{}, a2a.ErrUnauthenticated
	}
	a.owner = owner
	if a.pushCfg != nil {
		// Before the task is created or continued: a refused webhook
		// leaves nothing behind. Checked once: setPushConfig stores it
		// without resolving its host again.
		if err := checkPushHeaders("/params/configuration/pushNotificationConfig", *a.pushCfg); err != nil {
			return admission{}, err
		}
		if err := h.checkPushURL(ctx, "/params/configuration/pushNotificationConfig/url", a.pushCfg.URL); err != nil {
			return admission{}, err
		}
	}
	a.msgKey = h.messageKey(ctx, a.msg.MessageID)
	a.attach = h.opts.Attachments != nil && hasFileBytes(&a.msg)
	if a.attach {
		if err := h.checkAttachments(&a.msg); err != nil {
			return admission{}, err
		}
	}
	return a, nil
}

// offer asks a MessageResponder for a direct answer to a new message
// (step 2): validated as for a task, not yet stored. The message keeps the
// contextId it is shown here on the task path.
func (h *AgentHandler) offer(ctx context.Context, r MessageResponder, p *a2a.SendMessageRequest, a *admission) (*a2a.Message, error) {
	if a.msg.ContextID == "" {
		a.msg.ContextID = a2a.NewID()
	}
	return h.respond(ctx, r, a.msg, p, a.exts, a.ec)
}

// request is what the agent's execution for a's message is given.
func (h *AgentHandler) request(ctx context.Context, p *a2a.SendMessageRequest, a *admission, info store.TaskInfo) *Request {
	return &Request{Message: a.msg, Task: taskfold.Detach(info.Task), Params: *p, Principal: principal(ctx),
		Extensions: a.exts, ext: a.ec, attachBase: h.attachmentBase(ctx), span: h.e.SpanOf(ctx)}
}

// createTask stores a new task holding a's message and starts its
// execution (step 3, no taskId). The store refuses the create of a
// messageId it has indexed (store.ErrDuplicateMessage) before the agent
// runs, so no read is needed first.
func (h *AgentHandler) createTask(ctx context.Context, p *a2a.SendMessageRequest, a *admission, inline *func()) (store.TaskInfo, error) {
	task := a2a.Task{ID: a2a.NewID(), ContextID: a.msg.ContextID}
	if task.ContextID == "" {
		task.ContextID = a2a.NewID()
	}
	a.msg.TaskID, a.msg.ContextID = task.ID, task.ContextID
	if a.attach {
		// A retry is answered before its files are stored again.
		if dupID, err := h.e.Store().MessageTask(ctx, h.name, a.msgKey); err != nil {
			return store.TaskInfo{}, err
		} else if dupID != "" {
			return h.duplicate(ctx, &a.sent, dupID)
		}
		var err error
		if a.stored, err = h.storeAttachments(ctx, a.owner, task.ID, &a.msg); err != nil {
			return store.TaskInfo{}, err
		}
		p.Message.Parts = a.msg.Parts
	}
	task.Status = a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: now()}
	task.History = []a2a.Message{a.msg}
	info, err := h.e.Create(ctx, h.name, a.owner, task, []string{a.msgKey}, func(info store.TaskInfo) {
		h.start(info, h.request(ctx, p, a, info), inline)
	})
	if err != nil && len(a.stored) > 0 && (errors.Is(err, store.ErrDuplicateMessage) || !h.taskStored(ctx, task.ID)) {
		// The task was not created: nothing refers to the files, and
		// retention (by task) would never delete them.
		h.dropAttachments(ctx, a.stored)
	}
	if errors.Is(err, store.ErrDuplicateMessage) {
		return h.retryDuplicate(ctx, &a.sent) // as sent: msg has the new task's ids
	}
	if err == nil && a.pushCfg != nil {
		// From the task's first event on: the log replays what the
		// execution may already have appended.
		if _, err := h.setPushConfig(context.WithoutCancel(ctx), task.ID, *a.pushCfg, 0); err != nil {
			h.e.Log().ErrorContext(ctx, "push config of message/send not stored", "task", task.ID, "err", err)
		}
	}
	return info, err
}

// continueTask appends a's message to its task, which must be
// interrupted (input-required or auth-required: A2A 1.0 §3.1.1
// multi-turn), and starts the execution for it (step 3, a taskId). A retry
// of a message already accepted is answered from the task.
func (h *AgentHandler) continueTask(ctx context.Context, p *a2a.SendMessageRequest, a *admission, inline *func()) (store.TaskInfo, error) {
	if dupID, err := h.e.Store().MessageTask(ctx, h.name, a.msgKey); err != nil {
		return store.TaskInfo{}, err
	} else if dupID != "" {
		return h.duplicate(ctx, &a.sent, dupID)
	}
	cur, err := h.load(ctx, a.msg.TaskID)
	if err != nil {
		return store.TaskInfo{}, err
	}
	if a.msg.ContextID != "" && a.msg.ContextID != cur.Task.ContextID {
		return store.TaskInfo{}, a2a.InvalidParams("/params/message/contextId",
			"contextId does not match the task's contextId")
	}
	a.msg.ContextID = cur.Task.ContextID
	if a.attach && cur.Task.Status.State.Interrupted() {
		// (A task that takes no message now is refused below, with no
		// file stored.) Stored before the task's lock is taken (a
		// durable write of up to MaxBytes per file); if the message is
		// then not accepted (a concurrent retry of it was, or the task
		// no longer takes a message), they are deleted.
		if a.stored, err = h.storeAttachments(ctx, a.owner, a.msg.TaskID, &a.msg); err != nil {
			return store.TaskInfo{}, err
		}
		p.Message.Parts = a.msg.Parts
	}
	if a.pushCfg != nil {
		// Refused before the message is accepted, not after (nothing of it
		// is then stored).
		if err := h.pushConfigRoom(ctx, a.msg.TaskID, a.pushCfg.ID, "/params/configuration/pushNotificationConfig"); err != nil {
			h.dropAttachments(ctx, a.stored)
			return store.TaskInfo{}, err
		}
	}
	l := h.e.Lock(a.msg.TaskID)
	l.Lock()
	// Under the task's lock: a retry of this very message that raced us
	// is answered as a duplicate, not as "task is working". It is
	// compared with the message as sent (msg's files are URLs now), and
	// the files stored for this copy are deleted: the accepted one has
	// its own.
	if dupID, err := h.e.Store().MessageTask(ctx, h.name, a.msgKey); err != nil || dupID != "" {
		l.Unlock()
		h.dropAttachments(ctx, a.stored)
		if err != nil {
			return store.TaskInfo{}, err
		}
		return h.duplicate(ctx, &a.sent, dupID)
	}
	info, _, err := h.e.UpdateLocked(ctx, a.msg.TaskID, []string{a.msgKey}, func(cur store.TaskInfo) ([]a2a.Event, error) {
		st := cur.Task.Status.State
		switch {
		case st.Terminal():
			return nil, a2a.ErrUnsupportedOperation.WithMessage(
				"Task %s is %s: a task in a terminal state cannot be restarted", cur.Task.ID, st)
		case !st.Interrupted():
			return nil, a2a.ErrUnsupportedOperation.WithMessage(
				"Task %s is %s: it accepts a new message only when input-required or auth-required", cur.Task.ID, st)
		}
		m := a.msg
		return []a2a.Event{&m, &a2a.TaskStatusUpdateEvent{TaskID: cur.Task.ID, ContextID: cur.Task.ContextID,
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: now()}}}, nil
	})
	if err == nil {
		h.start(info, h.request(ctx, p, a, info), inline)
	}
	l.Unlock()
	if err == nil && a.pushCfg != nil {
		if _, err := h.setPushConfig(context.WithoutCancel(ctx), a.msg.TaskID, *a.pushCfg, cur.Seq); err != nil {
			h.e.Log().ErrorContext(ctx, "push config of message/send not stored", "task", a.msg.TaskID, "err", err)
		}
	}
	if err != nil && len(a.stored) > 0 && (errors.Is(err, store.ErrDuplicateMessage) || !h.messageStored(ctx, a.msgKey, a.msg.TaskID)) {
		h.dropAttachments(ctx, a.stored)
	}
	if errors.Is(err, store.ErrDuplicateMessage) {
		return h.retryDuplicate(ctx, &a.sent)
	}
	return info, err
}

// errShuttingDown is returned for new messages once Engine.Shutdown or
// Engine.Close has begun.
var errShuttingDown = &a2a.Error{Code: a2a.CodeInternalError, Message: "The server is shutting down; try again later"}
