package client_test

// Tests of the client over each interface it speaks (A2A 0.3 JSON-RPC,
// A2A 1.0 JSON-RPC, A2A 1.0 HTTP+JSON, A2A 0.3 HTTP+JSON) against a2abridge's server, of
// interface selection, and of error mapping per binding.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/server"
)

// interfaces are the four ways the client reaches an a2abridge agent,
// with the start of the request that resubscribes to a broken stream.
var interfaces = []struct {
	name    string
	opts    client.Options
	want    client.Interface // URL left out
	resume  string
	version string // the A2A-Version header sent
}{
	{"0.3 JSON-RPC", client.Options{Protocol: a2a.Version03},
		client.Interface{Binding: a2a.TransportJSONRPC, ProtocolVersion: a2a.Version03, CardVersion: "0.3"}, `"method":"tasks/resubscribe"`, ""},
	{"1.0 JSON-RPC", client.Options{},
		client.Interface{Binding: a2a.TransportJSONRPC, ProtocolVersion: a2a.Version10, CardVersion: "1.0"}, `"method":"SubscribeToTask"`, "1.0"},
	{"1.0 HTTP+JSON", client.Options{Binding: a2a.TransportHTTPJSON},
		client.Interface{Binding: a2a.TransportHTTPJSON, ProtocolVersion: a2a.Version10, CardVersion: "1.0"}, `:subscribe HTTP/1.1`, "1.0"},
	{"0.3 HTTP+JSON", client.Options{Protocol: a2a.Version03, Binding: "rest"},
		client.Interface{Binding: a2a.TransportHTTPJSON, ProtocolVersion: a2a.Version03, CardVersion: "0.3"}, `/v1/tasks/`, ""},
}

// retarget returns card with every interface URL that starts with from
// starting with to instead (to put a proxy in between).
func retarget(card a2a.AgentCard, from, to string) a2a.AgentCard {
	re := func(u string) string {
		if strings.HasPrefix(u, from) {
			return to + strings.TrimPrefix(u, from)
		}
		return u
	}
	card.URL = re(card.URL)
	card.SupportedInterfaces = append([]a2a.AgentInterface(nil), card.SupportedInterfaces...)
	for i := range card.SupportedInterfaces {
		card.SupportedInterfaces[i].URL = re(card.SupportedInterfaces[i].URL)
	}
	card.AdditionalInterfaces = append([]a2a.AgentInterface(nil), card.AdditionalInterfaces...)
	for i := range card.AdditionalInterfaces {
		card.AdditionalInterfaces[i].URL = re(card.AdditionalInterfaces[i].URL)
	}
	return card
}

// versionRecorder wraps a handler and records the A2A-Version header of
// every request that is not a card fetch.
type versionRecorder struct {
	h    http.Handler
	mu   sync.Mutex
	seen map[string]bool
}

func (v *versionRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.URL.Path, "/.well-known/") {
		v.mu.Lock()
		v.seen[r.Header.Get("A2A-Version")] = true
		v.mu.Unlock()
	}
	v.h.ServeHTTP(w, r)
}

