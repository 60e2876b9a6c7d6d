//go:build linux

// Command runbench is the side-by-side benchmark of a2abridge against the
// peer A2A SDKs. From bench/:
//
//	go run ./cmd/runbench
//
// It builds `a2abridge` and the peer servers (servers/: a plain net/http
// baseline; the A2A 0.3 peers a2a-go v0.3.15, trpc-a2a-go v0.2.5,
// @a2a-js/sdk 0.3.14; the A2A 1.0 peers a2a-go v2.4.0 and @a2a-js/sdk
// 1.3.0), each hosting the same echo agent; starts them all on 127.0.0.1
// free ports, together with `a2abridge serve --memory` and `a2abridge
// serve --data DIR` (SQLite). Every server is a target once per protocol
// version and binding it offers: a2abridge and the baseline over A2A 0.3
// JSON-RPC, A2A 1.0 JSON-RPC and A2A 1.0 HTTP+JSON (REST); the 0.3 peers
// over 0.3 JSON-RPC; the 1.0 peers over 1.0 JSON-RPC and REST; and the
// bridges over 0.3 JSON-RPC: `a2abridge serve --memory` with
// an agent of kind a2a in front of a second a2abridge's echo (bridge-a2a),
// and one of kind http in front of servers/simplebackend (bridge-http),
// each compared with the direct call, and for reference servers/relay (a
// relay that only forwards) in front of a2abridge; and the PostgreSQL
// targets (postgres.go): `a2abridge serve --postgres DSN`,
// and three `serve --replica` on one schema behind nginx, with the
// latency of events between replicas (cross.go). It checks that each
// target answers like an echo agent (bench.Verify), then
// measures them alternately, round after round, with one load generator
// (internal/bench, the engine of `a2abridge bench`, in this process):
//
//   - message/send (1.0: SendMessage), 32 concurrent clients;
//   - message/stream (1.0: SendStreamingMessage) full round trips, 32
//     concurrent clients;
//   - message/send (1.0: SendMessage), 1 client (latency);
//   - a2abridge only, over each of its bindings: 10,000 idle SSE streams
//     held on one long-running task with keep-alives every second, and the
//     server's resident memory before and with them (VmRSS).
//
// It prints a Markdown report (medians of the rounds, ratios against the
// baseline of the same protocol and binding and against the best peer,
// server CPU per request, the machine, each goal of the targets (A2A
// 0.3, A2A 1.0, bridging, telemetry, PostgreSQL and replicas) with met or
// missed) and writes it to RESULTS.md. Linux only (/proc).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/a2abridge/a2abridge/internal/bench"
)

type config struct {
	rounds      int
	duration    time.Duration
	warmup      time.Duration
	concurrency int
	payload     int
	idleStreams int
	idleHold    time.Duration
	only        string
	out         string
	keep        bool
	maxOther    float64
	fresh       bool
	strict      bool
	postgres    string        // the database of the PostgreSQL targets
	crossEvents int           // events of the cross-replica latency measurement (0: skip)
	crossEvery  time.Duration // time between two of them
}

// scenario is one measured workload.
type scenario struct {
	key   string
	title string
	mode  bench.Mode
	conc  int
}

