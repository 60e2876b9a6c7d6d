package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
	"go.opentelemetry.io/otel/trace"
)

// The executor (see the package doc): it starts an agent's execution for
// an accepted message (on a worker goroutine, or on the caller's when it
// asks: StartLocked's inline), hands the agent's events to the task-log
// writer (Emit), settles the task when the execution returns (finish), and stops an execution
// when its task is ended by someone else: a cancel here, StopAgent, or
// another process's append (checkForeign).

// Hooks are what the engine calls of an agent besides its executions:
// its name, and what a cancellation (by a client, by StopAgent, by
// another process) asks of it.
type Hooks struct {
	// Name is the agent's name (store.TaskInfo.Agent).
	Name string
	// Cancel is run after one of the agent's tasks was ended by someone
	// else than the agent (server.Canceler); nil: none. It is bounded by
	// CancelHookTimeout; its error or panic is logged.
	Cancel func(ctx context.Context, task a2a.Task) error
	// CancelMessage gives the status message of a cancellation, under
	// the task's lock (server.CancelMessenger), which must be quick, must
	// not call back into the engine, and must not panic; nil: none.
	CancelMessage func(task a2a.Task) *a2a.Message
}

// Runner is the agent side of one execution: Run executes the agent
// with x, the handle its events are emitted through (Emit), and returns
// when the agent is done (an error fails the task; a panic is recovered
// as an error).
type Runner interface {
	Run(ctx context.Context, x *Execution) error
}

// Execution is an agent's execution of a task running in this engine
// (taskState.exec): the handle an agent's TaskUpdater emits through.
type Execution struct {
	hooks    *Hooks // its agent's
	taskID   string
	ctxID    string
	cancel   context.CancelFunc
	canceled atomic.Bool
}

// TaskID is the id of the task being executed.
func (x *Execution) TaskID() string { return x.taskID }

// ContextID is the task's contextId.
func (x *Execution) ContextID() string { return x.ctxID }

// Agent is the name of the agent executing.
func (x *Execution) Agent() string { return x.hooks.Name }

// CancelHookTimeout bounds an agent's Cancel hook.
const CancelHookTimeout = 10 * time.Second

// checkForeign stops the execution ex of task id when another process
// appended to the task (the log goes beyond what this engine published,
// read under the task's lock, so that none of this engine's appends is
// in flight): the task was ended there (tasks/cancel on another replica,
// or its sweep after this engine's lease lapsed), or continued there
// after the execution here left it input-required. The execution's
// context is cancelled and its further events are refused; when the task
// is terminal, the agent's Canceler runs here, where the execution ran
// (A2A 1.0 §3.1.5), as for a cancel received here.
func (e *Engine) checkForeign(id string, ex *Execution) {
	ctx, cancel := context.WithTimeout(e.base, CancelHookTimeout)
	defer cancel()
	l := e.Lock(id)
	l.Lock()
	e.mu.Lock()
	current := e.execLocked(id) == ex
	e.mu.Unlock()
	if !current {
		l.Unlock()
		return
	}
	// This engine's queued appends are published first (none is queued
	// meanwhile: the task's lock is held), so that the log going beyond
	// what it published means another process's append.
	e.drainLocked(id)
	e.mu.Lock()
	var p *publishedTail
	var seq int64
	mine := false
	if ts := e.tasks[id]; ts != nil && ts.exec == ex {
		p = ts.published
		mine = p != nil
		if mine {
			seq = p.seq
		}
	}
	e.mu.Unlock()
	if !mine {
		l.Unlock()
		return
	}
	info, err := e.st.Task(ctx, id)
	if err != nil || info.Seq <= seq {
		l.Unlock()
		return
	}
	e.mu.Lock()
	p.markForeign(info.Seq)
	// A stream that subscribed after the notification (or the resync)
	// that brought us here woke its subscribers, but before the tail was
	// marked foreign, trusts the tail and waits for events this engine
	// will never publish: it is woken to read the log.
	if ts := e.tasks[id]; ts != nil {
		wakeLocked(ts.subs)
	}
	e.mu.Unlock()
	e.endExecution(id)
	l.Unlock()
	e.log.Info("execution stopped: another process appended to its task", "task", id, "agent", ex.hooks.Name, "state", info.Task.Status.State)
	if canceledElsewhere(info.Task.Status.State) && !e.closing.Load() {
		e.runCancelHook(ctx, ex.hooks, info.Task)
	}
}

