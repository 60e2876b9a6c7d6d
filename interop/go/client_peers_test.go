package interop

// Tests of OUR client SDK (github.com/a2abridge/a2abridge/client) and OUR
// CLI (the client commands of the a2abridge binary) against three servers:
// `a2abridge serve --memory`, the a2a-go peer (cmd/peer-a2ago) and the
// @a2a-js/sdk peer (../js/peer-server.mjs), all as black boxes on loopback,
// over A2A 0.3 JSON-RPC, and against a2abridge and the JS peer (--rest) over
// A2A 0.3 HTTP+JSON too (the "-rest" targets).
// Every A2A 0.3.0 method runs against every server. Where a server deviates
// from a2abridge or lacks a feature, the test asserts what our client does
// with it, usually the typed error it reports (errors.Is / errors.As), as
// listed in the quirks table of ../README.md.
//
// Unlike the other files of this package, this one uses a2abridge's own a2a
// package (imported as a2a), not a2a-go's.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// ocKind says which server a target is.
type ocKind int

const (
	ocOurs  ocKind = iota // a2abridge serve --memory
	ocA2AGo               // cmd/peer-a2ago (a2a-go v0.3.15 a2asrv)
	ocJS                  // ../js/peer-server.mjs (@a2a-js/sdk 0.3.14)
)

// ocTarget is one server under test.
type ocTarget struct {
	name string
	kind ocKind
	base string // http://127.0.0.1:PORT
	skip string // set when the server cannot be started here
	// rest: speak the server's 0.3 HTTP+JSON binding (/v1/…), not JSON-RPC.
	rest bool
}

// opts are the client options of this file's scenarios: A2A 0.3, which
// a2abridge's union card offers beside 1.0 (client_v1_test.go covers 1.0),
// over HTTP+JSON for a rest target.
func (tg *ocTarget) opts() client.Options {
	if tg.rest {
		return client.Options{Protocol: "0.3", Binding: a2a.TransportHTTPJSON}
	}
	return client.Options{Protocol: "0.3"}
}

// cli runs the CLI (see runCLI) with --protocol 0.3 (and --binding rest
// for a rest target).
func (tg *ocTarget) cli(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	args = append(args, "--protocol", "0.3")
	if tg.rest {
		args = append(args, "--binding", "rest")
	}
	return runCLI(t, stdin, args...)
}

func (tg *ocTarget) url(agent string) string { return tg.base + "/a2a/" + agent }

// ifaceURL is the URL of the interface our client calls for agent: the
// JS peer serves HTTP+JSON below /rest, the others at the agent's URL.
func (tg *ocTarget) ifaceURL(agent string) string {
	if tg.rest && tg.kind == ocJS {
		return tg.url(agent) + "/rest"
	}
	return tg.url(agent)
}

// streamError is the error our client reports when a stream is refused
// with want before it starts: want, but @a2a-js/sdk 0.3.14's REST handler
// fails to write any such error ("Bug: toJson serializer and body must be
// provided for non-204 responses.", an InternalError).
func (tg *ocTarget) streamError(want *a2a.Error) *a2a.Error {
	if tg.rest && tg.kind == ocJS {
		return a2a.ErrInternal
	}
	return want
}

// per returns the value that applies to tg's server.
func per[T any](tg *ocTarget, ours, a2ago, js T) T {
	switch tg.kind {
	case ocA2AGo:
		return a2ago
	case ocJS:
		return js
	}
	return ours
}

// TestOurClient starts the three servers once and runs every scenario,
// through the client SDK and through the CLI binary, against each of them.
func TestOurClient(t *testing.T) {
	targets := []*ocTarget{
		{name: "a2abridge", kind: ocOurs, base: startServer(t, "--memory").base},
		{name: "a2abridge-rest", kind: ocOurs, base: startServer(t, "--memory").base, rest: true},
		{name: "a2a-go", kind: ocA2AGo, base: startPeer(t, buildPeer(t, peerPkg), "--keep-alive", "250ms").base},
		startJSPeer(t, false),
		startJSPeer(t, true),
	}
	scenarios := []struct {
		name string
		run  func(t *testing.T, tg *ocTarget)
	}{
		// client SDK
		{"SDK/Discovery", ocDiscovery},
		{"SDK/SendEcho", ocSendEcho},
		{"SDK/Chat", ocChat},
		{"SDK/StreamEcho", ocStreamEcho},
		{"SDK/StreamChat", ocStreamChat},
		{"SDK/GetTask", ocGetTask},
		{"SDK/Cancel", ocCancel},
		{"SDK/ResubscribeRunning", ocResubscribeRunning},
		{"SDK/ResubscribeFinished", ocResubscribeFinished},
		{"SDK/ResubscribeInputRequired", ocResubscribeInputRequired},
		{"SDK/StreamErrors", ocStreamErrors},
		{"SDK/Push", ocPush},
		{"SDK/ExtendedCard", ocExtendedCard},
		{"SDK/StreamResume", ocStreamResume},
		// CLI
		{"CLI/Card", ocCLICard},
		{"CLI/SendGetStream", ocCLISendGetStream},
		{"CLI/Cancel", ocCLICancel},
		{"CLI/Resubscribe", ocCLIResubscribe},
		{"CLI/ResubscribeFinished", ocCLIResubscribeFinished},
		{"CLI/Push", ocCLIPush},
		{"CLI/ExtendedCard", ocCLIExtendedCard},
		{"CLI/Chat", ocCLIChat},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			if tg.skip != "" {
				skipOrFail(t, tg.skip)
			}
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					sc.run(t, tg)
				})
			}
		})
	}
}

// startJSPeer starts `node peer-server.mjs --port 0` in ../js (with --rest,
// its 0.3 HTTP+JSON binding too, which a rest target speaks). Without
// ../js/node_modules (npm ci not run) the target is skipped, with a message.
func startJSPeer(t *testing.T, rest bool) *ocTarget {
	t.Helper()
	tg := &ocTarget{name: "js", kind: ocJS, rest: rest}
	args := []string{"--port", "0"}
	if rest {
		tg.name += "-rest"
		args = append(args, "--rest")
	}
	tg.base, tg.skip = startNodePeer(t, "JS peer", "sdk", "peer-server.mjs", args...)
	return tg
}

// ---------------------------------------------------------------- helpers

func ocCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}

// dial resolves u (a base URL of an agent) with our client, speaking 0.3
// over the target's binding.
func (tg *ocTarget) dial(t *testing.T, ctx context.Context, u string) *client.Client {
	t.Helper()
	c, err := client.Dial(ctx, u, tg.opts())
	if err != nil {
		t.Fatalf("client.Dial(%s): %v", u, err)
	}
	want := a2a.TransportJSONRPC
	if tg.rest {
		want = a2a.TransportHTTPJSON
	}
	if in := c.Interface(); in.ProtocolVersion != a2a.Version03 || in.Binding != want {
		t.Fatalf("client.Dial(%s): interface %s, want A2A 0.3 %s", u, in, want)
	}
	return c
}

