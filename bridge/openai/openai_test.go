package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/openai"
	"github.com/a2abridge/a2abridge/bridge/openai/openaitest"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

const agentName = "llm"

type env struct {
	fake  *openaitest.Server
	agent *openai.Agent
	store store.Store
	c     *client.Client
	url   string // the a2abridge server's
}

// start serves an openai agent over the fake endpoint (cfg.BaseURL and
// cfg.Model default to the fake's and "m") on a loopback a2abridge
// server and dials it with the client SDK.
func start(t *testing.T, cfg openai.Config) *env {
	t.Helper()
	fake := openaitest.New()
	t.Cleanup(fake.Close)
	switch cfg.BaseURL {
	case "":
		cfg.BaseURL = fake.URL
	case "/": // the fake without /v1
		cfg.BaseURL = strings.TrimSuffix(fake.URL, "/v1")
	}
	if cfg.Model == "" {
		cfg.Model = "m"
	}
	e := startFuzz(t, cfg)
	e.fake = fake
	return e
}

// modelCard is the Agent Card of the model agent agentName: streaming,
// text in and out, the one skill skill.
func modelCard(skill a2a.AgentSkill) a2a.AgentCard {
	return a2a.AgentCard{Name: agentName, Description: "a model", Version: "1",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{skill}}
}

// startFuzz serves an openai agent configured by cfg.
func startFuzz(t testing.TB, cfg openai.Config) *env {
	t.Helper()
	ag, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ag.Close() })
	st := memory.New()
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	host := servertest.Host(agentName)
	host.Add(server.NewHandler(eng, agentName, ag, modelCard(ag.Skill()), server.HandlerOptions{}))
	ts := testutil.Serve(t, host, eng.Close)
	c, err := client.Dial(context.Background(), ts.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{agent: ag, store: st, c: c, url: ts.URL}
}

func userText(text string) a2a.Message { return a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(text)) }

// send sends a blocking message and returns the task.
func (e *env) send(t *testing.T, m a2a.Message) *a2a.Task {
	t.Helper()
	return testutil.SendTask(t, context.Background(), e.c, a2a.SendMessageRequest{Message: m})
}

type msg = openaitest.Message

func TestSendCompletes(t *testing.T) {
	temp, maxTok := 0.25, 64
	e := start(t, openai.Config{APIKey: "sk-secret", System: "Be brief.", Temperature: &temp, MaxTokens: &maxTok})
	e.fake.RequireKey("sk-secret")
	task := e.send(t, userText("hello there"))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s (%q), want completed", task.Status.State, testutil.StatusText(task.Status))
	}
	if len(task.Artifacts) != 1 || task.Artifacts[0].Name != openai.ArtifactName {
		t.Fatalf("artifacts %+v, want one named response", task.Artifacts)
	}
	if got := testutil.Text(task.Artifacts[0].Parts); got != "You said: hello there" {
		t.Errorf("answer %q", got)
	}
	r, _ := e.fake.LastRequest()
	want := []msg{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "hello there"}}
	if !slices.Equal(r.Messages, want) {
		t.Errorf("messages %+v, want %+v", r.Messages, want)
	}
	if r.Path != "/v1/chat/completions" || !r.Stream || !r.IncludeUsage || r.Model != "m" {
		t.Errorf("request %s stream=%v include_usage=%v model=%q", r.Path, r.Stream, r.IncludeUsage, r.Model)
	}
	if r.Temperature == nil || *r.Temperature != 0.25 || r.MaxTokens == nil || *r.MaxTokens != 64 {
		t.Errorf("temperature %v max_tokens %v", r.Temperature, r.MaxTokens)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-secret" {
		t.Errorf("Authorization %q", got)
	}
}

func TestNoKeyNoEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	e := start(t, openai.Config{})
	task := e.send(t, userText("hi"))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s (%q)", task.Status.State, testutil.StatusText(task.Status))
	}
	r, _ := e.fake.LastRequest()
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization %q sent without api_key", got)
	}
}

