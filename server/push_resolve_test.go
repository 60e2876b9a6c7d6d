package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/schematest"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/push"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

// hostsResolver is a push.Resolver answering from a map; a name not there
// does not exist (NXDOMAIN). No DNS is involved.
type hostsResolver struct {
	names map[string]string
	mu    sync.Mutex
	n     map[string]int // lookups per name
}

func (r *hostsResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.n[host]++
	r.mu.Unlock()
	ip, ok := r.names[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(ip)}, nil
}

func (r *hostsResolver) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[host]
}

// forbiddenHooks are webhook hosts that resolve to forbidden addresses.
var forbiddenHooks = map[string]string{
	"loopback.example": "127.0.0.1", "private.example": "10.0.0.1",
	"metadata.example": "169.254.169.254", "loopback6.example": "::1",
}

// resolvingPushHost serves echo and chat with push notifications whose
// webhook URLs are checked as a2abridge serve checks them
// (push.CheckURLContext), with allow and a fake resolver. Nothing is
// delivered: the delivery client refuses every connection.
func resolvingPushHost(t *testing.T, allow []string) (*httptest.Server, store.Store, *hostsResolver) {
	t.Helper()
	names := map[string]string{"public.example": "93.184.216.34", "hooks.internal": "10.1.2.3"}
	for h, ip := range forbiddenHooks {
		names[h] = ip
	}
	res := &hostsResolver{names: names, n: map[string]int{}}
	st := memory.New()
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger(), Push: &server.PushOptions{
		Client:    push.NewGuardedClient(push.GuardOptions{Resolver: &net.Resolver{PreferGo: true, Dial: noDNS}}),
		CheckURL:  func(ctx context.Context, u string) error { return push.CheckURLContext(ctx, u, allow, res) },
		RetryBase: time.Hour, RetryMax: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	host := servertest.Host("echo",
		server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}),
		server.NewHandler(eng, "chat", agents.Chat{}, agents.Chat{}.Card(), server.HandlerOptions{}))
	ts := testutil.Serve(t, host, eng.Close)
	return ts, st, res
}

// noDNS is a resolver's Dial that reaches no DNS server.
func noDNS(context.Context, string, string) (net.Conn, error) {
	return nil, fmt.Errorf("no DNS in tests")
}

// rpcError is a JSON-RPC error answer with its data.
type rpcError struct {
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Field string `json:"field"`
		} `json:"data"`
	} `json:"error"`
}

// callErr posts a request expected to fail and returns the error, checked
// against the schema.
func callErr(t *testing.T, url, method, params string) *rpcError {
	t.Helper()
	_, b := testutil.Post(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params))
	var r rpcError
	if err := json.Unmarshal(b, &r); err != nil || r.Error == nil {
		t.Fatalf("%s: %v: %s", method, err, b)
	}
	schematest.Validate(t, "JSONRPCErrorResponse", b)
	return &r
}

// wantURLRefused checks a -32602 naming field and saying why.
func wantURLRefused(t *testing.T, what string, r *rpcError, field string, why ...string) {
	t.Helper()
	if r.Error.Code != a2a.CodeInvalidParams || r.Error.Data.Field != field {
		t.Errorf("%s: error %+v, want %d on %s", what, *r.Error, a2a.CodeInvalidParams, field)
	}
	for _, w := range why {
		if !strings.Contains(r.Error.Message, w) {
			t.Errorf("%s: message %q lacks %q", what, r.Error.Message, w)
		}
	}
}

