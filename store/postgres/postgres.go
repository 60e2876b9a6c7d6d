// Package postgres is a store.Store kept in PostgreSQL (github.com/jackc/pgx/v5,
// through a pgxpool connection pool), so that several a2abridge processes
// can share one database.
//
// It keeps the promise of every store: an Append that returned nil is
// committed (PostgreSQL's COMMIT returned, with the server's
// synchronous_commit, "on" by default, making it durable), and an Append
// that returned an error wrote nothing. Each Append is one SQL statement
// (data-modifying common table expressions; several appends of a task
// queued back to back may share one), and appends are committed in groups
// (batch.go: one round trip and one implicit transaction for what has
// queued): the task's row is updated only at the sequence
// number the append expects (or inserted only if the id is new), and the
// records and message ids are written in that same statement. Two appends
// racing for one task serialize on the task's row: the second one then
// finds another sequence number and fails with store.ErrConflict, writing
// nothing; two racing for one message id serialize on the id's unique key,
// and the second fails with store.ErrDuplicateMessage.
//
// Events, snapshots and push notification configs are stored as records
// of package internal/record (a versioned format of a2abridge's own), as
// in store/sqlite. As there, a task's snapshot is written apart, as a
// checkpoint, only when the events logged since the last one outweigh it,
// and reading a task folds the events after its checkpoint onto it; the
// checkpoint is written after the append's commit, and is only ever an
// optimisation (a missing one makes reads fold from the previous one).
//
// The schema lives in the connection's search_path (its first schema:
// public, or the schema named by a search_path parameter of the DSN) and
// is versioned in table a2abridge_schema. Open creates or upgrades it in
// one transaction under a transaction-scoped advisory lock, so that
// several processes starting at once on one database migrate it once.
//
// With Options.Notify, the processes that share a schema tell each other
// about their appends (store.Watcher, with LISTEN/NOTIFY on a channel of
// the schema's own; notify.go says why after the commit rather than in
// it), so that a server's streams follow tasks that another replica runs.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/record"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/internal/listing"
	"github.com/a2abridge/a2abridge/store/internal/msgfilter"
	"github.com/a2abridge/a2abridge/store/internal/sqlstore"
)

// ErrClosed is returned by every method of a Store after Close.
var ErrClosed = store.ErrClosed

// Options tunes a Store. The zero value is ready to use. The connection
// pool is configured by the DSN (pgxpool's pool_max_conns,
// pool_min_conns, pool_max_conn_lifetime, pool_max_conn_idle_time,
// pool_health_check_period, …); Options only supplies defaults for what
// the DSN leaves out.
type Options struct {
	// MaxConns is the pool size when the DSN has no pool_max_conns.
	// Zero or negative means max(8, 2×GOMAXPROCS).
	MaxConns int
	// ConnectTimeout bounds Open's first connection and migration when
	// the DSN has no connect_timeout. Zero or negative means 10 seconds.
	ConnectTimeout time.Duration
	// Exclusive makes the Store the only exclusive one on its schema:
	// Open takes a session advisory lock on a connection of its own,
	// held until Close (or until that connection ends: PostgreSQL
	// releases it when the process dies, kill -9 included), and fails
	// with ErrLocked while another Store holds it: for a server that must
	// be the only one on its schema (serve runs so until it supports
	// replicas). Having the lock, Open also ends every lease
	// (store.Leaser), taking the lock to prove that no other process
	// runs tasks on the schema: the tasks a crashed predecessor left
	// running are orphans at once. So an exclusive Store must not share
	// its schema with non-exclusive ones (replicas): their running tasks
	// would be failed by its engine's start. Before it reads the message
	// ids already indexed, Open waits (up to 10 s) for the transactions
	// in progress in the other sessions of the same application_name
	// ("a2abridge" unless the DSN sets one), role and database: a
	// predecessor killed with a batch in flight has it committed by its
	// session after its death.
	Exclusive bool
	// Shared makes the Store one of the replicas of a server on its
	// schema: Open takes Exclusive's lock in shared mode on a
	// connection of its own, held until Close, so that it fails with
	// ErrLocked while an exclusive Store has the schema, and an
	// exclusive Open fails while a shared Store does. It implies Notify
	// (replicas follow each other's appends). Exclusive takes precedence
	// when both are set.
	Shared bool
	// Notify makes the Store tell the other processes that share its
	// schema about its appends, and Watch tell it about theirs
	// (store.Watcher, LISTEN/NOTIFY; see notify.go): what replicas of a
	// server need. Each committed append is notified after its commit,
	// many appends to one notification under load.
	Notify bool
}

// ErrLocked is returned (wrapped) by Open with Options.Exclusive when
// another Store opened with Exclusive or Shared, in this process or
// another, has the schema; and by Open with Options.Shared when an
// exclusive one has it.
var ErrLocked = errors.New("postgres: the database schema is in use by another store (exclusive and shared ones do not mix)")

