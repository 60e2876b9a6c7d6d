package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/openai"
	"github.com/a2abridge/a2abridge/bridge/openai/openaitest"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// aiEnv serves an openai agent with its ai/* methods on a loopback
// a2abridge server, over the fake endpoint.
type aiEnv struct {
	fake  *openaitest.Server
	agent *openai.Agent
	url   string // the agent's JSON-RPC endpoint
	base  string // the server's root
}

// serveMethods serves an agent whose methods are methods (nil: none) and
// whose card declares ext, and returns the server's root URL.
func serveMethods(t testing.TB, ag server.Agent, methods map[string]server.Method, ext *a2a.AgentExtension) string {
	t.Helper()
	eng := servertest.Engine(t, server.EngineOptions{})
	host := servertest.Host(agentName)
	card := modelCard(a2a.AgentSkill{ID: "chat", Name: "chat", Description: "chat", Tags: []string{"chat"}})
	if ext != nil {
		card.Capabilities.Extensions = []a2a.AgentExtension{*ext}
	}
	host.Add(server.NewHandler(eng, agentName, ag, card, server.HandlerOptions{Methods: methods}))
	ts := testutil.Serve(t, host, eng.Close)
	return ts.URL
}

func startAI(t *testing.T, cfg openai.Config) *aiEnv {
	t.Helper()
	fake := openaitest.New()
	t.Cleanup(fake.Close)
	if cfg.BaseURL == "" {
		cfg.BaseURL = fake.URL
	}
	if cfg.Model == "" {
		cfg.Model = "m"
	}
	if cfg.MaxRetries == nil {
		zero := 0
		cfg.MaxRetries = &zero
	}
	ag, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ag.Close() })
	ext := ag.CardExtension()
	base := serveMethods(t, ag, ag.Methods(), &ext)
	return &aiEnv{fake: fake, agent: ag, url: base + "/a2a/" + agentName, base: base}
}

// rpcResponse is a JSON-RPC response with its result kept raw.
type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

// postRPC posts body to url and returns the response.
func postRPC(t testing.TB, url, body string, hdr ...string) *http.Response {
	t.Helper()
	req := testutil.NewRequest(t, context.Background(), http.MethodPost, url, body)
	req.Header.Set("Content-Type", "application/json")
	testutil.SetHeaders(req.Header, hdr...)
	return testutil.Open(t, req)
}

// call makes one non-streaming call and returns its response (and the
// raw body).
func (e *aiEnv) call(t *testing.T, method, params string) (rpcResponse, string) {
	t.Helper()
	return callURL(t, e.url, method, params)
}

func callURL(t *testing.T, url, method, params string) (rpcResponse, string) {
	t.Helper()
	resp := postRPC(t, url, testutil.RPCBody(method, params))
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/json" {
		t.Fatalf("%s: HTTP %d %s: %s", method, resp.StatusCode, ct, b)
	}
	var r rpcResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v: %s", method, err, b)
	}
	return r, string(b)
}

// events reads an SSE response's events (their data), as they come.
func events(t testing.TB, resp *http.Response) iter.Seq[rpcResponse] {
	return func(yield func(rpcResponse) bool) {
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("content type %q: %s", ct, b)
			return
		}
		rd := sse.NewReader(resp.Body)
		for {
			ev, err := rd.Next()
			if err != nil {
				return
			}
			var r rpcResponse
			if err := json.Unmarshal(ev.Data, &r); err != nil {
				t.Errorf("event %q: %v", ev.Data, err)
				return
			}
			if !yield(r) {
				return
			}
		}
	}
}

// wantError checks that r is the error code (and, when data is not nil,
// that its data holds data's members).
func wantError(t *testing.T, what string, r rpcResponse, raw string, code int, data map[string]any) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code {
		t.Fatalf("%s: %s, want error %d", what, raw, code)
	}
	for k, v := range data {
		if fmt.Sprint(r.Error.Data[k]) != fmt.Sprint(v) {
			t.Errorf("%s: data %v, want %s=%v", what, r.Error.Data, k, v)
		}
	}
}

