package memory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memory.New() })
}

func BenchmarkAppend(b *testing.B) {
	storetest.BenchmarkAppend(b, memory.New())
}

// TestFinishedCap: finished tasks beyond MaxFinishedBytes are deleted,
// the first to finish first; running tasks and tasks owed push
// notifications stay.
func TestFinishedCap(t *testing.T) {
	ctx := context.Background()
	s := memory.NewWithOptions(memory.Options{MaxFinishedBytes: 64 << 10})
	text := strings.Repeat("x", 1000)
	mk := func(id string, state a2a.TaskState) {
		t.Helper()
		c := a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: state},
			History: []a2a.Message{{MessageID: "m-" + id, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart(text)}}}}
		if err := s.Append(ctx, store.Append{Agent: "a", TaskID: id, Records: []store.Record{{Event: &c}}, Snapshot: c, MessageIDs: []string{"m-" + id}}); err != nil {
			t.Fatal(err)
		}
	}
	mk("running", a2a.TaskStateWorking)
	mk("owed", a2a.TaskStateCompleted)
	if err := s.SetPushConfig(ctx, "owed", a2a.PushNotificationConfig{ID: "c", URL: "http://x"}, 0); err != nil {
		t.Fatal(err)
	}
	const n = 1000 // about 1 MB of finished tasks: 16 times the cap
	for i := range n {
		mk(fmt.Sprint("t", i), a2a.TaskStateCompleted)
	}
	kept := 0
	for i := range n {
		if _, err := s.Task(ctx, fmt.Sprint("t", i)); err == nil {
			kept++
		} else if kept > 0 {
			t.Fatalf("t%d deleted after a newer task was kept", i)
		}
	}
	if kept == 0 || kept > 64 {
		t.Errorf("%d of %d finished tasks kept under a 64 KiB cap", kept, n)
	}
	if _, err := s.Task(ctx, fmt.Sprint("t", n-1)); err != nil {
		t.Errorf("the newest task was deleted: %v", err)
	}
	for _, id := range []string{"running", "owed"} {
		if _, err := s.Task(ctx, id); err != nil {
			t.Errorf("Task(%s): %v", id, err)
		}
	}
	if id, _ := s.MessageTask(ctx, "a", "m-t0"); id != "" {
		t.Errorf("message id of a deleted task still indexed under %q", id)
	}
	// Once delivered, the owed task goes with the next eviction.
	if err := s.MarkPushDelivered(ctx, "owed", "c", 1); err != nil {
		t.Fatal(err)
	}
	if n, _, err := s.DeleteFinished(ctx, time.Now(), 0); err != nil || n == 0 {
		t.Fatalf("DeleteFinished = %d, %v", n, err)
	}
	if _, err := s.Task(ctx, "owed"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Task(owed) after delivery: %v", err)
	}
	if _, err := s.Task(ctx, "running"); err != nil {
		t.Errorf("Task(running): %v", err)
	}
}

// TestNoCap: a negative MaxFinishedBytes keeps every task.
func TestNoCap(t *testing.T) {
	ctx := context.Background()
	s := memory.NewWithOptions(memory.Options{MaxFinishedBytes: -1})
	for i := range 300 {
		c := a2a.Task{ID: fmt.Sprint("t", i), ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
			History: []a2a.Message{{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart(strings.Repeat("y", 4000))}}}}
		if err := s.Append(ctx, store.Append{Agent: "a", TaskID: c.ID, Records: []store.Record{{Event: &c}}, Snapshot: c}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		if _, err := s.Task(ctx, fmt.Sprint("t", i)); err != nil {
			t.Fatalf("t%d: %v", i, err)
		}
	}
}
