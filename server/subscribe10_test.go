package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/postgres"
)

// turnsAgent interrupts twice before it completes: turn 1 asks for input,
// turn 2 adds an artifact and asks for authorization, turn 3 adds an
// artifact and completes.
type turnsAgent struct{}

func (turnsAgent) Execute(ctx context.Context, req *server.Request, u *server.TaskUpdater) error {
	turn := 0
	for _, m := range req.Task.History {
		if m.Role == a2a.RoleUser {
			turn++
		}
	}
	if turn == 1 {
		return u.RequireInput(ctx, "more, please")
	}
	art := a2a.Artifact{ArtifactID: fmt.Sprintf("turn-%d", turn), Parts: []a2a.Part{a2a.NewTextPart(fmt.Sprintf("answer %d", turn))}}
	if err := u.AddArtifact(ctx, art, false, true); err != nil {
		return err
	}
	if turn == 2 {
		return u.SetStatus(ctx, a2a.TaskStateAuthRequired, u.TextMessage("sign in, please"))
	}
	return u.Complete(ctx, "done")
}

// newTurnsServer serves turnsAgent as the default agent "turns".
func newTurnsServer(t *testing.T) string {
	t.Helper()
	var st store.Store = memory.New()
	switch os.Getenv("A2ABRIDGE_TEST_STORE") { // as newTestServer
	case "sqlite":
		st = sqliteStore(t)
	case "postgres":
		st = pgtest.OpenWith(t, postgres.Options{Exclusive: true})
	}
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	host := server.NewHost(server.HostOptions{Default: "turns", Transport: server.TransportOptions{Logger: testutil.Logger()}})
	host.Add(server.NewHandler(eng, "turns", turnsAgent{}, testutil.Card("turns"), server.HandlerOptions{}))
	ts := testutil.Serve(t, host, eng.Close)
	return ts.URL + "/a2a/turns"
}

// liveFrame is one event of a stream read as it comes: the StreamResponse
// member it holds (task, message, statusUpdate, artifactUpdate; 0.3: the
// kind) and the task state it carries, if any.
type liveFrame struct {
	id, kind, state string
	final           bool
	raw             string
}

// openLive opens an SSE stream and delivers its frames on the channel,
// which is closed when the server ends the stream.
func openLive(t *testing.T, ctx context.Context, method, url, body string, hdr ...string) <-chan liveFrame {
	t.Helper()
	req := testutil.NewRequest(t, ctx, method, url, body)
	req.Header.Set("Accept", "text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	testutil.SetHeaders(req.Header, hdr...)
	resp := testutil.OpenEvents(t, req)
	out := make(chan liveFrame, 64)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		r := sse.NewReader(resp.Body)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			out <- decodeLive(ev.ID, ev.Data)
		}
	}()
	return out
}

