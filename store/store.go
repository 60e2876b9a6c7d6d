// Package store defines where a2abridge keeps tasks: each task is an
// append-only, ordered log of events with per-task sequence numbers 1, 2,
// 3…, plus the folded Task snapshot, written atomically with the events.
//
// Implementations: store/memory (tests, --memory) and store/sqlite (the
// durable default). An implementation must make a successful Append durable
// before it returns: the server acknowledges nothing to a client before that.
package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
)

// Errors returned by Store implementations.
var (
	// ErrNotFound: no task with that id.
	ErrNotFound = errors.New("store: task not found")
	// ErrConflict: the task's last sequence number is not the one the
	// append expected (another writer appended first), or a task with the
	// id already exists on create.
	ErrConflict = errors.New("store: sequence conflict")
	// ErrDuplicateMessage: the (agent, messageId) pair is already indexed.
	ErrDuplicateMessage = errors.New("store: duplicate messageId")
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("store: closed")
	// ErrInvalidCursor: a TaskQuery's Cursor is not one that the store
	// returned (TaskPage.Next) for a query with the same filters.
	ErrInvalidCursor = errors.New("store: invalid cursor")
)

// Record is one entry of a task's event log. Seq is the record's position
// (1, 2, 3… per task); a zero Seq in an Append is filled in by the store, a
// non-zero one must be the right position. A zero Time is set to the time of
// the Append. Event is one of *a2a.Task (the
// creation snapshot), *a2a.Message (a message appended to history),
// *a2a.TaskStatusUpdateEvent or *a2a.TaskArtifactUpdateEvent. Records are
// immutable once appended: neither the store nor its readers modify them.
type Record struct {
	Seq   int64
	Time  time.Time
	Event a2a.Event
}

// TaskInfo is a task's folded snapshot with its bookkeeping. Callers must
// not modify what Task references (slices, maps): it may be shared with the
// store and other readers.
type TaskInfo struct {
	// Agent is the name of the agent that owns the task.
	Agent string
	// Owner is the subject of the authenticated principal that created the
	// task ("" when the agent has no authentication).
	Owner string
	// Task is the fold of records 1..Seq.
	Task a2a.Task
	// Seq is the sequence number of the last record folded into Task.
	Seq int64
	// Created and Updated are the store's clock at the first and the last
	// Append, in UTC.
	Created time.Time
	Updated time.Time
	// Trace is the task's trace context: the W3C traceparent
	// ("00-{trace-id}-{parent-id}-{flags}", 55 characters) of the span
	// that started its latest execution, as the last Append that set
	// one gave it ("" when none did, or the store keeps none).
	Trace string
}

// Append is one atomic write: Records (numbered After+1, After+2, …) are
// added to task TaskID's log and Snapshot becomes the task's snapshot.
// Snapshot must be the fold of the task's records 1..After+len(Records)
// (as the engine computes it): a store may keep it as it is, or keep only
// some snapshots as checkpoints and fold the records after one when it
// reads the task, so that an append costs in proportion to its records,
// not to the task. After == 0 creates the task (Agent must be set). MessageIDs, if any, are
// indexed under (Agent, messageId) → TaskID in the same transaction.
// Invariants (violations are errors, nothing written): TaskID non-empty,
// Snapshot.ID == TaskID, at least one record, After >= 0, and when After > 0
// an Agent that is empty or the task's own. Records and Snapshot may be
// kept by the store as they are: once Append is called, the caller must not
// modify them or anything they reference (slices, arrays, maps).
type Append struct {
	Agent      string
	Owner      string // on create only: the creating principal's subject
	TaskID     string
	After      int64
	Records    []Record
	Snapshot   a2a.Task
	MessageIDs []string
	// Runner, when set, names the process whose execution appends to
	// the task (an Engine's runner id): a Leaser records it as the
	// task's runner, and reports the task as an orphan when it is left
	// unfinished and that runner's lease expires. Stores that do not
	// implement Leaser ignore it.
	Runner string
	// Trace, when set, becomes the task's trace context (TaskInfo.Trace):
	// the W3C traceparent of the span under which the execution that
	// this append starts runs (so that a cancel, a continuation or a
	// push delivery made by another process, or after a restart, joins
	// that trace). "" keeps the one stored. At most MaxTraceLen bytes.
	Trace string
}

// MaxTraceLen bounds Append.Trace: a W3C traceparent (version 00) is 55
// characters; a later version may add fields.
const MaxTraceLen = 256

