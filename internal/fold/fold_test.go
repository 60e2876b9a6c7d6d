package fold

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2abridge/a2abridge/a2a"
)

func chunk(id, text string, appendParts bool) *a2a.TaskArtifactUpdateEvent {
	return &a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{ArtifactID: id, Parts: []a2a.Part{a2a.TextPart{Text: text}}}, Append: appendParts}
}

func status(s a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
	ev := &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: s}}
	if text != "" {
		m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart{Text: text})
		ev.Status.Message = &m
	}
	return ev
}

func text(a a2a.Artifact) string {
	var b strings.Builder
	for _, p := range a.Parts {
		b.WriteString(p.(a2a.TextPart).Text)
	}
	return b.String()
}

// TestApply folds each kind of event.
func TestApply(t *testing.T) {
	created := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted},
		History: []a2a.Message{a2a.NewMessage(a2a.RoleUser, a2a.TextPart{Text: "hi"})}}
	user := a2a.NewMessage(a2a.RoleUser, a2a.TextPart{Text: "more"})
	var task a2a.Task
	var err error
	for _, ev := range []a2a.Event{
		created, status(a2a.TaskStateWorking, "on it"),
		chunk("a", "one ", false), chunk("a", "two", true), chunk("b", "other", false),
		status(a2a.TaskStateInputRequired, "more?"), &user, status(a2a.TaskStateWorking, ""),
		chunk("b", "replaced", false), status(a2a.TaskStateCompleted, "done"),
	} {
		if task, err = Apply(task, ev); err != nil {
			t.Fatalf("Apply(%T): %v", ev, err)
		}
	}
	if task.Status.State != a2a.TaskStateCompleted || len(task.History) != 5 || len(task.Artifacts) != 2 {
		t.Fatalf("state %s, %d messages, %d artifacts", task.Status.State, len(task.History), len(task.Artifacts))
	}
	if got := text(task.Artifacts[0]) + "|" + text(task.Artifacts[1]); got != "one two|replaced" {
		t.Errorf("artifacts %q", got)
	}
	if _, err := Apply(task, chunk("a", "late", true)); err == nil {
		t.Error("artifact update on a completed task accepted")
	}
	if _, err := Apply(task, status(a2a.TaskStateWorking, "")); err == nil {
		t.Error("completed → working accepted")
	}
	if got, err := Replay(task, status(a2a.TaskStateWorking, "")); err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Errorf("Replay ignores the state machine: %v %v", got.Status.State, err)
	}
	if _, err := Apply(task, nil); err == nil {
		t.Error("a nil event accepted")
	}
}

// TestOlderSnapshotsUnchanged: every snapshot of a fold stays as it was
// while the fold goes on in place (and a Detach()ed copy folded apart,
// concurrently, disturbs neither: run with -race).
func TestOlderSnapshotsUnchanged(t *testing.T) {
	task, _ := Apply(a2a.Task{}, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	var snaps []a2a.Task
	var copies []a2a.Task
	for i := range 200 {
		var ev a2a.Event = chunk("a", strings.Repeat("x", i%7), i > 0)
		if i%10 == 5 {
			m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart{Text: "m"})
			ev = &m
		}
		var err error
		if task, err = Apply(task, ev); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, task)
		copies = append(copies, deepCopy(task))
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		// A reader folding its own copy of an older snapshot.
		mine := Detach(snaps[50])
		for range 100 {
			mine, _ = Apply(mine, chunk("a", "y", true))
			mine, _ = Apply(mine, &a2a.Message{MessageID: "x", Role: a2a.RoleUser})
		}
	})
	for range 100 {
		task, _ = Apply(task, chunk("a", "z", true))
	}
	wg.Wait()
	for i := range snaps {
		if diff := cmp.Diff(copies[i], snaps[i], cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("snapshot %d changed (-was +now):\n%s", i, diff)
		}
	}
}

// TestEventPartsNotAppendedTo: an event's Parts with spare capacity are
// not written past their end by a later append to the artifact (the
// record stays as logged for another reader folding it too).
func TestEventPartsNotAppendedTo(t *testing.T) {
	parts := make([]a2a.Part, 1, 8)
	parts[0] = a2a.TextPart{Text: "first"}
	ev := &a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{ArtifactID: "a", Parts: parts}}
	task, _ := Apply(a2a.Task{}, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	task, _ = Apply(task, ev)
	if _, err := Apply(task, chunk("a", "second", true)); err != nil {
		t.Fatal(err)
	}
	if got := parts[:2][1]; got != nil {
		t.Errorf("the event's array was written past its end: %v", got)
	}
}

// TestAllocationsLinear: folding n chunks into one artifact allocates
// bytes in proportion to n (appending in place), not to n² (copying the
// parts so far with every chunk).
func TestAllocationsLinear(t *testing.T) {
	bytesFor := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		task, _ := Apply(a2a.Task{}, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
		ev := chunk("a", "x", true)
		for range n {
			task, _ = Apply(task, ev)
		}
		runtime.ReadMemStats(&after)
		if len(task.Artifacts[0].Parts) != n {
			t.Fatalf("%d parts, want %d", len(task.Artifacts[0].Parts), n)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := bytesFor(4000), bytesFor(64000)
	// 16 times the chunks: about 16 times the bytes when linear, 256
	// times when quadratic.
	t.Logf("%d bytes allocated for 4000 chunks, %d for 64000", small, large)
	if large > 32*small {
		t.Errorf("%d bytes allocated for 64000 chunks, %d for 4000: not linear", large, small)
	}
}

func deepCopy(t a2a.Task) a2a.Task {
	t.History = append([]a2a.Message(nil), t.History...)
	arts := make([]a2a.Artifact, len(t.Artifacts))
	for i, a := range t.Artifacts {
		a.Parts = append([]a2a.Part(nil), a.Parts...)
		arts[i] = a
	}
	t.Artifacts = arts
	return t
}
