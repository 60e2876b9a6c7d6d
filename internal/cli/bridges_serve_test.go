package cli

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/bridge/openai/openaitest"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// bridgeEvent is one line of `stream --json` over A2A 1.0:
// {"eventId": "N", "result": StreamResponse}.
type bridgeEvent struct {
	EventID string `json:"eventId"`
	Result  struct {
		Task *struct {
			ID        string `json:"id"`
			ContextID string `json:"contextId"`
			Status    struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"task"`
		ArtifactUpdate *struct {
			TaskID   string `json:"taskId"`
			Artifact struct {
				Name  string `json:"name"`
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"artifact"`
			Append    bool `json:"append"`
			LastChunk bool `json:"lastChunk"`
		} `json:"artifactUpdate"`
		StatusUpdate *struct {
			TaskID string `json:"taskId"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"statusUpdate"`
	} `json:"result"`
}

// bridgeStream is what `stream --json` printed: the task, the artifact
// chunks (text per chunk), the last state.
type bridgeStream struct {
	taskID, contextID string
	artifact          string // the artifact's name
	chunks            []string
	last              string // the state of the last event
}

// parseBridgeStream reads `stream --json` output and checks the shape of
// a streamed answer: a Task first, then the artifact's chunks (append on
// all but the first, lastChunk on the last), then status updates.
func parseBridgeStream(t *testing.T, out string) bridgeStream {
	t.Helper()
	var s bridgeStream
	lastChunk := false
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev bridgeEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.EventID == "" {
			t.Fatalf("line %d is not {eventId, result}: %q (%v)", i+1, l, err)
		}
		switch r := ev.Result; {
		case r.Task != nil:
			if i != 0 {
				t.Fatalf("a Task event at line %d:\n%s", i+1, out)
			}
			s.taskID, s.contextID, s.last = r.Task.ID, r.Task.ContextID, r.Task.Status.State
		case r.ArtifactUpdate != nil:
			u := r.ArtifactUpdate
			if u.TaskID != s.taskID || u.Append != (len(s.chunks) > 0) || lastChunk || len(u.Artifact.Parts) != 1 {
				t.Fatalf("chunk %d of the artifact (append/lastChunk flags, one part each):\n%s", len(s.chunks)+1, out)
			}
			s.artifact = u.Artifact.Name
			s.chunks = append(s.chunks, u.Artifact.Parts[0].Text)
			lastChunk = u.LastChunk
		case r.StatusUpdate != nil:
			s.last = r.StatusUpdate.Status.State
		default:
			t.Fatalf("line %d is no Task, artifact or status update: %q", i+1, l)
		}
	}
	if s.taskID == "" || (len(s.chunks) > 0 && !lastChunk) {
		t.Fatalf("no Task first, or no lastChunk on the last chunk:\n%s", out)
	}
	return s
}

