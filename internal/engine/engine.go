package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2abridge/a2abridge/internal/pushdelivery"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	"github.com/a2abridge/a2abridge/store"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Options configure an Engine (server.EngineOptions and, for Push and
// CheckPushURL, server.PushOptions document each).
type Options struct {
	Logger         *slog.Logger
	Push           *pushdelivery.Options // nil: push notifications disabled
	CheckPushURL   func(ctx context.Context, rawURL string) error
	Retention      time.Duration
	LeaseTime      time.Duration
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Runner         string
}

// DefaultLeaseTime is Options.LeaseTime's default.
const DefaultLeaseTime = 30 * time.Second

// Engine runs tasks on a Store: it appends each task's events to its
// ordered log (durably, before anyone sees them), folds them into the Task
// snapshot, enforces the state machine, runs agent executions, and fans
// new events out to streams. One Engine serves any number of agents. New
// makes it (recovering the store); Shutdown (with a grace period) or
// Close stops it.
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

	locks [64]sync.Mutex      // per-task append serialisation, striped by id
	tel   *telemetry.Provider // nil: telemetry off
	// unobserve ends what the engine observes for its telemetry (the
	// store's group commits, the push backlog); called by Close.
	unobserve func()
	push      *pushdelivery.Deliverer // nil when push notifications are disabled
	// checkURL checks a webhook URL (nil: every URL accepted).
	checkURL func(ctx context.Context, rawURL string) error

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
	async     store.GroupCommitter
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
	exec *Execution
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
	// (store.GroupCommitter), published in order once durable.
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
func (e *Engine) execLocked(id string) *Execution {
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

// New returns an Engine on st, recovered from a previous run and
// ready to serve. Recovery cannot be skipped: every task that st holds
// submitted, working or unknown (its execution died with the process
// that ran it, e.g. under kill -9) is failed with RecoveryMessage, so no
// client waits forever, and push notifications still pending are
// delivered (with opts.Push). When st is a store.Leaser (shared by
// several processes) and not a store.Exclusive that reports true, only
// the orphans are: the tasks whose process's lease expired (see
// Options.LeaseTime); the engine then holds a lease of its own,
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
func New(ctx context.Context, st store.Store, opts Options) (*Engine, error) {
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
	e.runner = opts.Runner
	if e.runner == "" {
		e.runner = a2a.NewID()
	}
	tel, err := telemetry.New(opts.TracerProvider, opts.MeterProvider)
	if err != nil {
		stop()
		return nil, fmt.Errorf("server: telemetry: %w", err)
	}
	e.tel = tel
	e.unobserve = func() {}
	if co, ok := st.(store.CommitObserver); ok && tel != nil {
		co.ObserveCommits(tel.CommitBatch)
		e.unobserve = func() { co.ObserveCommits(nil) }
	}
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
	e.async, _ = st.(store.GroupCommitter)
	e.leaseDone = make(chan struct{})
	e.leaseTime = opts.LeaseTime
	if e.leaseTime <= 0 {
		e.leaseTime = DefaultLeaseTime
	}
	if opts.Push != nil {
		e.push = pushdelivery.New(pushdelivery.Env{Base: e.base, Log: e.log, Runner: e.runner, Store: st, Shared: e.leaser != nil, Tel: e.tel}, *opts.Push)
		e.checkURL = opts.CheckPushURL
		stopBacklog, unobserve := e.push.ObserveBacklog(), e.unobserve
		e.unobserve = func() { stopBacklog(); unobserve() }
	}
	if tc, ok := st.(store.TaskCounter); ok && tel != nil {
		stopTasks, unobserve := tel.ObserveTasks(newTaskCounts(tc).observe), e.unobserve
		e.unobserve = func() { stopTasks(); unobserve() }
	}
	if err := e.recover(ctx); err != nil {
		stop()
		e.unobserve()
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

// PushEnabled reports whether push notifications are enabled.
func (e *Engine) PushEnabled() bool { return e.push != nil }

// RecoveryMessage is the status message of tasks found running by New,
// or left running by another process whose lease expired
// (Options.LeaseTime): their executions died with that process.
const RecoveryMessage = "The server stopped while this task was running; the task cannot be resumed."

// recover fails the tasks a process that stopped left submitted, working
// or unknown, with RecoveryMessage: with a store.Leaser, the orphans (after
// taking this engine's lease: the other processes' running tasks are left
// alone); otherwise every such task. Then it starts the delivery of
// pending push notifications (New).
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
		if err := e.push.Start(ctx); err != nil {
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
				e.push.Sweep(ctx)
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
		e.push.Close()
	}
	e.stopBase()
	done := make(chan struct{})
	go func() {
		e.wg.Wait()
		if e.push != nil {
			e.push.Wait()
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
	e.unobserve()
	return err
}

// Lock is the lock of task taskID (striped): held around a read of the
// task and the appends that follow it (the package doc's lock order).
func (e *Engine) Lock(taskID string) *sync.Mutex {
	return &e.locks[maphash.String(e.seed, taskID)%uint64(len(e.locks))]
}

// statusEvent builds a status update for t with an optional agent text
// (StatusEvent).
func (e *Engine) statusEvent(t a2a.Task, state a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
	return StatusEvent(t, state, text)
}

// StatusEvent builds a status update of t to state, stamped Now, with
// text, if not "", as an agent message of the task.
func StatusEvent(t a2a.Task, state a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
	st := a2a.TaskStatus{State: state, Timestamp: Now()}
	if text != "" {
		m := a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart(text))
		m.TaskID, m.ContextID = t.ID, t.ContextID
		st.Message = &m
	}
	return &a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: st, Final: state.Final()}
}

// Now is the engine clock in UTC, to the microsecond: the wire formats
// write milliseconds, but the stores keep more, so that ListTasks (A2A 1.0
// §3.1.4) orders tasks whose status changed within one millisecond as
// they changed.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// ErrTaskClosed is returned by Emit once the task has reached a terminal
// state, or is no longer the execution's.
var ErrTaskClosed = errors.New("a2abridge: task is in a terminal state")

// ErrInvalidEvent is returned by Emit when the agent emitted an event
// that breaks the task state machine or belongs to another task; the task
// has then been failed.
var ErrInvalidEvent = errors.New("a2abridge: invalid event from agent; task failed")

// Store is the store the engine runs on.
func (e *Engine) Store() store.Store { return e.st }

// Log is the engine's logger.
func (e *Engine) Log() *slog.Logger { return e.log }

// Telemetry is the engine's telemetry; nil when off.
func (e *Engine) Telemetry() *telemetry.Provider { return e.tel }

// Push is the engine's push deliverer; nil when push notifications are
// disabled.
func (e *Engine) Push() *pushdelivery.Deliverer { return e.push }

// CheckPushURL checks a webhook URL with Options.CheckPushURL; nil when
// there is none.
func (e *Engine) CheckPushURL(ctx context.Context, rawURL string) error {
	if e.checkURL == nil {
		return nil
	}
	return e.checkURL(ctx, rawURL)
}

// Draining reports whether the engine refuses new messages (Shutdown,
// Close).
func (e *Engine) Draining() bool { return e.draining.Load() }

// GroupCommitter is the store as a store.GroupCommitter, whose appends
// are queued; nil when it appends at once.
func (e *Engine) GroupCommitter() store.GroupCommitter { return e.async }

// CachedTask returns the snapshot of task id that the engine keeps while
// it runs the task here, and whether it keeps one.
func (e *Engine) CachedTask(id string) (store.TaskInfo, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ts := e.tasks[id]; ts != nil && ts.cached {
		return ts.snap, true
	}
	return store.TaskInfo{}, false
}