// Store is a store.Store kept in PostgreSQL. Create it with Open; all
// methods are safe for concurrent use.
type Store struct {
	// observer, if set, is told of each group commit (ObserveCommits).
	observer atomic.Pointer[func(int, time.Duration)]

	pool   *pgxpool.Pool
	lock   *pgx.Conn // holds the Exclusive lock; nil without
	notify *notifier // Options.Notify; nil without
	isShut atomic.Bool
	// exclusive: Options.Exclusive's lock is held (Exclusive).
	exclusive bool
	// writers apply the queued appends (AppendAsync), a task's always
	// on the same one (by a hash of its id), so they apply in order.
	writers []*writer
	seed    maphash.Seed
	// msgs filters the indexed message ids (MessageTask) of an
	// Exclusive Store, which no other process indexes into; nil
	// otherwise. stopScan ends its loading.
	msgs     *msgfilter.Filter
	stopScan context.CancelFunc
	// background counts the checkpoints being written (Close waits).
	background sync.WaitGroup
	// statements and batches count what the writers sent (tests).
	statements, batches atomic.Int64
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.AgentRegistry   = (*Store)(nil)
	_ store.AttachmentStore = (*Store)(nil)
	_ store.Watcher         = (*Store)(nil)
	_ store.Exclusive       = (*Store)(nil)
	_ store.Pinger          = (*Store)(nil)
)

// Exclusive implements store.Exclusive: true for a Store opened with
// Options.Exclusive, which no other Store shares.
func (s *Store) Exclusive() bool { return s.exclusive }

// Open connects to the PostgreSQL database of dsn (a URL,
// postgres://user:password@host:port/dbname?param=value, or key=value
// pairs, as libpq and pgx take them), creates or upgrades the schema
// (see migrate.go; it fails for a schema newer than SchemaVersion) and
// returns the Store. Errors name the database by RedactDSN(dsn): the
// password never appears in them. Close the Store when done.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if err := CheckDSN(dsn); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: invalid DSN %s: %s", RedactDSN(dsn), scrub(err.Error(), dsn))
	}
	if !hasParam(dsn, "pool_max_conns") {
		n := opts.MaxConns
		if n <= 0 {
			n = max(8, 2*runtime.GOMAXPROCS(0))
		}
		cfg.MaxConns = int32(min(n, 1<<20))
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		// Operators see a2abridge's sessions in pg_stat_activity, and an
		// exclusive Open finds those of a dead predecessor (settle).
		cfg.ConnConfig.RuntimeParams["application_name"] = defaultApplicationName
	}
	timeout := opts.ConnectTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if cfg.ConnConfig.ConnectTimeout <= 0 {
		cfg.ConnConfig.ConnectTimeout = timeout
	} else {
		timeout = cfg.ConnConfig.ConnectTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, 2*timeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s: %s", RedactDSN(dsn), scrub(err.Error(), dsn))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect to %s: %s", RedactDSN(dsn), scrub(err.Error(), dsn))
	}
	s := &Store{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %s: %s", RedactDSN(dsn), scrub(err.Error(), dsn))
	}
	if opts.Notify || (opts.Shared && !opts.Exclusive) {
		var schema string
		if err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			pool.Close()
			return nil, fmt.Errorf("postgres: %s: current schema: %s", RedactDSN(dsn), scrub(err.Error(), dsn))
		}
		s.notify = newNotifier(schema)
		go s.notify.run(s)
	}
	if opts.Exclusive || opts.Shared {
		if err := s.lockSchema(ctx, !opts.Exclusive); err != nil {
			s.stopNotify()
			pool.Close()
			if errors.Is(err, ErrLocked) {
				return nil, fmt.Errorf("%w (%s)", ErrLocked, RedactDSN(dsn))
			}
			return nil, fmt.Errorf("postgres: %s: lock schema: %s", RedactDSN(dsn), scrub(err.Error(), dsn))
		}
	}
	if opts.Exclusive {
		s.exclusive = true
		if err := s.endOtherLeases(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("postgres: %s: end the leases of earlier processes: %s", RedactDSN(dsn), scrub(err.Error(), dsn))
		}
		if err := s.settle(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("postgres: %s: wait for the transactions of earlier processes: %s", RedactDSN(dsn), scrub(err.Error(), dsn))
		}
		var rows int64
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM messages").Scan(&rows); err != nil {
			s.Close()
			return nil, fmt.Errorf("postgres: %s: count the indexed message ids: %s", RedactDSN(dsn), scrub(err.Error(), dsn))
		}
		s.msgs = msgfilter.New(rows)
		var scan context.Context
		scan, s.stopScan = context.WithCancel(context.Background())
		go s.msgs.Load(func(add func(agent, id string)) error { return s.scanMessages(scan, add) })
	}
	s.startWriters()
	return s, nil
}

// Ping implements store.Pinger: a round trip on a connection of the pool
// (which it may have to wait for, within ctx). Errors: ErrClosed after
// Close, or the database's (wrapped, without the DSN's password).
func (s *Store) Ping(ctx context.Context) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	return wrap("ping", s.pool.Ping(ctx))
}

