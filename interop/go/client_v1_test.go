package interop

// Tests of OUR client SDK and OUR CLI speaking A2A 1.0, over JSON-RPC and
// over HTTP+JSON (REST), against servers built with the official 1.x SDKs'
// defaults, against their legacy-compat servers, and against `a2abridge
// serve`: card → send → stream → get → list → cancel → subscribe → push
// config CRUD (and the extended card). Where a peer departs from a2abridge,
// the test asserts the precise error our client reports for it (see
// ocV1Quirks). The 0.3 runs of the same client are in client_peers_test.go.
//
// Like client_peers_test.go, this file uses a2abridge's own a2a package.

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	_ "github.com/a2abridge/a2abridge/client/grpc" // Binding "GRPC"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// ocV1Target is one 1.0 server under test.
type ocV1Target struct {
	name   string
	kind   v1Kind // v1Ours, v1GoPeer, v1JSPeer
	compat bool   // the SDK's legacy-compat server (0.3 served too)
	base   string
	skip   string
	// bindings are those the scenarios run over (nil: ocV1Bindings).
	bindings []ocV1Binding
}

func (tg *ocV1Target) url(agent string) string { return tg.base + "/a2a/" + agent }

// ocV1Quirks are what a server answers, as our client reports it, where
// the servers differ (interop/V1_WIRE_NOTES.md §7).
type ocV1Quirks struct {
	sendTerminal      *a2a.Error // SendMessage to a completed task
	subscribeTerminal *a2a.Error // SubscribeToTask of a completed task
	pushGetDeleted    *a2a.Error // GetTaskPushNotificationConfig after delete
	extendedCard      *a2a.Error // GetExtendedAgentCard of an agent without one
}

// redactsPushSecrets reports whether the target returns a push config's
// token and credentials empty on Get and List (a2abridge, by default).
func (tg *ocV1Target) redactsPushSecrets() bool {
	return tg.kind != v1GoPeer && tg.kind != v1JSPeer
}

func (tg *ocV1Target) quirks() ocV1Quirks {
	switch tg.kind {
	case v1GoPeer:
		return ocV1Quirks{sendTerminal: a2a.ErrInvalidParams, subscribeTerminal: a2a.ErrTaskNotFound,
			pushGetDeleted: a2a.ErrInternal, extendedCard: a2a.ErrAuthenticatedExtendedCardNotConfigured}
	case v1JSPeer:
		// The JS SDK answers an extended card it does not have with
		// UnsupportedOperationError (as its 0.3 server does).
		return ocV1Quirks{sendTerminal: a2a.ErrUnsupportedOperation, subscribeTerminal: a2a.ErrUnsupportedOperation,
			pushGetDeleted: a2a.ErrTaskNotFound, extendedCard: a2a.ErrUnsupportedOperation}
	}
	// a2abridge: an agent whose card declares no extended card answers
	// 1.0's GetExtendedAgentCard with UnsupportedOperationError (A2A 1.0
	// §3.3.4); 0.3 keeps ExtendedAgentCardNotConfigured (-32007).
	return ocV1Quirks{sendTerminal: a2a.ErrUnsupportedOperation, subscribeTerminal: a2a.ErrUnsupportedOperation,
		pushGetDeleted: a2a.ErrTaskNotFound, extendedCard: a2a.ErrUnsupportedOperation}
}

// ocV1Binding is a binding, as the card and --binding name it.
type ocV1Binding struct{ name, cli string }

// ocV1Bindings are the bindings each scenario runs over by default;
// ocV1GRPC is the gRPC binding, run over where a target serves it.
var (
	ocV1Bindings = []ocV1Binding{{a2a.TransportJSONRPC, "jsonrpc"}, {a2a.TransportHTTPJSON, "rest"}}
	ocV1GRPC     = ocV1Binding{a2a.TransportGRPC, "grpc"}
)

