package interop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
)

// callTimeout bounds every test's client calls, streams included.
const callTimeout = 30 * time.Second

// TestInterop runs every scenario with the official a2a-go client against a
// server using the in-memory store and one using the SQLite store.
func TestInterop(t *testing.T) {
	stores := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"memory", func(*testing.T) []string { return []string{"--memory"} }},
		{"sqlite", func(t *testing.T) []string { return []string{"--data", t.TempDir()} }},
	}
	scenarios := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"Card", testCard},
		{"SendEcho", testSendEcho},
		{"StreamEcho", testStreamEcho},
		{"GetTask", testGetTask},
		{"Cancel", testCancel},
		{"CancelStreaming", testCancelStreaming},
		{"Resubscribe", testResubscribe},
		{"ChatMultiTurn", testChat},
		{"ChatStreaming", testChatStreaming},
		{"Errors", testErrors},
		{"ResubscribeUnknownTask", testResubscribeUnknownTask},
		{"StreamToCompletedTask", testStreamToCompletedTask},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, st.args(t)...)
			h := &harness{base: srv.base, http: &http.Client{}}
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					sc.run(t, h)
				})
			}
		})
	}
}

// harness holds what every scenario needs to reach one server.
type harness struct {
	base string // http://127.0.0.1:PORT
	http *http.Client
}

func (h *harness) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}

// card resolves the card of a named agent from its well-known path
// /a2a/{name}/.well-known/agent-card.json.
func (h *harness) card(t *testing.T, name string) *a2a.AgentCard {
	t.Helper()
	card, err := agentcard.NewResolver(h.http).Resolve(h.ctx(t), h.base+"/a2a/"+name)
	if err != nil {
		t.Fatalf("resolve the %s card: %v", name, err)
	}
	return card
}

// client builds an official client, JSON-RPC transport, from the named
// agent's card. With polling, message/send is non-blocking.
func (h *harness) client(t *testing.T, name string, polling bool) *a2aclient.Client {
	t.Helper()
	return h.clientFromCard(t, h.card(t, name), polling)
}

func (h *harness) clientFromCard(t *testing.T, card *a2a.AgentCard, polling bool) *a2aclient.Client {
	t.Helper()
	c, err := a2aclient.NewFromCard(h.ctx(t), card,
		a2aclient.WithJSONRPCTransport(h.http),
		a2aclient.WithConfig(a2aclient.Config{
			PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC},
			Polling:             polling,
		}))
	if err != nil {
		t.Fatalf("client for %s: %v", card.Name, err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func userText(text string) *a2a.MessageSendParams {
	return &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})}
}

func userTextFor(task *a2a.Task, text string) *a2a.MessageSendParams {
	return &a2a.MessageSendParams{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.TextPart{Text: text})}
}

// send calls message/send and requires a Task back.
func send(t *testing.T, ctx context.Context, c *a2aclient.Client, p *a2a.MessageSendParams) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, p)
	if err != nil {
		t.Fatalf("message/send: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("message/send returned %T, want *a2a.Task", res)
	}
	if task.ID == "" || task.ContextID == "" {
		t.Fatalf("task without id or contextId: %+v", task)
	}
	return task
}

// collect drains an event stream of any client, stopping at the first
// error.
func collect[E any](seq iter.Seq2[E, error]) ([]E, error) { return collectN(seq, 0) }

// collectN is collect for a stream that must end within max events (max >
// 0): one still open after max events is an error, so that a stream that
// never ends fails the test instead of hanging it.
func collectN[E any](seq iter.Seq2[E, error], max int) ([]E, error) {
	var evs []E
	for ev, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
		if max > 0 && len(evs) >= max {
			return evs, fmt.Errorf("stream still open after %d events", max)
		}
	}
	return evs, nil
}

