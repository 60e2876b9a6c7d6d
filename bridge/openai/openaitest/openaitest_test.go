package openaitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/a2abridge/a2abridge/bridge/openai/openaitest"
)

func newFake(t *testing.T) (*openaitest.Server, oai.Client) {
	t.Helper()
	s := openaitest.New()
	t.Cleanup(s.Close)
	return s, oai.NewClient(option.WithBaseURL(s.URL+"/"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

// The official client reads the fake's streams, completions, errors and
// embeddings.
func TestOfficialClient(t *testing.T) {
	s, c := newFake(t)
	ctx := context.Background()
	params := oai.ChatCompletionNewParams{Model: "m", Messages: []oai.ChatCompletionMessageParamUnion{oai.SystemMessage("sys"), oai.UserMessage("hello world")},
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}}
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	var acc oai.ChatCompletionAccumulator
	var deltas []string
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			deltas = append(deltas, ch.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(deltas, []string{"You", " said:", " hello", " world"}) {
		t.Errorf("deltas %q", deltas)
	}
	if acc.Choices[0].FinishReason != "stop" || acc.Usage.CompletionTokens != 4 || acc.Usage.TotalTokens != acc.Usage.PromptTokens+4 {
		t.Errorf("accumulated %+v usage %+v", acc.Choices, acc.Usage)
	}
	r, _ := s.LastRequest()
	if r.Header.Get("Authorization") != "Bearer sk-test" || !r.Stream || !r.IncludeUsage ||
		!slices.Equal(r.Messages, []openaitest.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "hello world"}}) {
		t.Errorf("recorded %+v", r)
	}

	s.Script("r", openaitest.Behavior{Reply: "fixed answer", Usage: &openaitest.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}})
	params.Model = "r"
	res, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.Object != "chat.completion" || res.Choices[0].Message.Content != "fixed answer" || res.Usage.TotalTokens != 3 || res.Model != "r" {
		t.Errorf("completion %+v", res)
	}

	s.Script("gone", openaitest.Behavior{Status: 404})
	params.Model = "gone"
	_, err = c.Chat.Completions.New(ctx, params)
	var apiErr *oai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" || !strings.Contains(apiErr.Message, "gone") {
		t.Errorf("404: %v", err)
	}

	s.Script("busy", openaitest.Behavior{Status: 429, RetryAfter: "7"})
	params.Model = "busy"
	var raw *http.Response
	_, err = c.Chat.Completions.New(ctx, params, option.WithResponseInto(&raw))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" || raw.Header.Get("Retry-After") != "7" {
		t.Errorf("429: %v", err)
	}

	s.RequireKey("sk-other")
	params.Model = "m"
	_, err = c.Chat.Completions.New(ctx, params)
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Errorf("401: %v", err)
	}
	s.RequireKey("")

	for _, format := range []oai.EmbeddingNewParamsEncodingFormat{oai.EmbeddingNewParamsEncodingFormatFloat, oai.EmbeddingNewParamsEncodingFormatBase64} {
		emb, err := c.Embeddings.New(ctx, oai.EmbeddingNewParams{Model: "e", EncodingFormat: format,
			Input: oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", "b", "a"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(emb.Data) != 3 || len(emb.Data[0].Embedding) != 8 || emb.Data[2].Index != 2 {
			t.Fatalf("%s embeddings %+v", format, emb.Data)
		}
		want := openaitest.Embed("a", 8)
		for i, f := range emb.Data[0].Embedding {
			if float32(f) != want[i] || emb.Data[2].Embedding[i] != f {
				t.Fatalf("%s: vector %v, want %v", format, emb.Data[0].Embedding, want)
			}
		}
		if slices.Equal(emb.Data[0].Embedding, emb.Data[1].Embedding) {
			t.Errorf("%s: different texts, equal vectors", format)
		}
	}
	if r, _ := s.LastRequest(); !slices.Equal(r.Input, []string{"a", "b", "a"}) {
		t.Errorf("recorded input %q", r.Input)
	}
}

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, out
}

func TestRerank(t *testing.T) {
	s, _ := newFake(t)
	code, out := post(t, s.URL+"/rerank", `{"model":"rr","query":"red apple","documents":["a green pear","a red apple",{"text":"red car"}],"top_n":2,"return_documents":true}`)
	if code != 200 {
		t.Fatalf("%d %v", code, out)
	}
	res := out["results"].([]any)
	if len(res) != 2 {
		t.Fatalf("results %v", res)
	}
	first, second := res[0].(map[string]any), res[1].(map[string]any)
	if first["index"] != 1.0 || first["relevance_score"] != 1.0 || second["index"] != 2.0 || second["relevance_score"] != 0.5 {
		t.Errorf("results %v", res)
	}
	if first["document"].(map[string]any)["text"] != "a red apple" {
		t.Errorf("document %v", first["document"])
	}
	r, _ := s.LastRequest()
	if r.Query != "red apple" || len(r.Documents) != 3 || r.Documents[2] != "red car" || *r.TopN != 2 {
		t.Errorf("recorded %+v", r)
	}
	code, out = post(t, s.URL+"/rerank", `{"model":"rr","documents":["x"]}`)
	if code != 400 || out["error"].(map[string]any)["param"] != "query" {
		t.Errorf("no query: %d %v", code, out)
	}
}

func TestRoutesAndErrors(t *testing.T) {
	s, _ := newFake(t)
	code, out := post(t, s.URL+"/nope", `{}`)
	if code != 404 || out["error"].(map[string]any)["type"] != "invalid_request_error" {
		t.Errorf("unknown route: %d %v", code, out)
	}
	code, out = post(t, s.URL+"/chat/completions", `{"model":"m","messages":[]}`)
	if code != 400 || out["error"].(map[string]any)["param"] != "messages" {
		t.Errorf("no messages: %d %v", code, out)
	}
	code, out = post(t, s.URL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`)
	if code != 200 || out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] != "You said: ab" {
		t.Errorf("array content: %d %v", code, out)
	}
	s.Script("listed", openaitest.Behavior{})
	res, err := http.Get(s.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	_ = json.NewDecoder(res.Body).Decode(&models)
	if len(models.Data) != 1 || models.Data[0].ID != "listed" {
		t.Errorf("models %+v", models)
	}
}

// A scripted error applies to the first Times requests only.
func TestTimes(t *testing.T) {
	s, _ := newFake(t)
	s.Script("m", openaitest.Behavior{Status: 500, Times: 2})
	for i, want := range []int{500, 500, 200, 200} {
		if code, out := post(t, s.URL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`); code != want {
			t.Errorf("request %d: %d %v", i, code, out)
		}
	}
}

func TestTokenize(t *testing.T) {
	for _, text := range []string{"", "a", "  lead", "trail  ", "one two\nthree", "x\u00a0y"} {
		toks := openaitest.Tokenize(text)
		if strings.Join(toks, "") != text {
			t.Errorf("Tokenize(%q) = %q", text, toks)
		}
	}
}

// FuzzParseChatRequest: a body either decodes or is an error; what
// decodes keeps every message.
func FuzzParseChatRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"max_tokens":3}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":null}]}`))
	f.Add([]byte(`{"messages":[{"content":7}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var r openaitest.Request
		if err := openaitest.ParseChatRequest(body, &r); err != nil {
			return
		}
		var in struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(body, &in) == nil && len(in.Messages) != len(r.Messages) {
			t.Fatalf("%d messages decoded of %d", len(r.Messages), len(in.Messages))
		}
	})
}
