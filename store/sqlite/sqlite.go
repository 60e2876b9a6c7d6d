// Package sqlite is the durable store.Store of a2abridge: one SQLite
// database file (pure Go, modernc.org/sqlite) in WAL mode with
// synchronous=FULL, so an Append that returned nil survives a crash of the
// process or of the machine.
//
// All writes go through one writer goroutine that commits concurrent
// Appends together (group commit): it takes every pending Append (up to
// Options.MaxBatch), applies each inside its own savepoint of a single
// transaction, so that one failing Append (conflict, duplicate message id)
// fails alone, and answers every caller only after COMMIT has returned.
// Reads use a separate pool of read-only connections and see every Append
// that has returned.
//
// Events, snapshots and push notification configs are stored as records
// of package internal/record: a versioned format of a2abridge's own,
// which holds every field of the domain model whatever protocol version a
// client speaks. (Up to schema version 4 they were A2A 0.3.0 JSON; Open
// converts such a database, see migrate.go.)
//
// Appending costs in proportion to what is appended, never to the task: a
// task's row holds its bookkeeping (state, last sequence number, times),
// and its snapshot is written apart, as a checkpoint, only when the events
// logged since the last one outweigh it (sqlstore.CheckpointDue). Reading a task
// folds the events after its checkpoint onto it (internal/fold.Replay).
// So a task whose artifact grows in many small chunks writes each chunk
// once, plus checkpoints whose sizes grow geometrically: a small multiple
// of the task's size in all, where writing the whole snapshot with every
// append would be quadratic.
//
// A task's row also holds what ListTasks filters and orders by (agent,
// owner, context id, state, status time), in indexes that serve each page
// from its first row; an append of artifact updates only (a streamed
// artifact's chunks) leaves those columns, and so the indexes, alone.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers driver "sqlite"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/record"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/internal/listing"
	"github.com/a2abridge/a2abridge/store/internal/msgfilter"
	"github.com/a2abridge/a2abridge/store/internal/sqlstore"
)

// SchemaVersion is the schema version this package writes, kept in the
// database's PRAGMA user_version. Open refuses a database with a higher version.
const SchemaVersion = 7

// ErrClosed is returned by every method of a Store after Close, and by an
// Append still queued (not yet taken into a transaction) when Close is
// called. Nothing of such an Append is written.
var ErrClosed = store.ErrClosed

// Options tunes a Store. The zero value is ready to use.
type Options struct {
	// MaxBatch is the largest number of Appends committed in one
	// transaction. Zero or negative means 256; 1 disables group commit.
	MaxBatch int
	// MaxReaders is the number of read connections. Zero or negative
	// means max(4, GOMAXPROCS).
	MaxReaders int
	// BusyTimeout is how long a connection waits for a lock held by
	// another process sharing the database file before failing with a
	// "database is locked" error. Zero or negative means 5 seconds.
	BusyTimeout time.Duration
	// Shared lets several Stores that all set it have the database open
	// at once, in one process or several (SQLite keeps their writes
	// consistent). By default a Store has its database to itself: Open
	// fails with ErrLocked while any other Store has it open, and a
	// Store opened with Shared is refused while one without it has it.
	// Only for tools and tests that read a database a server has open: a
	// server.NewEngine on a shared Store fails, as left by a dead process,
	// the tasks that the other Stores' engines are running.
	Shared bool

	// batchHook, if set, is called before COMMIT of a transaction holding
	// n > 1 Appends; an error fails the transaction (tests only).
	batchHook func(n int) error
}

// Store is a store.Store kept in a SQLite database file. Create it with
// Open; all methods are safe for concurrent use.
type Store struct {
	// observer, if set, is told of each group commit (ObserveCommits).
	observer atomic.Pointer[func(int, time.Duration)]

	wdb   *sql.DB   // writer pool: exactly one connection, held by wconn
	wconn *sql.Conn // the writer goroutine's connection
	rdb   *sql.DB   // read-only connections

	maxBatch  int
	batchHook func(n int) error

	mu     sync.RWMutex // guards closed against sends on reqs
	closed bool
	isShut atomic.Bool // closed, readable without mu
	reqs   chan *request
	done   chan struct{} // closed when the writer goroutine has exited

	w   writeStmts
	r   readStmts
	ret retentionStmts
	ls  listStmts

	msgs     *msgfilter.Filter
	stopScan context.CancelFunc

	lock *dbLock // the database's lock file, held until closeDBs
}

type writeStmts struct {
	selTask, selMsg, insTask, updTask, insEvent, insMsg, putSnap, resetTail *sql.Stmt
	// The fast path's statements check as they write: each affects no
	// row where the append must fail.
	insTaskNew, updTaskAt, insMsgNew, delMsg, delTask *sql.Stmt
	// setTrace records a task's trace context (store.Append.Trace) on
	// an append to an existing task that sets one (a create inserts it
	// with the row).
	setTrace *sql.Stmt
	// updTaskQuiet and updTaskAtQuiet are updTask and updTaskAt for an
	// append of artifact updates only: they leave the indexed state and
	// status time alone (see request.statusChange).
	updTaskQuiet, updTaskAtQuiet *sql.Stmt
	// insEvents[k-2] inserts k events in one statement.
	insEvents [maxEventRows - 1]*sql.Stmt
}

// maxEventRows is the most events one INSERT writes.
const maxEventRows = 4

type readStmts struct {
	task, events, exists, message, unfinished *sql.Stmt
}

