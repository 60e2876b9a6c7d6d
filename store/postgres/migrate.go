package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SchemaVersion is the schema version this package writes, kept in table
// a2abridge_schema. Open refuses a database with a higher version.
const SchemaVersion = 6

// migrations[v] upgrades a schema of version v to v+1 (migrations[0]
// creates it). Each runs in the transaction of migrate, so a failing one
// leaves the database as it was.
//
// The schema (version 1). Ids, names and other strings of the domain are
// bytea, not text: a Go string may hold any bytes (the engine's message
// index keys have NUL bytes, a client's contextId may too), which text
// cannot, and bytea compares and sorts bytewise, as listing.Key and the
// other stores order ids, whatever the database's collation. Times are
// int64 Unix nanoseconds (as in store/sqlite; listing.StatusKey for
// status_ts).
//
//   - tasks: one row per task, its bookkeeping. seq is the last sequence
//     number: every append updates the row only at the seq it expects
//     (the row lock serializes appends to one task, the condition fails
//     the loser with store.ErrConflict). tail is the encoded size of the
//     records after the checkpoint, snap_size the checkpoint's size.
//     Partial indexes serve Unfinished and retention; the list indexes
//     serve each ListTasks page from its first row.
//   - snapshots: at most one checkpoint per task (the fold of records
//     1..seq), deleted with the task.
//   - events: the log, keyed (task_id, seq). No foreign key: every insert
//     happens in the statement that updates or inserts the task's row.
//   - messages: the (agent, message_id) → task index; its primary key is
//     what makes a message id claimable once, across processes.
//   - push_configs (in registration order, pos), agents, attachments.
//   - a2abridge_fail(code) raises SQLSTATE code: the append statements
//     call it to undo themselves (a message id already indexed).
//
// Version 2 (the leases of replicas, see lease.go):
//
//   - tasks.runner: the process (an engine's runner id) whose execution
//     made the task's last append that named one (empty before).
//   - replicas: one lease per process (id, until by the database's
//     clock), renewed while it runs; an unfinished task whose runner has
//     no lease that has not expired is an orphan.
//
// Version 3 (push deliveries claimed once, see push.go):
//
//   - push_configs.claimed_by: the process (runner id) that delivers the
//     config's notifications now (empty: none); its claim lasts as long
//     as its lease in replicas.
//   - published_keys: the public JWK Set of each process's push signing
//     keys (keys.go), so that every replica serves all of them.
//
// Version 4 (notifications only where they are awaited, see notify.go):
//
//   - tasks.watchers: the processes (runner ids) that follow the task
//     without running it (Store.WatchTask), each once.
//   - tasks.moved: whether the last append came from a process other than
//     the task's runner before it (or named none): set by each append
//     from the row it updates, and read back by it (RETURNING sees only
//     the new row).
//
// Version 5 (trace context across replicas):
//
//   - tasks.trace: the W3C traceparent of the span under which the task's
//     latest execution started (store.Append.Trace; empty: none), set by
//     the append that starts it, so that another process joins its trace.
var migrations = []string{
	0: `
CREATE TABLE tasks (
	id         bytea PRIMARY KEY,
	agent      bytea NOT NULL,
	owner      bytea NOT NULL DEFAULT '',
	context_id bytea NOT NULL,
	state      text NOT NULL,
	seq        bigint NOT NULL,
	created    bigint NOT NULL,
	updated    bigint NOT NULL,
	tail       bigint NOT NULL DEFAULT 0,
	snap_size  bigint NOT NULL DEFAULT 0,
	status_ts  bigint NOT NULL DEFAULT -9223372036854775808
);
CREATE INDEX tasks_unfinished ON tasks (created, id) WHERE state IN ('submitted', 'working', 'unknown');
CREATE INDEX tasks_finished ON tasks (updated, id) WHERE state IN ('completed', 'canceled', 'failed', 'rejected');
CREATE INDEX tasks_list_time ON tasks (agent, owner, status_ts, id);
CREATE INDEX tasks_list_context ON tasks (agent, owner, context_id, status_ts, id);
CREATE INDEX tasks_list_state ON tasks (agent, owner, state, status_ts, id);
CREATE TABLE snapshots (
	task_id bytea PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
	seq     bigint NOT NULL,
	body    bytea NOT NULL
);
CREATE TABLE events (
	task_id bytea NOT NULL,
	seq     bigint NOT NULL,
	time    bigint NOT NULL,
	body    bytea NOT NULL,
	PRIMARY KEY (task_id, seq)
);
CREATE TABLE messages (
	agent      bytea NOT NULL,
	message_id bytea NOT NULL,
	task_id    bytea NOT NULL,
	PRIMARY KEY (agent, message_id)
);
CREATE INDEX messages_task ON messages (task_id);
CREATE TABLE push_configs (
	pos       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	task_id   bytea NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	config_id bytea NOT NULL,
	body      bytea NOT NULL,
	delivered bigint NOT NULL,
	created   bigint NOT NULL,
	UNIQUE (task_id, config_id)
);
CREATE TABLE agents (
	name    bytea PRIMARY KEY,
	spec    bytea NOT NULL,
	created bigint NOT NULL,
	updated bigint NOT NULL
);
CREATE TABLE attachments (
	id         bytea PRIMARY KEY,
	agent      bytea NOT NULL,
	owner      bytea NOT NULL,
	task_id    bytea NOT NULL,
	media_type bytea NOT NULL,
	filename   bytea NOT NULL,
	body       bytea NOT NULL,
	created    bigint NOT NULL
);
CREATE INDEX attachments_task ON attachments (task_id);
CREATE FUNCTION a2abridge_fail(code text) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION USING ERRCODE = code, MESSAGE = 'a2abridge: append undone (' || code || ')';
END
$$;
`,
	1: `
ALTER TABLE tasks ADD COLUMN runner bytea NOT NULL DEFAULT '';
CREATE TABLE replicas (
	id    bytea PRIMARY KEY,
	until timestamptz NOT NULL
);
`,
	2: `
ALTER TABLE push_configs ADD COLUMN claimed_by bytea NOT NULL DEFAULT '';
CREATE TABLE published_keys (
	publisher bytea PRIMARY KEY,
	jwks      bytea NOT NULL,
	until     timestamptz NOT NULL
);
`,
	3: `
ALTER TABLE tasks ADD COLUMN watchers bytea[] NOT NULL DEFAULT '{}', ADD COLUMN moved boolean NOT NULL DEFAULT false;
`,
	4: `
ALTER TABLE tasks ADD COLUMN trace bytea NOT NULL DEFAULT '';
`,
	// Version 6 drops the checkpoints: they were folded without joining a
	// streamed artifact's text chunks (internal/fold), and the events
	// after one, folded onto it, would join onto its last part only.
	// Each task is read as the fold of its whole log until an append
	// writes a checkpoint again (its tail is all of its records).
	5: `
DELETE FROM snapshots;
UPDATE tasks SET snap_size = 0, tail = coalesce((SELECT sum(octet_length(e.body)) FROM events e WHERE e.task_id = tasks.id), 0);
`,
}

