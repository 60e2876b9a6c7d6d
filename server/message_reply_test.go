package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

// replyAgent answers a message directly (server.MessageResponder) with
// "you said TEXT" (messageId "reply-1" when the request's messageId starts
// with "fixed"), except: "task …" is left to the task path (Execute
// completes it with an artifact), "refuse" is -32602, "error" a plain
// error, "panic" panics, "bad-role", "bad-task", "bad-context" and
// "no-parts" are invalid answers.
type replyAgent struct {
	responded atomic.Int32 // Respond calls
	executed  atomic.Int32 // Execute calls
	mu        sync.Mutex
	seen      []server.Request // what Respond was given
}

func (a *replyAgent) Respond(ctx context.Context, req *server.Request) (*a2a.Message, error) {
	a.responded.Add(1)
	a.mu.Lock()
	a.seen = append(a.seen, *req)
	a.mu.Unlock()
	text := ""
	if len(req.Message.Parts) > 0 {
		if tp, ok := req.Message.Parts[0].(a2a.TextPart); ok {
			text = tp.Text
		}
	}
	m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart{Text: "you said " + text})
	m.MessageID = ""
	if strings.HasPrefix(req.Message.MessageID, "fixed") {
		m.MessageID = "reply-1"
	}
	switch {
	case strings.HasPrefix(text, "task"):
		return nil, nil
	case text == "refuse":
		return nil, a2a.InvalidParams("/params/message/parts", "I only take questions")
	case text == "error":
		return nil, errors.New("secret internal detail")
	case text == "panic":
		panic("boom in Respond")
	case text == "bad-role":
		m.Role = a2a.RoleUser
	case text == "bad-task":
		m.TaskID = "some-task"
	case text == "bad-context":
		m.ContextID = "another-context"
	case text == "no-parts":
		m.Parts = nil
	}
	return &m, nil
}

func (a *replyAgent) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	a.executed.Add(1)
	return t.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart{Text: "a task for " + req.Message.ContextID}}}, false, true)
}

type replyServer struct {
	*httptest.Server
	agent *replyAgent
	store store.Store
	logs  *syncBuffer
}

// newReplyServer hosts a replyAgent as "reply" (the default agent), its
// transport's log in logs.
func newReplyServer(t *testing.T) *replyServer {
	t.Helper()
	st := memory.New()
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	host := server.NewHost(server.HostOptions{Default: "reply", Transport: server.TransportOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))}})
	a := &replyAgent{}
	host.Add(server.NewHandler(eng, "reply", a, testCard("reply"), server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = eng.Close(ctx)
	})
	return &replyServer{Server: ts, agent: a, store: st, logs: logs}
}

