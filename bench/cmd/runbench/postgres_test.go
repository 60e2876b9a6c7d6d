//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/bench"
)

func testDB() *pgDB { return &pgDB{base: "postgres://u@h/db?sslmode=disable", run: "t"} }

// TestPostgresTargets checks the wiring of the PostgreSQL targets: one
// exclusive serve on a schema of its own; three replicas on another,
// behind nginx, the schema emptied once before they start.
func TestPostgresTargets(t *testing.T) {
	byKey := map[string]*target{}
	for _, tg := range targets("/b", "/bin", "/data", testDB()) {
		byKey[tg.key] = tg
	}
	for _, k := range []string{"postgres", "postgres-v1", "postgres-rest", "postgres-3", "postgres-3-v1", "postgres-3-rest"} {
		if tg := byKey[k]; tg == nil || !tg.ours || tg.path != "/a2a/echo" {
			t.Fatalf("target %s: %+v", k, tg)
		}
	}
	one := byKey["postgres"].srv
	if one.pg == nil || one.reset != one.pg || slices.Contains(one.argv, "--replica") || one.replicas != nil || one.needs != "" {
		t.Errorf("postgres server: %+v", one)
	}
	three := byKey["postgres-3"].srv
	if three.needs != "nginx" || three.reset == nil || three.pg != nil || len(three.replicas) != 3 {
		t.Fatalf("postgres-3 server: %+v", three)
	}
	if three.reset.name == one.pg.name || three.reset.app == one.pg.app {
		t.Errorf("postgres and postgres-3 share schema %s", one.pg.name)
	}
	for _, r := range three.replicas {
		if r.pg != three.reset || r.reset != nil || !slices.Contains(r.argv, "--replica") || strings.Join(r.argv[len(r.argv)-2:], " ") != "--lease 30s" {
			t.Errorf("replica %s: %+v", r.key, r)
		}
	}
	dsn := one.pg.dsn()
	if !strings.HasPrefix(dsn, "postgres://u@h/db?sslmode=disable&search_path=a2abridge_bench_t_1&application_name=a2abridge-bench-t-1") {
		t.Errorf("dsn %s", dsn)
	}
	if got, _ := selectTargets(targets("/b", "/bin", "/data", testDB()), "postgres"); len(got) != 3 || got[0].key != "postgres" || got[2].key != "postgres-rest" {
		t.Errorf("--targets postgres: %d targets", len(got))
	}
	if got, _ := selectTargets(targets("/b", "/bin", "/data", testDB()), "postgres-3"); len(got) != 3 || got[0].key != "postgres-3" {
		t.Errorf("--targets postgres-3: %d targets", len(got))
	}
}