// TestOurClientV1 starts the 1.0 servers and runs every scenario over both
// bindings, through the client SDK and through the CLI.
func TestOurClientV1(t *testing.T) {
	targets := []*ocV1Target{
		{name: "a2abridge", kind: v1Ours, base: startServer(t, "--memory", "--push", "--push-allow", "127.0.0.0/8").base,
			bindings: append(slices.Clip(ocV1Bindings), ocV1GRPC)},
		ocV1GoPeer(t, false), ocV1GoPeer(t, true), ocV1GoGRPCPeer(t),
		ocV1JSPeer(t, false), ocV1JSPeer(t, true), ocV1JSGRPCPeer(t),
	}
	scenarios := []struct {
		name string
		run  func(t *testing.T, tg *ocV1Target, binding string)
	}{
		{"SDK/Card", ocV1Card},
		{"SDK/Send", ocV1Send},
		{"SDK/Stream", ocV1Stream},
		{"SDK/Get", ocV1Get},
		{"SDK/List", ocV1List},
		{"SDK/Cancel", ocV1Cancel},
		{"SDK/Subscribe", ocV1Subscribe},
		{"SDK/Push", ocV1Push},
		{"SDK/ExtendedCard", ocV1ExtendedCard},
		{"CLI/All", ocV1CLI},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			if tg.skip != "" {
				skipOrFail(t, tg.skip)
			}
			if tg.compat {
				t.Run("Compat0.3", func(t *testing.T) { ocV1Compat03(t, tg) })
				t.Run("Compat0.3REST", func(t *testing.T) { ocV1Compat03REST(t, tg) })
			}
			bindings := tg.bindings
			if bindings == nil {
				bindings = ocV1Bindings
			}
			for _, b := range bindings {
				t.Run(b.cli, func(t *testing.T) {
					t.Parallel()
					for _, sc := range scenarios {
						t.Run(sc.name, func(t *testing.T) {
							t.Parallel()
							sc.run(t, tg, b.name)
						})
					}
				})
			}
		})
	}
}

// ocV1GoPeer starts cmd/peer-a2agov2 (with --compat when compat).
func ocV1GoPeer(t *testing.T, compat bool) *ocV1Target {
	t.Helper()
	p := v1StartGoPeer(t, compat)
	name := "peer-a2agov2"
	if compat {
		name += "-compat"
	}
	return &ocV1Target{name: name, kind: v1GoPeer, compat: compat, base: p.base}
}

// ocV1GoGRPCPeer starts cmd/peer-a2agov2 --grpc: a2a-go v2's gRPC server
// alone (a2agrpc/v1), each agent on a listener of its own, the cards
// served over HTTP listing that GRPC interface only.
func ocV1GoGRPCPeer(t *testing.T) *ocV1Target {
	t.Helper()
	p := startPeer(t, buildPeer(t, v1PeerPkg), "--grpc", "--step", "250ms")
	return &ocV1Target{name: "peer-a2agov2-grpc", kind: v1GoPeer, base: p.base, bindings: []ocV1Binding{ocV1GRPC}}
}

// ocV1JSPeer starts ../js/peer-server-v1.mjs (with --compat when compat);
// without ../js/node_modules it is skipped, with a message.
func ocV1JSPeer(t *testing.T, compat bool) *ocV1Target {
	t.Helper()
	tg := &ocV1Target{name: "peer-js-v1", kind: v1JSPeer, compat: compat}
	if compat {
		tg.name += "-compat"
	}
	args := []string{"--port", "0"}
	if compat {
		args = append(args, "--compat")
	}
	tg.base, tg.skip = startNodePeer(t, "JS v1 peer", "sdk-v1", "peer-server-v1.mjs", args...)
	return tg
}

// ocV1JSGRPCPeer starts ../js/peer-server-v1.mjs --grpc: @a2a-js/sdk 1.3.0's
// gRPC service (on @grpc/grpc-js) alone, each agent on a listener of its
// own, the cards served over HTTP listing that GRPC interface only.
func ocV1JSGRPCPeer(t *testing.T) *ocV1Target {
	t.Helper()
	tg := &ocV1Target{name: "peer-js-v1-grpc", kind: v1JSPeer, bindings: []ocV1Binding{ocV1GRPC}}
	tg.base, tg.skip = startNodePeer(t, "JS v1 peer", "sdk-v1", "peer-server-v1.mjs", "--port", "0", "--grpc", "--step-ms", "250")
	return tg
}

