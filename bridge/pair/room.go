package pair

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/a2a/a2av03"
	"github.com/a2abridge/a2abridge/server"
)

// Side is one participant of a pair: A (who speaks first) or B.
type Side int

// The sides of a pair.
const (
	A Side = 0
	B Side = 1
)

// String returns "a" or "b" (as in agent names and events).
func (s Side) String() string {
	if s == A {
		return "a"
	}
	return "b"
}

func (s Side) other() Side { return 1 - s }

// MetadataKey is the message metadata key of the pair extension: a
// message whose metadata holds {"a2abridge/pair": {"end": true}} ends the
// conversation after it is passed on; the messages a side receives carry
// {"a2abridge/pair": {"from": "a"|"b", "turn": N}}.
const MetadataKey = "a2abridge/pair"

// Event is one entry of a pair's backchannel (GET /api/pairs/{id}/events):
// Seq 1, 2, 3… per pair; Type is "created", "join" (a side's task exists:
// Side, TaskID), "turn" (Side spoke: Turn is the turn's number from 1,
// Message the message as passed on, in A2A 0.3 JSON, and Text its text
// parts joined) or "end" (Outcome: completed, canceled or failed, with
// Reason). The stream of a pair ends after its "end" event.
//
// A pair keeps its latest events only (Options.MaxBackchannelBytes,
// MaxTotalBackchannelBytes): a stream that asks for events no longer
// kept (Last-Event-ID, or none, older than the oldest kept) gets first
// a "trimmed" event whose Seq is the last event not kept and whose
// Reason says which are missing, then the kept ones.
type Event struct {
	Seq     int64          `json:"seq"`
	Type    string         `json:"type"`
	Time    time.Time      `json:"time"`
	Side    string         `json:"side,omitempty"`
	TaskID  string         `json:"taskId,omitempty"`
	Turn    int            `json:"turn,omitzero"`
	Text    string         `json:"text,omitempty"`
	Message map[string]any `json:"message,omitempty"`
	Outcome a2a.TaskState  `json:"outcome,omitzero"`
	Reason  string         `json:"reason,omitempty"`
}

// turnMsg is a message on its way to a side.
type turnMsg struct {
	from  Side
	turn  int
	parts []a2a.Part
	end   bool
}

// keptEvent is a backchannel event as a room keeps it: its JSON (the
// SSE data), with its seq, type and side.
type keptEvent struct {
	seq       int64
	typ, side string
	data      []byte
}

// wireEvent is Event with the message kept as its JSON.
type wireEvent struct {
	Seq     int64          `json:"seq"`
	Type    string         `json:"type"`
	Time    time.Time      `json:"time"`
	Side    string         `json:"side,omitempty"`
	TaskID  string         `json:"taskId,omitempty"`
	Turn    int            `json:"turn,omitzero"`
	Text    string         `json:"text,omitempty"`
	Message jsontext.Value `json:"message,omitempty"`
	Outcome a2a.TaskState  `json:"outcome,omitzero"`
	Reason  string         `json:"reason,omitempty"`
}

// budget counts the backchannel bytes kept by a Manager's rooms.
type budget struct {
	max  int64
	used atomic.Int64
}

// room is the state of one pair. Its mutex guards everything below it.
type room struct {
	id      string
	max     Options // resolved limits
	budget  *budget
	created time.Time

	mu    sync.Mutex
	turn  Side // who speaks next
	turns int
	tasks [2]string
	// gen counts each side's executions: only the latest one (the one
	// the engine runs for the side's task; a continuation supersedes
	// the previous one) takes messages from the side's queue.
	gen     [2]int
	queue   [2][]turnMsg // messages not yet delivered to each side
	ended   bool
	outcome a2a.TaskState
	reason  string
	endedAt time.Time
	active  time.Time // the last turn, join or creation
	seq     int64     // of the latest event
	// events are the latest events, oldest first (those before were
	// trimmed), holding bytes of JSON, counted in budget too (until the
	// room is removed: released).
	events   []keptEvent
	bytes    int64
	released bool
	changed  chan struct{} // closed and replaced on every change
}

func newRoom(id string, o Options, b *budget, now time.Time) *room {
	r := &room{id: id, max: o, budget: b, created: now, active: now, changed: make(chan struct{})}
	r.addLocked(wireEvent{Type: "created"}, now)
	return r
}