// describe renders events compactly for failure messages.
func describe(evs []a2a.Event) string {
	var b strings.Builder
	for i, ev := range evs {
		if i > 0 {
			b.WriteString(", ")
		}
		switch e := ev.(type) {
		case *a2a.Task:
			fmt.Fprintf(&b, "task(%s)", e.Status.State)
		case *a2a.Message:
			fmt.Fprintf(&b, "message(%s %q)", e.Role, textOf(e.Parts))
		case *a2a.TaskStatusUpdateEvent:
			fmt.Fprintf(&b, "status(%s final=%v)", e.Status.State, e.Final)
		case *a2a.TaskArtifactUpdateEvent:
			fmt.Fprintf(&b, "artifact(append=%v last=%v %q)", e.Append, e.LastChunk, textOf(e.Artifact.Parts))
		default:
			fmt.Fprintf(&b, "%T", ev)
		}
	}
	return "[" + b.String() + "]"
}

func textOf(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if tp, ok := p.(a2a.TextPart); ok {
			b.WriteString(tp.Text)
		}
	}
	return b.String()
}

func statusText(s a2a.TaskStatus) string {
	if s.Message == nil {
		return ""
	}
	return textOf(s.Message.Parts)
}

func artifactText(task *a2a.Task) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		b.WriteString(textOf(a.Parts))
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

// wantA2AError checks that err is an *a2a.Error wrapping target.
func wantA2AError(t *testing.T, what string, err, target error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: got no error, want %v", what, target)
	}
	var ae *a2a.Error
	if !errors.As(err, &ae) {
		t.Fatalf("%s: error %v (%T) is not an *a2a.Error", what, err, err)
	}
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %q wraps %v, want %v", what, err, ae.Err, target)
	}
}

// lastStatus requires evs to end with a final status-update in state want,
// and returns it.
func lastStatus(t *testing.T, evs []a2a.Event, want a2a.TaskState) *a2a.TaskStatusUpdateEvent {
	t.Helper()
	if len(evs) == 0 {
		t.Fatalf("empty stream, want a final %s status-update", want)
	}
	st, ok := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
	if !ok || !st.Final || st.Status.State != want {
		t.Fatalf("stream does not end with a final %s status-update: %s", want, describe(evs))
	}
	for _, ev := range evs[:len(evs)-1] {
		if s, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && s.Final {
			t.Fatalf("final status-update before the end of the stream: %s", describe(evs))
		}
	}
	return st
}

func testCard(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	for _, name := range []string{"echo", "chat", "slow"} {
		card := h.card(t, name)
		if card.Name != name {
			t.Errorf("%s card: name %q", name, card.Name)
		}
		if want := h.base + "/a2a/" + name; card.URL != want {
			t.Errorf("%s card: url %q, want %q", name, card.URL, want)
		}
		if card.ProtocolVersion != "0.3.0" {
			t.Errorf("%s card: protocolVersion %q, want 0.3.0", name, card.ProtocolVersion)
		}
		if card.PreferredTransport != a2a.TransportProtocolJSONRPC {
			t.Errorf("%s card: preferredTransport %q, want JSONRPC", name, card.PreferredTransport)
		}
		if !card.Capabilities.Streaming {
			t.Errorf("%s card: capabilities.streaming is false", name)
		}
		if len(card.Skills) != 1 || card.Skills[0].ID != name {
			t.Errorf("%s card: skills %+v, want one skill %q", name, card.Skills, name)
		}
		// The same card through the resolver's explicit-path option.
		again, err := agentcard.NewResolver(h.http).Resolve(ctx, h.base,
			agentcard.WithPath("/a2a/"+name+"/.well-known/agent-card.json"))
		if err != nil {
			t.Fatalf("resolve %s card WithPath: %v", name, err)
		}
		if again.Name != name || again.URL != card.URL {
			t.Errorf("%s card WithPath: name %q url %q", name, again.Name, again.URL)
		}
	}

	// The default agent (echo) answers at the root well-known path, and a
	// client built from that card works.
	def, err := agentcard.NewResolver(h.http).Resolve(ctx, h.base)
	if err != nil {
		t.Fatalf("resolve the default card: %v", err)
	}
	if def.Name != "echo" {
		t.Fatalf("default card: name %q, want echo", def.Name)
	}
	task := send(t, ctx, h.clientFromCard(t, def, false), userText("via the default card"))
	if task.Status.State != a2a.TaskStateCompleted || artifactText(task) != "via the default card" {
		t.Errorf("default agent: state %s, artifact %q", task.Status.State, artifactText(task))
	}

	// The default agent also answers JSON-RPC at POST /.
	root, err := a2aclient.NewFromEndpoints(ctx,
		[]a2a.AgentInterface{{URL: h.base + "/", Transport: a2a.TransportProtocolJSONRPC}},
		a2aclient.WithJSONRPCTransport(h.http))
	if err != nil {
		t.Fatalf("client for POST /: %v", err)
	}
	task = send(t, ctx, root, userText("via POST /"))
	if task.Status.State != a2a.TaskStateCompleted || artifactText(task) != "via POST /" {
		t.Errorf("POST /: state %s, artifact %q", task.Status.State, artifactText(task))
	}
}

