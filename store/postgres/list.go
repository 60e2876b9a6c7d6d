package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/record"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/internal/listing"
)

// ListTasks implements store.Store. Total, the page and the records
// folded onto the page's checkpoints are read in one read-only
// repeatable-read transaction (one snapshot of the database); a task
// being deleted meanwhile (DeleteFinished trims a large task's records
// first) is left out of the page. Each filter combination is served by
// an index of tasks from the first row after the cursor. It returns
// store.ErrInvalidCursor as documented there, ErrClosed after Close, and
// the database's errors.
func (s *Store) ListTasks(ctx context.Context, q store.TaskQuery) (store.TaskPage, error) {
	if s.isShut.Load() {
		return store.TaskPage{}, ErrClosed
	}
	after, isPaged, err := listing.After(&q)
	if err != nil {
		return store.TaskPage{}, err
	}
	limit := q.PageLimit()
	if !q.State.Valid() {
		// Appends store valid states only (and the column is text).
		return store.TaskPage{Tasks: []store.TaskInfo{}}, nil
	}
	args := []any{bs(q.Agent)}
	where := []string{"t.agent = $1"}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if !q.AllOwners {
		add("t.owner = $%d", bs(q.Owner))
	}
	if q.ContextID != "" {
		add("t.context_id = $%d", bs(q.ContextID))
	}
	if q.State != a2a.TaskStateUnspecified {
		add("t.state = $%d", record.StateName(q.State))
	}
	if !q.StatusAfter.IsZero() {
		add("t.status_ts >= $%d", listing.StatusKey(q.StatusAfter))
	}
	countSQL := "SELECT count(*) FROM tasks t WHERE " + strings.Join(where, " AND ")
	countArgs := args
	if isPaged {
		args = append(args[:len(args):len(args)], after.Status, bs(after.ID))
		where = append(where, fmt.Sprintf("(t.status_ts, t.id) < ($%d, $%d)", len(args)-1, len(args)))
	}
	args = append(args, limit+1)
	pageSQL := `SELECT t.id, t.agent, t.owner, t.seq, t.created, t.updated, coalesce(s.seq, 0), s.body, t.status_ts
		FROM tasks t LEFT JOIN snapshots s ON s.task_id = t.id WHERE ` + strings.Join(where, " AND ") +
		fmt.Sprintf(" ORDER BY t.status_ts DESC, t.id DESC LIMIT $%d", len(args))

	var (
		page  store.TaskPage
		total int64
	)
	err = s.readTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, countSQL, countArgs...).Scan(&total); err != nil {
			return err
		}
		rs, err := tx.Query(ctx, pageSQL, args...)
		if err != nil {
			return err
		}
		var statuses []int64
		rows, err := scanRows(rs, func() []any {
			statuses = append(statuses, 0)
			return []any{&statuses[len(statuses)-1]}
		})
		if err != nil {
			return err
		}
		if len(rows) > limit {
			rows = rows[:limit]
			page.Next = listing.Cursor(&q, listing.Key{Status: statuses[limit-1], ID: rows[limit-1].id})
		}
		page.Tasks, err = foldRows(ctx, tx, rows)
		return err
	})
	if err != nil {
		return store.TaskPage{}, wrap("list tasks", err)
	}
	page.Total = int(total)
	return page, nil
}

// CountTasks implements store.TaskCounter: one grouped count over the
// tasks (the database scans them, or the tasks_list_state index);
// ErrClosed after Close.
func (s *Store) CountTasks(ctx context.Context) ([]store.TaskCount, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	rows, err := s.pool.Query(ctx, "SELECT agent, state, count(*) FROM tasks GROUP BY agent, state")
	if err != nil {
		return nil, wrap("count tasks", err)
	}
	defer rows.Close()
	return pkg.TaskCounts(rows)
}

var _ store.TaskCounter = (*Store)(nil)
