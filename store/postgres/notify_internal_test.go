package postgres

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a2abridge/a2abridge/store"
)

// roundTrip packs pending into payloads and parses them back as another
// process would: the tasks told, and the resyncs.
func roundTrip(t *testing.T, n *notifier, pending map[string]int64) (map[string]int64, int) {
	t.Helper()
	got, resyncs := map[string]int64{}, 0
	told := map[string]bool{}
	for _, p := range n.payloads(pending) {
		if len(p.text) > maxPayload || !strings.HasPrefix(p.text, n.instance+"\n") || !utf8.ValidString(p.text) || strings.ContainsRune(p.text, 0) {
			t.Fatalf("payload of %d bytes: %.60q…", len(p.text), p.text)
		}
		for _, id := range p.ids {
			told[id] = true
		}
		parsePayload(p.text, "someone else", func(c store.Change) {
			if c.Resync {
				resyncs++
				return
			}
			got[c.TaskID] = c.Seq
		})
		parsePayload(p.text, n.instance, func(c store.Change) { t.Fatalf("own payload reported: %+v", c) })
	}
	for id := range pending {
		if !told[id] {
			t.Fatalf("task %q in no payload's ids", id)
		}
	}
	return got, resyncs
}

// TestPayloads: pending appends are packed into payloads of at most
// maxPayload bytes, each starting with the instance id, and parse back to
// the same tasks; ids a line cannot carry become one resync; the
// sender's own payloads are ignored.
func TestPayloads(t *testing.T) {
	n := newNotifier("public")
	pending := map[string]int64{}
	for i := range 2000 {
		pending[fmt.Sprintf("01a21d0f-ecbe-768d-8f7f-%012d", i)] = int64(i + 1)
	}
	if ps := n.payloads(pending); len(ps) < 2 {
		t.Fatalf("%d payloads for 2000 tasks", len(ps))
	}
	got, resyncs := roundTrip(t, n, pending)
	if len(got) != len(pending) || resyncs != 0 {
		t.Fatalf("%d tasks parsed back of %d, %d resyncs", len(got), len(pending), resyncs)
	}
	for id, seq := range pending {
		if got[id] != seq {
			t.Fatalf("task %s: seq %d, want %d", id, got[id], seq)
		}
	}
	odd := map[string]int64{"a\n5 b": 1, "nul\x00": 2, "\xff\xfe": 3, strings.Repeat("x", 9000): 4, "fine": 5}
	got, resyncs = roundTrip(t, n, odd)
	if len(got) != 1 || got["fine"] != 5 || resyncs != 1 {
		t.Fatalf("odd ids: %v, %d resyncs; want only fine, and one resync", got, resyncs)
	}
	if channelFor("a") == channelFor("b") || len(channelFor(strings.Repeat("x", 1000))) > 63 {
		t.Fatal("channel names")
	}
}

// FuzzPayloadRoundTrip: any task ids pack into valid payloads and parse
// back: each id a line can carry with its sequence number, and a resync
// when one cannot be carried; a payload of any content parses without
// panicking.
func FuzzPayloadRoundTrip(f *testing.F) {
	f.Add("t1", "t2\n3 t3", int64(7), "abc\n3 t1\n4 t2\nR")
	f.Add("\x00", "\xff", int64(-1), "")
	f.Fuzz(func(t *testing.T, id1, id2 string, seq int64, raw string) {
		n := newNotifier("s")
		pending := map[string]int64{id1: seq, id2: seq + 1}
		if id1 == id2 {
			pending = map[string]int64{id1: seq}
		}
		got, resyncs := roundTrip(t, n, pending)
		for id, want := range pending {
			if n.sendable(id) {
				if got[id] != want {
					t.Fatalf("id %q: seq %d, want %d", id, got[id], want)
				}
			} else if resyncs == 0 {
				t.Fatalf("id %q cannot be carried and no resync was sent", id)
			}
		}
		parsePayload(raw, "self", func(c store.Change) {
			if !c.Resync && (c.TaskID == "" || !strings.Contains(raw, c.TaskID)) {
				t.Fatalf("change %+v from %q", c, raw)
			}
		})
	})
}
