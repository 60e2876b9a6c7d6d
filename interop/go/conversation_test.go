package interop

// The conversation bridge and paired participants against
// code nobody here wrote. `a2abridge serve --config` (the binary) hosts
//
//	meeting   a named scenario: the client ("you", external), "js" (kind
//	          a2a: the echo agent of ../js/peer-server-v1.mjs, a server
//	          built on @a2a-js/sdk 1.3.0) and "notes" (kind http: a
//	          simple-dialect backend in this test that answers every turn
//	          with a text and a file by value), round-robin
//	/api/bridge/{config64}/a2a   ad-hoc scenarios (kinds echo and a2a, the
//	          JS peer's URL allowed)
//	/api/pairs                   paired participants
//
// and the official clients drive them:
//
//   - a2a-go v2 (A2A 1.0, over its default binding and over gRPC) and
//     a2a-go v0.3.15 (A2A 0.3 JSON-RPC) here, and
//     @a2a-js/sdk 1.3.0 and 0.3.14 through ../js/conversation-clients.mjs,
//     as the external participant: a streamed first turn with a file by
//     value (an artifact per internal turn, input-required at the client's
//     turn), a streamed continuation of the same task, tasks/get (the
//     whole history; every file a URL below /api/attachments that serves
//     the bytes, none inline: the client's and the http participant's),
//     cancel (a final system message, outcome canceled), and a message to
//     the ended conversation (refused);
//   - a pair: side A with the a2a-go v2 client here, side B with the
//     @a2a-js/sdk 1.3.0 client (conversation-clients.mjs pair-b), several
//     turns, B ends it, both tasks completed;
//   - bad ad-hoc scenarios: each validation error class answers 400 on
//     diag (naming the field) and a JSON-RPC error on the endpoint, and a
//     scenario naming a kind or a URL the operator did not allow.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	bconv "github.com/a2abridge/a2abridge/bridge/conversation"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	client03 "github.com/a2aproject/a2a-go/a2aclient"
	card03 "github.com/a2aproject/a2a-go/a2aclient/agentcard"
	a2av2 "github.com/a2aproject/a2a-go/v2/a2a"
	clientv2 "github.com/a2aproject/a2a-go/v2/a2aclient"
)

// convNotesFile is what the notes participant answers as a file by value.
var convNotesFile = []byte("notes\x00\x01\xfe binary")

// convClientFile is what the Go clients send as a file by value.
var convClientFile = []byte("client file from Go \x00\xff")

const convConfig = `agents:
  meeting:
    kind: conversation
    scenario:
      title: Meeting
      scenarioId: interop-meeting
      agents:
        - {id: you, displayName: You, external: true}
        - {id: js, displayName: JS echo, kind: a2a, config: {url: "%[1]s/a2a/echo"}}
        - {id: notes, displayName: Notes, kind: http, config: {url: "%[2]s/notes"}}
      startingAgentId: you
      rules: {maxTurns: 40}
conversations:
  adhoc: true
  kinds: [echo, a2a]
  urls: ["%[1]s/a2a"]
  attachments: {max_bytes: 1MiB}
pairs:
  enabled: true
`

