package server

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/engine"
	taskfold "github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/internal/outsize"
)

// RunOptions configure RunAgent. The zero value runs the agent with no
// earlier tasks in its context.
type RunOptions struct {
	// ContextHistory is what the agent's TaskUpdater.ContextHistory
	// returns: the earlier tasks of the conversation, oldest first (the
	// last maxTasks of them). An agent that builds a conversation from
	// its context (bridge/openai, bridge/remote) reads it from here.
	ContextHistory []a2a.Task
	// OnEvent, if set, is called with each event the agent emitted, once
	// it was accepted (folded into the task), in order, on the agent's
	// goroutine: it must not block for long.
	OnEvent func(a2a.Event)
	// MaxOutputBytes, if > 0, bounds the execution's output: the bytes
	// of the messages, status messages and artifact updates the agent
	// emits (their parts and metadata, about as many as their JSON
	// carries). The event that would pass it is refused with
	// ErrOutputLimit; the task is failed with a reason naming the limit,
	// the execution's context is cancelled, and an agent that implements
	// Canceler is cancelled as an abandoned execution is (see RunAgent).
	// RunAgent then returns an error that wraps ErrOutputLimit.
	MaxOutputBytes int64
}

// ErrOutputLimit is returned by a TaskUpdater of RunAgent, and then by
// RunAgent, when the agent's output passed RunOptions.MaxOutputBytes; the
// task has been failed.
var ErrOutputLimit = errors.New("a2abridge: the agent's output passed its limit; task failed")

// RunAgent runs one execution of agent outside any Engine, against a task
// kept in memory, and returns that task once the execution ended: its
// status, the history (req.Task.History, then the agent's messages and
// status messages) and its artifacts. It is how an agent is used as a
// part of another (the conversation bridge runs each participant's turn
// this way): the agent sees req as it would see a request of a client,
// and its TaskUpdater enforces the same state machine as an Engine's
// (A2A 0.3.0 §6.3), refuses events for other tasks, and refuses events
// after a terminal state with ErrTaskClosed; nothing is stored.
//
// req.Task.ID and req.Task.ContextID are filled in from req.Message (or
// new ids) when empty, req.Message gets the task's ids, and a task
// without a status starts submitted; req.Message should be the last
// entry of req.Task.History. Like the Engine, RunAgent completes a task
// the agent left submitted or working when Execute returns nil, and
// fails it ("The agent failed while processing the task.") when Execute
// returns an error or panics; the error (the panic as an error) is then
// returned with the task. ctx is the execution's context: when it ends
// first, the task is failed and ctx's error returned. An event the
// state machine refuses fails the task (ErrInvalidEvent to the agent).
//
// When ctx ended before the agent brought the task to a terminal state
// (a turn timed out, the caller was cancelled), the execution is
// abandoned: if agent implements Canceler, its Cancel is called with the
// task as returned (failed, or still interrupted), as tasks/cancel would,
// so that what it started elsewhere is released (bridge/remote cancels
// its remote task). Cancel gets a context that outlives ctx, bounded by
// 10 s; RunAgent returns after it, and its error (a panic as an error) is
// joined to the one returned (errors.Is still finds ctx's).
func RunAgent(ctx context.Context, agent Agent, req *Request, opts RunOptions) (a2a.Task, error) {
	r := *req
	task := taskfold.Detach(r.Task)
	if task.ID == "" {
		task.ID = r.Message.TaskID
	}
	if task.ID == "" {
		task.ID = a2a.NewID()
	}
	if task.ContextID == "" {
		task.ContextID = r.Message.ContextID
	}
	if task.ContextID == "" {
		task.ContextID = a2a.NewID()
	}
	if task.Status.State == a2a.TaskStateUnspecified {
		task.Status = a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: now()}
	}
	r.Message.TaskID, r.Message.ContextID = task.ID, task.ContextID
	r.Task = task
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	l := &localRun{task: taskfold.Detach(task), history: opts.ContextHistory, onEvent: opts.OnEvent,
		maxOutput: opts.MaxOutputBytes, stop: cancel}
	t := &TaskUpdater{taskID: task.ID, ctxID: task.ContextID, local: l}
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("server: agent panicked: %v", p)
			}
		}()
		return agent.Execute(ectx, &r, t)
	}()
	l.mu.Lock()
	overflow := l.overflow
	l.mu.Unlock()
	switch {
	case overflow:
		err = fmt.Errorf("%w (%d bytes)", ErrOutputLimit, opts.MaxOutputBytes)
	case err == nil && ctx.Err() != nil:
		err = ctx.Err()
	}
	l.mu.Lock()
	l.closed = true
	abandoned := overflow || ctx.Err() != nil && !l.task.Status.State.Terminal()
	if st := l.task.Status.State; !st.Final() {
		state, text := a2a.TaskStateCompleted, ""
		if err != nil {
			state, text = a2a.TaskStateFailed, "The agent failed while processing the task."
		}
		if errors.Is(err, ErrInvalidEvent) {
			err = nil // the task was failed with its reason already
		}
		ev := engine.StatusEvent(l.task, state, text)
		if next, ferr := taskfold.Apply(l.task, ev); ferr == nil {
			l.task = next
		}
	}
	out := taskfold.Detach(l.task)
	l.mu.Unlock()
	if c, ok := agent.(Canceler); ok && abandoned {
		// The caller gave up on the task before it ended: what the agent
		// started elsewhere (a remote task) is released, as tasks/cancel
		// does.
		if cerr := runCanceler(ctx, c, taskfold.Detach(out)); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	return out, err
}

