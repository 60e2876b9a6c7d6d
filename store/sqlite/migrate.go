package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/record"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
	"github.com/a2abridge/a2abridge/store/internal/listing"
)

// migration upgrades a database by one schema version: SQL, or Go code
// for what SQL cannot do (decode and encode rows).
type migration struct {
	sql string
	fn  func(ctx context.Context, c *sql.Conn) error
}

// migrations[v] upgrades a database from schema version v to v+1 (run
// before schema, whose CREATE ... IF NOT EXISTS adds new tables and
// indexes).
var migrations = map[int]migration{
	1: {sql: `ALTER TABLE tasks ADD COLUMN owner TEXT NOT NULL DEFAULT '';`},
	// v3 indexes only unfinished tasks (what Unfinished reads), so a
	// task's index entry goes away when it ends instead of moving. (The
	// index's condition is written with OR, not IN: SQLite evaluates an
	// IN list through a temporary table on every write.)
	2: {sql: `DROP INDEX IF EXISTS tasks_state;`},
	// v4 moves each task's snapshot out of its row into snapshots, where
	// it is written only as a checkpoint: an append updates a small row
	// instead of rewriting the whole task (SQLite rewrites a row, blob
	// included, on every UPDATE).
	3: {sql: `CREATE TABLE snapshots (
	task_id TEXT PRIMARY KEY REFERENCES tasks(id),
	seq     INTEGER NOT NULL,
	body    BLOB NOT NULL
);
INSERT INTO snapshots (task_id, seq, body) SELECT id, seq, snapshot FROM tasks;
ALTER TABLE tasks ADD COLUMN tail INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN snap_size INTEGER NOT NULL DEFAULT 0;
UPDATE tasks SET snap_size = length(snapshot);
ALTER TABLE tasks DROP COLUMN snapshot;`},
	// v5 stores records (internal/record) instead of A2A 0.3.0 JSON, and
	// each task's status time for ListTasks (its indexes come with schema).
	4: {fn: migrateRecords},
	// v6 keeps each task's trace context (store.Append.Trace).
	5: {sql: `ALTER TABLE tasks ADD COLUMN trace TEXT NOT NULL DEFAULT '';`},
	// v7 drops the checkpoints: they were folded without joining a
	// streamed artifact's text chunks (internal/fold), and the events
	// after one, folded onto it, would join onto its last part only.
	// Each task is read as the fold of its whole log until an append
	// writes a checkpoint again (its tail is all of its records).
	6: {sql: `DELETE FROM snapshots;
UPDATE tasks SET snap_size = 0, tail = coalesce((SELECT sum(length(e.body)) FROM events e WHERE e.task_id = tasks.id), 0);`},
}

// migrate creates the schema in a new database, or upgrades an existing
// one from its version (PRAGMA user_version) to SchemaVersion, in one
// transaction: when any step fails, nothing is changed.
func (s *Store) migrate(ctx context.Context) error {
	return s.immediateTx(ctx, "commit schema", migrateTx)
}

// migrateTx is migrate's work inside its transaction, on the writer's
// connection c.
func migrateTx(ctx context.Context, c *sql.Conn) (err error) {
	var v int
	if err := c.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return wrap("read schema version", err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("sqlite: database schema version %d is newer than %d", v, SchemaVersion)
	}
	if v > 0 {
		for from := v; from < SchemaVersion; from++ {
			m := migrations[from]
			if m.fn != nil {
				err = m.fn(ctx, c)
			} else {
				_, err = c.ExecContext(ctx, m.sql)
				err = dbErr(err)
			}
			if err != nil {
				return fmt.Errorf("sqlite: migrate schema %d→%d: %w", from, from+1, err)
			}
		}
	}
	if _, err := c.ExecContext(ctx, schema); err != nil {
		return wrap("create schema", err)
	}
	if v < SchemaVersion {
		if _, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
			return wrap("set schema version", err)
		}
	}
	return nil
}

// dbErr flattens a driver error as wrap does, without a prefix.
func dbErr(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return errors.New(err.Error())
}

// migrateBatch is how many rows migrateRecords reads at a time.
const migrateBatch = 256

// migrateRecords converts a schema 4 database: every event, snapshot and
// push config body from A2A 0.3.0 JSON (decoded as the release that
// wrote it did, with internal/wire/v03) to a record, each task's tail and
// snap_size to the records' sizes, and the new status_ts column to the
// status time of the task's last status-setting record (a Task or a
// status update; none left in its log: its snapshot's). It reads the
// rows in batches, in key order, so that memory stays bounded. A row that
// does not decode fails the migration, naming it.
func migrateRecords(ctx context.Context, c *sql.Conn) error {
	for _, q := range []string{
		`ALTER TABLE tasks ADD COLUMN status_ts INTEGER NOT NULL DEFAULT -9223372036854775808`,
		`UPDATE tasks SET snap_size = 0`,
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return dbErr(err)
		}
	}
	if err := migrateSnapshots(ctx, c); err != nil {
		return err
	}
	if err := migrateEvents(ctx, c); err != nil {
		return err
	}
	var push int // a database of schema 1 has no push_configs yet
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'push_configs'").Scan(&push); err != nil {
		return dbErr(err)
	}
	if push > 0 {
		if err := migratePush(ctx, c); err != nil {
			return err
		}
	}
	_, err := c.ExecContext(ctx, `UPDATE tasks SET tail = coalesce((SELECT sum(length(e.body)) FROM events e
		WHERE e.task_id = tasks.id AND e.seq > coalesce((SELECT s.seq FROM snapshots s WHERE s.task_id = tasks.id), 0)), 0)`)
	return wrap("recompute tails", err)
}

