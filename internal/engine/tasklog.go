package engine

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"time"

	taskfold "github.com/a2abridge/a2abridge/internal/fold"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

// The task-log writer (see the package doc): the one write path of every
// event. A create or an update folds its events into the task's snapshot
// under the task's lock (the state machine refuses what does not fit),
// appends them to the store, and publishes them to the fan-out only once
// they are durable; with a store's group commit (store.GroupCommitter), an
// execution's events are queued in its task's pipe and published in
// order as their commits complete (ack). Against other processes, the
// store's expected sequence number decides: a conflicting append reads
// the task again (update), or stops the stale execution (ack,
// checkForeign).

// pipe holds a task's agent appends queued in the store, in order: they
// become visible (published) only once durable.
type pipe struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queue  []queued
	acking bool
	err    error // the first failed append: the execution's later events are refused
}

type queued struct {
	recs     []store.Record
	terminal bool
	res      <-chan error
	notify   chan<- error // if not nil, receives the outcome once it is handled
	// start, with telemetry on, is when the append was handed to the
	// store: its commit duration is recorded when it is durable (no
	// span: the agent went on without waiting for it).
	start time.Time
}

// durableTel reports whether store commits are measured (spans and
// a2abridge.store.commit.duration): with telemetry on and a store that
// writes to disk or a database (a group commit, or a store shared by
// replicas). The memory store's appends are map updates that measuring
// would cost many times over.
func (e *Engine) durableTel() bool {
	return e.tel != nil && (e.async != nil || e.leaser != nil)
}

// errSuperseded refuses an execution's event when another process has
// appended to its task since this engine last did (see Emit).
var errSuperseded = errors.New("server: the task was changed by another process")

