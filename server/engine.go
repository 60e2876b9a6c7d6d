package server

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"log/slog"
	"math"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

// EngineOptions configure an Engine. The zero value is ready to use.
type EngineOptions struct {
	// Logger receives structured logs; nil means slog.Default().
	Logger *slog.Logger
	// Push enables push notifications; nil disables them (the
	// tasks/pushNotificationConfig methods then answer -32003).
	Push *PushOptions
	// Retention is how long a task is kept after it finished (reached a
	// terminal state: completed, canceled, failed, rejected): a background
	// sweep then deletes it with its events, message ids and push
	// notification configs (Store.DeleteFinished), once its push
	// notifications are delivered or given up. Zero (or negative) keeps
	// finished tasks forever.
	Retention time.Duration
	// LeaseTime bounds how long the running tasks of a process that
	// died stay unfinished when processes share a store that implements
	// store.Leaser (PostgreSQL replicas, issue 15 §3): each Engine holds
	// a lease on the store for 4/5 of LeaseTime, renewed every fifth of
	// it, and every fifth of it fails with RecoveryMessage the orphans
	// it finds (unfinished tasks whose runner's lease expired; those of
	// its own executions excepted). So the tasks of a process that died
	// are failed within LeaseTime of its last renewal, by whichever
	// process looks first. Zero (or negative) means 30 s. With a store
	// one process owns (memory, SQLite), the tasks left unfinished are
	// failed at start instead.
	LeaseTime time.Duration
}

// DefaultLeaseTime is EngineOptions.LeaseTime's default.
const DefaultLeaseTime = 30 * time.Second

// Engine runs tasks on a Store: it appends each task's events to its
// ordered log (durably, before anyone sees them), folds them into the Task
// snapshot, enforces the state machine, runs agent executions, and fans
// new events out to streams. One Engine serves any number of agents
// (Handlers). NewEngine makes it (recovering the store); Shutdown (with a
// grace period) or Close stops it.
type Engine struct {
	st   store.Store
	log  *slog.Logger
	seed maphash.Seed

	// runner names this engine in the store (store.Append.Runner) and
	// holds its lease when the store is a leaser (shared by processes).
	runner    string
	leaser    store.Leaser
	leaseTime time.Duration
	// leaseDone ends holdLease: at Close, once the executions have
	// returned (until then the lease protects their tasks).
	leaseDone chan struct{}
	leaseOnce sync.Once
	// watched is set once the store's Watcher listens (its first
	// resync): streams then also read the log every safetyReread.
	watched atomic.Bool

	base     context.Context
	stopBase context.CancelFunc
	// draining refuses new messages (Shutdown, Close); closing also
	// fails what executions leave unfinished (Close). Both are set under
	// mu, so no execution is registered in wg after Shutdown waits on it.
	draining atomic.Bool
	closing  atomic.Bool
	wg       sync.WaitGroup
	// streamsDone is closed once Close has waited for the executions: a
	// stream still following a task then ends (its client resubscribes
	// to another process later).
	streamsDone chan struct{}
	closeOnce   sync.Once
	// closeFailed counts the tasks that Close failed because their
	// executions were still running (Shutdown's result).
	closeFailed atomic.Int64

	locks [64]sync.Mutex // per-task append serialisation, striped by id
	push  *pusher        // nil when push notifications are disabled

	mu sync.Mutex
	// tasks holds, per task, what this engine keeps of it while it runs
	// here or streams follow it here (taskState).
	tasks map[string]*taskState
	// ended keeps the published tails of the last endedTails tasks whose
	// execution ended with the task terminal (no event can follow), in
	// the order of endedRing: a subscriber that arrives just after the
	// end, like the waiter of a send whose task finished within its
	// create's commit, needs no read of the log either.
	ended     map[string]*publishedTail
	endedRing [endedTails]string
	endedNext int
	async     asyncAppender
	// watcher is st as a store.Watcher (other processes append to it),
	// or nil.
	watcher store.Watcher
	// claims holds the message keys (agent + "\x00" + key) of the tasks
	// being created with a queued create (createQueued), until its outcome
	// is known; the channel is closed then.
	claims map[string]chan struct{}
	// work hands an execution to an idle worker goroutine (spawn).
	work chan func()

	// beforeSnapshotHold, set only by this package's tests before the
	// engine serves, runs before a stream decides whether its opening
	// snapshot is held (it lets a test order the agent's events first).
	beforeSnapshotHold func(taskID string)
}

// taskState is what the engine holds of one task in this process: one
// entry of Engine.tasks, under Engine.mu, removed once it holds nothing.
type taskState struct {
	// exec is the execution running the task here; nil when none.
	exec *execution
	// snap is the task's snapshot, queued appends included; valid when
	// cached, which is only while exec is set.
	snap   store.TaskInfo
	cached bool
	// published tells what has been published of the task: exact while
	// exec is set (set when the execution starts, advanced by every
	// publish), so a new subscriber that is not behind it, or behind by
	// no more than its tail, needs no read of the log.
	published *publishedTail
	// pipe holds the execution's appends queued in the store
	// (asyncAppender), published in order once durable.
	pipe *pipe
	// subs are the streams that follow the task here.
	subs []*subscription
}

// stateLocked returns the task's state, creating it; the caller holds mu.
func (e *Engine) stateLocked(id string) *taskState {
	ts := e.tasks[id]
	if ts == nil {
		ts = &taskState{}
		e.tasks[id] = ts
	}
	return ts
}

