package interop

// Smoke tests of the a2a-go PEER server (cmd/peer-a2ago): it is built and
// started as a black box on 127.0.0.1:0 and driven with the official a2a-go
// client, so that tests of our own client can rely on it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/a2abridge/a2abridge/internal/testutil"
)

const (
	// peerPkg is the peer command, built from this module.
	peerPkg = "./cmd/peer-a2ago"
	// peerReadyPrefix is what the peers print on stdout once they accept connections.
	peerReadyPrefix = "peer listening on http://"
)

// TestPeerA2AGo starts cmd/peer-a2ago once and checks each of its agents
// with the a2a-go client.
func TestPeerA2AGo(t *testing.T) {
	bin := buildPeer(t, peerPkg)
	// A short keep-alive puts SSE comment lines into the slow streams.
	p := startPeer(t, bin, "--keep-alive", "250ms", "--log-level", "info")
	h := &harness{base: p.base, http: &http.Client{}}
	scenarios := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"Card", testPeerCard},
		{"SendEcho", testPeerSendEcho},
		{"StreamEcho", testPeerStreamEcho},
		{"Chat", testPeerChat},
		{"SlowCancel", testPeerSlowCancel},
		{"SlowStreamCancel", testPeerSlowStreamCancel},
		{"SlowProgress", testPeerSlowProgress},
		{"PushNotifications", testPeerPush},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.run(t, h)
		})
	}
}

// buildPeer builds the peer command pkg of this module (peerPkg, or
// another of ./cmd) into a temp dir and returns the binary's path.
func buildPeer(t *testing.T, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), exe(filepath.Base(pkg)))
	if err := goBuild(t.Context(), ".", out, pkg); err != nil {
		t.Fatal(err)
	}
	return out
}

// peer is one running peer server.
type peer struct {
	base   string // http://127.0.0.1:PORT
	stderr *testutil.Buffer
}

// startPeer starts `bin --addr 127.0.0.1:0 args...`, reads the address from
// its listening line and registers a cleanup that stops it with SIGINT (then
// SIGKILL) and checks that it exited cleanly.
func startPeer(t *testing.T, bin string, args ...string) *peer {
	t.Helper()
	return startPeerCommand(t, "", bin, append([]string{"--addr", "127.0.0.1:0"}, args...)...)
}

// startPeerCommand starts `name args...` in dir ("" = the current
// directory) as a peer server: a process that prints peerReadyPrefix+ADDR on
// stdout once listening and exits with status 0 on SIGINT (the a2a-go peer,
// or node with ../js/peer-server.mjs). Cleanup as for startPeer.
func startPeerCommand(t *testing.T, dir, name string, args ...string) *peer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	p, err := startStoppable(cmd, cancel, peerReadyPrefix)
	if err != nil {
		t.Fatalf("peer: %v", err)
	}
	pr := &peer{base: "http://" + p.Ready, stderr: p.Stderr}
	stopAtCleanup(t, "peer", pr.base, p, cancel)
	return pr
}

// startNodePeer starts `node script args...` in ../js as a peer server (see
// startPeerCommand) and returns its base URL. Without the SDK package sdk
// in ../js/node_modules (npm ci not run) it starts nothing and returns why,
// for the caller to skip; what names the peer in the messages.
func startNodePeer(t *testing.T, what, sdk, script string, args ...string) (base, skip string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, script)); err != nil {
		t.Fatalf("the %s: %v", what, err)
	}
	pkg := filepath.Join(dir, "node_modules", "@a2a-js", sdk)
	if _, err := os.Stat(pkg); err != nil {
		return "", fmt.Sprintf("%s not started: %s is missing; run `npm ci` in %s first (interop/run.sh does)", what, pkg, dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the %s needs node on PATH: %v", what, err)
	}
	return startPeerCommand(t, dir, node, append([]string{script}, args...)...).base, ""
}