// migrate creates the schema in an empty search_path schema, or upgrades
// it from its version to SchemaVersion, in one transaction holding a
// transaction-scoped advisory lock keyed by the schema's name: processes
// opening one database at once take turns, and each one after the first
// finds the schema current.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var schema *string
	if err := tx.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return fmt.Errorf("read current schema: %w", err)
	}
	if schema == nil {
		return errors.New("no schema of the search_path exists (create it, or set search_path to one that does)")
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('a2abridge schema'), hashtext($1))", *schema); err != nil {
		return fmt.Errorf("lock schema %s: %w", *schema, err)
	}
	if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS a2abridge_schema (version integer NOT NULL)"); err != nil {
		return fmt.Errorf("create schema version table in %s: %w", *schema, err)
	}
	var v int
	switch err := tx.QueryRow(ctx, "SELECT version FROM a2abridge_schema").Scan(&v); {
	case errors.Is(err, pgx.ErrNoRows):
		if _, err := tx.Exec(ctx, "INSERT INTO a2abridge_schema (version) VALUES (0)"); err != nil {
			return fmt.Errorf("write schema version: %w", err)
		}
	case err != nil:
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("schema %s has version %d, newer than this a2abridge's %d", *schema, v, SchemaVersion)
	}
	if v == SchemaVersion {
		return tx.Commit(ctx)
	}
	for from := v; from < SchemaVersion; from++ {
		if _, err := tx.Exec(ctx, migrations[from]); err != nil {
			return fmt.Errorf("migrate schema %s %d→%d: %w", *schema, from, from+1, err)
		}
	}
	if _, err := tx.Exec(ctx, "UPDATE a2abridge_schema SET version = $1", SchemaVersion); err != nil {
		return fmt.Errorf("write schema version: %w", err)
	}
	return tx.Commit(ctx)
}