// tidyLocked removes the task's state once it holds nothing; the caller
// holds mu.
func (e *Engine) tidyLocked(id string, ts *taskState) {
	if ts.exec == nil && ts.pipe == nil && len(ts.subs) == 0 && !ts.cached && ts.published == nil {
		delete(e.tasks, id)
	}
}

// forgetExecLocked forgets the task's execution here, its snapshot and
// what it published; the caller holds mu (and the task's lock).
func (e *Engine) forgetExecLocked(id string, ts *taskState) {
	ts.exec, ts.published = nil, nil
	ts.snap, ts.cached = store.TaskInfo{}, false
	e.dropIdlePipeLocked(ts)
	e.tidyLocked(id, ts)
}

// dropIdlePipeLocked forgets the task's pipe when nothing is queued in it
// and no execution may queue more (the next execution starts without a
// past failure); ack drops it when its queue empties later. The caller
// holds mu.
func (e *Engine) dropIdlePipeLocked(ts *taskState) {
	p := ts.pipe
	if p == nil || ts.exec != nil {
		return
	}
	p.mu.Lock()
	idle := len(p.queue) == 0 && !p.acking
	p.mu.Unlock()
	if idle {
		ts.pipe = nil
	}
}

// uncacheLocked drops the task's cached snapshot (the store is the truth
// again); the caller holds mu.
func (e *Engine) uncacheLocked(id string) {
	if ts := e.tasks[id]; ts != nil {
		ts.snap, ts.cached = store.TaskInfo{}, false
		e.tidyLocked(id, ts)
	}
}

// cacheLocked caches the snapshot of a task executed here (none
// otherwise); the caller holds mu.
func (e *Engine) cacheLocked(id string, info store.TaskInfo) {
	if ts := e.tasks[id]; ts != nil && ts.exec != nil {
		ts.snap, ts.cached = info, true
	}
}

// execLocked returns the execution running the task here, or nil; the
// caller holds mu.
func (e *Engine) execLocked(id string) *execution {
	if ts := e.tasks[id]; ts != nil {
		return ts.exec
	}
	return nil
}

// publishedLocked returns the published tail of the task: its
// execution's here, else the one kept since it ended here, or nil; the
// caller holds mu.
func (e *Engine) publishedLocked(id string) *publishedTail {
	if ts := e.tasks[id]; ts != nil && ts.published != nil {
		return ts.published
	}
	return e.ended[id]
}

// asyncAppender is an optional extension of a store.Store (the group
// commit of SQLite and PostgreSQL): appends queued without waiting.
// AppendAsync validates a, queues it and returns at once; the channel (buffered) receives the
// outcome, with the same errors as Append, once the append is durable or
// has failed. Appends queued for one task are applied in the order they
// were queued, so the engine may queue After = n and After = n+k before
// the first completes; a failed append makes the later ones fail (with
// store.ErrConflict, or with its own error when the store applied them
// together), never apply out of order. A store without it appends at once
// (Append), and the engine's path is the same with a queue of one.
type asyncAppender interface {
	AppendAsync(ctx context.Context, a store.Append) <-chan error
}

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
}

type execution struct {
	agent    string   // the name of the agent executing
	h        *Handler // its handler (for its Canceler)
	cancel   context.CancelFunc
	canceled atomic.Bool
}

// NewEngine returns an Engine on st, recovered from a previous run and
// ready to serve. Recovery cannot be skipped: every task that st holds
// submitted, working or unknown (its execution died with the process
// that ran it, e.g. under kill -9) is failed with RecoveryMessage, so no
// client waits forever, and push notifications still pending are
// delivered (with opts.Push). When st is a store.Leaser (shared by
// several processes) and not a store.Exclusive that reports true, only
// the orphans are: the tasks whose process's lease expired (see
// EngineOptions.LeaseTime); the engine then holds a lease of its own,
// and keeps failing the orphans it finds. A store that offers a group
// commit gets its agents' events queued (they are published once
// durable), and, when the engine owns it (SQLite, an Exclusive one), its
// creates too. When st is a
// store.Watcher, the engine's streams also follow the appends of other
// processes, and a task ended by another process (tasks/cancel there)
// stops its execution here. ctx bounds recovery only, not the Engine's
// life. The engine does not own st: close st after Engine.Close.
//
// Errors: those of st while reading the unfinished tasks or appending
// their failure (wrapped, "engine start: …"); the engine is unusable then.
func NewEngine(ctx context.Context, st store.Store, opts EngineOptions) (*Engine, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	base, stop := context.WithCancel(context.Background())
	e := &Engine{
		st: st, log: log, seed: maphash.MakeSeed(), base: base, stopBase: stop, streamsDone: make(chan struct{}),
		tasks:  map[string]*taskState{},
		claims: map[string]chan struct{}{}, ended: map[string]*publishedTail{}, work: make(chan func()),
	}
	e.runner = a2a.NewID()
	if x, ok := st.(store.Exclusive); !ok || !x.Exclusive() {
		e.leaser, _ = st.(store.Leaser)
	}
	// Queued appends let an agent go on before its events commit (they
	// are published once they have). On a store that other processes
	// share, a queued event that another process's append overtook
	// fails at its commit (store.ErrConflict: nothing is written) and
	// stops the execution (see ack); creates wait for their commit
	// there, so that the database decides a message id before the agent
	// runs.
	e.async, _ = st.(asyncAppender)
	e.leaseDone = make(chan struct{})
	e.leaseTime = opts.LeaseTime
	if e.leaseTime <= 0 {
		e.leaseTime = DefaultLeaseTime
	}
	if opts.Push != nil {
		e.push = newPusher(e, *opts.Push)
	}
	if err := e.recover(ctx); err != nil {
		stop()
		return nil, err
	}
	if opts.Retention > 0 {
		go e.retain(opts.Retention) // until Close; not waited for (a sweep cut short loses nothing)
	}
	if e.leaser != nil {
		go e.holdLease() // until Close
	}
	if w, ok := st.(store.Watcher); ok {
		// Appends that other processes commit to this store (replicas)
		// wake the streams here that follow their tasks. Until Close; it
		// also ends when the store closes.
		e.watcher = w
		go w.Watch(base, e.changed)
	}
	return e, nil
}