func testSendEcho(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "echo", false)

	// Plain text.
	task := send(t, ctx, c, userText("hello, interop"))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s, want completed", task.Status.State)
	}
	if len(task.Artifacts) != 1 {
		t.Fatalf("%d artifacts, want 1: %+v", len(task.Artifacts), task.Artifacts)
	}
	if got := artifactText(task); got != "hello, interop" {
		t.Errorf("artifact text %q, want %q", got, "hello, interop")
	}
	if task.Artifacts[0].Name != "echo" || task.Artifacts[0].ID == "" {
		t.Errorf("artifact name %q id %q", task.Artifacts[0].Name, task.Artifacts[0].ID)
	}

	// Text, data and file parts come back as one artifact holding the same parts.
	parts := a2a.ContentParts{
		a2a.TextPart{Text: "text ✓"},
		a2a.DataPart{Data: map[string]any{"n": float64(42), "list": []any{"a", true, nil}, "obj": map[string]any{"k": "v"}}},
		a2a.FilePart{File: a2a.FileBytes{
			FileMeta: a2a.FileMeta{Name: "note.txt", MimeType: "text/plain"},
			Bytes:    base64.StdEncoding.EncodeToString([]byte("file body\n")),
		}},
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	task = send(t, ctx, c, &a2a.MessageSendParams{Message: msg})
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("state %s with %d artifacts, want completed with 1", task.Status.State, len(task.Artifacts))
	}
	got, _ := json.Marshal(task.Artifacts[0].Parts)
	want, _ := json.Marshal(parts)
	if string(got) != string(want) {
		t.Errorf("artifact parts\n got %s\nwant %s", got, want)
	}
	if len(task.History) == 0 || task.History[0].ID != msg.ID || task.History[0].Role != a2a.MessageRoleUser {
		t.Errorf("history does not start with the sent message %s: %+v", msg.ID, task.History)
	} else if task.History[0].TaskID != task.ID || task.History[0].ContextID != task.ContextID {
		t.Errorf("history message has taskId %q contextId %q, want %q %q",
			task.History[0].TaskID, task.History[0].ContextID, task.ID, task.ContextID)
	}
}

