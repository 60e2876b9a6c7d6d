package memory

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

// Options tunes a Store. The zero value is ready to use.
type Options struct {
	// MaxFinishedBytes caps what the tasks that have finished (reached a
	// terminal state) hold, in bytes of their stored records (exact for a
	// task kept packed, estimated from its parts' sizes otherwise). When an
	// Append takes the total beyond it, the tasks that finished first are
	// deleted, as DeleteFinished does, until it fits again; a task with
	// push notifications still owed is kept until they are delivered or
	// given up. Tasks still running are not counted and never deleted.
	// Zero means DefaultMaxFinishedBytes; negative means no cap.
	MaxFinishedBytes int64
}

// DefaultMaxFinishedBytes is the default Options.MaxFinishedBytes: 256 MiB.
const DefaultMaxFinishedBytes = 256 << 20

// finishedTask is an entry of Store.fin: a task that reached a terminal
// state at `at`, holding size bytes.
type finishedTask struct {
	id   string
	at   time.Time
	size int64
}

// finished is the queue of finished tasks in the order they finished,
// the tasks taken off it while push notifications were owed to them
// (owed, in the same order), and the bytes they all hold.
type finished struct {
	q     []finishedTask
	head  int
	owed  []finishedTask
	bytes int64
}

func (f *finished) len() int { return len(f.q) - f.head }

func (f *finished) push(e finishedTask) {
	if f.head > 0 && f.head >= len(f.q)/2 {
		f.q = slices.Delete(f.q, 0, f.head) // compact: amortised O(1) per entry
		f.head = 0
	}
	f.q = append(f.q, e)
}

func (f *finished) pop() finishedTask {
	e := f.q[f.head]
	f.q[f.head] = finishedTask{}
	f.head++
	return e
}

// finishedSize estimates what a finished task that stays unpacked holds:
// its records' values, which the snapshot shares.
func finishedSize(records []store.Record) int64 {
	n := int64(0)
	for _, r := range records {
		n += 128 // the event's envelope: kind, ids, status, timestamps
		switch e := r.Event.(type) {
		case *a2a.Task:
			for _, m := range e.History {
				n += partsSize(m.Parts)
			}
		case *a2a.Message:
			n += partsSize(e.Parts)
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.Message != nil {
				n += partsSize(e.Status.Message.Parts)
			}
		case *a2a.TaskArtifactUpdateEvent:
			n += partsSize(e.Artifact.Parts)
		}
	}
	return n
}

func partsSize(parts []a2a.Part) int64 {
	n := int64(0)
	for i := range parts {
		p := &parts[i]
		n += 32 + int64(len(p.MediaType)+len(p.Filename)) + valueSize(p.Metadata, 0)
		switch c := p.Content.(type) {
		case a2a.Text:
			n += int64(len(c))
		case a2a.Raw:
			n += int64(len(c))
		case a2a.URL:
			n += int64(len(c))
		case a2a.Data:
			n += valueSize(c.Value, 0)
		}
	}
	return n
}

// valueSize estimates the bytes a JSON value holds (a Data part's Value, a
// part's metadata), nested values included, down to a depth of 64 (below
// that, a value counts as 64 bytes).
func valueSize(v any, depth int) int64 {
	if depth > 64 {
		return 64
	}
	switch v := v.(type) {
	case nil, bool:
		return 8
	case string:
		return 16 + int64(len(v))
	case json.Number:
		return 16 + int64(len(v))
	case map[string]any:
		n := int64(48)
		for k, x := range v {
			n += 16 + int64(len(k)) + valueSize(x, depth+1)
		}
		return n
	case []any:
		n := int64(24)
		for _, x := range v {
			n += valueSize(x, depth+1)
		}
		return n
	}
	return 64
}

// finishedLocked records, under the task's shard lock, that t reached or
// stayed in a terminal state with the append just made; it returns the
// queue entry to add (ok) for a task that just finished. The caller
// pushes it once the shard lock is released (finish).
func (s *Store) finishedLocked(id string, t *task, now time.Time) (finishedTask, bool) {
	size := int64(len(t.packed))
	if t.packed == nil {
		size = finishedSize(t.records)
	}
	s.finMu.Lock()
	defer s.finMu.Unlock()
	if t.finished {
		s.fin.bytes += size - t.size // appended to after it finished: its entry stays
		t.size = size
		return finishedTask{}, false
	}
	t.finished, t.size = true, size
	return finishedTask{id: id, at: now, size: size}, true
}

