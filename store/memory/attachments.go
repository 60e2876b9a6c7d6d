package memory

import (
	"context"
	"slices"
	"time"

	"github.com/a2abridge/a2abridge/store"
)

var _ store.AttachmentStore = (*Store)(nil)

// PutAttachment implements store.AttachmentStore.
func (s *Store) PutAttachment(ctx context.Context, a store.Attachment) error {
	if err := store.ValidateAttachment(&a); err != nil {
		return err
	}
	s.attMu.Lock()
	defer s.attMu.Unlock()
	if _, ok := s.attachments[a.ID]; ok {
		return store.ErrConflict
	}
	if s.attachments == nil {
		s.attachments, s.taskAttachments = map[string]store.Attachment{}, map[string][]string{}
	}
	a.Created = time.Now().UTC()
	if a.Bytes == nil {
		a.Bytes = []byte{}
	}
	s.attachments[a.ID] = a
	if a.TaskID != "" {
		s.taskAttachments[a.TaskID] = append(s.taskAttachments[a.TaskID], a.ID)
	}
	return nil
}

// Attachment implements store.AttachmentStore.
func (s *Store) Attachment(ctx context.Context, id string) (store.Attachment, error) {
	s.attMu.Lock()
	defer s.attMu.Unlock()
	a, ok := s.attachments[id]
	if !ok {
		return store.Attachment{}, store.ErrNotFound
	}
	return a, nil
}

// deleteAttachments removes the attachments of task id (retention).
func (s *Store) deleteAttachments(id string) {
	s.attMu.Lock()
	defer s.attMu.Unlock()
	for _, a := range s.taskAttachments[id] {
		delete(s.attachments, a)
	}
	delete(s.taskAttachments, id)
}

// DeleteAttachments implements store.AttachmentStore.
func (s *Store) DeleteAttachments(ctx context.Context, ids []string) error {
	s.attMu.Lock()
	defer s.attMu.Unlock()
	for _, id := range ids {
		a, ok := s.attachments[id]
		if !ok {
			continue
		}
		delete(s.attachments, id)
		if a.TaskID == "" {
			continue
		}
		rest := slices.DeleteFunc(s.taskAttachments[a.TaskID], func(x string) bool { return x == id })
		if len(rest) == 0 {
			delete(s.taskAttachments, a.TaskID)
		} else {
			s.taskAttachments[a.TaskID] = rest
		}
	}
	return nil
}
