package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// deleteBudget bounds the log records one DeleteFinished call deletes, so
// that its transaction holds the writer for milliseconds, not seconds.
const deleteBudget = 4096

// DeleteFinished implements store.Store (retention). A task is deleted in
// one transaction when it has at most deleteBudget records; a larger one
// loses its oldest records in transactions of that many first (a reader
// of its log meanwhile sees the later records only, and Task may answer
// store.ErrNotFound when it needs them), then the rest with its row. It returns ErrClosed
// after Close.
func (s *Store) DeleteFinished(ctx context.Context, before time.Time, limit int) (int, bool, error) {
	if limit <= 0 {
		limit = 256
	}
	if s.isShut.Load() {
		return 0, false, ErrClosed
	}
	cut := before.UnixNano()
	if before.Before(minTime) {
		return 0, false, nil
	} else if before.After(maxTime) {
		cut = maxTime.UnixNano()
	}
	var (
		deleted int
		more    bool
	)
	err := s.write(ctx, func(ctx context.Context, c *sql.Conn) error {
		deleted, more = 0, false
		type candidate struct {
			id  string
			seq int64
		}
		rows, err := c.QueryContext(ctx, `SELECT id, seq FROM tasks INDEXED BY tasks_finished
			WHERE (state = 'completed' OR state = 'canceled' OR state = 'failed' OR state = 'rejected') AND updated < ?
			AND NOT EXISTS (SELECT 1 FROM push_configs p WHERE p.task_id = tasks.id AND p.delivered < tasks.seq)
			ORDER BY updated, id LIMIT ?`, cut, limit+1)
		if err != nil {
			return wrap("delete finished", err)
		}
		var cands []candidate
		for rows.Next() {
			var k candidate
			if err := rows.Scan(&k.id, &k.seq); err != nil {
				rows.Close()
				return wrap("delete finished", err)
			}
			cands = append(cands, k)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return wrap("delete finished", err)
		}
		if len(cands) > limit {
			cands, more = cands[:limit], true
		}
		budget := int64(deleteBudget)
		for _, k := range cands {
			if budget <= 0 {
				more = true
				break
			}
			var low sql.NullInt64
			if err := c.QueryRowContext(ctx, "SELECT min(seq) FROM events WHERE task_id = ?", k.id).Scan(&low); err != nil {
				return wrap("delete finished", err)
			}
			if low.Valid {
				upto := low.Int64 + budget // records below it go
				n, err := rowsAffected(c.ExecContext(ctx, "DELETE FROM events WHERE task_id = ? AND seq < ?", k.id, upto))
				if err != nil {
					return wrap("delete finished", err)
				}
				budget -= n
				if upto <= k.seq {
					more = true // records remain: the next call goes on
					break
				}
			}
			for _, q := range []string{
				"DELETE FROM snapshots WHERE task_id = ?",
				"DELETE FROM messages WHERE task_id = ?",
				"DELETE FROM push_configs WHERE task_id = ?",
				"DELETE FROM tasks WHERE id = ?",
			} {
				if _, err := c.ExecContext(ctx, q, k.id); err != nil {
					return wrap("delete finished", err)
				}
			}
			budget--
			deleted++
		}
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return deleted, more, nil
}
