package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// TestReplicaLogsNameReplica: `serve --replica` names its replica id (its
// row in the replicas table) at startup and in every log line, from the
// first to the last (shutdown).
func TestReplicaLogsNameReplica(t *testing.T) {
	dsn := pgtest.DSN(t)
	addr := freeAddr(t)
	p := runInProcess(t, "serve", "--postgres", dsn, "--replica", "--addr", addr, "--log-level", "debug")
	logs := p.Stderr
	waitLines(t, p.Stdout, "listening on", 1, 30*time.Second)
	if r := testutil.CallRPC(t, "http://"+addr+"/a2a/echo", "message/send", testutil.SendParams03("hello", "rl-1", "")); r.Result.Status.State != "completed" {
		t.Fatalf("message/send: %+v", r)
	}

	// The replica's row in the replicas table.
	qctx, qcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer qcancel()
	conn, err := pgx.Connect(qctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var ids []string
	rows, err := conn.Query(qctx, "SELECT convert_from(id, 'UTF8') FROM replicas")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if rows.Err() != nil || len(ids) != 1 || ids[0] == "" {
		t.Fatalf("replicas: %q %v", ids, rows.Err())
	}
	id := ids[0]

	if code := p.stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, logs.String())
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "starting as a replica") {
		t.Fatalf("the first log line does not say that it starts as a replica:\n%s", logs.String())
	}
	for _, l := range lines {
		if !strings.Contains(l, " replica="+id) {
			t.Fatalf("a log line without replica=%s: %q\n%s", id, l, logs.String())
		}
	}
}
