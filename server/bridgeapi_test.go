package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

// The APIs that bridges (adapters hosted as agents) build on: task
// metadata from status updates, the earlier tasks of a contextId, a task
// by message id, authentication for one's own routes, and agents added
// and removed while a Host serves.

func newBridgeEngine(t *testing.T, st store.Store) *server.Engine {
	t.Helper()
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, eng.Close)
	return eng
}

func blockingSend(text, contextID string) a2a.SendMessageRequest {
	m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(text))
	m.ContextID = contextID
	return a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{Blocking: new(true)}}
}

func TestStatusMetadataMergesIntoTask(t *testing.T) {
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			st := namedStore(t, name)
			eng := newBridgeEngine(t, st)
			h := server.NewHandler(eng, "meta", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
				if err := u.Emit(ctx, &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: a2a.TaskStateWorking},
					Metadata: map[string]any{"a2abridge/remote": map[string]any{"taskId": "r1"}, "keep": "first"}}); err != nil {
					return err
				}
				return u.Emit(ctx, &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
					Metadata: map[string]any{"a2abridge/usage": map[string]any{"total_tokens": 7.0}}})
			}), testutil.Card("meta"), server.HandlerOptions{})
			task, err := h.SendMessageForTask(context.Background(), blockingSend("hi", ""))
			if err != nil {
				t.Fatal(err)
			}
			check := func(tk *a2a.Task) {
				t.Helper()
				if tk.Status.State != a2a.TaskStateCompleted {
					t.Fatalf("state %s", tk.Status.State)
				}
				r, _ := tk.Metadata["a2abridge/remote"].(map[string]any)
				u, _ := tk.Metadata["a2abridge/usage"].(map[string]any)
				if r["taskId"] != "r1" || fmt.Sprint(u["total_tokens"]) != "7" || tk.Metadata["keep"] != "first" {
					t.Fatalf("metadata %v", tk.Metadata)
				}
			}
			got, err := h.GetTask(context.Background(), a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			check(got)
			// The store folds the log the same way (Replay) when it reads
			// the task back without the engine's cache.
			info, err := st.Task(context.Background(), task.ID)
			if err != nil {
				t.Fatal(err)
			}
			check(&info.Task)
		})
	}
}

func TestContextHistory(t *testing.T) {
	seen := make(chan []a2a.Task, 8)
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		prior, err := u.ContextHistory(ctx, 2)
		if err != nil {
			return err
		}
		seen <- prior
		return u.Complete(ctx, "answer to "+textOfMessage(r.Message))
	})
	eng := newBridgeEngine(t, memory.New())
	set := auth.Set{mustBearer(t, map[string]string{"alice": "ta", "bob": "tb"})}
	h := server.NewHandler(eng, "hist", agent, testutil.Card("hist"), server.HandlerOptions{Auth: set})
	alice := auth.NewContext(context.Background(), &auth.Principal{Scheme: "bearer", Subject: "alice"})
	bob := auth.NewContext(context.Background(), &auth.Principal{Scheme: "bearer", Subject: "bob"})
	send := func(ctx context.Context, text, cid string) *a2a.Task {
		t.Helper()
		task, err := h.SendMessageForTask(ctx, blockingSend(text, cid))
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	first := send(alice, "one", "")
	if p := <-seen; len(p) != 0 {
		t.Fatalf("first task saw %d earlier tasks", len(p))
	}
	cid := first.ContextID
	send(alice, "two", cid)
	if p := <-seen; len(p) != 1 || p[0].ID != first.ID {
		t.Fatalf("second task saw %v", p)
	}
	// Another principal reusing the contextId sees none of alice's turns.
	send(bob, "intruder", cid)
	if p := <-seen; len(p) != 0 {
		t.Fatalf("bob saw %d of alice's tasks", len(p))
	}
	send(alice, "three", cid)
	p := <-seen
	if len(p) != 2 || textOfMessage(p[0].History[0]) != "one" || textOfMessage(p[1].History[0]) != "two" {
		var texts []string
		for _, tk := range p {
			texts = append(texts, textOfMessage(tk.History[0]))
		}
		t.Fatalf("third task saw %q, want the first two turns oldest first", texts)
	}
	send(alice, "four", cid) // bounded: the last two
	if p := <-seen; len(p) != 2 || textOfMessage(p[0].History[0]) != "two" || textOfMessage(p[1].History[0]) != "three" {
		t.Fatalf("fourth task saw %d tasks", len(p))
	}
}

