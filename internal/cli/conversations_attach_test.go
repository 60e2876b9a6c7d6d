package cli

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/conversation"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

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
