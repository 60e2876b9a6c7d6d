// Package fold folds a task's event log into its Task snapshot: the Task
// is the fold of its log (A2A 0.3.0 §6.1, "life of a task"). The engine
// folds each event as it appends it; the stores fold the events after
// their last stored snapshot when they read a task.
//
// Folding costs in proportion to the event, not to the task: Apply
// appends to the task's History and to an artifact's Parts in place,
// within the spare capacity of their arrays. An older snapshot sharing an
// array never sees those elements (it keeps its own, shorter, length), so
// snapshots handed to readers stay valid. The rule that makes this safe:
// only one writer appends to a snapshot's arrays — the owner of the
// task's latest snapshot (the engine, under the task's lock, or a store
// folding what it just read). Anyone else who wants to fold a snapshot it
// was given (or to append to its slices) first takes a Detach()ed copy.
//
// A streamed artifact's text chunks are joined: the first part of an
// appended chunk continues the artifact's last part when both are plain
// text (see Joins), so that the Task holds one readable text where the
// stream delivered it token by token or line by line. The log keeps every
// chunk as it was sent; only the fold joins. The joined text grows in a
// buffer with spare capacity (kept past the end of the artifact's Parts,
// where no snapshot looks), so that joining a chunk costs in proportion
// to the chunk, not to the text so far.
package fold

import (
	"fmt"
	"slices"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
)

