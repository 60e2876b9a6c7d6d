package simple_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/simple"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// An HTTP service that speaks the simple dialect becomes an A2A agent, and
// any hosted agent answers simple callers at /simple/{agent}.
func Example() {
	// The service: upper-cases the text it is given.
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			TaskID string `json:"task_id"`
			Input  struct {
				Text string `json:"text"`
			} `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		_ = json.NewEncoder(w).Encode(map[string]any{"task_id": req.TaskID, "status": "success",
			"output": map[string]string{"text": strings.ToUpper(req.Input.Text)}})
	}))
	defer service.Close()

	agent, err := simple.New(simple.Config{URL: service.URL})
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
	host.Add(server.NewHandler(eng, "upper", agent, a2a.AgentCard{
		Name: "upper", Description: "Upper-cases text", Version: "1",
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{agent.Skill()},
	}, server.HandlerOptions{}))
	host.Handle("/simple/{agent}", simple.NewEndpoint(host.Handler, simple.EndpointOptions{Logger: slog.New(slog.DiscardHandler)}))
	ts := httptest.NewServer(host)
	defer ts.Close()

	// A simple caller: A2A in the middle, the service at the end.
	resp, err := http.Post(ts.URL+"/simple/upper", "application/json",
		strings.NewReader(`{"task_id": "t1", "input": {"text": "hello"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.StatusCode, " ", string(b))
	// Output: 200 {"task_id":"t1","status":"success","output":{"text":"HELLO"},"error":null}
}
