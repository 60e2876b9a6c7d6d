package cli

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/gateway"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// TestServeAttachments: an agent with an attachments block gets files
// sent by value as URLs, which serve hands back to the caller, on the
// SQLite store; a file over max_bytes is refused.
func TestServeAttachments(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, `agents:
  files:
    kind: echo
    attachments:
      max_bytes: 32B
`)
	addr := freeAddr(t)
	startChild(t, "--config", cfg, "--data", filepath.Join(dir, "data"), "--addr", addr)
	url := "http://" + addr + "/a2a/files"
	send := func(id string, content []byte) map[string]any {
		t.Helper()
		_, b := testutil.RPC(t, url, "message/send", fmt.Sprintf(`{"message":{"kind":"message","role":"user","messageId":%q,"parts":[{"kind":"file","file":{"name":"a.bin","mimeType":"application/x-test","bytes":%q}}]}}`,
			id, base64.StdEncoding.EncodeToString(content)))
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := send("m1", []byte{0, 1, 2, 0xff})
	task, ok := out["result"].(map[string]any)
	if !ok {
		t.Fatalf("send: %v", out)
	}
	file := task["history"].([]any)[0].(map[string]any)["parts"].([]any)[0].(map[string]any)["file"].(map[string]any)
	uri, _ := file["uri"].(string)
	if !strings.HasPrefix(uri, "http://"+addr+"/api/attachments/") || file["bytes"] != nil {
		t.Fatalf("history file part %v: want a URL below http://%s/api/attachments/", file, addr)
	}
	resp, b := testutil.Get(t, uri)
	if resp.StatusCode != 200 || string(b) != "\x00\x01\x02\xff" || resp.Header.Get("Content-Type") != "application/x-test" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename=a.bin` {
		t.Fatalf("GET %s: %d %q %v", uri, resp.StatusCode, b, resp.Header)
	}
	out = send("m2", make([]byte, 33))
	if e, _ := out["error"].(map[string]any); e == nil || e["code"] != -32602.0 {
		t.Fatalf("a file over max_bytes: %v", out)
	}
}

func TestAttachmentsConfigErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"agents:\n  f:\n    kind: echo\n    attachments:\n      max_bytes: lots\n", "agents.f.attachments.max_bytes"},
		{"agents:\n  f:\n    kind: echo\n    attachments:\n      max_byte: 3\n", "max_bytes"},
	} {
		_, err := gateway.LoadConfig(writeConfig(t, c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error naming %s", c.yaml, err, c.want)
		}
	}
}