func TestAIChat(t *testing.T) {
	temp, maxTok := 0.5, 99
	e := startAI(t, openai.Config{APIKey: "sk-secret", System: "not for ai/chat", Temperature: &temp, MaxTokens: &maxTok,
		Models: []string{"other", "careful"}})
	e.fake.RequireKey("sk-secret")
	r, raw := e.call(t, "ai/chat", `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hello there"}]}`)
	var res struct {
		Model   string `json:"model"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		Usage        struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
			TotalTokens      int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || r.Error != nil {
		t.Fatalf("ai/chat: %v: %s", err, raw)
	}
	if res.Model != "m" || res.Message.Role != "assistant" || res.Message.Content != "You said: hello there" || res.FinishReason != "stop" ||
		res.Usage.TotalTokens == 0 || res.Usage.TotalTokens != res.Usage.PromptTokens+res.Usage.CompletionTokens {
		t.Fatalf("ai/chat result %s", r.Result)
	}
	req, _ := e.fake.LastRequest()
	want := []msg{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "hello there"}}
	if req.Path != "/v1/chat/completions" || req.Stream || req.Model != "m" || !slices.Equal(req.Messages, want) ||
		req.Temperature == nil || *req.Temperature != 0.5 || req.MaxTokens == nil || *req.MaxTokens != 99 {
		t.Fatalf("upstream request %s %s", req.Path, req.Body)
	}
	// The call's own (allowed) model, temperature and max_tokens below the
	// cap win over the configuration's.
	r, raw = e.call(t, "ai/chat", `{"model":"other","temperature":0,"max_tokens":5,"messages":[{"role":"developer","content":"d"},{"role":"user","content":"u"},{"role":"assistant","content":"a"},{"role":"user","content":"again"}]}`)
	if r.Error != nil || !strings.Contains(string(r.Result), `"model":"other"`) {
		t.Fatalf("ai/chat with a model: %s", raw)
	}
	req, _ = e.fake.LastRequest()
	if req.Model != "other" || *req.Temperature != 0 || *req.MaxTokens != 5 || len(req.Messages) != 4 || req.Messages[0].Role != "developer" {
		t.Fatalf("upstream request %s", req.Body)
	}
	// max_tokens above the configured one (the cap) is lowered to it,
	// streaming or not.
	r, raw = e.call(t, "ai/chat", `{"max_tokens":2147483647,"messages":[{"role":"user","content":"x"}]}`)
	if req, _ = e.fake.LastRequest(); r.Error != nil || req.MaxTokens == nil || *req.MaxTokens != 99 {
		t.Fatalf("max_tokens above the cap: %s; upstream %s", raw, req.Body)
	}
	for range events(t, postRPC(t, e.url, `{"jsonrpc":"2.0","id":1,"method":"ai/chat","params":{"stream":true,"max_tokens":100,"messages":[{"role":"user","content":"x"}]}}`)) {
	}
	if req, _ = e.fake.LastRequest(); !req.Stream || req.MaxTokens == nil || *req.MaxTokens != 99 {
		t.Fatalf("streaming max_tokens above the cap: upstream %s", req.Body)
	}
	// A refusal.
	e.fake.Script("careful", openaitest.Behavior{Refusal: "I cannot help with that."})
	r, raw = e.call(t, "ai/chat", `{"model":"careful","messages":[{"role":"user","content":"x"}]}`)
	if r.Error != nil || !strings.Contains(string(r.Result), `"refusal":"I cannot help with that."`) {
		t.Fatalf("refusal: %s", raw)
	}
}

func TestAIChatStream(t *testing.T) {
	e := startAI(t, openai.Config{})
	gate := make(chan struct{})
	e.fake.Script("m", openaitest.Behavior{Reply: "one two three four", Gate: gate, GateAfter: 1})
	resp := postRPC(t, e.url, `{"jsonrpc":"2.0","id":"s","method":"ai/chat","params":{"stream":true,"messages":[{"role":"user","content":"count"}]}}`)
	var text strings.Builder
	var last map[string]any
	n := 0
	for r := range events(t, resp) {
		n++
		if string(r.ID) != `"s"` || r.Error != nil {
			t.Fatalf("event %d: id %s, error %+v", n, r.ID, r.Error)
		}
		var ev map[string]any
		if err := json.Unmarshal(r.Result, &ev); err != nil {
			t.Fatal(err)
		}
		d, ok := ev["delta"].(string)
		if !ok {
			t.Fatalf("event %d without delta: %s", n, r.Result)
		}
		text.WriteString(d)
		if n == 1 {
			// The first token arrived while the upstream holds the rest:
			// tokens are passed on as they come.
			if d != "one" {
				t.Fatalf("first event %s", r.Result)
			}
			close(gate)
		}
		last = ev
	}
	if text.String() != "one two three four" || n != 5 {
		t.Fatalf("%d events, text %q", n, text.String())
	}
	usage, _ := last["usage"].(map[string]any)
	if last["finish_reason"] != "stop" || last["model"] != "m" || last["delta"] != "" || usage["total_tokens"] == nil {
		t.Fatalf("last event %v", last)
	}
	if req, _ := e.fake.LastRequest(); !req.Stream || !req.IncludeUsage {
		t.Fatalf("upstream request %s", req.Body)
	}

	// Failures midway end the stream with an error event.
	for _, c := range []struct {
		b    openaitest.Behavior
		code int
		msg  string
	}{
		{openaitest.Behavior{Reply: "a b", StreamError: "the GPU caught fire"}, openai.CodeUpstream, "the GPU caught fire"},
		{openaitest.Behavior{Reply: "a b", Truncate: true}, openai.CodeUpstream, "ended before"},
		{openaitest.Behavior{Status: 404}, openai.CodeModelNotFound, "not found"},
		{openaitest.Behavior{Status: 429, RetryAfter: "3"}, openai.CodeRateLimited, "HTTP 429"},
	} {
		e.fake.Script("m", c.b)
		var got []rpcResponse
		for r := range events(t, postRPC(t, e.url, `{"jsonrpc":"2.0","id":2,"method":"ai/chat","params":{"stream":true,"messages":[{"role":"user","content":"x"}]}}`)) {
			got = append(got, r)
		}
		if len(got) == 0 || got[len(got)-1].Error == nil || got[len(got)-1].Error.Code != c.code || !strings.Contains(got[len(got)-1].Error.Message, c.msg) {
			t.Errorf("%+v: events %+v", c.b, got)
			continue
		}
		for _, r := range got[:len(got)-1] {
			if r.Error != nil || string(r.ID) != "2" {
				t.Errorf("%+v: an event before the error: %+v", c.b, r)
			}
		}
	}
	// An answer that got its finish reason completes even if the stream
	// then breaks before [DONE].
	e.fake.Script("m", openaitest.Behavior{Reply: "done", NoDone: true})
	var got []rpcResponse
	for r := range events(t, postRPC(t, e.url, `{"jsonrpc":"2.0","id":3,"method":"ai/chat","params":{"stream":true,"messages":[{"role":"user","content":"x"}]}}`)) {
		got = append(got, r)
	}
	if len(got) != 2 || got[1].Error != nil || !strings.Contains(string(got[1].Result), `"finish_reason":"stop"`) {
		t.Fatalf("NoDone: %+v", got)
	}
}

// A client that goes away mid-stream aborts the upstream request.
func TestAIChatStreamClientGone(t *testing.T) {
	e := startAI(t, openai.Config{})
	gate := make(chan struct{})
	defer close(gate)
	e.fake.Script("m", openaitest.Behavior{Reply: "one two", Gate: gate, GateAfter: 1})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ai/chat","params":{"stream":true,"messages":[{"role":"user","content":"x"}]}}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	for range events(t, resp) {
		break // the first token
	}
	cancel()
	if r := <-e.fake.Aborted(); r.Path != "/v1/chat/completions" {
		t.Fatalf("aborted %s", r.Path)
	}
}

func TestAIEmbeddings(t *testing.T) {
	e := startAI(t, openai.Config{EmbeddingsModel: "embed", Models: []string{"other"}})
	type result struct {
		Model string `json:"model"`
		Data  []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Usage map[string]int64 `json:"usage"`
	}
	for _, c := range []struct {
		params string
		inputs []string
		model  string
		dims   int
	}{
		{`{"input":"hello world"}`, []string{"hello world"}, "embed", 8},
		{`{"input":["a b","c","d e f"],"model":"other","dimensions":3}`, []string{"a b", "c", "d e f"}, "other", 3},
	} {
		r, raw := e.call(t, "ai/embeddings", c.params)
		var res result
		if err := json.Unmarshal(r.Result, &res); err != nil || r.Error != nil {
			t.Fatalf("%s: %v: %s", c.params, err, raw)
		}
		if res.Model != c.model || len(res.Data) != len(c.inputs) || res.Usage["prompt_tokens"] == 0 || res.Usage["total_tokens"] == 0 {
			t.Fatalf("%s: %s", c.params, raw)
		}
		for i, d := range res.Data {
			if d.Index != i || !slices.Equal(d.Embedding, openaitest.Embed(c.inputs[i], c.dims)) {
				t.Errorf("%s: data[%d] = %d %v", c.params, i, d.Index, d.Embedding)
			}
		}
		req, _ := e.fake.LastRequest()
		if req.Path != "/v1/embeddings" || req.Model != c.model || !slices.Equal(req.Input, c.inputs) || !strings.Contains(string(req.Body), `"encoding_format":"float"`) {
			t.Errorf("upstream request %s %s", req.Path, req.Body)
		}
	}
}

func TestAIRerank(t *testing.T) {
	e := startAI(t, openai.Config{RerankModel: "rr"})
	docs := []string{"the cat sat", "dogs bark", "a cat and a dog", "nothing here"}
	r, raw := e.call(t, "ai/rerank", `{"query":"cat dog","documents":["the cat sat","dogs bark","a cat and a dog","nothing here"],"top_n":3,"return_documents":true}`)
	var res struct {
		Model   string `json:"model"`
		Results []struct {
			Index          int     `json:"index"`
			RelevanceScore float64 `json:"relevance_score"`
			Document       string  `json:"document"`
		} `json:"results"`
		Usage map[string]int64 `json:"usage"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || r.Error != nil {
		t.Fatalf("ai/rerank: %v: %s", err, raw)
	}
	if res.Model != "rr" || len(res.Results) != 3 || res.Usage["total_tokens"] == 0 {
		t.Fatalf("ai/rerank: %s", raw)
	}
	if res.Results[0].Index != 2 || res.Results[0].RelevanceScore != 1 || res.Results[0].Document != "a cat and a dog" {
		t.Errorf("most relevant %+v", res.Results[0])
	}
	for i, x := range res.Results {
		if x.RelevanceScore != openaitest.Relevance("cat dog", docs[x.Index]) || x.Document != docs[x.Index] ||
			i > 0 && x.RelevanceScore > res.Results[i-1].RelevanceScore {
			t.Errorf("results[%d] %+v", i, x)
		}
	}
	req, _ := e.fake.LastRequest()
	if req.Path != "/v1/rerank" || req.Model != "rr" || req.Query != "cat dog" || !slices.Equal(req.Documents, docs) || req.TopN == nil || *req.TopN != 3 ||
		!strings.Contains(string(req.Body), `"return_documents":false`) {
		t.Fatalf("upstream request %s", req.Body)
	}
	// Without return_documents, no document.
	r, raw = e.call(t, "ai/rerank", `{"query":"cat","documents":["cat"]}`)
	if r.Error != nil || string(r.Result) != `{"model":"rr","results":[{"index":0,"relevance_score":1}],"usage":{"total_tokens":2}}` {
		t.Fatalf("ai/rerank: %s", raw)
	}
}

// A TEI-style answer (an array of {index, score}) is read too.
func TestAIRerankTEIShape(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"index":1,"score":0.9},{"index":0,"score":0.1}]`)
	}))
	defer up.Close()
	e := startAI(t, openai.Config{BaseURL: up.URL})
	r, raw := e.call(t, "ai/rerank", `{"query":"q","documents":["a","b"]}`)
	if r.Error != nil || string(r.Result) != `{"model":"m","results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}` {
		t.Fatalf("TEI shape: %s", raw)
	}
}

