package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/a2abridge/a2abridge/store"
)

var _ store.AttachmentStore = (*Store)(nil)

// PutAttachment implements store.AttachmentStore. The attachments table
// is created by the schema (CREATE TABLE IF NOT EXISTS) in databases of
// every version, so it needed no schema version of its own.
func (s *Store) PutAttachment(ctx context.Context, a store.Attachment) error {
	if err := store.ValidateAttachment(&a); err != nil {
		return err
	}
	body := a.Bytes
	if body == nil {
		body = []byte{}
	}
	now := time.Now().UnixNano()
	return s.write(ctx, func(ctx context.Context, c *sql.Conn) error {
		res, err := c.ExecContext(ctx, `INSERT INTO attachments (id, agent, owner, task_id, media_type, filename, body, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, a.ID, a.Agent, a.Owner, a.TaskID, a.MediaType, a.Filename, body, now)
		if err != nil {
			return wrap("put attachment", err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return store.ErrConflict
		}
		return nil
	})
}

// Attachment implements store.AttachmentStore.
func (s *Store) Attachment(ctx context.Context, id string) (store.Attachment, error) {
	if s.isShut.Load() {
		return store.Attachment{}, ErrClosed
	}
	return pkg.Attachment(s.rdb.QueryRowContext(ctx, "SELECT agent, owner, task_id, media_type, filename, body, created FROM attachments WHERE id = ?", id), id)
}

// DeleteAttachments implements store.AttachmentStore.
func (s *Store) DeleteAttachments(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.write(ctx, func(ctx context.Context, c *sql.Conn) error {
		for _, id := range ids {
			if _, err := c.ExecContext(ctx, "DELETE FROM attachments WHERE id = ?", id); err != nil {
				return wrap("delete attachments", err)
			}
		}
		return nil
	})
}