// ocV1Dial resolves an agent and requires the client to speak 1.0 over binding.
func ocV1Dial(t *testing.T, ctx context.Context, tg *ocV1Target, agent, binding string) *client.Client {
	t.Helper()
	c, err := client.Dial(ctx, tg.url(agent), client.Options{Binding: binding})
	if err != nil {
		t.Fatalf("client.Dial(%s, %s): %v", tg.url(agent), binding, err)
	}
	in := c.Interface()
	at := strings.HasPrefix(in.URL, tg.url(agent))
	if binding == a2a.TransportGRPC {
		// A gRPC target: the card server's host, and a port.
		t.Cleanup(func() { _ = c.Close() })
		host, _, err := net.SplitHostPort(in.URL)
		at = err == nil && strings.HasPrefix(tg.base, "http://"+host+":")
	}
	if in.ProtocolVersion != a2a.Version10 || in.Binding != binding || !at {
		t.Fatalf("interface %s, want A2A 1.0 %s at %s", in, binding, tg.url(agent))
	}
	return c
}

// ocV1Compat03: a legacy-compat server's union card also lets our client
// speak 0.3, forced with Options.Protocol; by default it picks 1.0.
func ocV1Compat03(t *testing.T, tg *ocV1Target) {
	ctx := ocCtx(t)
	def, err := client.Dial(ctx, tg.url("echo"), client.Options{})
	if err != nil || def.Interface().ProtocolVersion != a2a.Version10 {
		t.Fatalf("default choice on a compat card: %v, %v", def, err)
	}
	c, err := client.Dial(ctx, tg.url("echo"), client.Options{Protocol: a2a.Version03})
	if err != nil {
		t.Fatalf("client.Dial --protocol 0.3: %v", err)
	}
	if in := c.Interface(); in.ProtocolVersion != a2a.Version03 || in.Binding != a2a.TransportJSONRPC {
		t.Fatalf("0.3 interface %s", in)
	}
	task := ocSend(t, ctx, c, ocMsg("over 0.3", "", ""))
	if task.Status.State != a2a.TaskStateCompleted || testutil.ArtifactText(task) != "over 0.3" {
		t.Errorf("0.3 send: state %s artifact %q", task.Status.State, testutil.ArtifactText(task))
	}
	got, err := def.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("the 0.3 task read over 1.0: %+v %v", got, err)
	}
}

func ocV1Card(t *testing.T, tg *ocV1Target, binding string) {
	ctx := ocCtx(t)
	for _, agent := range []string{"echo", "chat", "slow"} {
		c := ocV1Dial(t, ctx, tg, agent, binding)
		card := c.Card()
		if card.Name != agent || !card.Capabilities.Streaming || len(card.Skills) == 0 {
			t.Errorf("%s: card %q capabilities %+v", agent, card.Name, card.Capabilities)
		}
	}
}

func ocV1Send(t *testing.T, tg *ocV1Target, binding string) {
	ctx := ocCtx(t)
	c := ocV1Dial(t, ctx, tg, "echo", binding)
	task := ocSend(t, ctx, c, ocMsg(echoInput, "", ""))
	if task.ID == "" || task.Status.State != a2a.TaskStateCompleted || testutil.ArtifactText(task) != echoInput {
		t.Fatalf("send: task %q state %s artifact %q", task.ID, task.Status.State, testutil.ArtifactText(task))
	}
	chat := ocV1Dial(t, ctx, tg, "chat", binding)
	first := ocSend(t, ctx, chat, ocMsg("hello", "", ""))
	if first.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("chat turn 1: %s", first.Status.State)
	}
	done := ocSend(t, ctx, chat, ocMsg("bye", first.ID, first.ContextID))
	if done.ID != first.ID || done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("chat bye: task %s state %s", done.ID, done.Status.State)
	}
	_, err := chat.SendMessage(ctx, ocMsg("again", first.ID, first.ContextID))
	ocWantErr(t, "SendMessage to a completed task", err, tg.quirks().sendTerminal)
}

// ocV1Stream: the Task first, the echo's chunks, a completed status last
// (Final, as 1.0 has no final flag), and the stream ends by itself.
func ocV1Stream(t *testing.T, tg *ocV1Target, binding string) {
	ctx := ocCtx(t)
	c := ocV1Dial(t, ctx, tg, "echo", binding)
	evs, err := collectN(c.SendStreamingMessage(ctx, ocMsg(echoInput, "", "")), 100)
	if err != nil {
		t.Fatalf("SendStreamingMessage: %v after %s", err, ocDescribe(evs))
	}
	first, ok := evs[0].Event.(*a2a.Task)
	if !ok {
		t.Fatalf("first event is not a Task: %s", ocDescribe(evs))
	}
	if ocFinal(t, evs, a2a.TaskStateCompleted).TaskID != first.ID {
		t.Errorf("final event of another task: %s", ocDescribe(evs))
	}
	var text strings.Builder
	for _, ev := range evs {
		if a, ok := ev.Event.(*a2a.TaskArtifactUpdateEvent); ok {
			text.WriteString(testutil.Text(a.Artifact.Parts))
		}
		if ev.Resumed || ev.Gap {
			t.Errorf("resumed/gap on an unbroken stream: %s", ocDescribe(evs))
		}
	}
	if text.String() != echoInput {
		t.Errorf("streamed text %q, want %q", text.String(), echoInput)
	}
}