// finish queues a task that just finished and deletes the oldest finished
// tasks while they hold more than the cap.
func (s *Store) finish(e finishedTask) {
	s.finMu.Lock()
	s.fin.push(e)
	s.fin.bytes += e.size
	over := s.maxFinished >= 0 && s.fin.bytes > s.maxFinished
	s.finMu.Unlock()
	if over {
		s.evict(func(f *finished, _ finishedTask) bool { return s.maxFinished >= 0 && f.bytes > s.maxFinished }, -1)
	}
}

// evict deletes finished tasks while due says so, at most limit of them
// (limit < 0: no limit): first those set aside because push
// notifications were owed to them and that owe nothing now, then from the
// head of the queue. A task still owed push notifications is set aside
// (owed); one that was deleted already, or that is no longer finished, is
// dropped. It returns how many tasks it deleted and whether due still held
// when it stopped (more to do). Locks: finMu and a shard's lock are never
// held together here but in that order of nesting (shard, then finMu).
func (s *Store) evict(due func(f *finished, e finishedTask) bool, limit int) (deleted int, more bool) {
	s.finMu.Lock()
	owed := slices.Clone(s.fin.owed)
	s.finMu.Unlock()
	for _, o := range owed {
		if limit >= 0 && deleted >= limit {
			return deleted, true
		}
		sh := s.shard(o.id)
		sh.mu.Lock()
		s.finMu.Lock()
		i := slices.Index(s.fin.owed, o)
		ok := i >= 0 && due(&s.fin, o)
		if ok {
			s.fin.owed = slices.Delete(s.fin.owed, i, i+1)
		}
		s.finMu.Unlock()
		if ok && s.settleLocked(sh, o) {
			deleted++
		}
		sh.mu.Unlock()
	}
	for { // each turn takes an entry off the queue
		s.finMu.Lock()
		if s.fin.len() == 0 || !due(&s.fin, s.fin.q[s.fin.head]) {
			s.finMu.Unlock()
			return deleted, false
		}
		if limit >= 0 && deleted >= limit {
			s.finMu.Unlock()
			return deleted, true
		}
		e := s.fin.pop()
		s.finMu.Unlock()
		sh := s.shard(e.id)
		sh.mu.Lock()
		if s.settleLocked(sh, e) {
			deleted++
		}
		sh.mu.Unlock()
	}
}

// settleLocked deletes the finished task of entry e, taken off the queue
// or the owed list, or sets it aside while push notifications are owed to
// it; it reports whether it deleted the task. The caller holds the
// task's shard lock.
func (s *Store) settleLocked(sh *shard, e finishedTask) bool {
	t := sh.tasks[e.id]
	switch {
	case t == nil:
		return false
	case !t.finished:
		return false // its bytes were taken off when it left the terminal state
	case t.owesPush():
		s.finMu.Lock()
		s.fin.owed = append(s.fin.owed, e)
		s.finMu.Unlock()
		return false
	}
	s.deleteLocked(sh, e.id, t)
	s.finMu.Lock()
	s.fin.bytes -= t.size
	s.finMu.Unlock()
	return true
}

// owesPush reports whether a push notification config of t is behind its log.
func (t *task) owesPush() bool {
	for _, p := range t.push {
		if p.Delivered < t.info.Seq {
			return true
		}
	}
	return false
}

// deleteLocked removes task id, t, with its message ids; the caller holds
// sh.mu.
func (s *Store) deleteLocked(sh *shard, id string, t *task) {
	delete(sh.tasks, id)
	delete(sh.unfinished, id)
	s.deleteAttachments(id)
	for _, p := range t.push {
		s.unclaimLocked(id, p.Config.ID)
	}
	if len(t.msgKeys) > 0 {
		s.msgMu.Lock()
		for _, k := range t.msgKeys {
			if s.messages[k] == id {
				delete(s.messages, k)
			}
		}
		s.msgMu.Unlock()
	}
}

// DeleteFinished implements store.Store (retention): it deletes the tasks
// that finished before `before`, in the order they finished, at most
// limit (<= 0: 256) per call. It never fails.
func (s *Store) DeleteFinished(ctx context.Context, before time.Time, limit int) (int, bool, error) {
	if limit <= 0 {
		limit = 256
	}
	n, more := s.evict(func(_ *finished, head finishedTask) bool { return head.at.Before(before) }, limit)
	return n, more, nil
}
