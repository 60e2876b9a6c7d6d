package pair

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/internal/sse"
)

// converse holds a conversation of turns messages of size bytes each
// (alternating, A first) in pair info, the last one ending it.
func converse(t *testing.T, f *fixture, info Info, turns, size int) {
	t.Helper()
	a, b := f.side(t, info, A), f.side(t, info, B)
	line := func(i int) string { return fmt.Sprintf("%03d", i) + strings.Repeat("x", size-3) }
	aTurn := send(a, textMsg(line(1), "", false))
	bTask := get(t, send(b, textMsg("join", "", false)))
	ids := [2]string{"", bTask.ID}
	pending := aTurn // the send waiting for the other side
	for i := 2; i <= turns; i++ {
		s := B
		if i%2 == 1 {
			s = A
		}
		next := send(f.side(t, info, s), textMsg(line(i), ids[s], i == turns))
		task := get(t, pending)
		ids[s.other()] = task.ID
		pending = next
		if i == turns {
			get(t, next)
		}
	}
}

// readBackchannel reads the events of pair id after lastID ("" for all).
func readBackchannel(t *testing.T, base, id, lastID string) []sse.Event {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/pairs/"+id+"/events", nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []sse.Event
	r := sse.NewReader(resp.Body)
	for {
		e, err := r.Next()
		if err != nil {
			return out
		}
		out = append(out, e)
	}
}

// TestBackchannelBounded: a pair keeps at most
// MaxBackchannelBytes of events (plus its latest one): after 40 turns of
// 1 KiB, the oldest events are dropped; a stream from the start gets a
// "trimmed" event (id: the last event not kept) then the kept ones in
// order up to "end"; one resuming inside the kept window gets no note;
// the turn events still carry the message as passed on.
func TestBackchannelBounded(t *testing.T) {
	const limit = 8 << 10
	f := newFixture(t, Options{MaxBackchannelBytes: limit})
	info, err := f.m.Create("http://x")
	if err != nil {
		t.Fatal(err)
	}
	converse(t, f, info, 40, 1024)
	r := f.m.room(info.ID)
	r.mu.Lock()
	kept, bytes, seq := len(r.events), r.bytes, r.seq
	last := int64(len(r.events[len(r.events)-1].data))
	var sum int64
	for _, ev := range r.events {
		sum += int64(len(ev.data))
	}
	first := r.events[0].seq
	r.mu.Unlock()
	if bytes != sum || bytes > limit+last || kept >= int(seq) || f.m.budget.used.Load() != bytes {
		t.Fatalf("kept %d of %d events, %d bytes (sum %d, budget %d), limit %d", kept, seq, bytes, sum, f.m.budget.used.Load(), limit)
	}
	ts := httptest.NewServer(f.m.Handler(func(*http.Request) string { return "http://x" }))
	defer ts.Close()
	evs := readBackchannel(t, ts.URL, info.ID, "")
	if len(evs) != kept+1 || evs[0].Event != "trimmed" || evs[0].ID != strconv.FormatInt(first-1, 10) {
		t.Fatalf("from the start: %d events (want %d), first %q id %q (want trimmed, id %d)", len(evs), kept+1, evs[0].Event, evs[0].ID, first-1)
	}
	var note Event
	if err := json.Unmarshal(evs[0].Data, &note); err != nil || note.Type != "trimmed" || note.Seq != first-1 ||
		!strings.Contains(note.Reason, fmt.Sprintf("Events 1 to %d", first-1)) {
		t.Fatalf("trimmed note: %s (%v)", evs[0].Data, err)
	}
	for i, e := range evs[1:] {
		var ev Event
		if err := json.Unmarshal(e.Data, &ev); err != nil || ev.Seq != first+int64(i) || e.ID != strconv.FormatInt(ev.Seq, 10) || e.Event != ev.Type {
			t.Fatalf("event %d: %s %s (%v)", i, e.ID, e.Data, err)
		}
		if ev.Type == "turn" {
			parts, _ := ev.Message["parts"].([]any)
			if len(parts) != 1 || !strings.HasPrefix(ev.Text, fmt.Sprintf("%03d", ev.Turn)) || ev.Message["role"] != "user" {
				t.Fatalf("turn event: %s", e.Data)
			}
		}
	}
	if evs[len(evs)-1].Event != "end" {
		t.Fatalf("last event: %s", evs[len(evs)-1].Event)
	}
	// Resuming inside the window: no note; before it: the note again.
	if evs := readBackchannel(t, ts.URL, info.ID, strconv.FormatInt(seq-2, 10)); len(evs) != 2 || evs[1].Event != "end" {
		t.Fatalf("resumed at %d: %d events", seq-2, len(evs))
	}
	if evs := readBackchannel(t, ts.URL, info.ID, "3"); len(evs) != kept+1 || evs[0].Event != "trimmed" {
		t.Fatalf("resumed at 3: %d events, first %q", len(evs), evs[0].Event)
	}
}

// TestBackchannelTotalBudget: across pairs the
// events kept are at most MaxTotalBackchannelBytes plus each pair's
// latest; a removed pair's bytes are released.
func TestBackchannelTotalBudget(t *testing.T) {
	const total = 16 << 10
	f := newFixture(t, Options{MaxBackchannelBytes: 1 << 20, MaxTotalBackchannelBytes: total, IdleTTL: time.Hour})
	var infos []Info
	for range 3 {
		info, err := f.m.Create("http://x")
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
		converse(t, f, info, 20, 1024)
	}
	var sum, lasts int64
	for _, info := range infos {
		r := f.m.room(info.ID)
		r.mu.Lock()
		sum += r.bytes
		lasts += int64(len(r.events[len(r.events)-1].data))
		r.mu.Unlock()
	}
	if used := f.m.budget.used.Load(); used != sum || used > total+lasts {
		t.Fatalf("kept %d bytes across pairs (rooms: %d), budget %d", used, sum, total)
	}
	f.m.sweep(time.Now().Add(3 * time.Hour)) // removes the ended pairs
	if used := f.m.budget.used.Load(); used != 0 || f.m.room(infos[0].ID) != nil {
		t.Fatalf("after removal: %d bytes counted", used)
	}
}
