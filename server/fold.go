package server

import (
	"fmt"

	"github.com/a2abridge/a2abridge/a2a"
)

// validTransition reports whether a task may move from state from to to
// (A2A 0.3.0 §6.3, life of a task). Terminal states are final; nothing
// returns to submitted; a status update may repeat working (progress).
func validTransition(from, to a2a.TaskState) bool {
	if from.Terminal() || to == a2a.TaskStateSubmitted || !to.Valid() {
		return false
	}
	switch from {
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		// Waiting on the client: resumed (working) or ended.
		return to == a2a.TaskStateWorking || to.Terminal() || to == from
	}
	return true
}

// fold applies one log event to a task snapshot and returns the new
// snapshot. t is not modified: slices that change are copied, so older
// snapshots handed to readers stay valid.
func fold(t a2a.Task, ev a2a.Event) (a2a.Task, error) {
	switch e := ev.(type) {
	case *a2a.Task:
		return *e, nil
	case *a2a.Message:
		t.History = appendCopy(t.History, *e)
	case *a2a.TaskStatusUpdateEvent:
		if !validTransition(t.Status.State, e.Status.State) {
			return t, fmt.Errorf("invalid state transition %s → %s", t.Status.State, e.Status.State)
		}
		t.Status = e.Status
		if e.Status.Message != nil {
			t.History = appendCopy(t.History, *e.Status.Message)
		}
	case *a2a.TaskArtifactUpdateEvent:
		if t.Status.State.Terminal() {
			return t, fmt.Errorf("artifact update on a task in terminal state %s", t.Status.State)
		}
		t.Artifacts = foldArtifact(t.Artifacts, e)
	default:
		return t, fmt.Errorf("unknown event type %T", ev)
	}
	return t, nil
}

func appendCopy[T any](s []T, v T) []T {
	out := make([]T, len(s), len(s)+1)
	copy(out, s)
	return append(out, v)
}

func foldArtifact(arts []a2a.Artifact, e *a2a.TaskArtifactUpdateEvent) []a2a.Artifact {
	for i := range arts {
		if arts[i].ArtifactID != e.Artifact.ArtifactID {
			continue
		}
		out := make([]a2a.Artifact, len(arts))
		copy(out, arts)
		if e.Append {
			a := out[i]
			parts := make([]a2a.Part, 0, len(a.Parts)+len(e.Artifact.Parts))
			parts = append(append(parts, a.Parts...), e.Artifact.Parts...)
			a.Parts = parts
			if e.Artifact.Name != "" {
				a.Name = e.Artifact.Name
			}
			if e.Artifact.Description != "" {
				a.Description = e.Artifact.Description
			}
			if e.Artifact.Metadata != nil {
				a.Metadata = e.Artifact.Metadata
			}
			out[i] = a
		} else {
			out[i] = e.Artifact
		}
		return out
	}
	return appendCopy(arts, e.Artifact)
}

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