// sample is one measurement of one target in one scenario.
type sample struct {
	round          int // 0, 1, …: which round measured it
	res            *bench.Result
	srvCPU, cliCPU time.Duration
	// proxyCPU is the CPU time of the proxy in front of replicas (nginx).
	proxyCPU time.Duration
	// dbCPU is the CPU time of the PostgreSQL backends serving the
	// server's sessions, when dbKnown (a PostgreSQL target, on this
	// machine).
	dbCPU   time.Duration
	dbKnown bool
	// otherCPU is the CPU time of everything else on the machine during
	// the window (other processes disturb the measurement).
	otherCPU time.Duration
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 3, "rounds: every target is measured once per scenario per round, alternately")
	flag.DurationVar(&c.duration, "duration", 3*time.Second, "measured time of each measurement")
	flag.DurationVar(&c.warmup, "warmup", time.Second, "warmup before each measurement (not counted)")
	flag.IntVar(&c.concurrency, "concurrency", 32, "clients of the throughput scenarios")
	flag.IntVar(&c.payload, "payload", 16, "bytes of text in each message")
	flag.IntVar(&c.idleStreams, "idle-streams", 10000, "idle SSE streams held on a2abridge (0: skip)")
	flag.DurationVar(&c.idleHold, "idle-hold", 10*time.Second, "how long the idle streams are held")
	flag.StringVar(&c.only, "targets", "", "comma-separated subset of servers (baseline,memory,sqlite,postgres,postgres-3,relay,bridge-a2a,bridge-http,telemetry,telemetry-all,a2ago,trpc,js,a2agov2,jsv1: each over every binding it offers) or targets (memory-v1, memory-rest, jsv1-rest, …) (default all)")
	flag.StringVar(&c.out, "out", "RESULTS.md", "file the report is written to (empty: none)")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binaries, server logs, SQLite database)")
	flag.BoolVar(&c.fresh, "fresh", true, "restart every server (with an empty store) before each of its measurements; false keeps them running, so in-memory stores grow through the run")
	flag.BoolVar(&c.strict, "strict", false, "exit with status 1 when a target could not be measured (it did not start, failed the echo check, or a measurement failed or counted errors), after the report")
	flag.Float64Var(&c.maxOther, "max-other-load", 0.15, "repeat a measurement (twice at most, keeping the least disturbed) when other processes used more than this share of the cores")
	pgDefault := os.Getenv("A2ABRIDGE_TEST_POSTGRES")
	if pgDefault == "" {
		pgDefault = defaultPostgres
	}
	flag.StringVar(&c.postgres, "postgres", pgDefault, "database of the PostgreSQL targets (postgres, postgres-3): each gets a schema of its own, dropped at the end (default $A2ABRIDGE_TEST_POSTGRES, else the local database test)")
	flag.IntVar(&c.crossEvents, "cross-events", 300, "with postgres-3: events of the cross-replica latency measurement, over three tasks (0: skip it)")
	flag.DurationVar(&c.crossEvery, "cross-interval", 10*time.Millisecond, "time between two events of the cross-replica latency measurement")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runAll(ctx, c, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "runbench:", err)
		os.Exit(1)
	}
}

