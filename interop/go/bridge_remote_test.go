package interop

// The `a2a` bridge kind (bridge/remote) against code
// nobody here wrote: our bridge agent, hosted by a server.Host in this test
// process, fronts
//
//	js        the @a2a-js/sdk 1.3.0 peer (../js/peer-server-v1.mjs), over the
//	          interface its card prefers (A2A 1.0 JSON-RPC)
//	js-rest   the same peer, over its A2A 1.0 HTTP+JSON interface (binding: rest)
//	go        the a2a-go v0.3.15 peer (cmd/peer-a2ago), A2A 0.3 JSON-RPC
//	go-grpc   the a2a-go v2.4.0 peer serving gRPC alone (cmd/peer-a2agov2
//	          --grpc): the bridge, configured with no binding, calls the
//	          only interface its card offers, GRPC
//	js-grpc   the @a2a-js/sdk 1.3.0 peer serving gRPC alone
//	          (../js/peer-server-v1.mjs --grpc), likewise
//
// and the official clients call the front: a2a-go v2 (v2.4.0, default
// factory: A2A 1.0) and a2a-go v0.3.15 (A2A 0.3 JSON-RPC) here, and the
// JavaScript clients of @a2a-js/sdk 1.3.0 and 0.3.14 through
// ../js/bridge-clients.mjs. Scenarios: send, streams whose events reach the
// caller while the remote task is still running (checked at the peer),
// cancel forwarded to the remote task, multi-turn on the same remote task.

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ba2a "github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/remote"
	bclient "github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
	bserver "github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2av2 "github.com/a2aproject/a2a-go/v2/a2a"
	clientv2 "github.com/a2aproject/a2a-go/v2/a2aclient"
	cardv2 "github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// bridgeStep is the peers' slow-agent step: progress every 250 ms.
const bridgeStep = 250 * time.Millisecond

// bridgeRemote is one remote behind the front: its agents are served
// there as PREFIX-echo, PREFIX-chat and PREFIX-slow.
type bridgeRemote struct {
	prefix  string
	peer    string // the peer's base URL
	binding string // remote.Config.Binding
	skip    string
	// grpcOnly: the peer serves A2A over gRPC alone (its cards over HTTP).
	grpcOnly bool
}

// TestBridgeRemote runs every scenario, per remote and per client of the
// front: TestBridgeRemote/{js,js-rest,js-grpc,go,go-grpc}/{a2a-go-v2,a2a-go-v0.3}/{Send,…}
// and TestBridgeRemote/js-clients.
func TestBridgeRemote(t *testing.T) {
	remotes := []*bridgeRemote{{prefix: "go", peer: bridgeGoPeer(t)},
		{prefix: "go-grpc", peer: startPeer(t, buildPeer(t, v1PeerPkg), "--grpc", "--step", bridgeStep.String(), "--log-level", "info").base, grpcOnly: true}}
	js := v1StartJSPeerArgs(t, "--step-ms", fmt.Sprint(bridgeStep.Milliseconds()))
	jsGRPC := v1StartJSPeerArgs(t, "--grpc", "--step-ms", fmt.Sprint(bridgeStep.Milliseconds()))
	remotes = append(remotes,
		&bridgeRemote{prefix: "js", peer: js.base, skip: js.skip},
		&bridgeRemote{prefix: "js-rest", peer: js.base, binding: "rest", skip: js.skip},
		&bridgeRemote{prefix: "js-grpc", peer: jsGRPC.base, skip: jsGRPC.skip, grpcOnly: true})
	front := startBridgeFront(t, remotes)

	scenarios := []struct {
		name string
		run  func(t *testing.T, e *bridgeEnv)
	}{
		{"Send", bridgeSend},
		{"StreamEcho", bridgeStreamEcho},
		{"StreamSlow", bridgeStreamSlow},
		{"StreamLiveThenCancel", bridgeStreamCancel},
		{"MultiTurn", bridgeMultiTurn},
	}
	callers := []func(base string) bridgeCaller{
		func(base string) bridgeCaller { return &v2Caller{base: base} },
		func(base string) bridgeCaller { return &v03Caller{base: base} },
	}
	for _, rm := range remotes {
		t.Run(rm.prefix, func(t *testing.T) {
			t.Parallel()
			if rm.skip != "" {
				skipOrFail(t, rm.skip)
			}
			for _, mk := range callers {
				c := mk(front)
				t.Run(c.name(), func(t *testing.T) {
					t.Parallel()
					for _, sc := range scenarios {
						t.Run(sc.name, func(t *testing.T) {
							t.Parallel()
							sc.run(t, &bridgeEnv{front: front, rm: rm, c: c})
						})
					}
				})
			}
		})
	}
	t.Run("js-clients", func(t *testing.T) {
		t.Parallel()
		if js.skip != "" {
			skipOrFail(t, js.skip)
		}
		bridgeJSClients(t, front, remotes)
	})
}

