package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

func newHost(t *testing.T) *httptest.Server {
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	host := server.NewHost(server.HostOptions{Transport: server.TransportOptions{Logger: testutil.Logger()}})
	host.Add(server.NewHandler(eng, "echo", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error { return nil }), card(), server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	t.Cleanup(func() { ts.Close(); eng.Close(context.Background()) })
	return ts
}

func TestInvalidUTF8TaskIDInPath(t *testing.T) {
	ts := newHost(t)
	resp, err := http.Get(ts.URL + "/a2a/echo/tasks/%ff/events")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	t.Logf("HTTP %d: %s", resp.StatusCode, b)
	if !jsontext.Value(b).IsValid() {
		t.Errorf("response body is not valid JSON")
	}
}

func TestLoneSurrogateTaskID(t *testing.T) {
	ts := newHost(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"\ud800"}}`
	resp, err := http.Post(ts.URL+"/a2a/echo", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	t.Logf("HTTP %d: %s", resp.StatusCode, b)
	if !jsontext.Value(b).IsValid() {
		t.Errorf("response body is not valid JSON")
	}
}