// changed handles an append another process committed (store.Watcher):
// it wakes the subscribers of the task, or every subscriber on a resync
// (each reads the log from where it is, in follow, so a notification that
// repeats what was read costs one read and delivers nothing twice); the
// published tail of the task no longer tells its end (foreign); and an
// execution of the task here is checked (checkForeign). On a resync,
// which says nothing of which tasks changed, every execution here is
// checked. It runs on the Watcher's goroutine and does not block.
func (e *Engine) changed(c store.Change) {
	if e.push != nil {
		// What the pusher remembers of a task's push configs may be
		// stale: another process may have set one.
		e.push.forget(c.TaskID, c.Resync)
	}
	if !c.Resync && c.Seq == 0 {
		return // the task's push configs changed, not its log
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	wake := func(l []*subscription) {
		for _, s := range l {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
	if c.Resync {
		e.watched.Store(true)
		clear(e.ended)
		ids := map[string]*execution{}
		for id, ts := range e.tasks {
			wake(ts.subs)
			if ts.exec != nil {
				ids[id] = ts.exec
			}
		}
		if len(ids) > 0 {
			go func() {
				for id, ex := range ids {
					e.checkForeign(id, ex)
				}
			}()
		}
		return
	}
	if p := e.ended[c.TaskID]; p != nil && c.Seq > p.seq {
		// Appended elsewhere after it ended here (its ring slot may
		// stay; deleting an absent key later is harmless).
		delete(e.ended, c.TaskID)
	}
	ts := e.tasks[c.TaskID]
	if ts == nil {
		return
	}
	if p := ts.published; p != nil && c.Seq > p.seq {
		// Only other processes' appends are notified: this one is
		// beyond what this engine wrote.
		p.markForeign(c.Seq)
	}
	if ex := ts.exec; ex != nil {
		go e.checkForeign(c.TaskID, ex)
	}
	wake(ts.subs)
}

// checkForeign stops the execution ex of task id when another process
// appended to the task (the log goes beyond what this engine published,
// read under the task's lock, so that none of this engine's appends is
// in flight): the task was ended there (tasks/cancel on another replica,
// or its sweep after this engine's lease lapsed), or continued there
// after the execution here left it input-required. The execution's
// context is cancelled and its further events are refused; when the task
// is terminal, the agent's Canceler runs here, where the execution ran
// (A2A 1.0 §3.1.5), as for a cancel received here.
func (e *Engine) checkForeign(id string, ex *execution) {
	ctx, cancel := context.WithTimeout(e.base, cancelHookTimeout)
	defer cancel()
	l := e.lock(id)
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
	e.mu.Unlock()
	e.endExecution(id)
	l.Unlock()
	e.log.Info("execution stopped: another process appended to its task", "task", id, "agent", ex.agent, "state", info.Task.Status.State)
	if canceledElsewhere(info.Task.Status.State) && !e.closing.Load() {
		e.runCancelHook(ctx, ex.h, info.Task)
	}
}

// errSuperseded refuses an execution's event when another process has
// appended to its task since this engine last did (see emit).
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

// PushEnabled reports whether push notifications are enabled.
func (e *Engine) PushEnabled() bool { return e.push != nil }

// RecoveryMessage is the status message of tasks found running by NewEngine,
// or left running by another process whose lease expired
// (EngineOptions.LeaseTime): their executions died with that process.
const RecoveryMessage = "The server stopped while this task was running; the task cannot be resumed."

// recover fails the tasks a process that stopped left submitted, working
// or unknown, with RecoveryMessage: with a store.Leaser, the orphans (after
// taking this engine's lease: the other processes' running tasks are left
// alone); otherwise every such task. Then it starts the delivery of
// pending push notifications (NewEngine).
func (e *Engine) recover(ctx context.Context) error {
	if e.leaser != nil {
		if err := e.leaser.Renew(ctx, e.runner, e.leaseTTL()); err != nil {
			return fmt.Errorf("engine start: take a lease: %w", err)
		}
		if _, err := e.failOrphans(ctx); err != nil {
			return fmt.Errorf("engine start: %w", err)
		}
	} else {
		infos, err := e.st.Unfinished(ctx)
		if err != nil {
			return fmt.Errorf("engine start: %w", err)
		}
		if _, err := e.failRecovered(ctx, infos); err != nil {
			return fmt.Errorf("engine start: %w", err)
		}
	}
	if e.push != nil {
		if err := e.push.start(ctx); err != nil {
			return fmt.Errorf("engine start: pending push notifications: %w", err)
		}
	}
	if e.leaser != nil {
		// Recovery may have taken a while: the lease is fresh when the
		// engine starts serving (holdLease renews it from then on).
		if err := e.leaser.Renew(ctx, e.runner, e.leaseTTL()); err != nil {
			return fmt.Errorf("engine start: renew the lease: %w", err)
		}
	}
	return nil
}

// failRecovered fails each of infos that is still unfinished (and has no
// execution here) with RecoveryMessage; n counts those it failed. A task
// another process failed or finished meanwhile is skipped.
func (e *Engine) failRecovered(ctx context.Context, infos []store.TaskInfo) (n int, err error) {
	var first error
	for _, info := range infos {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		_, recs, err := e.update(ctx, info.Task.ID, func(cur store.TaskInfo) ([]a2a.Event, error) {
			e.mu.Lock()
			mine := e.execLocked(cur.Task.ID) != nil
			e.mu.Unlock()
			if mine || cur.Task.Status.State.Final() {
				return nil, nil // running here (under the task's lock: no start is half done), or ended
			}
			return []a2a.Event{e.statusEvent(cur.Task, a2a.TaskStateFailed, RecoveryMessage)}, nil
		})
		switch {
		case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrConflict):
			continue // deleted, or appended to by another process twice meanwhile
		case err != nil:
			e.log.Error("could not fail a task left running by a process that stopped", "task", info.Task.ID, "err", err)
			if first == nil {
				first = fmt.Errorf("recover task %s: %w", info.Task.ID, err)
			}
			continue
		case len(recs) == 0:
			continue
		}
		n++
		e.log.Warn("failed task left running by a process that stopped", "task", info.Task.ID, "agent", info.Agent)
	}
	if n > 0 {
		e.log.Warn("recovered interrupted tasks", "failed", n)
	}
	return n, first
}

// failOrphans fails the orphans of a store.Leaser (failRecovered), a page
// at a time, until a page brings no progress.
func (e *Engine) failOrphans(ctx context.Context) (int, error) {
	const page = 256
	total := 0
	for {
		infos, err := e.leaser.Orphans(ctx, page)
		if err != nil {
			return total, err
		}
		n, err := e.failRecovered(ctx, infos)
		total += n
		if err != nil || n == 0 || len(infos) < page {
			return total, err
		}
	}
}

// leaseTTL is how long a renewal holds the lease: 4/5 of LeaseTime.
func (e *Engine) leaseTTL() time.Duration { return e.leaseTime * 4 / 5 }

// holdLease renews the engine's lease and fails the orphans it finds,
// every fifth of LeaseTime, until Close has seen the executions return
// (while the engine drains, it only renews).
func (e *Engine) holdLease() {
	every := e.leaseTime / 5
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-e.leaseDone:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		if err := e.leaser.Renew(ctx, e.runner, e.leaseTTL()); err != nil {
			e.log.Warn("lease renewal failed: if it stays so for the lease time, other processes fail this one's running tasks", "err", err)
		}
		if !e.draining.Load() {
			if _, err := e.failOrphans(ctx); err != nil {
				e.log.Warn("failing the tasks of stopped processes", "err", err)
			}
			if e.push != nil {
				e.push.sweep(ctx)
			}
		}
		cancel()
	}
}

// closeBound bounds the Close that Shutdown makes after its grace period:
// how long cancelled executions get to return.
const closeBound = 10 * time.Second

// Shutdown stops the engine gracefully: new messages are refused at once
// (JSON-RPC -32603 "The server is shutting down; try again later"), running
// executions may finish until ctx is done (the grace period; push
// deliveries are not waited for: those still owed are delivered after the
// next start), then Close cancels the executions left, gives them up to
// 10 s to return, and fails their tasks with a reason ("The server shut
// down while this task was running."). Streams following those tasks get
// that final status-update; streams of tasks with no execution here end.
// Reads (tasks/get, resubscribe) keep working until Close. It returns the
// number of tasks failed because the grace period ended, and Close's
// error.
func (e *Engine) Shutdown(ctx context.Context) (int, error) {
	e.mu.Lock()
	e.draining.Store(true)
	e.mu.Unlock()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeBound)
	defer cancel()
	err := e.Close(cctx)
	return int(e.closeFailed.Load()), err
}

