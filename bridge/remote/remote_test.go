package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/remote"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
)

// recorder records what the remote receives: "VERB path [A2A-Version]
// [json method]" per request.
type recorder struct {
	mu   sync.Mutex
	reqs []string
}

func (rec *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := r.Method + " " + r.URL.Path
		if v := r.Header.Get("A2A-Version"); v != "" {
			line += " v" + v
		}
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			var env struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(b, &env) == nil && env.Method != "" {
				line += " " + env.Method
			}
		}
		if v := r.Header.Get("Last-Event-ID"); v != "" {
			line += " last-event-id=" + v
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, line)
		rec.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (rec *recorder) requests() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.reqs...)
}

// has reports whether a request line contains every fragment.
func (rec *recorder) has(fragments ...string) bool {
	for _, r := range rec.requests() {
		ok := true
		for _, f := range fragments {
			ok = ok && strings.Contains(r, f)
		}
		if ok {
			return true
		}
	}
	return false
}

// versions are the remote interfaces the bridge is tested over, each
// forced through Config.Protocol and Config.Binding, with the fragments of
// the streaming request the remote must see.
var versions = []struct {
	name, protocol, binding string
	stream                  []string
}{
	{"card's choice", "", "", []string{"POST /a2a/gate v1.0 SendStreamingMessage"}},
	{"1.0 JSON-RPC", "1.0", "jsonrpc", []string{"POST /a2a/gate v1.0 SendStreamingMessage"}},
	{"1.0 REST", "1.0", "rest", []string{"POST /a2a/gate/message:stream v1.0"}},
	{"0.3 JSON-RPC", "0.3", "jsonrpc", []string{"POST /a2a/gate message/stream"}},
	{"0.3 REST", "0.3", "REST", []string{"POST /a2a/gate/v1/message:stream"}},
}

// remoteWith starts the remote (the gate agent, recorded) and the front
// configured for it.
func remoteWith(t *testing.T, cfg remote.Config, streaming bool) (*gateAgent, *host, *recorder, *front) {
	t.Helper()
	g := newGateAgent()
	rec := &recorder{}
	rem := startHost(t, rec.wrap, map[string]hostedAgent{"gate": {g, testCard("gate", streaming)}})
	cfg.URL = rem.agentURL("gate")
	return g, rem, rec, startFront(t, cfg)
}

func recv[T any](t *testing.T, ctx context.Context, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %v", what, ctx.Err())
	}
	var zero T
	return zero
}

// TestStreamPassThrough: each event of the remote reaches the front's
// caller while the remote task is still running (the remote agent waits
// on a gate between chunks: chunk i arrives before gate i+1 is opened),
// over each version and binding.
func TestStreamPassThrough(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			g, rem, rec, fr := remoteWith(t, remote.Config{Protocol: v.protocol, Binding: v.binding}, true)
			c := dial(t, ctx, fr.agentURL("front"), client.Options{})
			rc := dial(t, ctx, rem.agentURL("gate"), client.Options{})

			msg := testutil.UserMessage("chunks 3", "")
			msg.Message.MessageID = "caller-message-1"
			p := pull(t, c.SendStreamingMessage(ctx, msg))
			p.until(t, "the remote's working status", isStatusText("started"))
			ex := recv(t, ctx, g.execs, "the remote execution")
			if ex.msg.MessageID == "caller-message-1" || testutil.Text(ex.msg.Parts) != "chunks 3" {
				t.Errorf("the remote got message %q %q; want the caller's text under another id", ex.msg.MessageID, testutil.Text(ex.msg.Parts))
			}
			for i := range 3 {
				g.gate <- struct{}{} // the remote emits chunk i, then waits at the next gate
				p.until(t, fmt.Sprintf("chunk %d", i), isChunk(fmt.Sprintf("c%d", i)))
				if i < 2 {
					rt, err := rc.GetTask(ctx, a2a.GetTaskRequest{ID: ex.taskID})
					if err != nil || rt.Status.State != a2a.TaskStateWorking {
						t.Fatalf("chunk %d passed on: the remote task is %+v (%v), want working", i, rt, err)
					}
				}
			}
			evs := p.until(t, "completed", isState(a2a.TaskStateCompleted))
			done := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
			if testutil.StatusText(done.Status) != "sent 3 chunks" {
				t.Errorf("final status message %q", testutil.StatusText(done.Status))
			}
			task, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: done.TaskID})
			if err != nil {
				t.Fatal(err)
			}
			if got := artifactText(task, "out"); got != "c0c1c2" || len(task.Artifacts) != 1 {
				t.Errorf("artifacts %+v, want one \"out\" = c0c1c2", task.Artifacts)
			}
			for _, f := range v.stream {
				if !rec.has(f) {
					t.Errorf("the remote saw no request with %q: %q", f, rec.requests())
				}
			}
			ref, ok := remote.RefOf(*task)
			if !ok || ref.TaskID != ex.taskID || ref.ContextID != ex.contextID || !strings.HasPrefix(ref.URL, rem.agentURL("gate")) {
				t.Errorf("metadata %s = %+v (%v), want remote task %s in context %s at %s", remote.MetadataKey, ref, ok, ex.taskID, ex.contextID, rem.agentURL("gate"))
			}
		})
	}
}

