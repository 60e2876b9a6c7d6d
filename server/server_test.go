package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

type frame struct {
	id  int64
	res testutil.RPCAnswer
}

// openStream posts a streaming request and returns its frames as they come.
func openStream(t testing.TB, ctx context.Context, url, body string, hdr ...string) (<-chan frame, *http.Response) {
	t.Helper()
	resp := testutil.OpenEvents(t, testutil.NewRequest(t, ctx, http.MethodPost, url, body, hdr...))
	ch := make(chan frame, 1024)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		r := sse.NewReader(resp.Body)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			var res testutil.RPCAnswer
			if err := json.Unmarshal(ev.Data, &res); err != nil {
				t.Errorf("bad frame %q: %v", ev.Data, err)
				return
			}
			id, _ := strconv.ParseInt(ev.ID, 10, 64)
			ch <- frame{id: id, res: res}
		}
	}()
	return ch, resp
}

func TestStreamDropAndResumeLosesNothing(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	url := ts.URL + "/a2a/slow"
	ctx, cancel := context.WithCancel(context.Background())
	ch, _ := openStream(t, ctx, url, `{"jsonrpc":"2.0","id":"a","method":"message/stream","params":`+testutil.SendParams03("1", "drop-1", "")+`}`)
	var first []frame
	for f := range ch {
		first = append(first, f)
		if len(first) == 4 {
			break
		}
	}
	cancel() // drop the connection mid-stream
	for range ch {
	}
	taskID := first[0].res.Result.ID
	last := first[len(first)-1].id
	ch2, _ := openStream(t, context.Background(), url,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":"b","method":"tasks/resubscribe","params":{"id":%q}}`, taskID),
		"Last-Event-ID", strconv.FormatInt(last, 10))
	rest := testutil.Drain(t, ch2, 10*time.Second)
	all := append(first, rest...)
	for i, f := range all {
		if f.id != int64(i+1) {
			t.Fatalf("frame %d has id %d: events lost or repeated: %v", i, f.id, ids(all))
		}
	}
	end := all[len(all)-1].res.Result
	if end.Kind != "status-update" || !end.Final || end.Status.State != "completed" {
		t.Fatalf("last event %+v, want final completed status-update", end)
	}
	if all[0].res.ID != "a" || rest[0].res.ID != "b" {
		t.Fatalf("frames must carry their request's id")
	}
}

func ids(fs []frame) []int64 {
	var out []int64
	for _, f := range fs {
		out = append(out, f.id)
	}
	return out
}

func TestClientDisconnectDoesNotCancel(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	url := ts.URL + "/a2a/slow"
	ctx, cancel := context.WithCancel(context.Background())
	ch, _ := openStream(t, ctx, url, `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":`+testutil.SendParams03("1", "dc-1", "")+`}`)
	f := <-ch
	cancel()
	taskID := f.res.Result.ID
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := testutil.CallRPC(t, url, "tasks/get", fmt.Sprintf(`{"id":%q}`, taskID))
		if r.Result.Status.State == "completed" {
			break
		}
		if r.Result.Status.State != "submitted" && r.Result.Status.State != "working" || time.Now().After(deadline) {
			t.Fatalf("task state %q after client disconnect", r.Result.Status.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestKeepAliveAndCancelEndsStream(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{transport: server.TransportOptions{KeepAlive: 10 * time.Millisecond}})
	url := ts.URL + "/a2a/wait"
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":`+testutil.SendParams03("x", "ka-1", "")+`}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	for _, h := range [][2]string{{"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}} {
		if got := resp.Header.Get(h[0]); got != h[1] {
			t.Errorf("%s = %q, want %q", h[0], got, h[1])
		}
	}
	br := bufio.NewReader(resp.Body)
	var taskID string
	sawKeepAlive := false
	for !sawKeepAlive {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, ":") {
			sawKeepAlive = true
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok && taskID == "" {
			var r testutil.RPCAnswer
			_ = json.Unmarshal([]byte(d), &r)
			taskID = r.Result.ID
		}
	}
	r := testutil.CallRPC(t, url, "tasks/cancel", fmt.Sprintf(`{"id":%q}`, taskID))
	if r.Error != nil || r.Result.Status.State != "canceled" {
		t.Fatalf("cancel: %+v", r)
	}
	select {
	case id := <-ts.cancel:
		if id != taskID {
			t.Fatalf("cancel hook ran for %q", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel hook did not run")
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rest), `"state":"canceled"`) || !strings.Contains(string(rest), `"final":true`) {
		t.Fatalf("stream did not end with the canceled status: %s", rest)
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{transport: server.TransportOptions{MaxBodyBytes: 1024}})
	big := strings.Repeat("x", 4096)
	resp, b := testutil.Post(t, ts.URL+"/", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":`+testutil.SendParams03(big, "big", "")+`}`)
	var r testutil.RPCAnswer
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || r.Error == nil || r.Error.Code != a2a.CodeInvalidRequest || !strings.Contains(r.Error.Message, "1024") {
		t.Fatalf("oversized body: %d %s", resp.StatusCode, b)
	}
	// Chunked body without Content-Length, written whole before the
	// answer is read: the server answers once it has read the limit and
	// then closes, so a client still writing might see a broken pipe
	// instead of the answer (as net/http's transport once did here).
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":` + testutil.SendParams03(big, "big2", "") + `}`
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw := "POST / HTTP/1.1\r\nHost: a2abridge\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
		strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n\r\n"
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	resp2, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if !strings.Contains(string(b2), `"code":-32600`) {
		t.Fatalf("chunked oversized body: %s", b2)
	}
}

func TestBlockingSendWaitsAndConcurrentSends(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	r := testutil.CallRPC(t, ts.URL+"/a2a/slow", "message/send", testutil.SendParams03("0", "slow-b", ""))
	if r.Result.Status.State != "completed" || len(r.Result.Artifacts) != 1 {
		t.Fatalf("blocking send to slow: %+v", r)
	}
	var wg sync.WaitGroup
	seen := sync.Map{}
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := fmt.Sprintf("msg %d", i)
			r := testutil.CallRPC(t, ts.URL+"/", "message/send", testutil.SendParams03(text, fmt.Sprintf("c-%d", i), ""))
			if r.Result.Status.State != "completed" || r.Result.Artifacts[0].Parts[0].Text != text {
				t.Errorf("send %d: %+v", i, r)
			}
			if _, dup := seen.LoadOrStore(r.Result.ID, true); dup {
				t.Errorf("task id %s reused", r.Result.ID)
			}
		}()
	}
	wg.Wait()
}

