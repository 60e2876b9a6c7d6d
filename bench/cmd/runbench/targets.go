//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/a2abridge/a2abridge/internal/bench"
)

// server is one server process under test.
type server struct {
	key   string // short name for flags and logs
	name  string // name in the tables
	argv  []string
	dir   string
	needs string // what it needs that may be missing ("node", "nginx")
	data  string // a data directory, emptied before every start
	// pg, if set, is the PostgreSQL schema the server keeps its tasks in:
	// argv gets --postgres and its DSN at every start.
	pg *pgSchema
	// reset, if set, is a PostgreSQL schema dropped and created empty
	// before every start (before the replicas start): the server's
	// database, whose backends' CPU time is reported apart.
	reset *pgSchema
	// replicas, if set, are the servers this one (nginx, argv[0]) is a
	// reverse proxy in front of: started before it, stopped after it,
	// their CPU time is the server's, and its own is reported apart
	// (proxyCPU).
	replicas []*server
	// backend, if set, is a server this one calls: it is started before
	// this one (and restarted with it), stopped after it, and its CPU
	// time counts as this server's.
	backend *server
	// config, if set, is the YAML of a `--config` file, given the
	// backend's base URL: it is written next to the logs and passed to
	// argv as --config FILE at every start.
	config func(backend string) string
	// env is added to the server's environment (NAME=VALUE).
	env []string
	// backendFlag, if set, is a flag that gives the backend's base URL:
	// argv gets backendFlag and the URL at every start.
	backendFlag string

	cmd  *exec.Cmd
	base string // http://ADDR, once started
	// grpcAddr is where it serves gRPC (host:port), when its stdout said
	// so before its listening line ("over gRPC at ADDR").
	grpcAddr string
	pid      int
	log      *os.File
	skip     string // why it is not measured
}

// target is one way of measuring a server: an A2A protocol version and
// binding at an endpoint path. A server that offers several bindings is
// measured once per binding.
type target struct {
	key      string // for flags and logs: the server's key, plus -v1 or -rest for its other bindings
	srv      *server
	peer     bool   // a peer SDK (the "best peer" is the fastest of these)
	ours     bool   // a2abridge
	protocol string // bench.Protocol03 or bench.Protocol10
	binding  string // bench.BindingJSONRPC, bench.BindingREST or bench.BindingGRPC
	path     string // the JSON-RPC endpoint, or the REST interface URL's path
	tenant   string // gRPC: the requests' tenant
	skip     string // why it is not measured
	// direct, for a bridge, is the key of the target it is compared with:
	// a2abridge hosting the echo agent itself, over the same protocol
	// version and binding.
	direct string
}

// url is where the target is measured (its server must be running): for
// gRPC, its target host:port.
func (t *target) url() string {
	if t.binding == bench.BindingGRPC {
		if t.srv.grpcAddr != "" {
			return t.srv.grpcAddr
		}
		return strings.TrimPrefix(t.srv.base, "http://")
	}
	return t.srv.base + t.path
}

// proto names the protocol version and binding: "0.3 JSON-RPC", "1.0 REST".
func (t *target) proto() string { return protoName(t.protocol, t.binding) }

func protoName(protocol, binding string) string {
	switch binding {
	case bench.BindingREST:
		return protocol + " REST"
	case bench.BindingGRPC:
		return protocol + " gRPC"
	}
	return protocol + " JSON-RPC"
}

var (
	listening = regexp.MustCompile(`listening on (http://[^\s)]+)`)
	grpcAt    = regexp.MustCompile(`over gRPC at ([^\s;)]+)`)
)