// TestMultiTurn: a remote task in input-required keeps the front's task
// waiting; each next message goes to the same remote task, by send and by
// stream, over each version and binding.
func TestMultiTurn(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			g, _, _, fr := remoteWith(t, remote.Config{Protocol: v.protocol, Binding: v.binding}, true)
			c := dial(t, ctx, fr.agentURL("front"), client.Options{})

			task := sendTask(t, ctx, c, testutil.UserMessage("ask", ""))
			if task.Status.State != a2a.TaskStateInputRequired || testutil.StatusText(task.Status) != "turn 1?" {
				t.Fatalf("turn 1: %s %q", task.Status.State, testutil.StatusText(task.Status))
			}
			first := recv(t, ctx, g.execs, "turn 1 at the remote")

			p := pull(t, c.SendStreamingMessage(ctx, testutil.UserMessage("more", task.ID)))
			evs := p.until(t, "turn 2", isState(a2a.TaskStateInputRequired))
			if got := testutil.StatusText(evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent).Status); got != "turn 2?" {
				t.Errorf("turn 2: %q (events %s)", got, describe(evs))
			}
			second := recv(t, ctx, g.execs, "turn 2 at the remote")

			task = sendTask(t, ctx, c, testutil.UserMessage("bye", task.ID))
			if task.Status.State != a2a.TaskStateCompleted || testutil.StatusText(task.Status) != "bye after 3 turns" {
				t.Errorf("turn 3: %s %q", task.Status.State, testutil.StatusText(task.Status))
			}
			third := recv(t, ctx, g.execs, "turn 3 at the remote")
			for _, ex := range []execution{second, third} {
				if ex.taskID != first.taskID || ex.contextID != first.contextID {
					t.Errorf("a later turn went to remote task %s/%s, want %s/%s", ex.taskID, ex.contextID, first.taskID, first.contextID)
				}
			}
		})
	}
}

