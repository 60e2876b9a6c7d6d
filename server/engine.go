package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/a2abridge/a2abridge/internal/engine"
	"github.com/a2abridge/a2abridge/internal/pushdelivery"
	"github.com/a2abridge/a2abridge/store"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
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
	// store.Leaser (PostgreSQL replicas): each Engine holds
	// a lease on the store for 4/5 of LeaseTime, renewed every fifth of
	// it, and every fifth of it fails with RecoveryMessage the orphans
	// it finds (unfinished tasks whose runner's lease expired; those of
	// its own executions excepted). So the tasks of a process that died
	// are failed within LeaseTime of its last renewal, by whichever
	// process looks first. Zero (or negative) means 30 s. With a store
	// one process owns (memory, SQLite), the tasks left unfinished are
	// failed at start instead.
	LeaseTime time.Duration
	// TracerProvider, if set, makes the engine's spans: a
	// server span per A2A request (continuing the caller's W3C
	// traceparent), with child spans for the agent's execution (also
	// when it runs on a worker goroutine; its context, carrying the
	// span, is the one Agent.Execute gets, so the calls an agent makes
	// with it join the trace) and for each commit to a durable store that
	// a request or an execution waits for; each push notification
	// delivery attempt is a client span (its traceparent goes to the
	// webhook), in the trace of the request that started the task's
	// latest execution: the store keeps its traceparent with the task
	// (store.Append.Trace), so another replica, or this engine after a
	// restart, joins that trace too, and a request about the task in
	// another trace links to it. Internal errors carry the trace id in
	// their data. nil: no spans, at no cost.
	TracerProvider trace.TracerProvider
	// MeterProvider, if set, records the engine's metrics: request
	// durations (rpc.server.call.duration, s, by method, binding,
	// version, agent and outcome), open streams and their events, agent
	// execution durations, durable store commit durations and push
	// delivery durations, and the store's tasks by agent and state
	// (a2abridge.tasks, from a store.TaskCounter; the README's
	// Observability section lists them with their units). nil: no
	// metrics.
	MeterProvider metric.MeterProvider
	// Runner names this engine in the store: the runner of its appends
	// (store.Append.Runner) and the holder of its lease when the store is
	// a store.Leaser (for PostgreSQL, the id in its replicas table).
	// Engines that share a store need distinct runners. "" means a new
	// random id (a2a.NewID); a caller that sets it knows the id before
	// the engine starts (serve --replica puts it in every log line).
	Runner string
}

// DefaultLeaseTime is EngineOptions.LeaseTime's default: 30 s.
const DefaultLeaseTime = engine.DefaultLeaseTime

// Engine runs tasks on a Store: it appends each task's events to its
// ordered log (durably, before anyone sees them), folds them into the Task
// snapshot, enforces the state machine, runs agent executions, and fans
// new events out to streams (package internal/engine, whose doc has its
// three parts and the lock order). One Engine serves any number of
// agents (AgentHandlers). NewEngine makes it (recovering the store);
// Shutdown (with a grace period) or Close stops it.
type Engine struct {
	e *engine.Engine
}

// RecoveryMessage, "The server stopped while this task was running; the
// task cannot be resumed.", is the status message of tasks found running
// by NewEngine, or left running by another process whose lease expired
// (EngineOptions.LeaseTime): their executions died with that process.
const RecoveryMessage = engine.RecoveryMessage

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
	o := engine.Options{Logger: opts.Logger, Retention: opts.Retention, LeaseTime: opts.LeaseTime,
		TracerProvider: opts.TracerProvider, MeterProvider: opts.MeterProvider, Runner: opts.Runner}
	if p := opts.Push; p != nil {
		o.Push = &pushdelivery.Options{Client: p.Client, GiveUpAfter: p.GiveUpAfter, RetryBase: p.RetryBase, RetryMax: p.RetryMax}
		if p.Signer != nil {
			o.Push.Signer = p.Signer
		}
		o.CheckPushURL = p.CheckURL
	}
	e, err := engine.New(ctx, st, o)
	if err != nil {
		return nil, err
	}
	return &Engine{e: e}, nil
}

// PushEnabled reports whether push notifications are enabled
// (EngineOptions.Push).
func (e *Engine) PushEnabled() bool { return e.e.PushEnabled() }

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
	return e.e.Shutdown(ctx)
}

// Close stops the engine now: new messages are refused, every running
// execution is cancelled, the tasks they leave unfinished are failed with
// a reason, and Close waits for them and for the push delivery workers
// (bounded by ctx: ctx.Err() when it ends first); then the streams still
// open end. Use Shutdown for a grace period. Calling Close again waits
// again.
func (e *Engine) Close(ctx context.Context) error {
	return e.e.Close(ctx)
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
func (e *Engine) StopAgent(ctx context.Context, h *AgentHandler, reason string) (int, error) {
	return e.e.StopAgent(ctx, h.hooks, reason)
}