// start runs the server and waits for its `listening on URL` line.
func (t *server) start(ctx context.Context, logDir string) error {
	if t.data != "" {
		if err := os.RemoveAll(t.data); err != nil {
			return err
		}
	}
	if t.reset != nil {
		if err := t.reset.reset(ctx); err != nil {
			return err
		}
	}
	argv := t.argv
	if t.backend != nil {
		if err := t.backend.start(ctx, logDir); err != nil {
			return fmt.Errorf("its backend %s: %w", t.backend.name, err)
		}
	}
	for i, r := range t.replicas {
		if err := r.start(ctx, logDir); err != nil {
			t.stopDeps()
			return fmt.Errorf("replica %d of %d: %w", i+1, len(t.replicas), err)
		}
	}
	if len(t.replicas) > 0 {
		if err := t.startNginx(ctx, logDir); err != nil {
			t.stopDeps()
			return err
		}
		return nil
	}
	if t.pg != nil {
		argv = append(slices.Clone(argv), "--postgres", t.pg.dsn())
	}
	if t.config != nil {
		backend := ""
		if t.backend != nil {
			backend = t.backend.base
		}
		conf := filepath.Join(logDir, t.key+".yaml")
		if err := os.WriteFile(conf, []byte(t.config(backend)), 0o644); err != nil {
			t.stopDeps()
			return err
		}
		argv = append(slices.Clone(argv), "--config", conf)
	}
	if t.backendFlag != "" {
		argv = append(slices.Clone(argv), t.backendFlag, t.backend.base)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = t.dir
	if len(t.env) > 0 {
		cmd.Env = append(os.Environ(), t.env...)
	}
	dieWithParent(cmd)
	lf, err := os.OpenFile(filepath.Join(logDir, t.key+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.stopDeps()
		return err
	}
	t.log = lf
	cmd.Stderr = lf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.stopDeps()
		return err
	}
	if err := cmd.Start(); err != nil {
		t.stopDeps()
		return err
	}
	t.cmd, t.pid = cmd, cmd.Process.Pid
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		reported := false
		for sc.Scan() {
			if m := grpcAt.FindStringSubmatch(sc.Text()); m != nil {
				t.grpcAddr = m[1]
			}
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				reported = true
				break
			}
		}
		if !reported {
			found <- "" // stdout closed: the process is ending
		}
		_, _ = io.Copy(lf, out)
	}()
	select {
	case base := <-found:
		if base == "" {
			t.stop()
			return fmt.Errorf("%s exited before reporting its address (log: %s)", t.name, lf.Name())
		}
		t.base = base
		return nil
	case <-time.After(60 * time.Second):
		t.stop()
		return fmt.Errorf("%s did not report its address within 60 s (log: %s)", t.name, lf.Name())
	case <-ctx.Done():
		t.stop()
		return ctx.Err()
	}
}

// restart stops the server and starts it again (with an empty store).
func (t *server) restart(ctx context.Context, logDir string) error {
	t.stop()
	return t.start(ctx, logDir)
}

// stop ends the server, then its backend and replicas: SIGINT, then
// SIGKILL after 10 s. A nil server is a no-op.
func (t *server) stop() {
	if t == nil {
		return
	}
	defer t.stopDeps()
	if t.cmd == nil {
		return
	}
	_ = t.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- t.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = t.cmd.Process.Kill()
		<-done
	}
	t.cmd = nil
	if t.log != nil {
		t.log.Close()
	}
}

// stopDeps ends the server's backend and replicas.
func (t *server) stopDeps() {
	t.backend.stop()
	for _, r := range t.replicas {
		r.stop()
	}
}

// cpu is the CPU time the server and its backend used so far; for a
// proxy in front of replicas, the replicas' (the proxy's is proxyCPU).
func (t *server) cpu() (time.Duration, error) {
	var d time.Duration
	var err error
	if len(t.replicas) == 0 {
		d, err = processCPU(t.pid)
	}
	if err == nil && t.backend != nil {
		var b time.Duration
		b, err = t.backend.cpu()
		d += b
	}
	for _, r := range t.replicas {
		if err != nil {
			break
		}
		var b time.Duration
		b, err = r.cpu()
		d += b
	}
	return d, err
}

// proxyCPU is the CPU time the proxy in front of replicas (nginx: its
// master process and its worker) used so far; 0 for other servers.
func (t *server) proxyCPU() time.Duration {
	if len(t.replicas) == 0 {
		return 0
	}
	d, _ := treeCPU(t.pid)
	return d
}