func ocV1Get(t *testing.T, tg *ocV1Target, binding string) {
	ctx := ocCtx(t)
	c := ocV1Dial(t, ctx, tg, "echo", binding)
	task := ocSend(t, ctx, c, ocMsg("history me", "", ""))
	got, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID, HistoryLength: ptr(1)})
	if err != nil || got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted || testutil.ArtifactText(got) != "history me" {
		t.Fatalf("GetTask: %+v %v", got, err)
	}
	if len(got.History) != 1 || testutil.Text(got.History[0].Parts) != "history me" {
		t.Errorf("historyLength 1: history %+v", got.History)
	}
	_, err = c.GetTask(ctx, a2a.GetTaskRequest{ID: "no-such-task"})
	ocWantErr(t, "GetTask of an unknown task", err, a2a.ErrTaskNotFound)
}

// ocV1List pages through the two tasks of one context.
func ocV1List(t *testing.T, tg *ocV1Target, binding string) {
	ctx := ocCtx(t)
	c := ocV1Dial(t, ctx, tg, "echo", binding)
	one := ocSend(t, ctx, c, ocMsg("list one", "", ""))
	two := ocSend(t, ctx, c, ocMsg("list two", "", one.ContextID))
	r, err := c.ListTasks(ctx, a2a.ListTasksRequest{ContextID: one.ContextID, PageSize: ptr(1)})
	if err != nil || len(r.Tasks) != 1 || r.NextPageToken == "" || r.TotalSize != 2 {
		t.Fatalf("ListTasks page 1: %+v %v", r, err)
	}
	r2, err := c.ListTasks(ctx, a2a.ListTasksRequest{ContextID: one.ContextID, PageSize: ptr(1), PageToken: r.NextPageToken})
	if err != nil || len(r2.Tasks) != 1 || r2.NextPageToken != "" {
		t.Fatalf("ListTasks page 2: %+v %v", r2, err)
	}
	ids := map[string]bool{r.Tasks[0].ID: true, r2.Tasks[0].ID: true}
	if !ids[one.ID] || !ids[two.ID] {
		t.Errorf("listed %v, want %s and %s", ids, one.ID, two.ID)
	}
}

func ocV1Cancel(t *testing.T, tg *ocV1Target, binding string) {
	ctx := ocCtx(t)
	c := ocV1Dial(t, ctx, tg, "slow", binding)
	task := ocSend(t, ctx, c, ocNonBlocking(ocMsg("30", "", "")))
	canceled, err := c.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID})
	if err != nil || canceled.ID != task.ID || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask: %+v %v", canceled, err)
	}
	ec := ocV1Dial(t, ctx, tg, "echo", binding)
	done := ocSend(t, ctx, ec, ocMsg("done", "", ""))
	_, err = ec.CancelTask(ctx, a2a.CancelTaskRequest{ID: done.ID})
	ocWantErr(t, "CancelTask of a completed task", err, a2a.ErrTaskNotCancelable)
	_, err = ec.CancelTask(ctx, a2a.CancelTaskRequest{ID: "no-such-task"})
	ocWantErr(t, "CancelTask of an unknown task", err, a2a.ErrTaskNotFound)
}

// ocFirstTask returns the first event when it is a Task snapshot.
func ocFirstTask(evs []client.StreamEvent) (*a2a.Task, bool) {
	if len(evs) == 0 {
		return nil, false
	}
	t, ok := evs[0].Event.(*a2a.Task)
	return t, ok
}