func runAll(ctx context.Context, c config, stdout, stderr io.Writer) error {
	benchDir, err := os.Getwd()
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(benchDir, "go.mod")); err != nil || !strings.Contains(string(b), "module github.com/a2abridge/a2abridge/bench\n") {
		return fmt.Errorf("run it from the bench/ directory: cd bench && go run ./cmd/runbench")
	}
	nginxTemplate = filepath.Join(filepath.Dir(benchDir), "testdata", "nginx-replicas.conf")
	nofile, err := raiseFileLimit()
	if err != nil {
		return fmt.Errorf("raise RLIMIT_NOFILE: %w", err)
	}
	if c.idleStreams > 0 && uint64(c.idleStreams)+512 > nofile {
		fmt.Fprintf(stderr, "open-file limit is %d: holding %d idle streams instead of %d\n", nofile, nofile-512, c.idleStreams)
		c.idleStreams = int(nofile) - 512
	}
	tmp, err := os.MkdirTemp("", "a2abridge-bench-")
	if err != nil {
		return err
	}
	if c.keep {
		fmt.Fprintln(stderr, "keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	bin := filepath.Join(tmp, "bin")
	db := &pgDB{base: c.postgres, run: runID()}
	defer db.close()
	all, err := selectTargets(targets(benchDir, bin, filepath.Join(tmp, "sqlite"), db), c.only)
	if err != nil {
		return err
	}
	servers := serversOf(all)
	if err := build(benchDir, bin, stderr, servers); err != nil {
		return err
	}
	// The PostgreSQL targets: the database must answer; their schemas are
	// dropped at the end.
	cross := c.crossEvents > 0 && slices.ContainsFunc(servers, func(s *server) bool { return len(s.replicas) > 0 })
	var crossSkip string
	if slices.ContainsFunc(servers, func(s *server) bool { return s.reset != nil && s.skip == "" }) || cross {
		if err := db.open(ctx); err != nil {
			crossSkip = err.Error()
			for _, s := range servers {
				if s.reset != nil && s.skip == "" {
					s.skip = err.Error()
				}
			}
		}
		for _, s := range servers {
			if s.reset != nil {
				defer func() { _ = s.reset.drop() }()
			}
		}
	}

	// Start everything, check each target answers like an echo agent.
	for _, s := range servers {
		if s.skip != "" {
			continue
		}
		if err := s.start(ctx, tmp); err != nil {
			s.skip = err.Error()
			continue
		}
		defer s.stop()
	}
	for _, t := range all {
		if t.skip = t.srv.skip; t.skip != "" {
			continue
		}
		if err := bench.Verify(ctx, bench.Options{URL: t.url(), Protocol: t.protocol, Binding: t.binding, Tenant: t.tenant, Payload: c.payload}); err != nil {
			t.skip = "failed the echo check over " + t.proto() + ": " + err.Error()
			continue
		}
		fmt.Fprintf(stderr, "%-24s %s %s (%s)\n", t.key, t.proto(), t.url(), t.srv.pids())
	}
	live := slices.DeleteFunc(slices.Clone(all), func(t *target) bool { return t.skip != "" })
	for _, t := range all {
		if t.skip != "" {
			fmt.Fprintf(stderr, "%-24s SKIPPED: %s\n", t.key, t.skip)
		}
	}
	if len(live) == 0 {
		return fmt.Errorf("no target could be started")
	}

	scenarios := []scenario{
		{key: "send", title: fmt.Sprintf("message/send (1.0: SendMessage), %d concurrent clients", c.concurrency), mode: bench.ModeSend, conc: c.concurrency},
		{key: "stream", title: fmt.Sprintf("message/stream (1.0: SendStreamingMessage) full round trips, %d concurrent clients", c.concurrency), mode: bench.ModeStream, conc: c.concurrency},
		{key: "send1", title: "message/send (1.0: SendMessage), 1 client (latency)", mode: bench.ModeSend, conc: 1},
	}
	var failures []string // for --strict
	started := time.Now()
	env := machine(c, nofile)
	samples := map[string]map[string][]sample{} // scenario → target → rounds
	for _, s := range scenarios {
		samples[s.key] = map[string][]sample{}
	}
	for r := range c.rounds {
		for _, s := range scenarios {
			// Rotate the order each round so no target always follows the same one.
			order := slices.Clone(live)
			k := r % len(order)
			order = append(order[k:], order[:k]...)
			for _, t := range order {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				var sm sample
				var err error
				for try := 0; try < 3; try++ {
					var m sample
					if c.fresh {
						if err = t.srv.restart(ctx, tmp); err != nil {
							break
						}
					}
					if m, err = measure(ctx, c, s, t); err != nil {
						break
					}
					if try == 0 || m.otherLoad() < sm.otherLoad() {
						sm = m
					}
					if sm.otherLoad() <= c.maxOther {
						break
					}
					fmt.Fprintf(stderr, "round %d/%d  %-6s %-13s other processes used %.0f%% of the cores: measuring again\n", r+1, c.rounds, s.key, t.key, 100*m.otherLoad())
				}
				if err != nil {
					fmt.Fprintf(stderr, "round %d/%d  %-6s %-13s error: %v\n", r+1, c.rounds, s.key, t.key, err)
					failures = append(failures, fmt.Sprintf("%s %s: %v", s.key, t.key, err))
					continue
				}
				sm.round = r
				samples[s.key][t.key] = append(samples[s.key][t.key], sm)
				res := sm.res
				if res.Errors > 0 {
					failures = append(failures, fmt.Sprintf("%s %s: %d errors (first: %s)", s.key, t.key, res.Errors, res.FirstError))
				}
				fmt.Fprintf(stderr, "round %d/%d  %-6s %-13s %8.0f req/s  p50 %-7s p99 %-7s errors %d  server CPU %s/req  other load %.0f%%\n",
					r+1, c.rounds, s.key, t.key, res.Throughput, bench.FormatMS(res.Latency.P50), bench.FormatMS(res.Latency.P99),
					res.Errors, perReq(sm.srvCPU, res.Requests), 100*sm.otherLoad())
			}
		}
	}
	for _, s := range servers {
		s.stop()
	}

	// The cross-replica event latency, with postgres-3.
	var crossRep *crossReport
	switch {
	case !cross || ctx.Err() != nil:
	case crossSkip != "":
		crossRep = &crossReport{err: crossSkip}
		failures = append(failures, "cross-replica latency not measured: "+crossSkip)
	default:
		r, err := measureCross(ctx, c, bin, tmp, db, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "cross-replica latency: %v\n", err)
			r = &crossReport{err: err.Error()}
			failures = append(failures, fmt.Sprintf("cross-replica latency: %v", err))
		}
		crossRep = r
	}

	// Idle streams on a2abridge, over each of its bindings measured.
	var idle []*idleReport
	for _, t := range all {
		if c.idleStreams <= 0 || t.srv.key != "memory" || t.binding == bench.BindingGRPC || ctx.Err() != nil {
			continue
		}
		rep, err := measureIdle(ctx, c, bin, tmp, stderr, t)
		if err != nil {
			fmt.Fprintf(stderr, "idle streams over %s: %v\n", t.proto(), err)
			rep = &idleReport{proto: t.proto(), err: err.Error()}
			failures = append(failures, fmt.Sprintf("idle streams over %s: %v", t.proto(), err))
		}
		idle = append(idle, rep)
	}
	env.took = time.Since(started)

	env.postgres = db.about
	report := render(c, env, all, live, scenarios, samples, idle, crossRep)
	fmt.Fprint(stdout, report)
	if c.out != "" {
		if err := os.WriteFile(c.out, []byte(report), 0o644); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "wrote", c.out)
	}
	for _, t := range all {
		if t.skip != "" {
			failures = append(failures, fmt.Sprintf("%s not measured: %s", t.key, t.skip))
		}
	}
	if c.strict && len(failures) > 0 {
		return fmt.Errorf("--strict: %d problem(s):\n  %s", len(failures), strings.Join(failures, "\n  "))
	}
	return nil
}

