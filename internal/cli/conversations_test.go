package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/conversation"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// conversationConfig is a serve config with a named scenario (an echo
// and an exec participant, round-robin) and ad-hoc scenarios allowed for
// echo and chat.
const conversationServeConfig = `agents:
  relay:
    kind: conversation
    scenario:
      title: Relay
      scenarioId: relay-test
      agents:
        - {id: you, displayName: You, external: true}
        - {id: echo, displayName: Echo, kind: echo}
        - {id: shout, displayName: Shouter, kind: exec, config: {command: [tr, a-z, A-Z], env: [PATH]}}
      startingAgentId: you
      rules: {maxTurns: 12}
conversations:
  adhoc: true
  kinds: [echo, chat]
  urls: [http://127.0.0.1:1/allowed]
`

// streamTurn sends text (continuing taskID when set) as a stream and
// returns the task id, the texts of the artifact-updates (as
// "participantId:text") and the last state.
func streamTurn(t *testing.T, c *client.Client, taskID, text string) (string, []string, a2a.TaskState, string) {
	t.Helper()
	var arts []string
	var state a2a.TaskState
	status := ""
	for ev, err := range c.SendStreamingMessage(context.Background(), testutil.UserMessage(text, taskID)) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch e := ev.Event.(type) {
		case *a2a.Task:
			taskID, state = e.ID, e.Status.State
		case *a2a.TaskArtifactUpdateEvent:
			arts = append(arts, fmt.Sprintf("%v:%s", e.Artifact.Metadata[conversation.MetaParticipantID], strings.TrimSpace(testutil.Text(e.Artifact.Parts))))
		case *a2a.TaskStatusUpdateEvent:
			state = e.Status.State
			if e.Status.Message != nil {
				if tp, ok := e.Status.Message.Parts[0].Content.(a2a.Text); ok {
					status = string(tp)
				}
			}
		}
	}
	return taskID, arts, state, status
}

