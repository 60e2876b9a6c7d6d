package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

// write runs fn in the writer goroutine, inside a (possibly group-committed)
// transaction, and returns once that transaction is durable.
func (s *Store) write(ctx context.Context, fn func(ctx context.Context, c *sql.Conn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &request{ctx: ctx, exec: fn, res: make(chan error, 1)}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	select {
	case s.reqs <- r:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	return <-r.res
}

// SetPushConfig implements store.Store.
func (s *Store) SetPushConfig(ctx context.Context, taskID string, c a2a.PushNotificationConfig, cursor int64) error {
	body, err := pkg.EncodePushConfig(&c)
	if err != nil {
		return err
	}
	now := time.Now().UnixNano()
	return s.write(ctx, func(ctx context.Context, conn *sql.Conn) error {
		var one int
		if err := conn.QueryRowContext(ctx, "SELECT 1 FROM tasks WHERE id = ?", taskID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		} else if err != nil {
			return wrap("set push config", err)
		}
		_, err := conn.ExecContext(ctx, `INSERT INTO push_configs (task_id, config_id, body, delivered, created) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (task_id, config_id) DO UPDATE SET body = excluded.body`, taskID, c.ID, body, cursor, now)
		return wrap("set push config", err)
	})
}

// DeletePushConfig implements store.Store.
func (s *Store) DeletePushConfig(ctx context.Context, taskID, configID string) error {
	return s.write(ctx, func(ctx context.Context, conn *sql.Conn) error {
		res, err := conn.ExecContext(ctx, "DELETE FROM push_configs WHERE task_id = ? AND config_id = ?", taskID, configID)
		if err != nil {
			return wrap("delete push config", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// MarkPushDelivered implements store.Store.
func (s *Store) MarkPushDelivered(ctx context.Context, taskID, configID string, seq int64) error {
	return s.write(ctx, func(ctx context.Context, conn *sql.Conn) error {
		_, err := conn.ExecContext(ctx, "UPDATE push_configs SET delivered = ? WHERE task_id = ? AND config_id = ? AND delivered < ?", seq, taskID, configID, seq)
		return wrap("mark push delivered", err)
	})
}

// PushConfigs implements store.Store.
func (s *Store) PushConfigs(ctx context.Context, taskID string) ([]store.PushConfig, error) {
	return s.queryPush(ctx, "SELECT task_id, body, delivered, created FROM push_configs WHERE task_id = ? ORDER BY rowid", taskID)
}

// PendingPush implements store.Store.
func (s *Store) PendingPush(ctx context.Context) ([]store.PushConfig, error) {
	return s.queryPush(ctx, `SELECT p.task_id, p.body, p.delivered, p.created FROM push_configs p JOIN tasks t ON t.id = p.task_id
		WHERE p.delivered < t.seq ORDER BY p.created, p.rowid`)
}

func (s *Store) queryPush(ctx context.Context, q string, args ...any) ([]store.PushConfig, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap("push configs", err)
	}
	defer rows.Close()
	return pkg.PushConfigs(rows)
}
