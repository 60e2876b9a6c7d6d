package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

// writtenBytes is what this process has written so far (wchar of
// /proc/self/io: every byte handed to write(2) and pwrite(2), the WAL and
// the database file included), or false where it cannot be read.
func writtenBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// streamArtifact appends an artifact of size bytes of text in chunks of
// chunk bytes to a new task, one append per chunk queued back to back
// (as the engine queues an agent's events), each with the snapshot folded
// as the engine folds it, then completes the task. It returns the task.
func streamArtifact(t testing.TB, s *sqlite.Store, id string, size, chunk int) a2a.Task {
	t.Helper()
	ctx := context.Background()
	created := a2a.Task{ID: id, ContextID: "ctx-" + id, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	task, _ := fold.Apply(a2a.Task{}, &created)
	if err := s.Append(ctx, store.Append{Agent: "echo", TaskID: id, Records: []store.Record{{Event: &created}}, Snapshot: task}); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("0123456789abcdef", chunk/16+1)[:chunk]
	var pending []<-chan error
	wait := func() {
		for _, c := range pending {
			if err := <-c; err != nil {
				t.Fatal(err)
			}
		}
		pending = pending[:0]
	}
	seq := int64(1)
	for off := 0; off < size; off += chunk {
		ev := &a2a.TaskArtifactUpdateEvent{TaskID: id, ContextID: created.ContextID, Append: off > 0, LastChunk: off+chunk >= size,
			Artifact: a2a.Artifact{ArtifactID: "echo", Name: "echo", Parts: []a2a.Part{a2a.NewTextPart(text)}}}
		var err error
		if task, err = fold.Apply(task, ev); err != nil {
			t.Fatal(err)
		}
		pending = append(pending, s.AppendAsync(ctx, store.Append{TaskID: id, After: seq, Records: []store.Record{{Event: ev}}, Snapshot: task}))
		seq++
		if len(pending) == 1024 {
			wait()
		}
	}
	done := &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: created.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, Final: true}
	task, _ = fold.Apply(task, done)
	pending = append(pending, s.AppendAsync(ctx, store.Append{TaskID: id, After: seq, Records: []store.Record{{Event: done}}, Snapshot: task}))
	wait()
	return task
}

// TestChunkedArtifactLinear streams 1 MiB and 4 MiB artifacts in 64-byte
// chunks: the bytes written grow in proportion to the artifact (four times
// the artifact, four times the bytes; quadratic growth would be sixteen),
// stay within a small multiple of its size, and the task reads back whole,
// also after a reopen.
func TestChunkedArtifactLinear(t *testing.T) {
	if _, ok := writtenBytes(); !ok {
		t.Skip("no /proc/self/io on this system")
	}
	if testing.Short() {
		t.Skip("writes 4 MiB in 65,536 appends")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "a2a.db")
	s := open(t, path, sqlite.Options{})
	measure := func(id string, size int) (int64, a2a.Task) {
		before, _ := writtenBytes()
		task := streamArtifact(t, s, id, size, 64)
		after, _ := writtenBytes()
		return after - before, task
	}
	_, _ = measure("warm", 64<<10) // the first pages of a new database
	small, smallTask := measure("small", 1<<20)
	large, largeTask := measure("large", 4<<20)
	t.Logf("bytes written: %d for 1 MiB (%.1f×), %d for 4 MiB (%.1f×)", small, float64(small)/(1<<20), large, float64(large)/(4<<20))
	if ratio := float64(large) / float64(small); ratio > 6 {
		t.Errorf("4 MiB wrote %.1f times what 1 MiB wrote: not linear", ratio)
	}
	if large > 40*(4<<20) {
		t.Errorf("4 MiB artifact wrote %d bytes: more than 40 times its size", large)
	}
	check := func(s *sqlite.Store, id string, want a2a.Task, size int) {
		t.Helper()
		info, err := s.Task(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		for _, p := range info.Task.Artifacts[0].Parts {
			got.WriteString(p.Text())
		}
		if got.Len() != size || info.Task.Status.State != a2a.TaskStateCompleted || len(info.Task.Artifacts[0].Parts) != len(want.Artifacts[0].Parts) {
			t.Errorf("%s read back: %d bytes of text in %d parts, state %s; want %d bytes", id, got.Len(), len(info.Task.Artifacts[0].Parts), info.Task.Status.State, size)
		}
	}
	check(s, "small", smallTask, 1<<20)
	check(s, "large", largeTask, 4<<20)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, sqlite.Options{})
	defer s.Close()
	check(s, "large", largeTask, 4<<20)
}

