// Package engine runs tasks on a store: every task is an ordered, durable
// log of events whose fold is the Task. Three parts meet at each task's
// state (one taskState per task this process runs or streams follow),
// each in a file of its own:
//
//   - the executor (executor.go) starts an agent's execution for an
//     accepted message, settles the task when it returns, and stops it
//     when the task is ended by someone else (a cancel here, StopAgent,
//     or another replica's append seen through a store.Watcher);
//   - the task-log writer (tasklog.go) is the one write path of every
//     event: folded into the snapshot (the state machine refuses what
//     does not fit), appended to the store, and only then published;
//     with a store.GroupCommitter an execution's appends are queued and
//     published in order as they become durable;
//   - the fan-out (fanout.go) hands published events to the task's
//     subscribers, and wakes them when another process appended, so that
//     they read the log from where they are.
//
// engine.go holds the state, recovery, leases and the engine's life;
// retention.go the sweep of finished tasks. The agent side of an
// execution (server.Agent, its TaskUpdater) is the caller's: the engine
// runs a Runner it is given with the Execution handle, and calls an
// agent's Hooks.
//
// Lock order (take them in this order, never the reverse):
//
//  1. the task's lock (Lock, striped by task id): held around a read of
//     the snapshot and the append that follows it, so a task's appends
//     are serialised in this process (across processes, the store's
//     expected sequence number refuses the loser, which reads the task
//     again);
//  2. Engine.mu: the task states, the message-id claims, the ended
//     tails; held only for map work, never across a store call or an
//     agent call;
//  3. a pipe's mutex (the queued appends of one task).
//
// The push deliverer's mutex may be taken under the task's lock, never
// under Engine.mu or with one of the others held after it. Subscribers
// are handed events under Engine.mu without blocking: a subscriber whose
// buffer is full is woken to re-read the log instead. Agent code runs
// with no engine lock held, except Hooks.CancelMessage, which runs under
// the task's lock and must not call back into the engine.
package engine