// request is one Append (or, with exec set, another write) on its way to
// the writer, encoded by the caller.
type request struct {
	ctx    context.Context
	exec   func(ctx context.Context, c *sql.Conn) error
	a      store.Append
	bodies [][]byte
	size   int64   // the bodies' total length
	times  []int64 // unix nanoseconds of each record
	now    int64   // unix nanoseconds of the Append call
	// status is the snapshot's status time (listing.StatusKey), and
	// statusChange whether a record may change the task's status: one
	// that is not an artifact update (the fold changes the status only
	// with a Task or a status update; a message is counted too, to be
	// lenient with callers that set the state along with one).
	status       int64
	statusChange bool
	res          chan error
}

var (
	_ store.Store          = (*Store)(nil)
	_ store.GroupCommitter = (*Store)(nil)
)

// The schema. tasks.tail is the encoded size of the events after the
// task's snapshot (all of them when it has none), snap_size the size of
// that snapshot, status_ts the snapshot's status time
// (listing.StatusKey: Unix nanoseconds, or the lowest int64 for none);
// snapshots holds at most one checkpoint per task, the fold of its
// records 1..seq. tasks_finished serves retention (DeleteFinished),
// messages_task the deletion of a task's message ids, tasks_list_time,
// tasks_list_context and tasks_list_state ListTasks. events.body,
// snapshots.body and push_configs.body are records (internal/record).
const schema = `
CREATE TABLE IF NOT EXISTS tasks (
	id         TEXT PRIMARY KEY,
	agent      TEXT NOT NULL,
	owner      TEXT NOT NULL DEFAULT '',
	context_id TEXT NOT NULL,
	state      TEXT NOT NULL,
	seq        INTEGER NOT NULL,
	created    INTEGER NOT NULL,
	updated    INTEGER NOT NULL,
	tail       INTEGER NOT NULL DEFAULT 0,
	snap_size  INTEGER NOT NULL DEFAULT 0,
	status_ts  INTEGER NOT NULL DEFAULT -9223372036854775808,
	trace      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS tasks_unfinished ON tasks(created, id) WHERE state = 'submitted' OR state = 'working' OR state = 'unknown';
CREATE INDEX IF NOT EXISTS tasks_finished ON tasks(updated, id) WHERE state = 'completed' OR state = 'canceled' OR state = 'failed' OR state = 'rejected';
CREATE INDEX IF NOT EXISTS tasks_list_time ON tasks(agent, owner, status_ts, id);
CREATE INDEX IF NOT EXISTS tasks_list_context ON tasks(agent, owner, context_id, status_ts, id);
CREATE INDEX IF NOT EXISTS tasks_list_state ON tasks(agent, owner, state, status_ts, id);
CREATE TABLE IF NOT EXISTS snapshots (
	task_id TEXT PRIMARY KEY REFERENCES tasks(id),
	seq     INTEGER NOT NULL,
	body    BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
	task_id TEXT NOT NULL REFERENCES tasks(id),
	seq     INTEGER NOT NULL,
	time    INTEGER NOT NULL,
	body    BLOB NOT NULL,
	PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (
	agent      TEXT NOT NULL,
	message_id TEXT NOT NULL,
	task_id    TEXT NOT NULL REFERENCES tasks(id),
	PRIMARY KEY (agent, message_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS messages_task ON messages(task_id);
CREATE TABLE IF NOT EXISTS agents (
	name    TEXT PRIMARY KEY,
	spec    BLOB NOT NULL,
	created INTEGER NOT NULL,
	updated INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS attachments (
	id         TEXT PRIMARY KEY,
	agent      TEXT NOT NULL,
	owner      TEXT NOT NULL,
	task_id    TEXT NOT NULL,
	media_type TEXT NOT NULL,
	filename   TEXT NOT NULL,
	body       BLOB NOT NULL,
	created    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS attachments_task ON attachments(task_id);
CREATE TABLE IF NOT EXISTS push_configs (
	task_id   TEXT NOT NULL REFERENCES tasks(id),
	config_id TEXT NOT NULL,
	body      BLOB NOT NULL,
	delivered INTEGER NOT NULL,
	created   INTEGER NOT NULL,
	UNIQUE (task_id, config_id)
);
`