// Each upstream failure is answered with its error code, for each method.
func TestAIErrors(t *testing.T) {
	e := startAI(t, openai.Config{APIKey: "sk-very-secret", Models: []string{openai.AnyModel}})
	chat := `{"model":"%s","messages":[{"role":"user","content":"x"}]}`
	emb := `{"model":"%s","input":"x"}`
	rr := `{"model":"%s","query":"x","documents":["x"]}`
	for _, c := range []struct {
		model string
		b     openaitest.Behavior
		code  int
		msg   string
		data  map[string]any
	}{
		{"gone", openaitest.Behavior{Status: 404}, openai.CodeModelNotFound, `model "gone" not found`, map[string]any{"model": "gone"}},
		{"busy", openaitest.Behavior{Status: 429, RetryAfter: "7"}, openai.CodeRateLimited, "rate limited", map[string]any{"retryAfterSeconds": 7}},
		{"busy2", openaitest.Behavior{Status: 429}, openai.CodeRateLimited, "rate limited", nil},
		{"denied", openaitest.Behavior{Status: 403}, openai.CodeUpstreamUnauthorized, "HTTP 403", nil},
		{"broken", openaitest.Behavior{Status: 500}, openai.CodeUpstream, "HTTP 500", map[string]any{"upstreamStatus": 500}},
		{"picky", openaitest.Behavior{Status: 400, ErrorMessage: "context too long"}, a2a.CodeInvalidParams, "context too long", map[string]any{"upstreamStatus": 400}},
	} {
		e.fake.Script(c.model, c.b)
		for _, m := range []struct{ name, params string }{{"ai/chat", chat}, {"ai/embeddings", emb}, {"ai/rerank", rr}} {
			r, raw := e.call(t, m.name, fmt.Sprintf(m.params, c.model))
			wantError(t, m.name+" "+c.model, r, raw, c.code, c.data)
			if !strings.Contains(r.Error.Message, c.msg) || strings.Contains(raw, "sk-very-secret") {
				t.Errorf("%s %s: message %q", m.name, c.model, r.Error.Message)
			}
			if c.data == nil && c.code == openai.CodeRateLimited && r.Error.Data != nil {
				t.Errorf("%s: data %v without Retry-After", m.name, r.Error.Data)
			}
		}
	}
	// The upstream rejects the API key.
	e.fake.RequireKey("sk-another")
	for _, m := range []struct{ name, params string }{{"ai/chat", chat}, {"ai/embeddings", emb}, {"ai/rerank", rr}} {
		r, raw := e.call(t, m.name, fmt.Sprintf(m.params, "m"))
		wantError(t, m.name+" 401", r, raw, openai.CodeUpstreamUnauthorized, nil)
		if strings.Contains(raw, "sk-very-secret") || !strings.Contains(r.Error.Message, "API key") {
			t.Errorf("401: %s", raw)
		}
	}
}

