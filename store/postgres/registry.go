package postgres

import (
	"context"
	"time"

	"github.com/a2abridge/a2abridge/store"
)

// PutAgent implements store.AgentRegistry.
func (s *Store) PutAgent(ctx context.Context, name string, spec []byte) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	if spec == nil {
		spec = []byte{}
	}
	now := time.Now().UnixNano()
	_, err := s.pool.Exec(ctx, `INSERT INTO agents (name, spec, created, updated) VALUES ($1, $2, $3, $3)
		ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, updated = excluded.updated`, bs(name), spec, now)
	return wrap("put agent", err)
}

// DeleteAgent implements store.AgentRegistry.
func (s *Store) DeleteAgent(ctx context.Context, name string) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	tag, err := s.pool.Exec(ctx, "DELETE FROM agents WHERE name = $1", bs(name))
	if err != nil {
		return wrap("delete agent", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Agents implements store.AgentRegistry.
func (s *Store) Agents(ctx context.Context) ([]store.AgentSpec, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	rows, err := s.pool.Query(ctx, "SELECT name, spec, created, updated FROM agents ORDER BY name")
	if err != nil {
		return nil, wrap("agents", err)
	}
	defer rows.Close()
	return pkg.Agents(rows)
}
