package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
)

// openSlowStream posts a message/stream of the slow agent at base
// (working for secs seconds) with message id id, and reads its events
// until the event numbered until; it returns the response, its reader,
// the task's id and the last event id read.
func openSlowStream(t *testing.T, base, secs, id string, until int64) (*http.Response, *sse.Reader, string, int64) {
	t.Helper()
	resp := testutil.Open(t, testutil.NewRequest(t, context.Background(), http.MethodPost, base+"/a2a/slow",
		`{"jsonrpc":"2.0","id":"s","method":"message/stream","params":`+testutil.SendParams03(secs, id, "")+`}`))
	rd := sse.NewReader(resp.Body)
	var taskID string
	var last int64
	for last < until {
		ev, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if taskID == "" {
			var r testutil.RPCAnswer
			_ = json.Unmarshal(ev.Data, &r)
			taskID = r.Result.ID
		}
		last, _ = strconv.ParseInt(ev.ID, 10, 64)
	}
	return resp, rd, taskID, last
}

// resumeSlowStream resubscribes to the slow agent's task taskID at base
// from the event after lastSeen (Last-Event-ID), checks that the events
// follow one another from there, and returns the last.
func resumeSlowStream(t *testing.T, base, taskID string, lastSeen int64) testutil.RPCAnswer {
	t.Helper()
	resp := testutil.Open(t, testutil.NewRequest(t, context.Background(), http.MethodPost, base+"/a2a/slow",
		fmt.Sprintf(`{"jsonrpc":"2.0","id":"r","method":"tasks/resubscribe","params":{"id":%q}}`, taskID),
		"Last-Event-ID", strconv.FormatInt(lastSeen, 10)))
	return lastEvent(t, sse.NewReader(resp.Body), lastSeen+1)
}

// lastEvent reads rd to its end and returns its last event; with next
// above 0 it checks that the event ids follow one another from next.
func lastEvent(t *testing.T, rd *sse.Reader, next int64) testutil.RPCAnswer {
	t.Helper()
	var final testutil.RPCAnswer
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if next > 0 {
			if ev.ID != strconv.FormatInt(next, 10) {
				t.Fatalf("resumed stream: event id %s, want %d", ev.ID, next)
			}
			next++
		}
		_ = json.Unmarshal(ev.Data, &final)
	}
	return final
}

// TestKill9LosesNothingAcknowledged kills `a2abridge serve` (SQLite store)
// with SIGKILL while tasks run and streams are open, restarts it on the same
// data directory, and checks that every acknowledged task and event is
// intact, that the task that was running is failed with the recovery
// message, and that a stream resumes from its Last-Event-ID.
func TestKill9LosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		testKill9(t, []string{"--data", dir})
	})
	// serve --postgres has the schema to itself: its appends are queued
	// (group commit), and what it acknowledged must survive all the same.
	t.Run("postgres", func(t *testing.T) {
		testKill9(t, []string{"--postgres", pgtest.DSN(t)})
	})
}

// testKill9 is TestKill9LosesNothingAcknowledged on the store of
// storeArgs: echo tasks acknowledged before the kill and while it
// happens, and a streamed task running at the kill.
func testKill9(t *testing.T, storeArgs []string) {
	addr := freeAddr(t)
	base := "http://" + addr
	args := append(slices.Clone(storeArgs), "--addr", addr)
	child := startChild(t, args...)

	// Acknowledged echo tasks, sent concurrently.
	type acked struct{ id, text string }
	var mu sync.Mutex
	var done []acked
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := fmt.Sprintf("durable %d", i)
			r := testutil.CallRPC(t, base+"/a2a/echo", "message/send", testutil.SendParams03(text, fmt.Sprintf("k-%d", i), ""))
			if r.Result.Status.State != "completed" {
				t.Errorf("echo %d: %+v", i, r)
				return
			}
			mu.Lock()
			done = append(done, acked{r.Result.ID, text})
			mu.Unlock()
		}()
	}
	wg.Wait()

	// Load that goes on through the kill: what was acknowledged before
	// the connection broke must be there after the restart.
	stop := make(chan struct{})
	var load sync.WaitGroup
	for w := range 8 {
		load.Add(1)
		go func() {
			defer load.Done()
			client := &http.Client{Timeout: 10 * time.Second}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				text := fmt.Sprintf("under load %d-%d", w, i)
				body := testutil.RPCBody("message/send", testutil.SendParams03(text, fmt.Sprintf("l-%d-%d", w, i), ""))
				resp, err := client.Post(base+"/a2a/echo", "application/json", strings.NewReader(body))
				if err != nil {
					return // the server died
				}
				var r testutil.RPCAnswer
				err = json.UnmarshalRead(resp.Body, &r)
				resp.Body.Close()
				if err != nil || r.Result.Status.State != "completed" {
					return
				}
				mu.Lock()
				done = append(done, acked{r.Result.ID, text})
				mu.Unlock()
			}
		}()
	}

	// A long task, streamed: remember the last event id we saw.
	resp, _, slowID, lastSeen := openSlowStream(t, base, "60", "k-slow", 3) // snapshot, working, first progress

	time.Sleep(200 * time.Millisecond) // the load runs
	child.Kill()
	close(stop)
	load.Wait()
	resp.Body.Close()

	startChild(t, args...)
	t.Logf("%d tasks acknowledged before the kill", len(done))
	for _, a := range done {
		r := testutil.CallRPC(t, base+"/a2a/echo", "tasks/get", fmt.Sprintf(`{"id":%q}`, a.id))
		if r.Result.Status.State != "completed" || len(r.Result.Artifacts) != 1 || r.Result.Artifacts[0].Parts[0].Text != a.text {
			t.Errorf("task %s after kill -9: %+v", a.id, r)
		}
	}
	r := testutil.CallRPC(t, base+"/a2a/slow", "tasks/get", fmt.Sprintf(`{"id":%q}`, slowID))
	if r.Result.Status.State != "failed" || r.Result.Status.Message == nil || r.Result.Status.Message.Parts[0].Text != server.RecoveryMessage {
		t.Fatalf("running task after restart: %+v", r.Result.Status)
	}
	// Resume the dropped stream after the restart.
	if final := resumeSlowStream(t, base, slowID, lastSeen); !final.Result.Final || final.Result.Status.State != "failed" {
		t.Fatalf("resumed stream did not end with the failed status: %+v", final.Result)
	}
}

func TestUsageErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"serve", "--default", "nosuch", "--memory"}, nil, &out, &errb); code != ExitUsage {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	if code := Run(context.Background(), []string{"serve", "--bogus"}, nil, &out, &errb); code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
	if code := Run(context.Background(), []string{"nosuchcmd"}, nil, &out, &errb); code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
}

// TestGracefulShutdown sends SIGTERM to `a2abridge serve` while two tasks
// run and streams are open: the task that ends within --shutdown-grace
// completes, the other is failed when the grace period ends (its stream
// gets that final event, not a cut), a new message meanwhile is refused,
// the process exits 0 without an ERROR log line, and after a restart the
// failed task says why.
func TestGracefulShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	base := "http://" + addr
	child := startChild(t, "--data", dir, "--addr", addr, "--shutdown-grace", "2s")
	open := func(secs, id string) (*sse.Reader, string) {
		_, rd, taskID, _ := openSlowStream(t, base, secs, id, 1) // the snapshot
		return rd, taskID
	}
	last := func(rd *sse.Reader) testutil.RPCAnswer {
		var last testutil.RPCAnswer
		for {
			ev, err := rd.Next()
			if err != nil {
				return last
			}
			_ = json.Unmarshal(ev.Data, &last)
		}
	}
	longRd, slowID := open("60", "g-slow")
	shortRd, _ := open("1", "g-short")
	if err := child.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	// The listener is closed: a new connection is refused (or, if it got
	// in first, the message is answered with an error).
	if resp, err := http.Post(base+"/a2a/echo", "application/json", strings.NewReader(testutil.RPCBody("message/send", testutil.SendParams03("x", "g-new", "")))); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"error"`) {
			t.Fatalf("a new message during the shutdown was accepted: %s", b)
		}
	}
	if got := last(shortRd); !got.Result.Final || got.Result.Status.State != "completed" {
		t.Fatalf("the short task's stream ended with %+v, want completed within the grace period", got.Result)
	}
	if got := last(longRd); !got.Result.Final || got.Result.Status.State != "failed" {
		t.Fatalf("stream ended with %+v, want the final failed status", got.Result)
	}
	if exited, err := child.Wait(30 * time.Second); !exited {
		t.Fatal("serve did not exit")
	} else if err != nil {
		t.Fatalf("serve did not exit cleanly: %v", err)
	}
	if stderr := child.Stderr.String(); strings.Contains(stderr, "level=ERROR") {
		t.Fatalf("an ordinary shutdown logged an error:\n%s", stderr)
	}
	startChild(t, "--data", dir, "--addr", addr)
	r := testutil.CallRPC(t, base+"/a2a/slow", "tasks/get", fmt.Sprintf(`{"id":%q}`, slowID))
	if r.Result.Status.State != "failed" || r.Result.Status.Message == nil || !strings.Contains(r.Result.Status.Message.Parts[0].Text, "shut down") {
		t.Fatalf("task after graceful shutdown: %+v", r.Result.Status)
	}
}
