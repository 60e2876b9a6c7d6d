package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/record"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/internal/listing"
	"github.com/a2abridge/a2abridge/store/internal/sqlstore"
)

// ListTasks filters, as bits of a statement's key.
const (
	byContext = 1 << iota
	byState
	byTime
	allOwners // TaskQuery.AllOwners
	paged     // the page after a cursor (page statements only)
)

// listStmts are the read statements of ListTasks, prepared on first use:
// one per combination of filters for the count, and per combination of
// filters and paging for the page.
type listStmts struct {
	mu    sync.Mutex
	count [allOwners << 1]*sql.Stmt
	page  [paged << 1]*sql.Stmt
}

func (l *listStmts) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, st := range append(l.count[:], l.page[:]...) {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// listSQL returns the statement of ListTasks for the filters of key: the
// page (each task's columns as scanTask reads them, then its id and status
// time) or, with count, the number of tasks. Each names the index that
// serves it, so that a page reads its rows in order from the first one
// after the cursor: tasks_list_context when filtering by context,
// tasks_list_state by state alone, tasks_list_time otherwise.
func listSQL(key int, count bool) string {
	index := "tasks_list_time"
	where := "t.agent = ? AND t.owner = ?"
	if key&allOwners != 0 {
		where = "t.agent = ?"
	}
	switch {
	case key&byContext != 0:
		index = "tasks_list_context"
		where += " AND t.context_id = ?"
		if key&byState != 0 {
			where += " AND t.state = ?"
		}
	case key&byState != 0:
		index = "tasks_list_state"
		where += " AND t.state = ?"
	}
	if key&byTime != 0 {
		where += " AND t.status_ts >= ?"
	}
	if count {
		return "SELECT count(*) FROM tasks t INDEXED BY " + index + " WHERE " + where
	}
	if key&paged != 0 {
		where += " AND (t.status_ts, t.id) < (?, ?)"
	}
	return "SELECT t.agent, t.owner, t.seq, t.created, t.updated, s.seq, s.body, t.id, t.status_ts FROM tasks t INDEXED BY " + index +
		" LEFT JOIN snapshots s ON s.task_id = t.id WHERE " + where + " ORDER BY t.status_ts DESC, t.id DESC LIMIT ?"
}

// stmt returns the prepared statement of key, preparing it on first use.
func (s *Store) listStmt(ctx context.Context, key int, count bool) (*sql.Stmt, error) {
	s.ls.mu.Lock()
	defer s.ls.mu.Unlock()
	slot := &s.ls.page[key]
	if count {
		slot = &s.ls.count[key]
	}
	if *slot == nil {
		st, err := s.rdb.PrepareContext(ctx, listSQL(key, count))
		if err != nil {
			return nil, wrap("list tasks: prepare", err)
		}
		*slot = st
	}
	return *slot, nil
}

// ListTasks implements store.Store. The page and Total are read in one
// read transaction; each task is then read as Task reads it (its
// checkpoint and the records after it), so a task deleted meanwhile by
// DeleteFinished is left out of the page. It returns
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
	key := 0
	args := []any{q.Agent, q.Owner}
	if q.AllOwners {
		key |= allOwners
		args = args[:1]
	}
	if q.ContextID != "" {
		key |= byContext
		args = append(args, q.ContextID)
	}
	if q.State != a2a.TaskStateUnspecified {
		key |= byState
		args = append(args, record.StateName(q.State))
	}
	if !q.StatusAfter.IsZero() {
		key |= byTime
		args = append(args, listing.StatusKey(q.StatusAfter))
	}
	countStmt, err := s.listStmt(ctx, key, true)
	if err != nil {
		return store.TaskPage{}, err
	}
	total := 0
	pageArgs := args
	if isPaged {
		key |= paged
		pageArgs = append(pageArgs[:len(pageArgs):len(pageArgs)], after.Status, after.ID)
	}
	pageStmt, err := s.listStmt(ctx, key, false)
	if err != nil {
		return store.TaskPage{}, err
	}
	pageArgs = append(pageArgs, limit+1)

	type found struct {
		row sqlstore.TaskRow
		key listing.Key
	}
	var rows []found
	err = func() error {
		tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := tx.StmtContext(ctx, countStmt).QueryRowContext(ctx, args...).Scan(&total); err != nil {
			return err
		}
		rs, err := tx.StmtContext(ctx, pageStmt).QueryContext(ctx, pageArgs...)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var f found
			if f.row, err = scanTask(rs, &f.key.ID, &f.key.Status); err != nil {
				return err
			}
			rows = append(rows, f)
		}
		return rs.Err()
	}()
	if err != nil {
		return store.TaskPage{}, wrap("list tasks", err)
	}
	page := store.TaskPage{Total: total, Tasks: make([]store.TaskInfo, 0, min(limit, len(rows)))}
	if len(rows) > limit {
		rows = rows[:limit]
		page.Next = listing.Cursor(&q, rows[limit-1].key)
	}
	for _, f := range rows {
		info, err := s.fold(ctx, f.key.ID, f.row)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return store.TaskPage{}, err
		}
		page.Tasks = append(page.Tasks, info)
	}
	return page, nil
}

// CountTasks implements store.TaskCounter: one grouped count over the
// tasks (a scan of the tasks_list_state index); ErrClosed after Close.
func (s *Store) CountTasks(ctx context.Context) ([]store.TaskCount, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, "SELECT agent, state, count(*) FROM tasks INDEXED BY tasks_list_state GROUP BY agent, state")
	if err != nil {
		return nil, wrap("count tasks", err)
	}
	defer rows.Close()
	return pkg.TaskCounts(rows)
}

var _ store.TaskCounter = (*Store)(nil)
