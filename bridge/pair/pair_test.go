package pair

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

type fixture struct {
	m    *Manager
	host *server.Host
	eng  *server.Engine
}

func newFixture(t *testing.T, o Options) *fixture {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	host := server.NewHost(server.HostOptions{Transport: server.TransportOptions{Logger: log}})
	m := NewManager(eng, host, o)
	t.Cleanup(func() {
		m.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		eng.Close(ctx)
	})
	return &fixture{m: m, host: host, eng: eng}
}

func (f *fixture) side(t *testing.T, info Info, s Side) *server.AgentHandler {
	t.Helper()
	h, ok := f.host.Handler(AgentName(info.ID, s))
	if !ok {
		t.Fatalf("side %s is not hosted", s)
	}
	return h
}

func textMsg(text, taskID string, end bool) a2a.SendMessageRequest {
	m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(text))
	m.TaskID = taskID
	if end {
		m.Metadata = map[string]any{MetadataKey: map[string]any{"end": true}}
	}
	return a2a.SendMessageRequest{Message: m}
}

type result struct {
	task *a2a.Task
	err  error
}

// send sends blocking on its own goroutine.
func send(h *server.AgentHandler, p a2a.SendMessageRequest) <-chan result {
	c := make(chan result, 1)
	go func() {
		t, err := h.SendMessageForTask(context.Background(), p)
		c <- result{t, err}
	}()
	return c
}

func get(t *testing.T, c <-chan result) *a2a.Task {
	t.Helper()
	select {
	case r := <-c:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.task
	case <-time.After(20 * time.Second):
		t.Fatal("no answer")
	}
	return nil
}

func lastArtifactText(t *testing.T, task *a2a.Task) string {
	t.Helper()
	if len(task.Artifacts) == 0 {
		t.Fatalf("task %s has no artifact: %+v", task.ID, task)
	}
	return textOf(task.Artifacts[len(task.Artifacts)-1].Parts)
}

// waitFinal follows a task until its state is terminal.
func waitFinal(t *testing.T, h *server.AgentHandler, id string) a2a.TaskState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		evs, err := h.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: id}, binding.SubscribeOptions{EndOnInterrupt: true})
		if err != nil {
			t.Fatal(err)
		}
		for range evs {
		}
		task, err := h.GetTask(context.Background(), a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.State.Terminal() || ctx.Err() != nil {
			return task.Status.State
		}
		time.Sleep(5 * time.Millisecond) // an interrupted task's stream ends at once
	}
}

func TestPairConversation(t *testing.T) {
	f := newFixture(t, Options{})
	info, err := f.m.Create("http://x")
	if err != nil {
		t.Fatal(err)
	}
	if info.A.URL != "http://x/a2a/pair-"+info.ID+"-a" || !strings.HasSuffix(info.B.Card, "-b/.well-known/agent-card.json") || info.Events != "http://x/api/pairs/"+info.ID+"/events" {
		t.Fatalf("info: %+v", info)
	}
	a, b := f.side(t, info, A), f.side(t, info, B)
	aTurn := send(a, textMsg("hello from A", "", false))
	bTask := get(t, send(b, textMsg("B is here", "", false)))
	if bTask.Status.State != a2a.TaskStateInputRequired || lastArtifactText(t, bTask) != "hello from A" {
		t.Fatalf("B after joining: %s %+v", bTask.Status.State, bTask.Artifacts)
	}
	last := bTask.History[len(bTask.History)-2] // the message passed on, then the status message
	if md, _ := last.Metadata[MetadataKey].(map[string]any); last.Role != a2a.RoleAgent || md["from"] != "a" || md["turn"] != 1 {
		t.Fatalf("message passed on: %+v", last)
	}
	bTurn := send(b, textMsg("hi A", bTask.ID, false))
	aTask := get(t, aTurn)
	if aTask.Status.State != a2a.TaskStateInputRequired || lastArtifactText(t, aTask) != "hi A" || aTask.Artifacts[0].ArtifactID != "turn-2" {
		t.Fatalf("A after B's answer: %s %+v", aTask.Status.State, aTask.Artifacts)
	}
	// A second task on a side is refused.
	if other := get(t, send(a, textMsg("again", "", false))); other.Status.State != a2a.TaskStateFailed {
		t.Fatalf("second task of side A: %s", other.Status.State)
	}
	// A speaks again, then ends.
	aTurn = send(a, textMsg("how are you?", aTask.ID, false))
	if bTask = get(t, bTurn); lastArtifactText(t, bTask) != "how are you?" || bTask.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("B: %s %+v", bTask.Status.State, bTask.Artifacts)
	}
	bTurn = send(b, textMsg("fine", bTask.ID, false))
	aTask = get(t, aTurn)
	aEnd := send(a, textMsg("bye", aTask.ID, true))
	if aTask = get(t, aEnd); aTask.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("A after ending: %s", aTask.Status.State)
	}
	if bTask = get(t, bTurn); bTask.Status.State != a2a.TaskStateCompleted || lastArtifactText(t, bTask) != "bye" {
		t.Fatalf("B after A ended: %s %+v", bTask.Status.State, bTask.Artifacts)
	}
	r := f.m.room(info.ID)
	r.mu.Lock()
	var turns, joins []string
	for _, ev := range r.events {
		switch ev.typ {
		case "join":
			joins = append(joins, ev.side)
		case "created":
		default:
			turns = append(turns, ev.typ+ev.side)
		}
	}
	r.mu.Unlock()
	if got := strings.Join(turns, " "); got != "turna turnb turna turnb turna end" || len(joins) != 2 {
		t.Fatalf("events: %s, joins %v", got, joins)
	}
}