// selectTargets keeps the targets --targets names, by target key or by
// server key (all of the server's targets); "" keeps all.
func selectTargets(all []*target, only string) ([]*target, error) {
	if only == "" {
		return all, nil
	}
	names := strings.Split(only, ",")
	named := func(t *target, name string) bool { return t.key == name || t.srv.key == name }
	for _, name := range names {
		if !slices.ContainsFunc(all, func(t *target) bool { return named(t, name) }) {
			var keys []string
			for _, t := range all {
				keys = append(keys, t.key)
			}
			return nil, fmt.Errorf("--targets: no target or server %q (targets: %s)", name, strings.Join(keys, ", "))
		}
	}
	return slices.DeleteFunc(slices.Clone(all), func(t *target) bool {
		return !slices.ContainsFunc(names, func(name string) bool { return named(t, name) })
	}), nil
}

// subscribeName is how t subscribes to a task.
func subscribeName(t *target) string {
	switch {
	case t.binding == bench.BindingREST:
		return "`POST /tasks/{id}:subscribe`"
	case t.protocol == bench.Protocol10:
		return "`SubscribeToTask`"
	}
	return "`tasks/resubscribe`"
}

// measure runs one scenario against one target, sampling the server's CPU
// time over the measured window.
func measure(ctx context.Context, c config, s scenario, t *target) (sample, error) {
	var sm sample
	var srv0, cli0, all0, prx0 time.Duration
	var db0 map[int]time.Duration
	res, err := bench.Run(ctx, bench.Options{
		URL: t.url(), Protocol: t.protocol, Binding: t.binding, Tenant: t.tenant, Mode: s.mode, Concurrency: s.conc, Duration: c.duration, Warmup: c.warmup, Payload: c.payload,
		OnStart: func() {
			db0 = t.srv.reset.backendCPU(ctx)
			srv0, _ = t.srv.cpu()
			prx0 = t.srv.proxyCPU()
			cli0, all0 = selfCPU(), machineBusy()
		},
		OnStop: func() {
			srv1, _ := t.srv.cpu()
			prx1 := t.srv.proxyCPU()
			cli1, all1 := selfCPU(), machineBusy()
			sm.srvCPU, sm.cliCPU, sm.proxyCPU = srv1-srv0, cli1-cli0, prx1-prx0
			sm.dbCPU, sm.dbKnown = cpuDelta(db0, t.srv.reset.backendCPU(ctx))
			sm.otherCPU = max(all1-all0-sm.srvCPU-sm.cliCPU-sm.proxyCPU-sm.dbCPU, 0)
		},
	})
	if err != nil {
		return sm, err
	}
	sm.res = res
	return sm, nil
}

// otherLoad is the share of the cores other processes used in the window.
func (s sample) otherLoad() float64 {
	if s.res == nil || s.res.Elapsed <= 0 {
		return 0
	}
	return s.otherCPU.Seconds() / s.res.Elapsed / float64(runtime.NumCPU())
}

func perReq(d time.Duration, n int64) string {
	if n <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0fµs", float64(d.Microseconds())/float64(n))
}

type idleReport struct {
	proto                 string // protocol version and binding
	via                   string // the subscription method
	err                   string
	requested, opened     int
	openAtEnd, ended      int
	openSecs, held        float64
	rssBefore, rssHeld    int64 // KiB
	rssPeak               int64
	keepAlivesPerStreamPS float64
	eventsPerS            float64
	srvCPUPercent         float64
	clientRSSDelta        int64
	openLatency           bench.Latency
}