// Close stops the engine now: new messages are refused, every running
// execution is cancelled, the tasks they leave unfinished are failed with
// a reason, and Close waits for them and for the push delivery workers
// (bounded by ctx: ctx.Err() when it ends first); then the streams still
// open end. Use Shutdown for a grace period. Calling Close again waits
// again.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	e.draining.Store(true)
	e.closing.Store(true)
	e.mu.Unlock()
	if e.push != nil {
		e.push.close()
	}
	e.stopBase()
	done := make(chan struct{})
	go func() {
		e.wg.Wait()
		if e.push != nil {
			e.push.wg.Wait()
		}
		close(done)
	}()
	var err error
	select {
	case <-done:
		if e.leaser != nil {
			// Every execution here has ended (its task failed if it
			// was left unfinished): nothing of this engine's lease is
			// left to protect.
			e.leaseOnce.Do(func() { close(e.leaseDone) })
			_ = e.leaser.Release(ctx, e.runner)
		}
	case <-ctx.Done():
		err = ctx.Err()
		// Executions still running keep the lease until it expires.
		e.leaseOnce.Do(func() { close(e.leaseDone) })
	}
	e.closeOnce.Do(func() { close(e.streamsDone) })
	return err
}

func (e *Engine) lock(taskID string) *sync.Mutex {
	return &e.locks[maphash.String(e.seed, taskID)%uint64(len(e.locks))]
}

// statusEvent builds a status update for t with an optional agent text.
func (e *Engine) statusEvent(t a2a.Task, state a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
	st := a2a.TaskStatus{State: state, Timestamp: now()}
	if text != "" {
		m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart{Text: text})
		m.TaskID, m.ContextID = t.ID, t.ContextID
		st.Message = &m
	}
	return &a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: st, Final: state.Final()}
}