func TestPairCancelEndsBoth(t *testing.T) {
	f := newFixture(t, Options{})
	info, _ := f.m.Create("http://x")
	a, b := f.side(t, info, A), f.side(t, info, B)
	noWait := false
	p := textMsg("hello", "", false)
	p.Configuration = &a2a.SendMessageConfiguration{Blocking: &noWait}
	aTask := get(t, send(a, p))
	bTask := get(t, send(b, textMsg("join", "", false)))
	if bTask.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("B: %s", bTask.Status.State)
	}
	if _, err := b.CancelTask(context.Background(), a2a.CancelTaskRequest{ID: bTask.ID}); err != nil {
		t.Fatal(err)
	}
	if st := waitFinal(t, a, aTask.ID); st != a2a.TaskStateCanceled {
		t.Fatalf("A after B canceled: %s", st)
	}
	task, _ := a.GetTask(context.Background(), a2a.GetTaskRequest{ID: aTask.ID})
	if !strings.Contains(textOf(task.Status.Message.Parts), "Side B canceled") {
		t.Fatalf("reason: %+v", task.Status.Message)
	}
	// A task of B in input-required is canceled when A cancels, too.
	info, _ = f.m.Create("http://x")
	a, b = f.side(t, info, A), f.side(t, info, B)
	aTurn := send(a, textMsg("hello", "", false))
	bTask = get(t, send(b, textMsg("join", "", false)))
	bTurn := send(b, textMsg("answer", bTask.ID, false))
	aTask = get(t, aTurn)
	bTask = nil
	if _, err := a.CancelTask(context.Background(), a2a.CancelTaskRequest{ID: aTask.ID}); err != nil {
		t.Fatal(err)
	}
	if r := get(t, bTurn); r.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("B after A canceled: %s", r.Status.State)
	}
}

func TestPairIdleAndRemoval(t *testing.T) {
	f := newFixture(t, Options{IdleTTL: time.Hour, MaxOpen: 1})
	info, _ := f.m.Create("http://x")
	if _, err := f.m.Create("http://x"); !errors.Is(err, ErrTooMany) {
		t.Fatalf("second pair with MaxOpen 1: %v", err)
	}
	a, b := f.side(t, info, A), f.side(t, info, B)
	aTurn := send(a, textMsg("hello", "", false))
	bTask := get(t, send(b, textMsg("join", "", false)))
	f.m.sweep(time.Now()) // not idle yet
	if f.m.room(info.ID).ended {
		t.Fatal("ended before its TTL")
	}
	f.m.sweep(time.Now().Add(2 * time.Hour))
	if r := get(t, aTurn); r.Status.State != a2a.TaskStateFailed || !strings.Contains(textOf(r.Status.Message.Parts), "idle") {
		t.Fatalf("A of an idle pair: %+v", r.Status)
	}
	if st := waitFinal(t, b, bTask.ID); st != a2a.TaskStateFailed {
		t.Fatalf("B of an idle pair: %s", st)
	}
	// Ended: a new pair may open; the ended one stays served until it
	// lingered for the TTL.
	if _, err := f.m.Create("http://x"); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.host.Handler(AgentName(info.ID, A)); !ok {
		t.Fatal("an ended pair was removed at once")
	}
	f.m.sweep(time.Now().Add(4 * time.Hour))
	if _, ok := f.host.Handler(AgentName(info.ID, A)); ok || f.m.room(info.ID) != nil {
		t.Fatal("an ended pair is still served after lingering")
	}
}