func testStreamEcho(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "echo", false)
	// Long enough to be split into several artifact chunks, with multi-byte runes.
	input := strings.Repeat("0123456789abcdef", 12) + " ✓ déjà vu ✓"
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: input})
	evs, err := collect(c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: msg}))
	if err != nil {
		t.Fatalf("message/stream: %v after %s", err, describe(evs))
	}
	t.Logf("events: %s", describe(evs))
	if len(evs) < 3 {
		t.Fatalf("%d events, want a task, artifact updates and a final status: %s", len(evs), describe(evs))
	}
	first, ok := evs[0].(*a2a.Task)
	if !ok {
		t.Fatalf("first event is %T, want *a2a.Task: %s", evs[0], describe(evs))
	}
	if first.Status.State.Terminal() {
		t.Errorf("first task event is already %s", first.Status.State)
	}
	if len(first.History) == 0 || first.History[0].ID != msg.ID {
		t.Errorf("first task event does not carry the sent message in its history: %+v", first.History)
	}
	final := lastStatus(t, evs, a2a.TaskStateCompleted)
	if final.TaskID != first.ID || final.ContextID != first.ContextID {
		t.Errorf("final event for task %s/%s, want %s/%s", final.TaskID, final.ContextID, first.ID, first.ContextID)
	}

	var chunks []*a2a.TaskArtifactUpdateEvent
	for _, ev := range evs[1 : len(evs)-1] {
		switch e := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			chunks = append(chunks, e)
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.State != a2a.TaskStateWorking {
				t.Errorf("intermediate status-update in state %s", e.Status.State)
			}
		default:
			t.Errorf("unexpected %T between the task and the final status", ev)
		}
	}
	if len(chunks) < 2 {
		t.Fatalf("%d artifact-update events, want the long text in several chunks: %s", len(chunks), describe(evs))
	}
	var text strings.Builder
	for i, ch := range chunks {
		if ch.TaskID != first.ID || ch.ContextID != first.ContextID {
			t.Errorf("chunk %d for task %s/%s", i, ch.TaskID, ch.ContextID)
		}
		if ch.Artifact == nil {
			t.Fatalf("chunk %d has no artifact", i)
		}
		if ch.Artifact.ID != chunks[0].Artifact.ID {
			t.Errorf("chunk %d artifactId %s, want %s", i, ch.Artifact.ID, chunks[0].Artifact.ID)
		}
		if ch.Append != (i > 0) {
			t.Errorf("chunk %d append=%v, want %v", i, ch.Append, i > 0)
		}
		if ch.LastChunk != (i == len(chunks)-1) {
			t.Errorf("chunk %d lastChunk=%v, want %v", i, ch.LastChunk, i == len(chunks)-1)
		}
		text.WriteString(textOf(ch.Artifact.Parts))
	}
	if text.String() != input {
		t.Errorf("streamed artifact text\n got %q\nwant %q", text.String(), input)
	}

	// The stored task holds the whole artifact, chunks appended.
	got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: first.ID})
	if err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 || artifactText(got) != input {
		t.Errorf("stored task: state %s, %d artifacts, text %q", got.Status.State, len(got.Artifacts), artifactText(got))
	}
}

func testGetTask(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "echo", false)
	sent := send(t, ctx, c, userText("get me"))

	got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: sent.ID})
	if err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	if got.ID != sent.ID || got.ContextID != sent.ContextID {
		t.Errorf("got task %s/%s, want %s/%s", got.ID, got.ContextID, sent.ID, sent.ContextID)
	}
	if got.Status.State != a2a.TaskStateCompleted || artifactText(got) != "get me" {
		t.Errorf("state %s artifact %q, want completed %q", got.Status.State, artifactText(got), "get me")
	}
	if len(got.History) != len(sent.History) || len(got.History) == 0 {
		t.Errorf("history has %d messages, message/send returned %d", len(got.History), len(sent.History))
	}

	one, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: sent.ID, HistoryLength: ptr(1)})
	if err != nil {
		t.Fatalf("tasks/get historyLength=1: %v", err)
	}
	if len(one.History) != 1 {
		t.Fatalf("historyLength=1 gave %d messages", len(one.History))
	}
	if last := got.History[len(got.History)-1]; one.History[0].ID != last.ID {
		t.Errorf("historyLength=1 gave message %s, want the latest %s", one.History[0].ID, last.ID)
	}
	if one.Status.State != a2a.TaskStateCompleted || artifactText(one) != "get me" {
		t.Errorf("historyLength=1: state %s artifact %q", one.Status.State, artifactText(one))
	}
}

