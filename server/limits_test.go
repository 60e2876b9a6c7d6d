package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/schematest"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// countingHost serves one agent, "count", that completes each task and
// counts its executions.
func countingHost(t *testing.T, o server.TransportOptions) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var runs atomic.Int64
	eng := servertest.Engine(t, server.EngineOptions{})
	o.Logger = testutil.Logger()
	host := server.NewHost(server.HostOptions{Transport: o})
	host.Add(server.NewHandler(eng, "count", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		runs.Add(1)
		return u.Complete(ctx, "done")
	}), card(), server.HandlerOptions{}))
	ts := testutil.Serve(t, host, eng.Close)
	return ts, &runs
}

func sendBatch(n int, prefix string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"message/send","params":%s}`, i, testutil.SendParams03("hi", fmt.Sprintf("%s-%d", prefix, i), ""))
	}
	return b.String() + "]"
}

// A batch over TransportOptions.MaxBatch gets one -32600 error object (id
// null) naming its size and the limit, and none of its members runs; a
// batch at the limit runs every member.
func TestBatchOverLimitRunsNothing(t *testing.T) {
	t.Parallel()
	ts, runs := countingHost(t, server.TransportOptions{MaxBatch: 3})
	resp, b := testutil.Post(t, ts.URL+"/a2a/count", sendBatch(4, "over"))
	var r testutil.RPCAnswer
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("over the limit: not one response object: %v: %s", err, b)
	}
	if resp.StatusCode != 200 || r.Error == nil || r.Error.Code != a2a.CodeInvalidRequest || r.ID != nil ||
		!strings.Contains(r.Error.Message, "4") || !strings.Contains(r.Error.Message, "limit of 3") {
		t.Fatalf("over the limit: HTTP %d %s", resp.StatusCode, b)
	}
	schematest.Validate(t, "JSONRPCErrorResponse", b)
	if n := runs.Load(); n != 0 {
		t.Fatalf("%d members of a refused batch ran", n)
	}
	_, b = testutil.Post(t, ts.URL+"/a2a/count", sendBatch(3, "at"))
	var rs []testutil.RPCAnswer
	if err := json.Unmarshal(b, &rs); err != nil || len(rs) != 3 {
		t.Fatalf("at the limit: %v: %s", err, b)
	}
	for _, m := range rs {
		if m.Error != nil || m.Result.Status.State != "completed" {
			t.Fatalf("at the limit: %s", b)
		}
	}
	validateBatch(t, b)
}

// The reported attack: a body of many `{}` members was answered member by
// member (a million gave a 108 MB answer and 948 MiB RSS). With the
// default limit it gets one short error.
func TestHugeBatchOfEmptyObjectsGetsOneError(t *testing.T) {
	t.Parallel()
	ts, _ := countingHost(t, server.TransportOptions{})
	body := "[" + strings.TrimSuffix(strings.Repeat("{},", 200000), ",") + "]"
	resp, b := testutil.Post(t, ts.URL+"/a2a/count", body)
	if len(b) > 512 {
		t.Fatalf("answer of %d bytes: %.200s…", len(b), b)
	}
	var r testutil.RPCAnswer
	if err := json.Unmarshal(b, &r); err != nil || resp.StatusCode != 200 || r.Error == nil || r.Error.Code != a2a.CodeInvalidRequest ||
		!strings.Contains(r.Error.Message, "200000") || !strings.Contains(r.Error.Message, fmt.Sprint(server.DefaultMaxBatch)) {
		t.Fatalf("HTTP %d %s (%v)", resp.StatusCode, b, err)
	}
}

// slowBody opens a raw connection to addr, sends the headers of a POST
// announcing a body of declared bytes and then one byte every gap for as
// long as the connection takes them. It returns the first line of the
// answer ("" when there was none) once the server has closed the
// connection, or an error when the connection was still open after wait.
func slowBody(t *testing.T, addr, path string, declared int, gap, wait time.Duration) (string, error) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", path, addr, declared)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tk := time.NewTicker(gap)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	rd := bufio.NewReader(conn)
	line, err := rd.ReadString('\n')
	if err == nil {
		_, err = io.Copy(io.Discard, rd) // the rest of the answer, up to the close
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return strings.TrimSpace(line), fmt.Errorf("the connection was still open after %s (answer %q)", wait, strings.TrimSpace(line))
	}
	return strings.TrimSpace(line), nil
}

// A body that trickles in is cut at TransportOptions.BodyReadTimeout: HTTP
// 408 and a closed connection (net/http does not go on reading the rest),
// instead of holding the connection (and a buffer of the announced size)
// for as long as the client likes.
func TestSlowBodyTimesOut(t *testing.T) {
	t.Parallel()
	ts, runs := countingHost(t, server.TransportOptions{BodyReadTimeout: 300 * time.Millisecond})
	addr := strings.TrimPrefix(ts.URL, "http://")
	// Unbounded, this body would take 100000 × 50 ms.
	line, err := slowBody(t, addr, "/a2a/count", 100000, 50*time.Millisecond, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("answer: %q", line)
	if line != "" && !strings.HasPrefix(line, "HTTP/1.1 408") {
		t.Fatalf("slow body answered %q, want 408 or a closed connection", line)
	}
	if runs.Load() != 0 {
		t.Fatal("a request whose body never arrived ran")
	}
	// A prompt request on a new connection is not affected.
	if r := testutil.CallRPC(t, ts.URL+"/a2a/count", "message/send", testutil.SendParams03("hi", "prompt", "")); r.Result.Status.State != "completed" {
		t.Fatalf("prompt request after a slow one: %+v", r)
	}
}

// The body deadline ends with the body: a blocking message/send and an SSE
// stream that outlast it are answered in full, and the connection is
// reused.
func TestBodyReadTimeoutDoesNotCutLongRequests(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{transport: server.TransportOptions{BodyReadTimeout: 100 * time.Millisecond}})
	// slow runs 1 s here, ten times the body deadline.
	r := testutil.CallRPC(t, ts.URL+"/a2a/slow", "message/send", testutil.SendParams03("1", "long-send", ""))
	if r.Error != nil || r.Result.Status.State != "completed" {
		t.Fatalf("blocking send outlasting the body deadline: %+v", r)
	}
	ch, _ := openStream(t, context.Background(), ts.URL+"/a2a/slow", `{"jsonrpc":"2.0","id":2,"method":"message/stream","params":`+testutil.SendParams03("1", "long-stream", "")+`}`)
	frames := testutil.Drain(t, ch, 30*time.Second)
	if len(frames) == 0 || !frames[len(frames)-1].res.Result.Final || frames[len(frames)-1].res.Result.Status.State != "completed" {
		t.Fatalf("stream outlasting the body deadline ended early: %d frames", len(frames))
	}
	// And the kept-alive connection still serves the next request.
	resp, err := http.Get(ts.URL + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
