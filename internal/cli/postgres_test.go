package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
)

// TestServePostgres runs `serve --postgres` in a child process: send, a
// stream, get and cancel; then kill -9 while a task runs and its stream
// is open, restart on the same database, and check that every task is
// kept, the running one failed with the recovery message, and its stream
// resumes from its Last-Event-ID. The DSN carries a password (trust
// authentication ignores it), which never shows in the logs.
func TestServePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dsn := withPassword(pgtest.DSN(t), "pgs3cretpw")
	addr := freeAddr(t)
	base := "http://" + addr
	child := startChild(t, "--postgres", dsn, "--addr", addr)
	logs := child.Stderr

	// A second serve on the same database refuses to start.
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--postgres", dsn}, nil, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "in use by another a2abridge serve") || strings.Contains(errb.String(), "pgs3cretpw") {
		t.Errorf("second serve on the database: exit %d, %s", code, errb.String())
	}

	// send
	sent := testutil.CallRPC(t, base+"/a2a/echo", "message/send", testutil.SendParams03("kept in postgres", "pg-1", ""))
	if sent.Result.Status.State != "completed" || len(sent.Result.Artifacts) != 1 {
		t.Fatalf("message/send: %+v", sent)
	}
	// get
	got := testutil.CallRPC(t, base+"/a2a/echo", "tasks/get", fmt.Sprintf(`{"id":%q}`, sent.Result.ID))
	if got.Result.Status.State != "completed" || got.Result.Artifacts[0].Parts[0].Text != "kept in postgres" {
		t.Fatalf("tasks/get: %+v", got)
	}
	// The same messageId again answers with the same task.
	if again := testutil.CallRPC(t, base+"/a2a/echo", "message/send", testutil.SendParams03("kept in postgres", "pg-1", "")); again.Result.ID != sent.Result.ID {
		t.Errorf("repeated messageId: task %q, want %q (%+v)", again.Result.ID, sent.Result.ID, again)
	}

	// stream, then cancel
	resp, rd, canceledID, _ := openSlowStream(t, base, "60", "pg-slow-1", 2) // the task, working
	if c := testutil.CallRPC(t, base+"/a2a/slow", "tasks/cancel", fmt.Sprintf(`{"id":%q}`, canceledID)); c.Result.Status.State != "canceled" {
		t.Fatalf("tasks/cancel: %+v", c)
	}
	final := lastEvent(t, rd, 0)
	resp.Body.Close()
	if !final.Result.Final || final.Result.Status.State != "canceled" {
		t.Fatalf("the canceled stream ended with %+v", final.Result)
	}

	// kill -9 with a task running and its stream open
	resp, _, runningID, lastSeen := openSlowStream(t, base, "60", "pg-slow-2", 2)
	child.Kill()
	resp.Body.Close()
	if strings.Contains(logs.String(), "pgs3cretpw") {
		t.Errorf("the logs show the DSN's password:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "PostgreSQL") {
		t.Errorf("the logs do not say which store is used:\n%s", logs)
	}

	startChild(t, "--postgres", dsn, "--addr", addr)
	if r := testutil.CallRPC(t, base+"/a2a/echo", "tasks/get", fmt.Sprintf(`{"id":%q}`, sent.Result.ID)); r.Result.Status.State != "completed" ||
		r.Result.Artifacts[0].Parts[0].Text != "kept in postgres" {
		t.Errorf("sent task after restart: %+v", r)
	}
	if r := testutil.CallRPC(t, base+"/a2a/slow", "tasks/get", fmt.Sprintf(`{"id":%q}`, canceledID)); r.Result.Status.State != "canceled" {
		t.Errorf("canceled task after restart: %+v", r.Result.Status)
	}
	r := testutil.CallRPC(t, base+"/a2a/slow", "tasks/get", fmt.Sprintf(`{"id":%q}`, runningID))
	if r.Result.Status.State != "failed" || r.Result.Status.Message == nil || r.Result.Status.Message.Parts[0].Text != server.RecoveryMessage {
		t.Fatalf("running task after restart: %+v", r.Result.Status)
	}
	if final := resumeSlowStream(t, base, runningID, lastSeen); !final.Result.Final || final.Result.Status.State != "failed" {
		t.Fatalf("resumed stream did not end with the failed status: %+v", final.Result)
	}
}

