package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/schematest"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

type fakeSigner struct{ n atomic.Int32 }

func (s *fakeSigner) Sign(aud, taskID string, body []byte) (string, error) {
	return fmt.Sprintf("jwt-%d-%s", s.n.Add(1), taskID), nil
}

type hook struct {
	mu    sync.Mutex
	got   []delivery
	fail  atomic.Bool
	srv   *httptest.Server
	count chan struct{}
}

type delivery struct {
	state, auth, token string
	artifacts          int
}

func newHook(t *testing.T) *hook {
	h := &hook{count: make(chan struct{}, 1000)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if h.fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		schematest.Validate(t, "Task", b)
		var task struct {
			Status struct {
				State string `json:"state"`
			} `json:"status"`
			Artifacts []any `json:"artifacts"`
		}
		_ = json.Unmarshal(b, &task)
		h.mu.Lock()
		h.got = append(h.got, delivery{task.Status.State, r.Header.Get("Authorization"), r.Header.Get(server.HeaderNotificationToken), len(task.Artifacts)})
		h.mu.Unlock()
		h.count <- struct{}{}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) wait(t *testing.T, n int) []delivery {
	t.Helper()
	for {
		h.mu.Lock()
		got := append([]delivery(nil), h.got...)
		h.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-h.count:
		case <-time.After(10 * time.Second):
			t.Fatalf("got %d deliveries, want %d: %+v", len(got), n, got)
		}
	}
}

// untilCompleted waits for deliveries until one says completed and
// returns them all.
func (h *hook) untilCompleted(t *testing.T) []delivery {
	t.Helper()
	var got []delivery
	for len(got) == 0 || got[len(got)-1].state != "completed" {
		got = h.wait(t, len(got)+1)
	}
	return got
}

func pushEngine(t *testing.T, st store.Store, signer server.PushSigner) (*server.Engine, *server.AgentHandler) {
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger(),
		Push: &server.PushOptions{Signer: signer, RetryBase: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return eng, server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{})
}

func TestPushDeliversEveryStateChangeInOrder(t *testing.T) {
	t.Parallel()
	hk := newHook(t)
	eng, h := pushEngine(t, memory.New(), &fakeSigner{})
	defer eng.Close(context.Background())
	if !h.Card().Capabilities.PushNotifications {
		t.Fatal("card does not declare pushNotifications")
	}
	m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(strings.Repeat("x", 100))) // two artifact chunks
	task, err := h.SendMessageForTask(context.Background(), a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{
		PushNotificationConfig: &a2a.PushNotificationConfig{URL: hk.srv.URL, Token: "secret",
			Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	// Every state change is delivered, in order; a run of artifact chunks is
	// covered by the snapshot sent after it (one or, if delivery overtook the
	// agent, two notifications).
	got := hk.untilCompleted(t)
	if len(got) < 3 || len(got) > 4 || got[0].state != "submitted" || got[0].artifacts != 0 || got[len(got)-1].artifacts != 1 {
		t.Fatalf("deliveries %+v", got)
	}
	for i, d := range got {
		if d.token != "secret" || !strings.HasPrefix(d.auth, "Bearer jwt-") || !strings.HasSuffix(d.auth, task.ID) {
			t.Fatalf("delivery %d = %+v", i, d)
		}
	}
	// The config methods.
	cs, err := h.ListTaskPushNotificationConfigs(context.Background(), a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
	if err != nil || len(cs) != 1 || cs[0].PushNotificationConfig.ID == "" {
		t.Fatalf("list: %+v %v", cs, err)
	}
	id := cs[0].PushNotificationConfig.ID
	if c, err := h.GetTaskPushNotificationConfig(context.Background(), a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID}); err != nil || c.PushNotificationConfig.ID != id {
		t.Fatalf("get first: %+v %v", c, err)
	}
	if err := h.DeleteTaskPushNotificationConfig(context.Background(), a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.GetTaskPushNotificationConfig(context.Background(), a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: id}); err == nil {
		t.Fatal("deleted config still found")
	}
}

// TestPushSurvivesRestart: the webhook is down while the task runs and the
// engine stops; a new engine on the same store delivers what is pending.
func TestPushSurvivesRestart(t *testing.T) {
	t.Parallel()
	hk := newHook(t)
	hk.fail.Store(true)
	st := memory.New()
	eng, h := pushEngine(t, st, nil)
	task, err := h.SendMessageForTask(context.Background(), a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi")),
		Configuration: &a2a.SendMessageConfiguration{PushNotificationConfig: &a2a.PushNotificationConfig{URL: hk.srv.URL}}})
	if err != nil || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("send: %v %v", task, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := eng.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if pend, _ := st.PendingPush(context.Background()); len(pend) != 1 {
		t.Fatalf("pending after stop: %+v", pend)
	}
	hk.fail.Store(false)
	eng2, _ := pushEngine(t, st, nil)
	defer eng2.Close(context.Background())
	// At least once: a notification in flight when the engine stopped may
	// come twice. Everything arrives, in order, ending with completed.
	got := hk.untilCompleted(t)
	if got[0].state != "submitted" {
		t.Fatalf("after restart: %+v", got)
	}
}

func TestPushDisabledAndRefusedURL(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	r := testutil.CallRPC(t, ts.URL+"/", "message/send", testutil.SendParams03("x", "pd-1", ""))
	if r2 := testutil.CallRPC(t, ts.URL+"/", "tasks/pushNotificationConfig/set", fmt.Sprintf(`{"taskId":%q,"pushNotificationConfig":{"url":"http://x"}}`, r.Result.ID)); r2.Error == nil || r2.Error.Code != a2a.CodePushNotificationNotSupported {
		t.Fatalf("push disabled: %+v", r2)
	}
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: testutil.Logger(), Push: &server.PushOptions{
		CheckURL: func(_ context.Context, u string) error {
			if strings.Contains(u, "169.254") {
				return fmt.Errorf("link-local address")
			}
			return nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	h := server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{})
	_, err = h.SendMessageForTask(context.Background(), a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi")),
		Configuration: &a2a.SendMessageConfiguration{PushNotificationConfig: &a2a.PushNotificationConfig{URL: "http://169.254.169.254/latest"}}})
	if ae, ok := err.(*a2a.Error); !ok || ae.Code != a2a.CodeInvalidParams {
		t.Fatalf("metadata URL: %v", err)
	}
}

// A dead webhook does not delay the task's other webhooks, a deleted config
// stops receiving at once, and the number of configs is bounded.
func TestPushDeleteStopsAndConfigsAreIndependent(t *testing.T) {
	t.Parallel()
	good := newHook(t)
	var deadHits atomic.Int32
	deadSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadHits.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer deadSrv.Close()
	eng, _ := pushEngine(t, memory.New(), nil)
	defer eng.Close(context.Background())
	chat := server.NewHandler(eng, "chat", agents.Chat{}, agents.Chat{}.Card(), server.HandlerOptions{})
	ctx := context.Background()
	task, err := chat.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi")),
		Configuration: &a2a.SendMessageConfiguration{PushNotificationConfig: &a2a.PushNotificationConfig{ID: "dead", URL: deadSrv.URL}}})
	if err != nil || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("send: %v %v", task, err)
	}
	if _, err := chat.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: task.ID,
		PushNotificationConfig: a2a.PushNotificationConfig{ID: "good", URL: good.srv.URL}}); err != nil {
		t.Fatal(err)
	}
	m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("bye"))
	m.TaskID = task.ID
	if _, err := chat.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: m}); err != nil {
		t.Fatal(err)
	}
	// The good webhook gets the second turn (working, completed) although
	// the dead one is still retrying its first notification.
	got := good.wait(t, 2)
	if got[len(got)-1].state != "completed" && good.wait(t, 3)[2].state != "completed" {
		t.Fatalf("good webhook: %+v", got)
	}
	// The dead webhook's first attempt runs on its own worker and may not
	// have reached the server yet; it must come, though.
	testutil.Eventually(t, 10*time.Second, "the dead webhook tried", func() bool { return deadHits.Load() > 0 })
	if err := chat.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "dead"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // an attempt in flight may finish
	n := deadHits.Load()
	time.Sleep(300 * time.Millisecond)
	if later := deadHits.Load(); later != n {
		t.Fatalf("deleted webhook got %d more notifications", later-n)
	}
	for i := range server.MaxPushConfigsPerTask {
		chat.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: task.ID,
			PushNotificationConfig: a2a.PushNotificationConfig{ID: fmt.Sprintf("c%d", i), URL: good.srv.URL}})
	}
	if _, err := chat.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: task.ID,
		PushNotificationConfig: a2a.PushNotificationConfig{ID: "one-too-many", URL: good.srv.URL}}); err == nil {
		t.Fatal("more configs than the limit were accepted")
	}
}

