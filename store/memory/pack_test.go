package memory

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/storetest"
)

// finishTask creates task id with a rich first event, then appends an
// artifact and a final status with text; it returns what it appended.
func finishTask(t *testing.T, s *Store, id, text string) (a2a.Task, []store.Record) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 11, 21, 10, 0, 0, 123e6, time.UTC)
	msg := a2a.Message{MessageID: "m-" + id, Role: a2a.RoleUser, TaskID: id, ContextID: "c",
		Parts: []a2a.Part{a2a.Part{Content: a2a.Text(text), Metadata: map[string]any{"n": json.Number("1.5")}}, a2a.NewDataPart(map[string]any{"k": []any{"v", true}}),
			a2a.Part{Content: a2a.Raw([]byte{0, 1, 255}), MediaType: "application/octet-stream", Filename: "f"}}}
	created := a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: at}, History: []a2a.Message{msg}}
	recs := []store.Record{{Seq: 1, Time: at, Event: &created}}
	if err := s.Append(ctx, store.Append{Agent: "a", TaskID: id, Records: recs, Snapshot: created, MessageIDs: []string{msg.MessageID}}); err != nil {
		t.Fatal(err)
	}
	art := a2a.Artifact{ArtifactID: "art", Name: "out", Parts: []a2a.Part{a2a.NewTextPart(text)}}
	done := &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "c", Final: true,
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: at, Message: &a2a.Message{MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.NewTextPart("done")}}}}
	more := []store.Record{
		{Seq: 2, Time: at.Add(time.Millisecond), Event: &a2a.TaskArtifactUpdateEvent{TaskID: id, ContextID: "c", Artifact: art, LastChunk: true}},
		{Seq: 3, Time: at.Add(2 * time.Millisecond), Event: done},
	}
	final := created
	final.Status = done.Status
	final.History = append(append([]a2a.Message{}, msg), *done.Status.Message)
	final.Artifacts = []a2a.Artifact{art}
	if err := s.Append(ctx, store.Append{TaskID: id, After: 1, Records: more, Snapshot: final}); err != nil {
		t.Fatal(err)
	}
	return final, append(recs, more...)
}

func (s *Store) packed(id string) bool {
	sh := s.shard(id)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return sh.tasks[id].packed != nil
}

func TestFinishedTaskIsPackedAndReadsBack(t *testing.T) {
	ctx := context.Background()
	s := New()
	final, recs := finishTask(t, s, "t1", "hello ✓ \"quoted\"\n")
	if !s.packed("t1") {
		t.Fatal("finished task not packed")
	}
	info, err := s.Task(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(final, info.Task, storetest.CmpOpts); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if info.Seq != 3 || info.Agent != "a" {
		t.Errorf("info = seq %d agent %q", info.Seq, info.Agent)
	}
	for _, q := range []struct {
		after int64
		limit int
		want  []store.Record
	}{{0, 0, recs}, {1, 0, recs[1:]}, {0, 2, recs[:2]}, {1, 1, recs[1:2]}, {3, 0, nil}, {9, 0, nil}, {-1, 1, recs[:1]}} {
		got, err := s.Events(ctx, "t1", q.after, q.limit)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			t.Errorf("Events(%d, %d) = nil slice", q.after, q.limit)
		}
		if diff := cmp.Diff(q.want, got, storetest.CmpOpts); diff != "" {
			t.Errorf("Events(%d, %d) (-want +got):\n%s", q.after, q.limit, diff)
		}
	}
	// A duplicate of the first message is still refused.
	if tid, _ := s.MessageTask(ctx, "a", "m-t1"); tid != "t1" {
		t.Errorf("MessageTask = %q", tid)
	}
	// An append to a packed task (the store does not judge transitions)
	// unpacks it, and the task packs again when it ends.
	m := a2a.Message{MessageID: "m3", Role: a2a.RoleUser, TaskID: "t1", ContextID: "c", Parts: []a2a.Part{a2a.NewTextPart("again")}}
	snap := final
	snap.History = append(append([]a2a.Message{}, final.History...), m)
	if err := s.Append(ctx, store.Append{TaskID: "t1", After: 2, Records: []store.Record{{Event: &m}}, Snapshot: snap}); err != store.ErrConflict {
		t.Fatalf("stale append: %v", err)
	}
	if err := s.Append(ctx, store.Append{TaskID: "t1", After: 3, Records: []store.Record{{Event: &m}}, Snapshot: snap}); err != nil {
		t.Fatal(err)
	}
	if !s.packed("t1") {
		t.Error("task not packed again")
	}
	got, err := s.Events(ctx, "t1", 0, 0)
	if err != nil || len(got) != 4 {
		t.Fatalf("Events = %d records, %v", len(got), err)
	}
	if diff := cmp.Diff(append(recs, store.Record{Seq: 4, Event: &m}), got, storetest.CmpOpts, cmpopts.IgnoreFields(store.Record{}, "Time")); diff != "" {
		t.Errorf("records after the append (-want +got):\n%s", diff)
	}
	if info, _ := s.Task(ctx, "t1"); len(info.Task.History) != 3 {
		t.Errorf("history after the append: %d messages", len(info.Task.History))
	}
}

func TestUnencodableTaskStaysUnpacked(t *testing.T) {
	ctx := context.Background()
	s := New()
	final, recs := finishTask(t, s, "t2", "not UTF-8: \xff")
	if s.packed("t2") {
		t.Fatal("a task whose text JSON cannot carry was packed")
	}
	info, err := s.Task(ctx, "t2")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(final, info.Task, storetest.CmpOpts); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	got, err := s.Events(ctx, "t2", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs, got, storetest.CmpOpts); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

func TestLargeTaskStaysUnpacked(t *testing.T) {
	ctx := context.Background()
	s := New()
	big := strings.Repeat("x", maxPacked)
	final, _ := finishTask(t, s, "t3", big)
	if s.packed("t3") {
		t.Fatal("a task larger than maxPacked was packed")
	}
	info, err := s.Task(ctx, "t3")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(final, info.Task, storetest.CmpOpts); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

func TestCorruptPackedTask(t *testing.T) {
	for _, b := range [][]byte{nil, {1, 0}, {9, 0, 0, 0, '{', '}'}, {2, 0, 0, 0, '{', '}', 1, 2, 3}, append([]byte{2, 0, 0, 0, '{', '}', 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0}, "{}"...)} {
		if _, err := unpackTask(b); err == nil {
			t.Errorf("unpackTask(%q) succeeded", b)
		}
		if _, err := unpackRecords(b, 0, 0, 0); err == nil {
			t.Errorf("unpackRecords(%q) succeeded", b)
		}
	}
}
