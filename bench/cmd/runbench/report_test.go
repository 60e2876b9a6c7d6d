//go:build linux

package main

import (
	"slices"
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
	all := targets("/b", "/bin", "/data", &pgDB{base: "postgres://u@h/db?sslmode=disable", run: "t"})
	var live []*target
	for _, tg := range all {
		if tg.srv.key == "jsv1" {
			tg.skip = "node is not installed"
		} else {
			live = append(live, tg)
		}
	}
	scen := []scenario{
		{key: "send", title: "send", mode: bench.ModeSend, conc: 32},
		{key: "stream", title: "stream", mode: bench.ModeStream, conc: 32},
		{key: "send1", title: "send1", mode: bench.ModeSend, conc: 1},
	}
	s := map[string]map[string][]sample{
		"send": {"baseline": {fake(40000, 0.5), fake(44000, 0.5), fake(42000, 0.5)}, "baseline-v1": {fake(40000, 0.5)}, "baseline-rest": {fake(30000, 0.5)},
			"memory": {fake(26000, 1)}, "memory-v1": {fake(24000, 1)}, "memory-rest": {fake(25000, 1)}, "sqlite": {fake(12000, 3)}, "sqlite-v1": {fake(11900, 3)},
			"a2ago": {fake(2000, 10)}, "trpc": {fake(20000, 1)}, "a2agov2": {fake(21000, 1)}, "a2agov2-rest": {fake(5000, 1)},
			"bridge-a2a": {fake(10400, 2)}, "bridge-http": {fake(13000, 2)}, "relay": {fake(18000, 1.5)}},
		"stream": {"baseline": {fake(25000, 1)}, "memory": {fake(15000, 2)}, "memory-v1": {fake(16000, 2)}, "memory-rest": {fake(14000, 2)},
			"trpc": {fake(10000, 2)}, "a2ago": {fake(2000, 10)}},
		"send1": {"baseline": {fake(9000, 0.1)}, "memory": {fake(7000, 0.2)}, "baseline-v1": {fake(9000, 0.1)}, "memory-v1": {fake(7000, 0.12)},
			"bridge-a2a": {fake(3000, 0.4)}, "bridge-http": {fake(4000, 0.3)}, "relay": {fake(5000, 0.33)}},
	}
	idle := []*idleReport{
		{proto: "0.3 JSON-RPC", via: "`tasks/resubscribe`", requested: 10000, opened: 10000, openAtEnd: 10000, held: 10, rssBefore: 10 << 10, rssHeld: 10<<10 + 150000, rssPeak: 10<<10 + 160000},
		{proto: "1.0 REST", err: "no stream could be opened"},
	}
	out := render(config{rounds: 3, duration: 3 * time.Second, warmup: time.Second, fresh: true, maxOther: 0.15}, environment{ncpu: 2}, all, live, scen, s, idle, nil)
	for _, want := range []string{
		"**Not measured:** @a2a-js/sdk 1.3.0 over 1.0 JSON-RPC: node is not installed",
		"**Not measured:** @a2a-js/sdk 1.3.0 over 1.0 REST: node is not installed",
		"| net/http baseline | 0.3 JSON-RPC | 42000 [40000–44000] |",
		"| **a2abridge** (memory) | 0.3 JSON-RPC | 26000 [26000–26000] | 1.00ms | 4.00ms | 0.62× | 1.24× | 50 µs | 20 µs | 91% | 0% | 0 |",
		"| **a2abridge** (memory) | 1.0 REST | 25000 [25000–25000] | 1.00ms | 4.00ms | 0.83× | 1.19× |",
		"| a2a-go v2.4.0 | 1.0 JSON-RPC | 21000 [21000–21000] | 1.00ms | 4.00ms | 0.53× | 1.00× (best peer) |",
		"| a2a-go v2.4.0 | 1.0 REST | 5000 [5000–5000] | 1.00ms | 4.00ms | 0.17× | 0.24× |",
		"| **a2abridge** (memory) | 1.0 JSON-RPC | 120µs | 480µs | 1.20× | 7000 |",
		"## 10000 idle SSE streams on a2abridge, 0.3 JSON-RPC",
		"10000 `tasks/resubscribe` streams opened on it",
		"## 0 idle SSE streams on a2abridge, 1.0 REST\n\nNot measured: no stream could be opened",
		"| message/send, memory store | ≥ 0.60× baseline | 0.62× | yes |",
		"| message/send, memory store | ahead of every peer | 1.24× the best peer (a2a-go v2.4.0, 1.0 JSON-RPC) | yes |",
		"| message/send, SQLite store | ≥ 0.25× baseline | 0.29× | yes |",
		"| message/stream round trips, memory store | ≥ 1.5× best peer | 1.50× the best peer (trpc-a2a-go v0.2.5, 0.3 JSON-RPC) | yes |",
		"| 10000 idle SSE streams, 0.3 JSON-RPC | < 20 KiB per stream | 15.0 KiB per stream (10000 open) | yes |",
		"| 0 idle SSE streams, 1.0 REST | < 20 KiB per stream | – | not measured |",
		"| message/send p50 at 1 client, memory store | ≤ 1.5× baseline p50 | 200µs vs 100µs: 2.00× | no |",
		"| 1.0 JSON-RPC SendMessage, memory store | ≥ 0.95× 0.3 message/send | 24000 vs 26000 req/s: 0.92× (server CPU 50 vs 50 µs/req) | no |",
		"| 1.0 JSON-RPC SendMessage, SQLite store | ≥ 0.95× 0.3 message/send (no target; for reference) | 11900 vs 12000 req/s: 0.99× (server CPU 50 vs 50 µs/req) | yes |",
		"| 1.0 JSON-RPC SendMessage, memory store | ≥ 0.60× baseline | 0.60× (0.57× the 0.3 JSON-RPC baseline) | yes |",
		"| 1.0 JSON-RPC SendMessage, memory store | ahead of every peer | 1.14× the best peer (a2a-go v2.4.0, 1.0 JSON-RPC) | yes |",
		"| 1.0 JSON-RPC SendStreamingMessage round trips, memory store | ≥ 1.5× best peer | 1.60× the best peer (trpc-a2a-go v0.2.5, 0.3 JSON-RPC) | yes |",
		"| 1.0 REST message:stream round trips, memory store | ≥ 1.5× best peer | 1.40× the best peer (trpc-a2a-go v0.2.5, 0.3 JSON-RPC) | no |",
		"| 1.0 REST message:send, memory store | ≥ 0.60× baseline (no target; for reference) | 0.83× (0.60× the 0.3 JSON-RPC baseline) | yes |",
		"## Targets: bridging",
		"| message/send, 32 clients: `a2a` agent in front of a2abridge echo | ≥ 0.45× the direct call | 10400 vs 26000 req/s: 0.40× (server CPU 50 vs 50 µs/req) | no |",
		"| message/send p50 at 1 client: `a2a` agent in front of a2abridge echo | ≤ direct p50 + 150 µs | 400µs vs 200µs: +200 µs (server CPU 50 vs 50 µs/req) | no |",
		"| message/send, 32 clients: `http` agent in front of a simple-dialect Go backend | ≥ 0.45× the direct call | 13000 vs 26000 req/s: 0.50× (server CPU 50 vs 50 µs/req) | yes |",
		"| message/send p50 at 1 client: `http` agent in front of a simple-dialect Go backend | ≤ direct p50 + 150 µs | 300µs vs 200µs: +100 µs (server CPU 50 vs 50 µs/req) | yes |",
		"| **a2abridge** `http` bridge → simple-dialect Go backend | 0.3 JSON-RPC | 13000 [13000–13000] |",
		"| message/send, 32 clients: a reverse proxy that only forwards, in front of a2abridge echo | ≥ 0.45× the direct call (no target; for reference) | 18000 vs 26000 req/s: 0.69× (server CPU 50 vs 50 µs/req) | yes |",
		"| message/send p50 at 1 client: a reverse proxy that only forwards, in front of a2abridge echo | ≤ direct p50 + 150 µs (no target; for reference) | 330µs vs 200µs: +130 µs (server CPU 50 vs 50 µs/req) | yes |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestSelectTargets(t *testing.T) {
	all := targets("/b", "/bin", "/data", &pgDB{base: "postgres://u@h/db?sslmode=disable", run: "t"})
	keys := func(ts []*target) string {
		var k []string
		for _, t := range ts {
			k = append(k, t.key)
		}
		return strings.Join(k, ",")
	}
	for only, want := range map[string]string{
		"":                              keys(all),
		"jsv1-rest,memory":              "memory,memory-v1,memory-rest,memory-grpc,jsv1-rest",
		"memory,bridge-a2a,bridge-http": "memory,memory-v1,memory-rest,memory-grpc,bridge-a2a,bridge-http",
		"baseline-v1,a2agov2":           "baseline-v1,a2agov2,a2agov2-rest,a2agov2-grpc",
		"sqlite-rest,sqlite-rest":       "sqlite-rest",
	} {
		got, err := selectTargets(all, only)
		if err != nil || keys(got) != want {
			t.Errorf("--targets %q: %s %v, want %s", only, keys(got), err, want)
		}
	}
	if _, err := selectTargets(all, "memory,soap"); err == nil || !strings.Contains(err.Error(), `"soap"`) {
		t.Errorf("an unknown target: %v", err)
	}
}

// TestBridgeTargets checks the bridge servers' wiring: the backend is a
// server of its own, the config names it, the target is compared with the
// direct memory target over the same protocol and binding.
func TestBridgeTargets(t *testing.T) {
	byKey := map[string]*target{}
	for _, tg := range targets("/b", "/bin", "/data", &pgDB{base: "postgres://u@h/db?sslmode=disable", run: "t"}) {
		byKey[tg.key] = tg
	}
	for key, want := range map[string]string{
		"bridge-a2a":  "kind: a2a\n    url: http://127.0.0.1:9/a2a/echo\n",
		"bridge-http": "kind: http\n    url: http://127.0.0.1:9/echo\n",
	} {
		tg := byKey[key]
		if tg == nil {
			t.Fatalf("no target %s", key)
		}
		d := byKey[tg.direct]
		if d == nil || d.srv.key != "memory" || d.protocol != tg.protocol || d.binding != tg.binding {
			t.Errorf("%s: direct target %q is not a2abridge (memory) over the same protocol and binding", key, tg.direct)
		}
		if tg.srv.backend == nil || tg.srv.config == nil {
			t.Fatalf("%s: no backend or no config", key)
		}
		conf := tg.srv.config("http://127.0.0.1:9")
		if !strings.Contains(conf, "default: bridged\n") || !strings.Contains(conf, "builtins: false\n") || !strings.Contains(conf, want) || tg.path != "/a2a/bridged" {
			t.Errorf("%s: config\n%s\npath %s", key, conf, tg.path)
		}
	}
}

// TestRelayTarget: the reference relay forwards to a2abridge (memory),
// named by --backend, and is compared with the direct call.
func TestRelayTarget(t *testing.T) {
	all, err := selectTargets(targets("/b", "/bin", "/data", &pgDB{base: "postgres://u@h/db?sslmode=disable", run: "t"}), "relay")
	if err != nil || len(all) != 1 {
		t.Fatalf("--targets relay: %d targets, %v", len(all), err)
	}
	tg := all[0]
	if tg.direct != "memory" || tg.peer || tg.ours || tg.path != "/a2a/echo" {
		t.Errorf("relay target: %+v", tg)
	}
	s := tg.srv
	if s.backendFlag != "--backend" || s.backend == nil || !slices.Contains(s.backend.argv, "--memory") || s.config != nil {
		t.Errorf("relay server: %+v, backend %+v", s, s.backend)
	}
}

// TestPairedRatio: the ratio of two targets is taken round by round (a
// round the whole machine was slower in does not count against one of
// them), over the rounds that measured both.
func TestPairedRatio(t *testing.T) {
	at := func(round int, rps float64) sample { s := fake(rps, 1); s.round = round; return s }
	// Round 1 is slow for both; round 2 failed for a.
	a := []sample{at(0, 960), at(1, 480), at(3, 990)}
	b := []sample{at(0, 1000), at(1, 500), at(2, 1000), at(3, 1000)}
	med, lo, hi, n := pairedRatio(a, b)
	if n != 3 || med != 0.96 || lo != 0.96 || hi != 0.99 {
		t.Fatalf("pairedRatio = %v %v %v %d, want 0.96 0.96 0.99 3", med, lo, hi, n)
	}
	if _, _, _, n := pairedRatio(a, nil); n != 0 {
		t.Fatalf("no rounds in common: n = %d", n)
	}
}