// Store keeps task logs and snapshots. All methods are safe for concurrent use.
type Store interface {
	// Append writes a atomically and durably. It returns ErrConflict when
	// the task's current last sequence is not a.After (or the task exists
	// when a.After == 0), ErrNotFound when a.After > 0 and the task does
	// not exist, ErrDuplicateMessage when a message id is already indexed
	// for a.Agent. On error nothing is written.
	Append(ctx context.Context, a Append) error
	// Task returns the task's snapshot, or ErrNotFound.
	Task(ctx context.Context, taskID string) (TaskInfo, error)
	// Events returns up to limit records with Seq > after, in order
	// (limit <= 0 means no limit). Unknown task: ErrNotFound.
	Events(ctx context.Context, taskID string, after int64, limit int) ([]Record, error)
	// MessageTask returns the task id indexed for (agent, messageID), or
	// "" and no error when there is none.
	MessageTask(ctx context.Context, agent, messageID string) (string, error)
	// Unfinished returns every task whose state is submitted, working or
	// unknown (those that were being executed), oldest first.
	Unfinished(ctx context.Context) ([]TaskInfo, error)
	// SetPushConfig registers c (whose ID must be set) for the task,
	// replacing a config with the same ID (its delivery cursor is kept);
	// a new config starts with Delivered = cursor. ErrNotFound for an
	// unknown task.
	SetPushConfig(ctx context.Context, taskID string, c a2a.PushNotificationConfig, cursor int64) error
	// PushConfigs returns the task's configs in registration order (none:
	// an empty slice, no error, also for an unknown task).
	PushConfigs(ctx context.Context, taskID string) ([]PushConfig, error)
	// DeletePushConfig removes one config; ErrNotFound when absent.
	DeletePushConfig(ctx context.Context, taskID, configID string) error
	// MarkPushDelivered moves the config's cursor forward to seq (never
	// back); a config deleted meanwhile is not an error.
	MarkPushDelivered(ctx context.Context, taskID, configID string, seq int64) error
	// PendingPush returns every config whose cursor is behind its task's
	// last sequence number: deliveries owed, e.g. after a restart.
	PendingPush(ctx context.Context) ([]PushConfig, error)
	// ListTasks returns one page of the tasks that q selects (A2A 1.0
	// §3.1.4), most recently updated first: in descending order of their
	// snapshot's Status.Timestamp (a task without one comes last), ties
	// by descending task id. Paging is by keyset: q.Cursor is the
	// previous page's Next, and a page starts after the last task of the
	// previous one, so that tasks created meanwhile (which come first)
	// neither repeat nor hide tasks on later pages; a task whose status
	// changes while a client pages through may move to a page already
	// read, or appear twice. The work done is about q's page of tasks,
	// not every task, apart from counting Total. It returns
	// ErrInvalidCursor for a Cursor that is not a Next of a query with
	// the same Agent, Owner, ContextID, State and StatusAfter.
	ListTasks(ctx context.Context, q TaskQuery) (TaskPage, error)
	// DeleteFinished deletes tasks in a terminal state (completed,
	// canceled, failed, rejected) whose last append was before `before`,
	// oldest first, with their records, message index entries and push
	// notification configs (retention). A task with push notifications
	// still owed (PendingPush) is kept until they are delivered or given
	// up. Each call does a bounded amount of work, about limit tasks
	// (limit <= 0: 256) and fewer when they are large, so that appends are
	// never held up for long; it returns how many tasks it deleted and
	// more = true when candidates remain (call it again).
	DeleteFinished(ctx context.Context, before time.Time, limit int) (deleted int, more bool, err error)
	// Close releases resources; later calls may return ErrClosed.
	Close() error
}

// TaskQuery selects the tasks of ListTasks: those of agent Agent created
// by owner Owner (both matched exactly; "" is the owner of tasks created
// without authentication; with AllOwners, Owner is ignored and tasks of
// every owner are selected), and, when set, in context ContextID, in state
// State and whose status timestamp is at or after StatusAfter (A2A 1.0
// ListTasksRequest.status_timestamp_after: "greater than or equal"; a
// task without a status timestamp never is). Zero values of ContextID,
// State and StatusAfter do not filter.
type TaskQuery struct {
	Agent string
	Owner string
	// AllOwners selects the agent's tasks whatever their owner: for the
	// server's own housekeeping (an agent removed), never for a caller's
	// A2A ListTasks. Its work is about every task of the agent that the
	// other filters select (they are read and sorted), not one page.
	AllOwners   bool
	ContextID   string
	State       a2a.TaskState
	StatusAfter time.Time
	// Limit is the most tasks on the page: <= 0 means DefaultTaskLimit,
	// and more than MaxTaskLimit means MaxTaskLimit.
	Limit int
	// Cursor is the previous page's TaskPage.Next; "" for the first page.
	Cursor string
}

