//go:build linux

package main

// The PostgreSQL targets: `a2abridge serve --postgres DSN`
// (one process, exclusive), and three `serve --replica` on one schema
// behind nginx. Each gets a schema of its own in the database of
// --postgres, dropped and created again before each start (as the SQLite
// target's directory is emptied), and dropped at the end of the run. Their
// sessions carry an application_name of their own, so that the CPU time of
// the PostgreSQL backends serving them can be read (pg_stat_activity, then
// /proc) and reported apart from a2abridge's.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/a2abridge/a2abridge/store/postgres"
)

// defaultPostgres is the database of the PostgreSQL targets when neither
// --postgres nor $A2ABRIDGE_TEST_POSTGRES names one: the local
// PostgreSQL's database test, trust authentication (what .ci/run starts).
const defaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// pgDB is the database the PostgreSQL targets' schemas are made in, and
// the driver's own session on it.
type pgDB struct {
	base string // DSN of the database (--postgres)
	run  string // a random name part shared by the schemas of the run

	mu    sync.Mutex
	conn  *pgx.Conn // nil until open
	about string    // server version and durability settings, for the report
}

// open connects the driver's session (once).
func (db *pgDB) open(ctx context.Context) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.conn != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, withParams(db.base, "application_name", "a2abridge-runbench"))
	if err != nil {
		return fmt.Errorf("PostgreSQL is not reachable at %s (%s): start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) or name a database with --postgres",
			postgres.RedactDSN(db.base), strings.Join(strings.Fields(postgres.RedactDSN(err.Error())), " "))
	}
	db.conn = conn
	var version, fsync, syncCommit string
	if conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_setting('fsync'), current_setting('synchronous_commit')").Scan(&version, &fsync, &syncCommit) == nil {
		db.about = fmt.Sprintf("PostgreSQL %s (fsync %s, synchronous_commit %s)", version, fsync, syncCommit)
	}
	return nil
}

func (db *pgDB) close() {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = db.conn.Close(ctx)
		db.conn = nil
	}
}

func (db *pgDB) exec(ctx context.Context, sql string, args ...any) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.conn == nil {
		return errors.New("PostgreSQL is not connected")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := db.conn.Exec(ctx, sql, args...)
	return err
}

// pgSchema is one schema of the run: a target's database.
type pgSchema struct {
	db   *pgDB
	name string // schema name: a2abridge_bench_<random>_<suffix>
	app  string // application_name of a2abridge's sessions on it
}

// newSchema names a schema of the run (it is created by reset).
func newSchema(db *pgDB, suffix string) *pgSchema {
	return &pgSchema{db: db, name: "a2abridge_bench_" + db.run + "_" + suffix, app: "a2abridge-bench-" + db.run + "-" + suffix}
}

// runID is a random name part shared by the schemas of one run.
func runID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// dsn is the DSN a2abridge gets: the database's, with the schema as
// search_path and the schema's application_name.
func (s *pgSchema) dsn() string {
	return withParams(s.db.base, "search_path", s.name, "application_name", s.app)
}

// reset drops the schema (with everything in it) and creates it empty.
func (s *pgSchema) reset(ctx context.Context) error {
	id := pgx.Identifier{s.name}.Sanitize()
	if err := s.db.exec(ctx, "DROP SCHEMA IF EXISTS "+id+" CASCADE"); err != nil {
		return fmt.Errorf("drop schema %s: %w", s.name, err)
	}
	if err := s.db.exec(ctx, "CREATE SCHEMA "+id); err != nil {
		return fmt.Errorf("create schema %s: %w", s.name, err)
	}
	return nil
}

// drop drops the schema, if it exists.
func (s *pgSchema) drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.db.exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s.name}.Sanitize()+" CASCADE")
}

