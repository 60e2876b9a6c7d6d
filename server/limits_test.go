package server_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/schematest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// countingHost serves one agent, "count", that completes each task and
// counts its executions.
func countingHost(t *testing.T, o server.TransportOptions) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var runs atomic.Int64
	eng := server.NewEngine(memory.New(), server.EngineOptions{Logger: quiet()})
	o.Logger = quiet()
	host := server.NewHost(server.HostOptions{Transport: o})
	host.Add(server.NewHandler(eng, "count", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		runs.Add(1)
		return u.Complete(ctx, "done")
	}), card(), server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		eng.Close(ctx)
	})
	return ts, &runs
}

func sendBatch(n int, prefix string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"message/send","params":%s}`, i, sendParams("hi", fmt.Sprintf("%s-%d", prefix, i), ""))
	}
	return b.String() + "]"
}

// A batch over TransportOptions.MaxBatch gets one -32600 error object (id
// null) naming its size and the limit, and none of its members runs; a
// batch at the limit runs every member.
func TestBatchOverLimitRunsNothing(t *testing.T) {
	t.Parallel()
	ts, runs := countingHost(t, server.TransportOptions{MaxBatch: 3})
	resp, b := post(t, ts.URL+"/a2a/count", sendBatch(4, "over"))
	var r rpcResult
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
	_, b = post(t, ts.URL+"/a2a/count", sendBatch(3, "at"))
	var rs []rpcResult
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
	resp, b := post(t, ts.URL+"/a2a/count", body)
	if len(b) > 512 {
		t.Fatalf("answer of %d bytes: %.200s…", len(b), b)
	}
	var r rpcResult
	if err := json.Unmarshal(b, &r); err != nil || resp.StatusCode != 200 || r.Error == nil || r.Error.Code != a2a.CodeInvalidRequest ||
		!strings.Contains(r.Error.Message, "200000") || !strings.Contains(r.Error.Message, fmt.Sprint(server.DefaultMaxBatch)) {
		t.Fatalf("HTTP %d %s (%v)", resp.StatusCode, b, err)
	}
}