// Open opens the database file at path, creating it and its schema if
// needed, and starts the writer goroutine. path is a file name (relative
// or absolute; not ":memory:", not a "file:" URI, no '?'). It fails if
// the file is not a SQLite database, cannot be put in WAL mode, or has a
// schema version newer than SchemaVersion. A database of an older
// version is upgraded in place, in one transaction (see migrate.go): if
// that fails (a row that does not decode, say), Open fails and the
// database is left as it was. Close the Store when done.
//
// Before opening the database, Open locks the file path+LockSuffix
// (created next to it; flock(2) on Unix, LockFileEx on Windows, no lock
// on other systems) and writes the process id into it. The lock is
// exclusive unless Options.Shared is set. If another Store holds it in a
// conflicting mode, in this process or another one, Open fails at once
// with a *LockedError (errors.Is(err, ErrLocked)) naming path and the
// holder's pid. The lock is released by Close, or by the system when the
// process ends, however it ends (kill -9 included).
func Open(path string, opts Options) (*Store, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlite: open %q: want a plain file path", path)
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	if opts.MaxReaders <= 0 {
		opts.MaxReaders = max(4, runtime.GOMAXPROCS(0))
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	common := fmt.Sprintf("_busy_timeout=%d&_foreign_keys=1&_synchronous=FULL", opts.BusyTimeout.Milliseconds())

	s := &Store{
		maxBatch:  opts.MaxBatch,
		batchHook: opts.batchHook,
		reqs:      make(chan *request, opts.MaxBatch),
		done:      make(chan struct{}),
	}
	var err error
	if s.lock, err = acquireLock(path, opts.Shared); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.closeDBs()
		}
	}()

	if s.wdb, err = sql.Open("sqlite", path+"?"+common+"&_journal_mode=WAL"); err != nil {
		return nil, wrap("open", err)
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	ctx := context.Background()
	if s.wconn, err = s.wdb.Conn(ctx); err != nil {
		return nil, wrap("open "+path, err)
	}
	var mode string
	if err := s.wconn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return nil, wrap("open "+path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return nil, fmt.Errorf("sqlite: open %s: journal mode is %q, not WAL", path, mode)
	}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	// Savepoints (one per request of a batch) keep their statement
	// journals in memory rather than in temporary files: each holds at
	// most the pages one request changes, and on disk they doubled the
	// writes of large appends that reuse freed pages. Set after the
	// migrations, whose index builds may sort more than fits in memory.
	if _, err := s.wconn.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
		return nil, wrap("open "+path, err)
	}
	if err := s.prepareWriter(ctx); err != nil {
		return nil, err
	}
	if err := s.prepareRetention(ctx); err != nil {
		return nil, err
	}

	if s.rdb, err = sql.Open("sqlite", path+"?"+common+"&_query_only=1"); err != nil {
		return nil, wrap("open", err)
	}
	s.rdb.SetMaxOpenConns(opts.MaxReaders)
	s.rdb.SetMaxIdleConns(opts.MaxReaders)
	s.rdb.SetConnMaxLifetime(0)
	s.rdb.SetConnMaxIdleTime(0)
	if err := s.prepareReaders(ctx); err != nil {
		return nil, err
	}

	var rows int64
	if err := s.rdb.QueryRowContext(ctx, "SELECT count(*) FROM messages").Scan(&rows); err != nil {
		return nil, wrap("open "+path, err)
	}
	s.msgs = msgfilter.New(rows)
	var scan context.Context
	scan, s.stopScan = context.WithCancel(context.Background())
	go s.msgs.Load(func(add func(agent, id string)) error { return s.scanMessages(scan, add) })

	ok = true
	go s.writer()
	return s, nil
}

func (s *Store) prepareWriter(ctx context.Context) error {
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.w.selTask, "SELECT seq, agent FROM tasks WHERE id = ?"},
		{&s.w.selMsg, "SELECT 1 FROM messages WHERE agent = ? AND message_id = ?"},
		{&s.w.insTask, "INSERT INTO tasks (id, agent, owner, context_id, state, seq, created, updated, tail, status_ts, trace) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"},
		{&s.w.updTask, "UPDATE tasks SET state = ?, status_ts = ?, seq = ?, updated = ?, tail = tail + ? WHERE id = ? RETURNING tail, snap_size"},
		{&s.w.updTaskQuiet, "UPDATE tasks SET seq = ?, updated = ?, tail = tail + ? WHERE id = ? RETURNING tail, snap_size"},
		{&s.w.insEvent, "INSERT INTO events (task_id, seq, time, body) VALUES (?, ?, ?, ?)"},
		{&s.w.insMsg, "INSERT INTO messages (agent, message_id, task_id) VALUES (?, ?, ?)"},
		{&s.w.insTaskNew, "INSERT INTO tasks (id, agent, owner, context_id, state, seq, created, updated, tail, status_ts, trace) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"},
		{&s.w.updTaskAt, "UPDATE tasks SET state = ?, status_ts = ?, seq = ?, updated = ?, tail = tail + ? WHERE id = ? AND seq = ? AND (? = '' OR agent = ?) RETURNING tail, snap_size"},
		{&s.w.updTaskAtQuiet, "UPDATE tasks SET seq = ?, updated = ?, tail = tail + ? WHERE id = ? AND seq = ? AND (? = '' OR agent = ?) RETURNING tail, snap_size"},
		{&s.w.putSnap, "INSERT INTO snapshots (task_id, seq, body) VALUES (?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET seq = excluded.seq, body = excluded.body"},
		{&s.w.resetTail, "UPDATE tasks SET tail = 0, snap_size = ? WHERE id = ?"},
		{&s.w.insMsgNew, "INSERT INTO messages (agent, message_id, task_id) VALUES (?, ?, ?) ON CONFLICT (agent, message_id) DO NOTHING"},
		{&s.w.delMsg, "DELETE FROM messages WHERE agent = ? AND message_id = ?"},
		{&s.w.delTask, "DELETE FROM tasks WHERE id = ?"},
		{&s.w.setTrace, "UPDATE tasks SET trace = ? WHERE id = ?"},
	} {
		st, err := s.wconn.PrepareContext(ctx, p.sql)
		if err != nil {
			return wrap("prepare", err)
		}
		*p.dst = st
	}
	for k := 2; k <= maxEventRows; k++ {
		q := "INSERT INTO events (task_id, seq, time, body) VALUES (?, ?, ?, ?)" + strings.Repeat(", (?, ?, ?, ?)", k-1)
		st, err := s.wconn.PrepareContext(ctx, q)
		if err != nil {
			return wrap("prepare", err)
		}
		s.w.insEvents[k-2] = st
	}
	return nil
}