// bridgeGoPeer starts cmd/peer-a2ago with the bridge step.
func bridgeGoPeer(t *testing.T) string {
	t.Helper()
	return startPeer(t, buildPeer(t, peerPkg), "--keep-alive", "250ms", "--step", bridgeStep.String(), "--log-level", "info").base
}

// v1StartJSPeerArgs starts ../js/peer-server-v1.mjs with extra args;
// without ../js/node_modules the target is skipped (skip is set).
func v1StartJSPeerArgs(t *testing.T, args ...string) *v1Target {
	t.Helper()
	tg := &v1Target{name: "peer-js-v1", kind: v1JSPeer}
	tg.base, tg.skip = startNodePeer(t, "JS v1 peer", "sdk-v1", "peer-server-v1.mjs", append([]string{"--port", "0"}, args...)...)
	return tg
}

// startBridgeFront hosts a bridge agent per remote agent on a loopback
// server (memory store) and returns its base URL. Each card is derived
// from the remote's (remote.DeriveCard).
func startBridgeFront(t *testing.T, remotes []*bridgeRemote) string {
	t.Helper()
	eng, err := bserver.NewEngine(context.Background(), memory.New(), bserver.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	host := bserver.NewHost(bserver.HostOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	for _, rm := range remotes {
		if rm.skip != "" {
			continue
		}
		for _, agent := range []string{"echo", "chat", "slow"} {
			ag, err := remote.New(remote.Config{URL: rm.peer + "/a2a/" + agent, Binding: rm.binding})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ag.Close() })
			rc, err := ag.RemoteCard(ctx)
			if err != nil {
				t.Fatal(err)
			}
			card := remote.DeriveCard(rc)
			if card.Name != agent || !card.Capabilities.Streaming || len(card.Skills) != 1 {
				t.Fatalf("card derived from the %s peer's %s: %+v", rm.prefix, agent, card)
			}
			host.Add(bserver.NewHandler(eng, rm.prefix+"-"+agent, ag, card, bserver.HandlerOptions{}))
		}
	}
	ts := testutil.Serve(t, host, eng.Close)
	return ts.URL
}

// ---------------------------------------------------------------- callers

// bTask is a task as a caller of the front sees it, in A2A 0.3 spelling.
type bTask struct {
	id, contextID     string
	state             string // "working", "input-required", …
	status, artifacts string // texts of the status message and of the artifacts
	remoteID          string // metadata a2abridge/remote taskId
}

// bEvent is one stream event as a caller sees it.
type bEvent struct {
	kind         string // task, status, artifact, message
	taskID       string
	state        string
	text         string
	append, last bool
}

func (e bEvent) String() string {
	switch e.kind {
	case "artifact":
		return fmt.Sprintf("artifact(%q append=%v last=%v)", e.text, e.append, e.last)
	case "message":
		return fmt.Sprintf("message(%q)", e.text)
	}
	return fmt.Sprintf("%s(%s %q)", e.kind, e.state, e.text)
}

