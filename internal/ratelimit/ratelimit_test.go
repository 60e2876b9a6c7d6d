package ratelimit

import (
	"strconv"
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	bs := New(2, 3) // 2/s, burst 3
	t0 := time.Unix(1000, 0)
	for i := range 3 {
		if _, ok := bs.Take("a", t0); !ok {
			t.Fatalf("take %d of the burst refused", i)
		}
	}
	wait, ok := bs.Take("a", t0)
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("past the burst: %v, %v; want refused, 500ms", wait, ok)
	}
	if _, ok := bs.Take("b", t0); !ok {
		t.Fatal("another key shares the bucket")
	}
	if _, ok := bs.Take("a", t0.Add(500*time.Millisecond)); !ok {
		t.Fatal("a token is back after 1/rate")
	}
	if _, ok := bs.Take("a", t0.Add(500*time.Millisecond)); ok {
		t.Fatal("two tokens taken after 1/rate")
	}
	bs.Refund("a", t0.Add(500*time.Millisecond))
	if _, ok := bs.Take("a", t0.Add(500*time.Millisecond)); !ok {
		t.Fatal("a refunded token cannot be taken")
	}
	// Refill stops at the burst.
	t1 := t0.Add(time.Hour)
	for i := range 3 {
		if _, ok := bs.Take("a", t1); !ok {
			t.Fatalf("take %d after an hour refused", i)
		}
	}
	if _, ok := bs.Take("a", t1); ok {
		t.Fatal("an hour filled more than the burst")
	}
}

func TestBucketsBounded(t *testing.T) {
	bs := New(1, 1)
	t0 := time.Unix(1000, 0)
	// Keys that come back to full are swept: the map stays small.
	for i := range 50_000 {
		now := t0.Add(time.Duration(i) * time.Second)
		if _, ok := bs.Take(strconv.Itoa(i), now); !ok {
			t.Fatalf("key %d refused", i)
		}
	}
	if n := bs.Len(); n > 2048 {
		t.Fatalf("%d buckets kept for keys that were full again", n)
	}
	// Keys all busy at once: past MaxKeys they share one bucket.
	bs = New(1, 1)
	for i := range MaxKeys {
		bs.Take(strconv.Itoa(i), t0)
	}
	if _, ok := bs.Take("new-1", t0); !ok {
		t.Fatal("the overflow bucket refused its first request")
	}
	if _, ok := bs.Take("new-2", t0); ok {
		t.Fatal("keys past MaxKeys do not share the overflow bucket")
	}
	if n := bs.Len(); n != MaxKeys {
		t.Fatalf("%d buckets, want %d", n, MaxKeys)
	}
	// Once those are full again, new keys get buckets of their own.
	later := t0.Add(24 * time.Hour)
	for _, k := range []string{"late-1", "late-2"} {
		if _, ok := bs.Take(k, later); !ok {
			t.Fatalf("%s refused: the full buckets were not swept", k)
		}
	}
	if n := bs.Len(); n != 2 {
		t.Fatalf("%d buckets after the sweep, want 2", n)
	}
}

// TestExtremeRates: rates and bursts out of range are clamped, so the
// times stay within a time.Duration.
func TestExtremeRates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	bs := New(1e-12, 1<<40)
	if _, ok := bs.Take("a", t0); !ok {
		t.Fatal("a full bucket refused")
	}
	for range MaxBurst {
		bs.Take("b", t0)
	}
	wait, ok := bs.Take("b", t0)
	if ok || wait <= 0 || wait > time.Duration(1/MinRate*float64(time.Second))+time.Second {
		t.Fatalf("past the burst at the smallest rate: %v, %v", wait, ok)
	}
	if bs.full <= 0 {
		t.Fatalf("fill time %v", bs.full)
	}
}
