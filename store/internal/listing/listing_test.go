package listing

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

func TestStatusKey(t *testing.T) {
	at := time.Date(2026, 11, 25, 6, 37, 6, 123456789, time.FixedZone("X", 3600))
	for _, c := range []struct {
		t    time.Time
		want int64
	}{
		{time.Time{}, NoStatusTime},
		{at, at.UnixNano()},
		{time.Unix(0, 0), 0},
		{time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), NoStatusTime + 1},
		{time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), NoStatusTime + 1},
		{time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), math.MaxInt64},
		{time.Unix(0, math.MinInt64), NoStatusTime + 1},
		{time.Unix(0, math.MaxInt64), math.MaxInt64},
	} {
		if got := StatusKey(c.t); got != c.want {
			t.Errorf("StatusKey(%v) = %d, want %d", c.t, got, c.want)
		}
	}
	// Order is kept across the clamped ranges.
	times := []time.Time{time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(1677, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC), time.Unix(-1, 0), time.Unix(1, 0), time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2263, 1, 1, 0, 0, 0, 0, time.UTC)}
	for i := 1; i < len(times); i++ {
		if StatusKey(times[i-1]) > StatusKey(times[i]) {
			t.Errorf("StatusKey(%v) > StatusKey(%v)", times[i-1], times[i])
		}
	}
}

func TestCursor(t *testing.T) {
	q := store.TaskQuery{Agent: "a", Owner: `"bearer"/""/"alice"`, ContextID: "c", State: a2a.TaskStateWorking, StatusAfter: time.Unix(5, 0)}
	for _, k := range []Key{{0, ""}, {NoStatusTime, "t"}, {math.MaxInt64, "id ✓"}, {-1, "01a20d86-12b5-7553-8b7a-f0ba755a6b42"}} {
		q.Cursor = Cursor(&q, k)
		got, ok, err := After(&q)
		if err != nil || !ok || got != k {
			t.Errorf("After(Cursor(%v)) = %v, %v, %v", k, got, ok, err)
		}
		other := q
		other.StatusAfter = time.Unix(6, 0)
		if _, _, err := After(&other); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("cursor with another StatusAfter: %v", err)
		}
	}
	q.Cursor = ""
	if _, ok, err := After(&q); ok || err != nil {
		t.Errorf("empty cursor: %v, %v", ok, err)
	}
	// Filters that differ only in where one ends and the next starts.
	a := store.TaskQuery{Agent: "ab", Owner: "c"}
	b := store.TaskQuery{Agent: "a", Owner: "bc"}
	b.Cursor = Cursor(&a, Key{1, "x"})
	if _, _, err := After(&b); !errors.Is(err, store.ErrInvalidCursor) {
		t.Errorf("cursor of agent ab owner c used with agent a owner bc: %v", err)
	}
}

func TestKeyBefore(t *testing.T) {
	keys := []Key{{10, "b"}, {10, "a"}, {9, "z"}, {NoStatusTime, "z"}, {NoStatusTime, "a"}}
	for i := range keys {
		for j := range keys {
			if got := keys[i].Before(keys[j]); got != (i < j) {
				t.Errorf("%v.Before(%v) = %v", keys[i], keys[j], got)
			}
		}
	}
}