func TestPartsAsText(t *testing.T) {
	e := start(t, openai.Config{})
	m := a2a.NewMessage(a2a.RoleUser,
		a2a.NewTextPart("look:"),
		a2a.NewDataPart(map[string]any{"b": 1.5, "a": []any{"x"}}),
		a2a.Part{Content: a2a.Raw([]byte("12345")), MediaType: "application/pdf", Filename: "r.pdf"},
		a2a.Part{Content: a2a.URL("https://example.com/pic.png"), MediaType: "image/png", Filename: "pic.png"})
	task := e.send(t, m)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s (%q)", task.Status.State, testutil.StatusText(task.Status))
	}
	r, _ := e.fake.LastRequest()
	want := "look:\n{\"a\":[\"x\"],\"b\":1.5}\n[file r.pdf (application/pdf), 5 bytes]\n[file pic.png (image/png) at https://example.com/pic.png]"
	if got := r.Messages[len(r.Messages)-1].Content; got != want {
		t.Errorf("user content\n%q\nwant\n%q", got, want)
	}
}

// The answer streams: the first chunks reach the client while the model
// is still generating (the fake holds the rest behind a gate), in order,
// as one artifact (append after the first chunk, lastChunk on the last).
func TestStreamChunks(t *testing.T) {
	e := start(t, openai.Config{})
	gate := make(chan struct{})
	e.fake.Script("m", openaitest.Behavior{Tokens: []string{"Hel", "lo", ", ", "wor", "ld"}, Gate: gate, GateAfter: 3,
		Usage: &openaitest.Usage{PromptTokens: 7, CompletionTokens: 5, TotalTokens: 12}})
	var chunks []*a2a.TaskArtifactUpdateEvent
	var last *a2a.TaskStatusUpdateEvent
	for ev, err := range e.c.SendStreamingMessage(context.Background(), a2a.SendMessageRequest{Message: userText("hi")}) {
		if err != nil {
			t.Fatal(err)
		}
		switch x := ev.Event.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			chunks = append(chunks, x)
			if len(chunks) == 2 {
				// Two of three tokens before the gate are out (the
				// latest is held back to mark the last chunk): the
				// model has not finished.
				close(gate)
			}
		case *a2a.TaskStatusUpdateEvent:
			last = x
		}
	}
	var texts []string
	for i, c := range chunks {
		texts = append(texts, testutil.Text(c.Artifact.Parts))
		if c.Append != (i > 0) || c.LastChunk != (i == len(chunks)-1) {
			t.Errorf("chunk %d: append=%v lastChunk=%v", i, c.Append, c.LastChunk)
		}
		if c.Artifact.ArtifactID != chunks[0].Artifact.ArtifactID || (i == 0 && c.Artifact.Name != "response") {
			t.Errorf("chunk %d of artifact %q %q", i, c.Artifact.ArtifactID, c.Artifact.Name)
		}
	}
	if !slices.Equal(texts, []string{"Hel", "lo", ", ", "wor", "ld"}) {
		t.Errorf("chunks %q", texts)
	}
	if last == nil || last.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("last status %+v, want completed", last)
	}
	checkUsage(t, last.Metadata, 7, 5, 12)
	if last.Metadata[openai.MetadataModel] != "m" || last.Metadata[openai.MetadataFinishReason] != "stop" {
		t.Errorf("metadata %v", last.Metadata)
	}
	// The status update's metadata is the task's.
	task, err := e.c.GetTask(context.Background(), a2a.GetTaskRequest{ID: last.TaskID})
	if err != nil {
		t.Fatal(err)
	}
	checkUsage(t, task.Metadata, 7, 5, 12)
	if task.Metadata[openai.MetadataModel] != "m" {
		t.Errorf("task metadata %v", task.Metadata)
	}
}

func checkUsage(t *testing.T, md map[string]any, prompt, completion, total int64) {
	t.Helper()
	u, ok := md[openai.MetadataUsage].(map[string]any)
	if !ok {
		t.Fatalf("metadata %v has no %s object", md, openai.MetadataUsage)
	}
	for k, want := range map[string]int64{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total} {
		if got := num(u[k]); got != want {
			t.Errorf("usage %s = %v, want %d", k, u[k], want)
		}
	}
}

func num(v any) int64 {
	switch n := v.(type) {
	case interface{ Int64() (int64, error) }:
		i, _ := n.Int64()
		return i
	case float64:
		return int64(n)
	case int64:
		return n
	}
	return -1
}