// ocMsg is message/send params with one text part, continuing taskID/contextID when set.
func ocMsg(text, taskID, contextID string) a2a.SendMessageRequest {
	m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(text))
	m.TaskID, m.ContextID = taskID, contextID
	return a2a.SendMessageRequest{Message: m}
}

func ocNonBlocking(p a2a.SendMessageRequest) a2a.SendMessageRequest {
	p.Configuration = &a2a.SendMessageConfiguration{Blocking: ptr(false)}
	return p
}

// ocSend calls message/send and requires a Task back.
func ocSend(t *testing.T, ctx context.Context, c *client.Client, p a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, p)
	if err != nil {
		t.Fatalf("message/send %q: %v", testutil.Text(p.Message.Parts), err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("message/send returned %T, want *a2a.Task", res)
	}
	return task
}

// ocWantErr requires err to be a JSON-RPC/A2A error (an *a2a.Error found by
// errors.As) matching target by errors.Is, and neither an HTTP nor a
// protocol error.
func ocWantErr(t *testing.T, what string, err error, target *a2a.Error) {
	t.Helper()
	var ae *a2a.Error
	if err == nil || !errors.As(err, &ae) || !errors.Is(err, target) {
		t.Fatalf("%s: got error %v (%T), want an *a2a.Error with code %d", what, err, err, target.Code)
	}
	var he *client.HTTPError
	var pe *client.ProtocolError
	if errors.As(err, &he) || errors.As(err, &pe) {
		t.Errorf("%s: %v is also an HTTP or protocol error", what, err)
	}
}

// ocDescribe renders events as "#ID type(state)[flags]" for failure messages.
func ocDescribe(evs []client.StreamEvent) string {
	var parts []string
	for _, ev := range evs {
		s := "#" + ev.ID + " "
		switch e := ev.Event.(type) {
		case *a2a.Task:
			s += fmt.Sprintf("task(%s)", e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			s += fmt.Sprintf("status(%s", e.Status.State)
			if txt := testutil.StatusText(e.Status); txt != "" {
				s += fmt.Sprintf(" %q", txt)
			}
			if e.Final {
				s += " final"
			}
			s += ")"
		case *a2a.TaskArtifactUpdateEvent:
			s += fmt.Sprintf("artifact(%s %q append=%v last=%v)", e.Artifact.Name, testutil.Text(e.Artifact.Parts), e.Append, e.LastChunk)
		case *a2a.Message:
			s += fmt.Sprintf("message(%q)", testutil.Text(e.Parts))
		default:
			s += fmt.Sprintf("%T", e)
		}
		if ev.Resumed {
			s += "[resumed]"
		}
		if ev.Gap {
			s += "[gap]"
		}
		parts = append(parts, s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// ocFinal requires the last event to be a final status-update in state want.
func ocFinal(t *testing.T, evs []client.StreamEvent, want a2a.TaskState) *a2a.TaskStatusUpdateEvent {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	st, ok := evs[len(evs)-1].Event.(*a2a.TaskStatusUpdateEvent)
	if !ok || !st.Final || st.Status.State != want {
		t.Fatalf("last event is not a final %s status-update: %s", want, ocDescribe(evs))
	}
	return st
}

// ocPoll polls tasks/get until the task is in state want.
func ocPoll(t *testing.T, ctx context.Context, c *client.Client, id string, want a2a.TaskState) *a2a.Task {
	t.Helper()
	return pollTask(t, ctx, id, want, func() (*a2a.Task, a2a.TaskState, error) {
		got, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: id})
		if err != nil {
			return nil, 0, err
		}
		return got, got.Status.State, nil
	})
}

// echoInput is longer than 64 bytes, so every server streams it in
// several chunks, and has multi-byte characters.
var echoInput = strings.Repeat("0123456789abcdef", 6) + " ✓ déjà vu ✓"

// ---------------------------------------------------------------- SDK scenarios

// ocDiscovery: a card from an agent's base URL (well-known path under it),
// from its card URL and from the server root (the default agent, echo).
func ocDiscovery(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	for _, name := range []string{"echo", "chat", "slow"} {
		c := tg.dial(t, ctx, tg.url(name))
		card := c.Card()
		if card.Name != name || c.URL() != tg.ifaceURL(name) || card.ProtocolVersion != "0.3.0" {
			t.Errorf("%s: card name %q protocolVersion %q, client URL %q", name, card.Name, card.ProtocolVersion, c.URL())
		}
		if !card.Capabilities.Streaming || card.Capabilities.PushNotifications != per(tg, false, true, true) {
			t.Errorf("%s: capabilities %+v", name, card.Capabilities)
		}
		if len(card.Skills) == 0 {
			t.Errorf("%s: no skills", name)
		}
	}
	byCardURL := tg.dial(t, ctx, tg.url("chat")+client.WellKnownCardPath)
	if byCardURL.Card().Name != "chat" || byCardURL.URL() != tg.ifaceURL("chat") {
		t.Errorf("by card URL: name %q, client URL %q", byCardURL.Card().Name, byCardURL.URL())
	}
	root := tg.dial(t, ctx, tg.base)
	if root.Card().Name != "echo" || root.URL() != tg.ifaceURL("echo") {
		t.Fatalf("root: name %q, client URL %q, want echo at %s", root.Card().Name, root.URL(), tg.ifaceURL("echo"))
	}
	task := ocSend(t, ctx, root, ocMsg("via the root card", "", ""))
	if task.Status.State != a2a.TaskStateCompleted || testutil.ArtifactText(task) != "via the root card" {
		t.Errorf("root agent: state %s artifact %q", task.Status.State, testutil.ArtifactText(task))
	}
	// No agent there: both well-known paths are 404, an *HTTPError.
	_, err := client.Resolve(ctx, tg.url("nobody"), client.Options{})
	var he *client.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusNotFound {
		t.Errorf("resolve a missing agent: %v (%T), want *client.HTTPError 404", err, err)
	}
}

func ocSendEcho(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	c := tg.dial(t, ctx, tg.url("echo"))
	task := ocSend(t, ctx, c, ocMsg(echoInput, "", ""))
	if task.ID == "" || task.ContextID == "" || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %q context %q state %s, want a completed task", task.ID, task.ContextID, task.Status.State)
	}
	if len(task.Artifacts) != 1 || task.Artifacts[0].Name != "echo" || testutil.ArtifactText(task) != echoInput {
		t.Fatalf("artifacts %+v, want one \"echo\" artifact with the input", task.Artifacts)
	}
	if len(task.History) != 1 || task.History[0].Role != a2a.RoleUser || testutil.Text(task.History[0].Parts) != echoInput {
		t.Errorf("history %+v, want the user message", task.History)
	}
}

// ocChat: two turns to input-required, then bye → completed; then a
// message to the completed task is a typed error (each server its own code).
func ocChat(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	c := tg.dial(t, ctx, tg.url("chat"))
	first := ocSend(t, ctx, c, ocMsg("hello", "", ""))
	if first.Status.State != a2a.TaskStateInputRequired ||
		testutil.StatusText(first.Status) != `turn 1: you said "hello". Say more, or "bye" to finish.` {
		t.Fatalf("turn 1: state %s message %q", first.Status.State, testutil.StatusText(first.Status))
	}
	second := ocSend(t, ctx, c, ocMsg("how are you", first.ID, first.ContextID))
	if second.ID != first.ID || second.Status.State != a2a.TaskStateInputRequired ||
		testutil.StatusText(second.Status) != `turn 2: you said "how are you". Say more, or "bye" to finish.` {
		t.Fatalf("turn 2: task %s state %s message %q", second.ID, second.Status.State, testutil.StatusText(second.Status))
	}
	done := ocSend(t, ctx, c, ocMsg("bye", first.ID, first.ContextID))
	if done.ID != first.ID || done.Status.State != a2a.TaskStateCompleted || testutil.StatusText(done.Status) != "Goodbye! (3 turns)" {
		t.Fatalf("bye: task %s state %s message %q", done.ID, done.Status.State, testutil.StatusText(done.Status))
	}
	_, err := c.SendMessage(ctx, ocMsg("again", first.ID, first.ContextID))
	ocWantErr(t, "message/send to a completed task", err,
		per(tg, a2a.ErrUnsupportedOperation, a2a.ErrInvalidParams, a2a.ErrInvalidRequest))
}

// ocStreamEcho: Task first, artifact chunks in order, a final completed
// status-update last; SSE ids as each server sends them.
func ocStreamEcho(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	c := tg.dial(t, ctx, tg.url("echo"))
	evs, err := collectN(c.SendStreamingMessage(ctx, ocMsg(echoInput, "", "")), 100)
	if err != nil {
		t.Fatalf("message/stream: %v after %s", err, ocDescribe(evs))
	}
	t.Logf("events: %s", ocDescribe(evs))
	first, ok := evs[0].Event.(*a2a.Task)
	if !ok || first.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("first event is not a submitted Task: %s", ocDescribe(evs))
	}
	if ocFinal(t, evs, a2a.TaskStateCompleted).TaskID != first.ID {
		t.Errorf("final event of another task: %s", ocDescribe(evs))
	}
	chunks := evs[1 : len(evs)-1]
	if len(chunks) < 2 {
		t.Fatalf("want several artifact chunks: %s", ocDescribe(evs))
	}
	var text strings.Builder
	for i, ev := range chunks {
		ch, ok := ev.Event.(*a2a.TaskArtifactUpdateEvent)
		if !ok {
			t.Fatalf("event %d is %T, want an artifact-update: %s", i+1, ev.Event, ocDescribe(evs))
		}
		if ch.TaskID != first.ID || ch.Artifact.Name != "echo" || ch.Append != (i > 0) || ch.LastChunk != (i == len(chunks)-1) {
			t.Errorf("chunk %d: task %s name %q append=%v lastChunk=%v", i, ch.TaskID, ch.Artifact.Name, ch.Append, ch.LastChunk)
		}
		text.WriteString(testutil.Text(ch.Artifact.Parts))
	}
	if text.String() != echoInput {
		t.Errorf("streamed text %q, want %q", text.String(), echoInput)
	}
	seen := map[string]bool{}
	for i, ev := range evs {
		if ev.Resumed || ev.Gap {
			t.Errorf("event %d marked resumed/gap on an unbroken stream", i)
		}
		switch tg.kind {
		case ocOurs: // the task log's sequence numbers
			if ev.ID != strconv.Itoa(i+1) {
				t.Errorf("event %d: SSE id %q, want %d", i, ev.ID, i+1)
			}
		case ocA2AGo: // a random UUID per event
			if _, err := strconv.Atoi(ev.ID); ev.ID == "" || err == nil || seen[ev.ID] {
				t.Errorf("event %d: SSE id %q, want a fresh non-numeric id", i, ev.ID)
			}
			seen[ev.ID] = true
		case ocJS: // no id lines
			if ev.ID != "" {
				t.Errorf("event %d: SSE id %q, want none", i, ev.ID)
			}
		}
	}
}