// foreignLocked reports whether another process's append to the task
// was notified beyond what this engine published of it. The caller holds
// the task's lock.
func (e *Engine) foreignLocked(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	ts := e.tasks[id]
	return ts != nil && ts.published != nil && ts.published.foreign
}

// canceledElsewhere reports whether a task another process ended in
// state st asks for the agent's Canceler where the execution ran: a
// cancel (canceled) or a stop (failed: its sweep after this process's
// lease lapsed, or StopAgent there), as a cancel or StopAgent here would.
// A task that was continued there, or completed there after a
// continuation, only stops this execution.
func canceledElsewhere(st a2a.TaskState) bool {
	return st == a2a.TaskStateCanceled || st == a2a.TaskStateFailed
}

// owns reports whether ex is the task's current execution.
func (e *Engine) owns(taskID string, ex *Execution) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return ex != nil && e.execLocked(taskID) == ex
}

// StartLocked registers and starts an execution of hooks' agent on the
// task info: run (the agent side: its TaskUpdater, its Execute), given
// the Execution handle, on a worker goroutine, within the execution's
// telemetry span, a child of span; the caller holds the task's lock. An
// execution still registered for the task (one that left the task
// input-required and has not returned yet) is superseded: its context is
// cancelled and its Emit refuses events. When run returns (or panics),
// a task it left working is settled (completed; failed on an error, or
// when the engine is closing), unless the execution no longer owns it.
//
// When inline is not nil, the execution is not started: *inline is set
// to the function that runs it, for the caller to call (after releasing
// the task's lock) on its own goroutine.
func (e *Engine) StartLocked(hooks *Hooks, info store.TaskInfo, span trace.SpanContext, run Runner, inline *func()) {
	id := info.Task.ID
	ctx, cancel := context.WithCancel(e.base)
	ex := &Execution{hooks: hooks, taskID: id, ctxID: info.Task.ContextID, cancel: cancel}
	e.mu.Lock()
	if e.draining.Load() {
		e.mu.Unlock()
		cancel()
		_, _, _ = e.UpdateLocked(context.Background(), id, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
			if cur.Task.Status.State.Terminal() {
				return nil, nil
			}
			return []a2a.Event{e.statusEvent(cur.Task, a2a.TaskStateFailed, "The server shut down before the task could run.")}, nil
		})
		return
	}
	ts := e.stateLocked(id)
	if old := ts.exec; old != nil {
		old.cancel()
	}
	if p := ts.pipe; p != nil {
		p.mu.Lock()
		idle := len(p.queue) == 0 && !p.acking
		p.mu.Unlock()
		if idle {
			ts.pipe = nil // a fresh execution starts without a past failure
		}
	}
	ts.exec = ex
	ts.snap, ts.cached = info, true
	if e.push != nil && e.tel.Tracing() && span.IsValid() {
		// Unsampled too: it replaces the trace of an earlier execution.
		e.push.Remember(id, span)
	}
	ts.published = &publishedTail{seq: info.Seq} // everything up to it is published: no append is queued
	e.wg.Add(1)
	e.mu.Unlock()
	exec := func() {
		defer e.wg.Done()
		defer cancel()
		ctx, traced := e.tel.Execution(ctx, span, hooks.Name, id, info.Task.ContextID)
		err := e.execute(ctx, run, ex)
		outcome := "superseded" // canceled or continued meanwhile: not this execution's to settle
		if state, ok := e.finish(ctx, hooks, id, ex, err); ok {
			outcome = state.String()
		}
		traced(outcome, err)
	}
	if inline != nil {
		*inline = exec
		return
	}
	e.spawn(exec)
}

// workerIdle is how long a worker goroutine waits for another execution.
const workerIdle = 10 * time.Second

// spawn runs f on an idle worker goroutine, or on a new one. A worker
// waits workerIdle for the next execution before it exits, so executions
// reuse a stack that has grown already instead of growing a new
// goroutine's (the growth was 3 % of the CPU of an echo message/send).
func (e *Engine) spawn(f func()) {
	select {
	case e.work <- f:
	default:
		go e.worker(f)
	}
}

func (e *Engine) worker(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		f = nil
		pprof.SetGoroutineLabels(context.Background()) // what the agent set stays with it
		idle.Reset(workerIdle)
		select {
		case f = <-e.work:
		case <-idle.C:
			return
		case <-e.base.Done():
			return
		}
	}
}