// TestServeConversations runs serve with a named scenario and an ad-hoc
// one and holds conversations through our client over JSON-RPC and
// HTTP+JSON, in both protocol versions.
func TestServeConversations(t *testing.T) {
	if _, err := exec.LookPath("tr"); err != nil {
		t.Skip("tr is not on PATH")
	}
	base := startServe(t, "--config", writeConfig(t, conversationServeConfig))
	ctx := context.Background()

	// The index of named scenarios.
	var index struct {
		Scenarios []struct{ Name, Title, ScenarioID, URL, Card string }
		AdHoc     bool
	}
	if code := getJSON(t, base+"/api/bridge", &index); code != 200 || len(index.Scenarios) != 1 || index.Scenarios[0].Name != "relay" ||
		index.Scenarios[0].Card != base+"/a2a/relay/.well-known/agent-card.json" || index.Scenarios[0].ScenarioID != "relay-test" || !index.AdHoc {
		t.Fatalf("GET /api/bridge: %d %+v", code, index)
	}

	for _, bind := range testutil.Interfaces {
		t.Run("named/"+bind.Protocol+"/"+bind.Binding, func(t *testing.T) {
			c, err := client.Dial(ctx, base+"/a2a/relay", client.Options{Protocol: bind.Protocol, Binding: bind.Binding})
			if err != nil {
				t.Fatal(err)
			}
			if card := c.Card(); card.Name != "Relay" || card.Capabilities.PushNotifications {
				t.Fatalf("card %+v", card)
			}
			id, arts, state, status := streamTurn(t, c, "", "hello")
			if want := []string{"echo:You: hello", "shout:YOU: HELLO\nECHO: YOU: HELLO"}; fmt.Sprint(arts) != fmt.Sprint(want) || state != a2a.TaskStateInputRequired {
				t.Fatalf("first turn: artifacts %q (want %q), state %s", arts, want, state)
			}
			if !strings.Contains(status, "Shouter spoke last") || !strings.Contains(status, "You (you)") {
				t.Fatalf("input-required status message %q", status)
			}
			// Continuation: the same task.
			id2, arts, state, _ := streamTurn(t, c, id, "again")
			if id2 != id || len(arts) != 2 || state != a2a.TaskStateInputRequired {
				t.Fatalf("continuation: task %s (want %s), artifacts %q, state %s", id2, id, arts, state)
			}
			// tasks/get: the whole history, each internal turn an agent
			// message naming its participant.
			task, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: id})
			if err != nil {
				t.Fatal(err)
			}
			var speakers []string
			for _, m := range task.History {
				if m.Role == a2a.RoleUser {
					speakers = append(speakers, "you")
				} else if p, ok := m.Metadata[conversation.MetaParticipantID].(string); ok {
					speakers = append(speakers, p)
				}
			}
			if want := "you echo shout you echo shout"; strings.Join(speakers, " ") != want || len(task.Artifacts) != 4 {
				t.Fatalf("history speakers %q (want %q), %d artifacts", speakers, want, len(task.Artifacts))
			}
			// Push: -32003.
			_, err = c.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{TaskID: id})
			var ae *a2a.Error
			if !errors.As(err, &ae) || ae.Code != a2a.CodePushNotificationNotSupported {
				t.Fatalf("push list: %v", err)
			}
			// Unknown task: -32001.
			if _, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: "nope"}); !errors.As(err, &ae) || ae.Code != a2a.CodeTaskNotFound {
				t.Fatalf("unknown task: %v", err)
			}
			// Cancel: the final system message.
			ct, err := c.CancelTask(ctx, a2a.CancelTaskRequest{ID: id})
			if err != nil {
				t.Fatal(err)
			}
			if ct.Status.State != a2a.TaskStateCanceled || ct.Status.Message == nil || ct.Status.Message.Metadata[conversation.MetaOutcome] != "canceled" {
				t.Fatalf("canceled: %+v", ct.Status)
			}
			// Continuing a finished conversation: -32004 (the engine's
			// UnsupportedOperation for a terminal task).
			if _, err := c.SendMessage(ctx, testutil.UserMessage("more", id)); !errors.As(err, &ae) || ae.Code != a2a.CodeUnsupportedOperation {
				t.Fatalf("continue canceled: %v", err)
			}
		})
	}

	// An ad-hoc scenario: echo and chat, round-robin.
	adhoc := &conversation.Scenario{Title: "Ad hoc", ScenarioID: "adhoc-1", StartingAgentID: "me", Agents: []conversation.Participant{
		{ID: "me", External: true}, {ID: "echo", Kind: "echo"}, {ID: "chat", DisplayName: "Chatty", Kind: "chat"}}}
	c64 := conversation.EncodeConfig64(adhoc)
	u := base + "/api/bridge/" + c64 + "/a2a"
	var diag struct {
		Scenario conversation.Scenario
		URL      string
		Card     string
	}
	if code := getJSON(t, u+"/diag", &diag); code != 200 || diag.Scenario.Title != "Ad hoc" || diag.URL != u || diag.Card != u+"/.well-known/agent-card.json" {
		t.Fatalf("diag: %d %+v", code, diag)
	}
	var card struct {
		Name         string
		URL          string
		Capabilities struct {
			PushNotifications bool
			Extensions        []struct{ URI string }
		}
		Skills []struct{ Description string }
	}
	if code := getJSON(t, u+"/.well-known/agent-card.json", &card); code != 200 || card.Name != "Ad hoc" || card.URL != u || card.Capabilities.PushNotifications ||
		len(card.Skills) != 1 || !strings.Contains(card.Skills[0].Description, `you speak as me ("me")`) ||
		!strings.Contains(fmt.Sprint(card.Capabilities.Extensions), conversation.ExtensionScenario) {
		t.Fatalf("card: %d %+v", code, card)
	}
	for _, binding := range []string{a2a.TransportJSONRPC, a2a.TransportHTTPJSON} {
		c, err := client.Dial(ctx, u, client.Options{Binding: binding})
		if err != nil {
			t.Fatal(err)
		}
		id, arts, state, _ := streamTurn(t, c, "", "hi")
		if len(arts) != 2 || arts[0] != "echo:me: hi" || !strings.HasPrefix(arts[1], "chat:turn 1") || state != a2a.TaskStateInputRequired {
			t.Fatalf("%s: ad-hoc turn: %q %s", binding, arts, state)
		}
		_, _, state, status := streamTurn(t, c, id, "bye\n/end")
		if state != a2a.TaskStateCompleted || !strings.Contains(status, "me closed the conversation") {
			t.Fatalf("%s: close: %s %q", binding, state, status)
		}
	}
	// The same scenario padded: the same conversations (task namespace).
	padded := c64 + strings.Repeat("=", (4-len(c64)%4)%4)
	if padded != c64 {
		c, err := client.Dial(ctx, base+"/api/bridge/"+padded+"/a2a", client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, state, _ := streamTurn(t, c, "", "hi"); state != a2a.TaskStateInputRequired {
			t.Fatalf("padded: %s", state)
		}
	}

	// Refused scenarios: what the operator did not allow, and bad ones.
	refuse := func(s *conversation.Scenario, raw string, field string) string {
		t.Helper()
		c := raw
		if s != nil {
			c = conversation.EncodeConfig64(s)
		}
		var e struct{ Error, Field string }
		if code := getJSON(t, base+"/api/bridge/"+c+"/a2a/diag", &e); code != 400 || e.Field != field {
			t.Fatalf("diag of %s: %d %+v, want 400 naming %s", c, code, e, field)
		}
		// The endpoint refuses it too, as a JSON-RPC error: HTTP 200 with
		// the request's id, as JSON-RPC clients expect (a2a-go reads no
		// error from a 400); the HTTP+JSON route with 400.
		resp, b := testutil.Post(t, base+"/api/bridge/"+c+"/a2a", `{"jsonrpc":"2.0","id":"req-7","method":"message/send","params":{}}`)
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"code":-32602`) || !strings.Contains(string(b), field) || !strings.Contains(string(b), `"id":"req-7"`) {
			t.Fatalf("POST %s: %d %s", c, resp.StatusCode, b)
		}
		resp, b = testutil.Post(t, base+"/api/bridge/"+c+"/a2a/message:send", `{"message":{}}`)
		if resp.StatusCode != 400 || !strings.Contains(string(b), field) {
			t.Fatalf("POST %s/message:send: %d %s", c, resp.StatusCode, b)
		}
		return e.Error
	}
	execScenario := *adhoc
	execScenario.Agents = []conversation.Participant{{ID: "me", External: true}, {ID: "x", Kind: "exec", Config: map[string]any{"command": []any{"touch", "/tmp/pwned"}}}}
	refuse(&execScenario, "", "agents[1].kind")
	urlScenario := *adhoc
	urlScenario.Agents = []conversation.Participant{{ID: "me", External: true}, {ID: "x", Kind: "echo", Config: map[string]any{"description": "see http://169.254.169.254/latest"}}}
	refuse(&urlScenario, "", "agents[1].config.description")
	// A kind that does not exist is named as unknown (not as one the
	// operator did not allow), and a participant's config is checked as
	// the endpoint builds it: diag answers what the endpoint would.
	unknownKind := *adhoc
	unknownKind.Agents = []conversation.Participant{{ID: "me", External: true}, {ID: "x", Kind: "teleport"}}
	if msg := refuse(&unknownKind, "", "agents[1].kind"); !strings.Contains(msg, `unknown kind "teleport"`) {
		t.Fatalf("unknown kind: %q", msg)
	}
	badConfig := *adhoc
	badConfig.Agents = []conversation.Participant{{ID: "me", External: true}, {ID: "x", Kind: "echo", Config: map[string]any{"bogus": 1}}}
	refuse(&badConfig, "", "agents[1].config.bogus")
	badType := *adhoc
	badType.Agents = []conversation.Participant{{ID: "me", External: true}, {ID: "x", Kind: "echo", Config: map[string]any{"skills": "not a list"}}}
	refuse(&badType, "", "agents[1].config.skills")
	refuse(nil, "!!!", "config64")
	refuse(nil, "eyJ0aXRsZSI6IlQifQ", "agents") // {"title":"T"}
	refuse(nil, strings.Repeat("A", 30000), "config64")
	// Unknown method on a conversation endpoint: -32601.
	if _, b := testutil.RPC(t, u, "conversation/nope", "{}"); !strings.Contains(string(b), `"code":-32601`) {
		t.Fatalf("unknown method: %s", b)
	}
}

// TestServeConversationsOff: without conversations.adhoc the ad-hoc
// routes are 404, and a scenario's config errors name their keys.
func TestServeConversationsConfig(t *testing.T) {
	base := startServe(t)
	s := &conversation.Scenario{Title: "T", StartingAgentID: "me", Agents: []conversation.Participant{{ID: "me", External: true}, {ID: "e", Kind: "echo"}}}
	var e struct{ Error string }
	if code := getJSON(t, base+"/api/bridge/"+conversation.EncodeConfig64(s)+"/a2a/diag", &e); code != 404 || !strings.Contains(e.Error, "conversations.adhoc") {
		t.Fatalf("ad-hoc off: %d %+v", code, e)
	}
	for _, c := range []struct{ config, want string }{
		{"conversations:\n  adhoc: true\n", "conversations.kinds: required with adhoc"},
		{"conversations:\n  adhoc: true\n  kinds: [nope]\n", `conversations.kinds[0]: unknown participant kind "nope"`},
		{"conversations:\n  adhoc: true\n  kinds: [echo]\n  urls: [ftp://x]\n", `conversations.urls[0]`},
		{"agents:\n  c:\n    kind: conversation\n", "agents.c.scenario: required"},
		{"agents:\n  c:\n    kind: conversation\n    scenario: {title: T, agents: [{id: a, external: true}, {id: a, kind: echo}], startingAgentId: a}\n", `agents.c.scenario.agents[1].id: duplicate "a"`},
		{"agents:\n  c:\n    kind: conversation\n    scenario: {title: T, agents: [{id: a, external: true}, {id: b, kind: nope}], startingAgentId: a}\n", `agents.c.scenario.agents[1]: participant "b": kind: unknown kind "nope"`},
		{"agents:\n  c:\n    kind: conversation\n    scenario: {title: T, agents: [{id: a, external: true}, {id: b, kind: exec, config: {comand: [x]}}], startingAgentId: a}\n", `participant "b": unknown key "comand" in config`},
		{"agents:\n  c:\n    kind: conversation\n    scenario: {title: T, agents: [{id: a, external: true}, {id: b, kind: conversation}], startingAgentId: a}\n", `cannot be a conversation`},
		{"agents:\n  c:\n    kind: conversation\n    scenario_file: nope.json\n", `agents.c.scenario_file:`},
	} {
		_, errs, code := run(t, "", "serve", "--memory", "--addr", "127.0.0.1:0", "--config", writeConfig(t, c.config))
		if code == ExitOK || !strings.Contains(errs, c.want) {
			t.Errorf("config %q: exit %d, stderr %q; want %q", c.config, code, errs, c.want)
		}
	}
}

func TestScenarioCommand(t *testing.T) {
	out, errs, code := run(t, "", "scenario", "encode", "../../examples/conversations/panel.json")
	if code != ExitOK {
		t.Fatalf("encode: %d %s", code, errs)
	}
	c64 := strings.TrimSpace(out)
	s, err := conversation.DecodeConfig64(c64, 0)
	if err != nil || s.Title != "Panel" {
		t.Fatalf("decode %q: %v", c64, err)
	}
	out, errs, code = run(t, "", "scenario", "decode", "http://h/api/bridge/"+c64+"/a2a")
	if code != ExitOK || !strings.Contains(out, `"title": "Panel"`) {
		t.Fatalf("decode: %d %s %s", code, out, errs)
	}
	yml := writeFile(t, "s.yaml", "title: Y\nagents:\n  - {id: me, external: true}\n  - {id: e, kind: echo}\nstartingAgentId: me\n")
	if out, errs, code = run(t, "", "scenario", "encode", yml); code != ExitOK {
		t.Fatalf("encode yaml: %d %s", code, errs)
	}
	os.WriteFile(yml, []byte("title: Y\nagents: []\nbogus: 1\n"), 0o600)
	if _, errs, code = run(t, "", "scenario", "encode", yml); code == ExitOK || !strings.Contains(errs, "bogus") {
		t.Fatalf("encode bad: %d %s", code, errs)
	}
	// Participants are checked as serve builds them: an unknown kind, a
	// config key the kind does not have.
	os.WriteFile(yml, []byte("title: Y\nagents:\n  - {id: me, external: true}\n  - {id: e, kind: teleport}\nstartingAgentId: me\n"), 0o600)
	if _, errs, code = run(t, "", "scenario", "encode", yml); code != ExitUsage || !strings.Contains(errs, `agents[1].kind: participant "e": unknown kind "teleport"`) {
		t.Fatalf("encode unknown kind: %d %s", code, errs)
	}
	os.WriteFile(yml, []byte("title: Y\nagents:\n  - {id: me, external: true}\n  - {id: e, kind: echo, config: {bogus: 1}}\nstartingAgentId: me\n"), 0o600)
	if _, errs, code = run(t, "", "scenario", "encode", yml); code != ExitUsage || !strings.Contains(errs, "agents[1].config.bogus") {
		t.Fatalf("encode bad config: %d %s", code, errs)
	}
	if _, errs, code = run(t, "", "scenario", "decode", "%%%"); code == ExitOK || !strings.Contains(errs, "config64") {
		t.Fatalf("decode bad: %d %s", code, errs)
	}
}

// TestServeConversationAttachments: conversation endpoints, named and
// ad-hoc, store the client's files sent by value and the files an
// internal participant answers by value (an exec participant's binary
// output) as attachments: history and artifacts carry URLs below
// /api/attachments, which serve the bytes; conversations.attachments
// bounds their size.
func TestServeConversationAttachments(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not on PATH")
	}
	base := startServe(t, "--config", writeConfig(t, `agents:
  binary:
    kind: conversation
    scenario:
      title: Binary
      agents:
        - {id: you, external: true}
        - {id: echo, kind: echo}
        - {id: bin, kind: exec, config: {command: [sh, -c, "cat >/dev/null; printf '\\377\\376bin'"], env: [PATH]}}
      startingAgentId: you
conversations:
  adhoc: true
  kinds: [echo]
  attachments: {max_bytes: 64B}
`))
	ctx := context.Background()
	isURL := func(p a2a.Part) (string, bool) {
		u, ok := p.Content.(a2a.URL)
		return string(u), ok && strings.HasPrefix(string(u), base+"/api/attachments/")
	}
	fetch := func(uri string) (string, string) {
		t.Helper()
		resp, b := testutil.Get(t, uri)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", uri, resp.StatusCode, b)
		}
		return string(b), resp.Header.Get("Content-Type")
	}
	file := a2a.Part{Content: a2a.Raw([]byte("client bytes")), MediaType: "text/plain", Filename: "note.txt"}
	adhoc := conversation.EncodeConfig64(&conversation.Scenario{Title: "Files", StartingAgentID: "me",
		Agents: []conversation.Participant{{ID: "me", External: true}, {ID: "echo", Kind: "echo"}}})
	for _, u := range []string{base + "/a2a/binary", base + "/api/bridge/" + adhoc + "/a2a"} {
		c, err := client.Dial(ctx, u, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		task, err := c.SendMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("look"), file)})
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		tk, ok := task.(*a2a.Task)
		if !ok || tk.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("%s: %+v", u, task)
		}
		// Every file in the task is an attachment URL.
		var uris []string
		for _, m := range tk.History {
			for _, p := range m.Parts {
				if p.IsFile() {
					uri, ok := isURL(p)
					if !ok {
						t.Fatalf("%s: history file part %+v is not an attachment URL", u, p)
					}
					uris = append(uris, uri)
				}
			}
		}
		for _, a := range tk.Artifacts {
			for _, p := range a.Parts {
				if p.IsFile() {
					if _, ok := isURL(p); !ok {
						t.Fatalf("%s: artifact file part %+v is not an attachment URL", u, p)
					}
				}
			}
		}
		if len(uris) == 0 {
			t.Fatalf("%s: no file in the history", u)
		}
		if body, ct := fetch(uris[0]); body != "client bytes" || ct != "text/plain" {
			t.Fatalf("%s: the client's file serves %q %q", u, body, ct)
		}
		if strings.Contains(u, "/a2a/binary") {
			// The exec participant's binary answer: stored, served.
			last := tk.Artifacts[len(tk.Artifacts)-1]
			uri, ok := isURL(last.Parts[len(last.Parts)-1])
			if !ok || last.Metadata[conversation.MetaParticipantID] != "bin" {
				t.Fatalf("bin's artifact: %+v", last)
			}
			if body, _ := fetch(uri); !bytes.Equal([]byte(body), []byte("\xff\xfebin")) {
				t.Fatalf("bin's file serves %q", body)
			}
		}
		// Over conversations.attachments.max_bytes: -32602.
		big := a2a.Part{Content: a2a.Raw(bytes.Repeat([]byte("b"), 65)), Filename: "big"}
		m := a2a.NewMessage(a2a.RoleUser, big)
		m.TaskID = tk.ID
		_, err = c.SendMessage(ctx, a2a.SendMessageRequest{Message: m})
		if ae, ok := err.(*a2a.Error); !ok || ae.Code != a2a.CodeInvalidParams || !strings.Contains(ae.Message, "at most 64 bytes") {
			t.Fatalf("%s: a file over the limit: %v", u, err)
		}
	}
}

// conversationRestartConfig is a scenario whose client turn is followed
// by an echo, and, when the client says "slow", by a participant that
// takes a minute (sleep), so that a restart can land in either phase.
const conversationRestartConfig = `
agents:
  talk:
    kind: conversation
    scenario:
      title: Talk
      agents:
        - {id: you, displayName: You, external: true}
        - {id: echo, displayName: Echo, kind: echo}
        - id: slow
          displayName: Slow
          kind: exec
          config: {command: [sh, -c, 'if grep -q slow; then sleep 60; fi; echo done'], env: [PATH]}
      startingAgentId: you
      rules: {turnPolicy: round-robin, maxTurns: 40, turnTimeout: 2m}
`

// TestConversationSurvivesKill9 kills serve (SQLite) with SIGKILL during
// a conversation and restarts it on the same data: a conversation that
// was waiting for the client keeps every acknowledged turn and goes on
// from there; one killed while an internal participant was speaking is
// failed with the recovery reason, its earlier turns kept (README,
// "Conversations", Restarts).
func TestConversationSurvivesKill9(t *testing.T) {
	for _, tool := range []string{"sh", "grep", "sleep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	dir, addr := t.TempDir(), freeAddr(t)
	cfg := writeConfig(t, conversationRestartConfig)
	args := []string{"--data", dir, "--addr", addr, "--config", cfg}
	child := startChild(t, args...)
	url := "http://" + addr + "/a2a/talk"
	ctx := context.Background()
	c, err := client.Dial(ctx, url, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// A conversation waiting for the client.
	waiting, arts, state, _ := streamTurn(t, c, "", "hello")
	if len(arts) != 2 || state != a2a.TaskStateInputRequired {
		t.Fatalf("first round: artifacts %q, state %s", arts, state)
	}
	// One whose slow participant is speaking when the process dies.
	p := testutil.UserMessage("slow please", "")
	cfgNB := false
	p.Configuration = &a2a.SendMessageConfiguration{Blocking: &cfgNB}
	res, err := c.SendMessage(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	speaking := res.(*a2a.Task).ID
	var task *a2a.Task
	if !testutil.Poll(20*time.Second, func() bool {
		task, err = c.GetTask(ctx, a2a.GetTaskRequest{ID: speaking})
		if err != nil {
			t.Fatal(err)
		}
		return len(task.Artifacts) == 1 // the echo spoke; the slow one is speaking
	}) {
		t.Fatalf("the echo did not speak: %+v", task)
	}

	child.Kill()
	startChild(t, args...)
	c, err = client.Dial(ctx, url, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// The waiting conversation goes on: the same task, the next round.
	id, arts, state, _ := streamTurn(t, c, waiting, "still there?")
	if id != waiting || len(arts) != 2 || state != a2a.TaskStateInputRequired {
		t.Fatalf("after the restart: task %s, artifacts %q, state %s", id, arts, state)
	}
	task, err = c.GetTask(ctx, a2a.GetTaskRequest{ID: waiting})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, h := range task.History {
		for _, p := range h.Parts {
			if tp, ok := p.Content.(a2a.Text); ok {
				texts = append(texts, strings.TrimSpace(string(tp)))
			}
		}
	}
	if len(task.Artifacts) != 4 || len(task.History) < 6 || texts[0] != "hello" {
		t.Fatalf("history after the restart: %d artifacts, history %q", len(task.Artifacts), texts)
	}

	// The one killed mid-turn is failed with a reason; the echo's turn
	// (acknowledged before the kill) is kept.
	task, err = c.GetTask(ctx, a2a.GetTaskRequest{ID: speaking})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateFailed || task.Status.Message == nil || len(task.Artifacts) != 1 {
		t.Fatalf("the conversation killed mid-turn: state %s, message %+v, %d artifacts", task.Status.State, task.Status.Message, len(task.Artifacts))
	}
}

// adHocPost posts a JSON-RPC message/send to an ad-hoc scenario's
// endpoint, with token as bearer credentials when set.
func adHocPost(t *testing.T, u, token string) (int, string) {
	t.Helper()
	return adHocDo(t, http.MethodPost, u, token, testutil.RPCBody("message/send", testutil.SendParams03("hi", "m1", "")))
}

// adHocDo sends a request with body (JSON, none when empty) and token as
// bearer credentials when set, and returns the status and the body.
func adHocDo(t *testing.T, method, u, token, body string) (int, string) {
	t.Helper()
	hdr := bearer(token)
	if body != "" {
		hdr = append(hdr, "Content-Type", "application/json")
	}
	return call(t, method, u, body, hdr...)
}

// An ad-hoc scenario is authenticated before it is decoded or built, and
// its a2a participant cannot leave the allowlist by a redirect.
func TestAdHocAuthFirstAndAllowlistOnEveryRequest(t *testing.T) {
	var evilHits, allowedHits atomic.Int32
	evil := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		evilHits.Add(1)
		http.NotFound(w, r)
	}))
	allowed := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allowedHits.Add(1)
		http.Redirect(w, r, evil.URL+"/internal-admin", http.StatusFound)
	}))
	cfg := fmt.Sprintf("auth:\n  bearer_tokens:\n    alice: s3cret-token\nconversations:\n  adhoc: true\n  kinds: [a2a]\n  urls: [%s/agent]\n", allowed.URL)
	base := startServe(t, "--config", writeConfig(t, cfg))
	scen := fmt.Sprintf(`{"title":"t","agents":[{"id":"you","external":true},{"id":"r","kind":"a2a","config":{"url":"%s/agent"}}],"startingAgentId":"you"}`, allowed.URL)
	c64 := base64.RawURLEncoding.EncodeToString([]byte(scen))
	u := base + "/api/bridge/" + c64 + "/a2a"

	// Without credentials: 401 on every route, and nothing is dialled.
	if st, body := adHocPost(t, u, ""); st != http.StatusUnauthorized || !strings.Contains(body, "-32") {
		t.Fatalf("unauthenticated POST: %d %s", st, body)
	}
	if st, body := adHocPost(t, u, "wrong"); st != http.StatusUnauthorized {
		t.Fatalf("bad token POST: %d %s", st, body)
	}
	for _, path := range []string{"/diag", "/.well-known/agent-card.json", "/v1/tasks/x"} {
		if st, body := adHocDo(t, http.MethodGet, u+path, "", ""); st != http.StatusUnauthorized {
			t.Fatalf("unauthenticated GET %s: %d %s", path, st, body)
		}
	}
	if n, m := allowedHits.Load(), evilHits.Load(); n != 0 || m != 0 {
		t.Fatalf("unauthenticated requests made the server dial: allowed host %d, other host %d", n, m)
	}

	// With credentials: the scenario is built and its turn runs, but the
	// redirect from the allowed host is not followed.
	st, body := adHocPost(t, u, "s3cret-token")
	if st != http.StatusOK || !strings.Contains(body, `"result"`) {
		t.Fatalf("authenticated POST: %d %s", st, body)
	}
	if allowedHits.Load() == 0 {
		t.Fatal("the allowed host got no request: the test proves nothing")
	}
	if n := evilHits.Load(); n != 0 {
		t.Fatalf("the host outside conversations.urls got %d requests (a redirect was followed)", n)
	}
	if st, _ := adHocDo(t, http.MethodGet, u+"/diag", "s3cret-token", ""); st != http.StatusOK {
		t.Fatalf("authenticated diag: %d", st)
	}
}

// One ad-hoc scenario is one hosted entry however its config64 is
// spelled; concurrent first requests share one build; at most
// maxAdHocBuilds builds run at once.
func TestAdHocBuildsKeyedAndBounded(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan string, 64)
	var mu sync.Mutex
	fetches := map[string]int{} // card fetches by path
	remote := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetches[r.URL.Path]++
		mu.Unlock()
		arrived <- r.URL.Path
		<-release
		http.NotFound(w, r)
	}))
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free()
	cfg := fmt.Sprintf("conversations:\n  adhoc: true\n  kinds: [a2a]\n  urls: [%s/]\n", remote.URL)
	base := startServe(t, "--config", writeConfig(t, cfg))
	t.Cleanup(free) // before the server stops: no build is left waiting
	c64 := func(i int) string {
		scen := fmt.Sprintf(`{"title":"t","agents":[{"id":"you","external":true},{"id":"r","kind":"a2a","config":{"url":"%s/agent%d"}}],"startingAgentId":"you"}`, remote.URL, i)
		return base64.RawURLEncoding.EncodeToString([]byte(scen))
	}
	card := func(c string) string { return base + "/api/bridge/" + c + "/a2a/.well-known/agent-card.json" }

	// Three spellings of scenario 0 at once, and scenarios 1 to 3: four
	// builds, each blocked in its card fetch.
	type result struct {
		status int
		body   string
	}
	results := make(chan result, 16)
	get := func(u string) {
		go func() {
			st, body := adHocDo(t, http.MethodGet, u, "", "")
			results <- result{st, body}
		}()
	}
	for _, pad := range []string{"", "=", "=="} {
		get(card(c64(0) + pad))
	}
	for i := 1; i <= 3; i++ {
		get(card(c64(i)))
	}
	for range 4 {
		<-arrived
	}
	// A fifth scenario is refused while four are being built.
	st, body := adHocDo(t, http.MethodGet, card(c64(4)), "", "")
	if st != http.StatusServiceUnavailable || !strings.Contains(body, "being built") {
		t.Fatalf("fifth build: %d %s", st, body)
	}
	free()
	for range 6 {
		if r := <-results; r.status != http.StatusOK {
			t.Fatalf("card: %d %s", r.status, r.body)
		}
	}
	// Every spelling is the same hosted scenario: no more builds, and the
	// card gives the canonical URL.
	var cards []string
	for _, pad := range []string{"", "=", "==", "==="} {
		st, body := adHocDo(t, http.MethodGet, card(c64(0)+pad), "", "")
		if st != http.StatusOK {
			t.Fatalf("card %q: %d %s", pad, st, body)
		}
		cards = append(cards, body)
	}
	mu.Lock()
	n := fetches["/agent0/.well-known/agent-card.json"]
	mu.Unlock()
	if n != 1 {
		t.Fatalf("scenario 0's participant fetched its card %d times; want 1 (one build)", n)
	}
	for _, c := range cards[1:] {
		if c != cards[0] {
			t.Fatalf("cards differ by spelling:\n%s\n%s", cards[0], c)
		}
	}
	// A task started at one spelling is read at another, on the JSON-RPC
	// endpoint and on an HTTP+JSON route below it.
	st, body = adHocPost(t, base+"/api/bridge/"+c64(0)+"/a2a", "")
	i := strings.Index(body, `"id":"`)
	if st != http.StatusOK || !strings.Contains(body, `"kind":"task"`) || i < 0 {
		t.Fatalf("send: %d %s", st, body)
	}
	taskID := body[i+6:]
	taskID = taskID[:strings.IndexByte(taskID, '"')]
	getReq := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":%q}}`, taskID)
	if st, body := adHocDo(t, http.MethodPost, base+"/api/bridge/"+c64(0)+"=/a2a", "", getReq); st != http.StatusOK || !strings.Contains(body, taskID) || strings.Contains(body, `"error"`) {
		t.Fatalf("tasks/get at another spelling: %d %s", st, body)
	}
	if st, body := adHocDo(t, http.MethodGet, base+"/api/bridge/"+c64(0)+"==/a2a/v1/tasks/"+taskID, "", ""); st != http.StatusOK || !strings.Contains(body, taskID) {
		t.Fatalf("HTTP+JSON tasks/get at another spelling: %d %s", st, body)
	}
}

// An ad-hoc scenario of many echo participants, each of which repeats
// every turn since it last spoke (so the text doubles per participant),
// ends failed with a reason naming the limit it reached, after a bounded
// amount of work; rules over the server's ceilings are refused, and a
// client turn over the turn limit is not passed on.
func TestAdHocAmplificationBounded(t *testing.T) {
	scenario := func(n int, rules string) string {
		agents := []string{`{"id":"you","external":true}`}
		for i := range n {
			agents = append(agents, fmt.Sprintf(`{"id":"e%d","kind":"echo"}`, i))
		}
		s := fmt.Sprintf(`{"title":"flood","agents":[%s],"startingAgentId":"you"%s}`, strings.Join(agents, ","), rules)
		return base64.RawURLEncoding.EncodeToString([]byte(s))
	}
	send := func(t *testing.T, base, c64, text string) (int, string) {
		t.Helper()
		return adHocDo(t, http.MethodPost, base+"/api/bridge/"+c64+"/a2a", "",
			testutil.RPCBody("message/send", testutil.SendParams03(text, a2a.NewID(), "")))
	}
	failedWith := func(t *testing.T, st int, body, want string) {
		t.Helper()
		if st != http.StatusOK || !strings.Contains(body, `"state":"failed"`) || !strings.Contains(body, want) {
			t.Fatalf("want a failed task naming %s: %d %.600s", want, st, body)
		}
		// What the task holds is bounded by the limits: far below the
		// 9.4 MB that 16 echo participants produced without them.
		if len(body) > 1<<20 {
			t.Fatalf("the answer has %d bytes", len(body))
		}
	}

	t.Run("turn", func(t *testing.T) {
		base := startServe(t, "--config", writeConfig(t, "conversations:\n  adhoc: true\n  kinds: [echo]\n"))
		st, body := send(t, base, scenario(31, ""), "0123456789")
		failedWith(t, st, body, "maxTurnBytes")
		// The card states the limits in force.
		_, card := adHocDo(t, http.MethodGet, base+"/api/bridge/"+scenario(31, "")+"/a2a/.well-known/agent-card.json", "", "")
		for _, want := range []string{`"maxTurnBytes":65536`, `"maxTotalBytes":1048576`, `"maxTurns":20`} {
			if !strings.Contains(card, want) {
				t.Errorf("card lacks %s: %s", want, card)
			}
		}
		// A client turn over the limit fails the conversation before
		// any participant sees it.
		st, body = send(t, base, scenario(2, ""), strings.Repeat("x", 70<<10))
		failedWith(t, st, body, "Your turn (turn 1) has 71680 bytes, over the conversation's limit of 65536 bytes per turn (maxTurnBytes)")
		if strings.Contains(body, `"participantId":"e0"`) {
			t.Fatalf("a participant took a turn after an oversized client turn: %.300s", body)
		}
		// Rules over the server's ceilings are refused by name.
		st, body = send(t, base, scenario(2, `,"rules":{"maxTotalBytes":10485760}`), "hi")
		if st != http.StatusOK || !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, `"field":"rules.maxTotalBytes"`) || !strings.Contains(body, "over this server's limit of 1048576 bytes") {
			t.Fatalf("rules over the ceiling: %d %s", st, body)
		}
		st, body = send(t, base, scenario(2, `,"rules":{"maxTurns":500}`), "hi")
		if st != http.StatusOK || !strings.Contains(body, `"field":"rules.maxTurns"`) {
			t.Fatalf("maxTurns over the ceiling: %d %s", st, body)
		}
	})
	t.Run("total", func(t *testing.T) {
		base := startServe(t, "--config", writeConfig(t, "conversations:\n  adhoc: true\n  kinds: [echo]\n  max_turns: 1000\n  max_total_bytes: 64KiB\n"))
		st, body := send(t, base, scenario(31, `,"rules":{"maxTurns":1000}`), "0123456789")
		failedWith(t, st, body, "over its limit of 65536 bytes (maxTotalBytes); the answer was not kept.")
	})
	t.Run("config", func(t *testing.T) {
		wantServeUsageErrors(t, []serveUsage{
			{[]string{"--config", "conversations:\n  adhoc: true\n  kinds: [echo]\n  max_turn_bytes: 32MiB\n"}, "conversations.max_turn_bytes: want 1B to 16MiB"},
			{[]string{"--config", "conversations:\n  adhoc: true\n  kinds: [echo]\n  max_turn_bytes: 2MiB\n"}, "conversations.max_turn_bytes: 2097152 bytes, more than conversations.max_total_bytes (1048576)"},
			{[]string{"--config", "conversations:\n  adhoc: true\n  kinds: [echo]\n  max_turns: 0\n"}, "conversations.max_turns: want 1 to 1000"},
		})
	})
}