// ocStreamChat: chat over message/stream; each turn's stream ends at its
// final input-required status-update (the iterator returns; no hang).
func ocStreamChat(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	c := tg.dial(t, ctx, tg.url("chat"))
	evs, err := collectN(c.SendStreamingMessage(ctx, ocMsg("hi", "", "")), 20)
	if err != nil {
		t.Fatalf("turn 1: %v after %s", err, ocDescribe(evs))
	}
	st := ocFinal(t, evs, a2a.TaskStateInputRequired)
	if testutil.StatusText(st.Status) != `turn 1: you said "hi". Say more, or "bye" to finish.` {
		t.Errorf("turn 1: %s", ocDescribe(evs))
	}
	taskID, ctxID := st.TaskID, st.ContextID
	evs, err = collectN(c.SendStreamingMessage(ctx, ocMsg("bye", taskID, ctxID)), 20)
	if err != nil {
		t.Fatalf("bye: %v after %s", err, ocDescribe(evs))
	}
	t.Logf("bye: %s", ocDescribe(evs))
	if st := ocFinal(t, evs, a2a.TaskStateCompleted); st.TaskID != taskID || testutil.StatusText(st.Status) != "Goodbye! (2 turns)" {
		t.Errorf("bye: %s", ocDescribe(evs))
	}
	// a2abridge opens every stream with the Task snapshot; the SDK servers
	// only the stream of a message that starts a task.
	_, isTask := evs[0].Event.(*a2a.Task)
	if isTask != per(tg, true, false, false) {
		t.Errorf("bye: first event %T: %s", evs[0].Event, ocDescribe(evs))
	}
}