// bridgeCaller is an official client of the front.
type bridgeCaller interface {
	name() string
	send(t *testing.T, ctx context.Context, agent, text, taskID string) bTask
	stream(t *testing.T, ctx context.Context, agent, text, taskID string) iter.Seq2[bEvent, error]
	cancel(t *testing.T, ctx context.Context, agent, taskID string) bTask
	get(t *testing.T, ctx context.Context, agent, taskID string) bTask
}

// state03 spells a 1.0 state (TASK_STATE_INPUT_REQUIRED) as 0.3 does.
func state03(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(s, "TASK_STATE_")), "_", "-")
}

func remoteIDOf(md map[string]any) string {
	ref, _ := remote.RefOf(ba2a.Task{Metadata: md})
	return ref.TaskID
}

// v2Caller: a2a-go v2 with the default resolver and factory.
type v2Caller struct{ base string }

func (c *v2Caller) name() string { return "a2a-go-v2" }

func (c *v2Caller) client(t *testing.T, ctx context.Context, agent string) *clientv2.Client {
	t.Helper()
	card, err := cardv2.DefaultResolver.Resolve(ctx, c.base+"/a2a/"+agent)
	if err != nil {
		t.Fatalf("resolve %s: %v", agent, err)
	}
	cl, err := clientv2.NewFromCard(ctx, card)
	if err != nil {
		t.Fatalf("client for %s: %v", agent, err)
	}
	t.Cleanup(func() { _ = cl.Destroy() })
	return cl
}

func v2Task(task *a2av2.Task) bTask {
	return bTask{id: string(task.ID), contextID: task.ContextID, state: state03(string(task.Status.State)),
		status: v1StatusText(task.Status), artifacts: v1ArtifactText(task), remoteID: remoteIDOf(task.Metadata)}
}

func (c *v2Caller) send(t *testing.T, ctx context.Context, agent, text, taskID string) bTask {
	t.Helper()
	return v2Task(v1SendTask(t, ctx, c.client(t, ctx, agent), v1Text(text, a2av2.TaskID(taskID), "")))
}

func (c *v2Caller) stream(t *testing.T, ctx context.Context, agent, text, taskID string) iter.Seq2[bEvent, error] {
	cl := c.client(t, ctx, agent)
	return func(yield func(bEvent, error) bool) {
		for ev, err := range cl.SendStreamingMessage(ctx, v1Text(text, a2av2.TaskID(taskID), "")) {
			var be bEvent
			switch e := ev.(type) {
			case *a2av2.Task:
				be = bEvent{kind: "task", taskID: string(e.ID), state: state03(string(e.Status.State)), text: v1StatusText(e.Status)}
			case *a2av2.TaskStatusUpdateEvent:
				be = bEvent{kind: "status", taskID: string(e.TaskID), state: state03(string(e.Status.State)), text: v1StatusText(e.Status)}
			case *a2av2.TaskArtifactUpdateEvent:
				be = bEvent{kind: "artifact", taskID: string(e.TaskID), text: v1TextOf(e.Artifact.Parts), append: e.Append, last: e.LastChunk}
			case *a2av2.Message:
				be = bEvent{kind: "message", taskID: string(e.TaskID), text: v1TextOf(e.Parts)}
			}
			if !yield(be, err) || err != nil {
				return
			}
		}
	}
}

func (c *v2Caller) cancel(t *testing.T, ctx context.Context, agent, taskID string) bTask {
	t.Helper()
	task, err := c.client(t, ctx, agent).CancelTask(ctx, &a2av2.CancelTaskRequest{ID: a2av2.TaskID(taskID)})
	if err != nil {
		t.Fatalf("CancelTask: %v", err)
	}
	return v2Task(task)
}

func (c *v2Caller) get(t *testing.T, ctx context.Context, agent, taskID string) bTask {
	t.Helper()
	task, err := c.client(t, ctx, agent).GetTask(ctx, &a2av2.GetTaskRequest{ID: a2av2.TaskID(taskID)})
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	return v2Task(task)
}