func TestPairLimits(t *testing.T) {
	f := newFixture(t, Options{MaxMessageBytes: 300, MaxTurns: 2})
	info, _ := f.m.Create("http://x")
	a, b := f.side(t, info, A), f.side(t, info, B)
	big := get(t, send(a, textMsg(strings.Repeat("x", 400), "", false)))
	if big.Status.State != a2a.TaskStateInputRequired || !strings.Contains(textOf(big.Status.Message.Parts), "at most 300") {
		t.Fatalf("too large: %+v", big.Status)
	}
	aTurn := send(a, textMsg("short", big.ID, false))
	bTask := get(t, send(b, textMsg("join", "", false)))
	if lastArtifactText(t, bTask) != "short" {
		t.Fatalf("B got %+v", bTask.Artifacts)
	}
	// Turn 2 is the last: both complete.
	if r := get(t, send(b, textMsg("last", bTask.ID, false))); r.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("B at MaxTurns: %s", r.Status.State)
	}
	if r := get(t, aTurn); r.Status.State != a2a.TaskStateCompleted || lastArtifactText(t, r) != "last" {
		t.Fatalf("A at MaxTurns: %s", r.Status.State)
	}
}

// TestPairStreamEvents: a side that streams its message gets the Task,
// then only status and artifact updates (A2A 1.0 §3.1.2), the other
// side's turn among them, ending at input-required.
func TestPairStreamEvents(t *testing.T) {
	f := newFixture(t, Options{})
	info, err := f.m.Create("http://x")
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.side(t, info, A), f.side(t, info, B)
	aTurn := send(a, textMsg("hello from A", "", false))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	evs, err := b.SendStreamingMessage(ctx, textMsg("B is here", "", false))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var passed *a2a.Message
	var last a2a.TaskState
	var bID string
	for ev, err := range evs {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.Event.(type) {
		case *a2a.Task:
			kinds = append(kinds, "task")
			bID = e.ID
		case *a2a.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
		case *a2a.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+e.Status.State.String())
			last = e.Status.State
			if e.Status.Message != nil {
				if md, _ := e.Status.Message.Metadata[MetadataKey].(map[string]any); md != nil {
					passed = e.Status.Message
				}
			}
		default:
			t.Fatalf("a %T event in the stream (%v so far)", ev.Event, kinds)
		}
	}
	if kinds[0] != "task" || last != a2a.TaskStateInputRequired || !strings.Contains(strings.Join(kinds, " "), "artifact") {
		t.Fatalf("events: %v", kinds)
	}
	if passed == nil || passed.Role != a2a.RoleAgent || textOf(passed.Parts) != "hello from A" {
		t.Fatalf("the message passed on: %+v (events %v)", passed, kinds)
	}
	// B's turn reaches A.
	send(b, textMsg("hi A", bID, false))
	if task := get(t, aTurn); lastArtifactText(t, task) != "hi A" {
		t.Fatalf("A: %+v", task.Artifacts)
	}
}

// TestPairsNotListedOpenly: the side agents, whose URLs are the
// capability to join a pair, are not in the agent list an unknown agent's
// 404 gives, and an unprotected pairs API does not list pairs (403); a
// protected one does.
func TestPairsNotListedOpenly(t *testing.T) {
	for _, protected := range []bool{false, true} {
		o := Options{}
		if protected {
			o.Protect = func(h http.Handler) http.Handler { return h } // stands for the admin API's authentication
		}
		f := newFixture(t, o)
		ts := httptest.NewServer(f.host)
		t.Cleanup(ts.Close)
		api := f.m.Handler(func(*http.Request) string { return ts.URL })
		f.host.Handle("/api/pairs", api)
		info, err := f.m.Create(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(ts.URL + "/a2a/no-such-agent")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || strings.Contains(string(b), info.ID) {
			t.Fatalf("unknown agent: %d %s lists the pair %s", resp.StatusCode, b, info.ID)
		}
		resp, err = http.Get(ts.URL + "/api/pairs")
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case !protected && (resp.StatusCode != http.StatusForbidden || strings.Contains(string(b), info.ID) || !strings.Contains(string(b), "admin.bearer_tokens")):
			t.Fatalf("unprotected list: %d %s", resp.StatusCode, b)
		case protected && (resp.StatusCode != http.StatusOK || !strings.Contains(string(b), info.ID)):
			t.Fatalf("protected list: %d %s", resp.StatusCode, b)
		}
	}
}