// row is a row being converted: its key and body.
type row struct {
	id   string
	n    int64 // events: seq; push configs: rowid
	body []byte
}

// readRows runs q and scans every row (key columns, then the body).
func readRows(ctx context.Context, c *sql.Conn, withN bool, q string, args ...any) ([]row, error) {
	rows, err := c.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, dbErr(err)
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		if withN {
			err = rows.Scan(&r.id, &r.n, &r.body)
		} else {
			err = rows.Scan(&r.id, &r.body)
		}
		if err != nil {
			return nil, dbErr(err)
		}
		out = append(out, r)
	}
	return out, dbErr(rows.Err())
}

func migrateSnapshots(ctx context.Context, c *sql.Conn) error {
	put, err := c.PrepareContext(ctx, "UPDATE snapshots SET body = ? WHERE task_id = ?")
	if err != nil {
		return dbErr(err)
	}
	defer put.Close()
	task, err := c.PrepareContext(ctx, "UPDATE tasks SET status_ts = ?, snap_size = ? WHERE id = ?")
	if err != nil {
		return dbErr(err)
	}
	defer task.Close()
	after := ""
	for {
		rows, err := readRows(ctx, c, false, "SELECT task_id, body FROM snapshots WHERE task_id > ? ORDER BY task_id LIMIT ?", after, migrateBatch)
		if err != nil || len(rows) == 0 {
			return err
		}
		for _, r := range rows {
			e, err := v03.UnmarshalEvent(r.body)
			if err != nil {
				return fmt.Errorf("snapshot of task %q: %w", r.id, err)
			}
			t, ok := e.(*a2a.Task)
			if !ok {
				return fmt.Errorf("snapshot of task %q is a %T", r.id, e)
			}
			body, err := record.MarshalEvent(t)
			if err != nil {
				return fmt.Errorf("snapshot of task %q: %w", r.id, err)
			}
			if _, err := put.ExecContext(ctx, body, r.id); err != nil {
				return dbErr(err)
			}
			if _, err := task.ExecContext(ctx, listing.StatusKey(t.Status.Timestamp), len(body), r.id); err != nil {
				return dbErr(err)
			}
		}
		after = rows[len(rows)-1].id
	}
}

func migrateEvents(ctx context.Context, c *sql.Conn) error {
	put, err := c.PrepareContext(ctx, "UPDATE events SET body = ? WHERE task_id = ? AND seq = ?")
	if err != nil {
		return dbErr(err)
	}
	defer put.Close()
	task, err := c.PrepareContext(ctx, "UPDATE tasks SET status_ts = ? WHERE id = ?")
	if err != nil {
		return dbErr(err)
	}
	defer task.Close()
	// The task whose events are being converted, and the status time of
	// its last status-setting record so far.
	var (
		cur       string
		status    int64
		hasStatus bool
	)
	flush := func() error {
		if hasStatus {
			if _, err := task.ExecContext(ctx, status, cur); err != nil {
				return dbErr(err)
			}
		}
		return nil
	}
	afterID, afterSeq := "", int64(0)
	for {
		rows, err := readRows(ctx, c, true, "SELECT task_id, seq, body FROM events WHERE (task_id, seq) > (?, ?) ORDER BY task_id, seq LIMIT ?", afterID, afterSeq, migrateBatch)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return flush()
		}
		for _, r := range rows {
			e, err := v03.UnmarshalEvent(r.body)
			if err != nil {
				return fmt.Errorf("record %d of task %q: %w", r.n, r.id, err)
			}
			body, err := record.MarshalEvent(e)
			if err != nil {
				return fmt.Errorf("record %d of task %q: %w", r.n, r.id, err)
			}
			if _, err := put.ExecContext(ctx, body, r.id, r.n); err != nil {
				return dbErr(err)
			}
			if r.id != cur {
				if err := flush(); err != nil {
					return err
				}
				cur, hasStatus = r.id, false
			}
			switch e := e.(type) {
			case *a2a.Task:
				status, hasStatus = listing.StatusKey(e.Status.Timestamp), true
			case *a2a.TaskStatusUpdateEvent:
				status, hasStatus = listing.StatusKey(e.Status.Timestamp), true
			}
		}
		afterID, afterSeq = rows[len(rows)-1].id, rows[len(rows)-1].n
	}
}

func migratePush(ctx context.Context, c *sql.Conn) error {
	put, err := c.PrepareContext(ctx, "UPDATE push_configs SET body = ? WHERE rowid = ?")
	if err != nil {
		return dbErr(err)
	}
	defer put.Close()
	after := int64(0)
	for {
		rows, err := readRows(ctx, c, true, "SELECT task_id, rowid, body FROM push_configs WHERE rowid > ? ORDER BY rowid LIMIT ?", after, migrateBatch)
		if err != nil || len(rows) == 0 {
			return err
		}
		for _, r := range rows {
			p, err := v03.UnmarshalTaskPushNotificationConfig(r.body)
			if err != nil {
				return fmt.Errorf("push config (row %d) of task %q: %w", r.n, r.id, err)
			}
			body, err := record.MarshalPushConfig(&p.PushNotificationConfig)
			if err != nil {
				return fmt.Errorf("push config (row %d) of task %q: %w", r.n, r.id, err)
			}
			if _, err := put.ExecContext(ctx, body, r.n); err != nil {
				return dbErr(err)
			}
		}
		after = rows[len(rows)-1].n
	}
}