// backendCPU returns the CPU time so far of each PostgreSQL backend
// process serving a session of a2abridge on the schema (its
// application_name), by pid; nil when they cannot be read (PostgreSQL on
// another machine, or no such session).
func (s *pgSchema) backendCPU(ctx context.Context) map[int]time.Duration {
	if s == nil {
		return nil
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	if s.db.conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rows, err := s.db.conn.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", s.app)
	if err != nil {
		return nil
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil
	}
	out := map[int]time.Duration{}
	for _, pid := range pids {
		// A pid of another machine's PostgreSQL may be anything here.
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		if d, err := processCPU(int(pid)); err == nil {
			out[int(pid)] = d
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// cpuDelta is the CPU time the backends used between two backendCPU
// readings: a backend seen only at the end counts whole (it started in
// the window), one that ended in the window is lost (rare: a pool keeps
// its sessions). known is false when either reading failed.
func cpuDelta(before, after map[int]time.Duration) (d time.Duration, known bool) {
	if before == nil || after == nil {
		return 0, false
	}
	for pid, a := range after {
		d += a - before[pid]
	}
	return max(d, 0), true
}

// withParams appends key=value parameters to a DSN: URL query parameters
// (escaped) for a postgres:// URL, key=value pairs otherwise.
func withParams(dsn string, kv ...string) string {
	url := strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
	for i := 0; i+1 < len(kv); i += 2 {
		if url {
			sep := "?"
			if strings.Contains(dsn, "?") {
				sep = "&"
			}
			dsn += sep + kv[i] + "=" + strings.NewReplacer("%", "%25", "&", "%26", "#", "%23", " ", "%20", "+", "%2B").Replace(kv[i+1])
		} else {
			dsn += " " + kv[i] + "=" + kv[i+1]
		}
	}
	return dsn
}

// treeCPU is the CPU time so far of a process and of its live children,
// recursively (nginx's master and its worker).
func treeCPU(pid int) (time.Duration, error) {
	d, err := processCPU(pid)
	if err != nil {
		return 0, err
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(f); err == nil {
				if c, err := treeCPU(child); err == nil {
					d += c
				}
			}
		}
	}
	return d, nil
}

// nginxBinary is the path of nginx, or "" when it is not installed.
func nginxBinary() string {
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	return ""
}

// nginxTemplate is the path of the repository's nginx configuration for
// replicas (testdata/nginx-replicas.conf: the one the tests and the
// interop suites run); main sets it from the bench module's directory.
var nginxTemplate = filepath.Join("..", "testdata", "nginx-replicas.conf")

// nginxConf is the configuration of nginx listening on listen as a
// round-robin reverse proxy to upstreams (host:port): the template tmpl
// (nginxTemplate's text: no buffering, so SSE events pass at once; a long
// read timeout for streams; one process) plus keep-alive connections to
// the upstreams, for a whole measurement. dir holds its pid, temporary
// files and error log; asRoot adds `user root;` (workers would run as
// nobody, who cannot use dir).
func nginxConf(tmpl, dir, listen string, upstreams []string, asRoot bool) string {
	var servers []string
	for _, u := range upstreams {
		servers = append(servers, fmt.Sprintf("    server %s max_fails=1 fail_timeout=5s;", u))
	}
	servers = append(servers, "    keepalive 64;", "    keepalive_requests 1000000;")
	user := ""
	if asRoot {
		user = "user root;"
	}
	return strings.NewReplacer("@USER@", user, "@DIR@", dir, "@UPSTREAMS@", strings.Join(servers, "\n"), "@LISTEN@", listen, "@GRPC@", "").Replace(tmpl)
}

// freeAddr returns a 127.0.0.1 address with a port free at the moment.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startNginx runs nginx (argv[0]) in front of the server's replicas, which
// are running, and waits until it accepts connections.
func (t *server) startNginx(ctx context.Context, logDir string) error {
	var upstreams []string
	for _, r := range t.replicas {
		upstreams = append(upstreams, strings.TrimPrefix(r.base, "http://"))
	}
	dir := filepath.Join(logDir, t.key+"-nginx")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	tmpl, err := os.ReadFile(nginxTemplate)
	if err != nil {
		return err
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(string(tmpl), dir, addr, upstreams, os.Geteuid() == 0)), 0o644); err != nil {
		return err
	}
	lf, err := os.OpenFile(filepath.Join(logDir, t.key+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(t.argv[0], "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", conf)
	dieWithParent(cmd)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		lf.Close()
		return err
	}
	t.cmd, t.pid, t.log = cmd, cmd.Process.Pid, lf
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			t.base = "http://" + addr
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) || syscall.Kill(t.pid, 0) != nil {
			t.stop()
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			return fmt.Errorf("nginx did not start listening on %s: %s", addr, strings.TrimSpace(string(log)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