// ocGetTask: tasks/get with and without historyLength; an unknown id.
func ocGetTask(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	c := tg.dial(t, ctx, tg.url("echo"))
	task := ocSend(t, ctx, c, ocMsg("history me", "", ""))
	got, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID, HistoryLength: ptr(1)})
	if err != nil {
		t.Fatalf("tasks/get historyLength 1: %v", err)
	}
	if got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted || testutil.ArtifactText(got) != "history me" {
		t.Errorf("tasks/get: task %s state %s artifact %q", got.ID, got.Status.State, testutil.ArtifactText(got))
	}
	if len(got.History) != 1 || testutil.Text(got.History[0].Parts) != "history me" {
		t.Errorf("historyLength 1: history %+v", got.History)
	}
	// Quirks: the JS SDK drops history without historyLength and ignores
	// historyLength 0 (slice(-0)).
	for _, tc := range []struct {
		name string
		hl   *int
		want int
	}{
		{"no historyLength", nil, per(tg, 1, 1, 0)},
		{"historyLength 0", ptr(0), per(tg, 0, 0, 1)},
	} {
		got, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID, HistoryLength: tc.hl})
		if err != nil {
			t.Fatalf("tasks/get %s: %v", tc.name, err)
		}
		if len(got.History) != tc.want {
			t.Errorf("tasks/get %s: %d history messages, want %d", tc.name, len(got.History), tc.want)
		}
	}
	_, err = c.GetTask(ctx, a2a.GetTaskRequest{ID: "no-such-task"})
	ocWantErr(t, "tasks/get of an unknown task", err, a2a.ErrTaskNotFound)
}

// ocCancel: non-blocking slow task, cancel → canceled; cancel again; cancel
// of a completed task and of an unknown one.
func ocCancel(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	c := tg.dial(t, ctx, tg.url("slow"))
	task := ocSend(t, ctx, c, ocNonBlocking(ocMsg("30", "", "")))
	if s := task.Status.State; s != a2a.TaskStateSubmitted && s != a2a.TaskStateWorking {
		t.Fatalf("non-blocking send: state %s, want submitted or working", s)
	}
	canceled, err := c.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	if canceled.ID != task.ID || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("tasks/cancel: task %s state %s", canceled.ID, canceled.Status.State)
	}
	ocPoll(t, ctx, c, task.ID, a2a.TaskStateCanceled)
	again, err := c.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID})
	if tg.kind == ocA2AGo {
		// a2a-go: cancelling a canceled task returns it (idempotent).
		if err != nil || again.Status.State != a2a.TaskStateCanceled {
			t.Errorf("second tasks/cancel: %v %+v, want the canceled task", err, again)
		}
	} else {
		ocWantErr(t, "second tasks/cancel", err, a2a.ErrTaskNotCancelable)
	}
	ec := tg.dial(t, ctx, tg.url("echo"))
	done := ocSend(t, ctx, ec, ocMsg("done", "", ""))
	_, err = ec.CancelTask(ctx, a2a.CancelTaskRequest{ID: done.ID})
	ocWantErr(t, "tasks/cancel of a completed task", err, a2a.ErrTaskNotCancelable)
	_, err = ec.CancelTask(ctx, a2a.CancelTaskRequest{ID: "no-such-task"})
	ocWantErr(t, "tasks/cancel of an unknown task", err, a2a.ErrTaskNotFound)
}

// ocResubscribeRunning: tasks/resubscribe to a running slow task receives
// its progress, result and final status.
func ocResubscribeRunning(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	c := tg.dial(t, ctx, tg.url("slow"))
	task := ocSend(t, ctx, c, ocNonBlocking(ocMsg("2", "", "")))
	evs, err := collectN(c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, ""), 50)
	if err != nil {
		t.Fatalf("tasks/resubscribe: %v after %s", err, ocDescribe(evs))
	}
	t.Logf("events: %s", ocDescribe(evs))
	if st := ocFinal(t, evs, a2a.TaskStateCompleted); st.TaskID != task.ID {
		t.Errorf("final event of task %s, want %s", st.TaskID, task.ID)
	}
	// a2a-go joins the running execution without a Task snapshot first.
	_, isTask := evs[0].Event.(*a2a.Task)
	if isTask != per(tg, true, false, true) {
		t.Errorf("first event %T: %s", evs[0].Event, ocDescribe(evs))
	}
	progress, result := 0, ""
	for _, ev := range evs {
		if ev.Resumed || ev.Gap {
			t.Errorf("event marked resumed/gap on an unbroken stream: %s", ocDescribe(evs))
		}
		switch e := ev.Event.(type) {
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.State == a2a.TaskStateWorking && strings.HasPrefix(testutil.StatusText(e.Status), "progress: ") {
				progress++
			}
		case *a2a.TaskArtifactUpdateEvent:
			result += testutil.Text(e.Artifact.Parts)
		}
	}
	if progress < 1 || result != "done after 2s" {
		t.Errorf("%d progress updates, result %q: %s", progress, result, ocDescribe(evs))
	}
}

// ocResubscribeFinished: tasks/resubscribe to a completed task. a2abridge
// sends the snapshot and a final status-update; a2a-go answers -32001 (no
// active execution); the JS SDK sends the Task snapshot and ends the
// stream. Our client must end cleanly: with the final event, or a typed
// error, and without resubscribing over and over.
func ocResubscribeFinished(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	c := tg.dial(t, ctx, tg.url("echo"))
	task := ocSend(t, ctx, c, ocMsg("finished", "", ""))
	ocResubscribeSettled(t, ctx, c, tg, task.ID, a2a.TaskStateCompleted)
}

// ocResubscribeInputRequired: the same for a chat task waiting for input
// (a final state for a stream, but not a terminal one).
func ocResubscribeInputRequired(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	c := tg.dial(t, ctx, tg.url("chat"))
	task := ocSend(t, ctx, c, ocMsg("hello", "", ""))
	ocResubscribeSettled(t, ctx, c, tg, task.ID, a2a.TaskStateInputRequired)
}

func ocResubscribeSettled(t *testing.T, ctx context.Context, c *client.Client, tg *ocTarget, id string, state a2a.TaskState) {
	t.Helper()
	start := time.Now()
	evs, err := collectN(c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: id}, ""), 5)
	t.Logf("events after %s: %s, error %v", time.Since(start).Round(time.Millisecond), ocDescribe(evs), err)
	switch tg.kind {
	case ocOurs:
		if err != nil {
			t.Fatalf("tasks/resubscribe: %v after %s", err, ocDescribe(evs))
		}
		if len(evs) != 2 {
			t.Fatalf("want the Task snapshot and a final status-update: %s", ocDescribe(evs))
		}
		if tk, ok := evs[0].Event.(*a2a.Task); !ok || tk.Status.State != state {
			t.Errorf("first event is not the %s Task: %s", state, ocDescribe(evs))
		}
		ocFinal(t, evs, state)
	case ocA2AGo:
		if len(evs) != 0 {
			t.Errorf("events before the error: %s", ocDescribe(evs))
		}
		ocWantErr(t, "tasks/resubscribe of a settled task", err, a2a.ErrTaskNotFound)
	case ocJS:
		// The server sends one Task snapshot in state `state`, then ends the
		// stream: that snapshot is the final answer.
		if err != nil || len(evs) != 1 {
			t.Fatalf("tasks/resubscribe of a task in state %s: got %d events %s and error %v; want exactly the %s Task snapshot, "+
				"then the end of the sequence (a Task in a final state ends the stream; resubscribing again only repeats it)",
				state, len(evs), ocDescribe(evs), err, state)
		}
		if tk, ok := evs[0].Event.(*a2a.Task); !ok || tk.Status.State != state || evs[0].Resumed {
			t.Errorf("want the %s Task snapshot, not resumed: %s", state, ocDescribe(evs))
		}
	}
}