// measureIdle starts a fresh `a2abridge serve --memory --keep-alive 1s`,
// opens the idle streams on one slow task over on's protocol version and
// binding, and reads the server's VmRSS before, and while holding, them.
func measureIdle(ctx context.Context, c config, bin, tmp string, stderr io.Writer, on *target) (*idleReport, error) {
	t := &server{key: "idle", name: "a2abridge (memory, keep-alive 1s)",
		argv: []string{filepath.Join(bin, "a2abridge"), "serve", "--addr", "127.0.0.1:0", "--log-level", "warn", "--memory", "--keep-alive", "1s"}}
	if err := t.start(ctx, tmp); err != nil {
		return nil, err
	}
	defer t.stop()
	time.Sleep(500 * time.Millisecond)
	rep := &idleReport{proto: on.proto(), via: subscribeName(on), requested: c.idleStreams}
	var err error
	if rep.rssBefore, err = residentKiB(t.pid); err != nil {
		return nil, err
	}
	self0, _ := residentKiB(os.Getpid())
	url := t.base + "/a2a/slow"
	fmt.Fprintf(stderr, "idle: opening %d streams over %s on %s (server RSS %d KiB)…\n", c.idleStreams, on.proto(), url, rep.rssBefore)
	var cpu0 time.Duration
	sampling := make(chan struct{})
	samplerDone := make(chan struct{})
	res, err := bench.Run(ctx, bench.Options{
		URL: url, Protocol: on.protocol, Binding: on.binding, Mode: bench.ModeIdle, IdleStreams: c.idleStreams, Concurrency: 64, Duration: c.idleHold,
		OnOpen: func(open int) {
			// Let the streams settle (first keep-alives, a GC cycle).
			time.Sleep(2 * time.Second)
			rep.rssHeld, _ = residentKiB(t.pid)
			self1, _ := residentKiB(os.Getpid())
			rep.clientRSSDelta = self1 - self0
			cpu0, _ = processCPU(t.pid)
			go func() {
				defer close(samplerDone)
				rep.rssPeak = rep.rssHeld
				tk := time.NewTicker(500 * time.Millisecond)
				defer tk.Stop()
				for {
					select {
					case <-tk.C:
						if v, err := residentKiB(t.pid); err == nil && v > rep.rssPeak {
							rep.rssPeak = v
						}
					case <-sampling:
						return
					}
				}
			}()
		},
	})
	if err == nil {
		cpu1, _ := processCPU(t.pid)
		close(sampling)
		<-samplerDone
		if res.Idle.HeldSeconds > 0 {
			rep.srvCPUPercent = 100 * (cpu1 - cpu0).Seconds() / res.Idle.HeldSeconds
		}
	}
	if err != nil {
		return nil, err
	}
	id := res.Idle
	rep.opened, rep.openAtEnd, rep.ended, rep.openSecs, rep.held = id.Opened, id.OpenAtEnd, id.Ended, id.OpenSeconds, id.HeldSeconds
	rep.keepAlivesPerStreamPS = id.KeepAlivesPerStreamPerSecond
	if id.HeldSeconds > 0 {
		rep.eventsPerS = float64(id.Events) / id.HeldSeconds
	}
	rep.openLatency = id.OpenLatency
	fmt.Fprintf(stderr, "idle: %d open, server RSS %d → %d KiB (peak %d), %.2f keep-alives/stream/s\n",
		id.Opened, rep.rssBefore, rep.rssHeld, rep.rssPeak, rep.keepAlivesPerStreamPS)
	return rep, nil
}

type environment struct {
	cpu, mem, kernel, goVersion, node, date, load, ports string
	postgres                                             string // PostgreSQL's version and settings, if used
	commit                                               string
	ncpu                                                 int
	nofile                                               uint64
	took                                                 time.Duration
}

func machine(c config, nofile uint64) environment {
	e := environment{
		cpu: cpuModel(), ncpu: runtime.NumCPU(), mem: memTotal(), kernel: kernel(), goVersion: runtime.Version(),
		date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), load: loadAvg(), ports: portRange(), nofile: nofile, node: "–",
	}
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		e.node = strings.TrimSpace(string(out))
	}
	e.commit = "built from the working tree"
	if out, err := exec.Command("git", "-C", "..", "rev-parse", "--short", "HEAD").Output(); err == nil {
		e.commit = "commit " + strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "-C", "..", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			e.commit += " with uncommitted changes"
		}
	}
	return e
}