// TestCancelForwarded: tasks/cancel on the front cancels the remote task,
// while it runs (the stream is aborted too) and while it waits for input.
func TestCancelForwarded(t *testing.T) {
	t.Run("running", func(t *testing.T) {
		ctx := testCtx(t)
		g, rem, _, fr := remoteWith(t, remote.Config{}, true)
		c := dial(t, ctx, fr.agentURL("front"), client.Options{})
		p := pull(t, c.SendStreamingMessage(ctx, testutil.UserMessage("hang", "")))
		evs := p.until(t, "the remote's working status", isStatusText("hanging"))
		ours := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent).TaskID
		ex := recv(t, ctx, g.execs, "the remote execution")
		task, err := c.CancelTask(ctx, a2a.CancelTaskRequest{ID: ours})
		if err != nil || task.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("CancelTask: %+v %v", task, err)
		}
		if got := recv(t, ctx, g.canceled, "the remote cancel"); got != ex.taskID {
			t.Errorf("the remote canceled %s, want %s", got, ex.taskID)
		}
		rt, err := dial(t, ctx, rem.agentURL("gate"), client.Options{}).GetTask(ctx, a2a.GetTaskRequest{ID: ex.taskID})
		if err != nil || rt.Status.State != a2a.TaskStateCanceled {
			t.Errorf("the remote task: %+v %v, want canceled", rt, err)
		}
		p.until(t, "canceled", isState(a2a.TaskStateCanceled))
	})
	t.Run("input-required", func(t *testing.T) {
		ctx := testCtx(t)
		g, rem, _, fr := remoteWith(t, remote.Config{Protocol: "0.3"}, false)
		c := dial(t, ctx, fr.agentURL("front"), client.Options{})
		task := sendTask(t, ctx, c, testutil.UserMessage("ask", ""))
		ex := recv(t, ctx, g.execs, "the remote execution")
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("state %s", task.Status.State)
		}
		if _, err := c.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID}); err != nil {
			t.Fatal(err)
		}
		rt, err := dial(t, ctx, rem.agentURL("gate"), client.Options{}).GetTask(ctx, a2a.GetTaskRequest{ID: ex.taskID})
		if err != nil || rt.Status.State != a2a.TaskStateCanceled {
			t.Errorf("the remote task: %+v %v, want canceled", rt, err)
		}
	})
	t.Run("blocking send", func(t *testing.T) {
		// A blocking send runs the agent on the caller's request (the
		// agent is a server.InlineAgent): tasks/cancel still ends it, the
		// remote task is canceled, and the caller gets the canceled task.
		ctx := testCtx(t)
		g, rem, _, fr := remoteWith(t, remote.Config{}, true)
		c := dial(t, ctx, fr.agentURL("front"), client.Options{})
		type result struct {
			res a2a.Event
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := c.SendMessage(ctx, testutil.UserMessage("hang", ""))
			done <- result{res, err}
		}()
		ex := recv(t, ctx, g.execs, "the remote execution")
		list, err := c.ListTasks(ctx, a2a.ListTasksRequest{})
		if err != nil || len(list.Tasks) != 1 {
			t.Fatalf("ListTasks: %+v %v, want the one task", list, err)
		}
		ours := list.Tasks[0].ID
		// Cancel once the front knows the remote task (our task's metadata
		// names it): a cancel before that has no remote task to forward to.
		knows := func(e a2a.Event) bool {
			var md map[string]any
			switch e := e.(type) {
			case *a2a.Task:
				md = e.Metadata
			case *a2a.TaskStatusUpdateEvent:
				md = e.Metadata
			}
			_, ok := md[remote.MetadataKey]
			return ok
		}
		pull(t, c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: ours}, "")).until(t, "the remote task id in our task's metadata", knows)
		if task, err := c.CancelTask(ctx, a2a.CancelTaskRequest{ID: ours}); err != nil || task.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("CancelTask: %+v %v", task, err)
		}
		if got := recv(t, ctx, g.canceled, "the remote cancel"); got != ex.taskID {
			t.Errorf("the remote canceled %s, want %s", got, ex.taskID)
		}
		r := recv(t, ctx, done, "the blocking send's answer")
		if task, ok := r.res.(*a2a.Task); r.err != nil || !ok || task.ID != ours || task.Status.State != a2a.TaskStateCanceled {
			t.Errorf("SendMessage: %+v %v, want task %s canceled", r.res, r.err, ours)
		}
		rt, err := dial(t, ctx, rem.agentURL("gate"), client.Options{}).GetTask(ctx, a2a.GetTaskRequest{ID: ex.taskID})
		if err != nil || rt.Status.State != a2a.TaskStateCanceled {
			t.Errorf("the remote task: %+v %v, want canceled", rt, err)
		}
	})
	t.Run("remote task already ended", func(t *testing.T) {
		ctx := testCtx(t)
		_, _, _, fr := remoteWith(t, remote.Config{}, true)
		task := a2a.Task{ID: "ours", Metadata: map[string]any{remote.MetadataKey: map[string]any{"taskId": "gone"}}}
		if err := fr.agent.Cancel(ctx, task); err != nil {
			t.Errorf("Cancel of an unknown remote task: %v, want nil (not found is ignored)", err)
		}
	})
}