// pids names the server's process and its backend's or replicas'.
func (t *server) pids() string {
	switch {
	case t.backend != nil:
		return fmt.Sprintf("pid %d, backend pid %d", t.pid, t.backend.pid)
	case len(t.replicas) > 0:
		var ps []string
		for _, r := range t.replicas {
			ps = append(ps, strconv.Itoa(r.pid))
		}
		return fmt.Sprintf("nginx pid %d, replica pids %s", t.pid, strings.Join(ps, ", "))
	}
	return fmt.Sprintf("pid %d", t.pid)
}

func run(dir string, stderr io.Writer, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v (in %s): %w", name, args, dir, err)
	}
	return nil
}

// build compiles a2abridge and the Go peers into bin, and installs the JS
// peers' locked dependencies when they are missing; a JS peer that cannot
// run gets its skip set.
func build(benchDir, bin string, stderr io.Writer, servers []*server) error {
	fmt.Fprintln(stderr, "building a2abridge and the Go peers…")
	if err := run(filepath.Dir(benchDir), stderr, "go", "build", "-o", filepath.Join(bin, "a2abridge"), "./cmd/a2abridge"); err != nil {
		return err
	}
	if err := run(benchDir, stderr, "go", "build", "-o", bin+string(filepath.Separator), "./servers/baseline", "./servers/a2ago", "./servers/trpc", "./servers/a2agov2", "./servers/simplebackend", "./servers/otlpsink", "./servers/relay", "./servers/ticker"); err != nil {
		return err
	}
	_, noNode := exec.LookPath("node")
	nginx := nginxBinary()
	for _, s := range servers {
		switch {
		case s.needs == "nginx":
			if nginx == "" {
				s.skip = "nginx is not installed (apt-get install nginx-light)"
			} else {
				s.argv = append([]string{nginx}, s.argv[1:]...)
			}
		case s.needs != "node":
		case noNode != nil:
			s.skip = "node is not installed"
		default:
			if _, err := os.Stat(filepath.Join(s.dir, "node_modules", "@a2a-js", "sdk", "package.json")); err != nil {
				fmt.Fprintf(stderr, "installing the dependencies of %s (npm ci)…\n", s.name)
				if err := run(s.dir, stderr, "npm", "ci", "--no-audit", "--no-fund"); err != nil {
					s.skip = err.Error()
				}
			}
		}
	}
	return nil
}

