package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// A retired agent (an agent removed whose tasks stay readable) answers a
// new message over every binding and version exactly as the Host answers
// an unknown agent, and stores nothing; its tasks stay readable, and the
// 404s do not list it.
func TestRetiredAgentAnswersAsUnknown(t *testing.T) {
	t.Parallel()
	eng := servertest.Engine(t, server.EngineOptions{})
	testutil.CloseAtEnd(t, eng.Close)
	var runs atomic.Int32
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		runs.Add(1)
		return u.Complete(ctx, "ok")
	})
	host := servertest.Host("",
		server.NewHandler(eng, "echo", agent, card(), server.HandlerOptions{}),
		server.NewHandler(eng, "gone", agent, card(), server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	t.Cleanup(ts.Close)

	do := func(method, path, version, body string) (int, string) {
		t.Helper()
		var hdr []string
		if version != "" {
			hdr = []string{"A2A-Version", version}
		}
		resp, b := testutil.Send(t, method, ts.URL+path, body, hdr...)
		return resp.StatusCode, string(b)
	}
	const send03 = `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`
	code, body := do("POST", "/a2a/gone", "", send03)
	var sent struct {
		Result struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &sent); err != nil || code != 200 || sent.Result.ID == "" {
		t.Fatalf("send before the agent is retired: %d %s", code, body)
	}

	host.Add(server.NewHandler(eng, "gone", agent, card(), server.HandlerOptions{Retired: true}))
	runs.Store(0)
	_, unknown := do("POST", "/a2a/nosuch", "", send03)
	want := strings.ReplaceAll(unknown, `\"nosuch\"`, `\"gone\"`)
	if !strings.Contains(want, `"name":"echo"`) || strings.Contains(want, `"name":"gone"`) {
		t.Fatalf("the unknown agent's 404 lists the retired agent, or not echo: %s", unknown)
	}
	msg10 := `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	for _, c := range []struct{ name, path, version, body string }{
		{"JSON-RPC 0.3 message/send", "/a2a/gone", "", send03},
		{"JSON-RPC 0.3 message/stream", "/a2a/gone", "", strings.Replace(send03, "message/send", "message/stream", 1)},
		{"JSON-RPC 1.0 SendMessage", "/a2a/gone", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + msg10 + `}`},
		{"JSON-RPC 1.0 SendStreamingMessage", "/a2a/gone", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":` + msg10 + `}`},
		{"JSON-RPC batch with a send", "/a2a/gone", "", `[{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}},` + send03 + `]`},
		{"HTTP+JSON 1.0 message:send", "/a2a/gone/message:send", "1.0", msg10},
		{"HTTP+JSON 1.0 message:stream", "/a2a/gone/message:stream", "1.0", msg10},
		{"HTTP+JSON 0.3 message:send", "/a2a/gone/v1/message:send", "", msg10},
		{"HTTP+JSON 0.3 message:stream", "/a2a/gone/v1/message:stream", "", msg10},
	} {
		code, body := do("POST", c.path, c.version, c.body)
		if code != http.StatusNotFound || body != want {
			t.Errorf("%s: HTTP %d %s, want 404 %s", c.name, code, body, want)
		}
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("the retired agent ran %d times", n)
	}
	// Nothing was stored: the retired agent lists its one task, which
	// stays readable.
	code, body = do("GET", "/a2a/gone/tasks", "1.0", "")
	var list struct {
		Tasks []struct {
			ID string `json:"id"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || code != 200 || len(list.Tasks) != 1 || list.Tasks[0].ID != sent.Result.ID {
		t.Fatalf("ListTasks of the retired agent: %d %s", code, body)
	}
	code, body = do("POST", "/a2a/gone", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"`+sent.Result.ID+`"}}`)
	if code != 200 || !strings.Contains(body, `"state":"completed"`) {
		t.Fatalf("tasks/get of the retired agent's task: %d %s", code, body)
	}
}
