package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/simple"
	"github.com/a2abridge/a2abridge/internal/bench"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

func post(t *testing.T, url, method, body string) (int, string) {
	t.Helper()
	resp, b := testutil.Do(t, testutil.NewRequest(t, context.Background(), method, url, body))
	return resp.StatusCode, string(b)
}

// The backend echoes the input as the output, and what it answers is a
// well-formed answer of the simple dialect.
func TestEcho(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(handle))
	t.Cleanup(ts.Close)
	for _, tc := range []struct{ in, out string }{
		{`{"task_id":"t1","input":{"text":"hi"}}`, `{"task_id":"t1","status":"success","output":{"text":"hi"},"error":null}`},
		{`{"task_id":"t2","input":{"a":[1,2]}}`, `{"task_id":"t2","status":"success","output":{"a":[1,2]},"error":null}`},
		{`{"task_id":"t3"}`, `{"task_id":"t3","status":"success","output":null,"error":null}`},
	} {
		code, got := post(t, ts.URL+"/echo", http.MethodPost, tc.in)
		if code != http.StatusOK || got != tc.out {
			t.Errorf("%s: %d %s, want %s", tc.in, code, got, tc.out)
		}
		if _, err := simple.ParseResponse([]byte(got)); err != nil {
			t.Errorf("%s: the answer does not parse: %v", got, err)
		}
	}
	for _, bad := range []string{`{"input":{}}`, `[1]`, `{`} {
		if code, _ := post(t, ts.URL, http.MethodPost, bad); code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400", bad, code)
		}
	}
	if code, _ := post(t, ts.URL, http.MethodGet, ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET: HTTP %d, want 405", code)
	}
}

// An `http` agent in front of the backend answers like an echo agent
// (what runbench checks of its bridge-http target), over every protocol
// version and binding.
func TestBridgedEcho(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(handle))
	t.Cleanup(backend.Close)
	agent, err := simple.New(simple.Config{URL: backend.URL + "/echo"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close() })
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	host := server.NewHost(server.HostOptions{})
	host.Add(server.NewHandler(eng, "bridged", agent, a2a.AgentCard{
		Name: "bridged", Description: "d", Version: "1", Capabilities: a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
	}, server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	t.Cleanup(ts.Close)
	for _, o := range []bench.Options{
		{Protocol: bench.Protocol03, Binding: bench.BindingJSONRPC},
		{Protocol: bench.Protocol10, Binding: bench.BindingJSONRPC},
		{Protocol: bench.Protocol10, Binding: bench.BindingREST},
	} {
		o.URL, o.Payload = ts.URL+"/a2a/bridged", 16
		if err := bench.Verify(t.Context(), o); err != nil {
			t.Errorf("%s %s: %v", o.Protocol, o.Binding, err)
		}
	}
}