func textOfMessage(m a2a.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if tp, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(tp))
		}
	}
	return b.String()
}

func mustBearer(t *testing.T, tokens map[string]string) auth.Authenticator {
	t.Helper()
	b, err := auth.NewBearerTokens("bearer", tokens)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMessageTask(t *testing.T) {
	eng := newBridgeEngine(t, memory.New())
	set := auth.Set{mustBearer(t, map[string]string{"alice": "ta", "bob": "tb"})}
	h := server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{Auth: set})
	alice := auth.NewContext(context.Background(), &auth.Principal{Scheme: "bearer", Subject: "alice"})
	bob := auth.NewContext(context.Background(), &auth.Principal{Scheme: "bearer", Subject: "bob"})
	p := blockingSend("hello", "")
	p.Message.MessageID = "simple:job-1"
	task, err := h.SendMessageForTask(alice, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.MessageTask(alice, "simple:job-1")
	if err != nil || got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("MessageTask = %v, %v; want task %s completed", got, err, task.ID)
	}
	if _, err := h.MessageTask(bob, "simple:job-1"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("another principal: err %v, want TaskNotFound", err)
	}
	if _, err := h.MessageTask(alice, "simple:nope"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("unknown message id: err %v, want TaskNotFound", err)
	}
	if _, err := h.MessageTask(context.Background(), "simple:job-1"); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("no principal: err %v, want Unauthenticated", err)
	}
}

func TestHandlerAuthenticated(t *testing.T) {
	eng := newBridgeEngine(t, memory.New())
	set := auth.Set{mustBearer(t, map[string]string{"alice": "ta"})}
	h := server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{Auth: set})
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.FromContext(r.Context())
		fmt.Fprint(w, "hello "+p.Subject)
	})
	srv := httptest.NewServer(h.Authenticated(inner, func(w http.ResponseWriter, r *http.Request, status int, err *a2a.Error) {
		w.WriteHeader(status)
		fmt.Fprintf(w, "denied: %s", err.Message)
	}))
	defer srv.Close()
	get := func(token string) (int, string, string) {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("WWW-Authenticate")
	}
	if code, body, _ := get("ta"); code != 200 || body != "hello alice" {
		t.Fatalf("valid token: %d %q", code, body)
	}
	if code, body, chal := get("wrong"); code != 401 || !strings.HasPrefix(body, "denied: ") || !strings.HasPrefix(chal, "Bearer") {
		t.Fatalf("invalid token: %d %q challenge %q", code, body, chal)
	}
	if code, _, _ := get(""); code != 401 {
		t.Fatalf("no token: %d", code)
	}
	// Without authentication configured, next is served as is.
	open := server.NewHandler(eng, "open", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{})
	if got := open.Authenticated(inner, nil); fmt.Sprint(got) != fmt.Sprint(http.Handler(inner)) {
		t.Fatal("Authenticated without auth wraps next")
	}
}

