package simple_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/bridge/simple"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// a2aServer hosts agents on a loopback A2A server; it stops when the test ends.
type a2aServer struct {
	url  string
	host *server.Host
	eng  *server.Engine
	hs   map[string]*server.AgentHandler
}

func newA2AServer(t *testing.T) *a2aServer {
	t.Helper()
	eng := servertest.Engine(t, server.EngineOptions{})
	s := &a2aServer{eng: eng, hs: map[string]*server.AgentHandler{},
		host: servertest.Host("")}
	return s
}

// add hosts agent under name (before start).
func (s *a2aServer) add(t *testing.T, name string, agent server.Agent, opts server.HandlerOptions) *server.AgentHandler {
	t.Helper()
	// Text and JSON in, as the cards of a2abridge serve (the server
	// refuses a part of another type, -32005).
	card := a2a.AgentCard{Name: name, Description: "test agent " + name, Version: "1",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain", "application/json"}, DefaultOutputModes: []string{"text/plain", "application/json"}}
	if sa, ok := agent.(*simple.Agent); ok {
		card.Skills = []a2a.AgentSkill{sa.Skill()}
	}
	h := server.NewHandler(s.eng, name, agent, card, opts)
	s.host.Add(h)
	s.hs[name] = h
	return h
}

// start serves the host, with the simple endpoint at /simple/{agent}.
func (s *a2aServer) start(t *testing.T, opts simple.EndpointOptions) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testutil.Logger()
	}
	s.host.Handle("/simple/{agent}", simple.NewEndpoint(s.host.Handler, opts))
	ts := testutil.Serve(t, s.host, s.eng.Close)
	s.url = ts.URL
}

// startHTTPAgents hosts one http agent per config, under its name.
func startHTTPAgents(t *testing.T, cfgs map[string]simple.Config) *a2aServer {
	t.Helper()
	s := newA2AServer(t)
	for name, c := range cfgs {
		a, err := simple.New(c)
		if err != nil {
			t.Fatalf("agent %s: %v", name, err)
		}
		t.Cleanup(func() { _ = a.Close() })
		s.add(t, name, a, server.HandlerOptions{})
	}
	s.start(t, simple.EndpointOptions{})
	return s
}

func (s *a2aServer) client(t *testing.T, name string) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), s.url+"/a2a/"+name, client.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// send sends parts to agent name and waits for the task.
func (s *a2aServer) send(t *testing.T, name string, parts ...a2a.Part) *a2a.Task {
	t.Helper()
	return s.sendMsg(t, name, a2a.NewMessage(a2a.RoleUser, parts...), nil)
}

func (s *a2aServer) sendMsg(t *testing.T, name string, m a2a.Message, cfg *a2a.SendMessageConfiguration) *a2a.Task {
	t.Helper()
	return testutil.SendTask(t, context.Background(), s.client(t, name), a2a.SendMessageRequest{Message: m, Configuration: cfg})
}

func wantState(t *testing.T, task *a2a.Task, want a2a.TaskState) {
	t.Helper()
	if task.Status.State != want {
		t.Fatalf("task %s: state %s (%q), want %s", task.ID, task.Status.State, testutil.StatusText(task.Status), want)
	}
}

// wantFailed checks the task failed with a reason containing want.
func wantFailed(t *testing.T, task *a2a.Task, want string) {
	t.Helper()
	wantState(t, task, a2a.TaskStateFailed)
	if got := testutil.StatusText(task.Status); !strings.Contains(got, want) {
		t.Fatalf("reason %q does not contain %q", got, want)
	}
}

// jsonOf is v as canonical JSON, for comparisons.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := simple.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// partsJSON describes parts for comparisons.
func partsJSON(t *testing.T, parts []a2a.Part) string {
	t.Helper()
	var out []any
	for _, p := range parts {
		switch c := p.Content.(type) {
		case a2a.Text:
			out = append(out, map[string]any{"text": string(c)})
		case a2a.Data:
			out = append(out, map[string]any{"data": c.Value})
		case a2a.Raw, a2a.URL:
			out = append(out, map[string]any{"file": map[string]any{"name": p.Filename, "mediaType": p.MediaType, "bytes": p.Raw(), "uri": p.URL()}})
		}
	}
	return jsonOf(t, out)
}

