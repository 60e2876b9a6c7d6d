package a2a

import (
	"regexp"
	"testing"
	"time"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// NewID makes RFC 9562 version 7 UUIDs: the right shape, distinct, and in
// creation order across milliseconds.
func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	prev := NewID()
	for i := 0; i < 2000; i++ {
		id := NewID()
		if !uuidV7.MatchString(id) {
			t.Fatalf("not a version 7 UUID: %q", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		if id[:13] < prev[:13] {
			t.Fatalf("timestamp went back: %q after %q", id, prev)
		}
		prev = id
	}
	a := NewID()
	time.Sleep(2 * time.Millisecond)
	if b := NewID(); b <= a {
		t.Fatalf("an id made 2 ms later sorts first: %q <= %q", b, a)
	}
	ms := time.Now().UnixMilli()
	id := NewID()
	var got int64
	for _, c := range id[:8] + id[9:13] {
		got = got<<4 | int64(hexVal(c))
	}
	if got < ms || got > ms+1000 {
		t.Fatalf("timestamp of %q is %d, want about %d", id, got, ms)
	}
}

func hexVal(c rune) int {
	if c >= 'a' {
		return int(c-'a') + 10
	}
	return int(c - '0')
}
