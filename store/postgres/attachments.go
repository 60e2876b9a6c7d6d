package postgres

import (
	"context"
	"time"

	"github.com/a2abridge/a2abridge/store"
)

// PutAttachment implements store.AttachmentStore.
func (s *Store) PutAttachment(ctx context.Context, a store.Attachment) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	if err := store.ValidateAttachment(&a); err != nil {
		return err
	}
	body := a.Bytes
	if body == nil {
		body = []byte{}
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO attachments (id, agent, owner, task_id, media_type, filename, body, created)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
		bs(a.ID), bs(a.Agent), bs(a.Owner), bs(a.TaskID), bs(a.MediaType), bs(a.Filename), body, time.Now().UnixNano())
	if err != nil {
		return wrap("put attachment", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrConflict
	}
	return nil
}

// Attachment implements store.AttachmentStore.
func (s *Store) Attachment(ctx context.Context, id string) (store.Attachment, error) {
	if s.isShut.Load() {
		return store.Attachment{}, ErrClosed
	}
	return pkg.Attachment(s.pool.QueryRow(ctx, "SELECT agent, owner, task_id, media_type, filename, body, created FROM attachments WHERE id = $1", bs(id)), id)
}

// DeleteAttachments implements store.AttachmentStore.
func (s *Store) DeleteAttachments(ctx context.Context, ids []string) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, "DELETE FROM attachments WHERE id = ANY($1)", bss(ids)); err != nil {
		return wrap("delete attachments", err)
	}
	return nil
}