// convNotesBackend is the http participant: every call is answered with
// a text naming the call and convNotesFile by value.
func convNotesBackend(t *testing.T) string {
	t.Helper()
	var calls atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			TaskID string `json:"task_id"`
			Input  any    `json:"input"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil || r.URL.Path != "/notes" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		n := calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"task_id": req.TaskID, "status": "success", "error": nil, "output": map[string]any{
			"text":  fmt.Sprintf("notes %d", n),
			"files": []any{map[string]any{"name": "notes.bin", "mediaType": "application/x-notes", "bytes": base64.StdEncoding.EncodeToString(convNotesFile)}},
		}})
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestConversation: see the file comment.
func TestConversation(t *testing.T) {
	js := v1StartJSPeerArgs(t)
	if js.skip != "" {
		skipOrFail(t, js.skip)
	}
	notes := convNotesBackend(t)
	cfg := filepath.Join(t.TempDir(), "conversation.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, convConfig, js.base, notes), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, "--config", cfg, "--memory").base
	meeting := srv + "/a2a/meeting"

	t.Run("a2a-go-v2", func(t *testing.T) {
		t.Parallel()
		convV2(t, srv, meeting, gwV2Client)
	})
	t.Run("a2a-go-v2-grpc", func(t *testing.T) {
		t.Parallel()
		convV2(t, srv, meeting, gwV2GRPCClient)
	})
	t.Run("a2a-go-v0.3", func(t *testing.T) {
		t.Parallel()
		convV03(t, srv, meeting)
	})
	t.Run("js-clients", func(t *testing.T) {
		t.Parallel()
		out, err := convNode(t, "conversation", meeting)
		if err != nil {
			t.Fatalf("conversation-clients.mjs conversation: %v\n%s", err, out)
		}
		t.Logf("%s", out)
	})
	t.Run("pair-go-js", func(t *testing.T) {
		t.Parallel()
		convPair(t, srv)
	})
	t.Run("bad-scenarios", func(t *testing.T) {
		t.Parallel()
		convBad(t, srv, js.base)
	})
}

// convNode runs ../js/conversation-clients.mjs with args.
func convNode(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: %v", err)
	}
	dir, _ := filepath.Abs(filepath.Join("..", "js"))
	ctx, cancel := context.WithTimeout(t.Context(), 2*callTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"conversation-clients.mjs"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CONV_NOTES_B64="+base64.StdEncoding.EncodeToString(convNotesFile))
	return cmd.CombinedOutput()
}

// convGet fetches an attachment URL.
func convGet(t *testing.T, uri string) ([]byte, string) {
	t.Helper()
	resp, err := http.Get(uri)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", uri, resp.StatusCode, b)
	}
	return b, resp.Header.Get("Content-Type")
}

// ---------------------------------------------------------------- a2a-go v2

// convV2 drives the scenario with the a2a-go v2 client dial makes (over
// its default binding, or over gRPC).
func convV2(t *testing.T, srv, meeting string, dial func(*testing.T, context.Context, string) *clientv2.Client) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*callTimeout)
	defer cancel()
	c := dial(t, ctx, meeting)
	turn := func(taskID a2av2.TaskID, text string, parts ...*a2av2.Part) a2av2.TaskID {
		t.Helper()
		req := v1Text(text, taskID, "")
		req.Message.Parts = append(req.Message.Parts, parts...)
		evs, err := collectN(c.SendStreamingMessage(ctx, req), 100)
		if err != nil {
			t.Fatalf("stream: %v (events %d)", err, len(evs))
		}
		var speakers []string
		var last *a2av2.TaskStatusUpdateEvent
		for _, ev := range evs {
			switch e := ev.(type) {
			case *a2av2.TaskArtifactUpdateEvent:
				speakers = append(speakers, fmt.Sprint(e.Artifact.Metadata[bconv.MetaParticipantID]))
				for _, p := range e.Artifact.Parts {
					if p.Raw() != nil {
						t.Fatalf("an artifact carries a file inline: %+v", e.Artifact)
					}
				}
			case *a2av2.TaskStatusUpdateEvent:
				last = e
			}
		}
		if strings.Join(speakers, " ") != "js notes" {
			t.Fatalf("turn %q: artifacts of %q, want js notes", text, speakers)
		}
		if last == nil || last.Status.State != a2av2.TaskStateInputRequired || !strings.Contains(v1StatusText(last.Status), "You (you)") {
			t.Fatalf("turn %q: last status %+v, want input-required naming You", text, last)
		}
		if taskID != "" && last.TaskID != taskID {
			t.Fatalf("continuation on task %s, want %s", last.TaskID, taskID)
		}
		return last.TaskID
	}
	file := &a2av2.Part{Content: a2av2.Raw(convClientFile), Filename: "from-go.bin", MediaType: "application/x-go-test"}
	id := turn("", "hello from Go", file)
	turn(id, "and again")

	task, err := c.GetTask(ctx, &a2av2.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	var speakers []string
	var urls []string
	for _, m := range task.History {
		if m.Role == a2av2.MessageRoleUser {
			speakers = append(speakers, "you")
		} else if p, ok := m.Metadata[bconv.MetaParticipantID].(string); ok {
			speakers = append(speakers, p)
		}
		for _, p := range m.Parts {
			if p.Raw() != nil {
				t.Fatalf("the history carries a file inline: %+v", m)
			}
			if u := string(p.URL()); u != "" {
				urls = append(urls, u)
			}
		}
	}
	if got := strings.Join(speakers, " "); got != "you js notes you js notes" || len(task.Artifacts) != 4 || task.Status.State != a2av2.TaskStateInputRequired {
		t.Fatalf("tasks/get: speakers %q, %d artifacts, %s", got, len(task.Artifacts), task.Status.State)
	}
	if len(urls) < 3 || !strings.HasPrefix(urls[0], srv+"/api/attachments/") {
		t.Fatalf("file URLs in the history: %q", urls)
	}
	if b, ct := convGet(t, urls[0]); !bytes.Equal(b, convClientFile) || ct != "application/x-go-test" {
		t.Fatalf("the client's file serves %q (%s)", b, ct)
	}
	if b, ct := convGet(t, urls[len(urls)-1]); !bytes.Equal(b, convNotesFile) || ct != "application/x-notes" {
		t.Fatalf("the notes file serves %q (%s)", b, ct)
	}

	ct, err := c.CancelTask(ctx, &a2av2.CancelTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if ct.Status.State != a2av2.TaskStateCanceled || ct.Status.Message == nil || ct.Status.Message.Metadata[bconv.MetaOutcome] != "canceled" {
		t.Fatalf("cancel: %+v", ct.Status)
	}
	// Continuing an ended conversation: UnsupportedOperation (-32004, as
	// for any task in a terminal state, A2A 1.0 §3.1.1).
	if _, err := c.SendMessage(ctx, v1Text("more", id, "")); !errors.Is(err, a2av2.ErrUnsupportedOperation) {
		t.Fatalf("a message to the canceled conversation: %v, want UnsupportedOperation", err)
	}
}

// ---------------------------------------------------------------- a2a-go v0.3

func convV03(t *testing.T, srv, meeting string) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*callTimeout)
	defer cancel()
	card, err := card03.DefaultResolver.Resolve(ctx, srv, card03.WithPath("/a2a/meeting/.well-known/agent-card.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client03.NewFromCard(ctx, card, client03.WithConfig(client03.Config{PreferredTransports: []a2a03.TransportProtocol{a2a03.TransportProtocolJSONRPC}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	turn := func(taskID a2a03.TaskID, text string, parts ...a2a03.Part) a2a03.TaskID {
		t.Helper()
		m := a2a03.NewMessage(a2a03.MessageRoleUser, append([]a2a03.Part{a2a03.TextPart{Text: text}}, parts...)...)
		m.TaskID = taskID
		evs, err := collect(c.SendStreamingMessage(ctx, &a2a03.MessageSendParams{Message: m}))
		if err != nil {
			t.Fatalf("stream: %v (%s)", err, describe(evs))
		}
		var speakers []string
		var last *a2a03.TaskStatusUpdateEvent
		for _, ev := range evs {
			switch e := ev.(type) {
			case *a2a03.TaskArtifactUpdateEvent:
				speakers = append(speakers, fmt.Sprint(e.Artifact.Metadata[bconv.MetaParticipantID]))
				for _, p := range e.Artifact.Parts {
					if fp, ok := p.(a2a03.FilePart); ok {
						if _, inline := fp.File.(a2a03.FileBytes); inline {
							t.Fatalf("an artifact carries a file inline: %+v", e.Artifact)
						}
					}
				}
			case *a2a03.TaskStatusUpdateEvent:
				last = e
			}
		}
		if strings.Join(speakers, " ") != "js notes" || last == nil || last.Status.State != a2a03.TaskStateInputRequired {
			t.Fatalf("turn %q: artifacts of %q, events %s", text, speakers, describe(evs))
		}
		return last.TaskID
	}
	file := a2a03.FilePart{File: a2a03.FileBytes{FileMeta: a2a03.FileMeta{Name: "from-go03.bin", MimeType: "application/x-go03-test"},
		Bytes: base64.StdEncoding.EncodeToString(convClientFile)}}
	id := turn("", "hello from a2a-go v0.3", file)
	if again := turn(id, "again"); again != id {
		t.Fatalf("continuation on %s, want %s", again, id)
	}
	task, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, m := range task.History {
		for _, p := range m.Parts {
			if fp, ok := p.(a2a03.FilePart); ok {
				u, isURI := fp.File.(a2a03.FileURI)
				if !isURI {
					t.Fatalf("the history carries a file inline: %+v", fp)
				}
				uris = append(uris, u.URI)
			}
		}
	}
	if len(task.History) < 6 || len(uris) < 3 {
		t.Fatalf("tasks/get: %d messages, file URIs %q", len(task.History), uris)
	}
	if b, ct := convGet(t, uris[0]); !bytes.Equal(b, convClientFile) || ct != "application/x-go03-test" {
		t.Fatalf("the client's file serves %q (%s)", b, ct)
	}
	ct, err := c.CancelTask(ctx, &a2a03.TaskIDParams{ID: id})
	if err != nil || ct.Status.State != a2a03.TaskStateCanceled || ct.Status.Message == nil || ct.Status.Message.Metadata[bconv.MetaOutcome] != "canceled" {
		t.Fatalf("cancel: %+v %v", ct, err)
	}
	m := a2a03.NewMessage(a2a03.MessageRoleUser, a2a03.TextPart{Text: "more"})
	m.TaskID = id
	if _, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: m}); !errors.Is(err, a2a03.ErrUnsupportedOperation) {
		t.Fatalf("message/send to the canceled conversation: %v, want UnsupportedOperation (-32004)", err)
	}
}

// ---------------------------------------------------------------- the pair

func convPair(t *testing.T, srv string) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*callTimeout)
	defer cancel()
	resp, err := http.Post(srv+"/api/pairs", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		ID   string
		A, B struct{ URL, Card string }
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(b, &p); err != nil || resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK || p.A.URL == "" || p.B.URL == "" {
		t.Fatalf("POST /api/pairs: %d %s (%v)", resp.StatusCode, b, err)
	}
	const turns = 3
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := convNode(t, "pair-b", p.B.URL, fmt.Sprint(turns))
		done <- result{out, err}
	}()
	a := gwV2Client(t, ctx, p.A.URL)
	var id a2av2.TaskID
	for i := 1; i <= turns; i++ {
		want, state := fmt.Sprintf("B says %d", i), a2av2.TaskStateInputRequired
		if i == 2 {
			// One turn streamed: the Task, then only status and artifact
			// updates (A2A 1.0 §3.1.2), B's answer among them, ending at
			// input-required.
			evs, err := collectN(a.SendStreamingMessage(ctx, v1Text(fmt.Sprintf("A says %d", i), id, "")), 50)
			if err != nil {
				t.Fatalf("A's streamed turn: %v after %s", err, v1Describe(evs))
			}
			heard, last := "", a2av2.TaskState("")
			for _, ev := range evs {
				switch e := ev.(type) {
				case *a2av2.Task, *a2av2.TaskStatusUpdateEvent:
					if st, ok := e.(*a2av2.TaskStatusUpdateEvent); ok {
						last = st.Status.State
					}
				case *a2av2.TaskArtifactUpdateEvent:
					heard = v1TextOf(e.Artifact.Parts)
				default:
					t.Fatalf("A's streamed turn: a %T event: %s", ev, v1Describe(evs))
				}
			}
			if heard != want || last != state {
				t.Fatalf("A's streamed turn: heard %q, ended %s: %s", heard, last, v1Describe(evs))
			}
			continue
		}
		task := v1SendTask(t, ctx, a, v1Text(fmt.Sprintf("A says %d", i), id, ""))
		id = task.ID
		heard := ""
		if n := len(task.Artifacts); n > 0 {
			heard = v1TextOf(task.Artifacts[n-1].Parts)
		}
		if i == turns {
			want, state = want+", bye", a2av2.TaskStateCompleted
		}
		if heard != want || task.Status.State != state {
			r := <-done
			t.Fatalf("A's turn %d: heard %q in state %s, want %q in %s\nside B:\n%s%v", i, heard, task.Status.State, want, state, r.out, r.err)
		}
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("side B (conversation-clients.mjs pair-b): %v\n%s", r.err, r.out)
	}
	t.Logf("side B: %s", r.out)
}

// ---------------------------------------------------------------- bad scenarios

func convBad(t *testing.T, srv, jsBase string) {
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	ok := map[string]any{"title": "Ad hoc", "startingAgentId": "me", "agents": []any{
		map[string]any{"id": "me", "external": true},
		map[string]any{"id": "js", "kind": "a2a", "config": map[string]any{"url": jsBase + "/a2a/echo"}},
	}}
	with := func(agents ...any) map[string]any {
		s := map[string]any{"title": "Bad", "startingAgentId": "me", "agents": append([]any{map[string]any{"id": "me", "external": true}}, agents...)}
		return s
	}
	cases := []struct {
		name, config64, field string
		says                  string // in the error, when set
	}{
		{"bad base64", "!!not-base64!!", "config64", ""},
		{"bad JSON", base64.RawURLEncoding.EncodeToString([]byte(`{"title":`)), "scenario", ""},
		{"unknown kind", enc(with(map[string]any{"id": "x", "kind": "teleport"})), "agents[1].kind", `unknown kind "teleport"`},
		{"unknown config key", enc(with(map[string]any{"id": "x", "kind": "echo", "config": map[string]any{"bogus": 1}})), "agents[1].config.bogus", `unknown key "bogus"`},
		{"duplicate ids", enc(with(map[string]any{"id": "me", "kind": "echo"})), "agents[1].id", ""},
		{"startingAgentId not among the agents", enc(map[string]any{"title": "T", "startingAgentId": "ghost", "agents": []any{
			map[string]any{"id": "me", "external": true}, map[string]any{"id": "e", "kind": "echo"}}}), "startingAgentId", ""},
		{"over the size limit", strings.Repeat("A", 40000), "config64", ""},
		{"kind not allowed (exec)", enc(with(map[string]any{"id": "x", "kind": "exec", "config": map[string]any{"command": []any{"touch", "/tmp/pwned"}}})), "agents[1].kind", "is not allowed"},
		{"URL not allowed", enc(with(map[string]any{"id": "x", "kind": "a2a", "config": map[string]any{"url": "http://169.254.169.254/latest"}})), "agents[1].config.url", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, err := http.Get(srv + "/api/bridge/" + c.config64 + "/a2a/diag")
			if err != nil {
				t.Fatal(err)
			}
			var e struct{ Error, Field string }
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != http.StatusBadRequest || e.Field != c.field || e.Error == "" || !strings.Contains(e.Error, c.says) {
				t.Fatalf("diag: %d %s, want 400 naming %s", resp.StatusCode, b, c.field)
			}
			// The endpoint: a JSON-RPC error for the official client.
			card := &a2a03.AgentCard{Name: "bad", URL: srv + "/api/bridge/" + c.config64 + "/a2a", PreferredTransport: a2a03.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0"}
			cl, err := client03.NewFromCard(t.Context(), card)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Destroy()
			if _, err := cl.SendMessage(t.Context(), userText("hi")); err == nil || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("message/send to a bad scenario: %v, want an error naming %s", err, c.field)
			}
		})
	}
	// The good one works with the official client.
	t.Run("allowed", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		u := srv + "/api/bridge/" + enc(ok) + "/a2a"
		c := gwV2Client(t, ctx, u)
		task := v1SendTask(t, ctx, c, v1Text("hi", "", ""))
		if task.Status.State != a2av2.TaskStateInputRequired || len(task.Artifacts) != 1 || !strings.Contains(v1ArtifactText(task), "hi") {
			t.Fatalf("ad-hoc: %s, artifacts %q", task.Status.State, v1ArtifactText(task))
		}
	})
}