func TestEmptyAnswer(t *testing.T) {
	e := start(t, openai.Config{})
	e.fake.Script("m", openaitest.Behavior{Tokens: []string{}})
	task := e.send(t, userText("hi"))
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || testutil.Text(task.Artifacts[0].Parts) != "" {
		t.Fatalf("task %+v", task)
	}
}

// A second task in the same contextId sends the first exchange as
// history; another context sends none.
func TestHistoryByContext(t *testing.T) {
	e := start(t, openai.Config{System: "sys"})
	first := e.send(t, userText("first"))
	m := userText("second")
	m.ContextID = first.ContextID
	second := e.send(t, m)
	if second.Status.State != a2a.TaskStateCompleted || second.ContextID != first.ContextID {
		t.Fatalf("second task %s in %s", second.Status.State, second.ContextID)
	}
	r, _ := e.fake.LastRequest()
	want := []msg{{Role: "system", Content: "sys"}, {Role: "user", Content: "first"}, {Role: "assistant", Content: "You said: first"}, {Role: "user", Content: "second"}}
	if !slices.Equal(r.Messages, want) {
		t.Errorf("messages %+v\nwant %+v", r.Messages, want)
	}
	e.send(t, userText("elsewhere"))
	r, _ = e.fake.LastRequest()
	if want := []msg{{Role: "system", Content: "sys"}, {Role: "user", Content: "elsewhere"}}; !slices.Equal(r.Messages, want) {
		t.Errorf("other context sent %+v", r.Messages)
	}
}

// history bounds the earlier messages sent (the most recent, starting
// with a user message); 0 sends none; failed tasks without an answer are
// left out.
func TestHistoryBounded(t *testing.T) {
	for _, tc := range []struct {
		history int
		want    []msg
	}{
		{3, []msg{{Role: "user", Content: "three"}, {Role: "assistant", Content: "You said: three"}, {Role: "user", Content: "four"}}},
		{4, []msg{{Role: "user", Content: "two"}, {Role: "assistant", Content: "You said: two"}, {Role: "user", Content: "three"}, {Role: "assistant", Content: "You said: three"}, {Role: "user", Content: "four"}}},
		{0, []msg{{Role: "user", Content: "four"}}},
	} {
		e := start(t, openai.Config{History: &tc.history})
		e.fake.Script("fail", openaitest.Behavior{Status: 500})
		ctxID := a2a.NewID()
		for _, text := range []string{"one", "two", "three", "four"} {
			m := userText(text)
			m.ContextID = ctxID
			e.send(t, m)
		}
		r, _ := e.fake.LastRequest()
		if !slices.Equal(r.Messages, tc.want) {
			t.Errorf("history %d: messages %+v\nwant %+v", tc.history, r.Messages, tc.want)
		}
	}
}

// max_history_bytes bounds the history's text: the newest turns are
// kept whole, the answer that crosses the bound gets half of what is
// left and its question the rest, each cut and marked " […]"; older
// turns are left out.
func TestHistoryBytesBounded(t *testing.T) {
	limit := 40
	e := start(t, openai.Config{MaxHistoryBytes: &limit})
	ctxID := a2a.NewID()
	for _, text := range []string{"zero", strings.Repeat("a", 20), "two", "three"} {
		m := userText(text)
		m.ContextID = ctxID
		e.send(t, m)
	}
	r, _ := e.fake.LastRequest()
	// "You said: two" and "two" take 16 bytes; 24 are left: 12 for the
	// answer "You said: aaa…" and 12 for its question.
	want := []msg{{Role: "user", Content: "aaaaaa […]"}, {Role: "assistant", Content: "You sa […]"},
		{Role: "user", Content: "two"}, {Role: "assistant", Content: "You said: two"}, {Role: "user", Content: "three"}}
	if !slices.Equal(r.Messages, want) {
		t.Errorf("messages %+v\nwant %+v", r.Messages, want)
	}
	// The new message itself is not bounded.
	m := userText(strings.Repeat("b", 100))
	m.ContextID = ctxID
	e.send(t, m)
	r, _ = e.fake.LastRequest()
	if last := r.Messages[len(r.Messages)-1]; last.Content != strings.Repeat("b", 100) {
		t.Errorf("new message %q", last.Content)
	}
}