// execute runs an execution's agent side, a panic turned into an error.
func (e *Engine) execute(ctx context.Context, run Runner, x *Execution) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("agent panic: %v", r)
		}
	}()
	return run.Run(ctx, x)
}

// finish settles a task after its execution returned, if the execution
// still owns the task (it was not canceled or superseded). It returns the
// task's state then; ok is false when the execution no longer owned it,
// or the settling update failed.
//
// ctx is the execution's (its logs name its trace); it may be done.
func (e *Engine) finish(ctx context.Context, hooks *Hooks, id string, ex *Execution, execErr error) (state a2a.TaskState, ok bool) {
	l := e.Lock(id)
	l.Lock()
	if !e.owns(id, ex) {
		l.Unlock()
		return a2a.TaskStateUnspecified, false
	}
	closing := e.closing.Load()
	foreign := false
	info, recs, err := e.UpdateLocked(context.Background(), id, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
		foreign = e.supersededLocked(id, cur)
		switch st := cur.Task.Status.State; {
		case foreign:
			// Another process appended after this execution (it ended
			// the task, or continued it): the task is not this
			// execution's to settle.
			return nil, nil
		case st.Final():
			return nil, nil
		case closing:
			return []a2a.Event{e.statusEvent(cur.Task, a2a.TaskStateFailed, "The server shut down while this task was running.")}, nil
		case execErr != nil:
			return []a2a.Event{e.statusEvent(cur.Task, a2a.TaskStateFailed, "The agent failed while processing the task.")}, nil
		default:
			return []a2a.Event{e.statusEvent(cur.Task, a2a.TaskStateCompleted, "")}, nil
		}
	})
	switch {
	case foreign:
		// Its events were refused (ErrTaskClosed) once another process
		// had ended the task, before this one heard of it: not the
		// agent's failure. Stopped as checkForeign stops it.
		e.log.InfoContext(ctx, "execution ended: another process appended to its task", "agent", hooks.Name, "task", id, "state", info.Task.Status.State)
	case execErr == nil:
	case closing && errors.Is(execErr, context.Canceled):
		e.log.InfoContext(ctx, "execution stopped by shutdown", "agent", hooks.Name, "task", id)
	default:
		e.log.ErrorContext(ctx, "agent execution failed", "agent", hooks.Name, "task", id, "err", execErr)
	}
	if err != nil {
		e.log.ErrorContext(ctx, "could not settle task after execution", "agent", hooks.Name, "task", id, "err", err)
	} else if closing && len(recs) > 0 {
		e.closeFailed.Add(1)
	}
	e.mu.Lock()
	if ts := e.tasks[id]; ts != nil {
		if p := ts.published; p != nil && err == nil && !foreign && info.Task.Status.State.Terminal() && p.seq == info.Seq {
			e.retireLocked(id, p) // exact: it holds the task's last event
		}
		ts.pipe = nil // drained by the settling update above
		e.forgetExecLocked(id, ts)
	}
	e.mu.Unlock()
	l.Unlock()
	if foreign && err == nil && canceledElsewhere(info.Task.Status.State) && !closing {
		// Ended by another process (tasks/cancel on another replica):
		// the agent's Canceler runs here, where the execution ran, as
		// checkForeign would have run it (A2A 1.0 §3.1.5).
		ctx, cancel := context.WithTimeout(e.base, CancelHookTimeout)
		defer cancel()
		e.runCancelHook(ctx, hooks, info.Task)
	}
	if err != nil {
		return a2a.TaskStateUnspecified, false
	}
	return info.Task.Status.State, true
}

// endedTails bounds Engine.ended.
const endedTails = 1024

// retireLocked keeps the tail of a task that ended terminal in e.ended,
// dropping the oldest one kept; the caller holds e.mu.
func (e *Engine) retireLocked(id string, p *publishedTail) {
	if _, ok := e.ended[id]; ok {
		e.ended[id] = p // kept already: its ring slot stays
		return
	}
	if old := e.endedRing[e.endedNext]; old != "" {
		delete(e.ended, old)
	}
	e.endedRing[e.endedNext] = id
	e.endedNext = (e.endedNext + 1) % endedTails
	e.ended[id] = p
}