// v03Caller: a2a-go v0.3.15 over JSON-RPC (the 0.3 tests' harness).
type v03Caller struct{ base string }

func (c *v03Caller) name() string { return "a2a-go-v0.3" }

func (c *v03Caller) h() *harness { return &harness{base: c.base, http: &http.Client{}} }

func v03Task(task *a2a03.Task) bTask {
	return bTask{id: string(task.ID), contextID: task.ContextID, state: string(task.Status.State),
		status: statusText(task.Status), artifacts: artifactText(task), remoteID: remoteIDOf(task.Metadata)}
}

func v03Params(text, taskID string) *a2a03.MessageSendParams {
	p := userText(text)
	p.Message.TaskID = a2a03.TaskID(taskID)
	return p
}

func (c *v03Caller) send(t *testing.T, ctx context.Context, agent, text, taskID string) bTask {
	t.Helper()
	return v03Task(send(t, ctx, c.h().client(t, agent, false), v03Params(text, taskID)))
}

func (c *v03Caller) stream(t *testing.T, ctx context.Context, agent, text, taskID string) iter.Seq2[bEvent, error] {
	cl := c.h().client(t, agent, false)
	return func(yield func(bEvent, error) bool) {
		for ev, err := range cl.SendStreamingMessage(ctx, v03Params(text, taskID)) {
			var be bEvent
			switch e := ev.(type) {
			case *a2a03.Task:
				be = bEvent{kind: "task", taskID: string(e.ID), state: string(e.Status.State), text: statusText(e.Status)}
			case *a2a03.TaskStatusUpdateEvent:
				be = bEvent{kind: "status", taskID: string(e.TaskID), state: string(e.Status.State), text: statusText(e.Status)}
			case *a2a03.TaskArtifactUpdateEvent:
				be = bEvent{kind: "artifact", taskID: string(e.TaskID), text: textOf(e.Artifact.Parts), append: e.Append, last: e.LastChunk}
			case *a2a03.Message:
				be = bEvent{kind: "message", taskID: string(e.TaskID), text: textOf(e.Parts)}
			}
			if !yield(be, err) || err != nil {
				return
			}
		}
	}
}

func (c *v03Caller) cancel(t *testing.T, ctx context.Context, agent, taskID string) bTask {
	t.Helper()
	task, err := c.h().client(t, agent, false).CancelTask(ctx, &a2a03.TaskIDParams{ID: a2a03.TaskID(taskID)})
	if err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	return v03Task(task)
}

func (c *v03Caller) get(t *testing.T, ctx context.Context, agent, taskID string) bTask {
	t.Helper()
	task, err := c.h().client(t, agent, false).GetTask(ctx, &a2a03.TaskQueryParams{ID: a2a03.TaskID(taskID)})
	if err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	return v03Task(task)
}

// ---------------------------------------------------------------- scenarios

// bridgeEnv is one scenario's front, remote and caller.
type bridgeEnv struct {
	front string
	rm    *bridgeRemote
	c     bridgeCaller
}

func (e *bridgeEnv) agent(name string) string { return e.rm.prefix + "-" + name }

// peerTask reads a task at the peer itself, with our client.
func (e *bridgeEnv) peerTask(t *testing.T, ctx context.Context, agent, id string) *ba2a.Task {
	t.Helper()
	c, err := bclient.Dial(ctx, e.rm.peer+"/a2a/"+agent, bclient.Options{})
	if err != nil {
		t.Fatalf("dial the peer's %s: %v", agent, err)
	}
	defer c.Close()
	task, err := c.GetTask(ctx, ba2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatalf("GetTask %s at the peer: %v", id, err)
	}
	return task
}