// TestEveryOperation runs every operation over each interface against
// a2abridge (with push notifications on), and checks the A2A-Version
// header of each request.
func TestEveryOperation(t *testing.T) {
	t.Parallel()
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(hook.Close)
	backend := newServerWith(t, server.EngineOptions{Push: &server.PushOptions{CheckURL: func(context.Context, string) error { return nil }}})
	plain := newServer(t)
	for _, in := range interfaces {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			rec := &versionRecorder{h: backend.Config.Handler, seen: map[string]bool{}}
			ts := httptest.NewServer(rec)
			t.Cleanup(ts.Close)
			ctx := context.Background()
			dialIn := func(base string) *client.Client { return dial(t, base, in.opts) }
			c := dialIn(ts.URL)
			want := in.want
			want.URL = ts.URL + "/a2a/echo"
			if got := c.Interface(); got != want || c.URL() != want.URL {
				t.Fatalf("interface %+v, want %+v", got, want)
			}
			everyTaskOperation(t, ctx, c, in.want.ProtocolVersion)
			everyPushOperation(t, ctx, c, hook.URL, in.want.ProtocolVersion)
			cancelAndChat(t, ctx, dialIn(ts.URL+"/a2a/slow/.well-known/agent-card.json"), dialIn(ts.URL+"/a2a/chat"))

			pc := dial(t, plain.URL, in.opts)
			res, err := pc.SendMessage(ctx, text("x"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pc.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{TaskID: res.(*a2a.Task).ID, ID: "c"}); !errors.Is(err, a2a.ErrPushNotificationNotSupported) {
				t.Fatalf("push get without push: %v", err)
			}
			// The card declares no extended card: 1.0 says so with
			// UnsupportedOperationError (A2A 1.0 §3.3.4), 0.3 with -32007.
			noCard := a2a.ErrAuthenticatedExtendedCardNotConfigured
			if in.want.ProtocolVersion == a2a.Version10 {
				noCard = a2a.ErrUnsupportedOperation
			}
			if _, err := pc.GetExtendedAgentCard(ctx); !errors.Is(err, noCard) {
				t.Fatalf("extended card: %v", err)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.seen) != 1 || !rec.seen[in.version] {
				t.Errorf("A2A-Version headers sent: %v, want only %q", rec.seen, in.version)
			}
		})
	}
}

// everyTaskOperation: send, get, cancel, stream, subscribe, list.
func everyTaskOperation(t *testing.T, ctx context.Context, c *client.Client, version string) {
	t.Helper()
	res, err := c.SendMessage(ctx, text("hello"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateCompleted || task.Artifacts[0].Parts[0].Text() != "hello" {
		t.Fatalf("send: %+v", task)
	}
	n := 0
	got, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID, HistoryLength: &n})
	if err != nil || got.ID != task.ID || len(got.History) != 0 || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("get unknown: %v", err)
	}
	// An empty id is refused: by the server (InvalidParams), or over
	// HTTP+JSON, whose path it would break, by the client.
	for _, err := range []error{
		func() error { _, err := c.GetTask(ctx, a2a.GetTaskRequest{}); return err }(),
		func() error { _, err := c.CancelTask(ctx, a2a.CancelTaskRequest{}); return err }(),
		func() error {
			_, err := c.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "x/"})
			return err
		}(),
	} {
		var ae *a2a.Error
		if err == nil || (!errors.As(err, &ae) && !strings.Contains(err.Error(), "id is empty")) {
			t.Fatalf("empty id: %v", err)
		}
	}
	if _, err := c.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("cancel completed: %v", err)
	}
	var kinds []string
	for ev, err := range c.SendStreamingMessage(ctx, text("stream")) {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, fmt.Sprintf("%s:%T", ev.ID, ev.Event))
	}
	if strings.Join(kinds, ",") != "1:*a2a.Task,2:*a2a.TaskArtifactUpdateEvent,3:*a2a.TaskStatusUpdateEvent" {
		t.Fatalf("stream events %v", kinds)
	}
	// Subscribing to a completed task: 0.3 gets the snapshot and the final
	// status; 1.0 refuses (A2A 1.0 §3.1.6) unless it resumes from an event.
	var got03 []string
	for ev, err := range c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, "") {
		if version == a2a.Version10 {
			if !errors.Is(err, a2a.ErrUnsupportedOperation) {
				t.Fatalf("subscribe to a completed task over 1.0: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got03 = append(got03, fmt.Sprintf("%T", ev.Event))
	}
	if version == a2a.Version03 && strings.Join(got03, ",") != "*a2a.Task,*a2a.TaskStatusUpdateEvent" {
		t.Fatalf("subscribe over 0.3: %v", got03)
	}
	var ids []string
	for ev, err := range c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: task.ID}, "1") {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ev.ID)
	}
	if strings.Join(ids, ",") != "2,3" {
		t.Fatalf("subscribe from event 1: ids %v", ids)
	}
	for _, err := range c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: "nope"}, "") {
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("subscribe unknown: %v", err)
		}
	}
	listTasks(t, ctx, c, version)
}

