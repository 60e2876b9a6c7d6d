package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
)

// describe names an event of a stream: its kind and the state it carries.
func describe(e a2a.Event) string {
	switch v := e.(type) {
	case *a2a.Task:
		return "task:" + v.Status.State.String()
	case *a2a.TaskStatusUpdateEvent:
		return "status:" + v.Status.State.String()
	case *a2a.TaskArtifactUpdateEvent:
		return "artifact"
	case *a2a.Message:
		return "message"
	}
	return fmt.Sprintf("%T", e)
}

// subscription consumes a SubscribeToTask stream on a goroutine: its events,
// then "end" (or "error: …") when the sequence is over.
func subscription(ctx context.Context, c *client.Client, id, from string) <-chan string {
	out := make(chan string, 64)
	go func() {
		defer close(out)
		for ev, err := range c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: id}, from) {
			if err != nil {
				out <- "error: " + err.Error()
				return
			}
			out <- describe(ev.Event)
		}
		out <- "end"
	}()
	return out
}

// upTo reads as many events as want holds (fewer when the sequence ends
// first) and compares them with want.
func upTo(t *testing.T, ctx context.Context, what string, events <-chan string, want ...string) {
	t.Helper()
	var got []string
	for len(got) < len(want) {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("%s: the sequence closed after %v, want %v", what, got, want)
			}
			got = append(got, e)
			if (e == "end" || strings.HasPrefix(e, "error: ")) && len(got) < len(want) {
				t.Fatalf("%s: %v, want %v", what, got, want)
			}
		case <-ctx.Done():
			t.Fatalf("%s: %v after %v, want %v", what, ctx.Err(), got, want)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

// TestSubscribeFollowsInterruptions: over A2A 1.0 (JSON-RPC and
// HTTP+JSON) a subscription to a task in input-required follows it
// through the next turns (another input-required in the middle) until it
// completes (A2A 1.0 §3.1.6), also resumed from a Last-Event-ID and when
// its connection breaks while the task waits (the client resumes); over
// 0.3 it ends at the interrupted status (final: true).
func TestSubscribeFollowsInterruptions(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	for _, in := range interfaces {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			o := in.opts
			o.RetryBaseDelay = 10 * time.Millisecond
			c := dial(t, ts.URL+"/a2a/chat", o)
			res, err := c.SendMessage(ctx, text("hi"))
			if err != nil || res.(*a2a.Task).Status.State != a2a.TaskStateInputRequired {
				t.Fatalf("chat: %+v %v", res, err)
			}
			id := res.(*a2a.Task).ID
			if in.want.ProtocolVersion == a2a.Version03 {
				upTo(t, ctx, "0.3", subscription(ctx, c, id, ""), "task:input-required", "status:input-required", "end")
				return
			}
			// A second client of the same interface, behind a proxy that
			// breaks the subscription's connection in the middle of its
			// second event.
			proxy := newCutProxy(t, strings.TrimPrefix(ts.URL, "http://"), 0)
			proxy.cutAtEvent = 1
			card, err := client.Resolve(ctx, ts.URL+"/a2a/chat", client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cut, err := client.New(retarget(card, ts.URL, "http://"+proxy.ln.Addr().String()), o)
			if err != nil {
				t.Fatal(err)
			}
			var first string
			for ev, err := range c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: id}, "") {
				if err != nil {
					t.Fatal(err)
				}
				first = ev.ID // the snapshot's event id
				break
			}
			streams := map[string]<-chan string{
				"fresh":   subscription(ctx, c, id, ""),
				"resumed": subscription(ctx, c, id, first),
				"cut":     subscription(ctx, cut, id, ""),
			}
			upTo(t, ctx, "fresh", streams["fresh"], "task:input-required")
			upTo(t, ctx, "cut", streams["cut"], "task:input-required")
			turn := func(text_ string) {
				p := text(text_)
				p.Message.TaskID = id
				if _, err := c.SendMessage(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			turn("more")
			for name, s := range streams {
				upTo(t, ctx, name+", second turn", s, "status:working", "status:input-required")
			}
			turn("bye")
			for name, s := range streams {
				upTo(t, ctx, name+", last turn", s, "status:working", "status:completed", "end")
			}
			if !proxy.cut.Load() {
				t.Fatal("the proxy cut nothing: the test did not exercise a resume")
			}
		})
	}
}