// targets lists every server and the ways each is measured: a2abridge and
// the baseline over 0.3 JSON-RPC, 1.0 JSON-RPC and 1.0 REST on one URL;
// the 0.3 peers over 0.3 JSON-RPC; the 1.x peers over 1.0 JSON-RPC and 1.0
// REST (under /rest, as their cards say).
//
// The PostgreSQL targets keep their tasks in schemas of db,
// one each: postgres is `a2abridge serve --postgres DSN`, one process that
// has the schema to itself (its appends queued: a group commit that the
// agent does not wait for); postgres-3 is three `a2abridge serve
// --replica --postgres DSN --lease 30s` on one schema behind nginx (round
// robin, keep-alive connections to the replicas, SSE unbuffered),
// measured through nginx; postgres-replica is one such replica behind the
// same nginx, the one to compare three with (a replica waits for each
// append to commit: another may append to the task meanwhile).
func targets(benchDir, bin, dataDir string, db *pgDB) []*target {
	serve := []string{filepath.Join(bin, "a2abridge"), "serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}
	goPeer := func(key, name string) *server {
		return &server{key: key, name: name, argv: []string{filepath.Join(bin, key)}}
	}
	jsPeer := func(key, name string) *server {
		return &server{key: key, name: name, argv: []string{"node", "server.mjs"}, dir: filepath.Join(benchDir, "servers", key), needs: "node"}
	}
	var all []*target
	// every03And10 is how a2abridge and the baseline are measured.
	every03And10 := func(s *server, ours bool) {
		all = append(all,
			&target{key: s.key, srv: s, ours: ours, protocol: bench.Protocol03, binding: bench.BindingJSONRPC, path: "/a2a/echo"},
			&target{key: s.key + "-v1", srv: s, ours: ours, protocol: bench.Protocol10, binding: bench.BindingJSONRPC, path: "/a2a/echo"},
			&target{key: s.key + "-rest", srv: s, ours: ours, protocol: bench.Protocol10, binding: bench.BindingREST, path: "/a2a/echo"})
	}
	peer03 := func(s *server) {
		all = append(all, &target{key: s.key, srv: s, peer: true, protocol: bench.Protocol03, binding: bench.BindingJSONRPC, path: "/a2a/echo"})
	}
	peer10 := func(s *server) {
		all = append(all,
			&target{key: s.key, srv: s, peer: true, protocol: bench.Protocol10, binding: bench.BindingJSONRPC, path: "/a2a/echo"},
			&target{key: s.key + "-rest", srv: s, peer: true, protocol: bench.Protocol10, binding: bench.BindingREST, path: "/a2a/echo/rest"})
	}
	every03And10(&server{key: "baseline", name: "net/http baseline", argv: []string{filepath.Join(bin, "baseline")}}, false)
	// grpc measures a2abridge's gRPC binding too (on the HTTP port).
	grpc := func(s *server) {
		all = append(all, &target{key: s.key + "-grpc", srv: s, ours: true, protocol: bench.Protocol10, binding: bench.BindingGRPC, tenant: "echo"})
	}
	memory := &server{key: "memory", name: "**a2abridge** (memory)", argv: append(slices.Clone(serve), "--memory")}
	every03And10(memory, true)
	grpc(memory)
	sqlite := &server{key: "sqlite", name: "**a2abridge** (SQLite)", argv: append(slices.Clone(serve), "--data", dataDir), data: dataDir}
	every03And10(sqlite, true)
	grpc(sqlite)
	pg1 := newSchema(db, "1")
	every03And10(&server{key: "postgres", name: "**a2abridge** (PostgreSQL)", argv: slices.Clone(serve), pg: pg1, reset: pg1}, true)
	every03And10(replicaGroup("postgres-replica", "**a2abridge** (PostgreSQL, 1 replica behind nginx)", serve, newSchema(db, "r"), 1, nil), true)
	every03And10(replicaGroup("postgres-3", "**a2abridge** (PostgreSQL, 3 replicas behind nginx)", serve, newSchema(db, "3"), 3, nil), true)
	bridges(&all, serve, bin)
	// Telemetry's cost: `serve --memory` with telemetry on and exporting
	// over OTLP/HTTP to servers/otlpsink (restarted with it, its CPU
	// counted as the target's), compared with "memory", the same serve
	// without telemetry. telemetry exports the metrics and a tenth of the
	// traces requests start (OTEL_TRACES_SAMPLER=
	// parentbased_traceidratio, 0.1: a trace a caller sampled is always
	// kept), as a busy gateway is run; telemetry-all traces every request
	// and serves Prometheus metrics too (a second metric reader).
	telemetry := func(key, name, conf string, env ...string) {
		all = append(all, &target{key: key, ours: true, protocol: bench.Protocol03, binding: bench.BindingJSONRPC, path: "/a2a/echo", direct: "memory",
			srv: &server{key: key, name: name, argv: append(slices.Clone(serve), "--memory"), env: env,
				backend: &server{key: key + "-sink", name: "otlpsink, the OTLP receiver of " + key, argv: []string{filepath.Join(bin, "otlpsink")}},
				config: func(base string) string {
					return fmt.Sprintf("telemetry:\n  otlp_endpoint: %s\n%s", base, conf)
				}}})
	}
	telemetry("telemetry", "**a2abridge** (memory, OTLP: metrics, 10% of traces)", "", "OTEL_TRACES_SAMPLER=parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG=0.1")
	telemetry("telemetry-all", "**a2abridge** (memory, OTLP: metrics, every trace; Prometheus)", "  metrics_addr: 127.0.0.1:0\n", "OTEL_TRACES_SAMPLER=parentbased_always_on")
	peer03(goPeer("a2ago", "a2a-go v0.3.15"))
	peer03(goPeer("trpc", "trpc-a2a-go v0.2.5"))
	peer03(jsPeer("js", "@a2a-js/sdk 0.3.14"))
	gov2 := goPeer("a2agov2", "a2a-go v2.4.0")
	peer10(gov2)
	all = append(all, &target{key: "a2agov2-grpc", srv: gov2, peer: true, protocol: bench.Protocol10, binding: bench.BindingGRPC})
	peer10(jsPeer("jsv1", "@a2a-js/sdk 1.3.0"))
	return all
}

// bridges adds the bridging targets, bridged agents measured against
// the direct call of a2abridge's echo (target "memory", 0.3 JSON-RPC):
//
//   - bridge-a2a: `a2abridge serve --memory` hosting only an agent of kind
//     a2a (bridge/remote) whose url is the echo agent of another `a2abridge
//     serve --memory` process (its card decides the version and binding
//     the bridge speaks to it);
//   - bridge-http: `a2abridge serve --memory` hosting only an agent of
//     kind http (bridge/simple) whose url is servers/simplebackend, a
//     net/http service echoing the simple dialect's input as its output.
//
// The agent is named "bridged" and is the default; the backend process is
// restarted with the bridge, and its CPU time counts as the bridge's.
//
// The reference is relay: servers/relay (net/http, pooled connections,
// forwarding only) in front of `a2abridge serve --memory`, a proxy that only
// forwards: what one more HTTP hop costs on the machine of the run.
func bridges(all *[]*target, serve []string, bin string) {
	bridge := func(key, name, kind string, backend *server, path string) {
		s := &server{key: key, name: name, argv: append(slices.Clone(serve), "--memory"), backend: backend,
			config: func(base string) string {
				return fmt.Sprintf("builtins: false\ndefault: bridged\nagents:\n  bridged:\n    kind: %s\n    url: %s%s\n", kind, base, path)
			}}
		*all = append(*all, &target{key: key, srv: s, ours: true, protocol: bench.Protocol03, binding: bench.BindingJSONRPC, path: "/a2a/bridged", direct: "memory"})
	}
	relay := &server{key: "relay", name: "net/http reverse proxy → a2abridge echo", argv: []string{filepath.Join(bin, "relay")}, backendFlag: "--backend",
		backend: &server{key: "relay-backend", name: "a2abridge (memory), the backend of relay", argv: append(slices.Clone(serve), "--memory")}}
	*all = append(*all, &target{key: "relay", srv: relay, protocol: bench.Protocol03, binding: bench.BindingJSONRPC, path: "/a2a/echo", direct: "memory"})
	bridge("bridge-a2a", "**a2abridge** `a2a` bridge → a2abridge echo", "a2a",
		&server{key: "bridge-a2a-remote", name: "a2abridge (memory), the remote of bridge-a2a", argv: append(slices.Clone(serve), "--memory")}, "/a2a/echo")
	bridge("bridge-http", "**a2abridge** `http` bridge → simple-dialect Go backend", "http",
		&server{key: "bridge-http-backend", name: "simplebackend, the backend of bridge-http", argv: []string{filepath.Join(bin, "simplebackend")}}, "/echo")
}

// serversOf lists the servers of ts, each once, in order.
func serversOf(ts []*target) []*server {
	var out []*server
	for _, t := range ts {
		if !slices.Contains(out, t.srv) {
			out = append(out, t.srv)
		}
	}
	return out
}

// replicaGroup is n `a2abridge serve --replica --lease 30s` on schema pg
// (emptied before every start) behind nginx; config, if set, is the YAML
// of each replica's --config.
func replicaGroup(key, name string, serve []string, pg *pgSchema, n int, config func(string) string) *server {
	g := &server{key: key, name: name, argv: []string{"nginx"}, needs: "nginx", reset: pg}
	for i := range n {
		g.replicas = append(g.replicas, &server{key: fmt.Sprintf("%s-r%d", key, i+1), name: fmt.Sprintf("replica %d of %s", i+1, key),
			argv: append(slices.Clone(serve), "--replica", "--lease", "30s"), pg: pg, config: config})
	}
	return g
}