// TestNonStreamingRemote: a remote whose card does not declare streaming
// gets a blocking SendMessage; the front still streams to its caller.
func TestNonStreamingRemote(t *testing.T) {
	ctx := testCtx(t)
	g, _, rec, fr := remoteWith(t, remote.Config{}, false)
	go func() {
		for range 2 {
			select {
			case g.gate <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	c := dial(t, ctx, fr.agentURL("front"), client.Options{})
	p := pull(t, c.SendStreamingMessage(ctx, testutil.UserMessage("chunks 2", "")))
	evs := p.until(t, "completed", isState(a2a.TaskStateCompleted))
	task, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: evs[0].(*a2a.Task).ID})
	if err != nil {
		t.Fatal(err)
	}
	if artifactText(task, "out") != "c0c1" || testutil.StatusText(task.Status) != "sent 2 chunks" {
		t.Errorf("task %+v", task)
	}
	if !rec.has("SendMessage") || rec.has("SendStreamingMessage") {
		t.Errorf("the remote saw %q, want SendMessage only", rec.requests())
	}
}

// TestRemoteFailures: every failure of the remote fails the front's task
// with a reason that names the remote and the error, never a credential.
func TestRemoteFailures(t *testing.T) {
	const secret = "tok-SECRET-123"
	check := func(t *testing.T, task *a2a.Task, fragments ...string) {
		t.Helper()
		reason := testutil.StatusText(task.Status)
		t.Logf("reason: %s", reason)
		if task.Status.State != a2a.TaskStateFailed {
			t.Fatalf("state %s (%q), want failed", task.Status.State, reason)
		}
		for _, f := range fragments {
			if !strings.Contains(reason, f) {
				t.Errorf("reason %q lacks %q", reason, f)
			}
		}
		if strings.Contains(reason, secret) {
			t.Errorf("reason %q shows the credential", reason)
		}
	}
	t.Run("down", func(t *testing.T) {
		ctx := testCtx(t)
		u := testutil.ClosedURL(t) + "/a2a/nobody"
		fr := startFront(t, remote.Config{URL: u, Credentials: remote.Credentials{BearerToken: secret}})
		c := dial(t, ctx, fr.agentURL("front"), client.Options{})
		check(t, sendTask(t, ctx, c, testutil.UserMessage("hi", "")), u, "Agent Card", "connection refused")
	})
	t.Run("remote task failed", func(t *testing.T) {
		ctx := testCtx(t)
		_, _, _, fr := remoteWith(t, remote.Config{}, true)
		c := dial(t, ctx, fr.agentURL("front"), client.Options{})
		task := sendTask(t, ctx, c, testutil.UserMessage("fail", ""))
		if task.Status.State != a2a.TaskStateFailed || testutil.StatusText(task.Status) != "remote says no" {
			t.Errorf("%s %q, want the remote's failure as is", task.Status.State, testutil.StatusText(task.Status))
		}
	})
	t.Run("credentials", func(t *testing.T) {
		ctx := testCtx(t)
		g := newGateAgent()
		var unauthorized atomic.Int32
		auth := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer "+secret || r.Header.Get("X-Custom-Key") != "k-1" {
					unauthorized.Add(1)
					http.Error(w, "no", http.StatusUnauthorized)
					return
				}
				next.ServeHTTP(w, r)
			})
		}
		rem := startHost(t, auth, map[string]hostedAgent{"gate": {g, testCard("gate", true)}})
		good := startFront(t, remote.Config{URL: rem.agentURL("gate"),
			Credentials: remote.Credentials{BearerToken: secret, APIKey: "k-1", APIKeyHeader: "X-Custom-Key"}})
		task := sendTask(t, ctx, dial(t, ctx, good.agentURL("front"), client.Options{}), testutil.UserMessage("chunks 0", ""))
		if task.Status.State != a2a.TaskStateCompleted || unauthorized.Load() != 0 {
			t.Errorf("with the credentials: %s %q, %d unauthorized requests", task.Status.State, testutil.StatusText(task.Status), unauthorized.Load())
		}
		bad := startFront(t, remote.Config{URL: rem.agentURL("gate"), Credentials: remote.Credentials{BearerToken: secret}})
		check(t, sendTask(t, ctx, dial(t, ctx, bad.agentURL("front"), client.Options{}), testutil.UserMessage("hi", "")), rem.agentURL("gate"), "401")
	})
	t.Run("timeout", func(t *testing.T) {
		ctx := testCtx(t)
		_, _, _, fr := remoteWith(t, remote.Config{Timeout: 50 * time.Millisecond}, false) // send, not stream
		c := dial(t, ctx, fr.agentURL("front"), client.Options{})
		check(t, sendTask(t, ctx, c, testutil.UserMessage("hang", "")), "did not answer in time", "no answer within timeout 50ms")
	})
	t.Run("JSON-RPC error", func(t *testing.T) {
		ctx := testCtx(t)
		raw := startRawRemote(t, false, `{"code":-32603,"message":"boom inside"}`)
		fr := startFront(t, remote.Config{URL: raw.URL})
		check(t, sendTask(t, ctx, dial(t, ctx, fr.agentURL("front"), client.Options{}), testutil.UserMessage("hi", "")), raw.URL, "-32603", "boom inside")
	})
}

