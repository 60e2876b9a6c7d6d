package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
)

// tracedPost posts a JSON-RPC body with client and reports whether the
// request went on a reused connection.
func tracedPost(t *testing.T, client *http.Client, url, body string) (*http.Response, bool) {
	t.Helper()
	var reused atomic.Bool
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { reused.Store(i.Reused) },
	}))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, reused.Load()
}

// A message/stream is an ordinary response, however long: the client's
// connection is kept alive for its next request. A resubscription takes
// its connection over at once (Connection: close): its keep-alives and
// events come as valid chunks, its body ends cleanly, and the connection
// is not used again.
func TestStreamTakeover(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{transport: server.TransportOptions{KeepAlive: 50 * time.Millisecond}})
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	stream := func(msgID string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":` + testutil.SendParams03("x", msgID, "") + `}`
	}
	resp, _ := tracedPost(t, client, ts.URL+"/", stream("to-1"))
	if b, err := io.ReadAll(resp.Body); err != nil || !strings.Contains(string(b), `"final":true`) {
		t.Fatalf("short stream: %v %s", err, b)
	}
	resp.Body.Close()
	resp, reused := tracedPost(t, client, ts.URL+"/", stream("to-2"))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !reused {
		t.Error("the connection of a short stream was not kept alive")
	}

	// A task that runs until canceled: its message/stream and a
	// resubscription, both held past several keep-alives.
	resp, _ = tracedPost(t, client, ts.URL+"/a2a/wait", stream("to-3"))
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var taskID string
	readKeepAlives := func(br *bufio.Reader, n int) {
		t.Helper()
		for keepAlives := 0; keepAlives < n; {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(line, ":") {
				keepAlives++
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok && taskID == "" {
				_, after, _ := strings.Cut(d, `"id":"`)
				taskID, _, _ = strings.Cut(after, `"`)
			}
		}
	}
	readKeepAlives(br, 2)
	if taskID == "" {
		t.Fatal("no task in the stream")
	}
	resub := &http.Client{Transport: &http.Transport{}}
	defer resub.CloseIdleConnections()
	rresp, _ := tracedPost(t, resub, ts.URL+"/a2a/wait", fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/resubscribe","params":{"id":%q}}`, taskID))
	defer rresp.Body.Close()
	if !rresp.Close || len(rresp.TransferEncoding) == 0 || rresp.TransferEncoding[0] != "chunked" {
		t.Errorf("resubscribe: Connection: close %v, Transfer-Encoding %v; want close and chunked", rresp.Close, rresp.TransferEncoding)
	}
	rbr := bufio.NewReader(rresp.Body)
	readKeepAlives(rbr, 3)

	// Events after the takeover, and the end of both streams.
	if r := testutil.CallRPC(t, ts.URL+"/a2a/wait", "tasks/cancel", fmt.Sprintf(`{"id":%q}`, taskID)); r.Error != nil {
		t.Fatalf("cancel: %+v", r.Error)
	}
	for name, br := range map[string]*bufio.Reader{"message/stream": br, "resubscribe": rbr} {
		rest, err := io.ReadAll(br)
		if err != nil {
			t.Fatalf("%s: the body did not end cleanly: %v", name, err)
		}
		if !strings.Contains(string(rest), `"state":"canceled"`) || !strings.Contains(string(rest), `"final":true`) {
			t.Fatalf("%s did not end with the canceled status: %s", name, rest)
		}
	}
	resp.Body.Close()
	rresp.Body.Close()
	time.Sleep(50 * time.Millisecond) // a server's close reaches the clients' pools
	for name, c := range map[string]*http.Client{"message/stream": client, "resubscribe": resub} {
		resp, reused := tracedPost(t, c, ts.URL+"/", stream("to-4-"+name))
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if want := name == "message/stream"; reused != want {
			t.Errorf("after a long %s, connection reused %v, want %v", name, reused, want)
		}
	}
}