// CheckDSN reports whether dsn is a DSN that Open can use, without
// connecting: nil, or an error naming the DSN by RedactDSN (the password
// never appears in it).
func CheckDSN(dsn string) error {
	if dsn == "" {
		return errors.New("postgres: empty DSN")
	}
	if len(dsn) > maxDSN {
		return fmt.Errorf("postgres: DSN of %d bytes is too long (at most %d)", len(dsn), maxDSN)
	}
	if _, err := pgxpool.ParseConfig(dsn); err != nil {
		return fmt.Errorf("postgres: invalid DSN %s: %s", RedactDSN(dsn), scrub(err.Error(), dsn))
	}
	return nil
}

// maxDSN bounds the DSN Open parses.
const maxDSN = 8 << 10

// hasParam reports whether dsn sets key (as a URL query parameter or a
// key=value pair).
func hasParam(dsn, key string) bool {
	for _, sep := range []string{"?", "&", " ", "\t", "\n"} {
		if strings.Contains(dsn, sep+key+"=") || strings.Contains(dsn, sep+key+" =") {
			return true
		}
	}
	return strings.HasPrefix(dsn, key+"=") || strings.HasPrefix(dsn, key+" =")
}

// Close closes the pool, waiting for the connections in use to be
// returned. Later calls of any method return ErrClosed; calling Close
// again returns nil.
func (s *Store) Close() error {
	if s.isShut.Swap(true) {
		return nil
	}
	s.stopWriters() // they apply what is queued first
	s.background.Wait()
	s.stopNotify() // it sends what is pending on the pool first
	if s.msgs != nil {
		s.stopScan()
		<-s.msgs.Done()
	}
	s.pool.Close()
	if s.lock != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// Released before the session ends, so that an Open right
		// after Close finds the lock free (the server ends a closed
		// session a moment later).
		_, _ = s.lock.Exec(ctx, "SELECT pg_advisory_unlock_all()")
		_ = s.lock.Close(ctx)
	}
	return nil
}

// stopNotify stops the notifier (Options.Notify), once, after it has
// sent what is pending, and ends Watch.
func (s *Store) stopNotify() {
	if s.notify == nil {
		return
	}
	select {
	case <-s.notify.stop:
	default:
		close(s.notify.stop)
	}
	<-s.notify.done
}

// defaultApplicationName is the application_name of the Store's sessions
// when the DSN (or PGAPPNAME) sets none.
const defaultApplicationName = "a2abridge"

// settleWait bounds how long an exclusive Open waits in settle.
var settleWait = 10 * time.Second

// settle waits until every other session of this application (the same
// database, role and application_name) that was in a transaction when it
// began has left that transaction, or gone, for at most settleWait: a
// process killed while a batch of its appends was in flight leaves that
// batch to its session, which PostgreSQL runs and commits after the
// process died. An exclusive Store then reads the indexed message ids
// (its filter) only once such a commit can be seen, so that a retried
// message is not taken for a new one. Sessions of other schemas of the
// same application only delay Open by their transaction in progress (a
// batch: milliseconds); settleWait bounds the rest (a session stuck in
// a transaction is no predecessor's batch). Errors: the database's, or
// ctx's.
func (s *Store) settle(ctx context.Context) error {
	const q = `SELECT pid, xact_start FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND datname = current_database() AND usename = current_user
		AND application_name = current_setting('application_name') AND xact_start IS NOT NULL`
	open := func() (map[int32]time.Time, error) {
		rows, err := s.pool.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		m := map[int32]time.Time{}
		for rows.Next() {
			var pid int32
			var start time.Time
			if err := rows.Scan(&pid, &start); err != nil {
				return nil, err
			}
			m[pid] = start
		}
		return m, rows.Err()
	}
	waiting, err := open()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(settleWait)
	for len(waiting) > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		now, err := open()
		if err != nil {
			return err
		}
		for pid, start := range waiting {
			if cur, ok := now[pid]; !ok || !cur.Equal(start) {
				delete(waiting, pid)
			}
		}
	}
	return nil
}

// lockSchema takes Options.Exclusive's lock (in shared mode for
// Options.Shared) on a connection taken out of the pool, kept in s.lock.
func (s *Store) lockSchema(ctx context.Context, shared bool) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := c.Hijack()
	var ok bool
	fn := "pg_try_advisory_lock"
	if shared {
		fn = "pg_try_advisory_lock_shared"
	}
	if err := conn.QueryRow(ctx, "SELECT "+fn+"(hashtext('a2abridge exclusive'), hashtext(current_schema()))").Scan(&ok); err != nil {
		_ = conn.Close(ctx)
		return err
	}
	if !ok {
		_ = conn.Close(ctx)
		return ErrLocked
	}
	s.lock = conn
	return nil
}

// pkg prefixes the package's errors.
const pkg sqlstore.Name = "postgres"

// bs is s as a bytea parameter (the schema's strings are bytea, see
// migrate.go): pgx would send a string as text, which cannot hold a NUL.
func bs(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}