func testPeerCard(t *testing.T, h *harness) {
	for _, name := range []string{"echo", "chat", "slow"} {
		card := h.card(t, name)
		if card.Name != name || card.URL != h.base+"/a2a/"+name {
			t.Errorf("%s card: name %q url %q", name, card.Name, card.URL)
		}
		if card.ProtocolVersion != "0.3.0" || card.PreferredTransport != a2a.TransportProtocolJSONRPC {
			t.Errorf("%s card: protocolVersion %q preferredTransport %q", name, card.ProtocolVersion, card.PreferredTransport)
		}
		if !card.Capabilities.Streaming || !card.Capabilities.PushNotifications {
			t.Errorf("%s card: capabilities %+v, want streaming and pushNotifications", name, card.Capabilities)
		}
		if len(card.Skills) != 1 || card.Skills[0].ID != name {
			t.Errorf("%s card: skills %+v", name, card.Skills)
		}
	}
	// The root card is echo's; a client built from it talks to /a2a/echo.
	ctx := h.ctx(t)
	def, err := agentcard.NewResolver(h.http).Resolve(ctx, h.base)
	if err != nil {
		t.Fatalf("resolve the root card: %v", err)
	}
	if def.Name != "echo" {
		t.Fatalf("root card: name %q, want echo", def.Name)
	}
	task := send(t, ctx, h.clientFromCard(t, def, false), userText("via the root card"))
	if task.Status.State != a2a.TaskStateCompleted || artifactText(task) != "via the root card" {
		t.Errorf("root card agent: state %s artifact %q", task.Status.State, artifactText(task))
	}
}

func testPeerSendEcho(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "echo", false)
	task := send(t, ctx, c, userText("hello, peer"))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s, want completed", task.Status.State)
	}
	if len(task.Artifacts) != 1 || task.Artifacts[0].Name != "echo" || artifactText(task) != "hello, peer" {
		t.Fatalf("artifacts %+v, want one \"echo\" artifact with the text", task.Artifacts)
	}
	got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	if got.Status.State != a2a.TaskStateCompleted || artifactText(got) != "hello, peer" {
		t.Errorf("tasks/get: state %s artifact %q", got.Status.State, artifactText(got))
	}
	_, err = c.GetTask(ctx, &a2a.TaskQueryParams{ID: "no-such-task"})
	wantA2AError(t, "tasks/get of an unknown task", err, a2a.ErrTaskNotFound)
}

func testPeerStreamEcho(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "echo", false)
	input := strings.Repeat("0123456789abcdef", 10) + " ✓ déjà vu ✓"
	evs, err := collect(c.SendStreamingMessage(ctx, userText(input)))
	if err != nil {
		t.Fatalf("message/stream: %v after %s", err, describe(evs))
	}
	t.Logf("events: %s", describe(evs))
	first, ok := evs[0].(*a2a.Task)
	if !ok || first.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("first event is not a submitted Task: %s", describe(evs))
	}
	final := lastStatus(t, evs, a2a.TaskStateCompleted)
	if final.TaskID != first.ID {
		t.Errorf("final event for task %s, want %s", final.TaskID, first.ID)
	}
	var text strings.Builder
	chunks := evs[1 : len(evs)-1]
	if len(chunks) < 2 {
		t.Fatalf("want several artifact chunks: %s", describe(evs))
	}
	for i, ev := range chunks {
		ch, ok := ev.(*a2a.TaskArtifactUpdateEvent)
		if !ok {
			t.Fatalf("event %d is %T, want an artifact-update: %s", i+1, ev, describe(evs))
		}
		if ch.Append != (i > 0) || ch.LastChunk != (i == len(chunks)-1) || ch.Artifact.Name != "echo" {
			t.Errorf("chunk %d: append=%v lastChunk=%v name %q", i, ch.Append, ch.LastChunk, ch.Artifact.Name)
		}
		text.WriteString(textOf(ch.Artifact.Parts))
	}
	if text.String() != input {
		t.Errorf("streamed text %q, want %q", text.String(), input)
	}
}

func testPeerChat(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "chat", false)
	task := send(t, ctx, c, userText("hello"))
	if task.Status.State != a2a.TaskStateInputRequired || statusText(task.Status) != `turn 1: you said "hello". Say more, or "bye" to finish.` {
		t.Fatalf("turn 1: state %s message %q", task.Status.State, statusText(task.Status))
	}
	second := send(t, ctx, c, userTextFor(task, "how are you"))
	if second.ID != task.ID || second.Status.State != a2a.TaskStateInputRequired ||
		statusText(second.Status) != `turn 2: you said "how are you". Say more, or "bye" to finish.` {
		t.Fatalf("turn 2: task %s state %s message %q", second.ID, second.Status.State, statusText(second.Status))
	}
	done := send(t, ctx, c, userTextFor(task, "bye"))
	if done.Status.State != a2a.TaskStateCompleted || !strings.HasPrefix(statusText(done.Status), "Goodbye!") {
		t.Fatalf("bye: state %s message %q", done.Status.State, statusText(done.Status))
	}
	// a2a-go answers a message to a terminal task with InvalidParams (-32602).
	_, err := c.SendMessage(ctx, userTextFor(task, "again"))
	wantA2AError(t, "message/send to a completed task", err, a2a.ErrInvalidParams)
}