// ocV1Subscribe: a running task's events to its end; a completed task and
// an unknown one are the servers' errors.
func ocV1Subscribe(t *testing.T, tg *ocV1Target, binding string) {
	ctx := ocCtx(t)
	c := ocV1Dial(t, ctx, tg, "slow", binding)
	task := ocSend(t, ctx, c, ocNonBlocking(ocMsg("2", "", "")))
	evs, err := collectN(c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, ""), 50)
	if err != nil {
		t.Fatalf("SubscribeToTask: %v after %s", err, ocDescribe(evs))
	}
	if st := ocFinal(t, evs, a2a.TaskStateCompleted); st.TaskID != task.ID {
		t.Errorf("final event of task %s, want %s", st.TaskID, task.ID)
	}
	if _, ok := evs[0].Event.(*a2a.Task); !ok {
		t.Errorf("first event is not the Task snapshot: %s", ocDescribe(evs))
	}
	// A peer may still hold the finished execution for a moment after
	// its stream ended (a2a-go v2's compat server then answers with the
	// completed Task instead of its error): ask again shortly, until it
	// has settled.
	for attempt := 0; ; attempt++ {
		evs, err = collectN(c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, ""), 5)
		snap, isTask := ocFirstTask(evs)
		if err != nil || len(evs) != 1 || !isTask || !snap.Status.State.Terminal() || attempt == 5 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(evs) != 0 {
		t.Errorf("SubscribeToTask of a completed task: events %s", ocDescribe(evs))
	}
	ocWantErr(t, "SubscribeToTask of a completed task", err, tg.quirks().subscribeTerminal)
	evs, err = collectN(c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: "no-such-task"}, ""), 5)
	if len(evs) != 0 {
		t.Errorf("SubscribeToTask of an unknown task: events %s", ocDescribe(evs))
	}
	ocWantErr(t, "SubscribeToTask of an unknown task", err, a2a.ErrTaskNotFound)
}

// ocV1Push: create, get, list, delete, get again, on a running task.
func ocV1Push(t *testing.T, tg *ocV1Target, binding string) {
	ctx := ocCtx(t)
	ocV1PushCRUD(t, ctx, tg, ocV1Dial(t, ctx, tg, "slow", binding))
}

// ocV1PushCRUD: create, get, list, delete, list and get again, create for
// an unknown task, over c (the slow agent).
func ocV1PushCRUD(t *testing.T, ctx context.Context, tg *ocV1Target, c *client.Client) {
	t.Helper()
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(hook.Close)
	task := ocSend(t, ctx, c, ocNonBlocking(ocMsg("5", "", "")))
	t.Cleanup(func() { c.CancelTask(context.WithoutCancel(ctx), a2a.CancelTaskRequest{ID: task.ID}) })
	want := a2a.PushNotificationConfig{ID: "cfg-1", URL: hook.URL + "/h", Token: "tok-1",
		Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}, Credentials: "secret-1"}}
	set, err := c.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: task.ID, PushNotificationConfig: want})
	if err != nil || set.TaskID != task.ID || set.PushNotificationConfig.ID != "cfg-1" || set.PushNotificationConfig.URL != want.URL {
		t.Fatalf("create: %+v %v", set, err)
	}
	got, err := c.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"})
	if err != nil || got.PushNotificationConfig.URL != want.URL {
		t.Fatalf("get: %+v %v", got, err)
	}
	// a2abridge returns a config's secrets empty on read; the peers return them.
	if wantTok := map[bool]string{true: "", false: "tok-1"}[tg.redactsPushSecrets()]; got.PushNotificationConfig.Token != wantTok {
		t.Errorf("get: token %q, want %q", got.PushNotificationConfig.Token, wantTok)
	}
	list, next, err := c.ListTaskPushNotificationConfigs(ctx, a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
	if err != nil || len(list) != 1 || next != "" || list[0].PushNotificationConfig.ID != "cfg-1" {
		t.Fatalf("list: %+v %q %v", list, next, err)
	}
	if err := c.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	list, _, err = c.ListTaskPushNotificationConfigs(ctx, a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
	if err != nil || len(list) != 0 {
		t.Fatalf("list after delete: %+v %v", list, err)
	}
	_, err = c.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"})
	ocWantErr(t, "get of a deleted config", err, tg.quirks().pushGetDeleted)
	_, err = c.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: "no-such-task", PushNotificationConfig: want})
	ocWantErr(t, "create for an unknown task", err, a2a.ErrTaskNotFound)
}

func ocV1ExtendedCard(t *testing.T, tg *ocV1Target, binding string) {
	ctx := ocCtx(t)
	c := ocV1Dial(t, ctx, tg, "echo", binding)
	_, err := c.GetExtendedAgentCard(ctx)
	ocWantErr(t, "GetExtendedAgentCard", err, tg.quirks().extendedCard)
}