// TestServeBridges runs `a2abridge serve --config` (a child process) with
// an openai agent in front of the openaitest fake and an exec agent
// running `tr a-z A-Z`, and drives both with the CLI: the model's tokens
// stream as chunks of one artifact and the usage lands in the task's
// metadata; a second message in the same context sends the first turn as
// history; the command upper-cases.
func TestServeBridges(t *testing.T) {
	if _, err := exec.LookPath("tr"); err != nil {
		t.Skip("tr is not on PATH")
	}
	fake := openaitest.New()
	t.Cleanup(fake.Close)
	fake.RequireKey("sk-test-bridges")
	t.Setenv("A2ABRIDGE_TEST_OPENAI_KEY", "sk-test-bridges") // inherited by the child
	cfg := writeFile(t, "bridges.yaml", fmt.Sprintf(`agents:
  assistant:
    kind: openai
    base_url: %s
    model: tiny-model
    api_key: ${A2ABRIDGE_TEST_OPENAI_KEY}
  upper:
    kind: exec
    command: [tr, a-z, A-Z]
    env: [PATH]
`, fake.URL))
	addr := freeAddr(t)
	base := "http://" + addr
	startChild(t, "--config", cfg, "--memory", "--addr", addr)

	// openai: the answer streams token by token, then completed.
	out, errs, code := run(t, "", "stream", base+"/a2a/assistant", "Tell me a story", "--json")
	if code != ExitOK {
		t.Fatalf("stream assistant: exit %d\n%s\n%s", code, out, errs)
	}
	s := parseBridgeStream(t, out)
	const answer = "You said: Tell me a story"
	if s.artifact != "response" || strings.Join(s.chunks, "") != answer || len(s.chunks) < 3 || s.last != "TASK_STATE_COMPLETED" {
		t.Fatalf("stream assistant: artifact %q, chunks %q, last state %s; want %q in several chunks of \"response\", completed\n%s",
			s.artifact, s.chunks, s.last, answer, out)
	}
	first, ok := fake.LastRequest()
	if !ok || first.Header.Get("Authorization") != "Bearer sk-test-bridges" || !first.Stream || first.Model != "tiny-model" {
		t.Fatalf("the request the fake got: %+v", first)
	}

	// The usage, the model and the finish reason are in the task's metadata.
	out, errs, code = run(t, "", "get", base+"/a2a/assistant", s.taskID, "--json")
	var task struct {
		Status struct {
			State string `json:"state"`
		} `json:"status"`
		Metadata struct {
			Usage *struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
				TotalTokens      int `json:"total_tokens"`
			} `json:"a2abridge/usage"`
			Model        string `json:"a2abridge/model"`
			FinishReason string `json:"a2abridge/finish_reason"`
		} `json:"metadata"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &task) != nil {
		t.Fatalf("get: exit %d\n%s\n%s", code, out, errs)
	}
	u, md := task.Metadata.Usage, task.Metadata
	// The fake counts the words of the messages sent, plus one per
	// message (prompt: 4+1), and the chunks it streamed (completion).
	if task.Status.State != "TASK_STATE_COMPLETED" || u == nil || u.PromptTokens != 5 || u.CompletionTokens != len(s.chunks) ||
		u.TotalTokens != u.PromptTokens+u.CompletionTokens || md.Model != "tiny-model" || md.FinishReason != "stop" {
		t.Fatalf("get: the task's metadata lacks the usage (5 prompt tokens, %d completion tokens), the model or the finish reason:\n%s", len(s.chunks), out)
	}

	// A second message in the same context: the fake gets the first turn
	// as history.
	out, errs, code = run(t, "", "stream", base+"/a2a/assistant", "And then?", "--context", s.contextID, "--json")
	if code != ExitOK {
		t.Fatalf("second stream: exit %d\n%s\n%s", code, out, errs)
	}
	if s2 := parseBridgeStream(t, out); s2.contextID != s.contextID || s2.taskID == s.taskID || strings.Join(s2.chunks, "") != "You said: And then?" {
		t.Fatalf("second stream: a new task of the same context answering the new message, got %+v", s2)
	}
	second, _ := fake.LastRequest()
	var got []string
	for _, m := range second.Messages {
		got = append(got, m.Role+": "+m.Content)
	}
	want := []string{"user: Tell me a story", "assistant: " + answer, "user: And then?"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the second request's messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// exec: tr upper-cases the message's text.
	out, errs, code = run(t, "", "stream", base+"/a2a/upper", "hello, bridges", "--json")
	if code != ExitOK {
		t.Fatalf("stream upper: exit %d\n%s\n%s", code, out, errs)
	}
	if s := parseBridgeStream(t, out); strings.Join(s.chunks, "") != "HELLO, BRIDGES" || s.artifact != "output" || s.last != "TASK_STATE_COMPLETED" {
		t.Fatalf("stream upper: artifact %q, chunks %q, last state %s; want \"HELLO, BRIDGES\" in \"output\", completed\n%s", s.artifact, s.chunks, s.last, out)
	}
}

// TestA2ACardLate: an a2a agent whose remote is down when serve starts is
// served under a generic card (with the entry's card keys), and under the
// card derived from the remote's once the remote is up, without a
// restart; the entry's card keys still apply, and messages reach the
// remote.
func TestA2ACardLate(t *testing.T) {
	remoteAddr := freeAddr(t) // nothing listens there yet
	cfg := writeFile(t, "late.yaml", fmt.Sprintf(`agents:
  later:
    kind: a2a
    url: http://%s/a2a/echo
    card_timeout: 500ms
    version: "7.7.7"
`, remoteAddr))
	addr := freeAddr(t)
	base := "http://" + addr
	startChild(t, "--config", cfg, "--memory", "--addr", addr)
	type cardDoc struct {
		Name, Description, Version string
	}
	card := func() cardDoc {
		t.Helper()
		var c cardDoc
		getJSON(t, base+"/a2a/later/.well-known/agent-card.json", &c)
		return c
	}
	if c := card(); c.Name != "later" || c.Version != "7.7.7" {
		t.Fatalf("the stand-in card: %+v", c)
	}
	// The remote comes up: a2abridge's own echo agent.
	startChild(t, "--memory", "--addr", remoteAddr)
	var c cardDoc
	if !testutil.Poll(20*time.Second, func() bool { c = card(); return c.Name != "later" }) {
		t.Fatalf("the card is still the stand-in after 20 s: %+v", c)
	}
	if c.Version != "7.7.7" || !strings.Contains(strings.ToLower(c.Description), "echo") {
		t.Fatalf("the derived card: %+v (want the remote's name and description, the entry's version)", c)
	}
	if r := testutil.CallRPC(t, base+"/a2a/later", "message/send", testutil.SendParams03("through", "m1", "")); r.Result.Status.State != "completed" {
		t.Fatalf("a message through the late agent: %+v", r)
	}
}