func onlyArtifact(t *testing.T, task *a2a.Task) a2a.Artifact {
	t.Helper()
	if len(task.Artifacts) != 1 {
		t.Fatalf("task has %d artifacts, want 1", len(task.Artifacts))
	}
	return task.Artifacts[0]
}

func intp(n int) *int { return &n }

// TestHTTPAgent runs the http agent against the Go and the Python backend.
func TestHTTPAgent(t *testing.T) {
	for _, mk := range []func(*testing.T) backend{goBackend, pythonBackend} {
		be := mk(t)
		t.Run(be.name, func(t *testing.T) { testHTTPAgent(t, be) })
	}
}

func testHTTPAgent(t *testing.T, be backend) {
	at := func(path string) simple.Config { return simple.Config{URL: be.url + path} }
	cfgs := map[string]simple.Config{
		"echo": at("/echo"), "string": at("/string"), "null": at("/null"), "error": at("/error"),
		"error-empty": at("/error-empty"), "notjson": at("/notjson"), "nostatus": at("/nostatus"),
		"badstatus": at("/badstatus"), "badoutput": at("/badoutput"), "wrongtask": at("/wrongtask"),
		"dupkey": at("/dupkey"), "http500": at("/http500"), "http400": at("/http400"),
		"flaky": at("/flaky?fail=2"), "flaky502": at("/flaky?fail=2&code=502"), "flaky504": at("/flaky?fail=2&code=504"),
		"flaky-out":     at("/flaky?fail=3"),
		"flaky-noretry": {URL: be.url + "/flaky?fail=1", Retries: intp(0)},
		"always500":     at("/always?code=500"), "always400": at("/always?code=400"),
		"big":      {URL: be.url + "/big", MaxResponse: 1000},
		"hang":     {URL: be.url + "/hang", TimeoutMS: 300},
		"hanglong": at("/hang"),
		"ask":      at("/ask"),
		"headers": {URL: be.url + "/headers", Credentials: simple.Credentials{BearerToken: "tok-123", APIKey: "key-456"},
			Headers: map[string]string{"X-Custom": "custom value"}},
		"keyheader": {URL: be.url + "/headers", Credentials: simple.Credentials{APIKey: "key-789", APIKeyHeader: "X-Custom"}},
		"field":     {URL: be.url + "/echo", TextField: "prompt"},
	}
	s := startHTTPAgents(t, cfgs)

	t.Run("text", func(t *testing.T) {
		task := s.send(t, "echo", a2a.NewTextPart("hi"))
		wantState(t, task, a2a.TaskStateCompleted)
		if got, want := partsJSON(t, onlyArtifact(t, task).Parts), `[{"text":"hi"}]`; got != want {
			t.Fatalf("artifact %s, want %s", got, want)
		}
	})
	t.Run("text field", func(t *testing.T) {
		task := s.send(t, "field", a2a.NewTextPart("hi"), a2a.NewDataPart(map[string]any{"n": json.Number("1")}))
		wantState(t, task, a2a.TaskStateCompleted)
		// input {"n":1,"prompt":"hi"} comes back: a TextPart of the text field, then the object.
		if got, want := partsJSON(t, onlyArtifact(t, task).Parts), `[{"text":"hi"},{"data":{"n":1,"prompt":"hi"}}]`; got != want {
			t.Fatalf("artifact %s, want %s", got, want)
		}
	})
	t.Run("data", func(t *testing.T) {
		data := map[string]any{"a": json.Number("12345678901234567890"), "b": []any{true, nil, "x"}}
		task := s.send(t, "echo", a2a.NewDataPart(data))
		wantState(t, task, a2a.TaskStateCompleted)
		if got, want := partsJSON(t, onlyArtifact(t, task).Parts), partsJSON(t, []a2a.Part{a2a.NewDataPart(data)}); got != want {
			t.Fatalf("artifact %s, want %s", got, want)
		}
	})
	t.Run("files", func(t *testing.T) {
		parts := []a2a.Part{
			a2a.NewTextPart("see attached"),
			a2a.Part{Content: a2a.Raw([]byte("hello\x00")), MediaType: "text/plain", Filename: "a.txt"},
			a2a.Part{Content: a2a.URL("https://example.com/b.png"), MediaType: "image/png", Filename: "b.png"},
		}
		task := s.send(t, "echo", parts...)
		wantState(t, task, a2a.TaskStateCompleted)
		if got, want := partsJSON(t, onlyArtifact(t, task).Parts), partsJSON(t, parts); got != want {
			t.Fatalf("artifact %s, want %s", got, want)
		}
	})
	t.Run("string output", func(t *testing.T) {
		task := s.send(t, "string", a2a.NewTextPart("hi"))
		wantState(t, task, a2a.TaskStateCompleted)
		if got, want := partsJSON(t, onlyArtifact(t, task).Parts), `[{"text":"plain text"}]`; got != want {
			t.Fatalf("artifact %s, want %s", got, want)
		}
	})
	t.Run("null output", func(t *testing.T) {
		task := s.send(t, "null", a2a.NewTextPart("hi"))
		wantState(t, task, a2a.TaskStateCompleted)
		if len(task.Artifacts) != 0 {
			t.Fatalf("artifacts %v, want none", task.Artifacts)
		}
	})
	t.Run("error status", func(t *testing.T) {
		task := s.send(t, "error", a2a.NewTextPart("hi"))
		wantState(t, task, a2a.TaskStateFailed)
		if got := testutil.StatusText(task.Status); got != "backend says no" {
			t.Fatalf("status message %q, want the backend's error", got)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		for agent, want := range map[string]string{
			"error-empty": `answer is malformed: error: a non-empty string is required when status is "error"`,
			"notjson":     "answer is not JSON",
			"nostatus":    "status: missing",
			"badstatus":   `status: unknown value "done"`,
			"badoutput":   "output: must be an object, a string or null, not an array",
			"wrongtask":   `task_id: the answer is for task "someone-else"`,
			"dupkey":      "status: appears twice in the answer",
			"http500":     "answered HTTP 500 Internal Server Error: exploded",
			"http400":     "answered HTTP 400 Bad Request: bad input",
			"big":         "answered more than 1000 bytes (max_response)",
		} {
			t.Run(agent, func(t *testing.T) {
				wantFailed(t, s.send(t, agent, a2a.NewTextPart("hi")), want)
			})
		}
	})
	t.Run("retries then success", func(t *testing.T) {
		for _, agent := range []string{"flaky", "flaky502", "flaky504"} {
			m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))
			task := s.sendMsg(t, agent, m, nil)
			wantState(t, task, a2a.TaskStateCompleted)
			if got, want := partsJSON(t, onlyArtifact(t, task).Parts), `[{"data":{"attempts":3}}]`; got != want {
				t.Fatalf("%s: artifact %s, want %s", agent, got, want)
			}
			if n := be.attempts(t, task.ID); n != 3 {
				t.Fatalf("%s: backend saw %d calls, want 3", agent, n)
			}
			// Every attempt carries the same key.
			k := simple.IdempotencyKey(task.ID, m.MessageID)
			if got := be.keys(t, task.ID); strings.Join(got, ",") != strings.Join([]string{k, k, k}, ",") {
				t.Fatalf("%s: Idempotency-Keys %q, want %q three times", agent, got, k)
			}
		}
	})
	t.Run("retries exhausted", func(t *testing.T) {
		task := s.send(t, "flaky-out", a2a.NewTextPart("hi"))
		wantFailed(t, task, "answered HTTP 503 Service Unavailable (after 3 attempts): busy")
		if n := be.attempts(t, task.ID); n != 3 {
			t.Fatalf("backend saw %d calls, want 3", n)
		}
	})
	t.Run("retries 0", func(t *testing.T) {
		task := s.send(t, "flaky-noretry", a2a.NewTextPart("hi"))
		wantFailed(t, task, "answered HTTP 503 Service Unavailable: busy")
		if n := be.attempts(t, task.ID); n != 1 {
			t.Fatalf("backend saw %d calls, want 1", n)
		}
	})
	t.Run("no retry on 500 and 400", func(t *testing.T) {
		for agent, want := range map[string]string{"always500": "HTTP 500 Internal Server Error: nope", "always400": "HTTP 400 Bad Request: nope"} {
			task := s.send(t, agent, a2a.NewTextPart("hi"))
			wantFailed(t, task, want)
			if n := be.attempts(t, task.ID); n != 1 {
				t.Fatalf("%s: backend saw %d calls, want 1", agent, n)
			}
		}
	})
	t.Run("timeout", func(t *testing.T) {
		wantFailed(t, s.send(t, "hang", a2a.NewTextPart("hi")), "did not answer within 300 ms (timeout_ms)")
	})
	t.Run("cancel aborts the call", func(t *testing.T) {
		c := s.client(t, "hanglong")
		ev, err := c.SendMessage(context.Background(), a2a.SendMessageRequest{
			Message:       a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi")),
			Configuration: &a2a.SendMessageConfiguration{Blocking: new(false)}})
		if err != nil {
			t.Fatal(err)
		}
		id := ev.(*a2a.Task).ID
		var ok map[string]bool
		be.get(t, "/wait-arrived?task_id="+id, &ok)
		task, err := c.CancelTask(context.Background(), a2a.CancelTaskRequest{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		wantState(t, task, a2a.TaskStateCanceled)
		be.get(t, "/wait-gone?task_id="+id, &ok) // returns once the backend saw the request end
	})
	t.Run("credentials", func(t *testing.T) {
		m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))
		task := s.sendMsg(t, "headers", m, nil)
		wantState(t, task, a2a.TaskStateCompleted)
		got := onlyArtifact(t, task).Parts[0].Content.(a2a.Data).Object()
		want := map[string]any{"authorization": "Bearer tok-123", "api_key": "key-456", "custom": "custom value",
			"idempotency_key": wantKey(task.ID, m.MessageID), "content_type": "application/json"}
		if jsonOf(t, got) != jsonOf(t, want) {
			t.Fatalf("backend saw headers %v, want %v", got, want)
		}
		task = s.send(t, "keyheader", a2a.NewTextPart("hi"))
		if got := onlyArtifact(t, task).Parts[0].Content.(a2a.Data).Object(); got["custom"] != "key-789" || got["api_key"] != "" {
			t.Fatalf("api_key_header X-Custom: backend saw %v", got)
		}
	})
	t.Run("input required", func(t *testing.T) {
		first := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))
		task := s.sendMsg(t, "ask", first, nil)
		wantState(t, task, a2a.TaskStateInputRequired)
		if got := testutil.StatusText(task.Status); got != "What is your name?" {
			t.Fatalf("question %q", got)
		}
		m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("Ada"))
		m.TaskID = task.ID
		task = s.sendMsg(t, "ask", m, nil)
		wantState(t, task, a2a.TaskStateCompleted)
		if got, want := partsJSON(t, onlyArtifact(t, task).Parts), `[{"text":"Hello, Ada!"}]`; got != want {
			t.Fatalf("artifact %s, want %s", got, want)
		}
		if n := be.attempts(t, task.ID); n != 2 {
			t.Fatalf("backend saw %d calls for the task, want 2 (same task_id)", n)
		}
		// Each message of the task has its own key.
		want := []string{wantKey(task.ID, first.MessageID), wantKey(task.ID, m.MessageID)}
		if got := be.keys(t, task.ID); strings.Join(got, ",") != strings.Join(want, ",") || want[0] == want[1] {
			t.Fatalf("Idempotency-Keys %q, want %q", got, want)
		}
	})
}