func testPeerSlowCancel(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "slow", true) // polling: message/send returns at once
	task := send(t, ctx, c, userText("30"))
	// a2a-go returns the stored task as it is when the first event has been
	// applied: submitted, or already working.
	if s := task.Status.State; s != a2a.TaskStateSubmitted && s != a2a.TaskStateWorking {
		t.Fatalf("non-blocking send: state %s, want submitted or working", s)
	}
	canceled, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: task.ID})
	if err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	if canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("tasks/cancel returned state %s", canceled.Status.State)
	}
	pollState(t, ctx, c, task.ID, a2a.TaskStateCanceled)
	// a2a-go: a second cancel returns the canceled task, not TaskNotCancelable.
	again, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: task.ID})
	if err != nil || again.Status.State != a2a.TaskStateCanceled {
		t.Errorf("second tasks/cancel: %v, %+v", err, again)
	}
}

func testPeerSlowStreamCancel(t *testing.T, h *harness) {
	streamAndCancel(t, h.ctx(t), h.client(t, "slow", false))
}

func testPeerSlowProgress(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	c := h.client(t, "slow", false)
	evs, err := collect(c.SendStreamingMessage(ctx, userText("2")))
	if err != nil {
		t.Fatalf("message/stream: %v after %s", err, describe(evs))
	}
	t.Logf("events: %s", describe(evs))
	lastStatus(t, evs, a2a.TaskStateCompleted)
	progress, result := 0, ""
	for _, ev := range evs {
		switch e := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.State == a2a.TaskStateWorking && strings.HasPrefix(statusText(e.Status), "progress: ") {
				progress++
			}
		case *a2a.TaskArtifactUpdateEvent:
			result += textOf(e.Artifact.Parts)
		}
	}
	if progress < 1 || result != "done after 2s" {
		t.Errorf("%d progress updates, result %q: %s", progress, result, describe(evs))
	}
}

// testPeerPush: a push config given with message/send gets the task POSTed
// to it (the SDK's HTTP sender), and tasks/pushNotificationConfig/* work.
func testPeerPush(t *testing.T, h *harness) {
	ctx := h.ctx(t)
	type push struct {
		token string
		task  a2a.Task
	}
	got := make(chan push, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p push
		p.token = r.Header.Get("X-A2A-Notification-Token")
		if err := json.Unmarshal(body, &p.task); err != nil {
			t.Errorf("push body %q: %v", body, err)
		}
		select {
		case got <- p:
		default:
		}
	}))
	t.Cleanup(hook.Close)

	c := h.client(t, "echo", false)
	params := userText("pushed")
	params.Config = &a2a.MessageSendConfig{PushConfig: &a2a.PushConfig{URL: hook.URL, Token: "tok"}}
	task := send(t, ctx, c, params)
	for {
		select {
		case p := <-got:
			if p.token != "tok" || p.task.ID != task.ID {
				t.Fatalf("push with token %q for task %s, want tok for %s", p.token, p.task.ID, task.ID)
			}
			if p.task.Status.State != a2a.TaskStateCompleted {
				continue
			}
		case <-ctx.Done():
			t.Fatal("no push of the completed task")
		}
		break
	}

	cfgs, err := c.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task.ID})
	if err != nil || len(cfgs) != 1 || cfgs[0].Config.URL != hook.URL || cfgs[0].Config.ID == "" {
		t.Fatalf("tasks/pushNotificationConfig/list: %v %+v", err, cfgs)
	}
	one, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: cfgs[0].Config.ID})
	if err != nil || one.Config.URL != hook.URL {
		t.Fatalf("tasks/pushNotificationConfig/get: %v %+v", err, one)
	}
	set, err := c.SetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{ID: "second", URL: hook.URL}})
	if err != nil || set.Config.ID != "second" {
		t.Fatalf("tasks/pushNotificationConfig/set: %v %+v", err, set)
	}
	if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigParams{TaskID: task.ID, ConfigID: "second"}); err != nil {
		t.Fatalf("tasks/pushNotificationConfig/delete: %v", err)
	}
	// a2a-go: get without a config id looks up id "" and fails with -32603.
	_, err = c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: task.ID})
	var ae *a2a.Error
	if !errors.As(err, &ae) || !errors.Is(err, a2a.ErrInternalError) {
		t.Errorf("tasks/pushNotificationConfig/get without an id: %v, want InternalError (-32603)", err)
	}
}
