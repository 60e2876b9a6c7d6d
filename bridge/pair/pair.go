// Package pair hosts paired participants (the Banterop case): a room with
// two external participants and no agent of its own. POST /api/pairs
// creates a pair and answers with two ordinary A2A endpoints, one per side
// (agents pair-{id}-a and pair-{id}-b on the Host, each with its Agent
// Card, served over both A2A versions and both bindings like any agent).
// What side A sends becomes an agent message and an artifact in side B's
// task, and the other way round:
//
//   - Side A speaks first: its first message (without taskId) creates its
//     task and is turn 1. Side B's first message creates B's task and is
//     not passed on (it "joins"): B's task then shows what A said, or
//     waits (working) until A speaks.
//   - A side's task is input-required when it is that side's turn, and
//     working while the other side is to speak; the side continues its
//     task (same taskId) to speak. A blocking message/send returns when
//     the other side has answered; a stream ends at input-required.
//   - A message with metadata {"a2abridge/pair": {"end": true}} ends the
//     conversation after it is passed on: both tasks end completed.
//     tasks/cancel on either task ends both canceled. An idle pair (no
//     turn for Options.IdleTTL) ends with both tasks failed, saying why;
//     so does a pair still open when the Manager closes.
//   - Each message passed on carries {"a2abridge/pair": {"from": "a",
//     "turn": N}} in its metadata (and its artifact's), the artifact's id
//     is "turn-N".
//   - GET /api/pairs/{id}/events is the backchannel of the room for a
//     control plane: Server-Sent Events, each data a JSON Event
//     (created, join, turn, end) with its Seq as the SSE id; it replays
//     the events after Last-Event-ID (all without one), then follows,
//     and ends after "end". A pair keeps only its latest events
//     (Options.MaxBackchannelBytes, MaxTotalBackchannelBytes): events
//     asked for and no longer kept are replaced by one "trimmed" event.
//     GET /api/pairs/{id} is the pair's state, GET /api/pairs lists the
//     pairs, and DELETE /api/pairs/{id} ends one (both tasks canceled,
//     or as its outcome parameter says).
//
// Pairs live in memory: a restart ends them (the engine fails the tasks
// that were working; the endpoints are gone).
package pair

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/server"
)

// Defaults of Options.
const (
	DefaultMaxOpen         = 100
	DefaultIdleTTL         = 10 * time.Minute
	DefaultMaxMessageBytes = 64 << 10
	DefaultMaxTurns        = 500
	// DefaultMaxBackchannelBytes is 1 MiB of events kept per pair.
	DefaultMaxBackchannelBytes = 1 << 20
	// DefaultMaxTotalBackchannelBytes is 32 MiB of events kept across
	// pairs.
	DefaultMaxTotalBackchannelBytes = 32 << 20
)

// Options configure a Manager. Zero values mean the defaults.
type Options struct {
	// MaxOpen is the most pairs open at once: POST /api/pairs answers
	// 429 beyond it. Ended pairs stay served (for tasks/get) for IdleTTL
	// and at most MaxOpen of them are kept. Default DefaultMaxOpen.
	MaxOpen int
	// IdleTTL ends a pair in which nothing happened (no turn, no join)
	// for that long: both tasks fail with a reason. Default
	// DefaultIdleTTL.
	IdleTTL time.Duration
	// MaxMessageBytes bounds one message passed on (its A2A 0.3 JSON):
	// a larger one is not passed on, and the side is asked for a
	// shorter one. Default DefaultMaxMessageBytes.
	MaxMessageBytes int
	// MaxTurns ends a pair, completed, after that many turns. Default
	// DefaultMaxTurns.
	MaxTurns int
	// MaxBackchannelBytes bounds the events (their JSON) a pair keeps
	// for its backchannel: beyond it the oldest are dropped (a stream
	// asking for them gets a "trimmed" event instead; see Event). The
	// latest event is always kept. Default DefaultMaxBackchannelBytes.
	MaxBackchannelBytes int
	// MaxTotalBackchannelBytes bounds the events kept across the pairs
	// the Manager serves (open and ended ones not yet removed): a pair
	// adding an event beyond it drops its own oldest ones, down to its
	// latest one. So the total is at most this plus the latest event of
	// each pair. Default DefaultMaxTotalBackchannelBytes.
	MaxTotalBackchannelBytes int
	// Attachments, if set, is given to both sides' handlers
	// (server.HandlerOptions.Attachments): files sent by value are passed
	// on as URLs.
	Attachments *server.AttachmentOptions
	// Protect, if set, wraps the /api/pairs routes (e.g. the admin API's
	// authentication); the side endpoints are not wrapped: their URLs,
	// with 128 random bits, are the capability.
	Protect func(http.Handler) http.Handler
	// Logger; nil discards.
	Logger *slog.Logger
}