// ocStreamErrors: errors of the streaming methods, which the servers send as
// SSE frames (a2a-go: a data frame; JS: an `event: error` frame).
func ocStreamErrors(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	c := tg.dial(t, ctx, tg.url("echo"))
	evs, err := collectN(c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: "no-such-task"}, ""), 5)
	if len(evs) != 0 {
		t.Errorf("tasks/resubscribe of an unknown task: events %s", ocDescribe(evs))
	}
	ocWantErr(t, "tasks/resubscribe of an unknown task", err, tg.streamError(a2a.ErrTaskNotFound))

	task := ocSend(t, ctx, c, ocMsg("done", "", ""))
	evs, err = collectN(c.SendStreamingMessage(ctx, ocMsg("more", task.ID, task.ContextID)), 5)
	if len(evs) != 0 {
		t.Errorf("message/stream to a completed task: events %s", ocDescribe(evs))
	}
	ocWantErr(t, "message/stream to a completed task", err,
		tg.streamError(per(tg, a2a.ErrUnsupportedOperation, a2a.ErrInvalidParams, a2a.ErrInvalidRequest)))
}

// pushHook is a loopback webhook that records push notifications.
type pushHook struct {
	url string
	got chan pushNote
}

type pushNote struct {
	path, token string
	task        struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
}

func startPushHook(t *testing.T) *pushHook {
	h := &pushHook{got: make(chan pushNote, 64)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := pushNote{path: r.URL.Path, token: r.Header.Get("X-A2A-Notification-Token")}
		if err := json.Unmarshal(body, &n.task); err != nil {
			t.Errorf("push body %q: %v", body, err)
		}
		select {
		case h.got <- n:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// wait returns the first push to path for task id in state (any state if "").
func (h *pushHook) wait(t *testing.T, ctx context.Context, path, id, state string) pushNote {
	t.Helper()
	for {
		select {
		case n := <-h.got:
			if n.path == path && n.task.ID == id && (state == "" || n.task.Status.State == state) {
				return n
			}
		case <-ctx.Done():
			t.Fatalf("no push to %s for task %s (state %q)", path, id, state)
		}
	}
}

// ocPush: both peers support push notifications (a real round trip of
// set/get/list/delete, and deliveries to a loopback webhook); a2abridge
// answers every push method with -32003.
func ocPush(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	if tg.kind == ocOurs {
		c := tg.dial(t, ctx, tg.url("echo"))
		task := ocSend(t, ctx, c, ocMsg("no push", "", ""))
		_, err := c.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: task.ID,
			PushNotificationConfig: a2a.PushNotificationConfig{URL: "http://127.0.0.1:9/hook"}})
		ocWantErr(t, "set", err, a2a.ErrPushNotificationNotSupported)
		_, err = c.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID})
		ocWantErr(t, "get", err, a2a.ErrPushNotificationNotSupported)
		_, _, err = c.ListTaskPushNotificationConfigs(ctx, a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
		ocWantErr(t, "list", err, a2a.ErrPushNotificationNotSupported)
		err = c.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "x"})
		ocWantErr(t, "delete", err, a2a.ErrPushNotificationNotSupported)
		p := ocMsg("with push", "", "")
		p.Configuration = &a2a.SendMessageConfiguration{PushNotificationConfig: &a2a.PushNotificationConfig{URL: "http://127.0.0.1:9/hook"}}
		_, err = c.SendMessage(ctx, p)
		ocWantErr(t, "message/send with a push config", err, a2a.ErrPushNotificationNotSupported)
		return
	}
	c := tg.dial(t, ctx, tg.url("slow"))
	hook := startPushHook(t)

	// A config set on a running task gets its next events pushed.
	task := ocSend(t, ctx, c, ocNonBlocking(ocMsg("30", "", "")))
	want := a2a.PushNotificationConfig{ID: "cfg-1", URL: hook.url + "/set", Token: "tok-1"}
	set, err := c.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: task.ID, PushNotificationConfig: want})
	if err != nil {
		t.Fatalf("set: %v", err)
	}
	if set.TaskID != task.ID || set.PushNotificationConfig.ID != want.ID || set.PushNotificationConfig.URL != want.URL ||
		set.PushNotificationConfig.Token != want.Token {
		t.Errorf("set returned %+v, want %+v", set, want)
	}
	got, err := c.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"})
	if err != nil || got.TaskID != task.ID || got.PushNotificationConfig.URL != want.URL {
		t.Fatalf("get: %v %+v", err, got)
	}
	list, _, err := c.ListTaskPushNotificationConfigs(ctx, a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
	if err != nil || len(list) != 1 || list[0].PushNotificationConfig.ID != "cfg-1" {
		t.Fatalf("list: %v %+v", err, list)
	}
	if n := hook.wait(t, ctx, "/set", task.ID, ""); n.token != "tok-1" {
		t.Errorf("push token %q, want tok-1", n.token)
	}
	err = c.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"})
	// a2a-go deletes, then answers {"jsonrpc":"2.0","id":N} with no result
	// member; our client accepts that for this void method.
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	list, _, err = c.ListTaskPushNotificationConfigs(ctx, a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
	if err != nil || len(list) != 0 {
		t.Errorf("list after delete: %v %+v", err, list)
	}
	// Both SDKs: get of an unknown config is -32603.
	_, err = c.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"})
	ocWantErr(t, "get of a deleted config", err, a2a.ErrInternal)
	if _, err := c.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID}); err != nil {
		t.Errorf("tasks/cancel: %v", err)
	}

	// A config given with message/send: the completed task is pushed.
	p := ocMsg("1", "", "")
	p.Configuration = &a2a.SendMessageConfiguration{PushNotificationConfig: &a2a.PushNotificationConfig{URL: hook.url + "/send", Token: "tok-2"}}
	done := ocSend(t, ctx, c, p)
	if n := hook.wait(t, ctx, "/send", done.ID, "completed"); n.token != "tok-2" {
		t.Errorf("push token %q, want tok-2", n.token)
	}
	list, _, err = c.ListTaskPushNotificationConfigs(ctx, a2a.ListTaskPushNotificationConfigsRequest{TaskID: done.ID})
	if err != nil || len(list) != 1 || list[0].PushNotificationConfig.URL != hook.url+"/send" {
		t.Fatalf("list: %v %+v", err, list)
	}
	// The config's id when none is given: a2a-go generates one; JS uses the task id.
	if id := list[0].PushNotificationConfig.ID; id == "" || (tg.kind == ocJS) != (id == done.ID) {
		t.Errorf("generated config id %q (task %s)", id, done.ID)
	}

	// set for an unknown task: a2a-go accepts it; JS answers -32001.
	_, err = c.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: "no-such-task",
		PushNotificationConfig: a2a.PushNotificationConfig{ID: "x", URL: hook.url + "/none"}})
	if tg.kind == ocJS {
		ocWantErr(t, "set for an unknown task", err, a2a.ErrTaskNotFound)
	} else if err != nil {
		t.Errorf("set for an unknown task: %v", err)
	}
}