func TestHostAddRemoveWhileServing(t *testing.T) {
	eng := newBridgeEngine(t, memory.New())
	host := servertest.Host("", server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	srv := httptest.NewServer(host)
	defer srv.Close()
	status := func(path string) int {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := status("/a2a/extra/.well-known/agent-card.json"); c != 404 {
		t.Fatalf("before Add: %d", c)
	}
	// Requests go on while agents come and go (run with -race).
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Get(srv.URL + "/a2a/extra/.well-known/agent-card.json")
				if err == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	for i := range 20 {
		host.Add(server.NewHandler(eng, "extra", agents.Echo{}, testutil.Card(fmt.Sprint("extra", i)), server.HandlerOptions{}))
		host.Remove("extra")
	}
	close(stop)
	wg.Wait()
	host.Add(server.NewHandler(eng, "extra", agents.Echo{}, testutil.Card("extra"), server.HandlerOptions{}))
	if c := status("/a2a/extra/.well-known/agent-card.json"); c != 200 {
		t.Fatalf("after Add: %d", c)
	}
	if h, ok := host.Handler("extra"); !ok || h.Name() != "extra" {
		t.Fatal("Handler(extra) not found")
	}
	if got := host.Agents(); len(got) != 2 || got[0] != "echo" || got[1] != "extra" {
		t.Fatalf("Agents() = %v", got)
	}
	if !host.Remove("extra") || host.Remove("extra") {
		t.Fatal("Remove reports wrongly")
	}
	if c := status("/a2a/extra/.well-known/agent-card.json"); c != 404 {
		t.Fatalf("after Remove: %d", c)
	}
	if c := status("/a2a/echo/.well-known/agent-card.json"); c != 200 {
		t.Fatalf("the other agent after Remove: %d", c)
	}
	// Extra routes beside the agents; the agents' paths are refused.
	host.Handle("GET /api/v1/ping", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "pong") }))
	if c := status("/api/v1/ping"); c != 200 {
		t.Fatalf("extra route: %d", c)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("Handle below /a2a/ did not panic")
			}
		}()
		host.Handle("POST /a2a/x/y", http.NotFoundHandler())
	}()
}

func TestStopAgent(t *testing.T) {
	eng := newBridgeEngine(t, memory.New())
	started := make(chan struct{}, 4)
	canceled := make(chan string, 4)
	blocked := cancelHook{Agent: server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if err := u.Working(ctx, "busy"); err != nil {
			return err
		}
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}), canceled: canceled}
	h := server.NewHandler(eng, "gone", blocked, testutil.Card("gone"), server.HandlerOptions{})
	other := server.NewHandler(eng, "stays", blocked, testutil.Card("stays"), server.HandlerOptions{})
	ctx := context.Background()
	p := blockingSend("x", "")
	p.Configuration.Blocking = new(false)
	t1, err := h.SendMessageForTask(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	p2 := blockingSend("y", "")
	p2.Configuration.Blocking = new(false)
	t2, err := other.SendMessageForTask(ctx, p2)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	<-started
	n, err := eng.StopAgent(ctx, h, "The agent was removed.")
	if err != nil || n != 1 {
		t.Fatalf("StopAgent = %d, %v", n, err)
	}
	// The agent's Canceler ran for the task it failed (a bridge cancels
	// the remote task).
	select {
	case id := <-canceled:
		if id != t1.ID {
			t.Fatalf("Cancel hook for %s, want %s", id, t1.ID)
		}
	default:
		t.Fatal("StopAgent did not run the agent's Canceler")
	}
	got, err := h.GetTask(ctx, a2a.GetTaskRequest{ID: t1.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateFailed || got.Status.Message == nil || textOfMessage(*got.Status.Message) != "The agent was removed." {
		t.Fatalf("stopped task: %s %v", got.Status.State, got.Status.Message)
	}
	if got, _ := other.GetTask(ctx, a2a.GetTaskRequest{ID: t2.ID}); got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the other agent's task: %s", got.Status.State)
	}
	if n, _ := eng.StopAgent(ctx, h, "again"); n != 0 {
		t.Fatalf("second StopAgent failed %d tasks", n)
	}
}

// TestStopAgentWaitingTasks: StopAgent fails the tasks of the agent that
// wait for their caller (input-required, auth-required), of every owner,
// more than a page of them, and runs the Canceler for each; another
// agent's waiting task and the agent's finished tasks are left alone.
func TestStopAgentWaitingTasks(t *testing.T) {
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			st := namedStore(t, name)
			eng := newBridgeEngine(t, st)
			canceled := make(chan string, 256)
			asks := cancelHook{Agent: server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
				switch text := textOfMessage(r.Message); text {
				case "done":
					return u.Complete(ctx, "ok")
				case "auth":
					return u.SetStatus(ctx, a2a.TaskStateAuthRequired, u.TextMessage("sign in"))
				default:
					return u.SetStatus(ctx, a2a.TaskStateInputRequired, u.TextMessage("which one?"))
				}
			}), canceled: canceled}
			h := server.NewHandler(eng, "gone", asks, testutil.Card("gone"), server.HandlerOptions{})
			other := server.NewHandler(eng, "stays", asks, testutil.Card("stays"), server.HandlerOptions{})
			owners := []context.Context{
				context.Background(),
				auth.NewContext(context.Background(), &auth.Principal{Scheme: "bearer", Subject: "alice"}),
				auth.NewContext(context.Background(), &auth.Principal{Scheme: "bearer", Subject: "bob"}),
			}
			var waiting []string
			var done string
			for i := range 130 {
				text := "ask"
				if i%10 == 0 {
					text = "auth"
				}
				task, err := h.SendMessageForTask(owners[i%len(owners)], blockingSend(text, ""))
				if err != nil {
					t.Fatal(err)
				}
				waiting = append(waiting, task.ID)
			}
			task, err := h.SendMessageForTask(owners[1], blockingSend("done", ""))
			if err != nil || task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("a finished task: %v, %v", task, err)
			}
			done = task.ID
			kept, err := other.SendMessageForTask(owners[2], blockingSend("ask", ""))
			if err != nil {
				t.Fatal(err)
			}
			n, err := eng.StopAgent(context.Background(), h, "The agent was removed.")
			if err != nil || n != len(waiting) {
				t.Fatalf("StopAgent = %d, %v; want %d", n, err, len(waiting))
			}
			hooked := map[string]bool{}
			for range waiting {
				select {
				case id := <-canceled:
					hooked[id] = true
				default:
				}
			}
			for i, id := range waiting {
				got, err := h.GetTask(owners[i%len(owners)], a2a.GetTaskRequest{ID: id})
				if err != nil {
					t.Fatal(err)
				}
				if got.Status.State != a2a.TaskStateFailed || got.Status.Message == nil || textOfMessage(*got.Status.Message) != "The agent was removed." {
					t.Fatalf("waiting task %s: %s %v", id, got.Status.State, got.Status.Message)
				}
				if !hooked[id] {
					t.Fatalf("no Cancel for waiting task %s", id)
				}
			}
			if got, _ := h.GetTask(owners[1], a2a.GetTaskRequest{ID: done}); got.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("the finished task: %s", got.Status.State)
			}
			if got, _ := other.GetTask(owners[2], a2a.GetTaskRequest{ID: kept.ID}); got.Status.State != a2a.TaskStateInputRequired {
				t.Fatalf("the other agent's task: %s", got.Status.State)
			}
		})
	}
}