func testCancel(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "slow", true) // polling: message/send returns at once

	task := send(t, ctx, c, userText("30"))
	if task.Status.State.Terminal() || task.Status.State == a2a.TaskStateInputRequired {
		t.Fatalf("non-blocking send of slow 30: state %s, want submitted or working", task.Status.State)
	}

	canceled, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: task.ID})
	if err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	if canceled.ID != task.ID || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("tasks/cancel returned task %s in state %s, want %s canceled", canceled.ID, canceled.Status.State, task.ID)
	}

	got := pollState(t, ctx, c, task.ID, a2a.TaskStateCanceled)
	if len(got.Artifacts) != 0 {
		t.Errorf("canceled task has artifacts: %+v", got.Artifacts)
	}

	_, err = c.CancelTask(ctx, &a2a.TaskIDParams{ID: task.ID})
	wantA2AError(t, "second tasks/cancel", err, a2a.ErrTaskNotCancelable)

	// Still canceled afterwards.
	if got := pollState(t, ctx, c, task.ID, a2a.TaskStateCanceled); got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("state %s after the rejected cancel", got.Status.State)
	}

	// A completed task cannot be canceled either.
	ec := h.client(t, "echo", false)
	echo := send(t, ctx, ec, userText("done"))
	_, err = ec.CancelTask(ctx, &a2a.TaskIDParams{ID: echo.ID})
	wantA2AError(t, "tasks/cancel of a completed task", err, a2a.ErrTaskNotCancelable)
}

// pollState polls tasks/get until the task reaches want (or the context ends).
func pollState(t *testing.T, ctx context.Context, c *a2aclient.Client, id a2a.TaskID, want a2a.TaskState) *a2a.Task {
	t.Helper()
	return pollTask(t, ctx, string(id), want, func() (*a2a.Task, a2a.TaskState, error) {
		got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: id})
		if err != nil {
			return nil, "", err
		}
		return got, got.Status.State, nil
	})
}

// pollTask calls get, which fetches the task id with some client and
// returns it with its state, every 50 ms until that state is want, and
// returns the task. An error of get, or the end of ctx first, fails t.
func pollTask[T any, S comparable](t *testing.T, ctx context.Context, id string, want S, get func() (T, S, error)) T {
	t.Helper()
	for {
		task, state, err := get()
		if err != nil {
			t.Fatalf("tasks/get %s: %v", id, err)
		}
		if state == want {
			return task
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task %s is %v, never reached %v", id, state, want)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func testCancelStreaming(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "slow", false)
	id, canceled := streamAndCancel(t, ctx, c)
	if canceled.Status.State != a2a.TaskStateCanceled {
		t.Errorf("tasks/cancel returned state %s", canceled.Status.State)
	}
	pollState(t, ctx, c, id, a2a.TaskStateCanceled)
}

// streamAndCancel streams a 30-second task to c (a client of a slow agent),
// cancels the task while the stream is open, as soon as it opens with the
// Task, and requires the stream to end with the task's final canceled
// status-update. It returns the task's id and what tasks/cancel returned.
func streamAndCancel(t *testing.T, ctx context.Context, c *a2aclient.Client) (a2a.TaskID, *a2a.Task) {
	t.Helper()
	var evs []a2a.Event
	var id a2a.TaskID
	var canceled *a2a.Task
	for ev, err := range c.SendStreamingMessage(ctx, userText("30")) {
		if err != nil {
			t.Fatalf("message/stream: %v after %s", err, describe(evs))
		}
		evs = append(evs, ev)
		if id == "" {
			task, ok := ev.(*a2a.Task)
			if !ok {
				t.Fatalf("first event is %T, want *a2a.Task", ev)
			}
			id = task.ID
			canceled, err = c.CancelTask(ctx, &a2a.TaskIDParams{ID: id})
			if err != nil {
				t.Fatalf("tasks/cancel: %v", err)
			}
		}
	}
	t.Logf("events: %s", describe(evs))
	if final := lastStatus(t, evs, a2a.TaskStateCanceled); final.TaskID != id {
		t.Errorf("final event for task %s, want %s", final.TaskID, id)
	}
	return id, canceled
}

func testResubscribe(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "slow", true)
	task := send(t, ctx, c, userText("3"))

	// While it runs: progress updates, the result artifact, the final status.
	evs, err := collect(c.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: task.ID}))
	if err != nil {
		t.Fatalf("tasks/resubscribe: %v after %s", err, describe(evs))
	}
	t.Logf("running: %s", describe(evs))
	lastStatus(t, evs, a2a.TaskStateCompleted)
	progress, artifacts := 0, 0
	for i, ev := range evs {
		if ti, ok := ev.(a2a.TaskInfoProvider); ok && ti.TaskInfo().TaskID != task.ID {
			t.Errorf("event %d is for task %s, want %s", i, ti.TaskInfo().TaskID, task.ID)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			if i != 0 {
				t.Errorf("task snapshot at position %d, want it first if at all", i)
			}
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.State == a2a.TaskStateWorking && !e.Final && strings.HasPrefix(statusText(e.Status), "progress: ") {
				progress++
			}
		case *a2a.TaskArtifactUpdateEvent:
			artifacts++
			if got := textOf(e.Artifact.Parts); got != "done after 3s" {
				t.Errorf("artifact text %q", got)
			}
		}
	}
	if progress == 0 {
		t.Errorf("no working progress status-update while resubscribed: %s", describe(evs))
	}
	if artifacts != 1 {
		t.Errorf("%d artifact-updates, want 1: %s", artifacts, describe(evs))
	}

	// Once finished: the stream gives the final state and ends.
	evs, err = collect(c.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: task.ID}))
	if err != nil {
		t.Fatalf("tasks/resubscribe on a completed task: %v after %s", err, describe(evs))
	}
	t.Logf("finished: %s", describe(evs))
	if len(evs) == 0 {
		t.Fatalf("tasks/resubscribe on a completed task: empty stream")
	}
	for _, ev := range evs {
		switch e := ev.(type) {
		case *a2a.Task:
			if e.Status.State != a2a.TaskStateCompleted || artifactText(e) != "done after 3s" {
				t.Errorf("snapshot: state %s artifact %q", e.Status.State, artifactText(e))
			}
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.State != a2a.TaskStateCompleted || !e.Final {
				t.Errorf("status-update %s final=%v after completion", e.Status.State, e.Final)
			}
		default:
			t.Errorf("unexpected %T replayed for a completed task", ev)
		}
	}
}

