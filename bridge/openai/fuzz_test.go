package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/openai"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// FuzzUpstream answers the agent's request with arbitrary bodies and
// statuses: the task always ends completed (with its answer) or failed
// (with a reason), and nothing panics or hangs.
func FuzzUpstream(f *testing.F) {
	chunk := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}` + "\n\n"
	done := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	usage := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}` + "\n\n"
	f.Add(uint16(0), chunk+done+usage+"data: [DONE]\n\n")
	f.Add(uint16(0), chunk+chunk)
	f.Add(uint16(0), `data: {"choices":[{"index":0,"delta":{"refusal":"no"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	f.Add(uint16(0), `data: {"error":{"message":"boom"}}`+"\n\n")
	f.Add(uint16(0), "data: {not json\n\n")
	f.Add(uint16(0), `data: {"choices":[{"index":1,"delta":{"content":"x"}}]}`+"\n\n"+done)
	f.Add(uint16(201), `{"error":{"message":"model gone"}}`)
	f.Add(uint16(229), `{"error":"slow down"}`)
	f.Add(uint16(300), "<html>bad gateway</html>")
	f.Add(uint16(0), "event: ping\ndata: x\n\n: comment\n\n"+done)

	var status atomic.Int32
	var body atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := int(status.Load())
		if st == 200 {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(st)
		_, _ = w.Write([]byte(body.Load().(string)))
	}))
	f.Cleanup(up.Close)
	zero := 0
	e := startFuzz(f, openai.Config{BaseURL: up.URL + "/v1", Model: "m", MaxRetries: &zero, Timeout: 10 * time.Second, APIKey: "sk-fuzz-key"})

	f.Fuzz(func(t *testing.T, st uint16, b string) {
		code := 200
		if st != 0 {
			code = 200 + int(st)%400
		}
		if code == 204 || code == 304 || code < 200 {
			code = 200
		}
		status.Store(int32(code))
		body.Store(b)
		ev, err := e.c.SendMessage(context.Background(), a2a.SendMessageRequest{Message: userText("hi")})
		if err != nil {
			t.Fatal(err)
		}
		task := ev.(*a2a.Task)
		switch task.Status.State {
		case a2a.TaskStateCompleted:
			if len(task.Artifacts) != 1 {
				t.Fatalf("completed with artifacts %+v", task.Artifacts)
			}
		case a2a.TaskStateFailed:
			reason := testutil.StatusText(task.Status)
			if reason == "" || strings.Contains(reason, "sk-fuzz-key") || strings.ContainsAny(reason, "\n\r") {
				t.Fatalf("failure reason %q", reason)
			}
		default:
			t.Fatalf("task ended %s", task.Status.State)
		}
	})
}

// FuzzMethodParams calls ai/chat, ai/embeddings and ai/rerank with
// arbitrary params: each either answers a valid JSON result (or a stream
// of them) or fails with -32602 whose data names a member under /params;
// nothing panics.
func FuzzMethodParams(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":"hi"}],"stream":true}`,
		`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"model":"x","temperature":1.5,"max_tokens":10}`,
		`{"messages":[{"role":"robot","content":1}],"Stream":true}`,
		`{"input":["a","b"],"dimensions":3}`, `{"input":"x"}`, `{"input":[""]}`, `{"input":{"a":1}}`,
		`{"query":"q","documents":["a","b"],"top_n":1,"return_documents":true}`, `{"query":"","documents":[]}`,
		`null`, `[]`, `{}`, `{"a":1,"a":2}`, `{"messages":[{"role":"user","content":"x","content":"y"}]}`, "{\"m\xff\":1}", `{"max_tokens":1e400}`,
	} {
		f.Add(uint8(0), []byte(s))
		f.Add(uint8(1), []byte(s))
		f.Add(uint8(2), []byte(s))
	}
	// What reaches the provider names an allowed model and at most the
	// cap of tokens; anything else fails the target (an error that is
	// not -32602).
	allowed := map[string]bool{"c": true, "e": true, "r": true, "x": true}
	check := func(req openai.ChatRequest) error {
		if !allowed[req.Model] || req.MaxTokens == nil || *req.MaxTokens > 64 {
			return fmt.Errorf("model %q, max_tokens %v reached the provider", req.Model, req.MaxTokens)
		}
		return nil
	}
	p := stubProvider{
		chat: func(ctx context.Context, req openai.ChatRequest) (openai.ChatResponse, error) {
			if err := check(req); err != nil {
				return openai.ChatResponse{}, err
			}
			return openai.ChatResponse{Content: req.Messages[len(req.Messages)-1].Content, FinishReason: "stop"}, nil
		},
		stream: func(ctx context.Context, req openai.ChatRequest) iter.Seq2[openai.ChatChunk, error] {
			return func(yield func(openai.ChatChunk, error) bool) {
				if err := check(req); err != nil {
					yield(openai.ChatChunk{}, err)
					return
				}
				_ = yield(openai.ChatChunk{Delta: req.Messages[0].Content}, nil) && yield(openai.ChatChunk{FinishReason: "stop"}, nil)
			}
		},
	}
	maxTok := 64
	ms := openai.Methods(p, openai.MethodOptions{ChatModel: "c", EmbeddingsModel: "e", RerankModel: "r", Models: []string{"x"}, MaxTokens: &maxTok})
	names := []string{openai.MethodChat, openai.MethodEmbeddings, openai.MethodRerank}
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		name := names[int(which)%len(names)]
		res, err := ms[name](context.Background(), params)
		if err != nil {
			ae, ok := err.(*a2a.Error)
			if !ok || ae.Code != a2a.CodeInvalidParams {
				t.Fatalf("%s %q: error %v", name, params, err)
			}
			d, _ := ae.Data.(map[string]any)
			field, _ := d["field"].(string)
			reason, _ := d["reason"].(string)
			if !strings.HasPrefix(field, "/params") || reason == "" || !utf8.ValidString(reason) {
				t.Fatalf("%s %q: data %v", name, params, ae.Data)
			}
			return
		}
		if res.Stream == nil {
			if !json.Valid(res.Result) {
				t.Fatalf("%s %q: result %q", name, params, res.Result)
			}
			return
		}
		for v, err := range res.Stream {
			if err != nil || !json.Valid(v) {
				t.Fatalf("%s %q: stream value %q, %v", name, params, v, err)
			}
		}
	})
}