// snapshotSeq is the sequence number of task id's stored checkpoint (0:
// none), read from the database file beside the store.
func snapshotSeq(t *testing.T, path, id string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_query_only=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var seq int64
	switch err := db.QueryRow("SELECT seq FROM snapshots WHERE task_id = ?", id).Scan(&seq); {
	case errors.Is(err, sql.ErrNoRows):
		return 0
	case err != nil:
		t.Fatal(err)
	}
	return seq
}

// TestCheckpoints: a checkpoint is written once the events after the last
// one outweigh it, not before; one the codec cannot encode is skipped
// (reads fold from the records instead); reads are the fold either way.
func TestCheckpoints(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a2a.db")
	s := open(t, path, sqlite.Options{})
	defer s.Close()
	created := a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	task, _ := fold.Apply(a2a.Task{}, &created)
	if err := s.Append(ctx, store.Append{Agent: "a", TaskID: "t", Records: []store.Record{{Event: &created}}, Snapshot: task}); err != nil {
		t.Fatal(err)
	}
	seq := int64(1)
	add := func(text string, snap func(a2a.Task) a2a.Task) {
		t.Helper()
		m := &a2a.Message{MessageID: a2a.NewID(), Role: a2a.RoleAgent, TaskID: "t", ContextID: "c", Parts: []a2a.Part{a2a.NewTextPart(text)}}
		task, _ = fold.Apply(task, m)
		if err := s.Append(ctx, store.Append{TaskID: "t", After: seq, Records: []store.Record{{Event: m}}, Snapshot: snap(task)}); err != nil {
			t.Fatal(err)
		}
		seq++
		info, err := s.Task(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(task, info.Task, cmpopts.EquateEmpty()); diff != "" || info.Seq != seq {
			t.Fatalf("Task after seq %d (got seq %d) (-want +got):\n%s", seq, info.Seq, diff)
		}
	}
	same := func(t a2a.Task) a2a.Task { return t }
	add(strings.Repeat("a", 10<<10), same)
	if got := snapshotSeq(t, path, "t"); got != 0 {
		t.Fatalf("checkpoint at seq %d after 10 KiB of events", got)
	}
	// Due now, but the snapshot given does not encode (no contextId):
	// none is written.
	add(strings.Repeat("b", 70<<10), func(t a2a.Task) a2a.Task { t.ContextID = ""; return t })
	if got := snapshotSeq(t, path, "t"); got != 0 {
		t.Fatalf("an unencodable checkpoint was written at seq %d", got)
	}
	add("c", same)
	if got := snapshotSeq(t, path, "t"); got != seq {
		t.Fatalf("checkpoint at seq %d, want %d", got, seq)
	}
	// The next checkpoint waits until the events after this one weigh
	// four times as much as it.
	add(strings.Repeat("d", 100<<10), same)
	if got := snapshotSeq(t, path, "t"); got != seq-1 {
		t.Fatalf("checkpoint at seq %d, want %d (unchanged)", got, seq-1)
	}
	add(strings.Repeat("e", 300<<10), same)
	if got := snapshotSeq(t, path, "t"); got != seq {
		t.Fatalf("checkpoint at seq %d, want %d", got, seq)
	}
}

// TestDeleteLargeTask: retention deletes a task of many records over
// several calls, each bounded, and then every trace of it is gone.
func TestDeleteLargeTask(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a2a.db")
	s := open(t, path, sqlite.Options{})
	defer s.Close()
	streamArtifact(t, s, "big", 10000*64, 64) // 10,002 records
	streamArtifact(t, s, "small", 64, 64)
	cut := time.Now()
	calls, deleted := 0, 0
	for more := true; more; calls++ {
		n, m, err := s.DeleteFinished(ctx, cut, 0)
		if err != nil {
			t.Fatal(err)
		}
		deleted, more = deleted+n, m
		if calls > 10 {
			t.Fatal("DeleteFinished keeps saying there is more")
		}
	}
	if deleted != 2 || calls < 3 {
		t.Errorf("%d tasks deleted in %d calls; want 2 in at least 3 (4096 records a call)", deleted, calls)
	}
	for _, id := range []string{"big", "small"} {
		if _, err := s.Task(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Task(%s): %v", id, err)
		}
	}
	db, err := sql.Open("sqlite", path+"?_query_only=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"tasks", "events", "snapshots", "messages", "push_configs"} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows left, %v", table, n, err)
		}
	}
}