// withPassword adds a password to a URL DSN's user.
func withPassword(dsn, pw string) string {
	return strings.Replace(dsn, "postgres://postgres@", "postgres://postgres:"+pw+"@", 1)
}

// TestServePostgresErrors: --postgres with --memory or --data, a DSN
// that does not parse and a database that cannot be reached are startup
// errors naming the flag or key, without the password.
func TestServePostgresErrors(t *testing.T) {
	dir := t.TempDir()
	files := 0
	cfg := func(body string) string {
		files++
		p := filepath.Join(dir, fmt.Sprint(files, ".yaml"))
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Setenv("PG_TEST_PW", "cfgs3cretpw")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--postgres", "postgres://u@h/db", "--memory"}, ExitUsage, "--postgres and --memory are mutually exclusive"},
		{[]string{"--postgres", "postgres://u@h/db", "--data", dir}, ExitUsage, "--postgres and --data are mutually exclusive"},
		{[]string{"--config", cfg("postgres: {dsn: 'postgres://u@h/db'}\nmemory: true\n")}, ExitUsage, "--config: postgres.dsn and --config: memory are mutually exclusive"},
		{[]string{"--config", cfg("postgres: {dsn: 'postgres://u@h/db'}\ndata: /tmp/x\n")}, ExitUsage, "--config: postgres.dsn and --config: data are mutually exclusive"},
		{[]string{"--config", cfg("postgres: {dsn: ''}\n")}, ExitUsage, "postgres.dsn: empty"},
		{[]string{"--postgres", ""}, ExitUsage, "--postgres: postgres: empty DSN"},
		{[]string{"--postgres", "postgres://u:pgs3cretpw@h:notaport/db"}, ExitUsage, "--postgres: postgres: invalid DSN"},
		{[]string{"--postgres", "postgres://u:pgs3cretpw@127.0.0.1:1/db?connect_timeout=2"}, 1, "--postgres: open store: postgres: connect to postgres://u:xxxxx@127.0.0.1:1/db"},
		{[]string{"--config", cfg("postgres:\n  dsn: 'postgres://u:${PG_TEST_PW}@127.0.0.1:1/db?connect_timeout=2'\n")}, 1, "--config: postgres.dsn: open store: postgres: connect to postgres://u:xxxxx@127.0.0.1:1/db"},
		{[]string{"--config", cfg("postgres:\n  dns: x\n")}, ExitUsage, "dsn"},
		{[]string{"--replica"}, ExitUsage, "--replica needs --postgres"},
		{[]string{"--memory", "--lease", "5s"}, ExitUsage, "--lease needs --postgres"},
		{[]string{"--postgres", "postgres://u@h/db", "--lease", "10ms"}, ExitUsage, "--lease 10ms: want a duration from 1s to 1h"},
		{[]string{"--config", cfg("postgres: {dsn: 'postgres://u@h/db', lease: 2h}\n")}, ExitUsage, "--config: postgres.lease 2h0m0s: want a duration from 1s to 1h"},
		{[]string{"--config", cfg("memory: true\npostgres: {dsn: '', replica: true}\n")}, ExitUsage, "postgres.dsn: empty"},
		{[]string{"--postgres", "postgres://u@h/db", "--replica", "--config", cfg("pairs: {enabled: true}\n")}, ExitUsage, "--config: pairs.enabled with --replica"},
		{[]string{"--postgres", "postgres://u@h/db", "--replica", "--push"}, ExitUsage, "--push with --replica needs --public-url"},
		{[]string{"--postgres", "postgres://u@h/db", "--replica", "--public-url", "https://a.example", "--config", cfg("push: {enabled: true, keys: /tmp/k}\n")}, ExitUsage, "--config: push.keys with --replica"},
		{[]string{"--config", cfg("postgres: {dsn: 'postgres://u@h/db', replica: true}\nadmin: {bearer_tokens: {ops: 'tok-123456789012345678901234'}}\n")}, ExitUsage, "--config: admin with --config: postgres.replica"},
	} {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...), nil, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("serve %q: exit %d, stderr %q; want exit %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
		if strings.Contains(errb.String()+out.String(), "s3cretpw") {
			t.Errorf("serve %q shows the password: %s", c.args, errb.String())
		}
	}
}
