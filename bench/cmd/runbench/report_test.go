//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/bench"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func fake(rps, p50 float64) sample {
	return sample{
		res:    &bench.Result{Throughput: rps, Requests: int64(rps), Elapsed: 1, Latency: bench.Latency{P50: p50, P99: 4 * p50}},
		srvCPU: time.Duration(rps) * 50 * time.Microsecond, cliCPU: time.Duration(rps) * 20 * time.Microsecond,
	}
}

func TestRender(t *testing.T) {
	all := targets("/b", "/bin", "/data")
	all[5].skip = "node is not installed"
	live := all[:5]
	scen := []scenario{
		{key: "send", title: "send", mode: bench.ModeSend, conc: 32},
		{key: "stream", title: "stream", mode: bench.ModeStream, conc: 32},
		{key: "send1", title: "send1", mode: bench.ModeSend, conc: 1},
	}
	s := map[string]map[string][]sample{
		"send": {"baseline": {fake(40000, 0.5), fake(44000, 0.5), fake(42000, 0.5)}, "memory": {fake(26000, 1)}, "sqlite": {fake(12000, 3)},
			"a2ago": {fake(2000, 10)}, "trpc": {fake(20000, 1)}},
		"stream": {"baseline": {fake(25000, 1)}, "memory": {fake(15000, 2)}, "trpc": {fake(10000, 2)}, "a2ago": {fake(2000, 10)}},
		"send1":  {"baseline": {fake(9000, 0.1)}, "memory": {fake(7000, 0.2)}},
	}
	idle := &idleReport{requested: 10000, opened: 10000, openAtEnd: 10000, held: 10, rssBefore: 10 << 10, rssHeld: 10<<10 + 150000, rssPeak: 10<<10 + 160000}
	out := render(config{rounds: 3, duration: 3 * time.Second, warmup: time.Second, fresh: true, maxOther: 0.15}, environment{ncpu: 2}, all, live, scen, s, idle)
	for _, want := range []string{
		"**Not measured:** @a2a-js/sdk 0.3.14: node is not installed",
		"| net/http baseline | 42000 [40000–44000] |",
		"| **a2abridge** (memory) | 26000 [26000–26000] | 1.00ms | 4.00ms | 0.62× | 1.30× | 50 µs | 20 µs | 91% | 0% | 0 |",
		"| trpc-a2a-go v0.2.5 | 20000 [20000–20000] | 1.00ms | 4.00ms | 0.48× | 1.00× (best peer) |",
		"| message/send, memory store | ≥ 0.60× baseline | 0.62× | yes |",
		"| message/send, memory store | ahead of every peer | 1.30× the best peer (trpc-a2a-go v0.2.5) | yes |",
		"| message/send, SQLite store | ≥ 0.25× baseline | 0.29× | yes |",
		"| message/stream round trips, memory store | ≥ 1.5× best peer | 1.50× trpc-a2a-go v0.2.5 | yes |",
		"| 10000 idle SSE streams | < 20 KiB per stream | 15.0 KiB per stream (10000 open) | yes |",
		"| message/send p50 at 1 client, memory store | ≤ 1.5× baseline p50 | 200µs vs 100µs: 2.00× | no |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