// ListTasks page sizes (TaskQuery.Limit).
const (
	DefaultTaskLimit = 50
	MaxTaskLimit     = 1000
)

// PageLimit returns q.Limit resolved as documented at TaskQuery.Limit.
func (q *TaskQuery) PageLimit() int {
	switch {
	case q.Limit <= 0:
		return DefaultTaskLimit
	case q.Limit > MaxTaskLimit:
		return MaxTaskLimit
	}
	return q.Limit
}

// TaskPage is one page of ListTasks: up to the query's limit of tasks in
// order, Next the cursor of the following page ("" on the last one), and
// Total the number of tasks the query's filters select, ignoring paging.
type TaskPage struct {
	Tasks []TaskInfo
	Next  string
	Total int
}

// PushConfig is a push notification config registered for a task, with
// its delivery cursor: the sequence number of the last task event whose
// notification was delivered (or given up on).
type PushConfig struct {
	TaskID    string
	Config    a2a.PushNotificationConfig
	Delivered int64
	Created   time.Time
}

// Validate checks the shape of a, independently of any store's contents:
// the invariants documented at Append. It returns ErrDuplicateMessage when
// a message id is repeated within a, and a plain error otherwise. Stores
// call it before writing anything.
func (a *Append) Validate() error {
	switch {
	case a.TaskID == "":
		return errors.New("store: append: empty task id")
	case a.After < 0:
		return fmt.Errorf("store: append: negative After %d", a.After)
	case a.After == 0 && a.Agent == "":
		return errors.New("store: append: creating a task requires an agent")
	case len(a.Records) == 0:
		return errors.New("store: append: no records")
	case a.Snapshot.ID != a.TaskID:
		return fmt.Errorf("store: append: snapshot id %q is not task id %q", a.Snapshot.ID, a.TaskID)
	case len(a.Trace) > MaxTraceLen:
		return fmt.Errorf("store: append: trace context of %d bytes (at most %d)", len(a.Trace), MaxTraceLen)
	}
	for i, r := range a.Records {
		if r.Event == nil {
			return fmt.Errorf("store: append: record %d has no event", i)
		}
		if want := a.After + 1 + int64(i); r.Seq != 0 && r.Seq != want {
			return fmt.Errorf("store: append: record %d has seq %d, want %d", i, r.Seq, want)
		}
	}
	for i, id := range a.MessageIDs {
		if id == "" {
			return errors.New("store: append: empty message id")
		}
		if slices.Contains(a.MessageIDs[:i], id) {
			return ErrDuplicateMessage
		}
	}
	return nil
}

// AgentSpec is an agent registered at runtime (the admin API of `serve`):
// its name and its specification, an opaque document (JSON) that the
// registrar interprets.
type AgentSpec struct {
	Name    string
	Spec    []byte
	Created time.Time // the store's clock at the first PutAgent, UTC
	Updated time.Time // and at the last one
}

// AgentRegistry is optionally implemented by a Store that persists agents
// registered while a server runs, so that they are back after a restart.
// Memory and SQLite implement it.
type AgentRegistry interface {
	// PutAgent stores spec under name, replacing a spec of that name,
	// durably before it returns.
	PutAgent(ctx context.Context, name string, spec []byte) error
	// DeleteAgent removes the spec of name; ErrNotFound when there is
	// none. The agent's tasks are not touched.
	DeleteAgent(ctx context.Context, name string) error
	// Agents returns every stored spec, ordered by name.
	Agents(ctx context.Context) ([]AgentSpec, error)
}

// Attachment is a file a client sent by value (a Raw part)
// that the server keeps and serves by URL instead
// (server.AttachmentOptions): its unguessable ID, the agent
// and owner key (tenant and principal, as TaskInfo.Owner) it belongs to,
// the task whose message carried it, the part's media type and file
// name, and the content.
type Attachment struct {
	ID        string
	Agent     string
	Owner     string
	TaskID    string
	MediaType string
	Filename  string
	Bytes     []byte
	Created   time.Time // the store's clock at PutAttachment, UTC
}

