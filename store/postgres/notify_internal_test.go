package postgres

import (
	"fmt"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/store"
)

// TestPayloads: pending appends are packed into payloads of at most
// maxPayload bytes, each starting with the instance id, and parse back to
// the same tasks; the sender's own payloads are ignored.
func TestPayloads(t *testing.T) {
	n := newNotifier("public")
	pending := map[string]int64{}
	for i := range 2000 {
		pending[fmt.Sprintf("01a21d0f-ecbe-768d-8f7f-%012d", i)] = int64(i + 1)
	}
	ps := n.payloads(pending)
	if len(ps) < 2 {
		t.Fatalf("%d payloads for 2000 tasks", len(ps))
	}
	got := map[string]int64{}
	for _, p := range ps {
		if len(p) > maxPayload || !strings.HasPrefix(p, n.instance+"\n") {
			t.Fatalf("payload of %d bytes: %.40q…", len(p), p)
		}
		parsePayload(p, "someone else", func(c store.Change) { got[c.TaskID] = c.Seq })
		parsePayload(p, n.instance, func(c store.Change) { t.Fatalf("own payload reported: %+v", c) })
	}
	if len(got) != len(pending) {
		t.Fatalf("%d tasks parsed back of %d", len(got), len(pending))
	}
	for id, seq := range pending {
		if got[id] != seq {
			t.Fatalf("task %s: seq %d, want %d", id, got[id], seq)
		}
	}
	if channelFor("a") == channelFor("b") || len(channelFor(strings.Repeat("x", 1000))) > 63 {
		t.Fatal("channel names")
	}
}

// FuzzParsePayload: any payload parses without panicking, into changes
// with a task id and a sequence number from its lines.
func FuzzParsePayload(f *testing.F) {
	f.Add("abc\n3 t1\n4 t2")
	f.Add("abc\n\n\nx y\n-1 t\n9223372036854775808 t")
	f.Add("")
	f.Fuzz(func(t *testing.T, p string) {
		parsePayload(p, "self", func(c store.Change) {
			if c.TaskID == "" || c.Resync || !strings.Contains(p, c.TaskID) {
				t.Fatalf("change %+v from %q", c, p)
			}
		})
	})
}