// Emit appends an event of execution t: out, prepared by the caller, or,
// when bad is not "", the reason why the event the agent emitted breaks
// the protocol (the task is failed then: ErrInvalidEvent). After the
// task ended, or when another execution (or process) took it over:
// ErrTaskClosed.
func (e *Engine) Emit(ctx context.Context, t *Execution, out a2a.Event, bad string) error {
	var after func() // runs once the task's lock is released
	defer func() {
		if after != nil {
			after()
		}
	}()
	l := e.Lock(t.taskID)
	l.Lock()
	defer l.Unlock()
	if !e.owns(t.taskID, t) {
		return ErrTaskClosed
	}
	if bad != "" {
		e.failInvalidLocked(t, bad)
		return ErrInvalidEvent
	}
	var err error
	if e.async != nil {
		var cur store.TaskInfo
		if cur, err = e.current(ctx, t.taskID); err == nil {
			if cur.Task.Status.State.Terminal() {
				return ErrTaskClosed
			}
			if e.leaser != nil && e.foreignLocked(t.taskID) {
				// Another process appended (it was notified): the
				// execution stops as checkForeign stops it.
				ex := t
				after = func() { e.checkForeign(t.taskID, ex) }
				return ErrTaskClosed
			}
			err = e.appendQueued(ctx, cur, []a2a.Event{out})
			if e.leaser != nil && errors.Is(err, store.ErrConflict) {
				return ErrTaskClosed // an earlier event was overtaken (see ack)
			}
		}
	} else {
		var info store.TaskInfo
		info, _, err = e.UpdateLocked(ctx, t.taskID, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
			if e.supersededLocked(t.taskID, cur) {
				return nil, errSuperseded
			}
			if cur.Task.Status.State.Terminal() {
				return nil, ErrTaskClosed
			}
			return []a2a.Event{out}, nil
		})
		if errors.Is(err, errSuperseded) {
			// Another process appended to the task (ended or continued
			// it) before this one heard of it: the execution stops here,
			// as checkForeign stops it, and its event is refused.
			e.endExecution(t.taskID)
			e.log.Info("execution stopped: another process appended to its task", "task", t.taskID, "agent", t.hooks.Name, "state", info.Task.Status.State)
			if canceledElsewhere(info.Task.Status.State) && !e.closing.Load() {
				hooks, task := t.hooks, info.Task
				after = func() { e.runCancelHook(context.WithoutCancel(ctx), hooks, task) }
			}
			return ErrTaskClosed
		}
	}
	var fe errFold
	if errors.As(err, &fe) {
		e.failInvalidLocked(t, fe.Error())
		return ErrInvalidEvent
	}
	return err
}

// failInvalidLocked fails a task whose agent broke the protocol and ends
// the execution; the caller holds the task's lock.
func (e *Engine) failInvalidLocked(t *Execution, reason string) {
	e.log.Error("agent emitted an invalid event; failing task", "agent", t.hooks.Name, "task", t.taskID, "reason", reason)
	_, _, err := e.UpdateLocked(context.Background(), t.taskID, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
		if cur.Task.Status.State.Terminal() {
			return nil, nil
		}
		return []a2a.Event{e.statusEvent(cur.Task, a2a.TaskStateFailed, "The agent produced an invalid event: "+reason)}, nil
	})
	if err != nil {
		e.log.Error("could not fail task", "task", t.taskID, "err", err)
	}
	e.mu.Lock()
	if ts := e.tasks[t.taskID]; ts != nil && ts.exec == t {
		e.forgetExecLocked(t.taskID, ts)
	}
	e.mu.Unlock()
	t.cancel()
}

// Cancel cancels a task (A2A 1.0 §3.1.5, A2A 0.3.0 §7.4): under the task's lock, the
// canceled status is appended and the running execution, if any, loses
// the task and sees its context cancelled; then the agent's Canceler hook
// runs (panics recovered, at most CancelHookTimeout).
func (e *Engine) Cancel(ctx context.Context, hooks *Hooks, taskID string) (store.TaskInfo, error) {
	l := e.Lock(taskID)
	l.Lock()
	info, _, err := e.UpdateLocked(context.WithoutCancel(ctx), taskID, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
		if cur.Task.Status.State.Terminal() {
			return nil, a2a.ErrTaskNotCancelable.WithMessage("Task cannot be canceled: it is already %s", cur.Task.Status.State)
		}
		ev := e.statusEvent(cur.Task, a2a.TaskStateCanceled, "")
		if hooks.CancelMessage != nil {
			ev.Status.Message = hooks.CancelMessage(cur.Task)
		}
		return []a2a.Event{ev}, nil
	})
	if err == nil {
		e.endExecution(taskID)
	}
	l.Unlock()
	if err != nil {
		return info, err
	}
	e.runCancelHook(ctx, hooks, info.Task)
	return info, nil
}