func ocExtendedCard(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	c := tg.dial(t, ctx, tg.base)
	card, err := c.GetExtendedAgentCard(ctx)
	if card != nil {
		t.Errorf("extended card %+v", card)
	}
	// The JS SDK: -32004 (the card lacks supportsAuthenticatedExtendedCard).
	ocWantErr(t, "agent/getAuthenticatedExtendedCard", err,
		per(tg, a2a.ErrAuthenticatedExtendedCardNotConfigured, a2a.ErrAuthenticatedExtendedCardNotConfigured, a2a.ErrUnsupportedOperation))
}

// ---------------------------------------------------------------- stream resume

// lastEventID returns the Last-Event-ID header of a raw HTTP request ("" if none).
func lastEventID(req string) string {
	head, _, _ := strings.Cut(req, "\r\n\r\n")
	for _, line := range strings.Split(head, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Last-Event-ID") {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// ocStreamResume: a proxy between our client and the server cuts the
// message/stream connection of a slow task after its second event; the
// client resubscribes and finishes. a2abridge replays from Last-Event-ID
// (no gap, every event once); the peers cannot, so the first event after
// the resume has Resumed and Gap set: the Task snapshot (JS) or, as a2a-go
// sends no snapshot, the next live status-update.
func ocStreamResume(t *testing.T, tg *ocTarget) {
	ctx := ocCtx(t)
	card, err := client.Resolve(ctx, tg.url("slow"), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	proxy := testutil.StartProxy(t, strings.TrimPrefix(tg.base, "http://"))
	card.URL = "http://" + proxy.Addr() + "/a2a/slow"
	card.SupportedInterfaces = nil // the 0.3 members only: through the proxy
	for i := range card.AdditionalInterfaces {
		card.AdditionalInterfaces[i].URL = "http://" + proxy.Addr() + strings.TrimPrefix(card.AdditionalInterfaces[i].URL, tg.base)
	}
	o := tg.opts()
	o.RetryBaseDelay = 20 * time.Millisecond
	c, err := client.New(card, o)
	if err != nil {
		t.Fatal(err)
	}
	const cutAfter = 2
	var evs []client.StreamEvent
	for ev, err := range c.SendStreamingMessage(ctx, ocMsg("3", "", "")) {
		if err != nil {
			t.Fatalf("message/stream: %v after %s", err, ocDescribe(evs))
		}
		evs = append(evs, ev)
		if len(evs) == cutAfter {
			if n := proxy.Cut(); n != 1 {
				t.Fatalf("cut %d connections, want the stream's only", n)
			}
		}
		if len(evs) > 50 {
			t.Fatalf("stream does not end: %s", ocDescribe(evs))
		}
	}
	t.Logf("events: %s", ocDescribe(evs))
	if len(evs) <= cutAfter {
		t.Fatalf("stream ended at the cut: %s", ocDescribe(evs))
	}
	task, ok := evs[0].Event.(*a2a.Task)
	if !ok {
		t.Fatalf("first event is not a Task: %s", ocDescribe(evs))
	}
	if st := ocFinal(t, evs, a2a.TaskStateCompleted); st.TaskID != task.ID {
		t.Errorf("final event of task %s, want %s", st.TaskID, task.ID)
	}
	for i, ev := range evs {
		if ev.Resumed != (i == cutAfter) {
			t.Errorf("event %d: Resumed=%v; only event %d (the first after the cut) should be: %s", i, ev.Resumed, cutAfter, ocDescribe(evs))
		}
		if ev.Gap && i != cutAfter {
			t.Errorf("event %d: Gap on an event that is not the first after the cut: %s", i, ocDescribe(evs))
		}
	}
	resumed := evs[cutAfter]
	_, isTask := resumed.Event.(*a2a.Task)
	_, isStatus := resumed.Event.(*a2a.TaskStatusUpdateEvent)
	switch tg.kind {
	case ocOurs:
		// Replayed from Last-Event-ID: ids 1..n, each once, no gap.
		if resumed.Gap {
			t.Errorf("a2abridge replays: Gap set on %s", ocDescribe(evs))
		}
		for i, ev := range evs {
			if ev.ID != strconv.Itoa(i+1) {
				t.Errorf("event %d: id %q, want %d (every event once, in order): %s", i, ev.ID, i+1, ocDescribe(evs))
			}
		}
	case ocA2AGo:
		// No snapshot: the next live status-update; its id (a UUID) does not
		// prove continuity, so the gap is flagged.
		if !isStatus || !resumed.Gap {
			t.Errorf("first event after the resume: want a status-update with Gap: %s", ocDescribe(evs))
		}
	case ocJS:
		if !isTask || !resumed.Gap {
			t.Errorf("first event after the resume: want the Task snapshot with Gap: %s", ocDescribe(evs))
		}
	}
	result := ""
	for _, ev := range evs {
		if a, ok := ev.Event.(*a2a.TaskArtifactUpdateEvent); ok {
			result += testutil.Text(a.Artifact.Parts)
		}
	}
	if result != "done after 3s" {
		t.Errorf("result %q: %s", result, ocDescribe(evs))
	}

	// On the wire: the second connection is tasks/resubscribe of the task
	// (over HTTP+JSON POST /v1/tasks/{id}:subscribe),
	// with Last-Event-ID set to the last id seen (none for JS, which sends no ids).
	reqs := proxy.Sent()
	if len(reqs) != 2 {
		t.Fatalf("%d connections through the proxy, want 2 (stream, resubscribe)", len(reqs))
	}
	stream, resubscribe := `"method":"message/stream"`, `"method":"tasks/resubscribe"`
	if tg.rest {
		path := strings.TrimPrefix(tg.ifaceURL("slow"), tg.base) + "/v1"
		stream, resubscribe = "POST "+path+"/message:stream HTTP/1.1", "POST "+path+"/tasks/"+task.ID+":subscribe HTTP/1.1"
	}
	if !strings.Contains(reqs[0], stream) || !strings.Contains(reqs[1], resubscribe) || !strings.Contains(reqs[1], task.ID) {
		t.Errorf("requests through the proxy:\n%s\n---\n%s", reqs[0], reqs[1])
	}
	if got, want := lastEventID(reqs[1]), evs[cutAfter-1].ID; got != want {
		t.Errorf("resubscribe Last-Event-ID %q, want %q", got, want)
	}
}

// ---------------------------------------------------------------- CLI

type cliResult struct {
	code           int
	stdout, stderr string
	lines          []map[string]any // stdout, one JSON value per line (stream, resubscribe: each line's result)
	eventIDs       []string         // stream, resubscribe: each line's eventId ("" when absent)
}

// runCLI runs the a2abridge binary with args plus --json and returns its
// exit code and output; stdout lines must each be JSON. stream and
// resubscribe lines are {"eventId":ID,"result":EVENT}: lines holds the
// events, eventIDs the ids.
func runCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, append(args, "--json")...)
	cmd.SysProcAttr = sysProcAttr()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := cliResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		r.code = ee.ExitCode()
	default:
		t.Fatalf("a2abridge %s: %v\nstderr: %s", strings.Join(args, " "), err, r.stderr)
	}
	if args[0] == "chat" { // human output only
		return r
	}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" {
			continue
		}
		var v map[string]any
		if line != "null" {
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("a2abridge %s: stdout line %q is not a JSON object: %v", strings.Join(args, " "), line, err)
			}
		}
		if args[0] == "stream" || args[0] == "resubscribe" {
			ev, ok := v["result"].(map[string]any)
			id, idOK := v["eventId"].(string)
			if _, has := v["eventId"]; !ok || (has && !idOK) {
				t.Fatalf("a2abridge %s: stdout line %q is not {\"eventId\":ID,\"result\":EVENT}", strings.Join(args, " "), line)
			}
			v = ev
			r.eventIDs = append(r.eventIDs, id)
		}
		r.lines = append(r.lines, v)
	}
	return r
}