// bss is bs for each of ss (a bytea[] parameter).
func bss(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = bs(s)
	}
	return out
}

// errDuplicate is the SQLSTATE the append statements raise (through
// a2abridge_fail, see migrate.go) when a message id is already indexed.
const errDuplicate = "A2B01"

// The append statements. Each is one statement, so one implicit
// transaction: it writes everything or nothing.
//
// appendCreate inserts the task row if the id is new, then its message
// ids and records; it returns one row (the new row's tail and snap_size)
// or none when the id exists; a message id already indexed raises
// errDuplicate, undoing the whole statement.
const appendCreate = `WITH t AS (
	INSERT INTO tasks (id, agent, owner, context_id, state, seq, created, updated, tail, status_ts, runner, trace)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9, $13, $14) ON CONFLICT (id) DO NOTHING
	RETURNING id, agent, tail, snap_size
), m AS (
	INSERT INTO messages (agent, message_id, task_id) SELECT t.agent, mid, t.id FROM t, unnest($10::bytea[]) AS mid
	ON CONFLICT (agent, message_id) DO NOTHING RETURNING 1
), e AS (
	INSERT INTO events (task_id, seq, time, body)
	SELECT t.id, u.o, u.tm, u.b FROM t, unnest($11::bigint[], $12::bytea[]) WITH ORDINALITY AS u(tm, b, o)
	RETURNING 1
)
SELECT t.tail, t.snap_size, CASE WHEN (SELECT count(*) FROM m) < cardinality($10::bytea[])
	THEN a2abridge_fail('` + errDuplicate + `') ELSE (SELECT count(*) FROM e) END, false
FROM t`

// appendNext updates the task's row only at the expected sequence number
// $2 (and, when $3 is not empty, only if the task is agent $3's), then
// inserts its message ids (under the task's agent) and records; it
// returns one row (tail and snap_size after the update) or none when the
// row was not updated (see whyNot). $4 false leaves the indexed state
// and status time alone (an append of artifact updates only).
const appendNext = `WITH t AS (
	UPDATE tasks SET
		state = CASE WHEN $4 THEN $5 ELSE state END,
		status_ts = CASE WHEN $4 THEN $6 ELSE status_ts END,
		seq = $7, updated = $8, tail = tail + $9,
		runner = CASE WHEN octet_length($13::bytea) > 0 THEN $13 ELSE runner END,
		moved = octet_length($13::bytea) = 0 OR runner <> $13,
		trace = CASE WHEN octet_length($14::bytea) > 0 THEN $14 ELSE trace END
	WHERE id = $1 AND seq = $2 AND (octet_length($3::bytea) = 0 OR agent = $3)
	RETURNING id, agent, tail, snap_size, moved OR cardinality(array_remove(watchers, $13::bytea)) > 0 AS notify
), m AS (
	INSERT INTO messages (agent, message_id, task_id) SELECT t.agent, mid, t.id FROM t, unnest($10::bytea[]) AS mid
	ON CONFLICT (agent, message_id) DO NOTHING RETURNING 1
), e AS (
	INSERT INTO events (task_id, seq, time, body)
	SELECT t.id, $2 + u.o, u.tm, u.b FROM t, unnest($11::bigint[], $12::bytea[]) WITH ORDINALITY AS u(tm, b, o)
	RETURNING 1
)
SELECT t.tail, t.snap_size, CASE WHEN (SELECT count(*) FROM m) < cardinality($10::bytea[])
	THEN a2abridge_fail('` + errDuplicate + `') ELSE (SELECT count(*) FROM e) END, t.notify
FROM t`

// appendNextQuick is appendNext without message ids.
const appendNextQuick = `WITH t AS (
	UPDATE tasks SET
		state = CASE WHEN $4 THEN $5 ELSE state END,
		status_ts = CASE WHEN $4 THEN $6 ELSE status_ts END,
		seq = $7, updated = $8, tail = tail + $9,
		runner = CASE WHEN octet_length($12::bytea) > 0 THEN $12 ELSE runner END,
		moved = octet_length($12::bytea) = 0 OR runner <> $12,
		trace = CASE WHEN octet_length($13::bytea) > 0 THEN $13 ELSE trace END
	WHERE id = $1 AND seq = $2 AND (octet_length($3::bytea) = 0 OR agent = $3)
	RETURNING id, tail, snap_size, moved OR cardinality(array_remove(watchers, $12::bytea)) > 0 AS notify
), e AS (
	INSERT INTO events (task_id, seq, time, body)
	SELECT t.id, $2 + u.o, u.tm, u.b FROM t, unnest($10::bigint[], $11::bytea[]) WITH ORDINALITY AS u(tm, b, o)
	RETURNING 1
)
SELECT t.tail, t.snap_size, (SELECT count(*) FROM e), t.notify FROM t`

