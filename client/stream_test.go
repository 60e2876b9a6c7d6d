package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
)

// A server that numbers SSE ids per connection (not an event log) must not
// make the client drop events after a resume; the resume is flagged Gap.
func TestPerConnectionIDsLoseNothing(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	ts := cardServer(t, func(base string) string { return cardJSON(base+"/rpc", "") }, func(w http.ResponseWriter, r *http.Request) {
		id := rpcID(r)
		w.Header().Set("Content-Type", "text/event-stream")
		ev := func(n int, body string) {
			fmt.Fprintf(w, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", n, id, body)
		}
		st := func(text string, final bool) string {
			state := "working"
			if final {
				state = "completed"
			}
			return fmt.Sprintf(`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":%q,"message":{"kind":"message","messageId":%q,"role":"agent","parts":[{"kind":"text","text":%q}]}},"final":%v}`, state, text, text, final)
		}
		if conns.Add(1) == 1 {
			ev(1, `{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}`)
			ev(2, st("a", false))
			return
		}
		ev(1, st("b", false))
		ev(2, st("c", false))
		ev(3, st("d", true))
	})
	c := dial(t, ts.URL, client.Options{RetryBaseDelay: time.Millisecond})
	var texts []string
	gaps := 0
	for ev, err := range c.SendStreamingMessage(context.Background(), text("x")) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Gap {
			gaps++
		}
		if su, ok := ev.Event.(*a2a.TaskStatusUpdateEvent); ok {
			texts = append(texts, su.Status.Message.Parts[0].Text())
		}
	}
	if strings.Join(texts, "") != "abcd" || gaps != 1 {
		t.Fatalf("texts %v, gaps %d", texts, gaps)
	}
}

// A server that answers every resubscription with the same non-final event
// and hangs up does not keep the client reconnecting forever.
func TestRepeatedEventsDoNotLoop(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	ts := cardServer(t, func(base string) string { return cardJSON(base+"/rpc", "") }, func(w http.ResponseWriter, r *http.Request) {
		conns.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"status-update\",\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"working\"},\"final\":false}}\n\n", rpcID(r))
	})
	c := dial(t, ts.URL, client.Options{RetryBaseDelay: time.Millisecond, MaxRetries: 3})
	var last error
	for _, err := range c.SubscribeToTask(context.Background(), a2a.SubscribeToTaskRequest{ID: "t"}, "") {
		last = err
	}
	if last == nil || conns.Load() > 5 {
		t.Fatalf("connections %d, end %v", conns.Load(), last)
	}
}

// Ranging over a stream twice repeats the same call.
func TestStreamSequenceIsReusable(t *testing.T) {
	t.Parallel()
	var methods []string
	ts := cardServer(t, func(base string) string { return cardJSON(base+"/rpc", "") }, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		methods = append(methods, strings.Split(strings.Split(string(b), `"method":"`)[1], `"`)[0])
		id := strings.Split(strings.Split(string(b), `"id":`)[1], ",")[0]
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"status-update\",\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"completed\"},\"final\":true}}\n\n", id)
	})
	c := dial(t, ts.URL, client.Options{})
	seq := c.SendStreamingMessage(context.Background(), text("x"))
	for range 2 {
		for _, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if strings.Join(methods, ",") != "message/stream,message/stream" {
		t.Fatalf("methods %v", methods)
	}
}