func testChat(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "chat", false)

	task := send(t, ctx, c, userText("hello"))
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("turn 1: state %s, want input-required", task.Status.State)
	}
	if m := task.Status.Message; m == nil || m.Role != a2a.MessageRoleAgent || !strings.Contains(textOf(m.Parts), `"hello"`) {
		t.Errorf("turn 1: status message %+v", m)
	}

	second := send(t, ctx, c, userTextFor(task, "how are you"))
	if second.ID != task.ID || second.ContextID != task.ContextID {
		t.Fatalf("turn 2 went to task %s/%s, want %s/%s", second.ID, second.ContextID, task.ID, task.ContextID)
	}
	if second.Status.State != a2a.TaskStateInputRequired || !strings.Contains(statusText(second.Status), "turn 2") {
		t.Fatalf("turn 2: state %s %q, want input-required turn 2", second.Status.State, statusText(second.Status))
	}

	full, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	if len(full.History) != 4 {
		t.Errorf("history has %d messages after two turns, want 4 (user, agent, user, agent)", len(full.History))
	}
	last2, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID, HistoryLength: ptr(2)})
	if err != nil {
		t.Fatalf("tasks/get historyLength=2: %v", err)
	}
	if len(last2.History) != 2 || textOf(last2.History[0].Parts) != "how are you" || last2.History[1].Role != a2a.MessageRoleAgent {
		t.Errorf("historyLength=2: %+v, want the second user turn and its answer", last2.History)
	}

	done := send(t, ctx, c, userTextFor(task, "bye"))
	if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("bye: task %s state %s, want %s completed", done.ID, done.Status.State, task.ID)
	}
	if !strings.Contains(statusText(done.Status), "Goodbye") {
		t.Errorf("bye: status message %q", statusText(done.Status))
	}

	// A completed task takes no more messages.
	_, err = c.SendMessage(ctx, userTextFor(task, "again"))
	if err == nil {
		t.Fatalf("message/send to a completed task succeeded")
	}
	var ae *a2a.Error
	if !errors.As(err, &ae) {
		t.Fatalf("message/send to a completed task: %v (%T), want an *a2a.Error", err, err)
	}
	t.Logf("message/send to a completed task: %v (%v)", err, ae.Err)
}

