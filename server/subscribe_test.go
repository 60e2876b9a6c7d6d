package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/binding"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
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
	eng, err := server.NewEngine(context.Background(), envStore(t), server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	host := servertest.Host("turns", server.NewHandler(eng, "turns", turnsAgent{}, testutil.Card("turns"), server.HandlerOptions{}))
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
	r := testutil.CallRPC(t, url, "message/send", `{"message":{"kind":"message","role":"user","messageId":"r03-1","parts":[{"kind":"text","text":"hi"}]}}`)
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
			host := servertest.Host("", r.h)
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

func TestFollowStress(t *testing.T) {
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			eng, err := server.NewEngine(context.Background(), namedStore(t, name), server.EngineOptions{Logger: testutil.Logger()})
			if err != nil {
				t.Fatal(err)
			}
			const N = 600
			agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
				for i := range N {
					if err := u.AddArtifact(ctx, a2a.Artifact{ArtifactID: fmt.Sprint(i % 7), Parts: []a2a.Part{a2a.NewTextPart("x")}}, i >= 7, false); err != nil {
						return err
					}
				}
				return nil
			})
			h := server.NewHandler(eng, "a", agent, card(), server.HandlerOptions{})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for task := 0; task < 4; task++ {
				evs, err := h.SendStreamingMessage(ctx, testutil.UserMessage("go", ""))
				if err != nil {
					t.Fatal(err)
				}
				var id string
				for ev := range evs {
					id = ev.Event.(*a2a.Task).ID
					break
				}
				for s := 0; s < 8; s++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
						from := int64(rand.IntN(2))
						evs, err := h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: id}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
						if err != nil {
							t.Error(err)
							return
						}
						next := from + 1
						last := a2a.Event(nil)
						for ev, err := range evs {
							if err != nil {
								t.Error(err)
								return
							}
							if ev.Seq != next {
								t.Errorf("task %s: got seq %d want %d", id, ev.Seq, next)
								return
							}
							next++
							last = ev.Event
							if rand.IntN(50) == 0 {
								time.Sleep(time.Millisecond)
							}
						}
						su, ok := last.(*a2a.TaskStatusUpdateEvent)
						if !ok || !su.Final || ctx.Err() != nil {
							t.Errorf("stream did not end on final: %T ctx=%v", last, ctx.Err())
						}
					}()
				}
			}
			wg.Wait()
			eng.Close(context.Background())
		})
	}
}

// The agent asks for input and then attaches an artifact (legal: the task
// is not terminal). A resubscribe from the first event replays past the
// input-required event and then ends by itself: the stream of an
// interrupted task does not wait for another final event.
func TestReplayPastInterruptedEnds(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if err := u.RequireInput(ctx, "which one?"); err != nil {
			return err
		}
		return u.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("options")}}, false, true)
	})
	h := server.NewHandler(eng, "a", agent, card(), server.HandlerOptions{})
	ctx := context.Background()
	t1, err := h.SendMessageForTask(ctx, testutil.UserMessage("hi", ""))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	from := int64(0)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	evs, err := h.SubscribeToTask(sctx, a2a.SubscribeToTaskRequest{ID: t1.ID}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n := 0
	for ev, err := range evs {
		if err != nil {
			break
		}
		n++
		t.Logf("seq %d %T", ev.Seq, ev.Event)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("replay stream of an input-required task did not end by itself (%d events, ended by ctx after %v)", n, el.Round(time.Millisecond))
	}
	eng.Close(ctx)
}