// peerState waits until the peer's task is in state want.
func (e *bridgeEnv) peerState(t *testing.T, ctx context.Context, agent, id string, want ba2a.TaskState) {
	t.Helper()
	for {
		task := e.peerTask(t, ctx, agent, id)
		if task.Status.State == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the peer's task %s stayed %s, want %s", id, task.Status.State, want)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func bCollect(t *testing.T, seq iter.Seq2[bEvent, error]) []bEvent {
	t.Helper()
	evs, err := collect(seq)
	if err != nil {
		t.Fatalf("stream: %v after %v", err, evs)
	}
	return evs
}

// bridgeSend: echo by send; the remote task id is in the metadata, and the
// peer has the same result.
func bridgeSend(t *testing.T, e *bridgeEnv) {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	task := e.c.send(t, ctx, e.agent("echo"), "hello bridge", "")
	if task.state != "completed" || task.artifacts != "hello bridge" || task.remoteID == "" {
		t.Fatalf("send: %+v", task)
	}
	pt := e.peerTask(t, ctx, "echo", task.remoteID)
	if pt.Status.State != ba2a.TaskStateCompleted {
		t.Errorf("the peer's task: %s", pt.Status.State)
	}
}

// bridgeStreamEcho: the peer's artifact chunks arrive as chunks, with
// their append and lastChunk flags.
func bridgeStreamEcho(t *testing.T, e *bridgeEnv) {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	text := strings.Repeat("0123456789", 20) // chunks of 64, 64, 64, 8 at the peer
	evs := bCollect(t, e.c.stream(t, ctx, e.agent("echo"), text, ""))
	var chunks []bEvent
	var got strings.Builder
	for _, ev := range evs {
		if ev.kind == "artifact" {
			chunks = append(chunks, ev)
			got.WriteString(ev.text)
		}
	}
	if len(chunks) != 4 || got.String() != text {
		t.Fatalf("chunks %v, want the peer's 4", evs)
	}
	for i, ch := range chunks {
		if ch.append != (i > 0) || ch.last != (i == 3) {
			t.Errorf("chunk %d: append=%v last=%v", i, ch.append, ch.last)
		}
	}
	if last := evs[len(evs)-1]; last.kind != "status" || last.state != "completed" {
		t.Errorf("stream %v, want to end completed", evs)
	}
}

// bridgeStreamSlow: the peer's progress updates, its artifact and its
// completion, in order.
func bridgeStreamSlow(t *testing.T, e *bridgeEnv) {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	evs := bCollect(t, e.c.stream(t, ctx, e.agent("slow"), "1", ""))
	var progress, result int
	for i, ev := range evs {
		switch {
		case ev.kind == "status" && strings.HasPrefix(ev.text, "progress: "):
			progress++
			if result > 0 {
				t.Errorf("progress after the result: %v", evs)
			}
		case ev.kind == "artifact" && ev.text == "done after 1s":
			result = i
		}
	}
	if progress < 2 || result == 0 || evs[len(evs)-1].state != "completed" {
		t.Errorf("stream %v, want progress updates, the result, completed", evs)
	}
}

// bridgeStreamCancel: a 60 s slow task: its progress updates reach the
// caller while the peer's task is still working (checked at the peer);
// then the caller cancels, the stream ends canceled and the peer's task is
// canceled.
func bridgeStreamCancel(t *testing.T, e *bridgeEnv) {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	next, stop := iter.Pull2(e.c.stream(t, ctx, e.agent("slow"), "60", ""))
	defer stop()
	var seen []bEvent
	progress := 0
	for progress < 2 {
		ev, err, ok := next()
		if !ok || err != nil {
			t.Fatalf("stream ended (%v) after %v", err, seen)
		}
		seen = append(seen, ev)
		if ev.kind == "status" && strings.HasPrefix(ev.text, "progress: ") {
			progress++
		}
	}
	ours := seen[len(seen)-1].taskID
	task := e.c.get(t, ctx, e.agent("slow"), ours)
	if task.remoteID == "" {
		t.Fatalf("no remote task id in the metadata: %+v", task)
	}
	if pt := e.peerTask(t, ctx, "slow", task.remoteID); pt.Status.State != ba2a.TaskStateWorking {
		t.Fatalf("progress passed on, but the peer's task is %s", pt.Status.State)
	}
	if got := e.c.cancel(t, ctx, e.agent("slow"), ours); got.state != "canceled" {
		t.Fatalf("cancel: %+v", got)
	}
	for {
		ev, err, ok := next()
		if err != nil {
			t.Fatalf("stream after cancel: %v after %v", err, seen)
		}
		if !ok {
			break
		}
		seen = append(seen, ev)
	}
	if last := seen[len(seen)-1]; last.state != "canceled" {
		t.Errorf("stream %v, want to end canceled", seen)
	}
	e.peerState(t, ctx, "slow", task.remoteID, ba2a.TaskStateCanceled)
}

// bridgeMultiTurn: chat turns 1 (send), 2 (stream), bye (send), all on
// one remote task: the peer counts the turns from its own history.
func bridgeMultiTurn(t *testing.T, e *bridgeEnv) {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	agent := e.agent("chat")
	t1 := e.c.send(t, ctx, agent, "hello", "")
	if t1.state != "input-required" || t1.status != `turn 1: you said "hello". Say more, or "bye" to finish.` {
		t.Fatalf("turn 1: %+v", t1)
	}
	evs := bCollect(t, e.c.stream(t, ctx, agent, "how are you", t1.id))
	last := evs[len(evs)-1]
	if last.kind != "status" || last.state != "input-required" || last.text != `turn 2: you said "how are you". Say more, or "bye" to finish.` {
		t.Fatalf("turn 2: %v", evs)
	}
	for _, ev := range evs {
		if ev.taskID != t1.id {
			t.Errorf("turn 2 event of task %s, want %s: %v", ev.taskID, t1.id, evs)
		}
	}
	t3 := e.c.send(t, ctx, agent, "bye", t1.id)
	if t3.id != t1.id || t3.state != "completed" || t3.status != "Goodbye! (3 turns)" || t3.remoteID != t1.remoteID {
		t.Fatalf("bye: %+v (turn 1: %+v)", t3, t1)
	}
	if pt := e.peerTask(t, ctx, "chat", t1.remoteID); pt.Status.State != ba2a.TaskStateCompleted {
		t.Errorf("the peer's task: %s", pt.Status.State)
	}
}

// ---------------------------------------------------------------- JS clients

// bridgeJSClients runs ../js/bridge-clients.mjs (node --test): the
// @a2a-js/sdk 1.3.0 and 0.3.14 clients run send, live stream then cancel,
// and multi-turn against the front, for each remote; node exits non-zero
// if any fails.
func bridgeJSClients(t *testing.T, front string, remotes []*bridgeRemote) {
	dir, err := filepath.Abs(filepath.Join("..", "js"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the JS clients need node on PATH: %v", err)
	}
	var prefixes, peers []string
	for _, rm := range remotes {
		if rm.skip != "" || rm.grpcOnly {
			// bridge-clients.mjs reads the remote task at the peer over
			// JSON-RPC, which a gRPC-only peer does not serve; the Go
			// callers cover that remote.
			continue
		}
		version := "1.0"
		if rm.prefix == "go" {
			version = "0.3"
		}
		prefixes = append(prefixes, rm.prefix)
		peers = append(peers, rm.prefix+"="+rm.peer+"@"+version)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*callTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "bridge-clients.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "A2A_BRIDGE_FRONT="+front,
		"A2A_BRIDGE_REMOTES="+strings.Join(prefixes, ","), "A2A_BRIDGE_PEERS="+strings.Join(peers, ","))
	out, err := cmd.CombinedOutput()
	if err != nil || testing.Verbose() {
		t.Logf("%v:\n%s", cmd.Args, out)
	}
	if err != nil {
		t.Fatalf("the JS clients against the bridge: %v", err)
	}
}