// addLocked appends a backchannel event, trims the oldest kept events
// beyond the room's and the Manager's byte limits (the latest event is
// always kept), and wakes every waiter.
func (r *room) addLocked(ev wireEvent, now time.Time) {
	r.seq++
	ev.Seq = r.seq
	ev.Time = now.UTC()
	data, err := json.Marshal(ev, json.Deterministic(true))
	if err != nil { // (a message that was marshalled already, strings)
		ev.Message, ev.Text = nil, ""
		data, _ = json.Marshal(ev, json.Deterministic(true))
	}
	r.events = append(r.events, keptEvent{seq: ev.Seq, typ: ev.Type, side: ev.Side, data: data})
	r.account(int64(len(data)))
	for len(r.events) > 1 && (r.bytes > int64(r.max.MaxBackchannelBytes) || r.budget.used.Load() > r.budget.max) {
		r.account(-int64(len(r.events[0].data)))
		r.events[0] = keptEvent{}
		r.events = r.events[1:]
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// account adds n bytes to the room's count and, until the room is
// removed, the Manager's.
func (r *room) account(n int64) {
	r.bytes += n
	if !r.released {
		r.budget.used.Add(n)
	}
}

// release takes the room's bytes out of the Manager's count (it was
// removed; its events stay for the streams still reading them).
func (r *room) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.released {
		r.released = true
		r.budget.used.Add(-r.bytes)
	}
}

// eventsAfter returns the kept events after seq after and, when some
// after it are no longer kept, the "trimmed" event that goes first (its
// seq is the last event not kept); and the channel closed on the next
// change.
func (r *room) eventsAfter(after int64) (note *keptEvent, evs []keptEvent, changed <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	first := r.seq + 1
	if len(r.events) > 0 {
		first = r.events[0].seq
	}
	if after < first-1 {
		data, _ := json.Marshal(wireEvent{Seq: first - 1, Type: "trimmed", Time: time.Now().UTC(),
			Reason: fmt.Sprintf("Events %d to %d are no longer kept: a pair's backchannel keeps its latest events only.", after+1, first-1)},
			json.Deterministic(true))
		note = &keptEvent{seq: first - 1, typ: "trimmed", data: data}
		after = first - 1
	}
	if i := after - first + 1; i < int64(len(r.events)) {
		evs = slices.Clone(r.events[i:])
	}
	return note, evs, r.changed
}

// endLocked ends the room (once).
func (r *room) endLocked(outcome a2a.TaskState, reason string, now time.Time) {
	if r.ended {
		return
	}
	r.ended, r.outcome, r.reason, r.endedAt = true, outcome, reason, now
	r.addLocked(wireEvent{Type: "end", Outcome: outcome, Reason: reason}, now)
}

// end ends the room from outside an execution (cancel, idle TTL,
// shutdown).
func (r *room) end(outcome a2a.TaskState, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endLocked(outcome, reason, time.Now())
}

// wantsEnd reports the end flag of a message's pair metadata.
func wantsEnd(m *a2a.Message) bool {
	md, _ := m.Metadata[MetadataKey].(map[string]any)
	end, _ := md["end"].(bool)
	return end
}

func textOf(parts []a2a.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if tp, ok := p.Content.(a2a.Text); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(string(tp))
		}
	}
	return b.String()
}

// sideAgent is the server.Agent of one side of a room.
type sideAgent struct {
	r    *room
	side Side
}

