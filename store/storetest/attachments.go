package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

// testAttachments checks store.AttachmentStore, for stores that have it:
// put and get with every field, an empty body, ErrConflict on a reused
// id (the first kept), ErrNotFound, invalid attachments refused, and the
// deletion of a task's attachments with the task (DeleteFinished).
func testAttachments(t *testing.T, s store.Store) {
	as, ok := s.(store.AttachmentStore)
	if !ok {
		t.Skip("the store keeps no attachments")
	}
	ctx := context.Background()
	before := time.Now().Add(-time.Second).UTC()
	a := store.Attachment{ID: "att-1", Agent: "echo", Owner: `"bearer"/""/"alice"`, TaskID: "t-att",
		MediaType: "image/png", Filename: "pixel ☃.png", Bytes: []byte{0x89, 'P', 'N', 'G', 0, 1, 2}}
	if err := as.PutAttachment(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := as.PutAttachment(ctx, store.Attachment{ID: "att-empty", Agent: "echo", TaskID: "t-other"}); err != nil {
		t.Fatal(err)
	}
	if err := as.PutAttachment(ctx, store.Attachment{ID: "att-1", Agent: "other", Bytes: []byte("x")}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("reused id: %v, want ErrConflict", err)
	}
	for _, bad := range []store.Attachment{{Agent: "echo"}, {ID: "att-2"}} {
		if err := as.PutAttachment(ctx, bad); err == nil {
			t.Fatalf("PutAttachment(%+v) succeeded", bad)
		}
	}
	got, err := as.Attachment(ctx, "att-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != a.ID || got.Agent != a.Agent || got.Owner != a.Owner || got.TaskID != a.TaskID || got.MediaType != a.MediaType ||
		got.Filename != a.Filename || !bytes.Equal(got.Bytes, a.Bytes) {
		t.Fatalf("Attachment = %+v, want %+v", got, a)
	}
	if got.Created.Before(before) || got.Created.Location() != time.UTC {
		t.Fatalf("Created = %v", got.Created)
	}
	if e, err := as.Attachment(ctx, "att-empty"); err != nil || e.Bytes == nil || len(e.Bytes) != 0 {
		t.Fatalf("empty attachment: %+v, %v (want non-nil empty bytes)", e, err)
	}
	if _, err := as.Attachment(ctx, "att-none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown id: %v, want ErrNotFound", err)
	}
	// Retention deletes a task's attachments with it, not others'.
	create(t, s, "echo", "t-att", a2a.TaskStateCompleted)
	create(t, s, "echo", "t-other", a2a.TaskStateWorking)
	if _, _, err := s.DeleteFinished(ctx, time.Now().Add(time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := as.Attachment(ctx, "att-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("attachment of a deleted task: %v, want ErrNotFound", err)
	}
	if _, err := as.Attachment(ctx, "att-empty"); err != nil {
		t.Fatalf("attachment of a kept task: %v", err)
	}
}
