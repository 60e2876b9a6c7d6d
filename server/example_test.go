package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// An agent is a function (or a type with Execute) that reports through a
// TaskUpdater; the engine keeps the task log, the Host speaks JSON-RPC.
func Example() {
	greeter := server.AgentFunc(func(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
		name := req.Message.Parts[0].Text()
		art := a2a.Artifact{ArtifactID: "greeting", Parts: []a2a.Part{a2a.NewTextPart("Hello, " + name + "!")}}
		if err := t.AddArtifact(ctx, art, false, true); err != nil {
			return err
		}
		return t.Complete(ctx, "")
	})
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close(context.Background())
	host := server.NewHost(server.HostOptions{})
	host.Add(server.NewHandler(eng, "greeter", greeter, a2a.AgentCard{
		Name: "greeter", Description: "Greets", Version: "1",
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
	}, server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	defer ts.Close()

	resp, _ := http.Post(ts.URL+"/a2a/greeter", "application/json", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"Ada"}]}}}`))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(strings.Contains(string(b), `"state":"completed"`), strings.Contains(string(b), "Hello, Ada!"))
	// Output: true true
}