// TestRemoteAnswersMessage: a remote that answers with a Message (no
// task), by send and by stream: the front's task completes with it.
func TestRemoteAnswersMessage(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			ctx := testCtx(t)
			raw := startRawRemote(t, streaming, "")
			fr := startFront(t, remote.Config{URL: raw.URL})
			task := sendTask(t, ctx, dial(t, ctx, fr.agentURL("front"), client.Options{}), testutil.UserMessage("hi", ""))
			if task.Status.State != a2a.TaskStateCompleted || testutil.StatusText(task.Status) != "direct answer" {
				t.Errorf("%s %q, want completed with the remote's message", task.Status.State, testutil.StatusText(task.Status))
			}
			if task.Status.Message != nil && (task.Status.Message.TaskID != task.ID || task.Status.Message.ContextID != task.ContextID) {
				t.Errorf("status message ids %s/%s, want ours", task.Status.Message.TaskID, task.Status.Message.ContextID)
			}
		})
	}
}

// TestDialRetried: a failed card fetch is not cached: the next execution
// fetches again; a good card is fetched once.
func TestDialRetried(t *testing.T) {
	ctx := testCtx(t)
	g := newGateAgent()
	var up atomic.Bool
	var cards atomic.Int32
	gate := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !up.Load() {
				http.NotFound(w, r)
				return
			}
			if strings.HasSuffix(r.URL.Path, ".json") {
				cards.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	}
	rem := startHost(t, gate, map[string]hostedAgent{"gate": {g, testCard("gate", true)}})
	fr := startFront(t, remote.Config{URL: rem.agentURL("gate")})
	c := dial(t, ctx, fr.agentURL("front"), client.Options{})
	if task := sendTask(t, ctx, c, testutil.UserMessage("chunks 0", "")); task.Status.State != a2a.TaskStateFailed || !strings.Contains(testutil.StatusText(task.Status), "404") {
		t.Fatalf("remote not there: %s %q", task.Status.State, testutil.StatusText(task.Status))
	}
	if _, err := fr.agent.RemoteCard(ctx); err == nil {
		t.Fatal("RemoteCard of a remote that is not there: no error")
	}
	up.Store(true)
	for i := range 3 {
		if task := sendTask(t, ctx, c, testutil.UserMessage("chunks 0", "")); task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("send %d once the remote is up: %s %q", i, task.Status.State, testutil.StatusText(task.Status))
		}
	}
	if n := cards.Load(); n != 1 {
		t.Errorf("the card was fetched %d times, want once", n)
	}
}

// TestStreamResumed: the connection between the front and the remote is
// cut in the middle of the stream; the client resubscribes from the last
// event id, and the front's caller gets every chunk once.
func TestStreamResumed(t *testing.T) {
	ctx := testCtx(t)
	g := newGateAgent()
	rec := &recorder{}
	rem := startHost(t, rec.wrap, map[string]hostedAgent{"gate": {g, testCard("gate", true)}})
	proxy := testutil.StartProxy(t, strings.TrimPrefix(rem.URL, "http://"))
	fr := startFront(t, remote.Config{URL: proxy.URL() + "/a2a/gate"})
	c := dial(t, ctx, fr.agentURL("front"), client.Options{})
	p := pull(t, c.SendStreamingMessage(ctx, testutil.UserMessage("chunks 3", "")))
	p.until(t, "started", isStatusText("started"))
	g.gate <- struct{}{}
	p.until(t, "chunk 0", isChunk("c0"))
	proxy.Cut()
	g.gate <- struct{}{}
	p.until(t, "chunk 1", isChunk("c1"))
	g.gate <- struct{}{}
	p.until(t, "chunk 2", isChunk("c2"))
	evs := p.until(t, "completed", isState(a2a.TaskStateCompleted))
	task, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent).TaskID})
	if err != nil {
		t.Fatal(err)
	}
	if got := artifactText(task, "out"); got != "c0c1c2" {
		t.Errorf("artifact %q, want every chunk once", got)
	}
	if !rec.has("SubscribeToTask", "last-event-id=") {
		t.Errorf("no resubscription with Last-Event-ID at the remote: %q", rec.requests())
	}
}