func TestHistorySkipsUnanswered(t *testing.T) {
	e := start(t, openai.Config{})
	ctxID := a2a.NewID()
	e.fake.Hook(func(r *openaitest.Request) *openaitest.Behavior {
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "broken") {
			return &openaitest.Behavior{Status: 400}
		}
		return nil
	})
	for _, text := range []string{"one", "broken", "three"} {
		m := userText(text)
		m.ContextID = ctxID
		e.send(t, m)
	}
	r, _ := e.fake.LastRequest()
	want := []msg{{Role: "user", Content: "one"}, {Role: "assistant", Content: "You said: one"}, {Role: "user", Content: "three"}}
	if !slices.Equal(r.Messages, want) {
		t.Errorf("messages %+v\nwant %+v", r.Messages, want)
	}
}

// multi_turn keeps one task in input-required with the answer as its
// status message; the next message on the task continues the
// conversation, whose history is the task's own.
func TestMultiTurn(t *testing.T) {
	e := start(t, openai.Config{MultiTurn: true, System: "sys"})
	e.fake.Script("m", openaitest.Behavior{Usage: &openaitest.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}})
	task := e.send(t, userText("one"))
	checkUsage(t, task.Metadata, 1, 2, 3)
	if task.Status.State != a2a.TaskStateInputRequired || testutil.StatusText(task.Status) != "You said: one" {
		t.Fatalf("first turn: %s %q", task.Status.State, testutil.StatusText(task.Status))
	}
	m := userText("two")
	m.TaskID, m.ContextID = task.ID, task.ContextID
	task = e.send(t, m)
	if task.Status.State != a2a.TaskStateInputRequired || testutil.StatusText(task.Status) != "You said: two" {
		t.Fatalf("second turn: %s %q", task.Status.State, testutil.StatusText(task.Status))
	}
	r, _ := e.fake.LastRequest()
	want := []msg{{Role: "system", Content: "sys"}, {Role: "user", Content: "one"}, {Role: "assistant", Content: "You said: one"}, {Role: "user", Content: "two"}}
	if !slices.Equal(r.Messages, want) {
		t.Errorf("messages %+v\nwant %+v", r.Messages, want)
	}
	if len(task.Artifacts) != 2 || testutil.Text(task.Artifacts[1].Parts) != "You said: two" || task.Artifacts[1].Name != "response" {
		t.Errorf("artifacts %+v", task.Artifacts)
	}
	checkUsage(t, task.Metadata, 2, 4, 6) // summed over the turns
	// A new task in the same context does not see this one's turns as
	// its own; the conversation is the task's.
	m = userText("fresh")
	m.ContextID = task.ContextID
	fresh := e.send(t, m)
	r, _ = e.fake.LastRequest()
	if want := []msg{{Role: "system", Content: "sys"}, {Role: "user", Content: "fresh"}}; !slices.Equal(r.Messages, want) {
		t.Errorf("new task sent %+v", r.Messages)
	}
	if fresh.ID == task.ID {
		t.Fatal("same task")
	}
	got, err := e.c.CancelTask(context.Background(), a2a.CancelTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %v %+v", err, got)
	}
}

func TestMultiTurnHistoryBounded(t *testing.T) {
	two := 2
	e := start(t, openai.Config{MultiTurn: true, History: &two})
	task := e.send(t, userText("one"))
	for _, text := range []string{"two", "three"} {
		m := userText(text)
		m.TaskID, m.ContextID = task.ID, task.ContextID
		task = e.send(t, m)
	}
	r, _ := e.fake.LastRequest()
	want := []msg{{Role: "user", Content: "two"}, {Role: "assistant", Content: "You said: two"}, {Role: "user", Content: "three"}}
	if !slices.Equal(r.Messages, want) {
		t.Errorf("messages %+v\nwant %+v", r.Messages, want)
	}
}

// failed sends one message and returns the failed task's status text.
func failed(t *testing.T, e *env) string {
	t.Helper()
	task := e.send(t, userText("hi"))
	if task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("state %s (%q), want failed", task.Status.State, testutil.StatusText(task.Status))
	}
	return testutil.StatusText(task.Status)
}

func wantIn(t *testing.T, got string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(got, p) {
			t.Errorf("reason %q does not contain %q", got, p)
		}
	}
}