func (s *Store) prepareReaders(ctx context.Context) error {
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.r.task, "SELECT t.agent, t.owner, t.seq, t.created, t.updated, s.seq, s.body, t.trace FROM tasks t LEFT JOIN snapshots s ON s.task_id = t.id WHERE t.id = ?"},
		{&s.r.events, "SELECT seq, time, body FROM events WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?"},
		{&s.r.exists, "SELECT 1 FROM tasks WHERE id = ?"},
		{&s.r.message, "SELECT task_id FROM messages WHERE agent = ? AND message_id = ?"},
		{&s.r.unfinished, "SELECT t.agent, t.owner, t.seq, t.created, t.updated, s.seq, s.body, t.id, t.trace FROM tasks t INDEXED BY tasks_unfinished LEFT JOIN snapshots s ON s.task_id = t.id WHERE t.state = 'submitted' OR t.state = 'working' OR t.state = 'unknown' ORDER BY t.created, t.id"},
	} {
		st, err := s.rdb.PrepareContext(ctx, p.sql)
		if err != nil {
			return wrap("prepare", err)
		}
		*p.dst = st
	}
	return nil
}

// Close stops the writer, closes the database and then releases its lock
// (see Open). An Append being committed when Close is called completes;
// Appends still queued fail with ErrClosed, as does every call made after
// Close. Close waits for reads in progress. Calling Close again returns
// nil.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.isShut.Store(true)
	close(s.reqs)
	s.mu.Unlock()
	<-s.done
	s.stopScan()
	<-s.msgs.Done()
	return s.closeDBs()
}

func (s *Store) closeDBs() error {
	var errs []error
	errs = append(errs, s.ls.close())
	for _, st := range []*sql.Stmt{s.w.selTask, s.w.selMsg, s.w.insTask, s.w.updTask, s.w.insEvent, s.w.insMsg,
		s.w.putSnap, s.w.resetTail, s.w.insTaskNew, s.w.updTaskAt, s.w.insMsgNew, s.w.delMsg, s.w.delTask,
		s.w.updTaskQuiet, s.w.updTaskAtQuiet, s.w.setTrace,
		s.r.task, s.r.events, s.r.exists, s.r.message, s.r.unfinished} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.wconn != nil {
		errs = append(errs, s.wconn.Close())
	}
	if s.wdb != nil {
		errs = append(errs, s.wdb.Close())
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	// Unlocked last: the next Store opens the database once this one is
	// done with it.
	errs = append(errs, s.lock.release())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %v", err)
	}
	return nil
}

// pkg prefixes the package's errors.
const pkg sqlstore.Name = "sqlite"

// validate checks the shape of a (store.Append.Validate) and that its
// times fit the int64 nanoseconds they are stored as.
func validate(a *store.Append) error {
	if err := a.Validate(); err != nil {
		return err
	}
	for i, r := range a.Records {
		if err := pkg.CheckRecordTime(i, r.Time); err != nil {
			return err
		}
	}
	return nil
}

// Append implements store.Store: when it returns nil, a is committed and
// durable. It returns store.ErrConflict, store.ErrNotFound or
// store.ErrDuplicateMessage as documented there (unwrapped); ErrClosed
// after Close; ctx.Err() if ctx is done before the append was taken into a
// transaction (after that, Append waits for the commit, which cannot be
// interrupted); a plain error for a malformed append (empty TaskID,
// negative After, no Agent on create, no Records, a Record without Event,
// with a non-zero Seq that is not its position After+1, After+2, …, or a
// Time outside years 1678–2261, Snapshot.ID different from TaskID, an empty
// message id, an Agent that is not the task's), or an event that breaks
// the invariants readers rely on (record.CheckEvent: a Task without
// ContextID or with an invalid state, a Message without MessageID, Role
// or a valid Part, …) or that the record format cannot hold (a string
// that is not UTF-8, a value that is not JSON, a status timestamp outside
// years 1–9999); and the database's error if the commit fails. Records with Seq 0 are
// numbered by the store; a zero Time becomes the time of the call. On any
// error nothing is written.
//
// Snapshot is kept only when a checkpoint is due (see the package doc);
// it must be the fold of the task's records (store.Append). Its state is
// what Unfinished and DeleteFinished go by, its state and status time
// what ListTasks goes by; an append whose records are all artifact
// updates leaves those as they were (the fold changes neither), sparing
// the indexes a write for every chunk of a streamed artifact.
func (s *Store) Append(ctx context.Context, a store.Append) error {
	return <-s.AppendAsync(ctx, a)
}

// AppendAsync implements store.GroupCommitter: Append without waiting
// (the outcome comes on the channel, buffered, once durable or failed). The
// writer takes queued requests in order, so appends queued for one task
// apply in order (possibly in the same group-committed transaction).
func (s *Store) AppendAsync(ctx context.Context, a store.Append) <-chan error {
	done := func(err error) <-chan error {
		c := make(chan error, 1)
		c <- err
		return c
	}
	if err := ctx.Err(); err != nil {
		return done(err)
	}
	if err := validate(&a); err != nil {
		return done(err)
	}
	if !a.Snapshot.Status.State.Valid() {
		return done(fmt.Errorf("sqlite: append: snapshot state %q is not a task state", a.Snapshot.Status.State))
	}
	now := time.Now().UnixNano()
	r := &request{ctx: ctx, a: a, now: now, res: make(chan error, 1),
		bodies: make([][]byte, len(a.Records)), times: make([]int64, len(a.Records)),
		status: listing.StatusKey(a.Snapshot.Status.Timestamp)}
	var err error
	for i, rec := range a.Records {
		if _, chunk := rec.Event.(*a2a.TaskArtifactUpdateEvent); !chunk {
			r.statusChange = true
		}
		if r.bodies[i], err = sqlstore.Encode(rec.Event); err != nil {
			return done(fmt.Errorf("sqlite: append: record %d: %w", i, err))
		}
		r.size += int64(len(r.bodies[i]))
		r.times[i] = now
		if !rec.Time.IsZero() {
			r.times[i] = rec.Time.UnixNano()
		}
	}

	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return done(ErrClosed)
	}
	select {
	case s.reqs <- r:
	case <-ctx.Done():
		s.mu.RUnlock()
		return done(ctx.Err())
	}
	s.mu.RUnlock()
	return r.res // the writer always answers
}