// runCanceler calls c.Cancel for task with a context that outlives ctx
// (its values kept), bounded by cancelHookTimeout; a panic is returned as
// an error.
func runCanceler(ctx context.Context, c Canceler, task a2a.Task) (err error) {
	cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelHookTimeout)
	defer stop()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("server: agent cancel hook panicked: %v", p)
		}
	}()
	if err := c.Cancel(cctx, task); err != nil {
		return fmt.Errorf("server: agent cancel hook: %w", err)
	}
	return nil
}

// localRun is RunAgent's task.
type localRun struct {
	mu      sync.Mutex
	task    a2a.Task
	history []a2a.Task
	onEvent func(a2a.Event)
	closed  bool // Execute returned

	maxOutput int64  // RunOptions.MaxOutputBytes
	output    int64  // bytes of output emitted so far
	overflow  bool   // an event passed maxOutput: the task was failed
	stop      func() // cancels the execution's context
}

// emit folds an agent's event into the local task, as the engine appends
// it (engine.Engine.Emit).
func (l *localRun) emit(t *TaskUpdater, ev a2a.Event) error {
	out, bad := t.prepare(ev)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.task.Status.State.Terminal() {
		return ErrTaskClosed
	}
	var next a2a.Task
	var err error
	if bad == "" {
		next, err = taskfold.Apply(l.task, out)
		if err != nil {
			bad = err.Error()
		}
	}
	if bad != "" {
		ev := engine.StatusEvent(l.task, a2a.TaskStateFailed, "The agent produced an invalid event: "+bad)
		if n, ferr := taskfold.Apply(l.task, ev); ferr == nil {
			l.task = n
		}
		return ErrInvalidEvent
	}
	if l.maxOutput > 0 {
		if l.output += outsize.Event(out); l.output > l.maxOutput {
			ev := engine.StatusEvent(l.task, a2a.TaskStateFailed,
				fmt.Sprintf("The agent's output passed its limit of %d bytes; it was stopped.", l.maxOutput))
			if n, ferr := taskfold.Apply(l.task, ev); ferr == nil {
				l.task = n
			}
			l.overflow = true
			l.stop()
			return ErrOutputLimit
		}
	}
	l.task = next
	if l.onEvent != nil {
		l.onEvent(out)
	}
	return nil
}

// prepare checks an agent's event and returns the copy that is appended
// (its task ids filled in, a status-update's timestamp and final flag
// set, messages normalized), or the reason it is invalid. TaskUpdater.Emit
// (before engine.Engine.Emit) and RunAgent share it.
func (t *TaskUpdater) prepare(ev a2a.Event) (a2a.Event, string) {
	var out a2a.Event
	var bad string
	switch v := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		c := *v
		bad = t.fill(&c.TaskID, &c.ContextID)
		if c.Status.Timestamp.IsZero() {
			c.Status.Timestamp = now()
		}
		if c.Status.State == a2a.TaskStateUnspecified && bad == "" {
			bad = "status update without a state"
		}
		c.Final = c.Status.State.Final()
		if c.Status.Message != nil {
			m := *c.Status.Message
			t.normalizeMessage(&m)
			c.Status.Message = &m
		}
		out = &c
	case *a2a.TaskArtifactUpdateEvent:
		c := *v
		bad = t.fill(&c.TaskID, &c.ContextID)
		if c.Artifact.ArtifactID == "" {
			bad = "artifact without artifactId"
		}
		if c.Artifact.Parts == nil {
			c.Artifact.Parts = []a2a.Part{}
		}
		out = &c
	case *a2a.Message:
		c := *v
		bad = t.fill(&c.TaskID, &c.ContextID)
		t.normalizeMessage(&c)
		out = &c
	default:
		bad = "unsupported event type"
	}
	if bad == "" {
		if err := a2a.ValidateValues(out); err != nil {
			bad = "a value that cannot be written as JSON: " + err.Error()
		}
	}
	return out, bad
}