func TestUnauthorized(t *testing.T) {
	e := start(t, openai.Config{APIKey: "sk-wrong-key"})
	e.fake.RequireKey("sk-right")
	reason := failed(t, e)
	wantIn(t, reason, "rejected the API key", "401")
	if strings.Contains(reason, "sk-wrong-key") {
		t.Errorf("reason %q leaks the key", reason)
	}
	if n := len(e.fake.Requests()); n != 1 {
		t.Errorf("%d requests; a 401 is not retried", n)
	}

	e = start(t, openai.Config{})
	e.fake.RequireKey("sk-right")
	wantIn(t, failed(t, e), "requires an API key", "api_key")
}

func TestModelNotFound(t *testing.T) {
	e := start(t, openai.Config{Model: "missing"})
	e.fake.Script("missing", openaitest.Behavior{Status: 404})
	wantIn(t, failed(t, e), `model "missing" not found at http://127.0.0.1:`, "404", "does not exist")

	// A base_url without /v1 gets a 404 that is not about the model.
	e = start(t, openai.Config{BaseURL: "/"})
	wantIn(t, failed(t, e), "chat/completions not found (HTTP 404); check base_url")
}

// A 429 is retried after the time Retry-After asks for; then the answer
// comes.
func TestRateLimitRetryAfter(t *testing.T) {
	e := start(t, openai.Config{})
	e.fake.Script("m", openaitest.Behavior{Status: 429, RetryAfter: "1", Times: 1})
	task := e.send(t, userText("hi"))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s (%q)", task.Status.State, testutil.StatusText(task.Status))
	}
	rs := e.fake.Requests()
	if len(rs) != 2 {
		t.Fatalf("%d requests, want 2", len(rs))
	}
	if rs[1].Header.Get("X-Stainless-Retry-Count") != "1" {
		t.Errorf("second request is not a retry: %v", rs[1].Header)
	}
	if gap := rs[1].Time.Sub(rs[0].Time); gap < time.Second {
		t.Errorf("retried after %s; Retry-After asked for 1 s", gap)
	}
}

func TestRateLimited(t *testing.T) {
	one := 1
	e := start(t, openai.Config{MaxRetries: &one})
	e.fake.Script("m", openaitest.Behavior{Status: 429, RetryAfter: "0"})
	wantIn(t, failed(t, e), "rate limited", "429", "after 2 attempts", "Rate limit reached")
	if n := len(e.fake.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (max_retries 1)", n)
	}
}

func TestServerError(t *testing.T) {
	zero := 0
	e := start(t, openai.Config{MaxRetries: &zero})
	e.fake.Script("m", openaitest.Behavior{Status: 503, ErrorMessage: "overloaded"})
	wantIn(t, failed(t, e), "the endpoint failed (HTTP 503 Service Unavailable): overloaded")
}

func TestBadRequest(t *testing.T) {
	e := start(t, openai.Config{})
	e.fake.Script("m", openaitest.Behavior{Status: 400, ErrorMessage: "This model's maximum context length is 8 tokens."})
	wantIn(t, failed(t, e), "rejected the request (HTTP 400 Bad Request): This model's maximum context length")
}

func TestTimeout(t *testing.T) {
	e := start(t, openai.Config{Timeout: 200 * time.Millisecond})
	e.fake.Script("m", openaitest.Behavior{Stall: true})
	wantIn(t, failed(t, e), "within 200ms (timeout)")
	awaitAborted(t, e.fake)
}

func TestTimeoutDuringStream(t *testing.T) {
	e := start(t, openai.Config{Timeout: 300 * time.Millisecond})
	gate := make(chan struct{}) // never opened
	e.fake.Script("m", openaitest.Behavior{Tokens: []string{"a", "b", "c"}, Gate: gate, GateAfter: 2})
	task := e.send(t, userText("hi"))
	if task.Status.State != a2a.TaskStateFailed || !strings.Contains(testutil.StatusText(task.Status), "timeout") {
		t.Fatalf("%s %q", task.Status.State, testutil.StatusText(task.Status))
	}
	// What was generated stays visible (an unfinished artifact).
	if len(task.Artifacts) != 1 || testutil.Text(task.Artifacts[0].Parts) != "ab" {
		t.Errorf("artifacts %+v", task.Artifacts)
	}
	awaitAborted(t, e.fake)
}

