package bench

import (
	"math/bits"
	"time"
)

// histogram is a log-linear latency histogram in the manner of
// HdrHistogram: values (nanoseconds) below 2^subBits are exact, larger ones
// fall in one of 2^subBits buckets per power of two, so every recorded value
// is known to within 1/2^subBits (under 1 %). It covers 1 ns to about
// 4.6e18 ns, never allocates after creation, and is not safe for
// concurrent use: each worker keeps its own and they are merged at the end.
type histogram struct {
	counts [buckets]uint32
	n      uint64
	sum    uint64
	min    uint64
	max    uint64
}

const (
	subBits = 7 // 128 sub-buckets per power of two: < 0.8 % error
	sub     = 1 << subBits
	buckets = (64 - subBits + 1) * sub
)

func bucketOf(v uint64) int {
	if v < sub {
		return int(v)
	}
	e := bits.Len64(v) - subBits - 1 // v>>e is in [sub, 2*sub)
	return (e+1)*sub + int(v>>e) - sub
}

// bucketHigh is the largest value that falls in bucket i.
func bucketHigh(i int) uint64 {
	if i < sub {
		return uint64(i)
	}
	e := i/sub - 1
	m := uint64(i%sub + sub)
	return (m+1)<<e - 1
}

func (h *histogram) record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[bucketOf(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += v
}

func (h *histogram) merge(o *histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// quantile returns the value at quantile q (0 < q <= 1): the upper bound
// of the bucket holding the ceil(q*n)-th smallest value, clamped to the
// recorded minimum and maximum. Quantiles are therefore monotonic in q.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.999999)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += uint64(c)
		if seen >= rank {
			v := min(max(bucketHigh(i), h.min), h.max)
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}

func (h *histogram) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / h.n)
}

// Latency summarises a latency distribution, in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func (h *histogram) summary() Latency {
	if h.n == 0 {
		return Latency{}
	}
	return Latency{
		P50: ms(h.quantile(0.50)), P90: ms(h.quantile(0.90)), P99: ms(h.quantile(0.99)),
		Max: ms(time.Duration(h.max)), Mean: ms(h.mean()), Min: ms(time.Duration(h.min)),
	}
}
