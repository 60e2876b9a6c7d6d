package remote_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/remote"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// testTimeout bounds every test's calls: a hang fails, it does not stall.
const testTimeout = 30 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// host is an a2abridge server on a loopback httptest server.
type host struct {
	*httptest.Server
}

// startHost serves agents (name → agent, card) on 127.0.0.1; wrap, if
// set, wraps the Host's handler.
func startHost(t *testing.T, wrap func(http.Handler) http.Handler, agents map[string]hostedAgent) *host {
	t.Helper()
	eng := servertest.Engine(t, server.EngineOptions{})
	h := servertest.Host("")
	for name, ag := range agents {
		h.Add(server.NewHandler(eng, name, ag.agent, ag.card, server.HandlerOptions{}))
	}
	var hd http.Handler = h
	if wrap != nil {
		hd = wrap(h)
	}
	ts := testutil.Serve(t, hd, eng.Close)
	return &host{Server: ts}
}

type hostedAgent struct {
	agent server.Agent
	card  a2a.AgentCard
}

func (h *host) agentURL(name string) string { return h.URL + "/a2a/" + name }

func testCard(name string, streaming bool) a2a.AgentCard {
	return a2a.AgentCard{Name: name, Description: "test agent " + name, Version: "1.2.3",
		Provider:          &a2a.AgentProvider{Organization: "tests", URL: "https://example.com"},
		Capabilities:      a2a.AgentCapabilities{Streaming: streaming},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{ID: name, Name: name, Description: "test skill", Tags: []string{"test"}}}}
}

// gateAgent is the remote's agent. By the text of the message:
//
//	"chunks N": working "started", then N artifact chunks ("c0", "c1", …
//	  of artifact "out"), each after one receive on gate, then completed
//	  "sent N chunks"
//	"ask": input-required "turn 1?"; then each next message: input-required
//	  "turn K?" until "bye": completed "bye after K turns"
//	"hang": working "hanging", then waits until canceled
//	"fail": failed "remote says no"
//
// Every execution sends its task id and message on execs.
type gateAgent struct {
	gate     chan struct{}
	execs    chan execution
	canceled chan string
}

type execution struct {
	taskID, contextID string
	msg               a2a.Message
}

func newGateAgent() *gateAgent {
	return &gateAgent{gate: make(chan struct{}), execs: make(chan execution, 64), canceled: make(chan string, 16)}
}

func (g *gateAgent) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	g.execs <- execution{taskID: req.Task.ID, contextID: req.Task.ContextID, msg: req.Message}
	text := testutil.Text(req.Message.Parts)
	turns := 0
	for _, m := range req.Task.History {
		if m.Role == a2a.RoleUser {
			turns++
		}
	}
	var n int
	switch {
	case turns > 1 && text == "bye":
		return t.Complete(ctx, fmt.Sprintf("bye after %d turns", turns))
	case turns > 1 || text == "ask":
		return t.RequireInput(ctx, fmt.Sprintf("turn %d?", turns))
	case text == "hang":
		if err := t.Working(ctx, "hanging"); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	case text == "fail":
		return t.Fail(ctx, "remote says no")
	case func() bool { _, err := fmt.Sscanf(text, "chunks %d", &n); return err == nil }():
		if err := t.Working(ctx, "started"); err != nil {
			return err
		}
		for i := range n {
			select {
			case <-g.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
			art := a2a.Artifact{ArtifactID: "out", Name: "out", Parts: []a2a.Part{a2a.NewTextPart(fmt.Sprintf("c%d", i))}}
			if err := t.AddArtifact(ctx, art, i > 0, i == n-1); err != nil {
				return err
			}
		}
		return t.Complete(ctx, fmt.Sprintf("sent %d chunks", n))
	}
	return t.Fail(ctx, "unknown command "+text)
}

func (g *gateAgent) Cancel(ctx context.Context, task a2a.Task) error {
	g.canceled <- task.ID
	return nil
}

// front is a2abridge hosting a remote.Agent as "front".
type front struct {
	*host
	agent *remote.Agent
}

func startFront(t *testing.T, cfg remote.Config) *front {
	t.Helper()
	ag, err := remote.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ag.Close() })
	card := testCard("front", true)
	return &front{agent: ag, host: startHost(t, nil, map[string]hostedAgent{"front": {ag, card}})}
}

// dial is a client of url with opts.
func dial(t *testing.T, ctx context.Context, url string, opts client.Options) *client.Client {
	t.Helper()
	c, err := client.Dial(ctx, url, opts)
	if err != nil {
		t.Fatalf("client.Dial(%s): %v", url, err)
	}
	return c
}

func sendTask(t *testing.T, ctx context.Context, c *client.Client, p a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	return testutil.SendTask(t, ctx, c, p)
}

func artifactText(task *a2a.Task, id string) string {
	for _, a := range task.Artifacts {
		if a.ArtifactID == id {
			return testutil.Text(a.Parts)
		}
	}
	return ""
}

// puller reads a stream one event at a time.
type puller struct {
	next func() (client.StreamEvent, error, bool)
	stop func()
}

func pull(t *testing.T, seq iter.Seq2[client.StreamEvent, error]) *puller {
	next, stop := iter.Pull2(seq)
	t.Cleanup(stop)
	return &puller{next: next, stop: stop}
}