func awaitAborted(t *testing.T, fake *openaitest.Server) *openaitest.Request {
	t.Helper()
	select {
	case r := <-fake.Aborted():
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the fake endpoint never saw its request end")
		return nil
	}
}

func TestRefusal(t *testing.T) {
	e := start(t, openai.Config{})
	e.fake.Script("m", openaitest.Behavior{Refusal: "I can't help with that."})
	task := e.send(t, userText("hi"))
	if task.Status.State != a2a.TaskStateFailed || testutil.StatusText(task.Status) != "the model refused: I can't help with that." {
		t.Fatalf("%s %q", task.Status.State, testutil.StatusText(task.Status))
	}
	if len(task.Artifacts) != 0 {
		t.Errorf("a refusal left artifacts %+v", task.Artifacts)
	}
}

func TestContentFilter(t *testing.T) {
	e := start(t, openai.Config{})
	e.fake.Script("m", openaitest.Behavior{Reply: "partial answer", FinishReason: "content_filter"})
	wantIn(t, failed(t, e), "content filter")
}

func TestLengthCompletes(t *testing.T) {
	e := start(t, openai.Config{})
	e.fake.Script("m", openaitest.Behavior{Reply: "cut", FinishReason: "length"})
	var last *a2a.TaskStatusUpdateEvent
	for ev, err := range e.c.SendStreamingMessage(context.Background(), a2a.SendMessageRequest{Message: userText("hi")}) {
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := ev.Event.(*a2a.TaskStatusUpdateEvent); ok {
			last = s
		}
	}
	if last.Status.State != a2a.TaskStateCompleted || last.Metadata[openai.MetadataFinishReason] != "length" {
		t.Fatalf("%s %v", last.Status.State, last.Metadata)
	}
}

func TestTruncatedStream(t *testing.T) {
	e := start(t, openai.Config{})
	e.fake.Script("m", openaitest.Behavior{Reply: "half of it", Truncate: true})
	wantIn(t, failed(t, e), "stream ended before the answer was finished")
}

func TestStreamError(t *testing.T) {
	e := start(t, openai.Config{})
	e.fake.Script("m", openaitest.Behavior{Reply: "half", StreamError: "the model crashed"})
	wantIn(t, failed(t, e), "reported an error during the answer: the model crashed")
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	zero := 0
	e := start(t, openai.Config{BaseURL: "http://" + addr + "/v1", MaxRetries: &zero})
	wantIn(t, failed(t, e), "cannot connect to http://"+addr+"/v1 (connection refused)")
}

// Canceling the task aborts the upstream request.
func TestCancelAbortsUpstream(t *testing.T) {
	e := start(t, openai.Config{})
	gate := make(chan struct{}) // never opened
	e.fake.Script("m", openaitest.Behavior{Tokens: []string{"a", "b", "c"}, Gate: gate, GateAfter: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var taskID string
	for ev, err := range e.c.SendStreamingMessage(ctx, a2a.SendMessageRequest{Message: userText("hi")}) {
		if err != nil {
			t.Fatal(err)
		}
		switch x := ev.Event.(type) {
		case *a2a.Task:
			taskID = x.ID
		case *a2a.TaskArtifactUpdateEvent:
			got, err := e.c.CancelTask(context.Background(), a2a.CancelTaskRequest{ID: taskID})
			if err != nil || got.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("cancel: %v %+v", err, got)
			}
		}
	}
	r := awaitAborted(t, e.fake)
	if r.Model != "m" {
		t.Errorf("aborted request %+v", r)
	}
	task, err := e.c.GetTask(context.Background(), a2a.GetTaskRequest{ID: taskID})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("%v %+v", err, task)
	}
}