// putCheckpoint writes a task's snapshot at seq $2 unless a later one is
// there, and then counts the events after it: the tail the append
// measured up to $2 ($4, relative to the previous checkpoint) goes.
const putCheckpoint = `WITH s AS (
	INSERT INTO snapshots (task_id, seq, body) VALUES ($1, $2, $3)
	ON CONFLICT (task_id) DO UPDATE SET seq = excluded.seq, body = excluded.body WHERE snapshots.seq < excluded.seq
	RETURNING 1
)
UPDATE tasks SET tail = greatest(tail - $4, 0), snap_size = $5 WHERE id = $1 AND EXISTS (SELECT 1 FROM s)`

// Append implements store.Store: when it returns nil, a is committed. It
// returns store.ErrConflict, store.ErrNotFound or
// store.ErrDuplicateMessage as documented there (unwrapped); ErrClosed
// after Close; ctx.Err() when ctx is done before a writer took the
// append (once taken, Append waits for its outcome, bounded by
// batchTimeout: an answer lost with the connection is an error although
// the append may be committed, as with any database); a
// plain error for a malformed append (as store/sqlite documents it, plus
// an id, agent, owner or context id that is not UTF-8 or holds a NUL
// byte) or an event that the record format cannot hold; and the
// database's error. On any error but a lost answer, nothing is written.
//
// Appends go through the Store's group commit (see AppendAsync): under
// load, appends of many tasks share one transaction and one round trip.
// Snapshot is written only when a checkpoint is due (see the package
// doc), after the commit; failing to write it is not an error.
func (s *Store) Append(ctx context.Context, a store.Append) error {
	// Its outcome, once a writer took it: returning ctx.Err() while the
	// batch may still commit would break "on error nothing is written".
	// A writer answers ctx.Err() for an append it had not taken yet, and
	// bounds each round trip (batchTimeout).
	return <-s.AppendAsync(ctx, a)
}

// request is one append on its way to the database: the append, its
// records encoded, and where its outcome goes.
type request struct {
	ctx          context.Context
	a            store.Append
	msgs         []string // a.MessageIDs, sorted
	bodies       [][]byte
	times        []int64
	now          int64
	size         int64      // the records' bytes
	statusChange bool       // a record other than an artifact update
	last         int64      // the task's last sequence number once applied
	res          chan error // buffered: receives the outcome once
}

// prepare validates a and encodes its records.
func prepare(a store.Append) (*request, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if !a.Snapshot.Status.State.Valid() {
		return nil, fmt.Errorf("postgres: append: snapshot state %q is not a task state", a.Snapshot.Status.State)
	}
	r := &request{a: a, now: time.Now().UnixNano(), last: a.After + int64(len(a.Records)), res: make(chan error, 1),
		bodies: make([][]byte, len(a.Records)), times: make([]int64, len(a.Records))}
	for i, rec := range a.Records {
		if err := pkg.CheckRecordTime(i, rec.Time); err != nil {
			return nil, err
		}
		if _, chunk := rec.Event.(*a2a.TaskArtifactUpdateEvent); !chunk {
			r.statusChange = true
		}
		var err error
		if r.bodies[i], err = sqlstore.Encode(rec.Event); err != nil {
			return nil, fmt.Errorf("postgres: append: record %d: %w", i, err)
		}
		r.size += int64(len(r.bodies[i]))
		r.times[i] = r.now
		if !rec.Time.IsZero() {
			r.times[i] = rec.Time.UnixNano()
		}
	}
	// Message ids in one order for every append, so that two appends
	// indexing the same ids wait for each other instead of deadlocking.
	r.msgs = append([]string{}, a.MessageIDs...)
	sortStrings(r.msgs)
	return r, nil
}

// statement returns the statement that applies r and then the requests
// chained to it (continuations of r's task, each where the one before
// ends, without message ids: see chain) in one: the task's row written
// once, with the last one's snapshot, and every record.
func statement(r *request, chained []*request) (string, []any) {
	a := &r.a
	end := r
	bodies, times := r.bodies, r.times
	size, statusChange, runner, trace := r.size, r.statusChange, a.Runner, a.Trace
	if len(chained) > 0 {
		end = chained[len(chained)-1]
		bodies = append([][]byte{}, bodies...)
		times = append([]int64{}, times...)
		for _, q := range chained {
			bodies = append(bodies, q.bodies...)
			times = append(times, q.times...)
			size += q.size
			statusChange = statusChange || q.statusChange
			if q.a.Runner != "" {
				runner = q.a.Runner
			}
			if q.a.Trace != "" {
				trace = q.a.Trace
			}
		}
	}
	snap := &end.a.Snapshot
	state := record.StateName(snap.Status.State)
	status := listing.StatusKey(snap.Status.Timestamp)
	switch {
	case a.After == 0:
		return appendCreate, []any{bs(a.TaskID), bs(a.Agent), bs(a.Owner), bs(snap.ContextID), state, end.last, r.now, size, status,
			bss(r.msgs), times, bodies, bs(runner), bs(trace)}
	case len(r.msgs) > 0:
		return appendNext, []any{bs(a.TaskID), a.After, bs(a.Agent), statusChange, state, status, end.last, end.now, size,
			bss(r.msgs), times, bodies, bs(runner), bs(trace)}
	default:
		return appendNextQuick, []any{bs(a.TaskID), a.After, bs(a.Agent), statusChange, state, status, end.last, end.now, size,
			times, bodies, bs(runner), bs(trace)}
	}
}