// writer is the only goroutine writing to the database. It exits when
// reqs is closed and drained.
func (s *Store) writer() {
	defer close(s.done)
	batch := make([]*request, 0, s.maxBatch)
	for r := range s.reqs {
		batch = append(batch[:0], r)
		// Let the goroutines that are ready to run go first: under load
		// some are about to queue an append (an agent's next event right
		// after its task's create), which then shares this transaction
		// instead of waiting for the next. Alone, this returns at once.
		runtime.Gosched()
	fill:
		for len(batch) < s.maxBatch {
			select {
			case r, ok := <-s.reqs:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		s.commit(batch)
		clear(batch) // drop references for the garbage collector
	}
}

// commit writes batch and answers each of its requests.
func (s *Store) commit(batch []*request) {
	live := batch[:0]
	for _, r := range batch {
		switch {
		case s.isShut.Load():
			r.res <- ErrClosed
		case r.ctx.Err() != nil:
			r.res <- r.ctx.Err()
		default:
			live = append(live, r)
		}
	}
	if obs := s.observer.Load(); obs != nil && len(live) > 0 {
		start, n := time.Now(), len(live)
		defer func() { (*obs)(n, time.Since(start)) }()
	}
	if len(live) == 0 {
		return
	}
	results := make([]error, len(live))
	if err := s.runTx(live, results); err == nil {
		for i, r := range live {
			r.res <- results[i]
		}
		return
	} else if len(live) == 1 {
		live[0].res <- err
		return
	}
	// The transaction as a whole failed: retry one request per
	// transaction, so that each caller gets its own outcome.
	for _, r := range live {
		var res [1]error
		if err := s.runTx([]*request{r}, res[:]); err != nil {
			res[0] = err
		}
		r.res <- res[0]
	}
}

// runTx applies reqs in one transaction and commits. A request that must
// fail (a conflict, an unknown task, a duplicate message id) leaves no
// trace in the transaction and gets its error in results; the others are
// unaffected. runTx returns an error (and nothing is committed) only if
// the transaction itself fails: then commit retries each request alone.
func (s *Store) runTx(reqs []*request, results []error) error {
	return s.immediateTx(context.Background(), "commit", func(ctx context.Context, _ *sql.Conn) error {
		return s.applyAll(ctx, reqs, results)
	})
}

// immediateTx runs fn in a transaction of the writer's connection, begun
// with BEGIN IMMEDIATE (so it holds the database's write lock from the
// start), and commits it when fn returns nil; when fn or the commit
// fails, it rolls the transaction back. commit names the commit in its
// error.
func (s *Store) immediateTx(ctx context.Context, commit string, fn func(ctx context.Context, c *sql.Conn) error) (err error) {
	c := s.wconn
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return wrap("begin", err)
	}
	defer func() {
		if err != nil {
			_, _ = c.ExecContext(ctx, "ROLLBACK")
		}
	}()
	if err := fn(ctx, c); err != nil {
		return err
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		return wrap(commit, err)
	}
	return nil
}

// applyAll is runTx's work inside its transaction: it applies reqs and
// runs the batch hook, and returns an error when the transaction must
// not commit.
func (s *Store) applyAll(ctx context.Context, reqs []*request, results []error) error {
	var err error
	single := len(reqs) == 1
	var merged []bool // reqs folded into an earlier request's write
	for i, r := range reqs {
		if merged != nil && merged[i] {
			continue
		}
		var group []int
		if !single && fastPath(r) {
			group, merged = chain(reqs, i, merged)
		}
		if group == nil {
			results[i], err = s.apply(ctx, r, single)
		} else {
			chained := make([]*request, len(group))
			for k, j := range group {
				chained[k] = reqs[j]
			}
			results[i], err = s.applyFast(ctx, r, chained)
			for _, j := range group {
				results[j] = results[i]
			}
		}
		if err != nil {
			return err
		}
		if single && results[i] != nil {
			return results[i] // nothing to commit
		}
	}
	if s.batchHook != nil && !single {
		return s.batchHook(len(reqs))
	}
	return nil
}

// apply performs one request inside the current transaction. It returns
// the request's own failure in res, having written nothing of it, or a
// fatal error (the database failed: the transaction must roll back).
//
// The common appends take a fast path whose statements check as they
// write (no savepoint, no reads): a create inserts its task row if the id
// is new, then its message ids if they are new, undoing the task row when
// one is not; an agent's append (no message ids) updates the task row only
// at the expected seq. Anything else, and every exec request, runs in a
// savepoint (alone is true when the request is the whole transaction,
// which then serves as its savepoint).
func (s *Store) apply(ctx context.Context, r *request, alone bool) (res, fatal error) {
	if fastPath(r) {
		return s.applyFast(ctx, r, nil)
	}
	if !alone {
		if _, err := s.wconn.ExecContext(ctx, "SAVEPOINT a"); err != nil {
			return nil, wrap("savepoint", err)
		}
	}
	if r.exec != nil {
		res = r.exec(ctx, s.wconn)
	} else {
		res = s.applyChecked(ctx, r)
	}
	if !alone {
		if res != nil {
			if _, err := s.wconn.ExecContext(ctx, "ROLLBACK TO a"); err != nil {
				return nil, wrap("rollback to savepoint", err)
			}
		}
		if _, err := s.wconn.ExecContext(ctx, "RELEASE a"); err != nil {
			return nil, wrap("release savepoint", err)
		}
	}
	return res, nil
}

// fastPath reports a request for applyFast: a create, or an append to an
// existing task without message ids.
func fastPath(r *request) bool {
	return r.exec == nil && (r.a.After == 0 || len(r.a.MessageIDs) == 0)
}

// continuation reports an append to an existing task without message
// ids: the kind of request an agent's consecutive events make.
func continuation(r *request) bool {
	return r.exec == nil && r.a.After > 0 && len(r.a.MessageIDs) == 0
}

// chain finds the requests after reqs[i] (a fastPath request) in the
// batch that continue the same task's log where the one before ends (a
// task's creation and its agent's first events, or an agent's events
// queued back to back), up to the first request of that task that does
// not, or any other write (exec). It returns their positions, marked in
// merged (allocated on first use), or nil when there are none.
func chain(reqs []*request, i int, merged []bool) ([]int, []bool) {
	r := reqs[i]
	last := r.a.After + int64(len(r.a.Records))
	var group []int
	for j := i + 1; j < len(reqs); j++ {
		q := reqs[j]
		if q.exec != nil {
			break
		}
		if q.a.TaskID != r.a.TaskID {
			continue
		}
		if !continuation(q) || q.a.After != last || (q.a.Agent != "" && q.a.Agent != r.a.Agent) {
			break
		}
		if merged == nil {
			merged = make([]bool, len(reqs))
		}
		merged[j] = true
		group = append(group, j)
		last += int64(len(q.a.Records))
	}
	return group, merged
}

// applyFast is apply's path for a create, or an append without message
// ids (see apply), with the continuations chained to it (see chain): the
// task row is written once, with the last request's snapshot, and then
// every record. Chained requests share the outcome: when the first cannot
// apply, the others, computed on top of it, must not either.
func (s *Store) applyFast(ctx context.Context, r *request, chained []*request) (res, fatal error) {
	a := &r.a
	end := r
	if len(chained) > 0 {
		end = chained[len(chained)-1]
	}
	last := end.a.After + int64(len(end.a.Records))
	snap := &end.a.Snapshot
	state := record.StateName(snap.Status.State)
	size, statusChange, trace := r.size, r.statusChange, a.Trace
	for _, q := range chained {
		size += q.size
		statusChange = statusChange || q.statusChange
		if q.a.Trace != "" {
			trace = q.a.Trace
		}
	}
	tail, snapSize := size, int64(0)
	if a.After == 0 {
		n, err := rowsAffected(s.w.insTaskNew.ExecContext(ctx, a.TaskID, a.Agent, a.Owner, snap.ContextID, state, last, r.now, end.now, size, end.status, trace))
		if err != nil {
			return nil, wrap("append: write task", err)
		}
		if n == 0 {
			return store.ErrConflict, nil
		}
		for i, id := range a.MessageIDs {
			s.msgs.Add(a.Agent, id)
			n, err := rowsAffected(s.w.insMsgNew.ExecContext(ctx, a.Agent, id, a.TaskID))
			if err != nil {
				return nil, wrap("append: index message", err)
			}
			if n == 0 {
				// Undo this request: its earlier message ids, then its task.
				for _, prev := range a.MessageIDs[:i] {
					if _, err := s.w.delMsg.ExecContext(ctx, a.Agent, prev); err != nil {
						return nil, wrap("append: undo", err)
					}
				}
				if _, err := s.w.delTask.ExecContext(ctx, a.TaskID); err != nil {
					return nil, wrap("append: undo", err)
				}
				return store.ErrDuplicateMessage, nil
			}
		}
	} else {
		var err error
		if statusChange {
			err = s.w.updTaskAt.QueryRowContext(ctx, state, end.status, last, end.now, size, a.TaskID, a.After, a.Agent, a.Agent).Scan(&tail, &snapSize)
		} else {
			err = s.w.updTaskAtQuiet.QueryRowContext(ctx, last, end.now, size, a.TaskID, a.After, a.Agent, a.Agent).Scan(&tail, &snapSize)
		}
		if errors.Is(err, sql.ErrNoRows) {
			return s.whyNot(ctx, a)
		}
		if err != nil {
			return nil, wrap("append: write task", err)
		}
	}
	if err := s.insertEvents(ctx, r, chained); err != nil {
		return nil, err
	}
	if a.After > 0 {
		if err := s.writeTrace(ctx, a.TaskID, trace); err != nil {
			return nil, err
		}
	}
	return nil, s.checkpoint(ctx, a.TaskID, last, snap, tail, snapSize)
}

// checkpoint writes snap, the task's snapshot at seq last, when its events
// after the stored snapshot (tail bytes; the stored one has snapSize) call
// for it (sqlstore.CheckpointDue). A snapshot the codec cannot encode is not
// written: reads then fold from the previous checkpoint, as they would
// anyway. It returns only the database's errors.
func (s *Store) checkpoint(ctx context.Context, taskID string, last int64, snap *a2a.Task, tail, snapSize int64) error {
	if !sqlstore.CheckpointDue(tail, snapSize) {
		return nil
	}
	body, err := sqlstore.Encode(snap)
	if err != nil {
		return nil
	}
	if _, err := s.w.putSnap.ExecContext(ctx, taskID, last, body); err != nil {
		return wrap("append: write snapshot", err)
	}
	if _, err := s.w.resetTail.ExecContext(ctx, len(body), taskID); err != nil {
		return wrap("append: write snapshot", err)
	}
	return nil
}

// insertEvents inserts the records of r and then of the requests chained
// to it (all of one task), up to maxEventRows per statement.
func (s *Store) insertEvents(ctx context.Context, r *request, chained []*request) error {
	var args [4 * maxEventRows]any
	n := 0
	flush := func() error {
		var err error
		if n == 1 {
			_, err = s.w.insEvent.ExecContext(ctx, args[:4]...)
		} else if n > 1 {
			_, err = s.w.insEvents[n-2].ExecContext(ctx, args[:4*n]...)
		}
		n = 0
		if err != nil {
			return wrap("append: write event", err)
		}
		return nil
	}
	for k := -1; k < len(chained); k++ {
		q := r
		if k >= 0 {
			q = chained[k]
		}
		for i := range q.a.Records {
			args[4*n], args[4*n+1], args[4*n+2], args[4*n+3] = q.a.TaskID, q.a.After+1+int64(i), q.times[i], q.bodies[i]
			if n++; n == maxEventRows {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// writeTrace records trace as task taskID's trace context
// (store.Append.Trace) unless it is empty: one more statement, for an
// append to an existing task that starts an execution with tracing on.
func (s *Store) writeTrace(ctx context.Context, taskID, trace string) error {
	if trace == "" {
		return nil
	}
	if _, err := s.w.setTrace.ExecContext(ctx, trace, taskID); err != nil {
		return wrap("append: write trace context", err)
	}
	return nil
}

// whyNot explains why an append's conditional update changed no row.
func (s *Store) whyNot(ctx context.Context, a *store.Append) (res, fatal error) {
	var seq int64
	var agent string
	switch err := s.w.selTask.QueryRowContext(ctx, a.TaskID).Scan(&seq, &agent); {
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound, nil
	case err != nil:
		return nil, wrap("append", err)
	case seq != a.After:
		return store.ErrConflict, nil
	default:
		return fmt.Errorf("sqlite: append: task %q belongs to agent %q, not %q", a.TaskID, agent, a.Agent), nil
	}
}

func rowsAffected(r sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// applyChecked is apply's general path (a continuation that indexes
// message ids): it reads before writing, inside a savepoint. It returns a
// store sentinel error before writing anything when the request must fail.
func (s *Store) applyChecked(ctx context.Context, r *request) error {
	a := &r.a
	var seq int64
	var agent string
	err := s.w.selTask.QueryRowContext(ctx, a.TaskID).Scan(&seq, &agent)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return wrap("append", err)
	case a.After == 0 && exists:
		return store.ErrConflict
	case a.After > 0 && !exists:
		return store.ErrNotFound
	case exists && seq != a.After:
		return store.ErrConflict
	case exists && a.Agent != "" && a.Agent != agent:
		return fmt.Errorf("sqlite: append: task %q belongs to agent %q, not %q", a.TaskID, agent, a.Agent)
	case !exists:
		agent = a.Agent
	}
	for _, id := range a.MessageIDs {
		s.msgs.Add(agent, id) // also when it turns out indexed already (by another process)
		var one int
		switch err := s.w.selMsg.QueryRowContext(ctx, agent, id).Scan(&one); {
		case err == nil:
			return store.ErrDuplicateMessage
		case !errors.Is(err, sql.ErrNoRows):
			return wrap("append", err)
		}
	}

	last := a.After + int64(len(a.Records))
	snap := &a.Snapshot
	tail, snapSize := r.size, int64(0)
	switch {
	case exists && r.statusChange:
		err = s.w.updTask.QueryRowContext(ctx, record.StateName(snap.Status.State), r.status, last, r.now, r.size, a.TaskID).Scan(&tail, &snapSize)
	case exists:
		err = s.w.updTaskQuiet.QueryRowContext(ctx, last, r.now, r.size, a.TaskID).Scan(&tail, &snapSize)
	default:
		_, err = s.w.insTask.ExecContext(ctx, a.TaskID, agent, a.Owner, snap.ContextID, record.StateName(snap.Status.State), last, r.now, r.now, r.size, r.status, a.Trace)
	}
	if err != nil {
		return wrap("append: write task", err)
	}
	for i := range a.Records {
		if _, err := s.w.insEvent.ExecContext(ctx, a.TaskID, a.After+1+int64(i), r.times[i], r.bodies[i]); err != nil {
			return wrap("append: write event", err)
		}
	}
	for _, id := range a.MessageIDs {
		if _, err := s.w.insMsg.ExecContext(ctx, agent, id, a.TaskID); err != nil {
			return wrap("append: index message", err)
		}
	}
	if exists {
		if err := s.writeTrace(ctx, a.TaskID, a.Trace); err != nil {
			return err
		}
	}
	return s.checkpoint(ctx, a.TaskID, last, snap, tail, snapSize)
}

// Ping implements store.Pinger: one read of the database file (a
// query on a read-only connection). Errors: ErrClosed after Close, or the
// database's (wrapped).
func (s *Store) Ping(ctx context.Context) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	var one int
	return wrap("ping", s.rdb.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&one))
}

var _ store.Pinger = (*Store)(nil)

// Task implements store.Store: the task's snapshot (its checkpoint with
// the events after it folded on), store.ErrNotFound, or ErrClosed after
// Close. Created and Updated are in UTC.
func (s *Store) Task(ctx context.Context, taskID string) (store.TaskInfo, error) {
	if s.isShut.Load() {
		return store.TaskInfo{}, ErrClosed
	}
	var trace string
	row, err := scanTask(s.r.task.QueryRowContext(ctx, taskID), &trace)
	row.Info.Trace = trace
	if errors.Is(err, sql.ErrNoRows) {
		return store.TaskInfo{}, store.ErrNotFound
	}
	if err != nil {
		return store.TaskInfo{}, wrap("task "+taskID, err)
	}
	return s.fold(ctx, taskID, row)
}

type scanner interface{ Scan(dest ...any) error }

// scanTask reads the columns agent, owner, seq, created, updated, the
// checkpoint's seq and body (NULL when there is none), then extra.
func scanTask(row scanner, extra ...any) (sqlstore.TaskRow, error) {
	var (
		r                sqlstore.TaskRow
		created, updated int64
		snapSeq          sql.NullInt64
	)
	dest := append([]any{&r.Info.Agent, &r.Info.Owner, &r.Info.Seq, &created, &updated, &snapSeq, &r.Snap}, extra...)
	if err := row.Scan(dest...); err != nil {
		return r, err
	}
	r.SnapSeq = snapSeq.Int64
	r.SetTimes(created, updated)
	return r, nil
}

// fold builds the task of row (sqlstore.Fold), reading the records after
// its checkpoint up to the row's seq with Events. Records missing from
// the log mean the task is being deleted (DeleteFinished):
// store.ErrNotFound.
func (s *Store) fold(ctx context.Context, taskID string, row sqlstore.TaskRow) (store.TaskInfo, error) {
	return pkg.Fold(taskID, row, func(n int64) ([]store.Record, error) {
		return s.Events(ctx, taskID, row.SnapSeq, int(n))
	})
}

// Events implements store.Store: up to limit records with Seq > after, in
// order (limit <= 0: all of them), each with a freshly decoded Event and
// its Time in UTC; store.ErrNotFound for an unknown task; ErrClosed after Close.
func (s *Store) Events(ctx context.Context, taskID string, after int64, limit int) ([]store.Record, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	lim := int64(limit)
	if limit <= 0 {
		lim = -1
	}
	rows, err := s.r.events.QueryContext(ctx, taskID, after, lim)
	if err != nil {
		return nil, wrap("events "+taskID, err)
	}
	defer rows.Close()
	recs, err := pkg.Records(rows, "events "+taskID)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		var one int
		switch err := s.r.exists.QueryRowContext(ctx, taskID).Scan(&one); {
		case errors.Is(err, sql.ErrNoRows):
			return nil, store.ErrNotFound
		case err != nil:
			return nil, wrap("events "+taskID, err)
		}
	}
	return recs, nil
}

// scanMessages yields the keys of the messages table (msgfilter.Load).
func (s *Store) scanMessages(ctx context.Context, add func(agent, id string)) error {
	rows, err := s.rdb.QueryContext(ctx, "SELECT agent, message_id FROM messages")
	if err != nil {
		return err
	}
	defer rows.Close()
	var agent, id string
	for rows.Next() {
		if err := rows.Scan(&agent, &id); err != nil {
			return err
		}
		add(agent, id)
	}
	return rows.Err()
}

// MessageTask implements store.Store: the id of the task that indexed
// (agent, messageID), or "" and no error when there is none; ErrClosed
// after Close. A message id never indexed is usually answered without a
// read (msgfilter).
func (s *Store) MessageTask(ctx context.Context, agent, messageID string) (string, error) {
	if s.isShut.Load() {
		return "", ErrClosed
	}
	if s.msgs.Absent(agent, messageID) {
		return "", nil
	}
	var id string
	switch err := s.r.message.QueryRowContext(ctx, agent, messageID).Scan(&id); {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", wrap("message task", err)
	}
	return id, nil
}

// Unfinished implements store.Store: every task whose snapshot state is
// submitted, working or unknown, ordered by creation time then id;
// ErrClosed after Close.
func (s *Store) Unfinished(ctx context.Context) ([]store.TaskInfo, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	rows, err := s.r.unfinished.QueryContext(ctx)
	if err != nil {
		return nil, wrap("unfinished", err)
	}
	var found []sqlstore.TaskRow
	var ids []string
	for rows.Next() {
		var id, trace string
		row, err := scanTask(rows, &id, &trace)
		if err != nil {
			rows.Close()
			return nil, wrap("unfinished", err)
		}
		row.Info.Trace = trace
		found, ids = append(found, row), append(ids, id)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, wrap("unfinished", err)
	}
	out := make([]store.TaskInfo, 0, len(found))
	for i, row := range found {
		info, err := s.fold(ctx, ids[i], row)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// wrap prefixes err with the package and op (sqlstore.Name.Wrap: no
// driver type escapes the package).
var wrap = pkg.Wrap

// ObserveCommits implements store.CommitObserver: f is called after each
// transaction of appends (group commit) with their number and the
// transaction's duration; nil removes it.
func (s *Store) ObserveCommits(f func(appends int, d time.Duration)) {
	if f == nil {
		s.observer.Store(nil)
		return
	}
	s.observer.Store(&f)
}