func TestConfigValidate(t *testing.T) {
	neg, big, zeroTok := -1, 11, 0
	hot := 2.5
	for _, tc := range []struct {
		cfg  openai.Config
		want []string
	}{
		{openai.Config{}, []string{"base_url: required", "model: required"}},
		{openai.Config{BaseURL: "ftp://x/v1", Model: "m"}, []string{"base_url: must be an http or https URL"}},
		{openai.Config{BaseURL: "http://", Model: "m"}, []string{"base_url: has no host"}},
		{openai.Config{BaseURL: "http://h/v1?x=1", Model: "m"}, []string{"base_url: must not have a query"}},
		{openai.Config{BaseURL: "http://h/v1", Model: "m", Temperature: &hot}, []string{"temperature: must be between 0 and 2"}},
		{openai.Config{BaseURL: "http://h/v1", Model: "m", MaxTokens: &zeroTok}, []string{"max_tokens: must be > 0"}},
		{openai.Config{BaseURL: "http://h/v1", Model: "m", History: &neg}, []string{"history: must be >= 0"}},
		{openai.Config{BaseURL: "http://h/v1", Model: "m", MaxHistoryBytes: &zeroTok}, []string{"max_history_bytes: must be > 0"}},
		{openai.Config{BaseURL: "http://h/v1", Model: "m", Timeout: -time.Second}, []string{"timeout: must be > 0"}},
		{openai.Config{BaseURL: "http://h/v1", Model: "m", MaxRetries: &big}, []string{"max_retries: must be between 0 and 10"}},
		{openai.Config{BaseURL: "http://h/v1", Model: "m", APIKey: "a\nb"}, []string{"api_key: contains a line break"}},
	} {
		err := tc.cfg.Validate()
		if err == nil {
			t.Errorf("%+v: valid", tc.cfg)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %q does not contain %q", tc.cfg, err, w)
			}
		}
		if _, err := openai.New(tc.cfg); err == nil {
			t.Errorf("New accepted %+v", tc.cfg)
		}
	}
	if err := (openai.Config{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini"}).Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
	err := (openai.Config{BaseURL: "ftp://user:pw@x/v1", Model: "m"}).Validate()
	if err == nil || strings.Contains(err.Error(), "pw") {
		t.Errorf("error %v shows the password", err)
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(openai.Config{}.Validate(), &joined) || len(joined.Unwrap()) != 2 {
		t.Error("Validate does not join its errors")
	}
}

func TestSkill(t *testing.T) {
	ag, err := openai.New(openai.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "llama3"})
	if err != nil {
		t.Fatal(err)
	}
	s := ag.Skill()
	if s.ID == "" || !strings.Contains(s.Name, "llama3") || s.Description == "" {
		t.Errorf("skill %+v", s)
	}
	if err := ag.Close(); err != nil {
		t.Error(err)
	}
}

// The configuration file's keys decode into Config (yaml.v3, as the CLI
// does).
func TestConfigYAML(t *testing.T) {
	var c openai.Config
	doc := `
base_url: http://127.0.0.1:11434/v1
model: llama3.2
api_key: sk-x
system: be brief
temperature: 0.2
max_tokens: 256
history: 0
max_history_bytes: 1024
multi_turn: true
timeout: 30s
max_retries: 0
`
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "http://127.0.0.1:11434/v1" || c.Model != "llama3.2" || c.APIKey != "sk-x" || c.System != "be brief" ||
		*c.Temperature != 0.2 || *c.MaxTokens != 256 || *c.History != 0 || *c.MaxHistoryBytes != 1024 || !c.MultiTurn || c.Timeout != 30*time.Second || *c.MaxRetries != 0 {
		t.Errorf("decoded %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}

// Concurrent conversations do not mix (and pass the race detector).
func TestConcurrent(t *testing.T) {
	e := start(t, openai.Config{})
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctxID := a2a.NewID()
			for j := range 3 {
				text := fmt.Sprintf("c%d-%d", i, j)
				m := userText(text)
				m.ContextID = ctxID
				ev, err := e.c.SendMessage(context.Background(), a2a.SendMessageRequest{Message: m})
				if err != nil {
					errs <- err.Error()
					return
				}
				task := ev.(*a2a.Task)
				if task.Status.State != a2a.TaskStateCompleted || testutil.Text(task.Artifacts[0].Parts) != "You said: "+text {
					errs <- fmt.Sprintf("%s: %s %+v", text, task.Status.State, task.Artifacts)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, r := range e.fake.Requests() {
		last := r.Messages[len(r.Messages)-1].Content
		prefix := last[:strings.Index(last, "-")+1]
		for _, m := range r.Messages {
			if !strings.Contains(m.Content, prefix) {
				t.Errorf("request for %q carries %q", last, m.Content)
			}
		}
	}
}

// A 429 whose Retry-After lies beyond the timeout says so.
func TestRateLimitBeyondTimeout(t *testing.T) {
	e := start(t, openai.Config{Timeout: 300 * time.Millisecond})
	e.fake.Script("m", openaitest.Behavior{Status: 429, RetryAfter: "60"})
	wantIn(t, failed(t, e), "rate limited by the endpoint (HTTP 429): it asked to retry after 60, beyond the timeout of 300ms")
}

// Canceling a task whose blocking message/send is waiting for the model
// aborts the upstream request and answers the send with the canceled
// task.
func TestCancelBlockingSend(t *testing.T) {
	e := start(t, openai.Config{})
	gate := make(chan struct{}) // never opened
	started := make(chan *openaitest.Request, 1)
	e.fake.Hook(func(r *openaitest.Request) *openaitest.Behavior {
		started <- r
		return &openaitest.Behavior{Gate: gate}
	})
	m := userText("hi")
	done := make(chan *a2a.Task, 1)
	go func() {
		ev, err := e.c.SendMessage(context.Background(), a2a.SendMessageRequest{Message: m})
		if err != nil {
			t.Error(err)
			done <- nil
			return
		}
		done <- ev.(*a2a.Task)
	}()
	<-started
	list, err := e.store.ListTasks(context.Background(), store.TaskQuery{Agent: agentName})
	if err != nil || len(list.Tasks) != 1 {
		t.Fatalf("%v %+v", err, list)
	}
	if _, err := e.c.CancelTask(context.Background(), a2a.CancelTaskRequest{ID: list.Tasks[0].Task.ID}); err != nil {
		t.Fatal(err)
	}
	awaitAborted(t, e.fake)
	if task := <-done; task == nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("send answered %+v", task)
	}
}

// An answer that finished (finish_reason) completes the task even when
// the stream then ends without [DONE].
func TestFinishedWithoutDone(t *testing.T) {
	e := start(t, openai.Config{})
	e.fake.Script("m", openaitest.Behavior{Reply: "all here", NoDone: true})
	task := e.send(t, userText("hi"))
	if task.Status.State != a2a.TaskStateCompleted || testutil.Text(task.Artifacts[0].Parts) != "all here" {
		t.Fatalf("%s %q %+v", task.Status.State, testutil.StatusText(task.Status), task.Artifacts)
	}
}

// TestAnswerJoined: the answer streams token by token, and the task a
// blocking SendMessage returns holds it as one text part, over every
// interface.
func TestAnswerJoined(t *testing.T) {
	e := start(t, openai.Config{})
	tokens := []string{"Hel", "lo", ", ", "wor", "ld"}
	e.fake.Script("m", openaitest.Behavior{Tokens: tokens})
	for _, in := range testutil.Interfaces {
		o := client.Options{Protocol: in.Protocol, Binding: in.Binding}
		t.Run(o.Protocol+"/"+o.Binding, func(t *testing.T) {
			c, err := client.Dial(context.Background(), e.url, o)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := c.SendMessage(context.Background(), a2a.SendMessageRequest{Message: userText("hi")})
			if err != nil {
				t.Fatal(err)
			}
			task, ok := ev.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
				t.Fatalf("answer %T %+v", ev, ev)
			}
			want := []a2a.Part{a2a.NewTextPart("Hello, world")}
			if got := task.Artifacts[0].Parts; !reflect.DeepEqual(got, want) {
				t.Errorf("parts %#v, want %#v", got, want)
			}
			// A stream delivers the tokens as they came.
			var chunks []string
			for sev, err := range c.SendStreamingMessage(context.Background(), a2a.SendMessageRequest{Message: userText("hi")}) {
				if err != nil {
					t.Fatal(err)
				}
				if a, ok := sev.Event.(*a2a.TaskArtifactUpdateEvent); ok {
					chunks = append(chunks, testutil.Text(a.Artifact.Parts))
				}
			}
			if got := strings.Join(chunks, "|"); !strings.HasPrefix(got, "Hel|lo|, |wor|ld") {
				t.Errorf("streamed chunks %q", got)
			}
		})
	}
}