// outcome is what an append statement returned: whether it applied
// (false: the task's row was not written, see whyNot), the task's tail
// and checkpoint size after it, or its failure (err:
// store.ErrDuplicateMessage, or the database's error, wrapped), and
// whether the server reported that failure (byServer: the statement, and
// the transaction it was part of, rolled back).
type outcome struct {
	applied        bool
	notify         bool // the append is to be notified (see notify.go)
	tail, snapSize int64
	err            error
	byServer       bool
}

// scanAppend reads the row an append statement of records records
// returns.
func scanAppend(row pgx.Row, records int) outcome {
	var o outcome
	var written int64
	err := row.Scan(&o.tail, &o.snapSize, &written, &o.notify)
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return outcome{}
	case errors.As(err, &pe) && pe.Code == errDuplicate:
		return outcome{err: store.ErrDuplicateMessage, byServer: true}
	case err != nil:
		return outcome{err: wrap("append", err), byServer: errors.As(err, &pe)}
	case written != int64(records):
		// Cannot happen: the statement inserts every record or fails.
		return outcome{err: fmt.Errorf("postgres: append: %d of %d records written", written, records)}
	}
	o.applied = true
	return o
}

// applyOne runs r's statement alone (one implicit transaction) and
// returns its outcome for r's caller.
func (s *Store) applyOne(r *request) error {
	ctx, cancel := context.WithTimeout(r.ctx, batchTimeout)
	defer cancel()
	sql, args := statement(r, nil)
	o := scanAppend(s.pool.QueryRow(ctx, sql, args...), len(r.a.Records))
	if o.err != nil {
		return o.err
	}
	if !o.applied {
		return s.notApplied(r)
	}
	s.committed(r, o)
	return nil
}

// notApplied is the outcome of an append whose statement wrote nothing.
func (s *Store) notApplied(r *request) error {
	if r.a.After == 0 {
		return store.ErrConflict
	}
	ctx, cancel := context.WithTimeout(r.ctx, batchTimeout)
	defer cancel()
	return s.whyNot(ctx, &r.a)
}

// committed does what follows the commit of an append (end: the last
// of the appends one statement applied; o: what the statement returned):
// its notification, when one is due, and, when due, its checkpoint.
func (s *Store) committed(end *request, o outcome) {
	if s.notify != nil && o.notify {
		s.notify.appended(end.a.TaskID, end.last)
	}
	tail := o.tail
	if sqlstore.CheckpointDue(tail, o.snapSize) {
		// Apart from the writer: a slow one holds up no task.
		s.background.Add(1)
		go func() {
			defer s.background.Done()
			s.checkpoint(end.ctx, end.a.TaskID, end.last, &end.a.Snapshot, tail)
		}()
	}
}

// checkpoint writes snap, the task's snapshot at seq last, whose events
// after the previous checkpoint weigh tail bytes. It is best effort: the
// append is committed already, and a missing checkpoint only makes
// reads fold more records.
func (s *Store) checkpoint(ctx context.Context, taskID string, last int64, snap *a2a.Task, tail int64) {
	body, err := sqlstore.Encode(snap)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, _ = s.pool.Exec(ctx, putCheckpoint, bs(taskID), last, body, tail, int64(len(body)))
}

// whyNot explains why an append's conditional update changed no row.
func (s *Store) whyNot(ctx context.Context, a *store.Append) error {
	var seq int64
	var agent []byte
	switch err := s.pool.QueryRow(ctx, "SELECT seq, agent FROM tasks WHERE id = $1", bs(a.TaskID)).Scan(&seq, &agent); {
	case errors.Is(err, pgx.ErrNoRows):
		return store.ErrNotFound
	case err != nil:
		return wrap("append", err)
	case seq != a.After:
		return store.ErrConflict
	case a.Agent != "" && string(agent) != a.Agent:
		return fmt.Errorf("postgres: append: task %q belongs to agent %q, not %q", a.TaskID, agent, a.Agent)
	default:
		// The row moved on and back? Sequence numbers only grow: another
		// writer appended between the update and this read.
		return store.ErrConflict
	}
}

// sortStrings sorts ids bytewise (insertion sort: an append has few).
func sortStrings(ids []string) {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}

// taskRow is a task's id, row and checkpoint, as read.
type taskRow struct {
	id string
	sqlstore.TaskRow
}