// errFold marks an event the state machine refused.
type errFold struct{ err error }

func (e errFold) Error() string { return e.err.Error() }

// create stores a new task whose first record is its snapshot and, under
// the task's lock, calls start (if not nil) with the stored snapshot. It
// returns store.ErrDuplicateMessage, with nothing stored or started, when
// one of msgIDs is already indexed for the agent.
func (e *Engine) create(ctx context.Context, agent, owner string, task a2a.Task, msgIDs []string, start func(store.TaskInfo)) (store.TaskInfo, error) {
	if e.async != nil && start != nil && e.leaser == nil {
		return e.createQueued(ctx, agent, owner, task, msgIDs, start)
	}
	l := e.lock(task.ID)
	l.Lock()
	defer l.Unlock()
	rec := store.Record{Seq: 1, Time: now(), Event: &task}
	if err := e.st.Append(ctx, store.Append{Agent: agent, Owner: owner, TaskID: task.ID, After: 0, Records: []store.Record{rec}, Snapshot: task, MessageIDs: msgIDs, Runner: e.runner}); err != nil {
		return store.TaskInfo{}, err
	}
	info := store.TaskInfo{Agent: agent, Owner: owner, Task: task, Seq: 1, Created: rec.Time, Updated: rec.Time}
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
	l := e.lock(task.ID)
	l.Lock()
	rec := store.Record{Seq: 1, Time: now(), Event: &task}
	res := e.async.AppendAsync(context.WithoutCancel(ctx), store.Append{Agent: agent, Owner: owner, TaskID: task.ID, After: 0, Records: []store.Record{rec}, Snapshot: task, MessageIDs: msgIDs, Runner: e.runner})
	info := store.TaskInfo{Agent: agent, Owner: owner, Task: task, Seq: 1, Created: rec.Time, Updated: rec.Time}
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
	if err := <-notify; err != nil {
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
	l := e.lock(taskID)
	l.Lock()
	defer l.Unlock()
	return e.updateLocked(ctx, taskID, nil, fn)
}

// updateLocked is update for a caller that holds the task's lock; msgIDs
// are indexed with the appended records.
// maxConflictRetries bounds how often updateLocked reads a task again
// after another process appended to it first (store.ErrConflict): each
// retry means one more append elsewhere in the meantime.
const maxConflictRetries = 16

func (e *Engine) updateLocked(ctx context.Context, taskID string, msgIDs []string, fn func(store.TaskInfo) ([]a2a.Event, error)) (store.TaskInfo, []store.Record, error) {
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
		t := now()
		for i, ev := range evs {
			if task, err = fold(task, ev); err != nil {
				return info, nil, errFold{err}
			}
			recs[i] = store.Record{Seq: info.Seq + int64(i) + 1, Time: t, Event: ev}
		}
		err = e.st.Append(ctx, store.Append{Agent: info.Agent, TaskID: taskID, After: info.Seq, Records: recs, Snapshot: task, MessageIDs: msgIDs, Runner: e.runner})
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
				// is superseded, see emit).
				ts.published.markForeign(math.MaxInt64)
			}
			e.mu.Unlock()
			continue
		}
		if err != nil {
			return info, nil, err
		}
		info.Task, info.Seq, info.Updated = task, info.Seq+int64(len(recs)), t
		e.mu.Lock()
		e.cacheLocked(taskID, info)
		e.mu.Unlock()
		e.publish(taskID, recs)
		if e.push != nil {
			e.push.appended(taskID, task.Status.State.Terminal())
		}
		return info, recs, nil
	}
}

// ---- queued agent appends ----

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
	t := now()
	var err error
	for i, ev := range evs {
		if task, err = fold(task, ev); err != nil {
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
	p.queue = append(p.queue, queued{recs: recs, terminal: task.Status.State.Terminal(), res: res})
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
			var ex *execution
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
			e.push.appended(taskID, q.terminal)
		}
	}
}

// ---- executions ----

// errShuttingDown is returned for new messages once Engine.Shutdown or
// Engine.Close has begun.
var errShuttingDown = &a2a.Error{Code: a2a.CodeInternalError, Message: "The server is shutting down; try again later"}

// owns reports whether ex is the task's current execution.
func (e *Engine) owns(taskID string, ex *execution) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return ex != nil && e.execLocked(taskID) == ex
}

// startLocked registers and starts an execution of req for the task; the
// caller holds the task's lock. An execution still registered for the task
// (one that left the task input-required and has not returned yet) is
// superseded: its context is cancelled and its updater refuses events.
//
// When inline is not nil, the execution is not started: *inline is set
// to the function that runs it, for the caller to call (after releasing
// the task's lock) on its own goroutine.
func (e *Engine) startLocked(h *Handler, info store.TaskInfo, req *Request, inline *func()) {
	id := info.Task.ID
	ctx, cancel := context.WithCancel(e.base)
	ex := &execution{agent: h.name, h: h, cancel: cancel}
	e.mu.Lock()
	if e.draining.Load() {
		e.mu.Unlock()
		cancel()
		_, _, _ = e.updateLocked(context.Background(), id, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
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
	ts.published = &publishedTail{seq: info.Seq} // everything up to it is published: no append is queued
	e.wg.Add(1)
	e.mu.Unlock()
	run := func() {
		defer e.wg.Done()
		defer cancel()
		t := &TaskUpdater{e: e, agent: h.name, owner: info.Owner, created: info.Created, taskID: id, ctxID: info.Task.ContextID, ex: ex}
		if h.opts.Attachments != nil {
			t.files = &fileSink{h: h, base: req.attachBase}
		}
		err := e.execute(ctx, h, req, t)
		e.finish(h, id, ex, err)
	}
	if inline != nil {
		*inline = run
		return
	}
	e.spawn(run)
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

func (e *Engine) execute(ctx context.Context, h *Handler, req *Request, t *TaskUpdater) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("agent panic: %v", r)
		}
	}()
	return h.agent.Execute(ctx, req, t)
}

