// Package ratelimit keeps token buckets, one per key (a caller), for the
// gateway's rate limits: each bucket holds up to Burst tokens, refilled
// at Rate tokens per second; a request takes one token or is refused
// with the time until one is back.
//
// The number of buckets is bounded: a bucket that is full again is the
// same as no bucket and is dropped by a sweep, and past MaxKeys buckets
// the keys without one share a single overflow bucket, so that many
// addresses cannot grow the memory without bound (they are then limited
// together).
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// MaxKeys is the number of buckets kept, above which new keys share the
// overflow bucket.
const MaxKeys = 100_000

// Buckets are the token buckets of one limit. The zero value is not
// usable: use New. Safe for concurrent use.
type Buckets struct {
	rate  float64 // tokens per second, > 0
	burst float64 // tokens, ≥ 1
	// full is how long an empty bucket takes to fill: a bucket last
	// touched that long ago is full, as an absent one is.
	full time.Duration

	mu        sync.Mutex
	m         map[string]*bucket
	overflow  bucket
	nextSweep int       // the map size at which the next sweep runs (≤ MaxKeys)
	swept     time.Time // the last sweep's time
}

// MinRate is the smallest rate New takes (tokens per second): one token
// in about 17 minutes. A bucket then fills in at most 10⁹ s at the
// largest burst, within a time.Duration.
const MinRate = 0.001

// MaxBurst is the largest burst New takes.
const MaxBurst = 1_000_000

// fullSweepEvery is how often, at most, the buckets are swept once
// MaxKeys of them are kept (each sweep looks at every bucket).
const fullSweepEvery = time.Second

type bucket struct {
	tokens float64
	last   time.Time
}

// New returns buckets of rate tokens per second (taken within [MinRate,
// 10⁶]) and burst tokens (taken within [1, MaxBurst]).
func New(rate float64, burst int) *Buckets {
	if !(rate >= MinRate) { // NaN too
		rate = MinRate
	}
	rate = min(rate, 1e6)
	b := float64(min(max(burst, 1), MaxBurst))
	return &Buckets{rate: rate, burst: b, full: time.Duration(b / rate * float64(time.Second)),
		m: map[string]*bucket{}, nextSweep: 1024, overflow: bucket{tokens: b}}
}

// Take takes a token of key's bucket at now. It returns true, or false
// and how long until a token is back.
func (bs *Buckets) Take(key string, now time.Time) (wait time.Duration, ok bool) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.bucketLocked(key, now)
	bs.refillLocked(b, now)
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration(math.Ceil((1 - b.tokens) / bs.rate * float64(time.Second))), false
}

// Refund gives back a token Take took (when a later limit refused the
// request after all).
func (bs *Buckets) Refund(key string, now time.Time) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.bucketLocked(key, now)
	b.tokens = min(b.tokens+1, bs.burst)
}

// Len returns the number of buckets kept (not counting the overflow one).
func (bs *Buckets) Len() int {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	return len(bs.m)
}

func (bs *Buckets) refillLocked(b *bucket, now time.Time) {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(bs.burst, b.tokens+d.Seconds()*bs.rate)
		b.last = now
	}
}

// bucketLocked returns key's bucket, made full when new; the overflow
// bucket when MaxKeys are kept.
func (bs *Buckets) bucketLocked(key string, now time.Time) *bucket {
	if b, ok := bs.m[key]; ok {
		return b
	}
	// Sweeps are amortized (the next one when the map has doubled);
	// once MaxKeys are kept, at most one each fullSweepEvery.
	if len(bs.m) >= bs.nextSweep && (len(bs.m) < MaxKeys || now.Sub(bs.swept) >= fullSweepEvery) {
		bs.sweepLocked(now)
	}
	if len(bs.m) >= MaxKeys {
		return &bs.overflow
	}
	b := &bucket{tokens: bs.burst, last: now}
	bs.m[key] = b
	return b
}

// sweepLocked drops the buckets that are full by now, and sets the size
// of the next sweep to twice what is left, at most MaxKeys (so sweeps
// cost O(1) per bucket made, amortized, until MaxKeys are kept).
func (bs *Buckets) sweepLocked(now time.Time) {
	for k, b := range bs.m {
		if now.Sub(b.last) >= bs.full {
			delete(bs.m, k)
		}
	}
	bs.nextSweep = min(max(1024, 2*len(bs.m)), MaxKeys)
	bs.swept = now
}