// TestStreamHold checks StreamEvent's hold hint, which lets the transport send
// events together: it is set only when the next event is at hand or the
// stream ends after the event, never on an event that may be followed
// by a wait.
func TestStreamHold(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	step := make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, u *server.TaskUpdater) error {
		if err := u.Working(ctx, "thinking"); err != nil {
			return err
		}
		<-step // until the test saw the working status
		if err := u.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("x")}}, false, true); err != nil {
			return err
		}
		return u.Complete(ctx, "")
	})
	h := server.NewHandler(eng, "hold", agent, testutil.Card("hold"), server.HandlerOptions{})
	ctx := context.Background()
	events, err := h.SendStreamingMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	var taskID string
	var got []binding.StreamEvent
	for ev, err := range events {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
		switch e := ev.Event.(type) {
		case *a2a.Task:
			// The snapshot may be held: the working status-update is
			// published before the agent waits, and may be at hand.
			taskID = e.ID
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.State == a2a.TaskStateWorking {
				if ev.Hold {
					t.Error("a status-update with nothing behind it is held")
				}
				close(step)
			}
		}
	}
	last := got[len(got)-1]
	if su, ok := last.Event.(*a2a.TaskStatusUpdateEvent); !ok || !su.Final || !last.Hold {
		t.Errorf("last event %T (hold %v): want the final status-update, held (the stream ends after it)", last.Event, last.Hold)
	}

	// A replay of the finished task: every event is at hand.
	from := int64(0)
	replay, err := h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: taskID}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ev, err := range replay {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if !ev.Hold {
			t.Errorf("replayed event %d (%T) not held", ev.Seq, ev.Event)
		}
	}
	if n != len(got) { // the log's first record is the task as created
		t.Errorf("replay: %d events, want %d", n, len(got))
	}
}

// TestFollowRunningTask checks that a subscriber joining a running task
// gets every event after its starting point once, in order: from the
// engine's tail of recent events or from the log when the tail does not
// reach back far enough.
func TestFollowRunningTask(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	progressed, finish := make(chan struct{}), make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, u *server.TaskUpdater) error {
		for i := range 20 { // more than the engine's tail holds
			if err := u.Working(ctx, "step "+strconv.Itoa(i)); err != nil {
				return err
			}
		}
		close(progressed)
		<-finish
		return u.Complete(ctx, "")
	})
	h := server.NewHandler(eng, "follow", agent, testutil.Card("follow"), server.HandlerOptions{})
	ctx := context.Background()
	task, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("go")),
		Configuration: &a2a.SendMessageConfiguration{Blocking: new(bool)}})
	if err != nil {
		t.Fatal(err)
	}
	<-progressed // seq 1 (the task) and 2..21 (working) are published
	type result struct {
		seqs []int64
		err  error
	}
	var results []chan result
	for _, from := range []int64{0, 3, 15, 21} {
		events, err := h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
		if err != nil {
			t.Fatal(err)
		}
		c := make(chan result, 1)
		results = append(results, c)
		go func() {
			var r result
			for ev, err := range events {
				if err != nil {
					r.err = err
					break
				}
				r.seqs = append(r.seqs, ev.Seq)
			}
			c <- r
		}()
	}
	time.Sleep(50 * time.Millisecond) // let every subscriber take what was published
	close(finish)
	for i, from := range []int64{0, 3, 15, 21} {
		r := <-results[i]
		if r.err != nil {
			t.Fatalf("from %d: %v", from, r.err)
		}
		want := from + 1
		for _, s := range r.seqs {
			if s != want {
				t.Fatalf("from %d: got seqs %v, want %d..22 each once", from, r.seqs, from+1)
			}
			want++
		}
		if want != 23 {
			t.Fatalf("from %d: got seqs %v, want %d..22", from, r.seqs, from+1)
		}
	}
}

// eventsCounter counts the log reads of a store.
type eventsCounter struct {
	*memory.Store
	reads atomic.Int64
}

func (s *eventsCounter) Events(ctx context.Context, taskID string, after int64, limit int) ([]store.Record, error) {
	s.reads.Add(1)
	return s.Store.Events(ctx, taskID, after, limit)
}