// readTask reads a task's row, its checkpoint and the records after it
// in one statement (so from one snapshot of the database): the first row
// is the task's, the others its records in order.
const readTask = `WITH t AS (
	SELECT t.agent, t.owner, t.seq, t.created, t.updated, coalesce(s.seq, 0) AS snap_seq, s.body, t.trace
	FROM tasks t LEFT JOIN snapshots s ON s.task_id = t.id WHERE t.id = $1
)
SELECT 0 AS k, agent, owner, seq, created, updated, snap_seq, body, trace FROM t
UNION ALL
SELECT 1, NULL, NULL, e.seq, e.time, NULL, NULL, e.body, NULL FROM t, events e
WHERE e.task_id = $1 AND e.seq > t.snap_seq AND e.seq <= t.seq
ORDER BY 1, 4`

// Task implements store.Store: the task's snapshot (its checkpoint with
// the records after it folded on), store.ErrNotFound, or ErrClosed after
// Close. Created and Updated are in UTC.
func (s *Store) Task(ctx context.Context, taskID string) (store.TaskInfo, error) {
	if s.isShut.Load() {
		return store.TaskInfo{}, ErrClosed
	}
	rows, err := s.pool.Query(ctx, readTask, bs(taskID))
	if err != nil {
		return store.TaskInfo{}, wrap("task "+taskID, err)
	}
	defer rows.Close()
	var (
		row   taskRow
		found bool
		recs  []store.Record
	)
	for rows.Next() {
		var (
			k                int32
			agent, owner     []byte
			seq, created     int64
			updated, snapSeq *int64
			body, trace      []byte
		)
		if err := rows.Scan(&k, &agent, &owner, &seq, &created, &updated, &snapSeq, &body, &trace); err != nil {
			return store.TaskInfo{}, wrap("task "+taskID, err)
		}
		if k == 0 {
			found = true
			row.id, row.Info.Agent, row.Info.Owner, row.Info.Seq = taskID, string(agent), string(owner), seq
			row.SetTimes(created, deref64(updated))
			row.SnapSeq, row.Snap = deref64(snapSeq), body
			row.Info.Trace = string(trace)
			continue
		}
		rec, err := pkg.Record("task "+taskID, seq, created, body)
		if err != nil {
			return store.TaskInfo{}, err
		}
		recs = append(recs, rec)
	}
	if err := rows.Err(); err != nil {
		return store.TaskInfo{}, wrap("task "+taskID, err)
	}
	if !found {
		return store.TaskInfo{}, store.ErrNotFound
	}
	return foldTask(row, recs)
}

func deref64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// foldTask builds the task of row (sqlstore.Fold) from recs, the records
// after its checkpoint up to the row's seq, as read with the row. Records
// missing from them mean the task is being deleted (DeleteFinished):
// store.ErrNotFound.
func foldTask(row taskRow, recs []store.Record) (store.TaskInfo, error) {
	return pkg.Fold(row.id, row.TaskRow, func(int64) ([]store.Record, error) { return recs, nil })
}