func TestWithParams(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u@h/db", "postgres://u@h/db?search_path=s&application_name=a%20b"},
		{"postgresql://u@h/db?sslmode=disable", "postgresql://u@h/db?sslmode=disable&search_path=s&application_name=a%20b"},
		{"host=h dbname=db", "host=h dbname=db search_path=s application_name=a b"},
	} {
		if got := withParams(tc.in, "search_path", "s", "application_name", "a b"); got != tc.want {
			t.Errorf("withParams(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNginxConf(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "nginx-replicas.conf"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := string(b)
	conf := nginxConf(tmpl, "/tmp/d", "127.0.0.1:9000", []string{"127.0.0.1:1", "127.0.0.1:2"}, true)
	for _, want := range []string{
		"user root;\n", "daemon off;\n", "pid /tmp/d/nginx.pid;\n", "error_log /tmp/d/error.log warn;\n",
		"    server 127.0.0.1:1 max_fails=1 fail_timeout=5s;\n    server 127.0.0.1:2 max_fails=1 fail_timeout=5s;\n    keepalive 64;\n",
		"listen 127.0.0.1:9000;", "proxy_http_version 1.1;", `proxy_set_header Connection "";`, "proxy_buffering off;", "proxy_read_timeout 1h;",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(nginxConf(tmpl, "/tmp/d", "127.0.0.1:9000", nil, false), "\nuser root;\n") {
		t.Error("user root when not root")
	}
}

func TestCPUDelta(t *testing.T) {
	ms := time.Millisecond
	if d, ok := cpuDelta(map[int]time.Duration{1: 10 * ms, 2: 5 * ms, 3: 7 * ms}, map[int]time.Duration{1: 30 * ms, 2: 6 * ms, 4: 3 * ms}); !ok || d != 24*ms {
		t.Errorf("cpuDelta = %v %v, want 24ms (20 + 1 + 3 of a new backend; an ended one lost)", d, ok)
	}
	if _, ok := cpuDelta(nil, map[int]time.Duration{1: ms}); ok {
		t.Error("a failed reading is known")
	}
}

func TestLatencyOf(t *testing.T) {
	var v []float64
	for i := 100; i >= 1; i-- {
		v = append(v, float64(i))
	}
	v = append(v, -1)
	l := latencyOf(v)
	if l.P50 != 50 || l.P90 != 90 || l.P99 != 99 || l.Max != 100 || l.Min != -1 {
		t.Errorf("latencyOf: %+v", l)
	}
}

func TestTickerConfig(t *testing.T) {
	got := tickerConfig("/x/bin", 100, 10*time.Millisecond)
	want := "agents:\n  ticker:\n    kind: exec\n    description: Writes 100 lines, one every 10ms, after half a second\n    command: [\"/x/bin/ticker\", \"-n\", \"100\", \"-every\", \"10ms\", \"-delay\", \"500ms\"]\n    timeout: 0s\n"
	if got != want {
		t.Errorf("tickerConfig:\n%s\nwant\n%s", got, want)
	}
}

func pgSample(rps, p50 float64, srvUS, dbUS, proxyUS int) sample {
	n := int64(rps)
	return sample{
		res:    &bench.Result{Throughput: rps, Requests: n, Elapsed: 1, Latency: bench.Latency{P50: p50, P99: 4 * p50}},
		srvCPU: time.Duration(n*int64(srvUS)) * time.Microsecond, cliCPU: time.Duration(n) * 20 * time.Microsecond,
		dbCPU: time.Duration(n*int64(dbUS)) * time.Microsecond, dbKnown: true, proxyCPU: time.Duration(n*int64(proxyUS)) * time.Microsecond,
	}
}

func TestRenderPostgres(t *testing.T) {
	all, _ := selectTargets(targets("/b", "/bin", "/data", testDB()), "baseline,sqlite,postgres,postgres-replica,postgres-3")
	scen := []scenario{
		{key: "send", title: "send", mode: bench.ModeSend, conc: 32},
		{key: "stream", title: "stream", mode: bench.ModeStream, conc: 32},
		{key: "send1", title: "send1", mode: bench.ModeSend, conc: 1},
	}
	s := map[string]map[string][]sample{
		"send": {"baseline": {fake(20000, 0.5)}, "sqlite": {fake(6000, 3)},
			"postgres":         {pgSample(4000, 8, 250, 500, 0), pgSample(4200, 8, 270, 500, 0), pgSample(4100, 8, 260, 500, 0)},
			"postgres-3":       {pgSample(3000, 10, 280, 600, 40), pgSample(3100, 10, 300, 600, 40), pgSample(2900, 10, 290, 600, 40)},
			"postgres-replica": {pgSample(3300, 9, 270, 580, 30)},
			"postgres-v1":      {pgSample(1000, 8, 250, 500, 0)}, "baseline-v1": {fake(20000, 0.5)}},
		"stream": {"baseline": {fake(25000, 1)}, "postgres": {pgSample(1800, 14, 300, 520, 0)}, "postgres-3": {pgSample(1500, 19, 420, 650, 50)}},
		"send1": {"baseline": {fake(9000, 0.1)}, "postgres": {pgSample(770, 1.2, 400, 550, 0)}, "postgres-3": {pgSample(300, 2.3, 1200, 1200, 70)},
			"postgres-replica": {pgSample(700, 1.4, 400, 560, 30)}},
	}
	cross := &crossReport{replicas: 3, tasks: 3, every: 10 * time.Millisecond, perTask: 100, delays: []float64{0.4, 0.5, 0.6, -0.01}, onA: 310, onB: 308, finalOnB: 3, negatives: 1}
	cross.lat = latencyOf(cross.delays)
	out := render(config{rounds: 3, duration: 3 * time.Second, warmup: time.Second, fresh: true, maxOther: 0.15}, environment{ncpu: 2, postgres: "PostgreSQL 15.20 (fsync on, synchronous_commit on)"}, all, all, scen, s, nil, cross)
	for _, want := range []string{
		"- **Database:** PostgreSQL 15.20 (fsync on, synchronous_commit on), on the same machine",
		"## PostgreSQL: one replica, and three behind nginx",
		"| send | **a2abridge** (PostgreSQL) | 0.3 JSON-RPC | 4100 [4000–4200] | 8.00ms | 32.0ms | 0.20× | 260 µs [250–270] | 500 µs | – | 760 µs | 20 µs |",
		"| send | **a2abridge** (PostgreSQL, 3 replicas behind nginx) | 0.3 JSON-RPC | 3000 [2900–3100] | 10.0ms | 40.0ms | 0.15× | 290 µs [280–300] | 600 µs | 40 µs | 930 µs | 20 µs |",
		"| send | **a2abridge** (SQLite) | 0.3 JSON-RPC | 6000 [6000–6000] | 3.00ms | 12.0ms | 0.30× | 50 µs [50–50] | – | – | 50 µs |",
		"### A stream on replica B for a task running on replica A",
		"| 4 (of 310 on A, 308 on B) | **400µs** | 600µs | 600µs | 600µs | −10µs (372µs) | 1 | 0 | 0 | 3 of 3 |",
		"## Targets: PostgreSQL and replicas",
		"| durable message/send, PostgreSQL, one replica | ≥ 0.20× baseline | 0.20× | yes |",
		"| durable 1.0 JSON-RPC SendMessage, PostgreSQL, one replica | ≥ 0.20× baseline (no target; for reference) | 0.05× (0.05× the 0.3 JSON-RPC baseline) | no |",
		"| a2abridge CPU per message/send (32 clients), three replicas vs one (both `--replica`, behind nginx) | ≤ 1.15× one replica's | 290 vs 270 µs/req: 1.07× (rounds 280–300 vs 270–270 µs; 3000 vs 3300 req/s) | yes |",
		"| a2abridge CPU per message/send at 1 client, three replicas vs one (both `--replica`) | ≤ 1.15× one replica's (no target; for reference) | 1200 vs 400 µs/req: 3.00× (rounds 1200–1200 vs 400–400 µs; 300 vs 700 req/s) | no |",
		"| a2abridge CPU per message/send (32 clients), three replicas vs one `serve --postgres` (the schema to itself: appends queued, one statement per send) | reported (no target; for reference) | 290 vs 260 µs/req: 1.12× (rounds 280–300 vs 250–270 µs; 3000 vs 4100 req/s) | – |",
		"| send | **a2abridge** (PostgreSQL, 1 replica behind nginx) | 0.3 JSON-RPC | 3300 [3300–3300] |",
		"| message/send throughput (32 clients), three replicas behind nginx vs one | reported, no goal | 3000 vs 4100 req/s: 0.73× (2 cores: no scaling expected) | – |",
		"| stream on replica B, task running on replica A: delay of each event | p50 ≤ 5 ms | p50 400µs, p99 600µs (4 events) | yes |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "1.0 REST message:send (32 clients), three replicas") {
		t.Error("a CPU row for targets without figures")
	}

	// Not measured: no PostgreSQL.
	out = render(config{rounds: 1, fresh: true}, environment{ncpu: 2}, all, all[:3], scen, s, nil, &crossReport{err: "PostgreSQL is not reachable"})
	for _, want := range []string{
		"### A stream on replica B for a task running on replica A\n\nNot measured: PostgreSQL is not reachable",
		"| durable message/send, PostgreSQL, one replica | ≥ 0.20× baseline | – | not measured |",
		"| stream on replica B, task running on replica A: delay of each event | p50 ≤ 5 ms | – | not measured |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestSchema runs against the PostgreSQL of $A2ABRIDGE_TEST_POSTGRES (or
// the local default), skipped when it cannot be reached: a schema is
// created empty, reset, and dropped.
func TestSchema(t *testing.T) {
	base := os.Getenv("A2ABRIDGE_TEST_POSTGRES")
	if base == "" {
		base = defaultPostgres
	}
	db := &pgDB{base: base, run: runID()}
	ctx := context.Background()
	if err := db.open(ctx); err != nil {
		t.Skip(err)
	}
	defer db.close()
	s := newSchema(db, "test")
	defer func() { _ = s.drop() }()
	exists := func() bool {
		var n int
		db.mu.Lock()
		defer db.mu.Unlock()
		if err := db.conn.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", s.name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	for range 2 {
		if err := s.reset(ctx); err != nil || !exists() {
			t.Fatalf("reset: %v, exists %v", err, exists())
		}
		if err := db.exec(ctx, "CREATE TABLE "+s.name+".t (x int)"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.drop(); err != nil || exists() {
		t.Fatalf("drop: %v, exists %v", err, exists())
	}
	if s.backendCPU(ctx) != nil {
		t.Error("backends of a schema nobody uses")
	}
	if db.about == "" {
		t.Error("no version")
	}
}