// wantKey is the documented Idempotency-Key of a message of a task,
// computed here independently of simple.IdempotencyKey (which must agree).
func wantKey(taskID, messageID string) string {
	sum := sha256.Sum256([]byte(taskID + "\x00" + messageID))
	k := hex.EncodeToString(sum[:])[:32]
	if got := simple.IdempotencyKey(taskID, messageID); got != k {
		panic("IdempotencyKey(" + taskID + ", " + messageID + ") = " + got + ", want " + k)
	}
	return k
}

func TestIdempotencyKey(t *testing.T) {
	k := simple.IdempotencyKey("task-1", "1")
	if len(k) != 32 || strings.Trim(k, "0123456789abcdef") != "" {
		t.Fatalf("key %q: want 32 lowercase hex digits", k)
	}
	if k != wantKey("task-1", "1") || k != simple.IdempotencyKey("task-1", "1") {
		t.Fatal("the key is not the documented one, or not stable")
	}
	// Unique per task and per message, the boundary between them included.
	seen := map[string]string{}
	for _, p := range [][2]string{{"task-1", "1"}, {"task-2", "1"}, {"task-1", "2"}, {"task-1", "12"}, {"task-11", "2"}, {"", ""}, {"", "task-1"}} {
		k := simple.IdempotencyKey(p[0], p[1])
		if prev, dup := seen[k]; dup {
			t.Fatalf("%q and %s have the same key", p, prev)
		}
		seen[k] = fmt.Sprintf("%q", p)
	}
}

