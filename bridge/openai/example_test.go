package openai_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/openai"
	"github.com/a2abridge/a2abridge/bridge/openai/openaitest"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// Serve a model of an OpenAI-compatible endpoint (here the fake of
// openaitest; in real life e.g. Ollama at http://127.0.0.1:11434/v1) as an
// A2A agent, and continue a conversation by reusing its contextId.
func Example() {
	model := openaitest.New() // an OpenAI-compatible endpoint
	defer model.Close()

	agent, err := openai.New(openai.Config{BaseURL: model.URL, Model: "llama3.2", System: "You are terse."})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close(context.Background())
	host := server.NewHost(server.HostOptions{Transport: server.TransportOptions{Logger: slog.New(slog.DiscardHandler)}})
	host.Add(server.NewHandler(eng, "llama", agent, a2a.AgentCard{
		Name: "llama", Description: "A local model", Version: "1",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{agent.Skill()},
	}, server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	defer ts.Close()

	ctx := context.Background()
	c, err := client.Dial(ctx, ts.URL, client.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ask := func(text, contextID string) *a2a.Task {
		m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(text))
		m.ContextID = contextID
		res, err := c.SendMessage(ctx, a2a.SendMessageRequest{Message: m})
		if err != nil {
			panic(err)
		}
		return res.(*a2a.Task)
	}
	first := ask("Hello", "")
	second := ask("And again", first.ContextID)
	fmt.Println(first.Status.State, second.Status.State)
	r, _ := model.LastRequest()
	for _, m := range r.Messages {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	// Output:
	// completed completed
	// system: You are terse.
	// user: Hello
	// assistant: You said: Hello
	// user: And again
}

// Serve the local AI operations (ai/chat, ai/embeddings, ai/rerank) of an
// OpenAI-compatible endpoint on an agent's JSON-RPC endpoint, declared in
// its card, and call ai/rerank with a plain JSON-RPC POST.
func ExampleAgent_Methods() {
	model := openaitest.New() // an OpenAI-compatible endpoint
	defer model.Close()

	agent, err := openai.New(openai.Config{BaseURL: model.URL, Model: "llama3.2", RerankModel: "bge-reranker"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close(context.Background())
	card := a2a.AgentCard{
		Name: "llama", Description: "A local model", Version: "1",
		Capabilities:      a2a.AgentCapabilities{Streaming: true, Extensions: []a2a.AgentExtension{agent.CardExtension()}},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{agent.Skill()},
	}
	host := server.NewHost(server.HostOptions{Transport: server.TransportOptions{Logger: slog.New(slog.DiscardHandler)}})
	host.Add(server.NewHandler(eng, "llama", agent, card, server.HandlerOptions{Methods: agent.Methods()}))
	ts := httptest.NewServer(host)
	defer ts.Close()

	resp, err := http.Post(ts.URL+"/a2a/llama", "application/json", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"ai/rerank","params":{"query":"green tea","documents":["black coffee","green tea leaves"]}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(string(body))
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"model":"bge-reranker","results":[{"index":1,"relevance_score":1},{"index":0,"relevance_score":0}],"usage":{"total_tokens":7}}}
}
