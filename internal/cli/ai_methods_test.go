package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/bridge/openai"
	"github.com/a2abridge/a2abridge/bridge/openai/openaitest"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// aiCall makes one JSON-RPC call and returns the raw answer.
func aiCall(t *testing.T, url, method, params string) string {
	t.Helper()
	_, b := testutil.RPC(t, url, method, params)
	return string(b)
}

// cardExtensions returns the extension URIs of an agent's card.
func cardExtensions(t *testing.T, agentURL string) []string {
	t.Helper()
	var card struct {
		Capabilities struct {
			Extensions []struct {
				URI string `json:"uri"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	getJSON(t, agentURL+"/.well-known/agent-card.json", &card)
	var uris []string
	for _, x := range card.Capabilities.Extensions {
		uris = append(uris, x.URI)
	}
	return uris
}

// An openai agent of serve --config answers ai/chat, ai/embeddings and
// ai/rerank and declares them in its card, unless ai_methods: false; one
// registered through the admin API too, until it is removed.
func TestServeAIMethods(t *testing.T) {
	fake := openaitest.New()
	defer fake.Close()
	cfg := writeConfig(t, fmt.Sprintf(`admin:
  bearer_tokens:
    ops: adm1n
agents:
  llm:
    kind: openai
    base_url: %s
    model: chat-model
    embeddings_model: embed-model
  quiet:
    kind: openai
    base_url: %s
    model: chat-model
    ai_methods: false
`, fake.URL, fake.URL))
	base := startServe(t, "--config", cfg)
	llm := base + "/a2a/llm"
	if got := aiCall(t, llm, "ai/chat", `{"messages":[{"role":"user","content":"hi"}]}`); !strings.Contains(got, `"content":"You said: hi"`) || !strings.Contains(got, `"model":"chat-model"`) {
		t.Fatalf("ai/chat: %s", got)
	}
	if got := aiCall(t, llm, "ai/embeddings", `{"input":"x"}`); !strings.Contains(got, `"model":"embed-model"`) || !strings.Contains(got, `"embedding":[`) {
		t.Fatalf("ai/embeddings: %s", got)
	}
	if got := aiCall(t, llm, "ai/rerank", `{"query":"a","documents":["a","b"]}`); !strings.Contains(got, `"results":[{"index":0,"relevance_score":1}`) {
		t.Fatalf("ai/rerank: %s", got)
	}
	if uris := cardExtensions(t, llm); !strings.Contains(strings.Join(uris, " "), openai.ExtensionURI) {
		t.Fatalf("card extensions %v", uris)
	}
	quiet := base + "/a2a/quiet"
	if got := aiCall(t, quiet, "ai/chat", `{"messages":[{"role":"user","content":"hi"}]}`); !strings.Contains(got, `"code":-32601`) {
		t.Fatalf("ai/chat with ai_methods: false: %s", got)
	}
	if uris := cardExtensions(t, quiet); strings.Contains(strings.Join(uris, " "), openai.ExtensionURI) {
		t.Fatalf("card extensions with ai_methods: false: %v", uris)
	}

	// Registered at runtime, then removed.
	api := base + "/api/v1/agents"
	if code, body := adminCall(t, "POST", api, "adm1n", fmt.Sprintf(`{"name":"reg","kind":"openai","base_url":%q,"model":"m2"}`, fake.URL)); code != 201 {
		t.Fatalf("register: %d %s", code, body)
	}
	reg := base + "/a2a/reg"
	if got := aiCall(t, reg, "ai/embeddings", `{"input":["a","b"]}`); !strings.Contains(got, `"model":"m2"`) || !strings.Contains(got, `"index":1`) {
		t.Fatalf("ai/embeddings of a registered agent: %s", got)
	}
	if uris := cardExtensions(t, reg); !strings.Contains(strings.Join(uris, " "), openai.ExtensionURI) {
		t.Fatalf("registered card extensions %v", uris)
	}
	if code, body := adminCall(t, "DELETE", api+"/reg", "adm1n", ""); code != 200 && code != 204 {
		t.Fatalf("remove: %d %s", code, body)
	}
	if got := aiCall(t, reg, "ai/embeddings", `{"input":"a"}`); !strings.Contains(got, `"code":-32601`) {
		t.Fatalf("ai/embeddings of a removed agent: %s", got)
	}
	if uris := cardExtensions(t, reg); strings.Contains(strings.Join(uris, " "), openai.ExtensionURI) {
		t.Fatalf("removed agent's card extensions %v", uris)
	}
}
