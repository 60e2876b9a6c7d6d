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
	return &a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{ArtifactID: id, Parts: []a2a.Part{a2a.NewTextPart(text)}}, Append: appendParts}
}

func status(s a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
	ev := &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: s}}
	if text != "" {
		m := a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart(text))
		ev.Status.Message = &m
	}
	return ev
}

func text(a a2a.Artifact) string {
	var b strings.Builder
	for _, p := range a.Parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

// TestApply folds each kind of event.
func TestApply(t *testing.T) {
	created := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted},
		History: []a2a.Message{a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))}}
	user := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("more"))
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
			m := a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart("m"))
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
	parts[0] = a2a.NewTextPart("first")
	ev := &a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{ArtifactID: "a", Parts: parts}}
	task, _ := Apply(a2a.Task{}, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	task, _ = Apply(task, ev)
	if _, err := Apply(task, chunk("a", "second", true)); err != nil {
		t.Fatal(err)
	}
	if got := parts[:2][1]; got.Content != nil || got.Metadata != nil {
		t.Errorf("the event's array was written past its end: %v", got)
	}
}

// TestAllocationsLinear: folding n text chunks into one artifact (joined
// into one part) allocates bytes in proportion to n (the text grows in a
// buffer with spare capacity), not to n² (copying the text so far with
// every chunk).
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
		if len(task.Artifacts[0].Parts) != 1 || len(text(task.Artifacts[0])) != n {
			t.Fatalf("%d parts of %d bytes, want one of %d", len(task.Artifacts[0].Parts), len(text(task.Artifacts[0])), n)
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

// TestAllocationsLinearParts: folding n parts that are not joined (text
// with metadata) appends them in place, in proportion to n.
func TestAllocationsLinearParts(t *testing.T) {
	bytesFor := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		task, _ := Apply(a2a.Task{}, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
		ev := &a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.Part{Content: a2a.Text("x"), Metadata: map[string]any{"k": "v"}}}}, Append: true}
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
	t.Logf("%d bytes allocated for 4000 parts, %d for 64000", small, large)
	if large > 32*small {
		t.Errorf("%d bytes allocated for 64000 parts, %d for 4000: not linear", large, small)
	}
}

