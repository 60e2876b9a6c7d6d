package server

import (
	"github.com/a2abridge/a2abridge/a2a"
	taskfold "github.com/a2abridge/a2abridge/internal/fold"
)

// fold applies one log event to a task snapshot (taskfold.Apply): in place,
// within the spare capacity of t's arrays, so the caller must own them —
// the engine folding a task's latest snapshot under the task's lock, or a
// caller folding a fold.Detach()ed copy.
func fold(t a2a.Task, ev a2a.Event) (a2a.Task, error) { return taskfold.Apply(t, ev) }

// withHistoryLength returns t with at most n most recent history messages
// (n == nil: all; 0: none), per A2A 0.3.0 §7.3 historyLength.
func withHistoryLength(t a2a.Task, n *int) a2a.Task {
	if n == nil || len(t.History) <= *n {
		return t
	}
	if *n <= 0 {
		t.History = nil
		return t
	}
	t.History = t.History[len(t.History)-*n:]
	return t
}