// TestHTTPAgentKeyPerTask: two callers who use the same task_id on /simple
// (or the same messageId over A2A) reach the backend with different
// Idempotency-Keys, none of them the caller's id.
func TestHTTPAgentKeyPerTask(t *testing.T) {
	be := goBackend(t)
	s := newA2AServer(t)
	a, err := simple.New(simple.Config{URL: be.url + "/headers"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"alice": "tok-alice", "bob": "tok-bob"})
	if err != nil {
		t.Fatal(err)
	}
	s.add(t, "weather", a, server.HandlerOptions{Auth: auth.Set{bearer}})
	s.start(t, simple.EndpointOptions{})
	keys := map[string]bool{}
	for _, tok := range []string{"tok-alice", "tok-bob"} {
		r := s.call(t, "weather", `{"task_id":"job-1","input":"hi"}`, "Authorization", "Bearer "+tok)
		out, _ := r.resp.Output.(map[string]any)
		k, _ := out["idempotency_key"].(string)
		if r.code != 200 || len(k) != 32 || k == "simple:job-1" {
			t.Fatalf("%s: HTTP %d %s", tok, r.code, r.raw)
		}
		keys[k] = true
	}
	for _, tok := range []string{"tok-alice", "tok-bob"} {
		c, err := client.Dial(context.Background(), s.url+"/a2a/weather", client.Options{MaxRetries: -1, Token: tok})
		if err != nil {
			t.Fatal(err)
		}
		m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))
		m.MessageID = "1"
		ev, err := c.SendMessage(context.Background(), a2a.SendMessageRequest{Message: m})
		if err != nil {
			t.Fatal(err)
		}
		task := ev.(*a2a.Task)
		wantState(t, task, a2a.TaskStateCompleted)
		k := onlyArtifact(t, task).Parts[0].Content.(a2a.Data).Object()["idempotency_key"]
		if k != wantKey(task.ID, "1") {
			t.Fatalf("%s: key %v, want %s", tok, k, wantKey(task.ID, "1"))
		}
		keys[k.(string)] = true
	}
	if len(keys) != 4 {
		t.Fatalf("4 tasks had %d distinct keys: %v", len(keys), keys)
	}
}

