package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/a2abridge/a2abridge/store/internal/sqlstore"
)

// retentionStmts are the writer's statements for DeleteFinished. The
// deletes of a batch of tasks take their ids as one JSON array.
type retentionStmts struct {
	candidates, lowest, trim *sql.Stmt
	del                      [6]*sql.Stmt // events, snapshots, messages, push_configs, attachments, tasks
}

func (s *Store) prepareRetention(ctx context.Context) error {
	ids := "(SELECT value FROM json_each(?))"
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.ret.candidates, `SELECT id, seq FROM tasks INDEXED BY tasks_finished
			WHERE (state = 'completed' OR state = 'canceled' OR state = 'failed' OR state = 'rejected') AND updated < ?
			AND NOT EXISTS (SELECT 1 FROM push_configs p WHERE p.task_id = tasks.id AND p.delivered < tasks.seq)
			ORDER BY updated, id LIMIT ?`},
		{&s.ret.lowest, "SELECT min(seq) FROM events WHERE task_id = ?"},
		{&s.ret.trim, "DELETE FROM events WHERE task_id = ? AND seq < ?"},
		{&s.ret.del[0], "DELETE FROM events WHERE task_id IN " + ids},
		{&s.ret.del[1], "DELETE FROM snapshots WHERE task_id IN " + ids},
		{&s.ret.del[2], "DELETE FROM messages WHERE task_id IN " + ids},
		{&s.ret.del[3], "DELETE FROM push_configs WHERE task_id IN " + ids},
		{&s.ret.del[4], "DELETE FROM attachments WHERE task_id IN " + ids},
		{&s.ret.del[5], "DELETE FROM tasks WHERE id IN " + ids},
	} {
		st, err := s.wconn.PrepareContext(ctx, p.sql)
		if err != nil {
			return wrap("prepare", err)
		}
		*p.dst = st
	}
	return nil
}

// DeleteFinished implements store.Store (retention). Tasks of up to
// sqlstore.DeleteBudget records in all are deleted together, in one
// transaction (sqlstore.Deletions chooses them); a larger task first
// loses its oldest records, sqlstore.DeleteBudget per call (a reader of
// its log meanwhile sees the later records only, and Task may answer
// store.ErrNotFound when it needs them), then the rest with its row. It
// returns ErrClosed after Close.
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
	err := s.write(ctx, func(ctx context.Context, c *sql.Conn) error {
		deleted, more = 0, false
		rows, err := s.ret.candidates.QueryContext(ctx, cut, limit+1)
		if err != nil {
			return wrap("delete finished", err)
		}
		cands, err := sqlstore.Candidates[string](rows)
		rows.Close()
		if err != nil {
			return wrap("delete finished", err)
		}
		lowest := func(id string) (int64, bool, error) {
			var low sql.NullInt64
			err := s.ret.lowest.QueryRowContext(ctx, id).Scan(&low)
			return low.Int64, low.Valid, err
		}
		trim := func(id string, seq int64) error {
			_, err := s.ret.trim.ExecContext(ctx, id, seq)
			return err
		}
		var ids []string
		if ids, more, err = sqlstore.Deletions(cands, limit, lowest, trim); err != nil {
			return wrap("delete finished", err)
		}
		if len(ids) == 0 {
			return nil
		}
		list, err := json.Marshal(ids)
		if err != nil {
			return fmt.Errorf("sqlite: delete finished: %w", err)
		}
		for _, st := range s.ret.del {
			if _, err := st.ExecContext(ctx, list); err != nil {
				return wrap("delete finished", err)
			}
		}
		deleted = len(ids)
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return deleted, more, nil
}