// tasksOf counts the tasks stored for agent "reply".
func (s *replyServer) tasks(t *testing.T) int {
	t.Helper()
	page, err := s.store.ListTasks(context.Background(), store.TaskQuery{Agent: "reply", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Tasks)
}

// rawPost posts body to url with the headers and returns status, content
// type and body.
func rawPost(t *testing.T, url, body string, hdr ...string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestMessageReplyWire: an agent that answers with a Message (A2A 1.0
// §3.1.1) gets exactly that Message as the result of SendMessage, and a
// stream of exactly that one Message without an SSE id (§3.1.2,
// "Message-only stream"), over 1.0 JSON-RPC, 1.0 HTTP+JSON, 0.3 JSON-RPC
// and 0.3 HTTP+JSON, blocking or not; no task is stored.
func TestMessageReplyWire(t *testing.T) {
	t.Parallel()
	ts := newReplyServer(t)
	base := ts.URL + "/a2a/reply"
	msg10 := `{"messageId":"reply-1","contextId":"c-1","role":"ROLE_AGENT","parts":[{"text":"you said hi"}]}`
	msg03 := `{"kind":"message","messageId":"reply-1","role":"agent","parts":[{"kind":"text","text":"you said hi"}],"contextId":"c-1"}`
	msgREST03 := `{"messageId":"reply-1","contextId":"c-1","role":"ROLE_AGENT","content":[{"text":"you said hi"}]}`
	params10 := func(id, cfg string) string {
		return `{"message":{"messageId":"` + id + `","contextId":"c-1","role":"ROLE_USER","parts":[{"text":"hi"}]}` + cfg + `}`
	}
	params03 := func(id, cfg string) string {
		return `{"message":{"kind":"message","messageId":"` + id + `","contextId":"c-1","role":"user","parts":[{"kind":"text","text":"hi"}]}` + cfg + `}`
	}
	paramsREST03 := func(id, cfg string) string {
		return `{"message":{"messageId":"` + id + `","contextId":"c-1","role":"ROLE_USER","content":[{"text":"hi"}]}` + cfg + `}`
	}
	rpc := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
	}
	cases := []struct {
		name       string
		url        string
		body       func(id, cfg string) string
		hdr        []string
		wantSend   string
		streamURL  string
		streamBody func(id, cfg string) string
		wantFrame  string
		noBlock    string // a configuration that does not block
	}{
		{"1.0 JSON-RPC", base, func(id, cfg string) string { return rpc("SendMessage", params10(id, cfg)) }, []string{"A2A-Version", "1.0"},
			`{"jsonrpc":"2.0","id":7,"result":{"message":` + msg10 + `}}`,
			base, func(id, cfg string) string { return rpc("SendStreamingMessage", params10(id, cfg)) },
			`{"jsonrpc":"2.0","id":7,"result":{"message":` + msg10 + `}}`, `,"configuration":{"returnImmediately":true}`},
		{"1.0 HTTP+JSON", base + "/message:send", params10, []string{"A2A-Version", "1.0"},
			`{"message":` + msg10 + `}`,
			base + "/message:stream", params10,
			`{"message":` + msg10 + `}`, `,"configuration":{"returnImmediately":true}`},
		{"0.3 JSON-RPC", base, func(id, cfg string) string { return rpc("message/send", params03(id, cfg)) }, nil,
			`{"jsonrpc":"2.0","id":7,"result":` + msg03 + `}`,
			base, func(id, cfg string) string { return rpc("message/stream", params03(id, cfg)) },
			`{"jsonrpc":"2.0","id":7,"result":` + msg03 + `}`, `,"configuration":{"blocking":false}`},
		{"0.3 HTTP+JSON", base + "/v1/message:send", paramsREST03, nil,
			`{"message":` + msgREST03 + `}`,
			base + "/v1/message:stream", paramsREST03,
			`{"message":` + msgREST03 + `}`, `,"configuration":{"blocking":false}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Blocking (the default) and not: the same answer.
			for i, cfg := range []string{"", c.noBlock} {
				id := fmt.Sprintf("fixed-%s-%d", strings.ReplaceAll(c.name, " ", ""), i)
				code, ct, body := rawPost(t, c.url, c.body(id, cfg), c.hdr...)
				if code != 200 || !strings.HasPrefix(ct, "application/") || strings.TrimSpace(body) != c.wantSend {
					t.Fatalf("send%s: %d %s\n%s\nwant %s", cfg, code, ct, body, c.wantSend)
				}
			}
			// The same messageId again runs the agent again: nothing
			// was stored to answer it from.
			before := ts.agent.responded.Load()
			id := "fixed-" + strings.ReplaceAll(c.name, " ", "") + "-0"
			if code, _, body := rawPost(t, c.url, c.body(id, ""), c.hdr...); code != 200 || strings.TrimSpace(body) != c.wantSend {
				t.Fatalf("repeated send: %d %s", code, body)
			}
			if n := ts.agent.responded.Load() - before; n != 1 {
				t.Fatalf("a repeated messageId ran Respond %d times, want 1", n)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			frames := streamRaw(t, ctx, c.streamURL, c.streamBody("fixed-s-"+strings.ReplaceAll(c.name, " ", ""), ""), append([]string{"Accept", "text/event-stream"}, c.hdr...)...)
			if len(frames) != 1 || frames[0].id != "" || frames[0].data != c.wantFrame {
				t.Fatalf("stream: %d frames %+v\nwant one without id: %s", len(frames), frames, c.wantFrame)
			}
		})
	}
	if n := ts.tasks(t); n != 0 || ts.agent.executed.Load() != 0 {
		t.Fatalf("%d tasks stored, Execute ran %d times: want none", n, ts.agent.executed.Load())
	}
}