// TestConnectionErrors: connection errors are retried; the reason names
// them without the backend's address.
func TestConnectionErrors(t *testing.T) {
	// A listener that accepts and closes every connection at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	// A port nothing listens on.
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l2.Addr().String()
	l2.Close()
	// A backend whose first connection breaks before it answers.
	var calls atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		var req simple.Request
		_ = json.NewDecoder(r.Body).Decode(&req)
		_ = json.NewEncoder(w).Encode(map[string]any{"task_id": req.TaskID, "status": "success", "output": "second time"})
	}))
	t.Cleanup(flaky.Close)

	s := startHTTPAgents(t, map[string]simple.Config{
		"closing": {URL: "http://" + ln.Addr().String() + "/x?secret=s3cr3t"},
		"refused": {URL: "http://" + refused + "/"},
		"flaky":   {URL: flaky.URL},
	})
	task := s.send(t, "closing", a2a.NewTextPart("hi"))
	wantFailed(t, task, "could not be reached (after 3 attempts): the connection was closed before an answer came")
	if strings.Contains(testutil.StatusText(task.Status), "s3cr3t") || strings.Contains(testutil.StatusText(task.Status), ln.Addr().String()) {
		t.Fatalf("reason %q reveals the backend's URL", testutil.StatusText(task.Status))
	}
	if n := accepted.Load(); n != 3 {
		t.Fatalf("%d connections, want 3 (1 + 2 retries)", n)
	}
	wantFailed(t, s.send(t, "refused", a2a.NewTextPart("hi")), "could not be reached (after 3 attempts): connection refused")

	task = s.send(t, "flaky", a2a.NewTextPart("hi"))
	wantState(t, task, a2a.TaskStateCompleted)
	if got := partsJSON(t, onlyArtifact(t, task).Parts); got != `[{"text":"second time"}]` {
		t.Fatalf("artifact %s", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		c    simple.Config
		want []string // substrings of the error; none: valid
	}{
		{simple.Config{URL: "http://127.0.0.1:1/x"}, nil},
		{simple.Config{URL: "https://example.com", TextField: "prompt", TimeoutMS: 5, Retries: intp(0), MaxResponse: 10,
			Credentials: simple.Credentials{BearerToken: "t", APIKey: "k", APIKeyHeader: "x-key"},
			Headers:     map[string]string{"X-Trace": "1"}}, nil},
		{simple.Config{}, []string{"url: required"}},
		{simple.Config{URL: "ftp://example.com"}, []string{`url: must be an http or https URL, not "ftp"`}},
		{simple.Config{URL: "http://"}, []string{"url: has no host"}},
		{simple.Config{URL: "http://x", TimeoutMS: -1, MaxResponse: -1, Retries: intp(-1)},
			[]string{"timeout_ms: must be > 0", "max_response: must be > 0", "retries: must be between 0 and 10"}},
		{simple.Config{URL: "http://x", TextField: "files"}, []string{`text_field: must not be "files"`}},
		{simple.Config{URL: "http://x", Credentials: simple.Credentials{BearerToken: "a\nb"}},
			[]string{"credentials.bearer_token: holds characters a header cannot carry"}},
		{simple.Config{URL: "http://x", Credentials: simple.Credentials{APIKey: "k", APIKeyHeader: "bad header"}},
			[]string{`credentials.api_key_header: "bad header" is not a header name`}},
		{simple.Config{URL: "http://x", Headers: map[string]string{"content-type": "text/plain"}},
			[]string{"headers.content-type: Content-Type is set by the agent itself"}},
		{simple.Config{URL: "http://x", Credentials: simple.Credentials{BearerToken: "t"}, Headers: map[string]string{"Authorization": "x"}},
			[]string{"headers.Authorization: conflicts with credentials.bearer_token"}},
	} {
		err := tc.c.Validate()
		_, nerr := simple.New(tc.c)
		if (err == nil) != (nerr == nil) {
			t.Fatalf("%+v: Validate %v but New %v", tc.c, err, nerr)
		}
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%+v: %v", tc.c, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v: valid, want %q", tc.c, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q does not contain %q", tc.c, err, w)
			}
		}
	}
	// Secrets never appear in errors.
	err := simple.Config{URL: "http://x", Credentials: simple.Credentials{BearerToken: "sec\nret"}}.Validate()
	if err == nil || strings.Contains(err.Error(), "sec") {
		t.Fatalf("error %v", err)
	}
}

// TestConfigYAML: the keys of an `http` agent's configuration entry
// decode (strictly) into Config.
func TestConfigYAML(t *testing.T) {
	doc := `
url: https://svc.example.com/run
text_field: prompt
timeout_ms: 5000
retries: 0
credentials:
  bearer_token: tok
  api_key: key
  api_key_header: X-Key
headers:
  X-Trace: "1"
max_response: 1024
`
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	var c simple.Config
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	want := simple.Config{URL: "https://svc.example.com/run", TextField: "prompt", TimeoutMS: 5000, Retries: intp(0),
		Credentials: simple.Credentials{BearerToken: "tok", APIKey: "key", APIKeyHeader: "X-Key"},
		Headers:     map[string]string{"X-Trace": "1"}, MaxResponse: 1024}
	if jsonOf(t, c) != jsonOf(t, want) {
		t.Fatalf("decoded %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// Unset keys are nil/zero: their defaults apply.
	var d simple.Config
	if err := yaml.Unmarshal([]byte("url: http://x\n"), &d); err != nil || d.Retries != nil || d.TimeoutMS != 0 {
		t.Fatalf("%+v %v", d, err)
	}
}