func TestEventsEndpointReplaysFromStartAndTails(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	r := testutil.CallRPC(t, ts.URL+"/a2a/slow", "message/send", testutil.SendParams03("1", "ev-1", `,"configuration":{"blocking":false}`))
	resp, err := http.Get(ts.URL + "/a2a/slow/tasks/" + r.Result.ID + "/events?from=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body)
	var n int64
	var last string
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if ev.ID != strconv.FormatInt(n, 10) {
			t.Fatalf("event %d has id %s", n, ev.ID)
		}
		last = string(ev.Data)
	}
	if n < 3 || !strings.Contains(last, `"state":"completed"`) {
		t.Fatalf("replay had %d events, last %s", n, last)
	}
}

func TestRecoveryFailsTasksLeftRunning(t *testing.T) {
	t.Parallel()
	st := memory.New()
	ts := newTestServer(t, testServerOptions{store: st})
	r := testutil.CallRPC(t, ts.URL+"/a2a/wait", "message/send", testutil.SendParams03("x", "rec-1", `,"configuration":{"blocking":false}`))
	// A second engine on the same store plays the restarted process: it
	// recovers as it is made.
	eng2, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng2.Close(context.Background())
	info, err := st.Task(context.Background(), r.Result.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info.Task.Status.State != a2a.TaskStateFailed || info.Task.Status.Message == nil {
		t.Fatalf("recovered task: %+v", info.Task.Status)
	}
	if got := info.Task.Status.Message.Parts[0].Text(); got != server.RecoveryMessage {
		t.Fatalf("recovery message %q", got)
	}
}

// TestShortRoutes: the default agent (echo) also answers JSON-RPC at
// POST /rpc, and GET /stream/{id}?from=N replays its task's events after N
// (as Last-Event-ID: N does) and ends with the final one; an unknown task
// there is a 404.
func TestShortRoutes(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	r := testutil.CallRPC(t, ts.URL+"/rpc", "message/send", testutil.SendParams03("short", "short-1", ""))
	if r.Result.Status.State != "completed" {
		t.Fatalf("POST /rpc: %+v", r)
	}
	read := func(url string, hdr ...string) []string {
		t.Helper()
		resp := testutil.Open(t, testutil.NewRequest(t, context.Background(), http.MethodGet, url, "", hdr...))
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return []string{strconv.Itoa(resp.StatusCode)}
		}
		var ids []string
		rd := sse.NewReader(resp.Body)
		for {
			ev, err := rd.Next()
			if err != nil {
				return ids
			}
			ids = append(ids, ev.ID)
		}
	}
	all := read(ts.URL + "/stream/" + r.Result.ID)
	if len(all) < 3 || all[0] != "1" {
		t.Fatalf("GET /stream/{id}: events %v", all)
	}
	if got := read(ts.URL + "/stream/" + r.Result.ID + "?from=2"); len(got) != len(all)-2 || got[0] != "3" {
		t.Fatalf("?from=2: events %v of %v", got, all)
	}
	if got := read(ts.URL+"/stream/"+r.Result.ID, "Last-Event-ID", "2"); len(got) != len(all)-2 || got[0] != "3" {
		t.Fatalf("Last-Event-ID: 2: events %v of %v", got, all)
	}
	if got := read(ts.URL + "/stream/no-such-task"); len(got) != 1 || got[0] != "404" {
		t.Fatalf("unknown task: %v", got)
	}
}