func (o Options) resolved() Options {
	if o.MaxOpen <= 0 {
		o.MaxOpen = DefaultMaxOpen
	}
	if o.IdleTTL <= 0 {
		o.IdleTTL = DefaultIdleTTL
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.MaxTurns <= 0 {
		o.MaxTurns = DefaultMaxTurns
	}
	if o.MaxBackchannelBytes <= 0 {
		o.MaxBackchannelBytes = DefaultMaxBackchannelBytes
	}
	if o.MaxTotalBackchannelBytes <= 0 {
		o.MaxTotalBackchannelBytes = DefaultMaxTotalBackchannelBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// ErrTooMany is returned by Create when Options.MaxOpen pairs are open.
var ErrTooMany = errors.New("pair: too many open pairs")

// Manager creates pairs and hosts their sides on a Host.
type Manager struct {
	eng    *server.Engine
	host   *server.Host
	o      Options
	budget *budget // backchannel bytes kept

	mu     sync.Mutex
	rooms  map[string]*room
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

// NewManager returns a Manager hosting pairs' sides on host, run by eng.
// It starts a janitor goroutine (idle pairs, ended pairs' removal) that
// Close stops.
func NewManager(eng *server.Engine, host *server.Host, o Options) *Manager {
	m := &Manager{eng: eng, host: host, o: o.resolved(), rooms: map[string]*room{}, stop: make(chan struct{}), done: make(chan struct{})}
	m.budget = &budget{max: int64(m.o.MaxTotalBackchannelBytes)}
	go m.janitor()
	return m
}

// Info is a pair as POST /api/pairs and GET /api/pairs/{id} answer it.
// State is "open" or "ended"; an ended pair has its Outcome (the state
// both tasks ended in: completed, canceled or failed). Turns counts the
// messages passed on; Created is when the pair was created (RFC 3339).
type Info struct {
	ID      string        `json:"id"`
	A       Endpoint      `json:"a"`
	B       Endpoint      `json:"b"`
	Events  string        `json:"events"`
	State   string        `json:"state"`
	Outcome a2a.TaskState `json:"outcome,omitzero"`
	Turns   int           `json:"turns"`
	Created time.Time     `json:"created"`
}

// Endpoint is one side's A2A endpoint: its URL (JSON-RPC and HTTP+JSON,
// A2A 0.3 and 1.0) and its Agent Card URL.
type Endpoint struct {
	Agent string `json:"agent"`
	URL   string `json:"url"`
	Card  string `json:"card"`
}

// AgentName is the name under which side s of pair id is hosted.
func AgentName(id string, s Side) string { return "pair-" + id + "-" + s.String() }

// Create opens a pair and hosts its two sides; base is the server's base
// URL for the answer's URLs (server.Host.BaseURL). ErrTooMany when
// MaxOpen pairs are open.
func (m *Manager) Create(base string) (Info, error) {
	var b [16]byte
	id := "-"
	for id[0] == '-' { // an id never reads as a flag on a command line (a2abridge pairs end ID)
		_, _ = rand.Read(b[:])
		id = base64.RawURLEncoding.EncodeToString(b[:])
	}
	now := time.Now()
	m.mu.Lock()
	open := 0
	for _, r := range m.rooms {
		r.mu.Lock()
		if !r.ended {
			open++
		}
		r.mu.Unlock()
	}
	if m.closed || open >= m.o.MaxOpen {
		m.mu.Unlock()
		return Info{}, ErrTooMany
	}
	r := newRoom(id, m.o, m.budget, now)
	m.rooms[id] = r
	m.mu.Unlock()
	for _, s := range []Side{A, B} {
		name := AgentName(id, s)
		card := a2a.AgentCard{Name: "Pair " + id + ", side " + s.String(),
			Description: "One side of a paired conversation: what this side sends is passed on to the other side, whose messages come back as agent messages and artifacts. Side A speaks first; side B's first message joins. End with message metadata {\"a2abridge/pair\": {\"end\": true}}, or cancel the task.",
			Version:     "1.0.0", Capabilities: a2a.AgentCapabilities{Streaming: true},
			DefaultInputModes: []string{"text/plain", "application/json", "*/*"}, DefaultOutputModes: []string{"text/plain", "application/json"},
			Skills: []a2a.AgentSkill{{ID: "pair", Name: "Paired conversation", Description: "Talk with the participant on the other side of this pair, turn by turn.", Tags: []string{"pair", "conversation"}}}}
		m.host.Add(server.NewHandler(m.eng, name, &sideAgent{r: r, side: s}, card, server.HandlerOptions{Attachments: m.o.Attachments, Unlisted: true}))
	}
	m.o.Logger.Info("pair created", "pair", id)
	return m.info(base, r), nil
}

func (m *Manager) info(base string, r *room) Info {
	ep := func(s Side) Endpoint {
		u := base + "/a2a/" + AgentName(r.id, s)
		return Endpoint{Agent: AgentName(r.id, s), URL: u, Card: u + "/.well-known/agent-card.json"}
	}
	info := Info{ID: r.id, A: ep(A), B: ep(B), Events: base + "/api/pairs/" + r.id + "/events", State: "open", Created: r.created.UTC()}
	r.mu.Lock()
	if r.ended {
		info.State, info.Outcome = "ended", r.outcome
	}
	info.Turns = r.turns
	r.mu.Unlock()
	return info
}

// list is every pair the Manager keeps (open, and ended ones not yet
// removed), oldest first (ties by id).
func (m *Manager) list(base string) []Info {
	m.mu.Lock()
	rooms := make([]*room, 0, len(m.rooms))
	for _, r := range m.rooms {
		rooms = append(rooms, r)
	}
	m.mu.Unlock()
	slices.SortFunc(rooms, func(a, b *room) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	out := make([]Info, 0, len(rooms))
	for _, r := range rooms {
		out = append(out, m.info(base, r))
	}
	return out
}

func (m *Manager) room(id string) *room {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rooms[id]
}

// End ends pair id with outcome (a2a.TaskStateCanceled, Completed or
// Failed) and reason; both sides' tasks end so. It reports whether the
// pair exists.
func (m *Manager) End(id string, outcome a2a.TaskState, reason string) bool {
	r := m.room(id)
	if r != nil {
		r.end(outcome, reason)
	}
	return r != nil
}

// Close ends every open pair (both tasks fail: "The server is shutting
// down.") and stops the janitor. Call it before server.Engine.Shutdown,
// so that the sides' executions return at once.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	rooms := make([]*room, 0, len(m.rooms))
	for _, r := range m.rooms {
		rooms = append(rooms, r)
	}
	m.mu.Unlock()
	close(m.stop)
	<-m.done
	for _, r := range rooms {
		r.end(a2a.TaskStateFailed, "The server is shutting down.")
	}
}

func (m *Manager) janitor() {
	defer close(m.done)
	tick := time.NewTicker(min(m.o.IdleTTL/4, 10*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case now := <-tick.C:
			m.sweep(now)
		}
	}
}

// sweep ends the pairs idle since before now-IdleTTL and removes the
// ended ones that ended before it (or beyond MaxOpen of them, oldest
// first).
func (m *Manager) sweep(now time.Time) {
	m.mu.Lock()
	rooms := make([]*room, 0, len(m.rooms))
	for _, r := range m.rooms {
		rooms = append(rooms, r)
	}
	m.mu.Unlock()
	limit := now.Add(-m.o.IdleTTL)
	var ended []*room
	for _, r := range rooms {
		r.mu.Lock()
		if !r.ended && r.active.Before(limit) {
			r.endLocked(a2a.TaskStateFailed, "The pair was idle for "+m.o.IdleTTL.String()+".", now)
		}
		if r.ended {
			ended = append(ended, r)
		}
		r.mu.Unlock()
	}
	// Oldest first: remove those past the linger time, and the oldest
	// beyond MaxOpen.
	for i := range ended {
		for j := i + 1; j < len(ended); j++ {
			if ended[j].endedAt.Before(ended[i].endedAt) {
				ended[i], ended[j] = ended[j], ended[i]
			}
		}
	}
	for i, r := range ended {
		if r.endedAt.Before(limit) || len(ended)-i > m.o.MaxOpen {
			m.remove(r)
		}
	}
}

func (m *Manager) remove(r *room) {
	m.mu.Lock()
	delete(m.rooms, r.id)
	m.mu.Unlock()
	r.release()
	for _, s := range []Side{A, B} {
		m.host.Remove(AgentName(r.id, s))
	}
	m.o.Logger.Info("pair removed", "pair", r.id)
}

// Handler serves the pairs API below /api/pairs (mount it with
// Host.Handle("/api/pairs", h) and Host.Handle("/api/pairs/", h)):
//
//	POST /api/pairs              201 Info (429 when MaxOpen are open); no body is needed (up to 4 KiB is read and ignored)
//	GET  /api/pairs              200 {"pairs": [Info, …]}: the open pairs and the ended ones still served, oldest first;
//	                             403 without Options.Protect (the list holds every pair's side URLs)
//	GET  /api/pairs/{id}         200 Info with state "open" or "ended"; 404 when unknown
//	DELETE /api/pairs/{id}       end the pair (as End): ?outcome=canceled (the default), completed or failed, and
//	                             ?reason=TEXT (the ended tasks' status message); 200 Info; 404 when unknown,
//	                             409 when it has ended already, 400 for another outcome
//	GET  /api/pairs/{id}/events  the backchannel (SSE; see the package doc)
//
// Errors are JSON {"error": "..."}. base gives the server's base URL for
// a request (server.Host.BaseURL).
func (m *Manager) Handler(base func(*http.Request) string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/pairs", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, 4<<10))
		info, err := m.Create(base(r))
		if err != nil {
			writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "too many open pairs; try again later"})
			return
		}
		writeJSON(w, http.StatusCreated, info)
	})
	mux.HandleFunc("GET /api/pairs/{id}", func(w http.ResponseWriter, r *http.Request) {
		rm := m.room(r.PathValue("id"))
		if rm == nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such pair"})
			return
		}
		writeJSON(w, http.StatusOK, m.info(base(r), rm))
	})
	mux.HandleFunc("GET /api/pairs", func(w http.ResponseWriter, r *http.Request) {
		if m.o.Protect == nil {
			// The list holds every pair's side URLs, which are the
			// capability to join it: not for anyone who asks.
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "listing pairs needs a protected pairs API: configure admin bearer tokens (admin.bearer_tokens) or authentication (auth:)"})
			return
		}
		writeJSON(w, http.StatusOK, struct {
			Pairs []Info `json:"pairs"`
		}{m.list(base(r))})
	})
	mux.HandleFunc("DELETE /api/pairs/{id}", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		outcome := a2a.TaskStateCanceled
		switch o := q.Get("outcome"); o {
		case "", "canceled":
		case "completed":
			outcome = a2a.TaskStateCompleted
		case "failed":
			outcome = a2a.TaskStateFailed
		default:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "outcome: want canceled, completed or failed", "field": "outcome"})
			return
		}
		reason := q.Get("reason")
		if reason == "" {
			reason = "The pair was ended through the pairs API."
		}
		rm := m.room(r.PathValue("id"))
		if rm == nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such pair"})
			return
		}
		rm.mu.Lock()
		ended := rm.ended
		rm.endLocked(outcome, reason, time.Now())
		rm.mu.Unlock()
		if ended {
			writeJSON(w, http.StatusConflict, map[string]string{"error": "the pair has ended already"})
			return
		}
		m.o.Logger.Info("pair ended through the API", "pair", rm.id, "outcome", outcome)
		writeJSON(w, http.StatusOK, m.info(base(r), rm))
	})
	mux.HandleFunc("GET /api/pairs/{id}/events", m.serveEvents)
	var h http.Handler = mux
	if m.o.Protect != nil {
		h = m.o.Protect(h)
	}
	return h
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// serveEvents streams a room's backchannel.
func (m *Manager) serveEvents(w http.ResponseWriter, r *http.Request) {
	rm := m.room(r.PathValue("id"))
	if rm == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such pair"})
		return
	}
	var after int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "Last-Event-ID must be an event's seq"})
			return
		}
		after = n
	}
	sw, err := sse.NewWriter(w)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "streaming is not supported here"})
		return
	}
	defer sw.Close()
	ctx := r.Context()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	if err := sw.Comment("pair " + rm.id); err != nil {
		return
	}
	for {
		note, evs, changed := rm.eventsAfter(after)
		if note != nil {
			// Its id is the last event not kept: a client that
			// reconnects with it gets the kept ones.
			if err := sw.Event(strconv.FormatInt(note.seq, 10), note.typ, note.data); err != nil {
				return
			}
			after = note.seq
		}
		for _, ev := range evs {
			if err := sw.Event(strconv.FormatInt(ev.seq, 10), ev.typ, ev.data); err != nil {
				return
			}
			after = ev.seq
			if ev.typ == "end" {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-keep.C:
			if err := sw.Comment("keep-alive"); err != nil {
				return
			}
		}
	}
}

var _ server.Canceler = (*sideAgent)(nil)