// runCancelHook runs the agent's Canceler, if it has one, for a task just
// ended by someone else than the agent, bounded by CancelHookTimeout; its
// error or panic is logged.
func (e *Engine) runCancelHook(ctx context.Context, hooks *Hooks, task a2a.Task) {
	if hooks.Cancel == nil {
		return
	}
	cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), CancelHookTimeout)
	defer stop()
	defer func() {
		if r := recover(); r != nil {
			e.log.Error("agent cancel hook panicked", "agent", hooks.Name, "task", task.ID, "panic", r)
		}
	}()
	if err := hooks.Cancel(cctx, task); err != nil {
		e.log.Warn("agent cancel hook failed", "agent", hooks.Name, "task", task.ID, "err", err)
	}
}

// endExecution cancels the execution of a task that has just been ended
// by someone else than its agent (a cancel, StopAgent): its context is
// cancelled, its further events are refused, and the engine forgets it.
// The caller holds the task's lock.
func (e *Engine) endExecution(taskID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ts := e.tasks[taskID]; ts != nil && ts.exec != nil {
		ts.exec.canceled.Store(true)
		ts.exec.cancel()
		e.forgetExecLocked(taskID, ts)
	}
}

// StopAgent fails every task of hooks' agent that has an execution running
// in this engine, and every task of it that waits for its caller
// (input-required or auth-required, whatever its owner), with reason as
// the status message (state failed, A2A 1.0 §4.1.3); it cancels those
// executions (their contexts are cancelled; their further events are
// refused with ErrTaskClosed) and runs the agent's Canceler for each
// task failed, as tasks/cancel does (a bridge to a remote agent cancels
// the remote task). Streams of those tasks get the final status-update.
// Finished tasks are left as they are, readable as before. It is what
// removing an agent from a running server does (Host.Remove removes its
// routes). It returns how many tasks it failed, and the first error of
// the store or of ctx, if any (the other tasks are still tried while ctx
// lasts).
func (e *Engine) StopAgent(ctx context.Context, hooks *Hooks, reason string) (int, error) {
	agent := hooks.Name
	e.mu.Lock()
	var ids []string
	for id, ts := range e.tasks {
		if ts.exec != nil && ts.exec.hooks.Name == agent {
			ids = append(ids, id)
		}
	}
	e.mu.Unlock()
	n := 0
	var firstErr error
	note := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		failed, err := e.stopTask(ctx, hooks, id, reason, func(s a2a.TaskState) bool { return !s.Terminal() })
		if err != nil {
			note(err)
		} else if failed {
			n++
		}
	}
	// Tasks waiting for their caller have no execution: they are paged
	// through (a failed one leaves the state's filter; the keyset cursor
	// goes on after the page's last task all the same).
	for _, state := range []a2a.TaskState{a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired} {
		q := store.TaskQuery{Agent: agent, AllOwners: true, State: state, Limit: 100}
		for ctx.Err() == nil {
			page, err := e.st.ListTasks(ctx, q)
			if err != nil {
				note(err)
				break
			}
			for _, t := range page.Tasks {
				if ctx.Err() != nil {
					break
				}
				failed, err := e.stopTask(ctx, hooks, t.Task.ID, reason, a2a.TaskState.Interrupted)
				if err != nil {
					note(err)
				} else if failed {
					n++
				}
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
	}
	if err := ctx.Err(); err != nil {
		note(err)
	}
	return n, firstErr
}

// stopTask fails task id of hooks' agent with reason if its current state
// passes stop, ends its execution and runs the agent's Canceler (see
// StopAgent); failed reports whether it did.
func (e *Engine) stopTask(ctx context.Context, hooks *Hooks, id, reason string, stop func(a2a.TaskState) bool) (failed bool, err error) {
	l := e.Lock(id)
	l.Lock()
	info, _, err := e.UpdateLocked(context.WithoutCancel(ctx), id, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
		failed = false // the update may be tried again
		if !stop(cur.Task.Status.State) || cur.Agent != hooks.Name {
			return nil, nil
		}
		failed = true
		return []a2a.Event{e.statusEvent(cur.Task, a2a.TaskStateFailed, reason)}, nil
	})
	if err == nil && failed {
		e.endExecution(id)
	}
	l.Unlock()
	if err != nil {
		return false, err
	}
	if failed {
		e.runCancelHook(ctx, hooks, info.Task)
	}
	return failed, nil
}
