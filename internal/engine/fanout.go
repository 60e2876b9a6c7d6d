package engine

import (
	"context"
	"iter"
	"runtime"
	"slices"
	"time"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

// The fan-out (see the package doc): subscribers of a task get the
// records the task-log writer publishes, in process, without blocking the
// writer; a subscriber that falls behind, or that another process's
// append concerns (changed, from a store.Watcher), reads the log from
// where it is. follow and stream turn that into each stream's ordered,
// gap-free sequence of events.

// changed handles an append another process committed (store.Watcher):
// it wakes the subscribers of the task, or every subscriber on a resync
// (each reads the log from where it is, in follow, so a notification that
// repeats what was read costs one read and delivers nothing twice); the
// published tail of the task no longer tells its end (foreign); and an
// execution of the task here is checked (checkForeign). On a resync,
// which says nothing of which tasks changed, every execution here is
// checked. It runs on the Watcher's goroutine and does not block.
func (e *Engine) changed(c store.Change) {
	if e.push != nil {
		// What the push deliverer remembers of a task's push configs may be
		// stale: another process may have set one. So may the trace
		// context of its execution (continued elsewhere).
		e.push.Forget(c.TaskID, c.Resync)
		if e.tel.Tracing() {
			e.push.ForgetTrace(c.TaskID, c.Resync)
		}
	}
	if !c.Resync && c.Seq == 0 {
		return // the task's push configs changed, not its log
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.Resync {
		e.watched.Store(true)
		clear(e.ended)
		ids := map[string]*Execution{}
		for id, ts := range e.tasks {
			wakeLocked(ts.subs)
			if ts.exec != nil {
				ids[id] = ts.exec
			}
		}
		if len(ids) > 0 {
			go func() {
				for id, ex := range ids {
					e.checkForeign(id, ex)
				}
			}()
		}
		return
	}
	if p := e.ended[c.TaskID]; p != nil && c.Seq > p.seq {
		// Appended elsewhere after it ended here (its ring slot may
		// stay; deleting an absent key later is harmless).
		delete(e.ended, c.TaskID)
	}
	ts := e.tasks[c.TaskID]
	if ts == nil {
		return
	}
	if p := ts.published; p != nil && c.Seq > p.seq {
		// Only other processes' appends are notified: this one is
		// beyond what this engine wrote.
		p.markForeign(c.Seq)
	}
	if ex := ts.exec; ex != nil {
		go e.checkForeign(c.TaskID, ex)
	}
	wakeLocked(ts.subs)
}

// wakeLocked wakes the subscribers l to read the log from where they
// are (a wake-up pending already is enough); the caller holds mu.
func wakeLocked(l []*subscription) {
	for _, s := range l {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

type subscription struct {
	ch   chan store.Record
	wake chan struct{}
}

// publishedTail is what a task with an execution has published: up to
// seq, the last records of which are in tail (immutable once taken: a
// trim copies).
type publishedTail struct {
	seq  int64
	tail []store.Record
	// foreign: another process appended to the task after seq
	// (store.Watcher): seq and tail no longer tell what a subscriber
	// missed, until this engine publishes records up to foreignSeq, the
	// highest sequence number known appended elsewhere (its own append
	// then succeeded after the foreign one: it continues from the log's
	// end). Records of its own older than that (queued appends
	// committed before the foreign one) leave it set.
	foreign    bool
	foreignSeq int64
}

// markForeign records that another process appended to the task up to
// seq (math.MaxInt64: up to an unknown point); the caller holds mu.
func (p *publishedTail) markForeign(seq int64) {
	p.foreign = true
	p.foreignSeq = max(p.foreignSeq, seq)
}

// tailLen bounds publishedTail.tail.
const tailLen = 16

// subscribe registers a subscriber of the task's published records. It
// also tells what the subscriber missed, published before, when the
// engine knows it (the task has an execution here): known, with the
// records after `after` in missed (none when the subscriber is not
// behind). Otherwise the subscriber must read the log.
func (e *Engine) subscribe(taskID string, after int64) (s *subscription, missed []store.Record, known bool) {
	// A small buffer: a subscriber that falls behind is woken to re-read
	// the log, so the buffer only saves store reads, never events.
	s = &subscription{ch: make(chan store.Record, 4), wake: make(chan struct{}, 1)}
	e.mu.Lock()
	ts := e.stateLocked(taskID)
	ts.subs = append(ts.subs, s)
	p := e.publishedLocked(taskID)
	if p != nil && !p.foreign {
		switch {
		case p.seq <= after:
			known = true
		case len(p.tail) > 0 && p.tail[0].Seq <= after+1:
			known = true
			missed = p.tail[after+1-p.tail[0].Seq:]
		}
	}
	e.mu.Unlock()
	return s, missed, known
}

// publishedSeq is the last sequence number that the task's execution in
// this engine (running, or just ended) has published; here is false when
// the task has none here.
func (e *Engine) publishedSeq(taskID string) (seq int64, here bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.publishedLocked(taskID)
	if p == nil {
		return 0, false
	}
	return p.seq, true
}

func (e *Engine) unsubscribe(taskID string, s *subscription) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ts := e.tasks[taskID]
	if ts == nil {
		return
	}
	l := ts.subs
	if i := slices.Index(l, s); i >= 0 {
		last := len(l) - 1
		l[i] = l[last]
		l[last] = nil
		if last == 0 {
			ts.subs = nil
			e.tidyLocked(taskID, ts)
		} else {
			ts.subs = l[:last]
		}
	}
}

// publish hands durable records to the task's subscribers without ever
// blocking: a subscriber whose buffer is full is woken to re-read the log.
func (e *Engine) publish(taskID string, recs []store.Record) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.publishedLocked(taskID) // an ended task gets no events; if it did, its tail stays exact
	if p != nil && len(recs) > 0 {
		if p.foreign || recs[0].Seq != p.seq+1 {
			// Records of another process lie between: the tail starts
			// over with these.
			p.tail = nil
			if recs[len(recs)-1].Seq >= p.foreignSeq {
				p.foreign, p.foreignSeq = false, 0
			}
		}
		p.seq = recs[len(recs)-1].Seq
		if n := len(p.tail) + len(recs) - tailLen; n > 0 {
			p.tail = slices.Clone(p.tail[min(n, len(p.tail)):]) // taken tails stay as they were
		}
		p.tail = append(p.tail, recs[max(0, len(recs)-tailLen):]...)
	}
	ts := e.tasks[taskID]
	if ts == nil {
		return
	}
	for _, s := range ts.subs {
		for _, r := range recs {
			select {
			case s.ch <- r:
			default:
				select {
				case s.wake <- struct{}{}:
				default:
				}
			}
		}
	}
}

// follow calls yield with the task's records with Seq > after, in order
// and each once: first what the log holds, then live records as they are
// appended, until yield returns false, ctx ends or an error (passed to
// yield) occurs. more tells yield that the next record is already at hand,
// so a transport can send both together.
func (e *Engine) follow(ctx context.Context, taskID string, after int64, yield func(r store.Record, more bool, err error) bool) {
	sub, missed, known := e.subscribe(taskID, after)
	defer e.unsubscribe(taskID, sub)
	next := after
	// With a store that other processes append to, a stream that reads
	// the log (it does not know from this engine's execution what comes
	// next) first tells the store that this process follows the task:
	// another process's appends are then notified here, including those
	// of an execution there (store.Watcher.WatchTask). A stream fed by an
	// execution here needs no such thing while it is: an append by
	// another process ends or continues the task, and is notified to the
	// process that ran it; its wake-up reads the log, and watches first.
	watching := e.watcher == nil
	catchUp := func() bool {
		if !watching {
			if err := e.watcher.WatchTask(ctx, e.runner, taskID); err != nil {
				yield(store.Record{}, false, err)
				return false
			}
			watching = true
		}
		for {
			recs, err := e.st.Events(ctx, taskID, next, 256)
			if err != nil {
				yield(store.Record{}, false, err)
				return false
			}
			for i, r := range recs {
				if !yield(r, i < len(recs)-1, nil) {
					return false
				}
				next = r.Seq
			}
			if len(recs) < 256 {
				return true
			}
		}
	}
	// Records published before the subscription are in the log (or in
	// missed, when the engine has them); later ones reach the subscription.
	// soon reports whether another record reaches the subscription at once
	// after r: one is queued, or, when r does not end the stream, one is
	// queued after the running execution had one yield of the processor to
	// go on (a fast agent emits its events back to back, and a stream then
	// writes them together: one write, one TCP segment, one wake-up of the
	// reader instead of one per event).
	soon := func(r store.Record) bool {
		if len(sub.ch) > 0 {
			return true
		}
		if su, ok := r.Event.(*a2a.TaskStatusUpdateEvent); ok && (su.Final || su.Status.State.Final()) {
			return false
		}
		runtime.Gosched()
		return len(sub.ch) > 0
	}
	// With a store that other processes append to (store.Watcher), a
	// notification they failed to send (a process that died between an
	// append's commit and its notification) must not leave a stream
	// waiting forever: the log is read again every safetyReread.
	var reread <-chan time.Time
	if e.watched.Load() {
		t := time.NewTicker(safetyReread)
		defer t.Stop()
		reread = t.C
	}
	if known {
		for i, r := range missed {
			if !yield(r, i < len(missed)-1 || soon(r), nil) {
				return
			}
			next = r.Seq
		}
	} else if !catchUp() {
		return
	}
	for {
		select {
		case r := <-sub.ch:
			switch {
			case r.Seq <= next:
			case r.Seq == next+1:
				if !yield(r, soon(r), nil) {
					return
				}
				next = r.Seq
			default:
				if !catchUp() {
					return
				}
			}
		case <-sub.wake:
			if !catchUp() {
				return
			}
		case <-reread:
			if !catchUp() {
				return
			}
		case <-e.streamsDone:
			// The engine closed: what its executions appended last is
			// in the log (their final events among it); then the stream ends.
			watching = true // no need to hear of more
			catchUp()
			return
		case <-ctx.Done():
			return
		}
	}
}

// safetyReread is how often a stream reads its task's log again when
// other processes append to the store (see follow).
const safetyReread = 30 * time.Second

// Stream yields the events of a task from a starting point until the task
// is final (terminal or interrupted): optionally the snapshot first, then
// every logged event after `after`, then live events. It ends after a final
// status-update that is not older than the snapshot it started from, or
// after replaying up to that snapshot when the snapshot itself is final (a
// status-update with final=true restating the current status is added
// when the replay did not end on one). Earlier final statuses (a previous
// input-required turn) do not end a replay.
//
// With untilTerminal (an A2A 1.0 SubscribeToTask, §3.1.6: the stream ends
// only when the task reaches a terminal state), only a terminal state is
// final: an interrupted status (input-required, auth-required) is sent as
// it comes and the stream goes on with what the client's next message
// brings (working, artifacts, the next interruption) until the task is
// terminal. The client's own messages (role user) are left out of such a
// stream.
func (e *Engine) Stream(ctx context.Context, info store.TaskInfo, after int64, withSnapshot, untilTerminal bool) iter.Seq2[binding.StreamEvent, error] {
	return func(yield func(binding.StreamEvent, error) bool) {
		t := info.Task
		ends := a2a.TaskState.Final
		if untilTerminal {
			ends = a2a.TaskState.Terminal
		}
		finalNow := ends(t.Status.State)
		closing := func() {
			yield(binding.StreamEvent{Seq: info.Seq, Event: &a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status, Final: true}, Hold: true}, nil)
		}
		if withSnapshot {
			// An execution that starts with the stream may have events at
			// hand as soon as it had one yield of the processor: then the
			// snapshot waits for them, and they leave in one write.
			hold := finalNow
			if e.beforeSnapshotHold != nil {
				e.beforeSnapshotHold(t.ID)
			}
			if p, here := e.publishedSeq(t.ID); !hold && here {
				if p <= info.Seq {
					runtime.Gosched()
					p, _ = e.publishedSeq(t.ID)
				}
				hold = p > info.Seq
			}
			if !yield(binding.StreamEvent{Seq: info.Seq, Event: &t, Hold: hold}, nil) {
				return
			}
			after = info.Seq
		}
		if after >= info.Seq && finalNow {
			closing()
			return
		}
		e.follow(ctx, t.ID, after, func(r store.Record, more bool, err error) bool {
			if err != nil {
				yield(binding.StreamEvent{}, err)
				return false
			}
			su, isStatus := r.Event.(*a2a.TaskStatusUpdateEvent)
			final := isStatus && su.Final && (!untilTerminal || su.Status.State.Terminal())
			last := final && r.Seq >= info.Seq
			replayEnd := r.Seq == info.Seq && finalNow
			if m, ok := r.Event.(*a2a.Message); ok && untilTerminal && m.Role == a2a.RoleUser {
				// The client's message that continues an interrupted task:
				// a subscription carries the task's updates (§3.1.6), and
				// a Message in a 1.0 stream reads as a direct answer that
				// ends it (§3.1.2); the working status-update that follows
				// stands for it, and the task's history holds it.
				if replayEnd {
					closing()
					return false
				}
				return true
			}
			if !yield(binding.StreamEvent{Seq: r.Seq, Event: r.Event, Hold: more || last || replayEnd}, nil) {
				return false
			}
			if last {
				return false
			}
			if replayEnd {
				if !final {
					closing()
				}
				return false
			}
			return true
		})
	}
}