// AttachmentStore is optionally implemented by a Store that keeps
// attachments. Memory, SQLite and PostgreSQL implement it. An attachment
// is deleted with its task (DeleteFinished), or by DeleteAttachments.
type AttachmentStore interface {
	// PutAttachment stores a durably before it returns (a.Created is
	// set by the store). ErrConflict when an attachment with a.ID
	// exists; a plain error when a.ID or a.Agent is empty. Bytes may be
	// kept by the store: the caller must not modify them afterwards.
	PutAttachment(ctx context.Context, a Attachment) error
	// Attachment returns the attachment with id, or ErrNotFound. The
	// caller must not modify its Bytes.
	Attachment(ctx context.Context, id string) (Attachment, error)
	// DeleteAttachments deletes the attachments with the given ids,
	// durably before it returns; ids with no attachment are ignored (no
	// ids: nil, nothing done). The server calls it for files it stored
	// for a message that was then not accepted (the task's create or
	// update failed, or the message was a concurrent retry), whose
	// attachments retention would otherwise never delete.
	DeleteAttachments(ctx context.Context, ids []string) error
}

// ValidateAttachment checks the fields PutAttachment requires.
func ValidateAttachment(a *Attachment) error {
	switch {
	case a.ID == "":
		return errors.New("store: attachment: empty id")
	case a.Agent == "":
		return errors.New("store: attachment: empty agent")
	}
	return nil
}

// TaskCounter is optionally implemented by a Store that counts its
// tasks by agent and state (the a2abridge.tasks gauge of the server's
// telemetry). Memory, SQLite and PostgreSQL implement it.
type TaskCounter interface {
	// CountTasks returns how many tasks each agent has in each state
	// (states without tasks left out), in no particular order. Its work
	// is about the number of tasks (a scan of an index, or of memory):
	// callers bound how often they call it.
	CountTasks(ctx context.Context) ([]TaskCount, error)
}

// TaskCount is a number of tasks of one agent in one state.
type TaskCount struct {
	Agent string
	State a2a.TaskState
	Tasks int64
}

// Pinger is optionally implemented by a Store that depends on something
// that can become unreachable while the process runs (a database server):
// Ping reports whether the store answers now (nil), or why not, bounded
// by ctx. A readiness probe asks it (server.HealthHandler).
// PostgreSQL and SQLite implement it; memory has no need.
type Pinger interface {
	Ping(ctx context.Context) error
}

// GroupCommitter is optionally implemented by a Store that groups appends
// into transactions (group commit: SQLite, PostgreSQL). AppendAsync is
// Append without waiting: it validates a, queues it and returns at once a
// buffered channel that receives the outcome, with Append's errors, once
// the append is durable or has failed. Appends queued for one task are
// applied in the order they were queued, so a caller may queue After = n
// and After = n+k before the first completes; a failed append makes the
// later ones that build on it fail (with ErrConflict, or with its own
// error when the store applied them together), never apply out of order.
// The server's engine queues an agent's events so (the agent goes on while
// they commit; they are published once durable), and a task's create with
// them when the store is one process's own; a store without it appends at
// once, and the engine's path is the same with a queue of one.
type GroupCommitter interface {
	AppendAsync(ctx context.Context, a Append) <-chan error
}

// CommitObserver is optionally implemented by a Store that groups
// appends into transactions (group commit: SQLite, PostgreSQL):
// ObserveCommits sets f, called after each such transaction (committed or
// not) with the number of appends it held and its duration, from its
// start to its COMMIT or ROLLBACK. One f per store; nil removes it. The
// engine reports it as a2abridge.store.commit.batch_size.
// f must return quickly: the store's writer calls it.
type CommitObserver interface {
	ObserveCommits(f func(appends int, d time.Duration))
}

// Leaser is optionally implemented by a Store that several processes
// share (replicas of one server on one database): each
// process holds a lease, renewed while it runs, and the tasks it left
// unfinished when its lease expired (it died, or lost the database for
// that long) are orphans that any other process fails. PostgreSQL
// implements it, and a memory.Replica in process. A store that one process owns (memory, SQLite) has no
// need: every unfinished task it holds at start is an orphan
// (Store.Unfinished).
type Leaser interface {
	// Renew extends runner's lease to ttl from now, by the store's
	// clock (the database's, one for every process, whatever their own
	// clocks say).
	Renew(ctx context.Context, runner string, ttl time.Duration) error
	// Orphans returns up to limit (<= 0: 256) tasks that are submitted,
	// working or unknown and whose runner (Append.Runner of the last
	// append that set one; none for a task no append named one for)
	// holds no lease that has not expired, oldest first.
	Orphans(ctx context.Context, limit int) ([]TaskInfo, error)
	// Release ends runner's lease now: a process that stops cleanly,
	// once its executions have ended.
	Release(ctx context.Context, runner string) error
}

