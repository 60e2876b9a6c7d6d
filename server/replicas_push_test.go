package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
)

// textHook is a webhook that records each notification as "state:text"
// (the status message's text), and answers 503 while down is set.
type textHook struct {
	mu   sync.Mutex
	got  []string
	down atomic.Bool
	srv  *httptest.Server
}

func newTextHook(t *testing.T) *textHook {
	h := &textHook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if h.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		var task struct {
			Status struct {
				State   string `json:"state"`
				Message struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"message"`
			} `json:"status"`
		}
		if err := json.Unmarshal(b, &task); err != nil {
			t.Errorf("webhook body: %v: %s", err, b)
		}
		var text []string
		for _, p := range task.Status.Message.Parts {
			text = append(text, p.Text)
		}
		h.mu.Lock()
		h.got = append(h.got, task.Status.State+":"+strings.Join(text, ""))
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *textHook) deliveries() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// until waits (up to limit) for a delivery that starts with last.
func (h *textHook) until(t *testing.T, last string, limit time.Duration) []string {
	t.Helper()
	var got []string
	if !testutil.Poll(limit, func() bool {
		got = h.deliveries()
		return slices.ContainsFunc(got, func(d string) bool { return strings.HasPrefix(d, last) })
	}) {
		t.Fatalf("no %q delivered within %s; got %q", last, limit, got)
	}
	return got
}

// fastRetries are push options that retry a failed delivery within
// milliseconds.
var fastRetries = &server.PushOptions{RetryBase: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond}

// unreachablePush is fastRetries with a client whose every delivery
// attempt fails before it leaves the process.
var unreachablePush = &server.PushOptions{RetryBase: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond,
	Client: &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("unreachable")
	})}}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func pushReplica(t *testing.T, ctx context.Context, c cluster, agent server.Agent, lease time.Duration) *replica {
	return startReplica(t, ctx, c, agent, server.EngineOptions{LeaseTime: lease, Push: fastRetries})
}

// TestReplicaPushOnce: a push config set on replica B for a
// task that runs on replica A gets every notification once and in order,
// though both replicas deliver push notifications; the events A appends
// after B's worker went idle reach the webhook without waiting for a
// sweep (A learns of the config from B's notification).
func TestReplicaPushOnce(t *testing.T) { forClusters(t, testReplicaPushOnce) }

func testReplicaPushOnce(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	steps := stepAgent{make(chan string)}
	// The default lease time: a sweep every 6 s, longer than the test
	// waits for a delivery.
	a := pushReplica(t, ctx, c, steps, 0)
	b := pushReplica(t, ctx, c, steps, 0)
	hk := newTextHook(t)
	task := startTask(t, ctx, a.h)
	// A appends once before the config exists: it then knows the task
	// as one without push configs.
	steps.steps <- "s0"
	statusText := func() string {
		got, err := a.h.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if m := got.Status.Message; m != nil && len(m.Parts) == 1 {
			if p, ok := m.Parts[0].Content.(a2a.Text); ok {
				return string(p)
			}
		}
		return ""
	}
	for statusText() != "s0" {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := b.h.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: task.ID,
		PushNotificationConfig: a2a.PushNotificationConfig{ID: "c1", URL: hk.srv.URL}}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, s := range []string{"s1", "s2", "s3"} {
		// Longer than pushLinger (1 s) after the first: B's worker has
		// ended, A's must deliver.
		if s == "s2" {
			time.Sleep(1500 * time.Millisecond)
		}
		steps.steps <- s
		want = append(want, "working:"+s)
		hk.until(t, want[len(want)-1], 4*time.Second)
	}
	close(steps.steps)
	want = append(want, "completed:done")
	hk.until(t, "completed:done", 4*time.Second)
	time.Sleep(300 * time.Millisecond) // room for a duplicate
	if got := hk.deliveries(); !slices.Equal(got, want) {
		t.Fatalf("deliveries %q, want %q (each once, in order)", got, want)
	}
}

// TestReplicaPushTakeover: the deliveries a replica owes
// when it stops (its webhook was down) are made by another replica once
// the stopped one's claim ended with its lease: in order, each state
// once.
func TestReplicaPushTakeover(t *testing.T) { forClusters(t, testReplicaPushTakeover) }

func testReplicaPushTakeover(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hk := newTextHook(t)
	hk.down.Store(true)
	steps := stepAgent{make(chan string)}
	// A's deliveries never reach the webhook: an attempt of A's in
	// flight when A stops could otherwise reach it after it came back up
	// (the webhook got it, A never learnt), a repeat that at-least-once
	// delivery allows but this test counts.
	a := startReplica(t, ctx, c, steps, server.EngineOptions{LeaseTime: time.Second, Push: unreachablePush})
	b := pushReplica(t, ctx, c, steps, time.Second)
	blocking := false
	task, err := a.h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("go")),
		Configuration: &a2a.SendMessageConfiguration{Blocking: &blocking, PushNotificationConfig: &a2a.PushNotificationConfig{ID: "c1", URL: hk.srv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	steps.steps <- "s1"
	time.Sleep(200 * time.Millisecond) // A is retrying
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	if err := a.eng.Close(cctx); err != nil { // fails the task: A stopped while it ran
		t.Fatal(err)
	}
	hk.down.Store(false)
	got := hk.until(t, "failed:", 10*time.Second)
	if n := len(got); n == 0 || !strings.HasPrefix(got[n-1], "failed:") {
		t.Fatalf("deliveries %q: the failure is not last", got)
	}
	time.Sleep(300 * time.Millisecond)
	got = hk.deliveries()
	seen := map[string]bool{}
	for _, d := range got {
		if seen[d] {
			t.Fatalf("deliveries %q: %q twice", got, d)
		}
		seen[d] = true
	}
	if i := slices.Index(got, "working:s1"); i < 0 {
		t.Fatalf("deliveries %q lack working:s1", got)
	}
	if info, err := b.h.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID}); err != nil || info.Status.State != a2a.TaskStateFailed {
		t.Fatalf("task on B: %v %v", info, err)
	}
}

// flakyConfigs fails one PushConfigs read made by the push deliverer's post (the
// read before each attempt), once armed, and counts claims.
type flakyConfigs struct {
	sharedStore
	armed  atomic.Bool
	claims atomic.Int32
}

func (s *flakyConfigs) PushConfigs(ctx context.Context, taskID string) ([]store.PushConfig, error) {
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "pushdelivery.(*Deliverer).post") && s.armed.Swap(false) {
			return nil, errors.New("injected: connection reset")
		}
		if !more {
			break
		}
	}
	return s.sharedStore.PushConfigs(ctx, taskID)
}

func (s *flakyConfigs) ClaimPush(ctx context.Context, runner, taskID, configID string) (bool, error) {
	s.claims.Add(1)
	return s.sharedStore.ClaimPush(ctx, runner, taskID, configID)
}

// TestPushTransientReadRetried: a failed read of the
// config before a delivery attempt is retried, not taken for a deleted
// config: the notification is delivered, and the worker does not claim
// and release in a loop meanwhile.
func TestPushTransientReadRetried(t *testing.T) { forClusters(t, testPushTransientReadRetried) }

func testPushTransientReadRetried(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var st *flakyConfigs
	steps := stepAgent{make(chan string)}
	h := startReplicaOn(t, ctx, c, steps, server.EngineOptions{Push: fastRetries},
		func(pst sharedStore) store.Store { st = &flakyConfigs{sharedStore: pst}; return st }).h
	hk := newTextHook(t)
	blocking := false
	if _, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("go")),
		Configuration: &a2a.SendMessageConfiguration{Blocking: &blocking, PushNotificationConfig: &a2a.PushNotificationConfig{ID: "c1", URL: hk.srv.URL}}}); err != nil {
		t.Fatal(err)
	}
	steps.steps <- "s1"
	hk.until(t, "working:s1", 4*time.Second)
	st.armed.Store(true)
	steps.steps <- "s2"
	hk.until(t, "working:s2", 4*time.Second)
	if st.armed.Load() {
		t.Fatal("the injected failure did not happen: the test no longer reaches post's read")
	}
	c0 := st.claims.Load()
	time.Sleep(3 * time.Second)
	if n := st.claims.Load() - c0; n > 2 {
		t.Errorf("%d claims in 3 s with nothing to deliver", n)
	}
}

// failRelease fails the first n ReleasePush calls.
type failRelease struct {
	sharedStore
	fails atomic.Int32
}

func (s *failRelease) ReleasePush(ctx context.Context, runner, taskID, configID string) (bool, error) {
	if s.fails.Add(-1) >= 0 {
		return false, errors.New("injected: connection reset")
	}
	return s.sharedStore.ReleasePush(ctx, runner, taskID, configID)
}

// TestReplicaPushFailedRelease: a claim that a failed
// release left behind (its worker ended) does not strand the config:
// appends made on another replica are delivered (the claimant's sweep
// takes its own claim up again).
func TestReplicaPushFailedRelease(t *testing.T) { forClusters(t, testReplicaPushFailedRelease) }

func testReplicaPushFailedRelease(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var st *failRelease
	steps := stepAgent{make(chan string)}
	a := startReplicaOn(t, ctx, c, steps, server.EngineOptions{LeaseTime: 2 * time.Second, Push: fastRetries},
		func(pst sharedStore) store.Store { st = &failRelease{sharedStore: pst}; st.fails.Store(1); return st }).h
	b := pushReplica(t, ctx, c, steps, 2*time.Second)
	hk := newTextHook(t)
	task := startTask(t, ctx, b.h)
	if _, err := a.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: task.ID,
		PushNotificationConfig: a2a.PushNotificationConfig{ID: "c1", URL: hk.srv.URL}}); err != nil {
		t.Fatal(err)
	}
	// A's worker claimed, lingered, its release failed.
	testutil.Eventually(t, 10*time.Second, "a release failed", func() bool { return st.fails.Load() <= 0 })
	steps.steps <- "s1" // appended on B
	hk.until(t, "working:s1", 8*time.Second)
}