// want requires exit code code and n stdout lines (n < 0: any number).
func (r cliResult) want(t *testing.T, what string, code, n int) {
	t.Helper()
	if r.code != code || (n >= 0 && len(r.lines) != n) {
		t.Fatalf("%s: exit %d with %d lines, want exit %d with %d\nstdout: %s\nstderr: %s", what, r.code, len(r.lines), code, n, r.stdout, r.stderr)
	}
}

// wantA2AError requires exit 3 and the error code on stderr.
func (r cliResult) wantA2AError(t *testing.T, what string, target *a2a.Error) {
	t.Helper()
	r.want(t, what, 3, 0)
	if !strings.Contains(r.stderr, fmt.Sprintf("a2a error %d:", target.Code)) {
		t.Errorf("%s: stderr %q, want a2a error %d", what, r.stderr, target.Code)
	}
}

// jget walks a decoded JSON value: jget(v, "status", "state").
func jget(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			s, _ := v.([]any)
			if k < 0 || k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

func jstr(v any, path ...any) string {
	s, _ := jget(v, path...).(string)
	return s
}

func ocCLICard(t *testing.T, tg *ocTarget) {
	r := tg.cli(t, "", "card", tg.base)
	r.want(t, "card of the root", 0, 1)
	if jstr(r.lines[0], "name") != "echo" || jstr(r.lines[0], "url") != tg.url("echo") || jstr(r.lines[0], "protocolVersion") != "0.3.0" {
		t.Errorf("root card: %s", r.stdout)
	}
	r = tg.cli(t, "", "card", tg.url("slow"))
	r.want(t, "card of slow", 0, 1)
	if jstr(r.lines[0], "name") != "slow" || jstr(r.lines[0], "url") != tg.url("slow") {
		t.Errorf("slow card: %s", r.stdout)
	}
	r = tg.cli(t, "", "card", tg.url("nobody"))
	r.want(t, "card of a missing agent", 4, 0)
}

func ocCLISendGetStream(t *testing.T, tg *ocTarget) {
	r := tg.cli(t, "", "send", tg.url("echo"), "cli hello")
	r.want(t, "send", 0, 1)
	task := r.lines[0]
	id := jstr(task, "id")
	if jstr(task, "kind") != "task" || id == "" || jstr(task, "status", "state") != "completed" ||
		jstr(task, "artifacts", 0, "parts", 0, "text") != "cli hello" {
		t.Fatalf("send: %s", r.stdout)
	}
	r = tg.cli(t, "", "get", tg.url("echo"), id, "--history", "1")
	r.want(t, "get", 0, 1)
	if jstr(r.lines[0], "id") != id || jstr(r.lines[0], "history", 0, "parts", 0, "text") != "cli hello" || jget(r.lines[0], "history", 1) != nil {
		t.Errorf("get --history 1: %s", r.stdout)
	}
	tg.cli(t, "", "get", tg.url("echo"), "no-such-task").wantA2AError(t, "get of an unknown task", a2a.ErrTaskNotFound)

	r = tg.cli(t, "", "stream", tg.url("echo"), echoInput)
	r.want(t, "stream", 0, -1)
	if len(r.lines) < 4 {
		t.Fatalf("stream: want a task, chunks and a final status:\n%s", r.stdout)
	}
	last := r.lines[len(r.lines)-1]
	if jstr(r.lines[0], "kind") != "task" || jstr(last, "kind") != "status-update" || jget(last, "final") != true ||
		jstr(last, "status", "state") != "completed" {
		t.Errorf("stream: %s", r.stdout)
	}
	var text strings.Builder
	for _, l := range r.lines[1 : len(r.lines)-1] {
		if jstr(l, "kind") != "artifact-update" {
			t.Errorf("stream: %v between the task and the final status", l)
		}
		text.WriteString(jstr(l, "artifact", "parts", 0, "text"))
	}
	if text.String() != echoInput {
		t.Errorf("stream: text %q, want %q", text.String(), echoInput)
	}
}

func ocCLICancel(t *testing.T, tg *ocTarget) {
	r := tg.cli(t, "", "send", tg.url("slow"), "30", "--no-blocking")
	r.want(t, "send --no-blocking", 0, 1)
	id := jstr(r.lines[0], "id")
	r = tg.cli(t, "", "cancel", tg.url("slow"), id)
	r.want(t, "cancel", 0, 1)
	if jstr(r.lines[0], "id") != id || jstr(r.lines[0], "status", "state") != "canceled" {
		t.Errorf("cancel: %s", r.stdout)
	}
	r = tg.cli(t, "", "cancel", tg.url("slow"), id)
	if tg.kind == ocA2AGo {
		r.want(t, "second cancel (a2a-go: idempotent)", 0, 1)
	} else {
		r.wantA2AError(t, "second cancel", a2a.ErrTaskNotCancelable)
	}
	r = tg.cli(t, "", "send", tg.url("echo"), "done")
	r.want(t, "send", 0, 1)
	tg.cli(t, "", "cancel", tg.url("echo"), jstr(r.lines[0], "id")).wantA2AError(t, "cancel of a completed task", a2a.ErrTaskNotCancelable)
}

func ocCLIResubscribe(t *testing.T, tg *ocTarget) {
	// 2 s: the resubscribe, a new process, must come while the task runs
	// (a2a-go only joins running executions).
	r := tg.cli(t, "", "send", tg.url("slow"), "2", "--no-blocking")
	r.want(t, "send --no-blocking", 0, 1)
	id := jstr(r.lines[0], "id")
	r = tg.cli(t, "", "resubscribe", tg.url("slow"), id)
	r.want(t, "resubscribe to a running task", 0, -1)
	last := r.lines[len(r.lines)-1]
	if jstr(last, "kind") != "status-update" || jget(last, "final") != true || jstr(last, "status", "state") != "completed" {
		t.Errorf("resubscribe: %s", r.stdout)
	}
	tg.cli(t, "", "resubscribe", tg.url("slow"), "no-such-task").wantA2AError(t, "resubscribe to an unknown task", tg.streamError(a2a.ErrTaskNotFound))
}

// ocCLIResubscribeFinished: see ocResubscribeFinished; --timeout bounds
// the command should it not end by itself.
func ocCLIResubscribeFinished(t *testing.T, tg *ocTarget) {
	r := tg.cli(t, "", "send", tg.url("echo"), "finished")
	r.want(t, "send", 0, 1)
	id := jstr(r.lines[0], "id")
	r = tg.cli(t, "", "resubscribe", tg.url("echo"), id, "--timeout", "5s")
	switch tg.kind {
	case ocOurs:
		r.want(t, "resubscribe to a completed task", 0, 2)
		if jstr(r.lines[0], "kind") != "task" || jget(r.lines[1], "final") != true {
			t.Errorf("resubscribe: %s", r.stdout)
		}
	case ocA2AGo:
		r.wantA2AError(t, "resubscribe to a completed task", a2a.ErrTaskNotFound)
	case ocJS:
		r.want(t, "resubscribe to a completed task (the Task snapshot, then the end)", 0, 1)
		if jstr(r.lines[0], "kind") != "task" || jstr(r.lines[0], "status", "state") != "completed" {
			t.Errorf("resubscribe: %s", r.stdout)
		}
	}
}

func ocCLIPush(t *testing.T, tg *ocTarget) {
	if tg.kind == ocOurs {
		r := tg.cli(t, "", "send", tg.url("echo"), "x")
		r.want(t, "send", 0, 1)
		id := jstr(r.lines[0], "id")
		tg.cli(t, "", "push", "list", tg.url("echo"), id).wantA2AError(t, "push list", a2a.ErrPushNotificationNotSupported)
		tg.cli(t, "", "push", "set", tg.url("echo"), id, "http://127.0.0.1:9/hook").wantA2AError(t, "push set", a2a.ErrPushNotificationNotSupported)
		tg.cli(t, "", "send", tg.url("echo"), "x", "--push-url", "http://127.0.0.1:9/hook").
			wantA2AError(t, "send --push-url", a2a.ErrPushNotificationNotSupported)
		return
	}
	ctx := ocCtx(t)
	hook := startPushHook(t)
	r := tg.cli(t, "", "send", tg.url("echo"), "pushed", "--push-url", hook.url+"/send", "--push-token", "tok")
	r.want(t, "send --push-url", 0, 1)
	id := jstr(r.lines[0], "id")
	if n := hook.wait(t, ctx, "/send", id, "completed"); n.token != "tok" {
		t.Errorf("push token %q, want tok", n.token)
	}
	r = tg.cli(t, "", "push", "list", tg.url("echo"), id)
	r.want(t, "push list", 0, 1)
	if jstr(r.lines[0], "taskId") != id || jstr(r.lines[0], "pushNotificationConfig", "url") != hook.url+"/send" {
		t.Errorf("push list: %s", r.stdout)
	}
	r = tg.cli(t, "", "push", "set", tg.url("echo"), id, hook.url+"/cli", "--id", "cfg-cli", "--push-token", "t2")
	r.want(t, "push set", 0, 1)
	if jstr(r.lines[0], "pushNotificationConfig", "id") != "cfg-cli" {
		t.Errorf("push set: %s", r.stdout)
	}
	r = tg.cli(t, "", "push", "get", tg.url("echo"), id, "cfg-cli")
	r.want(t, "push get", 0, 1)
	if jstr(r.lines[0], "pushNotificationConfig", "url") != hook.url+"/cli" {
		t.Errorf("push get: %s", r.stdout)
	}
	tg.cli(t, "", "push", "list", tg.url("echo"), id).want(t, "push list", 0, 2)
	r = tg.cli(t, "", "push", "delete", tg.url("echo"), id, "cfg-cli")
	r.want(t, "push delete", 0, 1) // a2a-go's answer without result is accepted (see ocPush)
	tg.cli(t, "", "push", "list", tg.url("echo"), id).want(t, "push list after delete", 0, 1)
	tg.cli(t, "", "push", "get", tg.url("echo"), id, "cfg-cli").wantA2AError(t, "push get of a deleted config", a2a.ErrInternal)
}

func ocCLIExtendedCard(t *testing.T, tg *ocTarget) {
	tg.cli(t, "", "extended-card", tg.base).wantA2AError(t, "extended-card",
		per(tg, a2a.ErrAuthenticatedExtendedCardNotConfigured, a2a.ErrAuthenticatedExtendedCardNotConfigured, a2a.ErrUnsupportedOperation))
}

// ocCLIChat: the interactive chat keeps the task across turns.
func ocCLIChat(t *testing.T, tg *ocTarget) {
	r := tg.cli(t, "hello\nbye\n/quit\n", "chat", tg.url("chat"))
	if r.code != 0 {
		t.Fatalf("chat: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{`agent> turn 1: you said "hello".`, "agent> Goodbye! (2 turns)", "[completed]"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("chat output lacks %q:\n%s", want, r.stdout)
		}
	}
}
