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
// id (the first kept), ErrNotFound, invalid attachments refused,
// DeleteAttachments (the ids given, not others; unknown ids and no ids
// ignored), and the deletion of a task's attachments with the task
// (DeleteFinished).
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
	// DeleteAttachments deletes the ids given, of any task or none, and
	// ignores unknown ids.
	for _, x := range []store.Attachment{{ID: "att-d1", Agent: "echo", TaskID: "t-att"}, {ID: "att-d2", Agent: "echo", TaskID: "t-att"},
		{ID: "att-d3", Agent: "echo"}} {
		if err := as.PutAttachment(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := as.DeleteAttachments(ctx, nil); err != nil {
		t.Fatalf("DeleteAttachments(nil): %v", err)
	}
	if err := as.DeleteAttachments(ctx, []string{"att-d1", "att-none", "att-d3", "att-d1"}); err != nil {
		t.Fatalf("DeleteAttachments: %v", err)
	}
	for id, kept := range map[string]bool{"att-d1": false, "att-d3": false, "att-d2": true, "att-1": true, "att-empty": true} {
		if _, err := as.Attachment(ctx, id); kept && err != nil || !kept && !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after DeleteAttachments, Attachment(%s): %v (kept: %v)", id, err, kept)
		}
	}
	// Retention deletes a task's attachments with it, not others'.
	create(t, s, "echo", "t-att", a2a.TaskStateCompleted)
	create(t, s, "echo", "t-other", a2a.TaskStateWorking)
	if _, _, err := s.DeleteFinished(ctx, time.Now().Add(time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"att-1", "att-d2"} {
		if _, err := as.Attachment(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("attachment %s of a deleted task: %v, want ErrNotFound", id, err)
		}
	}
	if _, err := as.Attachment(ctx, "att-empty"); err != nil {
		t.Fatalf("attachment of a kept task: %v", err)
	}
}