// ValidTransition reports whether a task may move from state from to to
// (A2A 0.3.0 §6.3, life of a task). Terminal states are final; nothing
// returns to submitted; a status update may repeat working (progress).
func ValidTransition(from, to a2a.TaskState) bool {
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

// Apply applies one log event to the task snapshot t and returns the new
// snapshot: a *a2a.Task (the log's first record) replaces t, a
// *a2a.Message is appended to History, a *a2a.TaskStatusUpdateEvent sets
// Status (its message, if any, is appended to History; the keys of its
// metadata are set in the task's metadata), and a
// *a2a.TaskArtifactUpdateEvent adds or replaces an artifact or appends
// parts to it (A2A 1.0 §4.2.2 append; A2A 0.3.0 §7.2.4; the first
// appended part may be joined to the artifact's last one, see Joins). It
// returns an error, with t unchanged,
// for a transition the state machine forbids (ValidTransition), an
// artifact update on a terminal task, or an unknown event type.
//
// The caller must own t's spare capacity (see the package doc): the
// History array and every artifact's Parts array may be appended to in
// place. The cost is constant per event, apart from an artifact update,
// which copies the Artifacts array (one element per artifact, not per
// part), and an appended chunk joined to the artifact's last text part,
// which copies the artifact's Parts array (one element per part, not per
// byte: a streamed text is one part) and appends the chunk's text to the
// joined text's buffer (amortized, in proportion to the chunk). Nothing t
// references is modified below its length.
func Apply(t a2a.Task, ev a2a.Event) (a2a.Task, error) {
	switch e := ev.(type) {
	case *a2a.Task:
		return Detach(*e), nil
	case *a2a.Message:
		t.History = append(t.History, *e)
	case *a2a.TaskStatusUpdateEvent:
		if !ValidTransition(t.Status.State, e.Status.State) {
			return t, fmt.Errorf("invalid state transition %s → %s", t.Status.State, e.Status.State)
		}
		t.Status = e.Status
		if e.Status.Message != nil {
			t.History = append(t.History, *e.Status.Message)
		}
		t.Metadata = mergeMetadata(t.Metadata, e.Metadata)
	case *a2a.TaskArtifactUpdateEvent:
		if t.Status.State.Terminal() {
			return t, fmt.Errorf("artifact update on a task in terminal state %s", t.Status.State)
		}
		t.Artifacts = applyArtifact(t.Artifacts, e)
	default:
		return t, fmt.Errorf("unknown event type %T", ev)
	}
	return t, nil
}

// mergeMetadata returns the task metadata m with the keys of a status
// update's metadata set (a shallow merge: each key of add replaces the
// task's value of that key). m is not modified (older snapshots share it);
// with nothing to add, m itself is returned. This is how an agent records
// facts about a task, such as a bridged task's remote id, in the Task's
// metadata.
func mergeMetadata(m, add map[string]any) map[string]any {
	if len(add) == 0 {
		return m
	}
	out := make(map[string]any, len(m)+len(add))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

// applyArtifact folds an artifact update into arts. The element that
// changes is written into a copy of the array (older snapshots share the
// old one); a new artifact is appended in place.
func applyArtifact(arts []a2a.Artifact, e *a2a.TaskArtifactUpdateEvent) []a2a.Artifact {
	added := e.Artifact
	// The event's Parts array belongs to the log record: clipped, an
	// append to the artifact copies it instead of writing past its end.
	added.Parts = slices.Clip(added.Parts)
	for i := range arts {
		if arts[i].ArtifactID != added.ArtifactID {
			continue
		}
		out := slices.Clone(arts)
		if !e.Append {
			out[i] = added
			return out
		}
		a := &out[i]
		a.Parts = appendChunk(a.Parts, added.Parts)
		if added.Name != "" {
			a.Name = added.Name
		}
		if added.Description != "" {
			a.Description = added.Description
		}
		if added.Metadata != nil {
			a.Metadata = added.Metadata
		}
		return out
	}
	return append(arts, added)
}

// Joins reports whether a part appended to an artifact whose last part is
// last is joined into it rather than added as a part of its own: both are
// text parts without metadata (nil or empty), with the same media type
// and file name. A text part carrying metadata, a file or data part, or a
// difference in media type or file name keeps the parts apart.
func Joins(last, next a2a.Part) bool {
	return plainText(last) && plainText(next) && last.MediaType == next.MediaType && last.Filename == next.Filename
}

// plainText reports whether p is a text part without metadata.
func plainText(p a2a.Part) bool {
	_, ok := p.Content.(a2a.Text)
	return ok && len(p.Metadata) == 0
}

// MaxJoinParts is the most parts an artifact may have for a chunk's text
// to be joined into its last part: a join copies the artifact's parts
// (older snapshots share them), so joining into an artifact of many parts
// would cost in proportion to the artifact, not to the chunk. Past it,
// chunks are appended as parts of their own, as they came.
const MaxJoinParts = 16

// appendChunk appends an appended chunk's parts to an artifact's parts:
// the chunk's first part is joined into the last one when Joins says so
// (and the artifact has at most MaxJoinParts parts), and an empty text
// part without metadata adds nothing (a stream's empty last chunk leaves
// no empty part behind). The rest are appended in place, as they are.
func appendChunk(parts, add []a2a.Part) []a2a.Part {
	first := true
	for _, p := range add {
		if plainText(p) && p.Text() == "" {
			continue
		}
		if first && len(parts) > 0 && len(parts) <= MaxJoinParts && Joins(parts[len(parts)-1], p) {
			parts = joinText(parts, p.Text())
		} else {
			parts = append(parts, p)
		}
		first = false
	}
	return parts
}

// textTail is what a fold keeps one element past the end of an
// artifact's Parts (in the array's spare capacity, which no snapshot
// reads) after joining text into its last part, as the Value of a Data
// part: the buffer that text was built in. Strings handed out are
// prefixes of the buffer, and the buffer is only ever appended to, so a
// text already in a snapshot never changes.
type textTail struct {
	b strings.Builder
}

// joinText returns parts with text appended to its last part (a text
// part, Joins), in a new array: older snapshots share the old one, whose
// last element must not change. The text grows in the textTail past the
// array's end when the last part's text is that buffer's whole content
// (the fold that built it goes on); otherwise, the first join after a
// snapshot was read or Detach()ed, a new buffer starts with a copy.
func joinText(parts []a2a.Part, text string) []a2a.Part {
	n := len(parts)
	last := parts[n-1]
	lastText := last.Text()
	var tail *textTail
	var slot a2a.Part // the spare element holding tail, reused as it is
	if n < cap(parts) {
		// Equal lengths, then equal strings: the comparison costs
		// nothing when the last text is the buffer's (the same bytes).
		if d, ok := parts[:n+1][n].Content.(a2a.Data); ok {
			if t, ok := d.Value.(*textTail); ok && t.b.Len() == len(lastText) && t.b.String() == lastText {
				tail, slot = t, parts[:n+1][n]
			}
		}
	}
	if tail == nil {
		tail = &textTail{}
		tail.b.Grow(2 * (len(lastText) + len(text)))
		tail.b.WriteString(lastText)
		slot = a2a.Part{Content: a2a.Data{Value: tail}}
	}
	// Grow doubles the buffer when it is full (append would grow a
	// large one by a quarter only, copying the text more often).
	tail.b.Grow(len(text))
	tail.b.WriteString(text)
	last.Content = a2a.Text(tail.b.String())
	out := make([]a2a.Part, n, n+1)
	copy(out, parts[:n-1])
	out[n-1] = last
	out[:n+1][n] = slot
	return out
}

// Detach returns t with arrays whose spare capacity nobody else appends
// to: History and every artifact's Parts are clipped (an append copies
// them), in a new Artifacts array. It costs one element per artifact. Use
// it before folding (Apply) or appending to a snapshot one does not own.
// (Clipped, Parts also hides the buffer a joined text grows in: the
// detached copy joins into a buffer of its own.)
func Detach(t a2a.Task) a2a.Task {
	t.History = slices.Clip(t.History)
	if t.Artifacts != nil {
		arts := make([]a2a.Artifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			a.Parts = slices.Clip(a.Parts)
			arts[i] = a
		}
		t.Artifacts = arts
	}
	return t
}

// Replay is Apply without the state machine's checks, for a store reading
// back a log whose events were checked when they were appended: it never
// fails on a transition or on an artifact update after a terminal state.
// It returns an error only for an unknown event type. The caller must own
// t's spare capacity, as for Apply.
func Replay(t a2a.Task, ev a2a.Event) (a2a.Task, error) {
	switch e := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		t.Status = e.Status
		if e.Status.Message != nil {
			t.History = append(t.History, *e.Status.Message)
		}
		t.Metadata = mergeMetadata(t.Metadata, e.Metadata)
		return t, nil
	case *a2a.TaskArtifactUpdateEvent:
		t.Artifacts = applyArtifact(t.Artifacts, e)
		return t, nil
	}
	return Apply(t, ev)
}