// querier is what foldRows reads with: the pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// foldRows folds the tasks of rows (see foldTask), reading the records
// of all of them with one query; a task whose records are missing (being
// deleted) is left out.
func foldRows(ctx context.Context, q querier, rows []taskRow) ([]store.TaskInfo, error) {
	ids := make([][]byte, 0, len(rows))
	lo := make([]int64, 0, len(rows))
	hi := make([]int64, 0, len(rows))
	for _, r := range rows {
		if r.Info.Seq > r.SnapSeq {
			ids, lo, hi = append(ids, bs(r.id)), append(lo, r.SnapSeq), append(hi, r.Info.Seq)
		}
	}
	byTask := map[string][]store.Record{}
	if len(ids) > 0 {
		rs, err := q.Query(ctx, `SELECT e.task_id, e.seq, e.time, e.body
			FROM unnest($1::bytea[], $2::bigint[], $3::bigint[]) AS p(id, lo, hi)
			JOIN events e ON e.task_id = p.id AND e.seq > p.lo AND e.seq <= p.hi
			ORDER BY e.task_id, e.seq`, ids, lo, hi)
		if err != nil {
			return nil, wrap("read records", err)
		}
		for rs.Next() {
			var (
				id      []byte
				seq, tm int64
				body    []byte
			)
			if err := rs.Scan(&id, &seq, &tm, &body); err != nil {
				rs.Close()
				return nil, wrap("read records", err)
			}
			rec, err := pkg.Record("task "+string(id), seq, tm, body)
			if err != nil {
				rs.Close()
				return nil, err
			}
			byTask[string(id)] = append(byTask[string(id)], rec)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return nil, wrap("read records", err)
		}
	}
	out := make([]store.TaskInfo, 0, len(rows))
	for _, r := range rows {
		info, err := foldTask(r, byTask[r.id])
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

// Events implements store.Store: up to limit records with Seq > after, in
// order (limit <= 0: all of them), each with a freshly decoded Event and
// its Time in UTC; store.ErrNotFound for an unknown task; ErrClosed after
// Close.
func (s *Store) Events(ctx context.Context, taskID string, after int64, limit int) ([]store.Record, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	var lim *int64
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	rows, err := s.pool.Query(ctx, "SELECT seq, time, body FROM events WHERE task_id = $1 AND seq > $2 ORDER BY seq LIMIT $3", bs(taskID), after, lim)
	if err != nil {
		return nil, wrap("events "+taskID, err)
	}
	defer rows.Close()
	recs, err := pkg.Records(rows, "events "+taskID)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		var one int32
		switch err := s.pool.QueryRow(ctx, "SELECT 1 FROM tasks WHERE id = $1", bs(taskID)).Scan(&one); {
		case errors.Is(err, pgx.ErrNoRows):
			return nil, store.ErrNotFound
		case err != nil:
			return nil, wrap("events "+taskID, err)
		}
	}
	return recs, nil
}

// MessageTask implements store.Store: the id of the task that indexed
// (agent, messageID), or "" and no error when there is none; ErrClosed
// after Close. A Store opened Exclusive answers for a message id never
// indexed usually without a read (a filter of the indexed ids, loaded
// after Open: store/internal/msgfilter); a shared one always reads.
func (s *Store) MessageTask(ctx context.Context, agent, messageID string) (string, error) {
	if s.isShut.Load() {
		return "", ErrClosed
	}
	if s.msgs != nil && s.msgs.Absent(agent, messageID) {
		return "", nil
	}
	var id []byte
	switch err := s.pool.QueryRow(ctx, "SELECT task_id FROM messages WHERE agent = $1 AND message_id = $2", bs(agent), bs(messageID)).Scan(&id); {
	case errors.Is(err, pgx.ErrNoRows):
		return "", nil
	case err != nil:
		return "", wrap("message task", err)
	}
	return string(id), nil
}

// scanMessages yields the keys of the messages table (msgfilter.Load).
func (s *Store) scanMessages(ctx context.Context, add func(agent, id string)) error {
	rows, err := s.pool.Query(ctx, "SELECT agent, message_id FROM messages")
	if err != nil {
		return err
	}
	defer rows.Close()
	var agent, id []byte
	for rows.Next() {
		if err := rows.Scan(&agent, &id); err != nil {
			return err
		}
		add(string(agent), string(id))
	}
	return rows.Err()
}

// Unfinished implements store.Store: every task whose snapshot state is
// submitted, working or unknown, ordered by creation time then id, read
// in one repeatable-read transaction; ErrClosed after Close.
func (s *Store) Unfinished(ctx context.Context) ([]store.TaskInfo, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	return s.unfinished(ctx, "unfinished", "", 0)
}

// unfinished reads the tasks that are submitted, working or unknown and
// that also match cond (SQL on tasks t; "" for none), ordered by creation
// time then id, up to limit (0: all), folded, in one repeatable-read
// transaction: Unfinished and Orphans. op names the operation in errors.
func (s *Store) unfinished(ctx context.Context, op, cond string, limit int) ([]store.TaskInfo, error) {
	q := `SELECT t.id, t.agent, t.owner, t.seq, t.created, t.updated, coalesce(s.seq, 0), s.body, t.trace
		FROM tasks t LEFT JOIN snapshots s ON s.task_id = t.id
		WHERE t.state IN ('submitted', 'working', 'unknown')`
	if cond != "" {
		q += " AND " + cond
	}
	q += " ORDER BY t.created, t.id"
	var args []any
	if limit > 0 {
		q += " LIMIT $1"
		args = append(args, limit)
	}
	var out []store.TaskInfo
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		rs, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		var traces [][]byte
		rows, err := scanRows(rs, func() []any {
			traces = append(traces, nil)
			return []any{&traces[len(traces)-1]}
		})
		if err != nil {
			return err
		}
		for i := range rows {
			rows[i].Info.Trace = string(traces[i])
		}
		out, err = foldRows(ctx, tx, rows)
		return err
	})
	if err != nil {
		return nil, wrap(op, err)
	}
	return out, nil
}

// scanRows reads rows of the columns id, agent, owner, seq, created,
// updated, checkpoint seq (0: none) and checkpoint body, then extra
// (scanned into the destinations that extra returns for each row).
func scanRows(rs pgx.Rows, extra ...func() []any) ([]taskRow, error) {
	defer rs.Close()
	var out []taskRow
	for rs.Next() {
		var r taskRow
		var created, updated int64
		var id, agent, owner []byte
		dest := []any{&id, &agent, &owner, &r.Info.Seq, &created, &updated, &r.SnapSeq, &r.Snap}
		for _, x := range extra {
			dest = append(dest, x()...)
		}
		if err := rs.Scan(dest...); err != nil {
			return nil, err
		}
		r.id, r.Info.Agent, r.Info.Owner = string(id), string(agent), string(owner)
		r.SetTimes(created, updated)
		out = append(out, r)
	}
	return out, rs.Err()
}

// readTx runs fn in a read-only repeatable-read transaction: the reads
// it makes see one snapshot of the database.
func (s *Store) readTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// wrap prefixes err with the package and op (sqlstore.Name.Wrap: no
// driver type escapes the package).
var wrap = pkg.Wrap