// TestFollowEndedTask checks that a subscriber arriving just after a task
// ended gets its last events from the engine's tail of recently ended
// tasks, without a log read, and from the log once that tail is gone.
func TestFollowEndedTask(t *testing.T) {
	st := &eventsCounter{Store: memory.New()}
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	h := server.NewHandler(eng, "quick", server.AgentFunc(func(ctx context.Context, req *server.Request, u *server.TaskUpdater) error {
		if err := u.Working(ctx, "on it"); err != nil {
			return err
		}
		return u.Complete(ctx, "done")
	}), testutil.Card("quick"), server.HandlerOptions{})
	ctx := context.Background()
	send := func() string {
		task, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("go"))})
		if err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	replay := func(id string) []int64 {
		from := int64(1)
		events, err := h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: id}, binding.SubscribeOptions{From: &from, EndOnInterrupt: true})
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for ev, err := range events {
			if err != nil {
				t.Fatal(err)
			}
			seqs = append(seqs, ev.Seq)
		}
		return seqs
	}
	id := send()
	before := st.reads.Load()
	if got := replay(id); !slices.Equal(got, []int64{2, 3}) {
		t.Fatalf("replay of the ended task: seqs %v, want [2 3]", got)
	}
	if n := st.reads.Load() - before; n != 0 {
		t.Errorf("%d log reads for a task that just ended", n)
	}
	for range 1100 { // more tasks than the engine keeps the tails of
		send()
	}
	before = st.reads.Load()
	if got := replay(id); !slices.Equal(got, []int64{2, 3}) {
		t.Fatalf("replay from the log: seqs %v, want [2 3]", got)
	}
	if st.reads.Load() == before {
		t.Error("no log read for a task whose tail the engine no longer keeps")
	}
}

// TestStreamHoldSnapshot: the snapshot that opens a stream is held when
// the execution has published events by then (they leave in one write),
// and sent at once when the agent emits nothing before it waits.
func TestStreamHoldSnapshot(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	step := make(chan struct{})
	quiet := server.AgentFunc(func(ctx context.Context, req *server.Request, u *server.TaskUpdater) error {
		<-step // until the test saw the snapshot
		return u.Complete(ctx, "")
	})
	h := server.NewHandler(eng, "quiet", quiet, testutil.Card("quiet"), server.HandlerOptions{})
	events, err := h.SendStreamingMessage(context.Background(), a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	first := true
	for ev, err := range events {
		if err != nil {
			t.Fatal(err)
		}
		if first {
			if _, ok := ev.Event.(*a2a.Task); !ok || ev.Hold {
				t.Errorf("first event %T held %v: want the snapshot, not held (nothing follows until the agent goes on)", ev.Event, ev.Hold)
			}
			close(step)
			first = false
		}
	}
	// An agent that has emitted an event by the time the stream decides:
	// the snapshot is held (the event leaves with it in one write). The
	// hook orders the agent's artifact before that decision.
	eng2 := servertest.Engine(t, server.EngineOptions{})
	t.Cleanup(func() { _ = eng2.Close(context.Background()) })
	emitted, release := make(chan struct{}), make(chan struct{})
	server.SetBeforeSnapshotHold(eng2, func(string) {
		select {
		case <-emitted:
		case <-time.After(10 * time.Second):
			t.Error("the agent did not emit its artifact within 10 s")
		}
	})
	busy := server.AgentFunc(func(ctx context.Context, req *server.Request, u *server.TaskUpdater) error {
		if err := u.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("x")}}, false, true); err != nil {
			return err
		}
		close(emitted)
		<-release
		return u.Complete(ctx, "")
	})
	hb := server.NewHandler(eng2, "busy", busy, testutil.Card("busy"), server.HandlerOptions{})
	events, err = hb.SendStreamingMessage(context.Background(), a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	first = true
	var kinds []string
	for ev, err := range events {
		if err != nil {
			t.Fatal(err)
		}
		if first {
			if _, ok := ev.Event.(*a2a.Task); !ok || !ev.Hold {
				t.Errorf("first event %T held %v: want the snapshot, held (the agent's artifact is at hand)", ev.Event, ev.Hold)
			}
			close(release)
			first = false
		}
		kinds = append(kinds, fmt.Sprintf("%T", ev.Event))
	}
	if len(kinds) != 3 {
		t.Errorf("stream events %v: want the snapshot, the artifact and the final status", kinds)
	}
}