// listTasks pages through the tasks of one context.
func listTasks(t *testing.T, ctx context.Context, c *client.Client, version string) {
	t.Helper()
	ctxID := a2a.NewID()
	for i := range 3 {
		p := text(fmt.Sprint("list ", i))
		p.Message.ContextID = ctxID
		if _, err := c.SendMessage(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	two := 2
	r, err := c.ListTasks(ctx, a2a.ListTasksRequest{ContextID: ctxID, PageSize: &two})
	if version == a2a.Version03 && c.Interface().Binding == a2a.TransportJSONRPC {
		if !errors.Is(err, client.ErrNotInProtocol) {
			t.Fatalf("ListTasks over 0.3: %v", err)
		}
		return
	}
	if err != nil || len(r.Tasks) != 2 || r.NextPageToken == "" || r.TotalSize != 3 {
		t.Fatalf("list page 1: %+v %v", r, err)
	}
	r2, err := c.ListTasks(ctx, a2a.ListTasksRequest{ContextID: ctxID, PageSize: &two, PageToken: r.NextPageToken, IncludeArtifacts: true})
	if err != nil || len(r2.Tasks) != 1 || r2.NextPageToken != "" || len(r2.Tasks[0].Artifacts) != 1 {
		t.Fatalf("list page 2: %+v %v", r2, err)
	}
	r3, err := c.ListTasks(ctx, a2a.ListTasksRequest{ContextID: ctxID, Status: a2a.TaskStateWorking})
	if err != nil || len(r3.Tasks) != 0 {
		t.Fatalf("list working: %+v %v", r3, err)
	}
}

// everyPushOperation: create, get, list, delete, get again.
func everyPushOperation(t *testing.T, ctx context.Context, c *client.Client, hook, version string) {
	t.Helper()
	res, err := c.SendMessage(ctx, text("push"))
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	want := a2a.PushNotificationConfig{ID: "cfg-1", URL: hook + "/h", Token: "tok"}
	set, err := c.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: id, PushNotificationConfig: want})
	if err != nil || set.TaskID != id || set.PushNotificationConfig.ID != "cfg-1" || set.PushNotificationConfig.URL != want.URL || set.PushNotificationConfig.Token != "tok" {
		t.Fatalf("create: %+v %v", set, err)
	}
	for _, cfgID := range []string{"cfg-1", ""} { // "": the task's first config
		got, err := c.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{TaskID: id, ID: cfgID})
		if err != nil || got.PushNotificationConfig.URL != want.URL || got.TaskID != id {
			t.Fatalf("get %q: %+v %v", cfgID, got, err)
		}
	}
	list, next, err := c.ListTaskPushNotificationConfigs(ctx, a2a.ListTaskPushNotificationConfigsRequest{TaskID: id})
	if err != nil || len(list) != 1 || next != "" || list[0].PushNotificationConfig.ID != "cfg-1" {
		t.Fatalf("list: %+v %q %v", list, next, err)
	}
	if err := c.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigRequest{TaskID: id, ID: "cfg-1"}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = c.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{TaskID: id, ID: "cfg-1"})
	// A missing config is TaskNotFoundError in A2A 1.0, InvalidParamsError
	// on the config id in a2abridge's 0.3 JSON-RPC binding (its 0.3
	// HTTP+JSON binding answers as the 1.0 one).
	wantErr := a2a.ErrTaskNotFound
	if version == a2a.Version03 && c.Interface().Binding == a2a.TransportJSONRPC {
		wantErr = a2a.ErrInvalidParams
	}
	if !errors.Is(err, wantErr) {
		t.Fatalf("get deleted over %s: %v", version, err)
	}
	if _, err := c.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: "nope", PushNotificationConfig: want}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("create for an unknown task: %v", err)
	}
}

// cancelAndChat cancels a running slow task and runs two chat turns.
func cancelAndChat(t *testing.T, ctx context.Context, slow, chat *client.Client) {
	t.Helper()
	f := false
	p := text("30")
	p.Configuration = &a2a.SendMessageConfiguration{Blocking: &f}
	res, err := slow.SendMessage(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := slow.CancelTask(ctx, a2a.CancelTaskRequest{ID: res.(*a2a.Task).ID})
	if err != nil || ct.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %+v %v", ct, err)
	}
	res, err = chat.SendMessage(ctx, text("hi"))
	if err != nil || res.(*a2a.Task).Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("chat: %+v %v", res, err)
	}
	p = text("bye")
	p.Message.TaskID = res.(*a2a.Task).ID
	res, err = chat.SendMessage(ctx, p)
	if err != nil || res.(*a2a.Task).Status.State != a2a.TaskStateCompleted {
		t.Fatalf("chat bye: %+v %v", res, err)
	}
}

