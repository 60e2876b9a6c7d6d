package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

// SetPushConfig implements store.Store: one statement that inserts the
// config (or replaces its body, keeping its cursor and position) only if
// the task exists.
func (s *Store) SetPushConfig(ctx context.Context, taskID string, c a2a.PushNotificationConfig, cursor int64) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	body, err := pkg.EncodePushConfig(&c)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO push_configs (task_id, config_id, body, delivered, created)
		SELECT id, $2, $3, $4, $5 FROM tasks WHERE id = $1
		ON CONFLICT (task_id, config_id) DO UPDATE SET body = excluded.body`, bs(taskID), bs(c.ID), body, cursor, time.Now().UnixNano())
	if err != nil {
		return wrap("set push config", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	s.configsChanged(taskID)
	return nil
}

// configsChanged tells the other processes (Options.Notify) that the
// task's push configs changed: a process that remembered that the task
// had none (the engine's push deliverer) looks again at its next append.
func (s *Store) configsChanged(taskID string) {
	if s.notify != nil {
		s.notify.appended(taskID, 0)
	}
}

// DeletePushConfig implements store.Store.
func (s *Store) DeletePushConfig(ctx context.Context, taskID, configID string) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	tag, err := s.pool.Exec(ctx, "DELETE FROM push_configs WHERE task_id = $1 AND config_id = $2", bs(taskID), bs(configID))
	if err != nil {
		return wrap("delete push config", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	s.configsChanged(taskID)
	return nil
}

// MarkPushDelivered implements store.Store.
func (s *Store) MarkPushDelivered(ctx context.Context, taskID, configID string, seq int64) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	_, err := s.pool.Exec(ctx, "UPDATE push_configs SET delivered = $3 WHERE task_id = $1 AND config_id = $2 AND delivered < $3", bs(taskID), bs(configID), seq)
	return wrap("mark push delivered", err)
}

// PushConfigs implements store.Store.
func (s *Store) PushConfigs(ctx context.Context, taskID string) ([]store.PushConfig, error) {
	return s.queryPush(ctx, "SELECT task_id, body, delivered, created FROM push_configs WHERE task_id = $1 ORDER BY pos", bs(taskID))
}

// PendingPush implements store.Store.
func (s *Store) PendingPush(ctx context.Context) ([]store.PushConfig, error) {
	return s.queryPush(ctx, `SELECT p.task_id, p.body, p.delivered, p.created FROM push_configs p JOIN tasks t ON t.id = p.task_id
		WHERE p.delivered < t.seq ORDER BY p.created, p.pos`)
}

// Push claims (store.PushClaimer): push_configs.claimed_by
// names the runner that delivers a config's notifications; the claim
// holds while that runner's lease in replicas has not expired. Claiming
// is one conditional UPDATE: the row lock serialises two processes that
// claim one config at once, and the loser's condition, evaluated again on
// the winner's row, fails it (the equivalent of FOR UPDATE SKIP LOCKED
// for a single row, with no transaction held open while delivering).

var _ store.PushClaimer = (*Store)(nil)

// liveClaim is the condition "the row's claimant holds a lease that has
// not expired".
const liveClaim = "EXISTS (SELECT 1 FROM replicas r WHERE r.id = p.claimed_by AND r.until > now())"

// ClaimPush implements store.PushClaimer; ErrClosed after Close.
func (s *Store) ClaimPush(ctx context.Context, runner, taskID, configID string) (bool, error) {
	if s.isShut.Load() {
		return false, ErrClosed
	}
	if runner == "" {
		return false, errors.New("postgres: claim push: empty runner")
	}
	tag, err := s.pool.Exec(ctx, `UPDATE push_configs p SET claimed_by = $1
		WHERE task_id = $2 AND config_id = $3 AND (claimed_by = '' OR claimed_by = $1 OR NOT `+liveClaim+`)`,
		bs(runner), bs(taskID), bs(configID))
	if err != nil {
		return false, wrap("claim push", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleasePush implements store.PushClaimer: the claim is released in one
// statement, and what is owed read in another, after the release is
// committed, so that an append whose claim the release refused while it
// waited on the row is seen. ErrClosed after Close.
func (s *Store) ReleasePush(ctx context.Context, runner, taskID, configID string) (bool, error) {
	if s.isShut.Load() {
		return false, ErrClosed
	}
	if _, err := s.pool.Exec(ctx, "UPDATE push_configs SET claimed_by = '' WHERE task_id = $2 AND config_id = $3 AND claimed_by = $1",
		bs(runner), bs(taskID), bs(configID)); err != nil {
		return false, wrap("release push", err)
	}
	var pending bool
	err := s.pool.QueryRow(ctx, `SELECT coalesce((SELECT p.delivered < t.seq FROM push_configs p JOIN tasks t ON t.id = p.task_id
		WHERE p.task_id = $1 AND p.config_id = $2), false)`, bs(taskID), bs(configID)).Scan(&pending)
	return pending, wrap("release push", err)
}

// UnclaimedPush implements store.PushClaimer; ErrClosed after Close.
func (s *Store) UnclaimedPush(ctx context.Context, runner string, limit int) ([]store.PushConfig, error) {
	if limit <= 0 {
		limit = 256
	}
	return s.queryPush(ctx, `SELECT p.task_id, p.body, p.delivered, p.created FROM push_configs p JOIN tasks t ON t.id = p.task_id
		WHERE p.delivered < t.seq AND (p.claimed_by = '' OR p.claimed_by = $2 OR NOT `+liveClaim+`) ORDER BY p.created, p.pos LIMIT $1`, limit, bs(runner))
}

func (s *Store) queryPush(ctx context.Context, q string, args ...any) ([]store.PushConfig, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, wrap("push configs", err)
	}
	defer rows.Close()
	return pkg.PushConfigs(rows)
}