// Execute implements server.Agent: the message is a turn of this side
// (or, for side B's first message, its join), and the execution then
// stays to deliver the other side's answer, leaving the task
// input-required, and to end the task when the pair ends.
func (a *sideAgent) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	r, s := a.r, a.side
	now := time.Now()
	r.mu.Lock()
	switch {
	case r.tasks[s] != "" && r.tasks[s] != t.TaskID():
		r.mu.Unlock()
		return t.Fail(ctx, fmt.Sprintf("Side %s of this pair already has its conversation: task %s. Continue that task.", strings.ToUpper(s.String()), r.tasks[s]))
	case r.tasks[s] == "" && r.ended && s == A:
		r.mu.Unlock()
		return t.Fail(ctx, "This pair has ended: "+r.reason)
	}
	r.gen[s]++
	gen := r.gen[s]
	join := r.tasks[s] == ""
	if join {
		r.tasks[s] = t.TaskID()
		r.active = now
		r.addLocked(wireEvent{Type: "join", Side: s.String(), TaskID: t.TaskID()}, now)
	}
	switch {
	case r.ended:
		// Side B joining an ended pair gets what was said, then the end.
	case join && s == B:
		// B's first message opens its task; it is not passed on.
		if wantsEnd(&req.Message) {
			r.endLocked(a2a.TaskStateCompleted, "Side B ended the conversation.", now)
		}
	case r.turn != s:
		r.mu.Unlock()
		return t.Fail(ctx, "It is not this side's turn.")
	default:
		m := req.Message
		b, err := a2av03.Marshal(&m)
		if err != nil {
			r.mu.Unlock()
			return err
		}
		if len(b) > r.max.MaxMessageBytes {
			r.mu.Unlock()
			// Still this side's turn; the execution stays for the end.
			if err := t.RequireInput(ctx, fmt.Sprintf("The message is %d bytes; at most %d are passed on. Send a shorter one.", len(b), r.max.MaxMessageBytes)); err != nil {
				return err
			}
			return a.wait(ctx, t, gen)
		}
		end := wantsEnd(&m)
		r.turns++
		r.turn = s.other()
		r.active = now
		r.queue[s.other()] = append(r.queue[s.other()], turnMsg{from: s, turn: r.turns, parts: m.Parts, end: end})
		r.addLocked(wireEvent{Type: "turn", Side: s.String(), Turn: r.turns, Text: textOf(m.Parts), Message: b}, now)
		switch {
		case end:
			r.endLocked(a2a.TaskStateCompleted, fmt.Sprintf("Side %s ended the conversation.", strings.ToUpper(s.String())), now)
		case r.turns >= r.max.MaxTurns:
			r.endLocked(a2a.TaskStateCompleted, "The conversation reached its limit of "+turnCount(r.max.MaxTurns)+".", now)
		}
	}
	r.mu.Unlock()
	return a.wait(ctx, t, gen)
}

// wait delivers the other side's messages to this side's task as they
// come, and ends the task when the room ends, as long as it is the side's
// latest execution (gen).
func (a *sideAgent) wait(ctx context.Context, t *server.TaskUpdater, gen int) error {
	r, s := a.r, a.side
	waiting := false
	for {
		r.mu.Lock()
		if r.gen[s] != gen {
			r.mu.Unlock()
			return nil // superseded: the new execution delivers
		}
		pending := r.queue[s]
		r.queue[s] = nil
		ended, outcome, reason := r.ended, r.outcome, r.reason
		changed := r.changed
		r.mu.Unlock()
		for _, m := range pending {
			if err := a.deliver(ctx, t, m); err != nil {
				return err
			}
		}
		if ended {
			return t.SetStatus(ctx, outcome, t.TextMessage(reason))
		}
		switch {
		case len(pending) > 0:
			last := pending[len(pending)-1]
			if err := t.RequireInput(ctx, fmt.Sprintf("Your turn: side %s spoke (turn %d).", strings.ToUpper(last.from.String()), last.turn)); err != nil {
				return err
			}
			waiting = false
		case !waiting:
			r.mu.Lock()
			mine := r.turn == s && len(r.queue[s]) == 0
			r.mu.Unlock()
			if !mine {
				if err := t.Working(ctx, fmt.Sprintf("Waiting for side %s.", strings.ToUpper(s.other().String()))); err != nil {
					return err
				}
			}
			waiting = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// turnCount is "1 turn", "N turns".
func turnCount(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return fmt.Sprintf("%d turns", n)
}

// deliver puts one message of the other side in this side's task: an
// artifact, then a working status-update whose message (role agent) goes
// to the history. A status-update rather than a Message event: a stream
// that began with the Task carries only status and artifact updates
// (A2A 1.0 §3.1.2), and clients end a stream at a Message.
func (a *sideAgent) deliver(ctx context.Context, t *server.TaskUpdater, m turnMsg) error {
	md := map[string]any{MetadataKey: map[string]any{"from": m.from.String(), "turn": m.turn}}
	art := a2a.Artifact{ArtifactID: fmt.Sprintf("turn-%d", m.turn), Name: fmt.Sprintf("side %s, turn %d", m.from, m.turn),
		Parts: m.parts, Metadata: md}
	if err := t.AddArtifact(ctx, art, false, true); err != nil {
		return err
	}
	msg := t.Message(m.parts...)
	msg.Metadata = md
	return t.SetStatus(ctx, a2a.TaskStateWorking, msg)
}

// Cancel implements server.Canceler: canceling either side's task ends
// the pair, and the other side's task is canceled too.
func (a *sideAgent) Cancel(ctx context.Context, task a2a.Task) error {
	a.r.end(a2a.TaskStateCanceled, fmt.Sprintf("Side %s canceled the conversation.", strings.ToUpper(a.side.String())))
	return nil
}