// TestAllocationsLinearManyParts: text chunks appended to an artifact
// that already holds many parts cost in proportion to the chunks, not to
// the parts (a join copies the artifact's parts, so it stops past
// MaxJoinParts; the chunks are then parts of their own).
func TestAllocationsLinearManyParts(t *testing.T) {
	const lead = 1000
	bytesFor := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		task, _ := Apply(a2a.Task{}, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
		data := make([]a2a.Part, lead)
		for i := range data {
			data[i] = a2a.NewDataPart(i)
		}
		task, _ = Apply(task, &a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{ArtifactID: "a", Parts: append(data, a2a.NewTextPart("x"))}})
		ev := chunk("a", "x", true)
		for range n {
			task, _ = Apply(task, ev)
		}
		runtime.ReadMemStats(&after)
		if got := len(task.Artifacts[0].Parts); got != lead+1+n {
			t.Fatalf("%d parts, want %d (no join past MaxJoinParts)", got, lead+1+n)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := bytesFor(1000), bytesFor(16000)
	t.Logf("%d bytes allocated for 1000 chunks after %d parts, %d for 16000", small, lead, large)
	if large > 32*small {
		t.Errorf("%d bytes allocated for 16000 chunks, %d for 1000: not linear", large, small)
	}
	// At MaxJoinParts parts, chunks are still joined.
	task, _ := Apply(a2a.Task{}, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	few := make([]a2a.Part, MaxJoinParts-1)
	for i := range few {
		few[i] = a2a.NewDataPart(i)
	}
	task, _ = Apply(task, &a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{ArtifactID: "a", Parts: append(few, a2a.NewTextPart("x"))}})
	for range 3 {
		task, _ = Apply(task, chunk("a", "y", true))
	}
	if ps := task.Artifacts[0].Parts; len(ps) != MaxJoinParts || ps[MaxJoinParts-1].Text() != "xyyy" {
		t.Fatalf("at %d parts: %d parts, last %v", MaxJoinParts, len(ps), ps[len(ps)-1])
	}
}

func parts(ps ...a2a.Part) []a2a.Part { return ps }

// TestJoin: the first part of an appended chunk is joined into the
// artifact's last part when both are text without metadata, with the same
// media type and file name; anything else keeps the parts apart; an empty
// text part without metadata adds nothing; an artifact sent anew (append
// false) starts fresh.
func TestJoin(t *testing.T) {
	meta := map[string]any{"k": "v"}
	file := a2a.Part{Content: a2a.URL("https://example.com/f"), MediaType: "text/plain"}
	data := a2a.NewDataPart(map[string]any{"n": "1"})
	for _, tc := range []struct {
		name  string
		first []a2a.Part   // the artifact's first chunk (append false)
		then  [][]a2a.Part // appended chunks
		want  []a2a.Part
	}{
		{"joined", parts(a2a.NewTextPart("Hello")), [][]a2a.Part{parts(a2a.NewTextPart(" from")), parts(a2a.NewTextPart(" exec\n"))},
			parts(a2a.NewTextPart("Hello from exec\n"))},
		{"empty last chunk", parts(a2a.NewTextPart("line\n")), [][]a2a.Part{parts(a2a.NewTextPart(""))},
			parts(a2a.NewTextPart("line\n"))},
		{"empty chunks after a file", parts(file), [][]a2a.Part{parts(a2a.NewTextPart("")), parts(a2a.NewTextPart(""), a2a.NewTextPart("x"))},
			parts(file, a2a.NewTextPart("x"))},
		{"empty first chunk", parts(a2a.NewTextPart("")), [][]a2a.Part{parts(a2a.NewTextPart("a")), parts(a2a.NewTextPart("b"))},
			parts(a2a.NewTextPart("ab"))},
		{"empty part with metadata kept", parts(a2a.NewTextPart("a")), [][]a2a.Part{parts(a2a.Part{Content: a2a.Text(""), Metadata: meta})},
			parts(a2a.NewTextPart("a"), a2a.Part{Content: a2a.Text(""), Metadata: meta})},
		{"metadata on the chunk", parts(a2a.NewTextPart("a")), [][]a2a.Part{parts(a2a.Part{Content: a2a.Text("b"), Metadata: meta}), parts(a2a.NewTextPart("c"))},
			parts(a2a.NewTextPart("a"), a2a.Part{Content: a2a.Text("b"), Metadata: meta}, a2a.NewTextPart("c"))},
		{"metadata on the last part", parts(a2a.Part{Content: a2a.Text("a"), Metadata: meta}), [][]a2a.Part{parts(a2a.NewTextPart("b"))},
			parts(a2a.Part{Content: a2a.Text("a"), Metadata: meta}, a2a.NewTextPart("b"))},
		{"empty metadata joins", parts(a2a.Part{Content: a2a.Text("a"), Metadata: map[string]any{}}), [][]a2a.Part{parts(a2a.NewTextPart("b"))},
			parts(a2a.Part{Content: a2a.Text("ab"), Metadata: map[string]any{}})},
		{"media types differ", parts(a2a.Part{Content: a2a.Text("a"), MediaType: "text/markdown"}), [][]a2a.Part{parts(a2a.NewTextPart("b")), parts(a2a.NewTextPart("c"))},
			parts(a2a.Part{Content: a2a.Text("a"), MediaType: "text/markdown"}, a2a.NewTextPart("bc"))},
		{"same media type", parts(a2a.Part{Content: a2a.Text("a"), MediaType: "text/markdown"}), [][]a2a.Part{parts(a2a.Part{Content: a2a.Text("b"), MediaType: "text/markdown"})},
			parts(a2a.Part{Content: a2a.Text("ab"), MediaType: "text/markdown"})},
		{"file names differ", parts(a2a.Part{Content: a2a.Text("a"), Filename: "a.txt"}), [][]a2a.Part{parts(a2a.Part{Content: a2a.Text("b"), Filename: "b.txt"})},
			parts(a2a.Part{Content: a2a.Text("a"), Filename: "a.txt"}, a2a.Part{Content: a2a.Text("b"), Filename: "b.txt"})},
		{"file stops the join", parts(a2a.NewTextPart("a")), [][]a2a.Part{parts(file), parts(a2a.NewTextPart("b")), parts(a2a.NewTextPart("c"))},
			parts(a2a.NewTextPart("a"), file, a2a.NewTextPart("bc"))},
		{"data stops the join", parts(a2a.NewTextPart("a")), [][]a2a.Part{parts(data), parts(a2a.NewTextPart("b"))},
			parts(a2a.NewTextPart("a"), data, a2a.NewTextPart("b"))},
		{"only a chunk's first part joins", parts(a2a.NewTextPart("a")), [][]a2a.Part{parts(a2a.NewTextPart("b"), a2a.NewTextPart("c")), parts(a2a.NewTextPart("d"))},
			parts(a2a.NewTextPart("ab"), a2a.NewTextPart("cd"))},
		{"a first chunk's parts stay apart", parts(a2a.NewTextPart("a"), a2a.NewTextPart("b")), nil,
			parts(a2a.NewTextPart("a"), a2a.NewTextPart("b"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task, _ := Apply(a2a.Task{}, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
			evs := []a2a.Event{&a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{ArtifactID: "a", Parts: tc.first}}}
			for _, ps := range tc.then {
				evs = append(evs, &a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{ArtifactID: "a", Parts: ps}, Append: true})
			}
			for _, ev := range evs {
				var err error
				if task, err = Apply(task, ev); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, task.Artifacts[0].Parts); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
			// Replay (a store reading the log back) folds the same.
			var again a2a.Task
			for _, ev := range append([]a2a.Event{&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}, evs...) {
				again, _ = Replay(again, ev)
			}
			if diff := cmp.Diff(task, again); diff != "" {
				t.Errorf("replayed (-live +replayed):\n%s", diff)
			}
		})
	}
}

// TestJoinStartsFresh: an artifact sent again without append replaces the
// joined one, and chunks appended after join onto the new artifact's text
// only; another artifact's chunks join apart.
func TestJoinStartsFresh(t *testing.T) {
	task, _ := Apply(a2a.Task{}, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	for _, ev := range []a2a.Event{
		chunk("a", "one", false), chunk("a", " two", true), chunk("b", "x", false), chunk("a", "three", false),
		chunk("b", "y", true), chunk("a", " four", true),
	} {
		var err error
		if task, err = Apply(task, ev); err != nil {
			t.Fatal(err)
		}
	}
	want := []a2a.Artifact{
		{ArtifactID: "a", Parts: parts(a2a.NewTextPart("three four"))},
		{ArtifactID: "b", Parts: parts(a2a.NewTextPart("xy"))},
	}
	if diff := cmp.Diff(want, task.Artifacts); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
}

// TestJoinedSnapshotsUnchanged: the joined text of every snapshot stays
// as it was while the fold goes on joining (the buffer it grows in is
// shared), and a Detach()ed copy of an older snapshot, joining text of
// its own concurrently, disturbs neither (run with -race); so does a copy
// folded without Detach, which must not write into the buffer.
func TestJoinedSnapshotsUnchanged(t *testing.T) {
	task, _ := Apply(a2a.Task{}, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	task, _ = Apply(task, chunk("a", "start", false))
	var snaps []a2a.Task
	var texts []string
	for i := range 300 {
		var err error
		if task, err = Apply(task, chunk("a", strings.Repeat(string(rune('a'+i%26)), i%9), true)); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, task)
		texts = append(texts, strings.Clone(text(task.Artifacts[0])))
	}
	// An older snapshot folded again as it is (not Detach()ed): the
	// buffer has grown past its text, so it starts a buffer of its own.
	stale, _ := Apply(snaps[100], chunk("a", "STALE", true))
	var wg sync.WaitGroup
	wg.Go(func() {
		mine := Detach(snaps[150])
		for range 200 {
			mine, _ = Apply(mine, chunk("a", "yy", true))
		}
		if got := text(mine.Artifacts[0]); got != texts[150]+strings.Repeat("yy", 200) {
			t.Errorf("detached copy: %q", got)
		}
	})
	for range 200 {
		task, _ = Apply(task, chunk("a", "zzz", true))
	}
	wg.Wait()
	for i := range snaps {
		if got := text(snaps[i].Artifacts[0]); got != texts[i] || len(snaps[i].Artifacts[0].Parts) != 1 {
			t.Fatalf("snapshot %d changed: %q, was %q", i, got, texts[i])
		}
	}
	if got := text(stale.Artifacts[0]); got != texts[100]+"STALE" {
		t.Errorf("stale fold: %q", got)
	}
	if got := text(task.Artifacts[0]); got != texts[len(texts)-1]+strings.Repeat("zzz", 200) {
		t.Errorf("fold: %q", got)
	}
}