// TestTenant: the interface's tenant scopes every call over 1.0 (the
// "tenant" member over JSON-RPC, the path prefix over HTTP+JSON); params
// naming a tenant win.
func TestTenant(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ctx := context.Background()
	card, err := client.Resolve(ctx, ts.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, binding := range []string{a2a.TransportJSONRPC, a2a.TransportHTTPJSON} {
		t.Run(binding, func(t *testing.T) {
			acme := card
			acme.SupportedInterfaces = []a2a.AgentInterface{{URL: ts.URL + "/a2a/echo", Transport: binding, ProtocolVersion: "1.0", Tenant: "acme"}}
			ca, err := client.New(acme, client.Options{})
			if err != nil || ca.Interface().Tenant != "acme" {
				t.Fatalf("%+v %v", ca.Interface(), err)
			}
			res, err := ca.SendMessage(ctx, text("tenant"))
			if err != nil {
				t.Fatal(err)
			}
			id := res.(*a2a.Task).ID
			if _, err := ca.GetTask(ctx, a2a.GetTaskRequest{ID: id}); err != nil {
				t.Fatalf("get within the tenant: %v", err)
			}
			if _, err := ca.GetTask(ctx, a2a.GetTaskRequest{ID: id, Tenant: "other"}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("get from another tenant: %v", err)
			}
			plain, err := client.New(card, client.Options{Binding: binding})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := plain.GetTask(ctx, a2a.GetTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("get without the tenant: %v", err)
			}
			if _, err := plain.GetTask(ctx, a2a.GetTaskRequest{ID: id, Tenant: "acme"}); err != nil {
				t.Fatalf("get naming the tenant: %v", err)
			}
		})
	}
}

// TestForcedChoice: Options.Protocol and Options.Binding are validated,
// and a forced interface the card lacks is an error naming what it offers.
func TestForcedChoice(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ctx := context.Background()
	for _, o := range []client.Options{{Protocol: "2.0"}, {Binding: "GRPC"}, {Protocol: "0.3", Binding: "SOAP"}} {
		if _, err := client.Dial(ctx, ts.URL, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	card, _ := client.Resolve(ctx, ts.URL, client.Options{})
	card.SupportedInterfaces = nil // a 0.3-only card
	_, err := client.New(card, client.Options{Protocol: "1.0"})
	if err == nil || !strings.Contains(err.Error(), "A2A 1.0") || !strings.Contains(err.Error(), "JSONRPC 0.3") {
		t.Fatalf("forced 1.0 on a 0.3 card: %v", err)
	}
	c, err := client.New(card, client.Options{Binding: "rest"})
	if err != nil || c.Interface().Binding != a2a.TransportHTTPJSON || c.Interface().ProtocolVersion != a2a.Version03 {
		t.Fatalf("forced REST on a 0.3 card: %v", err)
	}
	card.AdditionalInterfaces = nil // 0.3 JSON-RPC only
	if c, err = client.New(card, client.Options{Binding: "rest"}); err == nil || !strings.Contains(err.Error(), "HTTP+JSON") {
		t.Fatalf("forced REST on a 0.3 JSON-RPC card: %v", err)
	}
}

// TestColonInTaskID: a task id with a colon is escaped as one HTTP+JSON
// path segment, so it is not read as a custom method (":cancel") and
// reaches the server as the id it is, on every interface.
func TestColonInTaskID(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	for _, in := range interfaces {
		t.Run(in.name, func(t *testing.T) {
			c := dial(t, ts.URL, in.opts)
			for _, id := range []string{"a:cancel", "b:subscribe"} {
				_, err := c.GetTask(t.Context(), a2a.GetTaskRequest{ID: id})
				var ae *a2a.Error
				if !errors.Is(err, a2a.ErrTaskNotFound) || !errors.As(err, &ae) || !strings.Contains(ae.Message, id) {
					t.Errorf("GetTask(%q): %v, want TaskNotFound naming it", id, err)
				}
			}
		})
	}
}