// An upstream that answers nothing within the timeout is -32050; one that
// cannot be reached is -32054.
func TestAITimeoutAndUnreachable(t *testing.T) {
	e := startAI(t, openai.Config{Timeout: 300 * time.Millisecond})
	e.fake.Script("m", openaitest.Behavior{Stall: true})
	r, raw := e.call(t, "ai/chat", `{"messages":[{"role":"user","content":"x"}]}`)
	wantError(t, "stalled ai/chat", r, raw, openai.CodeUpstreamTimeout, nil)
	if !strings.Contains(r.Error.Message, "300ms") {
		t.Errorf("timeout message %q", r.Error.Message)
	}
	var got []rpcResponse
	for r := range events(t, postRPC(t, e.url, `{"jsonrpc":"2.0","id":1,"method":"ai/chat","params":{"stream":true,"messages":[{"role":"user","content":"x"}]}}`)) {
		got = append(got, r)
	}
	if len(got) != 1 || got[0].Error == nil || got[0].Error.Code != openai.CodeUpstreamTimeout {
		t.Fatalf("stalled stream: %+v", got)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e2 := startAI(t, openai.Config{BaseURL: "http://" + addr + "/v1"})
	r, raw = e2.call(t, "ai/embeddings", `{"input":"x"}`)
	wantError(t, "unreachable", r, raw, openai.CodeUpstream, nil)
	if !strings.Contains(r.Error.Message, "connection refused") {
		t.Errorf("unreachable: %q", r.Error.Message)
	}
}

// Bad params are -32602 naming the member.
func TestAIBadParams(t *testing.T) {
	e := startAI(t, openai.Config{Models: []string{"allowed"}})
	for _, c := range []struct{ method, params, field, reason string }{
		{"ai/chat", `null`, "/params", "params: required"},
		{"ai/chat", `[]`, "/params", "params: must be an object"},
		{"ai/chat", `{}`, "/params/messages", "messages: required"},
		{"ai/chat", `{"messages":[]}`, "/params/messages", "messages: required"},
		{"ai/chat", `{"messages":"hi"}`, "/params/messages", "messages: must be an array of messages"},
		{"ai/chat", `{"messages":[{"role":"robot","content":"x"}]}`, "/params/messages/0/role", "messages[0].role: must be one of"},
		{"ai/chat", `{"messages":[{"role":"user","content":1}]}`, "/params/messages/0/content", "messages[0].content: must be a string"},
		{"ai/chat", `{"messages":[{"role":"user","content":"x","name":"n"}]}`, "/params/messages/0/name", "messages[0].name: unknown member (known: role, content)"},
		{"ai/chat", `{"Messages":[]}`, "/params/Messages", "Messages: unknown member (known: messages, model, temperature, max_tokens, stream)"},
		{"ai/chat", `{"messages":[{"role":"user","content":"x"}],"temperature":3}`, "/params/temperature", "temperature: must be between 0 and 2"},
		{"ai/chat", `{"messages":[{"role":"user","content":"x"}],"max_tokens":0}`, "/params/max_tokens", "max_tokens: must be between 1"},
		{"ai/chat", `{"messages":[{"role":"user","content":"x"}],"max_tokens":1.5}`, "/params/max_tokens", "max_tokens: must be an integer"},
		{"ai/chat", `{"messages":[{"role":"user","content":"x"}],"stream":"yes"}`, "/params/stream", "stream: must be true or false"},
		{"ai/chat", `{"messages":[{"role":"user","content":"x"}],"model":"forbidden"}`, "/params/model", `model: "forbidden" is not allowed here (allowed: m, allowed)`},
		{"ai/embeddings", `{"input":"x","model":"forbidden"}`, "/params/model", `model: "forbidden" is not allowed here (allowed: m, allowed)`},
		{"ai/rerank", `{"query":"q","documents":["a"],"model":"forbidden"}`, "/params/model", `model: "forbidden" is not allowed here (allowed: m, allowed)`},
		{"ai/embeddings", `{}`, "/params/input", "input: required"},
		{"ai/embeddings", `{"input":""}`, "/params/input", "input: empty"},
		{"ai/embeddings", `{"input":["a",""]}`, "/params/input/1", "input[1]: empty"},
		{"ai/embeddings", `{"input":[1]}`, "/params/input", "input: must be a string or a non-empty array of strings"},
		{"ai/embeddings", `{"input":[]}`, "/params/input", "input: must be a string or a non-empty array of strings"},
		{"ai/embeddings", `{"input":{}}`, "/params/input", "input: must be a string or an array of strings"},
		{"ai/embeddings", `{"input":"x","dimensions":-1}`, "/params/dimensions", "dimensions: must be between 1"},
		{"ai/rerank", `{"documents":["a"]}`, "/params/query", "query: required"},
		{"ai/rerank", `{"query":"q"}`, "/params/documents", "documents: required"},
		{"ai/rerank", `{"query":"q","documents":["a",2]}`, "/params/documents/1", "documents[1]: must be a string"},
		{"ai/rerank", `{"query":"q","documents":["a"],"top_n":0}`, "/params/top_n", "top_n: must be at least 1"},
	} {
		r, raw := e.call(t, c.method, c.params)
		wantError(t, c.method+" "+c.params, r, raw, a2a.CodeInvalidParams, map[string]any{"field": c.field})
		if reason, _ := r.Error.Data["reason"].(string); !strings.HasPrefix(reason, c.reason) {
			t.Errorf("%s %s: reason %q, want %q…", c.method, c.params, reason, c.reason)
		}
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Errorf("%d upstream requests for bad params", n)
	}
	// The allowed and the configured models pass.
	for _, model := range []string{"allowed", "m"} {
		if r, raw := e.call(t, "ai/embeddings", `{"input":"x","model":"`+model+`"}`); r.Error != nil {
			t.Errorf("model %s: %s", model, raw)
		}
	}
}

// By default a call may name only the configured models: any other is
// -32602 naming /params/model and listing the allowed ones, and nothing
// reaches the upstream; models: ["*"] opts in to any model.
func TestAIModelsAllowed(t *testing.T) {
	maxTok := 512
	e := startAI(t, openai.Config{Model: "small", EmbeddingsModel: "emb", RerankModel: "rr", MaxTokens: &maxTok})
	for _, c := range []struct{ method, params string }{
		{"ai/chat", `{"model":"gpt-4o-expensive","max_tokens":2147483647,"messages":[{"role":"user","content":"x"}]}`},
		{"ai/chat", `{"model":"gpt-4o-expensive","stream":true,"messages":[{"role":"user","content":"x"}]}`},
		{"ai/embeddings", `{"model":"text-embedding-3-large","input":"x"}`},
		{"ai/rerank", `{"model":"*","query":"q","documents":["a"]}`},
	} {
		r, raw := e.call(t, c.method, c.params)
		wantError(t, c.method+" "+c.params, r, raw, a2a.CodeInvalidParams, map[string]any{"field": "/params/model", "allowedModels": []any{"small", "emb", "rr"}})
		if reason, _ := r.Error.Data["reason"].(string); !strings.HasSuffix(reason, "is not allowed here (allowed: small, emb, rr)") {
			t.Errorf("%s: reason %q", c.method, reason)
		}
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Fatalf("%d upstream requests for models that are not allowed", n)
	}
	// Each configured model may be named, in any method.
	for _, model := range []string{"small", "emb", "rr"} {
		if r, raw := e.call(t, "ai/chat", `{"model":"`+model+`","messages":[{"role":"user","content":"x"}]}`); r.Error != nil {
			t.Errorf("model %s: %s", model, raw)
		}
	}

	// models: ["*"]: any model; the card says so, with the cap.
	open := startAI(t, openai.Config{Models: []string{openai.AnyModel}, MaxTokens: &maxTok})
	r, raw := open.call(t, "ai/chat", `{"model":"gpt-4o-expensive","max_tokens":100000,"messages":[{"role":"user","content":"x"}]}`)
	req, _ := open.fake.LastRequest()
	if r.Error != nil || req.Model != "gpt-4o-expensive" || req.MaxTokens == nil || *req.MaxTokens != 512 {
		t.Fatalf("models [*]: %s; upstream %s", raw, req.Body)
	}
	ext := open.agent.CardExtension()
	if models, _ := json.Marshal(ext.Params["models"]); string(models) != `["*"]` || ext.Params["maxTokens"] != 512 {
		t.Errorf("extension params %v", ext.Params)
	}
}

// Batches hold non-streaming calls; a streaming ai/chat in a batch is
// -32600.
func TestAIBatch(t *testing.T) {
	e := startAI(t, openai.Config{})
	resp := postRPC(t, e.url, `[
		{"jsonrpc":"2.0","id":1,"method":"ai/embeddings","params":{"input":"a"}},
		{"jsonrpc":"2.0","id":2,"method":"ai/chat","params":{"messages":[{"role":"user","content":"b"}]}},
		{"jsonrpc":"2.0","id":3,"method":"ai/chat","params":{"stream":true,"messages":[{"role":"user","content":"c"}]}},
		{"jsonrpc":"2.0","id":4,"method":"ai/rerank","params":{"query":"d","documents":["d"]}}
	]`)
	defer resp.Body.Close()
	var rs []rpcResponse
	if err := json.NewDecoder(resp.Body).Decode(&rs); err != nil || len(rs) != 4 {
		t.Fatalf("batch: %v %d", err, len(rs))
	}
	for i, r := range rs {
		if (i == 2) != (r.Error != nil) || i == 2 && r.Error.Code != a2a.CodeInvalidRequest {
			t.Errorf("member %d: %s %+v", i+1, r.Result, r.Error)
		}
	}
	for _, req := range e.fake.Requests() {
		if req.Stream {
			t.Error("the streaming member reached the upstream")
		}
	}
}

// The card declares the methods as an extension; ai_methods: false
// turns them off.
func TestAICardExtension(t *testing.T) {
	e := startAI(t, openai.Config{EmbeddingsModel: "e", Models: []string{"x"}})
	resp, err := http.Get(e.url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var card struct {
		Capabilities struct {
			Extensions []struct {
				URI      string         `json:"uri"`
				Required bool           `json:"required"`
				Params   map[string]any `json:"params"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, x := range card.Capabilities.Extensions {
		if x.URI != openai.ExtensionURI {
			continue
		}
		found = true
		methods, _ := json.Marshal(x.Params["methods"])
		defaults, _ := json.Marshal(x.Params["defaultModels"])
		models, _ := json.Marshal(x.Params["models"])
		if x.Required || string(methods) != `["ai/chat","ai/embeddings","ai/rerank"]` ||
			string(defaults) != `{"chat":"m","embeddings":"e","rerank":"m"}` || string(models) != `["m","e","x"]` || x.Params["errorCodes"] == nil ||
			x.Params["maxTokens"] != nil {
			t.Errorf("extension %+v", x)
		}
	}
	if !found {
		t.Fatalf("no extension %s in the card", openai.ExtensionURI)
	}
	off := false
	ag, err := openai.New(openai.Config{BaseURL: e.fake.URL, Model: "m", AIMethods: &off})
	if err != nil {
		t.Fatal(err)
	}
	if ag.Methods() != nil {
		t.Error("ai_methods: false still serves methods")
	}
}

// stubProvider answers from functions; unset ones fail.
type stubProvider struct {
	chat   func(ctx context.Context, req openai.ChatRequest) (openai.ChatResponse, error)
	stream func(ctx context.Context, req openai.ChatRequest) iter.Seq2[openai.ChatChunk, error]
}

func (s stubProvider) Chat(ctx context.Context, req openai.ChatRequest) (openai.ChatResponse, error) {
	return s.chat(ctx, req)
}

func (s stubProvider) ChatStream(ctx context.Context, req openai.ChatRequest) iter.Seq2[openai.ChatChunk, error] {
	return s.stream(ctx, req)
}

func (s stubProvider) Embeddings(ctx context.Context, req openai.EmbeddingsRequest) (openai.EmbeddingsResponse, error) {
	vecs := make([][]float32, len(req.Input))
	for i, in := range req.Input {
		vecs[i] = []float32{float32(len(in))}
	}
	return openai.EmbeddingsResponse{Embeddings: vecs}, nil
}

func (s stubProvider) Rerank(ctx context.Context, req openai.RerankRequest) (openai.RerankResponse, error) {
	res := make([]openai.RerankResult, len(req.Documents))
	for i := range res {
		res[i] = openai.RerankResult{Index: len(res) - 1 - i, RelevanceScore: float64(len(res) - i)}
	}
	return openai.RerankResponse{Results: res}, nil
}

// Another Provider can be injected: its errors are mapped as documented
// (an *a2a.Error as it is, the timeout's deadline as -32050, any other
// error as -32603 without its text), and a stream without a finish
// reason is incomplete (-32054).
func TestAIInjectedProvider(t *testing.T) {
	p := stubProvider{
		chat: func(ctx context.Context, req openai.ChatRequest) (openai.ChatResponse, error) {
			switch req.Messages[0].Content {
			case "coded":
				return openai.ChatResponse{}, openai.ErrRateLimited.WithData(map[string]any{"retryAfterSeconds": 1})
			case "plain":
				return openai.ChatResponse{}, fmt.Errorf("secret detail")
			case "slow":
				<-ctx.Done()
				return openai.ChatResponse{}, ctx.Err()
			}
			return openai.ChatResponse{Content: "ok " + req.Model, FinishReason: "stop"}, nil
		},
		stream: func(ctx context.Context, req openai.ChatRequest) iter.Seq2[openai.ChatChunk, error] {
			return func(yield func(openai.ChatChunk, error) bool) {
				_ = yield(openai.ChatChunk{Delta: "half"}, nil) && yield(openai.ChatChunk{}, nil)
			}
		},
	}
	base := serveMethods(t, server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		return u.Complete(ctx, "")
	}), openai.Methods(p, openai.MethodOptions{ChatModel: "stub", Models: []string{"e", "r"}, Timeout: 200 * time.Millisecond}), nil)
	url := base + "/a2a/" + agentName
	r, raw := callURL(t, url, "ai/chat", `{"messages":[{"role":"user","content":"hi"}]}`)
	if r.Error != nil || string(r.Result) != `{"model":"stub","message":{"role":"assistant","content":"ok stub"},"finish_reason":"stop"}` {
		t.Fatalf("ai/chat: %s", raw)
	}
	r, raw = callURL(t, url, "ai/chat", `{"messages":[{"role":"user","content":"coded"}]}`)
	wantError(t, "coded", r, raw, openai.CodeRateLimited, map[string]any{"retryAfterSeconds": 1})
	r, raw = callURL(t, url, "ai/chat", `{"messages":[{"role":"user","content":"plain"}]}`)
	wantError(t, "plain", r, raw, a2a.CodeInternalError, nil)
	if strings.Contains(raw, "secret") {
		t.Errorf("plain error leaks: %s", raw)
	}
	r, raw = callURL(t, url, "ai/chat", `{"messages":[{"role":"user","content":"slow"}]}`)
	wantError(t, "slow", r, raw, openai.CodeUpstreamTimeout, nil)
	var got []rpcResponse
	for r := range events(t, postRPC(t, url, `{"jsonrpc":"2.0","id":1,"method":"ai/chat","params":{"stream":true,"messages":[{"role":"user","content":"x"}]}}`)) {
		got = append(got, r)
	}
	if len(got) != 2 || string(got[0].Result) != `{"delta":"half"}` || got[1].Error == nil || got[1].Error.Code != openai.CodeUpstream {
		t.Fatalf("stream without finish: %+v", got)
	}
	// No default model for embeddings: the call must name one.
	r, raw = callURL(t, url, "ai/embeddings", `{"input":"x"}`)
	wantError(t, "no model", r, raw, a2a.CodeInvalidParams, map[string]any{"field": "/params/model"})
	r, raw = callURL(t, url, "ai/embeddings", `{"input":["ab","c"],"model":"e"}`)
	if r.Error != nil || string(r.Result) != `{"model":"e","data":[{"index":0,"embedding":[2]},{"index":1,"embedding":[1]}]}` {
		t.Fatalf("ai/embeddings: %s", raw)
	}
	r, raw = callURL(t, url, "ai/rerank", `{"query":"q","documents":["a","b","c"],"top_n":2,"model":"r"}`)
	if r.Error != nil || string(r.Result) != `{"model":"r","results":[{"index":2,"relevance_score":3},{"index":1,"relevance_score":2}]}` {
		t.Fatalf("ai/rerank: %s", raw)
	}
}
