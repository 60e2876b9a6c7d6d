package fold

import (
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
)

// BenchmarkApply folds the events of a short task (created, working, one
// artifact of one text part, completed: the common case) and, apart, one
// 64-byte chunk appended to a streamed artifact.
func BenchmarkApply(b *testing.B) {
	created := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	b.Run("short", func(b *testing.B) {
		evs := []a2a.Event{created, status(a2a.TaskStateWorking, ""), chunk("a", "hello", false), status(a2a.TaskStateCompleted, "")}
		b.ReportAllocs()
		for b.Loop() {
			var task a2a.Task
			for _, ev := range evs {
				task, _ = Apply(task, ev)
			}
		}
	})
	b.Run("chunk64", func(b *testing.B) {
		task, _ := Apply(a2a.Task{}, created)
		task, _ = Apply(task, status(a2a.TaskStateWorking, ""))
		task, _ = Apply(task, chunk("a", "", false))
		ev := chunk("a", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true)
		b.SetBytes(64)
		b.ReportAllocs()
		for b.Loop() {
			task, _ = Apply(task, ev)
		}
	})
}