func decodeLive(id string, data []byte) liveFrame {
	f := liveFrame{id: id, raw: string(data)}
	var doc map[string]jsontext.Value
	_ = json.Unmarshal(data, &doc)
	if res, ok := doc["result"]; ok { // a JSON-RPC frame
		doc = nil
		_ = json.Unmarshal(res, &doc)
	}
	var body jsontext.Value
	if k, ok := doc["kind"]; ok { // a 0.3 event
		_ = json.Unmarshal(k, &f.kind)
		body, _ = json.Marshal(doc)
	} else {
		for k, v := range doc {
			f.kind, body = k, v
		}
	}
	var ev struct {
		Final  bool `json:"final"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	_ = json.Unmarshal(body, &ev)
	f.state, f.final = ev.Status.State, ev.Final
	return f
}

// next reads the next frame; ok is false when the stream ended.
func next(t *testing.T, ctx context.Context, frames <-chan liveFrame) (liveFrame, bool) {
	t.Helper()
	select {
	case f, ok := <-frames:
		return f, ok
	case <-ctx.Done():
		t.Fatalf("no frame: %v", ctx.Err())
	}
	return liveFrame{}, false
}

// expectFrames reads frames until one in state until (or the end of the
// stream) and checks that the kinds seen are want, in order.
func expectFrames(t *testing.T, ctx context.Context, what string, frames <-chan liveFrame, until string, want ...string) liveFrame {
	t.Helper()
	var got []string
	var raw []string
	for {
		f, ok := next(t, ctx, frames)
		if !ok {
			t.Fatalf("%s: the stream ended after %v (want %v, up to %s): %v", what, got, want, until, raw)
		}
		k := f.kind
		if f.state != "" {
			k += ":" + f.state
		}
		got, raw = append(got, k), append(raw, f.raw)
		if f.state == until {
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("%s: frames %v, want %v: %v", what, got, want, raw)
			}
			return f
		}
	}
}

// TestSubscribeThroughInterruptions: an A2A 1.0 SubscribeToTask (JSON-RPC
// and HTTP+JSON, from the snapshot and resumed with Last-Event-ID) to a
// task in input-required stays open (§3.1.6: it ends at a terminal state
// only) and delivers what the client's next messages bring: the message,
// working, the artifact, the next interruption (auth-required), and then
// the completion, after which it ends. The client's own message is left
// out.
func TestSubscribeThroughInterruptions(t *testing.T) {
	t.Parallel()
	for _, binding := range []string{"JSON-RPC", "HTTP+JSON"} {
		t.Run(binding, func(t *testing.T) {
			t.Parallel()
			url := newTurnsServer(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			send := func(text, taskID string) v10Task {
				t.Helper()
				params := fmt.Sprintf(`{"message":{"role":"ROLE_USER","messageId":%q,"taskId":%q,"parts":[{"text":%q}]}}`, a2a.NewID(), taskID, text)
				var body []byte
				if binding == "JSON-RPC" {
					r := rpc10(t, url, "SendMessage", params)
					if r.Error != nil {
						t.Fatalf("SendMessage: %+v", r.Error)
					}
					body = r.Result
				} else {
					code, b := restDo(t, http.MethodPost, url+"/message:send", params)
					if code != 200 {
						t.Fatalf("message:send: %d %s", code, b)
					}
					body = b
				}
				var res struct {
					Task v10Task `json:"task"`
				}
				if err := json.Unmarshal(body, &res); err != nil {
					t.Fatalf("SendMessage result: %v: %s", err, body)
				}
				return res.Task
			}
			subscribe := func(taskID string, hdr ...string) <-chan liveFrame {
				hdr = append(hdr, "A2A-Version", "1.0")
				if binding == "JSON-RPC" {
					return openLive(t, ctx, http.MethodPost, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"SubscribeToTask","params":{"id":%q}}`, taskID), hdr...)
				}
				return openLive(t, ctx, http.MethodGet, url+"/tasks/"+taskID+":subscribe", "", hdr...)
			}

			task := send("hello", "")
			if task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
				t.Fatalf("first turn: %+v", task)
			}
			fresh := subscribe(task.ID)
			snap := expectFrames(t, ctx, "snapshot", fresh, "TASK_STATE_INPUT_REQUIRED", "task:TASK_STATE_INPUT_REQUIRED")
			// Resumed after the snapshot's event: nothing to replay, and
			// still open.
			resumed := subscribe(task.ID, "Last-Event-ID", snap.id)

			if got := send("second", task.ID); got.Status.State != "TASK_STATE_AUTH_REQUIRED" {
				t.Fatalf("second turn: %+v", got)
			}
			// The client's message is not an event of the subscription:
			// a 1.0 Message in a stream reads as a direct answer (§3.1.2).
			turn2 := []string{"statusUpdate:TASK_STATE_WORKING", "artifactUpdate", "statusUpdate:TASK_STATE_AUTH_REQUIRED"}
			expectFrames(t, ctx, "second turn", fresh, "TASK_STATE_AUTH_REQUIRED", turn2...)
			expectFrames(t, ctx, "second turn (resumed stream)", resumed, "TASK_STATE_AUTH_REQUIRED", turn2...)

			if got := send("third", task.ID); got.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("third turn: %+v", got)
			}
			turn3 := []string{"statusUpdate:TASK_STATE_WORKING", "artifactUpdate", "statusUpdate:TASK_STATE_COMPLETED"}
			for name, s := range map[string]<-chan liveFrame{"stream": fresh, "resumed stream": resumed} {
				expectFrames(t, ctx, "third turn ("+name+")", s, "TASK_STATE_COMPLETED", turn3...)
				if f, ok := next(t, ctx, s); ok {
					t.Fatalf("%s: a frame after the terminal state: %s", name, f.raw)
				}
			}
		})
	}
}