// ocV1CLI runs the client commands with --binding: card, send, stream,
// get, list, cancel, resubscribe, push set/get/list/delete; --json prints
// the 1.0 wire JSON.
func ocV1CLI(t *testing.T, tg *ocV1Target, binding string) {
	flag := "rest"
	switch binding {
	case a2a.TransportJSONRPC:
		flag = "jsonrpc"
	case a2a.TransportGRPC:
		flag = "grpc"
	}
	cli := func(args ...string) cliResult { return runCLI(t, "", append(args, "--binding", flag)...) }
	r := cli("card", tg.url("echo"))
	r.want(t, "card", 0, 1)
	if jstr(r.lines[0], "name") != "echo" || jget(r.lines[0], "supportedInterfaces") == nil {
		t.Errorf("card --json: %s", r.stdout)
	}
	r = cli("send", tg.url("echo"), "cli hello")
	r.want(t, "send", 0, 1)
	id := jstr(r.lines[0], "task", "id")
	if id == "" || jstr(r.lines[0], "task", "status", "state") != "TASK_STATE_COMPLETED" || jstr(r.lines[0], "task", "artifacts", 0, "parts", 0, "text") != "cli hello" {
		t.Fatalf("send: %s", r.stdout)
	}
	r = cli("get", tg.url("echo"), id, "--history", "1")
	r.want(t, "get", 0, 1)
	if jstr(r.lines[0], "id") != id || jstr(r.lines[0], "history", 0, "parts", 0, "text") != "cli hello" {
		t.Errorf("get: %s", r.stdout)
	}
	cli("get", tg.url("echo"), "no-such-task").wantA2AError(t, "get of an unknown task", a2a.ErrTaskNotFound)
	r = cli("list", tg.url("echo"), "--context", jstr(r.lines[0], "contextId"))
	r.want(t, "list", 0, 1)
	if jstr(r.lines[0], "tasks", 0, "id") != id || jstr(r.lines[0], "nextPageToken") != "" {
		t.Errorf("list: %s", r.stdout)
	}
	r = cli("stream", tg.url("echo"), "cli stream")
	r.want(t, "stream", 0, -1)
	last := r.lines[len(r.lines)-1]
	if jget(r.lines[0], "task") == nil || jstr(last, "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Errorf("stream: %s", r.stdout)
	}
	r = cli("send", tg.url("slow"), "3", "--no-blocking")
	r.want(t, "send --no-blocking", 0, 1)
	slowID := jstr(r.lines[0], "task", "id")
	r = cli("resubscribe", tg.url("slow"), slowID)
	r.want(t, "resubscribe", 0, -1)
	if jstr(r.lines[len(r.lines)-1], "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Errorf("resubscribe: %s", r.stdout)
	}
	r = cli("send", tg.url("slow"), "30", "--no-blocking")
	r.want(t, "send --no-blocking", 0, 1)
	slowID = jstr(r.lines[0], "task", "id")
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(hook.Close)
	r = cli("push", "set", tg.url("slow"), slowID, hook.URL+"/cli", "--id", "cfg-cli", "--push-token", "t2")
	r.want(t, "push set", 0, 1)
	if jstr(r.lines[0], "id") != "cfg-cli" || jstr(r.lines[0], "taskId") != slowID {
		t.Errorf("push set: %s", r.stdout)
	}
	r = cli("push", "get", tg.url("slow"), slowID, "cfg-cli")
	r.want(t, "push get", 0, 1)
	if jstr(r.lines[0], "url") != hook.URL+"/cli" {
		t.Errorf("push get: %s", r.stdout)
	}
	cli("push", "list", tg.url("slow"), slowID).want(t, "push list", 0, 1)
	cli("push", "delete", tg.url("slow"), slowID, "cfg-cli").want(t, "push delete", 0, 1)
	r = cli("push", "list", tg.url("slow"), slowID)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "" {
		t.Errorf("push list after delete: exit %d %q", r.code, r.stdout)
	}
	r = cli("cancel", tg.url("slow"), slowID)
	r.want(t, "cancel", 0, 1)
	if jstr(r.lines[0], "status", "state") != "TASK_STATE_CANCELED" {
		t.Errorf("cancel: %s", r.stdout)
	}
	cli("cancel", tg.url("echo"), id).wantA2AError(t, "cancel of a completed task", a2a.ErrTaskNotCancelable)
}