// cancelHook adds a Canceler that reports the task ids it was called for.
type cancelHook struct {
	server.Agent
	canceled chan string
}

func (c cancelHook) Cancel(ctx context.Context, task a2a.Task) error {
	c.canceled <- task.ID
	return nil
}

// TestContextHistoryOnlyEarlier: a task created after this one in the same
// context (and updated more recently) is not among its earlier turns.
func TestContextHistoryOnlyEarlier(t *testing.T) {
	release := make(chan struct{})
	seen := make(chan []a2a.Task, 4)
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if textOfMessage(r.Message) == "first" {
			<-release // the second task is created and completed meanwhile
		}
		prior, err := u.ContextHistory(ctx, 5)
		if err != nil {
			return err
		}
		seen <- prior
		return u.Complete(ctx, "ok")
	})
	eng := newBridgeEngine(t, memory.New())
	h := server.NewHandler(eng, "hist", agent, testutil.Card("hist"), server.HandlerOptions{})
	ctx := context.Background()
	p := blockingSend("first", "ctx-1")
	p.Configuration.Blocking = new(false)
	first, err := h.SendMessageForTask(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.SendMessageForTask(ctx, blockingSend("second", "ctx-1"))
	if err != nil {
		t.Fatal(err)
	}
	if p := <-seen; len(p) != 1 || p[0].ID != first.ID {
		t.Fatalf("the second task saw %d earlier tasks", len(p))
	}
	close(release)
	if p := <-seen; len(p) != 0 {
		t.Fatalf("the first task saw %d tasks (the second, %s, came after it)", len(p), second.ID)
	}
}