// TestRemoteCard: the remote's card, and the card derived from it.
func TestRemoteCard(t *testing.T) {
	ctx := testCtx(t)
	_, _, _, fr := remoteWith(t, remote.Config{}, true)
	rc, err := fr.agent.RemoteCard(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Name != "gate" || len(rc.SupportedInterfaces) == 0 || len(rc.Capabilities.Extensions) == 0 {
		t.Fatalf("remote card %+v", rc)
	}
	d := remote.DeriveCard(rc)
	if d.Name != "gate" || d.Description != "test agent gate" || d.Version != "1.2.3" || !d.Capabilities.Streaming ||
		len(d.Skills) != 1 || d.Provider == nil || d.Provider.Organization != "tests" {
		t.Errorf("derived card %+v", d)
	}
	if d.URL != "" || d.SupportedInterfaces != nil || d.AdditionalInterfaces != nil || d.Capabilities.Extensions != nil || d.ProtocolVersion != "" {
		t.Errorf("derived card keeps the remote's endpoint: %+v", d)
	}
}

// TestContextMapped: a new task in a context the caller reuses goes to the
// remote context of the earlier task; a new context gets a new remote one.
func TestContextMapped(t *testing.T) {
	ctx := testCtx(t)
	g, _, _, fr := remoteWith(t, remote.Config{}, true)
	c := dial(t, ctx, fr.agentURL("front"), client.Options{})
	first := sendTask(t, ctx, c, testutil.UserMessage("chunks 0", ""))
	ex1 := recv(t, ctx, g.execs, "task 1 at the remote")
	p := testutil.UserMessage("chunks 0", "")
	p.Message.ContextID = first.ContextID
	second := sendTask(t, ctx, c, p)
	ex2 := recv(t, ctx, g.execs, "task 2 at the remote")
	if second.ContextID != first.ContextID || ex2.taskID == ex1.taskID || ex2.contextID != ex1.contextID {
		t.Errorf("same context: ours %s/%s, remote tasks %s/%s in contexts %s/%s; want two remote tasks in one context",
			first.ContextID, second.ContextID, ex1.taskID, ex2.taskID, ex1.contextID, ex2.contextID)
	}
	sendTask(t, ctx, c, testutil.UserMessage("chunks 0", ""))
	if ex3 := recv(t, ctx, g.execs, "task 3 at the remote"); ex3.contextID == ex1.contextID {
		t.Errorf("a new context of ours went to the remote context %s of another", ex3.contextID)
	}
}

// TestStaleSnapshot: a remote whose stream of a continued task opens with
// the stored task as it was before the message (still input-required with
// the previous question, as @a2a-js/sdk 1.x servers do) does not end the
// turn early: the next question is the one that counts.
func TestStaleSnapshot(t *testing.T) {
	ctx := testCtx(t)
	rem := startScriptedRemote(t,
		[]string{rTask("submitted", ""), rStatus("input-required", "q1", true)},
		[]string{rTask("input-required", "q1"), rStatus("working", "", false), rStatus("input-required", "q2", true)},
		[]string{rTask("input-required", "q2"), rStatus("completed", "done", true)},
	)
	fr := startFront(t, remote.Config{URL: rem.URL})
	c := dial(t, ctx, fr.agentURL("front"), client.Options{})
	task := sendTask(t, ctx, c, testutil.UserMessage("one", ""))
	for i, want := range []struct {
		state a2a.TaskState
		text  string
	}{{a2a.TaskStateInputRequired, "q1"}, {a2a.TaskStateInputRequired, "q2"}, {a2a.TaskStateCompleted, "done"}} {
		if i > 0 {
			task = sendTask(t, ctx, c, testutil.UserMessage("next", task.ID))
		}
		if task.Status.State != want.state || testutil.StatusText(task.Status) != want.text {
			t.Fatalf("turn %d: %s %q, want %s %q", i+1, task.Status.State, testutil.StatusText(task.Status), want.state, want.text)
		}
	}
	if got := rem.recorded(); strings.Join(got, ",") != "message/stream,message/stream R,message/stream R" {
		t.Errorf("the remote saw %q", got)
	}
}

// TestStreamEndsAfterMessage: a remote stream that ends after an agent
// message within a task (clients take a Message for the end of a stream)
// is followed by a subscription to the remote task, which brings its end.
func TestStreamEndsAfterMessage(t *testing.T) {
	ctx := testCtx(t)
	note := `{"kind":"message","messageId":"n1","role":"agent","taskId":"R","contextId":"C","parts":[{"kind":"text","text":"a note"}]}`
	rem := startScriptedRemote(t,
		[]string{rTask("submitted", ""), rStatus("working", "", false), note},
		[]string{rTask("working", ""), rStatus("completed", "done", true)},
	)
	fr := startFront(t, remote.Config{URL: rem.URL})
	c := dial(t, ctx, fr.agentURL("front"), client.Options{})
	task := sendTask(t, ctx, c, testutil.UserMessage("go", ""))
	if task.Status.State != a2a.TaskStateCompleted || testutil.StatusText(task.Status) != "done" {
		t.Fatalf("%s %q, want completed \"done\"", task.Status.State, testutil.StatusText(task.Status))
	}
	found := false
	for _, m := range task.History {
		if testutil.Text(m.Parts) == "a note" && m.Role == a2a.RoleAgent && m.TaskID == task.ID {
			found = true
		}
	}
	if !found {
		t.Errorf("the remote's agent message is not in the history: %+v", task.History)
	}
	if got := rem.recorded(); strings.Join(got, ",") != "message/stream,tasks/resubscribe R" {
		t.Errorf("the remote saw %q", got)
	}
}

// TestStreamWithoutEnd: a remote that keeps ending its streams without a
// final state, and then has nothing more to say, fails the task with a
// reason (it does not resubscribe forever).
func TestStreamWithoutEnd(t *testing.T) {
	ctx := testCtx(t)
	note := `{"kind":"message","messageId":"n1","role":"agent","taskId":"R","contextId":"C","parts":[{"kind":"text","text":"a note"}]}`
	rem := startScriptedRemote(t, []string{rTask("submitted", ""), note})
	fr := startFront(t, remote.Config{URL: rem.URL})
	c := dial(t, ctx, fr.agentURL("front"), client.Options{})
	task := sendTask(t, ctx, c, testutil.UserMessage("go", ""))
	if task.Status.State != a2a.TaskStateFailed || !strings.Contains(testutil.StatusText(task.Status), rem.URL) {
		t.Fatalf("%s %q, want failed naming the remote", task.Status.State, testutil.StatusText(task.Status))
	}
}

// TestURLQueryNotShown: a url with a query (?key=…) is usable, the query
// goes with the card fetch, and it is shown nowhere: not in the card's
// default skill, failure reasons, errors or the task's metadata.
func TestURLQueryNotShown(t *testing.T) {
	const key = "q-s3cret-key"
	noKey := func(t *testing.T, what, s string) {
		t.Helper()
		if strings.Contains(s, key) {
			t.Errorf("%s shows the query: %q", what, s)
		}
	}
	t.Run("usable", func(t *testing.T) {
		ctx := testCtx(t)
		var cardQuery atomic.Value
		wrap := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, ".json") {
					cardQuery.Store(r.URL.RawQuery)
				}
				next.ServeHTTP(w, r)
			})
		}
		rem := startHost(t, wrap, map[string]hostedAgent{"gate": {newGateAgent(), testCard("gate", true)}})
		fr := startFront(t, remote.Config{URL: rem.agentURL("gate") + "?key=" + key})
		skill := fr.agent.Skill().Description
		noKey(t, "the skill", skill)
		if !strings.Contains(skill, rem.agentURL("gate")+"?…") {
			t.Errorf("skill %q does not name %s?…", skill, rem.agentURL("gate"))
		}
		task := sendTask(t, ctx, dial(t, ctx, fr.agentURL("front"), client.Options{}), testutil.UserMessage("chunks 0", ""))
		if task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("%s %q", task.Status.State, testutil.StatusText(task.Status))
		}
		if q, _ := cardQuery.Load().(string); q != "key="+key {
			t.Errorf("card fetched with query %q", q)
		}
		md, _ := json.Marshal(task.Metadata)
		noKey(t, "the task metadata", string(md))
	})
	t.Run("down", func(t *testing.T) {
		ctx := testCtx(t)
		u := testutil.ClosedURL(t) + "/a2a/nobody"
		fr := startFront(t, remote.Config{URL: u + "?key=" + key})
		task := sendTask(t, ctx, dial(t, ctx, fr.agentURL("front"), client.Options{}), testutil.UserMessage("hi", ""))
		reason := testutil.StatusText(task.Status)
		noKey(t, "the reason", reason)
		if task.Status.State != a2a.TaskStateFailed || !strings.Contains(reason, u+"?…") || !strings.Contains(reason, "connection refused") {
			t.Errorf("%s %q, want failed naming %s?… and the error", task.Status.State, reason, u)
		}
		_, err := fr.agent.RemoteCard(ctx)
		if err == nil {
			t.Fatal("RemoteCard: no error")
		}
		noKey(t, "RemoteCard's error", err.Error())
	})
	t.Run("bad card", func(t *testing.T) {
		ctx := testCtx(t)
		// A card that does not decode: the client's error quotes the
		// card's URL as text.
		bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"name": 5}`)
		}))
		t.Cleanup(bad.Close)
		fr := startFront(t, remote.Config{URL: bad.URL + "/card.json?key=" + key})
		task := sendTask(t, ctx, dial(t, ctx, fr.agentURL("front"), client.Options{}), testutil.UserMessage("hi", ""))
		reason := testutil.StatusText(task.Status)
		noKey(t, "the reason", reason)
		if task.Status.State != a2a.TaskStateFailed || !strings.Contains(reason, "/card.json?…") {
			t.Errorf("%s %q, want failed naming the card URL with ?…", task.Status.State, reason)
		}
		_, err := fr.agent.RemoteCard(ctx)
		if err == nil {
			t.Fatal("RemoteCard: no error")
		}
		noKey(t, "RemoteCard's error", err.Error())
	})
}

// TestFirstExecutionWithHistory: a task's first execution goes to the
// remote as a new message even when the task was created with a history
// of several user messages (the conversation bridge gives each turn of an
// a2a participant the conversation so far, server.RunAgent), so the
// participant's second turn does not fail "cannot continue". A task past
// its first execution without the remote's reference still fails.
func TestFirstExecutionWithHistory(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			ctx := testCtx(t)
			raw := startRawRemote(t, streaming, "")
			ag, err := remote.New(remote.Config{URL: raw.URL})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ag.Close() })
			now := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("Bob: and you?"))
			hist := []a2a.Message{
				a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("Alice: hello")),
				a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart("hi")),
				now,
			}
			task, err := server.RunAgent(ctx, ag, &server.Request{Message: now, Task: a2a.Task{History: hist},
				Params: a2a.SendMessageRequest{Message: now}}, server.RunOptions{})
			if err != nil || task.Status.State != a2a.TaskStateCompleted || testutil.StatusText(task.Status) != "direct answer" {
				t.Fatalf("first execution: %s %q %v, want completed with the remote's answer", task.Status.State, testutil.StatusText(task.Status), err)
			}
			task, _ = server.RunAgent(ctx, ag, &server.Request{Message: now, Task: a2a.Task{History: hist, Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}},
				Params: a2a.SendMessageRequest{Message: now}}, server.RunOptions{})
			if task.Status.State != a2a.TaskStateFailed {
				t.Fatalf("continuation without the remote's reference: %s, want failed", task.Status.State)
			}
		})
	}
}

// TestCloseWhileDialingGRPC: Close during the dial of a gRPC-only remote
// leaves no connection behind: the dial's callers get an error, and the
// next call dials again.
func TestCloseWhileDialingGRPC(t *testing.T) {
	ctx := testCtx(t)
	asked, release := make(chan struct{}), make(chan struct{})
	var fetched atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fetched.Add(1) == 1 {
			close(asked)
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"name":"g","description":"gRPC only","version":"1","capabilities":{},`+
			`"supportedInterfaces":[{"url":"127.0.0.1:1","protocolBinding":"GRPC","protocolVersion":"1.0"}],`+
			`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`)
	}))
	t.Cleanup(ts.Close)
	ag, err := remote.New(remote.Config{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ag.Close() })
	errc := make(chan error, 1)
	go func() {
		_, err := ag.RemoteCard(ctx)
		errc <- err
	}()
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the card was never asked for")
	}
	if err := ag.Close(); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "closed while its remote was being dialed") {
		t.Fatalf("RemoteCard across Close: %v, want the dial's connection refused", err)
	}
	rc, err := ag.RemoteCard(ctx)
	if err != nil || rc.Name != "g" {
		t.Fatalf("RemoteCard after Close: %+v, %v", rc, err)
	}
	if n := fetched.Load(); n != 2 {
		t.Errorf("the card was fetched %d times, want twice (the second dial after Close)", n)
	}
}
