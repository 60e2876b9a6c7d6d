package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/a2abridge/a2abridge/store/internal/sqlstore"
)

// DeleteFinished implements store.Store (retention), in one transaction:
// it locks its candidates (FOR UPDATE SKIP LOCKED, so that processes
// sharing the database and running retention at once take different
// tasks, and a task being appended to is left for the next call), then
// deletes tasks of up to sqlstore.DeleteBudget records in all with their
// records, message ids, attachments, checkpoints and push configs
// (sqlstore.Deletions chooses them). A larger task first loses its oldest
// records, sqlstore.DeleteBudget per call (a reader of its
// log meanwhile sees the later records only, and Task answers
// store.ErrNotFound), then the rest with its row. It returns ErrClosed
// after Close.
func (s *Store) DeleteFinished(ctx context.Context, before time.Time, limit int) (int, bool, error) {
	if limit <= 0 {
		limit = 256
	}
	if s.isShut.Load() {
		return 0, false, ErrClosed
	}
	cut, ok := sqlstore.Cutoff(before)
	if !ok {
		return 0, false, nil
	}
	var (
		deleted int
		more    bool
	)
	err := func() error {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		rows, err := tx.Query(ctx, `SELECT id, seq FROM tasks
			WHERE state IN ('completed', 'canceled', 'failed', 'rejected') AND updated < $1
			AND NOT EXISTS (SELECT 1 FROM push_configs p WHERE p.task_id = tasks.id AND p.delivered < tasks.seq)
			ORDER BY updated, id LIMIT $2 FOR UPDATE SKIP LOCKED`, cut, limit+1)
		if err != nil {
			return err
		}
		cands, err := sqlstore.Candidates[[]byte](rows)
		rows.Close()
		if err != nil {
			return err
		}
		lowest := func(id []byte) (int64, bool, error) {
			var low *int64
			if err := tx.QueryRow(ctx, "SELECT min(seq) FROM events WHERE task_id = $1", id).Scan(&low); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return 0, false, err
			}
			if low == nil {
				return 0, false, nil
			}
			return *low, true, nil
		}
		trim := func(id []byte, seq int64) error {
			_, err := tx.Exec(ctx, "DELETE FROM events WHERE task_id = $1 AND seq < $2", id, seq)
			return err
		}
		var ids [][]byte
		if ids, more, err = sqlstore.Deletions(cands, limit, lowest, trim); err != nil {
			return err
		}
		if len(ids) == 0 {
			return tx.Commit(ctx)
		}
		// The tasks' rows first (their checkpoints and push configs go
		// with them, ON DELETE CASCADE), then what refers to them.
		for _, q := range []string{
			"DELETE FROM tasks WHERE id = ANY($1)",
			"DELETE FROM events WHERE task_id = ANY($1)",
			"DELETE FROM messages WHERE task_id = ANY($1)",
			"DELETE FROM attachments WHERE task_id = ANY($1)",
		} {
			if _, err := tx.Exec(ctx, q, ids); err != nil {
				return err
			}
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
		deleted = len(ids)
		return nil
	}()
	if err != nil {
		return 0, false, wrap("delete finished", err)
	}
	return deleted, more, nil
}