// Exclusive is optionally implemented by a Store that several processes
// may share (a Leaser) to tell whether this handle has it to itself:
// Exclusive returns true when no other process appends to the store while
// the handle is open (postgres.Options.Exclusive: every other Store that
// takes the schema's lock is refused while it is held, and the leases of
// earlier processes are ended when it is taken). A server's
// engine then treats the store as one that one process owns, as memory
// and SQLite: every unfinished task it holds at start is an orphan, no
// lease is held and no push delivery claimed, and a task's create may be
// queued (a group commit) with its agent's first events when the store
// offers that.
type Exclusive interface {
	Exclusive() bool
}

// PushClaimer is optionally implemented by a Store that several processes
// share: the deliveries of one push notification config are
// made by one process at a time, the one that claims the config, so that
// N processes do not notify a webhook N times and each config's
// notifications stay in order. A claim lasts as long as its runner's
// lease (Leaser): when the runner stops or dies, another process claims
// the config and goes on from its cursor (at least once: a notification
// sent just before the death may be sent again). PostgreSQL implements
// it (its methods fail with postgres.ErrClosed after Close, or with the
// database's error), and a memory.Replica in process. A store one process owns needs no claims.
type PushClaimer interface {
	// ClaimPush makes runner the claimant of the task's config, unless
	// another runner whose lease has not expired holds it (false). A
	// config that does not exist (deleted) is not claimed (false).
	ClaimPush(ctx context.Context, runner, taskID, configID string) (bool, error)
	// ReleasePush ends runner's claim on the config (if it holds it);
	// pending reports whether the config's cursor is behind its task's
	// last sequence number once released: a delivery owed that a claim
	// refused meanwhile, which the caller then claims again.
	ReleasePush(ctx context.Context, runner, taskID, configID string) (pending bool, err error)
	// UnclaimedPush returns up to limit (<= 0: 256) configs whose cursor
	// is behind their task's last sequence number and that no runner
	// other than runner claims with an unexpired lease, oldest first:
	// deliveries that a stopped process left, that no process has
	// started, or that runner claims (its claim outlived its worker).
	UnclaimedPush(ctx context.Context, runner string, limit int) ([]PushConfig, error)
}

// Watcher is optionally implemented by a Store that several processes
// share (replicas of one server on one database): it tells a
// process about the appends the others commit, so that streams and
// resubscriptions on one replica follow tasks that another one runs.
// PostgreSQL implements it with LISTEN/NOTIFY (when opened with
// postgres.Options.Notify), and a memory.Replica in process, for the other
// Replicas of its memory.Store. Appends made through the Store itself are
// not reported: the engine publishes those in process.
//
// Which appends are reported: an append by a process that was not the
// task's runner before it (Append.Runner of the last append that named
// one; a cancel, a continuation or an orphan's sweep made elsewhere),
// or one naming no runner, reaches every process; an append by the
// task's runner (its execution's events) reaches only the processes
// that called WatchTask for the task. A process that runs a task hears
// of every append it must (another process can only end or continue the
// task); one that follows a task it does not run calls WatchTask before
// it reads the task's log.
type Watcher interface {
	// WatchTask makes the appends other processes than runner commit to
	// the task from now on reported to runner's Watch (for as long as
	// the store keeps the task, or until the task is terminal: it gets
	// no appends then): an append committed before WatchTask returns is
	// in the log read after it. An unknown task is no error.
	WatchTask(ctx context.Context, runner, taskID string) error

	// Watch calls fn for the appends other processes commit, until ctx
	// ends or the Store is closed, then returns. Calls come from one
	// goroutine, in the order the notifications arrive; fn must not
	// block. A Change with Resync set (at the start, and after every
	// reconnection) means that notifications may have been missed: every
	// follower must read the log again. Delivery is at most once and
	// may lag the commit; a Change never precedes it.
	Watch(ctx context.Context, fn func(Change))
}

// Change is one notification of a Watcher: task TaskID's log now ends at
// Seq or later; Seq 0: the task changed without an append (its push
// notification configs were set or deleted); or, with Resync, any task's
// may have changed.
type Change struct {
	TaskID string
	Seq    int64
	Resync bool
}