// TestResubscribe03EndsAtInterruption pins A2A 0.3: tasks/resubscribe
// (JSON-RPC) and GET /v1/tasks/{id}:subscribe (HTTP+JSON) of a task in
// input-required send the snapshot and the status with final: true, which
// ends the stream for a 0.3 client (§7.2 final), and the server closes it.
func TestResubscribe03EndsAtInterruption(t *testing.T) {
	t.Parallel()
	url := newTurnsServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := call(t, url, "message/send", `{"message":{"kind":"message","role":"user","messageId":"r03-1","parts":[{"kind":"text","text":"hi"}]}}`)
	if r.Error != nil || r.Result.Status.State != "input-required" {
		t.Fatalf("message/send: %+v", r)
	}
	id := r.Result.ID
	for name, frames := range map[string]<-chan liveFrame{
		"tasks/resubscribe":        openLive(t, ctx, http.MethodPost, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":%q}}`, id)),
		"/v1/tasks/{id}:subscribe": openLive(t, ctx, http.MethodGet, url+"/v1/tasks/"+id+":subscribe", ""),
	} {
		var got []string
		for {
			f, ok := next(t, ctx, frames)
			if !ok {
				break
			}
			got = append(got, fmt.Sprintf("%s:%s:%v", f.kind, f.state, f.final))
		}
		want := "task:input-required:false status-update:input-required:true"
		if name != "tasks/resubscribe" {
			want = "task:TASK_STATE_INPUT_REQUIRED:false statusUpdate:TASK_STATE_INPUT_REQUIRED:true"
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: frames %v, want %s", name, got, want)
		}
	}
}

// TestReplicaSubscribeThroughInterruption: an A2A 1.0 subscription on
// replica A to a task in input-required delivers the turn that a message
// sent to replica B starts (B's appends reach A's stream through the
// store's notifications), until the task is terminal.
func TestReplicaSubscribeThroughInterruption(t *testing.T) {
	forClusters(t, func(t *testing.T, c cluster) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		serve := func(r *replica) string {
			host := server.NewHost(server.HostOptions{Transport: server.TransportOptions{Logger: testutil.Logger()}})
			host.Add(r.h)
			ts := httptest.NewServer(host)
			t.Cleanup(func() {
				ts.CloseClientConnections()
				ts.Close()
			})
			return ts.URL + "/a2a/steps"
		}
		a := serve(startReplica(t, ctx, c, turnsAgent{}, server.EngineOptions{}))
		b := serve(startReplica(t, ctx, c, turnsAgent{}, server.EngineOptions{}))
		send := func(url, text, taskID string) string {
			t.Helper()
			r := rpc10(t, url, "SendMessage", fmt.Sprintf(`{"message":{"role":"ROLE_USER","messageId":%q,"taskId":%q,"parts":[{"text":%q}]}}`, a2a.NewID(), taskID, text))
			var res struct {
				Task v10Task `json:"task"`
			}
			if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
				t.Fatalf("SendMessage: %+v %s", r.Error, r.Result)
			}
			return res.Task.ID
		}
		id := send(a, "hello", "")
		frames := openLive(t, ctx, http.MethodPost, a, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"SubscribeToTask","params":{"id":%q}}`, id), "A2A-Version", "1.0")
		expectFrames(t, ctx, "snapshot", frames, "TASK_STATE_INPUT_REQUIRED", "task:TASK_STATE_INPUT_REQUIRED")
		send(b, "second", id)
		expectFrames(t, ctx, "second turn, run on B", frames, "TASK_STATE_AUTH_REQUIRED",
			"statusUpdate:TASK_STATE_WORKING", "artifactUpdate", "statusUpdate:TASK_STATE_AUTH_REQUIRED")
		send(b, "third", id)
		expectFrames(t, ctx, "third turn, run on B", frames, "TASK_STATE_COMPLETED",
			"statusUpdate:TASK_STATE_WORKING", "artifactUpdate", "statusUpdate:TASK_STATE_COMPLETED")
		if f, ok := next(t, ctx, frames); ok {
			t.Fatalf("a frame after the terminal state: %s", f.raw)
		}
	})
}