func pushConfigsOf(t *testing.T, st store.Store, taskID string) []store.PushConfig {
	t.Helper()
	cs, err := st.PushConfigs(context.Background(), taskID)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestPushSetRefusesWebhookResolvingToForbiddenAddress: at
// tasks/pushNotificationConfig/set, a host name is resolved, and refused
// when it resolves to a forbidden address or does not resolve; nothing is
// stored then.
func TestPushSetRefusesWebhookResolvingToForbiddenAddress(t *testing.T) {
	t.Parallel()
	ts, st, _ := resolvingPushHost(t, []string{"hooks.internal"})
	chat := ts.URL + "/a2a/chat"
	task := testutil.CallRPC(t, chat, "message/send", testutil.SendParams03("hi", "set-1", "")).Result
	if task.Status.State != a2a.TaskStateInputRequired.String() {
		t.Fatalf("task: %+v", task)
	}
	set := func(u string) string {
		return fmt.Sprintf(`{"taskId":%q,"pushNotificationConfig":{"url":%q,"token":"tok"}}`, task.ID, u)
	}
	const field = "/params/pushNotificationConfig/url"
	for host, ip := range forbiddenHooks {
		r := callErr(t, chat, "tasks/pushNotificationConfig/set", set("https://"+host+"/hook"))
		wantURLRefused(t, host, r, field, fmt.Sprintf("%q resolves to %s", host, ip), "not a public address")
	}
	r := callErr(t, chat, "tasks/pushNotificationConfig/set", set("https://nxdomain.example/hook"))
	wantURLRefused(t, "NXDOMAIN", r, field, `"nxdomain.example": no such host`)
	if cs := pushConfigsOf(t, st, task.ID); len(cs) != 0 {
		t.Fatalf("refused configs were stored: %+v", cs)
	}
	// A public name, and a private one the allowlist names, are accepted.
	for _, u := range []string{"https://public.example/hook", "http://hooks.internal:9000/hook"} {
		if r := testutil.CallRPC(t, chat, "tasks/pushNotificationConfig/set", set(u)); r.Error != nil {
			t.Errorf("%s: %+v", u, *r.Error)
		}
	}
	if cs := pushConfigsOf(t, st, task.ID); len(cs) != 2 {
		t.Fatalf("configs: %+v", cs)
	}
	// A config id the task does not have: -32602 on the id in 0.3
	// (TaskNotFoundError is 1.0's answer).
	r = callErr(t, chat, "tasks/pushNotificationConfig/get", fmt.Sprintf(`{"id":%q,"pushNotificationConfigId":"nope"}`, task.ID))
	if r.Error.Code != a2a.CodeInvalidParams {
		t.Errorf("get of a missing config: %+v, want %d", *r.Error, a2a.CodeInvalidParams)
	}
}

// TestPushSendRefusesWebhookResolvingToForbiddenAddress: message/send with
// configuration.pushNotificationConfig resolves the host before the task is
// created or continued: a refused webhook leaves no task, no message and
// no config behind.
func TestPushSendRefusesWebhookResolvingToForbiddenAddress(t *testing.T) {
	t.Parallel()
	ts, st, res := resolvingPushHost(t, []string{"hooks.internal"})
	ctx := context.Background()
	withHook := func(u string) string {
		return fmt.Sprintf(`,"configuration":{"pushNotificationConfig":{"url":%q}}`, u)
	}
	const field = "/params/configuration/pushNotificationConfig/url"
	refused := map[string]string{"nxdomain.example": "no such host"}
	for host, ip := range forbiddenHooks {
		refused[host] = fmt.Sprintf("%q resolves to %s", host, ip)
	}
	i := 0
	for host, why := range refused {
		// A new task.
		i++
		id := fmt.Sprintf("send-new-%d", i)
		r := callErr(t, ts.URL+"/a2a/echo", "message/send", testutil.SendParams03("hi", id, withHook("https://"+host+"/hook")))
		wantURLRefused(t, host, r, field, why)
		if taskID, err := st.MessageTask(ctx, "echo", id); err != nil || taskID != "" {
			t.Errorf("%s: a task was created: %q %v", host, taskID, err)
		}
	}
	// A continuation.
	chat := ts.URL + "/a2a/chat"
	task := testutil.CallRPC(t, chat, "message/send", testutil.SendParams03("hi", "send-chat-1", "")).Result
	for host, why := range refused {
		i++
		id := fmt.Sprintf("send-cont-%d", i)
		params := fmt.Sprintf(`{"message":{"kind":"message","role":"user","messageId":%q,"taskId":%q,"parts":[{"kind":"text","text":"bye"}]}%s}`,
			id, task.ID, withHook("https://"+host+"/hook"))
		wantURLRefused(t, host, callErr(t, chat, "message/send", params), field, why)
		if taskID, err := st.MessageTask(ctx, "chat", id); err != nil || taskID != "" {
			t.Errorf("%s: the message was accepted: %q %v", host, taskID, err)
		}
	}
	info, err := st.Task(ctx, task.ID)
	if err != nil || info.Task.Status.State != a2a.TaskStateInputRequired || len(info.Task.History) != len(task.History) {
		t.Fatalf("the task changed: %+v %v", info.Task, err)
	}
	if cs := pushConfigsOf(t, st, task.ID); len(cs) != 0 {
		t.Fatalf("refused configs were stored: %+v", cs)
	}
	// A public name, and a private one the allowlist names, are accepted
	// and stored; the host is resolved once per request.
	for _, u := range []string{"https://public.example/hook", "http://hooks.internal:9000/hook"} {
		i++
		r := testutil.CallRPC(t, ts.URL+"/a2a/echo", "message/send", testutil.SendParams03("hi", fmt.Sprintf("send-ok-%d", i), withHook(u)))
		if r.Error != nil {
			t.Fatalf("%s: %+v", u, *r.Error)
		}
		if cs := pushConfigsOf(t, st, r.Result.ID); len(cs) != 1 || cs[0].Config.URL != u {
			t.Errorf("%s: configs %+v", u, cs)
		}
	}
	if n := res.lookups("public.example"); n != 1 {
		t.Errorf("public.example was looked up %d times, want once", n)
	}
	if n := res.lookups("hooks.internal"); n != 0 {
		t.Errorf("the allowlisted hooks.internal was looked up %d times", n)
	}
}