// finish settles a task after its execution returned, if the execution
// still owns the task (it was not canceled or superseded).
func (e *Engine) finish(h *Handler, id string, ex *execution, execErr error) {
	l := e.lock(id)
	l.Lock()
	if !e.owns(id, ex) {
		l.Unlock()
		return
	}
	closing := e.closing.Load()
	foreign := false
	info, recs, err := e.updateLocked(context.Background(), id, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
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
		e.log.Info("execution ended: another process appended to its task", "agent", h.name, "task", id, "state", info.Task.Status.State)
	case execErr == nil:
	case closing && errors.Is(execErr, context.Canceled):
		e.log.Info("execution stopped by shutdown", "agent", h.name, "task", id)
	default:
		e.log.Error("agent execution failed", "agent", h.name, "task", id, "err", execErr)
	}
	if err != nil {
		e.log.Error("could not settle task after execution", "agent", h.name, "task", id, "err", err)
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
		ctx, cancel := context.WithTimeout(e.base, cancelHookTimeout)
		defer cancel()
		e.runCancelHook(ctx, h, info.Task)
	}
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

// emit appends an agent's event.
func (e *Engine) emit(ctx context.Context, t *TaskUpdater, ev a2a.Event) error {
	out, bad := t.prepare(ev)
	var after func() // runs once the task's lock is released
	defer func() {
		if after != nil {
			after()
		}
	}()
	l := e.lock(t.taskID)
	l.Lock()
	defer l.Unlock()
	if !e.owns(t.taskID, t.ex) {
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
				ex := t.ex
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
		info, _, err = e.updateLocked(ctx, t.taskID, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
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
			e.log.Info("execution stopped: another process appended to its task", "task", t.taskID, "agent", t.agent, "state", info.Task.Status.State)
			if canceledElsewhere(info.Task.Status.State) && !e.closing.Load() {
				h, task := t.ex.h, info.Task
				after = func() { e.runCancelHook(context.WithoutCancel(ctx), h, task) }
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

// failInvalidLocked fails a task whose agent broke the protocol and ends
// the execution; the caller holds the task's lock.
func (e *Engine) failInvalidLocked(t *TaskUpdater, reason string) {
	e.log.Error("agent emitted an invalid event; failing task", "agent", t.agent, "task", t.taskID, "reason", reason)
	_, _, err := e.updateLocked(context.Background(), t.taskID, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
		if cur.Task.Status.State.Terminal() {
			return nil, nil
		}
		return []a2a.Event{e.statusEvent(cur.Task, a2a.TaskStateFailed, "The agent produced an invalid event: "+reason)}, nil
	})
	if err != nil {
		e.log.Error("could not fail task", "task", t.taskID, "err", err)
	}
	e.mu.Lock()
	if ts := e.tasks[t.taskID]; ts != nil && ts.exec == t.ex {
		e.forgetExecLocked(t.taskID, ts)
	}
	e.mu.Unlock()
	t.ex.cancel()
}

// cancel cancels a task (A2A 0.3.0 §7.4): under the task's lock, the
// canceled status is appended and the running execution, if any, loses
// the task and sees its context cancelled; then the agent's Canceler hook
// runs (panics recovered, at most cancelHookTimeout).
func (e *Engine) cancel(ctx context.Context, h *Handler, taskID string) (store.TaskInfo, error) {
	l := e.lock(taskID)
	l.Lock()
	info, _, err := e.updateLocked(context.WithoutCancel(ctx), taskID, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
		if cur.Task.Status.State.Terminal() {
			return nil, a2a.ErrTaskNotCancelable.WithMessage("Task cannot be canceled: it is already %s", cur.Task.Status.State)
		}
		ev := e.statusEvent(cur.Task, a2a.TaskStateCanceled, "")
		if cm, ok := h.agent.(CancelMessenger); ok {
			ev.Status.Message = cancelMessage(cm, cur.Task)
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
	e.runCancelHook(ctx, h, info.Task)
	return info, nil
}

// runCancelHook runs the agent's Canceler, if it has one, for a task just
// ended by someone else than the agent, bounded by cancelHookTimeout; its
// error or panic is logged.
func (e *Engine) runCancelHook(ctx context.Context, h *Handler, task a2a.Task) {
	c, ok := h.agent.(Canceler)
	if !ok {
		return
	}
	cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelHookTimeout)
	defer stop()
	defer func() {
		if r := recover(); r != nil {
			e.log.Error("agent cancel hook panicked", "agent", h.name, "task", task.ID, "panic", r)
		}
	}()
	if err := c.Cancel(cctx, task); err != nil {
		e.log.Warn("agent cancel hook failed", "agent", h.name, "task", task.ID, "err", err)
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

// StopAgent fails every task of h's agent that has an execution running
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
func (e *Engine) StopAgent(ctx context.Context, h *Handler, reason string) (int, error) {
	agent := h.name
	e.mu.Lock()
	var ids []string
	for id, ts := range e.tasks {
		if ts.exec != nil && ts.exec.agent == agent {
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
		failed, err := e.stopTask(ctx, h, id, reason, func(s a2a.TaskState) bool { return !s.Terminal() })
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
				failed, err := e.stopTask(ctx, h, t.Task.ID, reason, a2a.TaskState.Interrupted)
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

// stopTask fails task id of h's agent with reason if its current state
// passes stop, ends its execution and runs the agent's Canceler (see
// StopAgent); failed reports whether it did.
func (e *Engine) stopTask(ctx context.Context, h *Handler, id, reason string, stop func(a2a.TaskState) bool) (failed bool, err error) {
	l := e.lock(id)
	l.Lock()
	info, _, err := e.updateLocked(context.WithoutCancel(ctx), id, nil, func(cur store.TaskInfo) ([]a2a.Event, error) {
		failed = false // the update may be tried again
		if !stop(cur.Task.Status.State) || cur.Agent != h.name {
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
		e.runCancelHook(ctx, h, info.Task)
	}
	return failed, nil
}

// ---- fan-out ----

type subscription struct {
	ch   chan store.Record
	wake chan struct{}
}

// publishedTail is what a task with an execution has published: up to
// seq, the last records of which are in tail (immutable once taken: a
// trim copies).
type publishedTail struct {
	seq  int64
	tail []store.Record
	// foreign: another process appended to the task after seq
	// (store.Watcher): seq and tail no longer tell what a subscriber
	// missed, until this engine publishes records up to foreignSeq, the
	// highest sequence number known appended elsewhere (its own append
	// then succeeded after the foreign one: it continues from the log's
	// end). Records of its own older than that (queued appends
	// committed before the foreign one) leave it set.
	foreign    bool
	foreignSeq int64
}

// markForeign records that another process appended to the task up to
// seq (math.MaxInt64: up to an unknown point); the caller holds mu.
func (p *publishedTail) markForeign(seq int64) {
	p.foreign = true
	p.foreignSeq = max(p.foreignSeq, seq)
}

// tailLen bounds publishedTail.tail.
const tailLen = 16

// subscribe registers a subscriber of the task's published records. It
// also tells what the subscriber missed, published before, when the
// engine knows it (the task has an execution here): known, with the
// records after `after` in missed (none when the subscriber is not
// behind). Otherwise the subscriber must read the log.
func (e *Engine) subscribe(taskID string, after int64) (s *subscription, missed []store.Record, known bool) {
	// A small buffer: a subscriber that falls behind is woken to re-read
	// the log, so the buffer only saves store reads, never events.
	s = &subscription{ch: make(chan store.Record, 4), wake: make(chan struct{}, 1)}
	e.mu.Lock()
	ts := e.stateLocked(taskID)
	ts.subs = append(ts.subs, s)
	p := e.publishedLocked(taskID)
	if p != nil && !p.foreign {
		switch {
		case p.seq <= after:
			known = true
		case len(p.tail) > 0 && p.tail[0].Seq <= after+1:
			known = true
			missed = p.tail[after+1-p.tail[0].Seq:]
		}
	}
	e.mu.Unlock()
	return s, missed, known
}

// publishedSeq is the last sequence number that the task's execution in
// this engine (running, or just ended) has published; here is false when
// the task has none here.
func (e *Engine) publishedSeq(taskID string) (seq int64, here bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.publishedLocked(taskID)
	if p == nil {
		return 0, false
	}
	return p.seq, true
}

func (e *Engine) unsubscribe(taskID string, s *subscription) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ts := e.tasks[taskID]
	if ts == nil {
		return
	}
	l := ts.subs
	if i := slices.Index(l, s); i >= 0 {
		last := len(l) - 1
		l[i] = l[last]
		l[last] = nil
		if last == 0 {
			ts.subs = nil
			e.tidyLocked(taskID, ts)
		} else {
			ts.subs = l[:last]
		}
	}
}

// publish hands durable records to the task's subscribers without ever
// blocking: a subscriber whose buffer is full is woken to re-read the log.
func (e *Engine) publish(taskID string, recs []store.Record) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.publishedLocked(taskID) // an ended task gets no events; if it did, its tail stays exact
	if p != nil && len(recs) > 0 {
		if p.foreign || recs[0].Seq != p.seq+1 {
			// Records of another process lie between: the tail starts
			// over with these.
			p.tail = nil
			if recs[len(recs)-1].Seq >= p.foreignSeq {
				p.foreign, p.foreignSeq = false, 0
			}
		}
		p.seq = recs[len(recs)-1].Seq
		if n := len(p.tail) + len(recs) - tailLen; n > 0 {
			p.tail = slices.Clone(p.tail[min(n, len(p.tail)):]) // taken tails stay as they were
		}
		p.tail = append(p.tail, recs[max(0, len(recs)-tailLen):]...)
	}
	ts := e.tasks[taskID]
	if ts == nil {
		return
	}
	for _, s := range ts.subs {
		for _, r := range recs {
			select {
			case s.ch <- r:
			default:
				select {
				case s.wake <- struct{}{}:
				default:
				}
			}
		}
	}
}

// follow calls yield with the task's records with Seq > after, in order
// and each once: first what the log holds, then live records as they are
// appended, until yield returns false, ctx ends or an error (passed to
// yield) occurs. more tells yield that the next record is already at hand,
// so a transport can send both together.
func (e *Engine) follow(ctx context.Context, taskID string, after int64, yield func(r store.Record, more bool, err error) bool) {
	sub, missed, known := e.subscribe(taskID, after)
	defer e.unsubscribe(taskID, sub)
	next := after
	// With a store that other processes append to, a stream that reads
	// the log (it does not know from this engine's execution what comes
	// next) first tells the store that this process follows the task:
	// another process's appends are then notified here, including those
	// of an execution there (store.Watcher.WatchTask). A stream fed by an
	// execution here needs no such thing while it is: an append by
	// another process ends or continues the task, and is notified to the
	// process that ran it; its wake-up reads the log, and watches first.
	watching := e.watcher == nil
	catchUp := func() bool {
		if !watching {
			if err := e.watcher.WatchTask(ctx, e.runner, taskID); err != nil {
				yield(store.Record{}, false, err)
				return false
			}
			watching = true
		}
		for {
			recs, err := e.st.Events(ctx, taskID, next, 256)
			if err != nil {
				yield(store.Record{}, false, err)
				return false
			}
			for i, r := range recs {
				if !yield(r, i < len(recs)-1, nil) {
					return false
				}
				next = r.Seq
			}
			if len(recs) < 256 {
				return true
			}
		}
	}
	// Records published before the subscription are in the log (or in
	// missed, when the engine has them); later ones reach the subscription.
	// soon reports whether another record reaches the subscription at once
	// after r: one is queued, or, when r does not end the stream, one is
	// queued after the running execution had one yield of the processor to
	// go on (a fast agent emits its events back to back, and a stream then
	// writes them together: one write, one TCP segment, one wake-up of the
	// reader instead of one per event).
	soon := func(r store.Record) bool {
		if len(sub.ch) > 0 {
			return true
		}
		if su, ok := r.Event.(*a2a.TaskStatusUpdateEvent); ok && (su.Final || su.Status.State.Final()) {
			return false
		}
		runtime.Gosched()
		return len(sub.ch) > 0
	}
	// With a store that other processes append to (store.Watcher), a
	// notification they failed to send (a process that died between an
	// append's commit and its notification) must not leave a stream
	// waiting forever: the log is read again every safetyReread.
	var reread <-chan time.Time
	if e.watched.Load() {
		t := time.NewTicker(safetyReread)
		defer t.Stop()
		reread = t.C
	}
	if known {
		for i, r := range missed {
			if !yield(r, i < len(missed)-1 || soon(r), nil) {
				return
			}
			next = r.Seq
		}
	} else if !catchUp() {
		return
	}
	for {
		select {
		case r := <-sub.ch:
			switch {
			case r.Seq <= next:
			case r.Seq == next+1:
				if !yield(r, soon(r), nil) {
					return
				}
				next = r.Seq
			default:
				if !catchUp() {
					return
				}
			}
		case <-sub.wake:
			if !catchUp() {
				return
			}
		case <-reread:
			if !catchUp() {
				return
			}
		case <-e.streamsDone:
			// The engine closed: what its executions appended last is
			// in the log (their final events among it); then the stream ends.
			watching = true // no need to hear of more
			catchUp()
			return
		case <-ctx.Done():
			return
		}
	}
}

// safetyReread is how often a stream reads its task's log again when
// other processes append to the store (see follow).
const safetyReread = 30 * time.Second

// StreamEvent is one event of a stream with its sequence number in the
// task's log (the SSE id). A snapshot Task carries the sequence of the last
// event folded into it.
type StreamEvent struct {
	Seq   int64
	Event a2a.Event
	// hold tells this package's transports that they may hold this
	// event back instead of sending it at once: the next event is
	// already at hand, or the stream ends right after this one. Sending
	// the events together (one write, one TCP segment) delays none of
	// them. False means "send now". A caller of the Handler's streaming
	// methods sends each event as it comes.
	hold bool
}

// stream yields the events of a task from a starting point until the task
// is final (terminal or interrupted): optionally the snapshot first, then
// every logged event after `after`, then live events. It ends after a final
// status-update that is not older than the snapshot it started from, or
// after replaying up to that snapshot when the snapshot itself is final (a
// status-update with final=true restating the current status is added
// when the replay did not end on one). Earlier final statuses (a previous
// input-required turn) do not end a replay.
func (e *Engine) stream(ctx context.Context, info store.TaskInfo, after int64, withSnapshot bool) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		t := info.Task
		finalNow := t.Status.State.Final()
		closing := func() {
			yield(StreamEvent{Seq: info.Seq, Event: &a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status, Final: true}, hold: true}, nil)
		}
		if withSnapshot {
			// An execution that starts with the stream may have events at
			// hand as soon as it had one yield of the processor: then the
			// snapshot waits for them, and they leave in one write.
			hold := finalNow
			if e.beforeSnapshotHold != nil {
				e.beforeSnapshotHold(t.ID)
			}
			if p, here := e.publishedSeq(t.ID); !hold && here {
				if p <= info.Seq {
					runtime.Gosched()
					p, _ = e.publishedSeq(t.ID)
				}
				hold = p > info.Seq
			}
			if !yield(StreamEvent{Seq: info.Seq, Event: &t, hold: hold}, nil) {
				return
			}
			after = info.Seq
		}
		if after >= info.Seq && finalNow {
			closing()
			return
		}
		e.follow(ctx, t.ID, after, func(r store.Record, more bool, err error) bool {
			if err != nil {
				yield(StreamEvent{}, err)
				return false
			}
			su, isStatus := r.Event.(*a2a.TaskStatusUpdateEvent)
			final := isStatus && su.Final
			last := final && r.Seq >= info.Seq
			replayEnd := r.Seq == info.Seq && finalNow
			if !yield(StreamEvent{Seq: r.Seq, Event: r.Event, hold: more || last || replayEnd}, nil) {
				return false
			}
			if last {
				return false
			}
			if replayEnd {
				if !final {
					closing()
				}
				return false
			}
			return true
		})
	}
}
