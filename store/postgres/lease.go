package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/a2abridge/a2abridge/store"
)

// Leases of the processes that share a schema (store.Leaser): one row per
// process in table replicas, renewed by the process for all its executions
// at once (one write per renewal, whatever the number of tasks it runs),
// with the database's clock, so that the processes' own clocks do not
// matter. Each append of an engine names its runner (tasks.runner); an
// unfinished task whose runner has no unexpired lease is an orphan.

var (
	_ store.Leaser         = (*Store)(nil)
	_ store.GroupCommitter = (*Store)(nil)
)

// staleLeases is how long an expired lease is kept before a Renew of
// another process deletes it (an orphan's runner that has no row at all
// is as dead as one whose row expired).
const staleLeases = "1 hour"

// Renew implements store.Leaser. ttl is rounded to microseconds (at least
// one); ErrClosed after Close.
func (s *Store) Renew(ctx context.Context, runner string, ttl time.Duration) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	if runner == "" {
		return errors.New("postgres: renew: empty runner")
	}
	us := max(ttl.Microseconds(), 1)
	_, err := s.pool.Exec(ctx, `WITH d AS (
		DELETE FROM replicas WHERE until < now() - interval '`+staleLeases+`' AND id <> $1
	)
	INSERT INTO replicas (id, until) VALUES ($1, now() + make_interval(secs => $2::double precision / 1e6))
	ON CONFLICT (id) DO UPDATE SET until = excluded.until`, bs(runner), us)
	return wrap("renew", err)
}

// Release implements store.Leaser; ErrClosed after Close.
func (s *Store) Release(ctx context.Context, runner string) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	_, err := s.pool.Exec(ctx, "DELETE FROM replicas WHERE id = $1", bs(runner))
	return wrap("release", err)
}

// Orphans implements store.Leaser: the unfinished tasks (as Unfinished
// selects them, in its order) whose runner holds no lease that has not
// expired, read in one repeatable-read transaction; ErrClosed after
// Close.
func (s *Store) Orphans(ctx context.Context, limit int) ([]store.TaskInfo, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	if limit <= 0 {
		limit = 256
	}
	return s.unfinished(ctx, "orphans", "NOT EXISTS (SELECT 1 FROM replicas r WHERE r.id = t.runner AND r.until > now())", limit)
}

// endOtherLeases ends every lease (this process has none yet): Open with
// Options.Exclusive, whose lock proves that no other exclusive store is
// alive (and which must not share the schema with non-exclusive ones),
// so that the tasks a dead predecessor left are orphans at once rather
// than when its lease expires.
func (s *Store) endOtherLeases(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, "DELETE FROM replicas")
	return err
}
