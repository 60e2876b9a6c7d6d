// Command reverse is a complete A2A agent written with the a2abridge server
// SDK: it streams the reversed text of each message as an artifact, one
// word per chunk, and reports progress while doing so.
//
//	go run ./examples/reverse -addr 127.0.0.1:9090
//	curl -s localhost:9090/.well-known/agent-card.json
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// Reverse is the agent: it implements server.Agent.
type Reverse struct{}

// Execute reverses the words of every text part, streaming one word per
// artifact chunk. Cancellation (tasks/cancel) arrives through ctx.
func (Reverse) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	if err := t.Working(ctx, "reversing"); err != nil {
		return err
	}
	var words []string
	for _, p := range req.Message.Parts {
		if tp, ok := p.(a2a.TextPart); ok {
			words = append(words, strings.Fields(tp.Text)...)
		}
	}
	if len(words) == 0 {
		return t.Fail(ctx, "send some text to reverse")
	}
	id := a2a.NewID()
	for i := len(words) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := a2a.Artifact{ArtifactID: id, Name: "reversed", Parts: []a2a.Part{a2a.TextPart{Text: words[i] + " "}}}
		if err := t.AddArtifact(ctx, chunk, i < len(words)-1, i == 0); err != nil {
			return err
		}
	}
	return t.Complete(ctx, "done")
}

// Card is the agent's card; the URL is filled in per request by server.Host.
func Card() a2a.AgentCard {
	return a2a.AgentCard{
		Name: "reverse", Description: "Reverses the words of a message.", Version: "1.0.0",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "reverse", Name: "Reverse words", Description: "Reverses word order.", Tags: []string{"text"}}},
	}
}

// NewServer returns the HTTP handler serving the agent at / and /a2a/reverse.
func NewServer() (http.Handler, func()) {
	eng := server.NewEngine(memory.New(), server.EngineOptions{})
	host := server.NewHost(server.HostOptions{})
	host.Add(server.NewHandler(eng, "reverse", Reverse{}, Card(), server.HandlerOptions{}))
	return host, func() { _ = eng.Close(context.Background()) }
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "listen address")
	flag.Parse()
	h, stop := NewServer()
	defer stop()
	log.Printf("reverse agent on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, h))
}