func testChatStreaming(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "chat", false)

	evs, err := collect(c.SendStreamingMessage(ctx, userText("hi")))
	if err != nil {
		t.Fatalf("message/stream: %v after %s", err, describe(evs))
	}
	t.Logf("turn 1: %s", describe(evs))
	first, ok := evs[0].(*a2a.Task)
	if !ok {
		t.Fatalf("first event is %T, want *a2a.Task", evs[0])
	}
	st := lastStatus(t, evs, a2a.TaskStateInputRequired)
	if !strings.Contains(statusText(st.Status), `"hi"`) {
		t.Errorf("turn 1 status message %q", statusText(st.Status))
	}

	evs, err = collect(c.SendStreamingMessage(ctx, userTextFor(first, "bye")))
	if err != nil {
		t.Fatalf("message/stream bye: %v after %s", err, describe(evs))
	}
	t.Logf("turn 2: %s", describe(evs))
	st = lastStatus(t, evs, a2a.TaskStateCompleted)
	if st.TaskID != first.ID {
		t.Errorf("bye went to task %s, want %s", st.TaskID, first.ID)
	}
	if t0, ok := evs[0].(*a2a.Task); ok && t0.ID != first.ID {
		t.Errorf("second stream starts with task %s, want %s", t0.ID, first.ID)
	}
}

func testErrors(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "echo", false)

	_, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: "no-such-task"})
	wantA2AError(t, "tasks/get of an unknown task", err, a2a.ErrTaskNotFound)

	_, err = c.CancelTask(ctx, &a2a.TaskIDParams{ID: "no-such-task"})
	wantA2AError(t, "tasks/cancel of an unknown task", err, a2a.ErrTaskNotFound)

	_, err = c.SendMessage(ctx, &a2a.MessageSendParams{Message: &a2a.Message{
		ID: a2a.NewMessageID(), Role: a2a.MessageRoleUser, TaskID: "no-such-task",
		Parts: a2a.ContentParts{a2a.TextPart{Text: "hi"}},
	}})
	wantA2AError(t, "message/send to an unknown task", err, a2a.ErrTaskNotFound)
}

// testResubscribeUnknownTask: a streaming request that fails up front must
// surface its JSON-RPC error through the official client.
func testResubscribeUnknownTask(t *testing.T, h *harness) {
	c := h.client(t, "echo", false)
	evs, err := collect(c.ResubscribeToTask(h.ctx(t), &a2a.TaskIDParams{ID: "no-such-task"}))
	if err == nil {
		t.Fatalf("tasks/resubscribe of an unknown task: no error, %d events %s; want TaskNotFound (-32001). "+
			"a2a-go reads streaming answers as SSE only: a plain application/json error body is an empty stream to it", len(evs), describe(evs))
	}
	wantA2AError(t, "tasks/resubscribe of an unknown task", err, a2a.ErrTaskNotFound)
}

// testStreamToCompletedTask: message/stream to a task in a terminal state
// must fail visibly through the official client.
func testStreamToCompletedTask(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "echo", false)
	task := send(t, ctx, c, userText("finish"))
	evs, err := collect(c.SendStreamingMessage(ctx, userTextFor(task, "more")))
	if err == nil {
		t.Fatalf("message/stream to a completed task: no error, %d events %s; want a JSON-RPC error. "+
			"a2a-go reads streaming answers as SSE only: a plain application/json error body is an empty stream to it", len(evs), describe(evs))
	}
	var ae *a2a.Error
	if !errors.As(err, &ae) {
		t.Fatalf("message/stream to a completed task: %v (%T), want an *a2a.Error", err, err)
	}
}
