package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

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

	for _, bind := range []struct{ protocol, binding string }{
		{a2a.Version10, a2a.TransportJSONRPC}, {a2a.Version10, a2a.TransportHTTPJSON}, {a2a.Version03, a2a.TransportJSONRPC}, {a2a.Version03, a2a.TransportHTTPJSON},
	} {
		t.Run("named/"+bind.protocol+"/"+bind.binding, func(t *testing.T) {
			c, err := client.Dial(ctx, base+"/a2a/relay", client.Options{Protocol: bind.protocol, Binding: bind.binding})
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