// supersededLocked reports whether the log of the task, as cur shows it,
// goes beyond what this engine published for its execution here: another
// process appended (a cancel there, a continuation there, its sweep
// after this engine's lease lapsed). The caller holds the task's lock.
func (e *Engine) supersededLocked(id string, cur store.TaskInfo) bool {
	if e.leaser == nil {
		return false // a store one process owns: nobody else appends
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ts := e.tasks[id]
	if ts == nil || ts.published == nil {
		return false
	}
	p := ts.published
	return p.foreign || cur.Seq > p.seq
}

// errFold marks an event the state machine refused.
type errFold struct{ err error }

func (e errFold) Error() string { return e.err.Error() }

// Create stores a new task whose first record is its snapshot and, under
// the task's lock, calls start (if not nil) with the stored snapshot. It
// returns store.ErrDuplicateMessage, with nothing stored or started, when
// one of msgIDs is already indexed for the agent.
func (e *Engine) Create(ctx context.Context, agent, owner string, task a2a.Task, msgIDs []string, start func(store.TaskInfo)) (store.TaskInfo, error) {
	if e.async != nil && start != nil && e.leaser == nil {
		return e.createQueued(ctx, agent, owner, task, msgIDs, start)
	}
	l := e.Lock(task.ID)
	l.Lock()
	defer l.Unlock()
	rec := store.Record{Seq: 1, Time: Now(), Event: &task}
	var begin time.Time
	if e.durableTel() {
		begin = time.Now()
	}
	tp := e.traceparent(ctx)
	err := e.st.Append(ctx, store.Append{Agent: agent, Owner: owner, TaskID: task.ID, After: 0, Records: []store.Record{rec}, Snapshot: task, MessageIDs: msgIDs, Runner: e.runner, Trace: tp})
	if e.durableTel() {
		e.tel.Commit(ctx, "create", begin, err)
	}
	if err != nil {
		return store.TaskInfo{}, err
	}
	info := store.TaskInfo{Agent: agent, Owner: owner, Task: task, Seq: 1, Created: rec.Time, Updated: rec.Time, Trace: tp}
	e.publish(task.ID, []store.Record{rec})
	if start != nil {
		start(info)
	}
	return info, nil
}

// createQueued is create for a store that queues appends (a group
// commit): the create is queued and the execution starts at once, so the
// agent's first events usually share the create's commit; create returns
// once the task is durable. Before anything is queued, each message id is
// claimed in this process (a concurrent create of the same id waits for
// this one's outcome) and looked up in the store, so an agent never runs
// for a message the store would refuse as a duplicate. If the create
// fails all the same (the store failed, or another process sharing the
// store indexed the id), the execution loses the task before it could
// publish anything, and its queued events fail with the create. If the
// process dies before the create is durable, the agent ran for a task
// that is not stored, and that no client was told of (see Agent).
func (e *Engine) createQueued(ctx context.Context, agent, owner string, task a2a.Task, msgIDs []string, start func(store.TaskInfo)) (store.TaskInfo, error) {
	release, err := e.claim(ctx, agent, msgIDs)
	if err != nil {
		return store.TaskInfo{}, err
	}
	defer release()
	for _, id := range msgIDs {
		if dup, err := e.st.MessageTask(ctx, agent, id); err != nil {
			return store.TaskInfo{}, err
		} else if dup != "" {
			return store.TaskInfo{}, store.ErrDuplicateMessage
		}
	}
	l := e.Lock(task.ID)
	l.Lock()
	rec := store.Record{Seq: 1, Time: Now(), Event: &task}
	var begin time.Time
	if e.durableTel() {
		begin = time.Now()
	}
	tp := e.traceparent(ctx)
	res := e.async.AppendAsync(context.WithoutCancel(ctx), store.Append{Agent: agent, Owner: owner, TaskID: task.ID, After: 0, Records: []store.Record{rec}, Snapshot: task, MessageIDs: msgIDs, Runner: e.runner, Trace: tp})
	info := store.TaskInfo{Agent: agent, Owner: owner, Task: task, Seq: 1, Created: rec.Time, Updated: rec.Time, Trace: tp}
	notify := make(chan error, 1)
	p := e.pipeOf(task.ID)
	p.mu.Lock()
	p.queue = append(p.queue, queued{recs: []store.Record{rec}, res: res, notify: notify})
	acking := p.acking
	p.acking = true
	p.mu.Unlock()
	if !acking {
		go e.ack(task.ID, p)
	}
	start(info)
	l.Unlock()
	err = <-notify
	if e.durableTel() {
		e.tel.Commit(ctx, "create", begin, err)
	}
	if err != nil {
		l.Lock()
		e.mu.Lock()
		if ts := e.tasks[task.ID]; ts != nil {
			if ts.exec != nil {
				ts.exec.cancel()
			}
			e.forgetExecLocked(task.ID, ts)
		}
		e.mu.Unlock()
		e.drainLocked(task.ID)
		e.mu.Lock()
		if ts := e.tasks[task.ID]; ts != nil {
			ts.pipe = nil
			e.tidyLocked(task.ID, ts)
		}
		e.mu.Unlock()
		l.Unlock()
		return store.TaskInfo{}, err
	}
	return info, nil
}

// claim claims the message keys of msgIDs for a create in this process,
// waiting while another create holds one. release ends the claims.
func (e *Engine) claim(ctx context.Context, agent string, msgIDs []string) (release func(), err error) {
	keys := make([]string, 0, len(msgIDs))
	release = func() {
		e.mu.Lock()
		for _, k := range keys {
			close(e.claims[k])
			delete(e.claims, k)
		}
		e.mu.Unlock()
	}
	for _, id := range msgIDs {
		k := agent + "\x00" + id
		if slices.Contains(keys, k) {
			continue // the same id twice: claimed already
		}
		for {
			e.mu.Lock()
			held, ok := e.claims[k]
			if !ok {
				e.claims[k] = make(chan struct{})
				keys = append(keys, k)
			}
			e.mu.Unlock()
			if !ok {
				break
			}
			select {
			case <-held:
			case <-ctx.Done():
				release()
				return nil, ctx.Err()
			}
		}
	}
	return release, nil
}

// current returns the task's snapshot; the caller holds the task's lock.
func (e *Engine) current(ctx context.Context, taskID string) (store.TaskInfo, error) {
	e.mu.Lock()
	ts := e.tasks[taskID]
	ok := ts != nil && ts.cached
	var info store.TaskInfo
	if ok {
		info = ts.snap
	}
	e.mu.Unlock()
	if ok {
		return info, nil
	}
	return e.st.Task(ctx, taskID)
}

// update appends the events fn computes from the task's current snapshot,
// atomically: fn runs under the task's lock. Events are folded (the state
// machine may refuse one: errFold) and written durably before subscribers
// see them.
func (e *Engine) update(ctx context.Context, taskID string, fn func(store.TaskInfo) ([]a2a.Event, error)) (store.TaskInfo, []store.Record, error) {
	l := e.Lock(taskID)
	l.Lock()
	defer l.Unlock()
	return e.UpdateLocked(ctx, taskID, nil, fn)
}

// maxConflictRetries bounds how often UpdateLocked reads a task again
// after another process appended to it first (store.ErrConflict): each
// retry means one more append elsewhere in the meantime.
const maxConflictRetries = 16

// UpdateLocked is update for a caller that holds the task's lock; msgIDs
// are indexed with the appended records.
func (e *Engine) UpdateLocked(ctx context.Context, taskID string, msgIDs []string, fn func(store.TaskInfo) ([]a2a.Event, error)) (store.TaskInfo, []store.Record, error) {
	e.drainLocked(taskID)
	for attempt := 0; ; attempt++ {
		info, err := e.current(ctx, taskID)
		if err != nil {
			return info, nil, err
		}
		evs, err := fn(info)
		if err != nil || len(evs) == 0 {
			return info, nil, err
		}
		task := info.Task
		recs := make([]store.Record, len(evs))
		t := Now()
		for i, ev := range evs {
			if task, err = taskfold.Apply(task, ev); err != nil {
				return info, nil, errFold{err}
			}
			recs[i] = store.Record{Seq: info.Seq + int64(i) + 1, Time: t, Event: ev}
		}
		var start time.Time
		if e.durableTel() {
			start = time.Now()
		}
		var tp string
		if len(msgIDs) > 0 {
			// A message accepted: the execution it starts runs under
			// this request's span.
			tp = e.traceparent(ctx)
		}
		err = e.st.Append(ctx, store.Append{Agent: info.Agent, TaskID: taskID, After: info.Seq, Records: recs, Snapshot: task, MessageIDs: msgIDs, Runner: e.runner, Trace: tp})
		if e.durableTel() {
			e.tel.Commit(ctx, "append", start, err)
		}
		if errors.Is(err, store.ErrConflict) && attempt < maxConflictRetries {
			// Another writer (another replica) appended: drop the
			// cache, read the task again and decide again (fn sees
			// the task as it is now: a cancel racing a continuation
			// finds it working, then input-required again).
			e.mu.Lock()
			e.uncacheLocked(taskID)
			if ts := e.tasks[taskID]; ts != nil && ts.published != nil {
				// The queue was drained: the log went on elsewhere,
				// up to a point read again below (an execution here
				// is superseded, see Emit).
				ts.published.markForeign(math.MaxInt64)
			}
			e.mu.Unlock()
			continue
		}
		if err != nil {
			return info, nil, err
		}
		info.Task, info.Seq, info.Updated = task, info.Seq+int64(len(recs)), t
		if tp != "" {
			info.Trace = tp
		}
		e.mu.Lock()
		e.cacheLocked(taskID, info)
		e.mu.Unlock()
		e.publish(taskID, recs)
		if e.push != nil {
			e.push.Appended(taskID, task.Status.State.Terminal())
		}
		return info, recs, nil
	}
}

// pipeOf returns the task's pipe, creating it.
func (e *Engine) pipeOf(taskID string) *pipe {
	e.mu.Lock()
	defer e.mu.Unlock()
	ts := e.stateLocked(taskID)
	if ts.pipe == nil {
		ts.pipe = &pipe{}
		ts.pipe.cond = sync.NewCond(&ts.pipe.mu)
	}
	return ts.pipe
}

// drainLocked waits until the task's queued appends are durable (or
// failed); the caller holds the task's lock, so none is added meanwhile.
// A failure has dropped the cached snapshot: the store is read again.
func (e *Engine) drainLocked(taskID string) {
	e.mu.Lock()
	var p *pipe
	if ts := e.tasks[taskID]; ts != nil {
		p = ts.pipe
	}
	e.mu.Unlock()
	if p == nil {
		return
	}
	p.mu.Lock()
	for len(p.queue) > 0 || p.acking {
		p.cond.Wait()
	}
	p.mu.Unlock()
}

// appendQueued queues an agent's records in the store without waiting for
// them to be durable: the agent goes on at once, and consecutive events of
// a task share group commits. The caller holds the task's lock. Records
// are published, in order, once durable.
func (e *Engine) appendQueued(ctx context.Context, info store.TaskInfo, evs []a2a.Event) error {
	taskID := info.Task.ID
	p := e.pipeOf(taskID)
	p.mu.Lock()
	failed := p.err
	p.mu.Unlock()
	if failed != nil {
		return failed
	}
	task := info.Task
	recs := make([]store.Record, len(evs))
	t := Now()
	var err error
	for i, ev := range evs {
		if task, err = taskfold.Apply(task, ev); err != nil {
			return errFold{err}
		}
		recs[i] = store.Record{Seq: info.Seq + int64(i) + 1, Time: t, Event: ev}
	}
	res := e.async.AppendAsync(context.WithoutCancel(ctx), store.Append{Agent: info.Agent, TaskID: taskID, After: info.Seq, Records: recs, Snapshot: task, Runner: e.runner})
	info.Task, info.Seq, info.Updated = task, info.Seq+int64(len(recs)), t
	e.mu.Lock()
	e.cacheLocked(taskID, info)
	e.mu.Unlock()
	p.mu.Lock()
	q := queued{recs: recs, terminal: task.Status.State.Terminal(), res: res}
	if e.durableTel() {
		q.start = time.Now()
	}
	p.queue = append(p.queue, q)
	start := !p.acking
	p.acking = true
	p.mu.Unlock()
	if start {
		go e.ack(taskID, p)
	}
	return nil
}

// ack publishes a task's queued appends in order as they become durable.
func (e *Engine) ack(taskID string, p *pipe) {
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.acking = false
			p.cond.Broadcast()
			p.mu.Unlock()
			e.mu.Lock()
			if ts := e.tasks[taskID]; ts != nil && ts.pipe == p {
				e.dropIdlePipeLocked(ts)
				e.tidyLocked(taskID, ts)
			}
			e.mu.Unlock()
			return
		}
		q := p.queue[0]
		p.mu.Unlock()
		err := <-q.res
		if !q.start.IsZero() {
			e.tel.Commit(context.Background(), "append", q.start, err)
		}
		if q.notify != nil {
			q.notify <- err
		}
		p.mu.Lock()
		p.queue = p.queue[1:]
		first := err != nil && p.err == nil // the pipe's first failure
		if first {
			p.err = err
		}
		failed := p.err != nil
		p.mu.Unlock()
		if failed {
			var ex *Execution
			e.mu.Lock()
			e.uncacheLocked(taskID) // the store is the truth again
			if ts := e.tasks[taskID]; ts != nil {
				ex = ts.exec
			}
			e.mu.Unlock()
			switch {
			case !first:
				// It failed with the first (or after it): its
				// execution is being dealt with already.
			case e.leaser != nil && errors.Is(err, store.ErrConflict):
				// Another process appended to the task first (a
				// cancel or a continuation there): nothing of this
				// append was written, and the execution stops.
				if ex != nil {
					go e.checkForeign(taskID, ex)
				}
			default:
				e.log.Error("queued append failed; the agent's later events are refused", "task", taskID, "err", err)
			}
			continue
		}
		e.publish(taskID, q.recs)
		if e.push != nil {
			e.push.Appended(taskID, q.terminal)
		}
	}
}
