package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/a2abridge/a2abridge/store"
)

var _ store.AgentRegistry = (*Store)(nil)

// PutAgent implements store.AgentRegistry.
func (s *Store) PutAgent(ctx context.Context, name string, spec []byte) error {
	now := time.Now().UnixNano()
	return s.write(ctx, func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `INSERT INTO agents (name, spec, created, updated) VALUES (?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, updated = excluded.updated`, name, spec, now, now)
		return wrap("put agent", err)
	})
}

// DeleteAgent implements store.AgentRegistry.
func (s *Store) DeleteAgent(ctx context.Context, name string) error {
	return s.write(ctx, func(ctx context.Context, c *sql.Conn) error {
		res, err := c.ExecContext(ctx, "DELETE FROM agents WHERE name = ?", name)
		if err != nil {
			return wrap("delete agent", err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// Agents implements store.AgentRegistry.
func (s *Store) Agents(ctx context.Context) ([]store.AgentSpec, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, "SELECT name, spec, created, updated FROM agents ORDER BY name")
	if err != nil {
		return nil, wrap("agents", err)
	}
	defer rows.Close()
	return pkg.Agents(rows)
}