// TestPushConfigLimitOnContinuation: a message continuing a task
// (input-required) with a push config that would be the task's eleventh is
// refused whole with -32602: the task does not take the message.
func TestPushConfigLimitOnContinuation(t *testing.T) {
	t.Parallel()
	hk := newHook(t)
	eng, _ := pushEngine(t, memory.New(), nil)
	defer eng.Close(context.Background())
	chat := server.NewHandler(eng, "chat", agents.Chat{}, agents.Chat{}.Card(), server.HandlerOptions{})
	ctx := context.Background()
	task, err := chat.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))})
	if err != nil || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("send: %v %v", task, err)
	}
	for i := range server.MaxPushConfigsPerTask {
		if _, err := chat.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: task.ID,
			PushNotificationConfig: a2a.PushNotificationConfig{ID: fmt.Sprintf("c%d", i), URL: hk.srv.URL}}); err != nil {
			t.Fatal(err)
		}
	}
	m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("more"))
	m.TaskID = task.ID
	_, err = chat.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: m,
		Configuration: &a2a.SendMessageConfiguration{PushNotificationConfig: &a2a.PushNotificationConfig{URL: hk.srv.URL}}})
	if ae, ok := err.(*a2a.Error); !ok || ae.Code != a2a.CodeInvalidParams {
		t.Fatalf("a continuation with one config too many: %v, want -32602", err)
	}
	after, err := chat.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.History) != len(task.History) || after.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("the refused message changed the task: %d → %d messages, state %s", len(task.History), len(after.History), after.Status.State)
	}
}

// TestPushChunkedArtifact: an artifact streamed in 4,096 chunks is
// notified when its last chunk arrives (and with the final status), not
// once per chunk, and the notifications carry it whole.
func TestPushChunkedArtifact(t *testing.T) {
	t.Parallel()
	hk := newHook(t)
	eng, h := pushEngine(t, memory.New(), &fakeSigner{})
	defer eng.Close(context.Background())
	text := strings.Repeat("0123456789abcdef", 4096*4) // 4,096 chunks of 64 bytes
	_, err := h.SendMessageForTask(context.Background(), a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(text)),
		Configuration: &a2a.SendMessageConfiguration{PushNotificationConfig: &a2a.PushNotificationConfig{URL: hk.srv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	got := hk.untilCompleted(t)
	// submitted (the create), working or completed states, and the
	// artifact's last chunk: a handful, not thousands.
	if len(got) > 6 || got[len(got)-1].artifacts != 1 {
		t.Fatalf("%d notifications for 4,096 chunks: %+v", len(got), got)
	}
}