// until returns the events up to and including the first that match
// reports true for; it fails the test if the stream ends first.
func (p *puller) until(t *testing.T, what string, match func(a2a.Event) bool) []a2a.Event {
	t.Helper()
	var seen []a2a.Event
	for {
		ev, err, ok := p.next()
		if !ok {
			t.Fatalf("stream ended before %s; saw %s", what, describe(seen))
		}
		if err != nil {
			t.Fatalf("stream error before %s: %v; saw %s", what, err, describe(seen))
		}
		seen = append(seen, ev.Event)
		if match(ev.Event) {
			return seen
		}
	}
}

func isChunk(text string) func(a2a.Event) bool {
	return func(e a2a.Event) bool {
		a, ok := e.(*a2a.TaskArtifactUpdateEvent)
		return ok && testutil.Text(a.Artifact.Parts) == text
	}
}

func isState(s a2a.TaskState) func(a2a.Event) bool {
	return func(e a2a.Event) bool {
		u, ok := e.(*a2a.TaskStatusUpdateEvent)
		return ok && u.Status.State == s
	}
}

func isStatusText(text string) func(a2a.Event) bool {
	return func(e a2a.Event) bool {
		u, ok := e.(*a2a.TaskStatusUpdateEvent)
		return ok && testutil.StatusText(u.Status) == text
	}
}

func describe(evs []a2a.Event) string {
	var parts []string
	for _, e := range evs {
		switch v := e.(type) {
		case *a2a.Task:
			parts = append(parts, "task("+v.Status.State.String()+")")
		case *a2a.TaskStatusUpdateEvent:
			parts = append(parts, fmt.Sprintf("status(%s %q)", v.Status.State, testutil.StatusText(v.Status)))
		case *a2a.TaskArtifactUpdateEvent:
			parts = append(parts, fmt.Sprintf("artifact(%s %q append=%v last=%v)", v.Artifact.ArtifactID, testutil.Text(v.Artifact.Parts), v.Append, v.LastChunk))
		case *a2a.Message:
			parts = append(parts, fmt.Sprintf("message(%q)", testutil.Text(v.Parts)))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// startRawRemote is a minimal A2A 0.3 JSON-RPC server written by hand: its
// card (streaming as given) at /.well-known/agent-card.json, and
// message/send and message/stream answered with the agent Message "direct
// answer", or with the JSON-RPC error errJSON when set.
func startRawRemote(t *testing.T, streaming bool, errJSON string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	var ts *httptest.Server
	mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name":"raw","description":"hand-written","url":%q,"version":"1","protocolVersion":"0.3.0",
"preferredTransport":"JSONRPC","capabilities":{"streaming":%v},"defaultInputModes":["text/plain"],
"defaultOutputModes":["text/plain"],"skills":[{"id":"raw","name":"raw","description":"raw","tags":["raw"]}]}`, ts.URL+"/rpc", streaming)
	})
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		result := `"result":{"kind":"message","messageId":"raw-1","role":"agent","parts":[{"kind":"text","text":"direct answer"}]}`
		if errJSON != "" {
			result = `"error":` + errJSON
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, req.ID, result)
		if req.Method == "message/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", body)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	})
	ts = httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// scriptedRemote is a hand-written A2A 0.3 JSON-RPC server whose
// streaming calls (message/stream, tasks/resubscribe) are answered, in
// turn, with the SSE results of scripts (each a list of 0.3 event JSON
// documents); it records each call as "method taskId".
type scriptedRemote struct {
	*httptest.Server
	mu      sync.Mutex
	scripts [][]string
	calls   []string
}

func startScriptedRemote(t *testing.T, scripts ...[]string) *scriptedRemote {
	t.Helper()
	s := &scriptedRemote{scripts: scripts}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name":"scripted","description":"scripted","url":%q,"version":"1","protocolVersion":"0.3.0",
"preferredTransport":"JSONRPC","capabilities":{"streaming":true},"defaultInputModes":["text/plain"],
"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"s","tags":["s"]}]}`, s.URL+"/rpc")
	})
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ID      string `json:"id"`
				Message struct {
					TaskID string `json:"taskId"`
				} `json:"message"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.calls = append(s.calls, strings.TrimSpace(req.Method+" "+req.Params.ID+req.Params.Message.TaskID))
		var script []string
		if len(s.scripts) > 0 {
			script, s.scripts = s.scripts[0], s.scripts[1:]
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range script {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", req.ID, ev)
		}
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *scriptedRemote) recorded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Scripted 0.3 events of remote task R in context C.
func rTask(state, text string) string {
	return fmt.Sprintf(`{"kind":"task","id":"R","contextId":"C","status":{"state":%q%s}}`, state, rMsg(text))
}

func rStatus(state, text string, final bool) string {
	return fmt.Sprintf(`{"kind":"status-update","taskId":"R","contextId":"C","final":%v,"status":{"state":%q%s}}`, final, state, rMsg(text))
}

func rMsg(text string) string {
	if text == "" {
		return ""
	}
	return fmt.Sprintf(`,"message":{"kind":"message","messageId":%q,"role":"agent","taskId":"R","contextId":"C","parts":[{"kind":"text","text":%q}]}`, "m-"+text, text)
}
