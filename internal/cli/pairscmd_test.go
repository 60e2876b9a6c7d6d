package cli

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/bridge/pair"
)

// sentTask reads the task of `send --json` over A2A 1.0 ({"task":…}).
func sentTask(t *testing.T, out string) (id, state string) {
	t.Helper()
	var r struct {
		Task struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Task.ID == "" {
		t.Fatalf("send --json: %v: %q", err, out)
	}
	return r.Task.ID, r.Task.Status.State
}

// TestPairsCommands: `a2abridge pairs create|list|end` drive serve's
// pairs API, and a participant ends its pair as completed from the CLI
// with send --metadata.
func TestPairsCommands(t *testing.T) {
	cfg := writeConfig(t, "admin:\n  bearer_tokens:\n    ops: s3cret\npairs:\n  enabled: true\n")
	base := startServe(t, "--config", cfg)
	t.Setenv("A2ABRIDGE_ADMIN_TOKEN", "")
	api := []string{"--server", base, "--token", "s3cret"}

	// Without the token: an HTTP error (4), the server saying what it requires.
	if _, errs, code := run(t, "", "pairs", "list", "--server", base); code != ExitTransport || !strings.Contains(errs, "requires an admin bearer token") {
		t.Fatalf("pairs list without a token: exit %d %q", code, errs)
	}
	out, errs, code := run(t, "", append([]string{"pairs", "create", "--json"}, api...)...)
	var p pair.Info
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil || p.State != "open" || p.A.URL == "" {
		t.Fatalf("pairs create --json: exit %d %q %q", code, out, errs)
	}
	out, _, code = run(t, "", append([]string{"pairs", "create"}, api...)...)
	if code != 0 || !strings.Contains(out, "side A  "+base+"/a2a/pair-") || !strings.Contains(out, "a2abridge send "+base+"/a2a/pair-") {
		t.Fatalf("pairs create: exit %d %q", code, out)
	}
	second := strings.Fields(out)[1]
	secondA := strings.Fields(strings.SplitN(out, "side A  ", 2)[1])[0]

	// Side A speaks (without waiting for B), B joins and gets A's words,
	// then B ends the pair as completed with --metadata.
	out, errs, code = run(t, "", "send", p.A.URL, "Hello, B.", "--no-blocking", "--json")
	if code != 0 {
		t.Fatalf("side A: exit %d %q", code, errs)
	}
	aTask, _ := sentTask(t, out)
	out, errs, code = run(t, "", "send", p.B.URL, "(joining)", "--json")
	bTask, state := sentTask(t, out)
	if code != 0 || state != "TASK_STATE_INPUT_REQUIRED" || !strings.Contains(out, "Hello, B.") {
		t.Fatalf("side B joins: exit %d %q %q", code, out, errs)
	}
	out, errs, code = run(t, "", "send", p.B.URL, "Bye.", "--task", bTask, "--json", "--metadata", `{"a2abridge/pair":{"end":true}}`)
	if _, state := sentTask(t, out); code != 0 || state != "TASK_STATE_COMPLETED" {
		t.Fatalf("side B ends with --metadata: exit %d %q %q", code, out, errs)
	}
	out, _, code = run(t, "", "get", p.A.URL, aTask, "--json")
	if code != 0 || !strings.Contains(out, "TASK_STATE_COMPLETED") || !strings.Contains(out, "Bye.") {
		t.Fatalf("side A's task after B ended the pair: exit %d %q", code, out)
	}

	// pairs end ends the other pair, where side A waits for B: A's task
	// ends as --outcome says; the list shows both pairs ended.
	out, errs, code = run(t, "", "send", secondA, "Anyone?", "--no-blocking", "--json")
	if code != 0 {
		t.Fatalf("side A of the second pair: exit %d %q", code, errs)
	}
	waiting, _ := sentTask(t, out)
	out, errs, code = run(t, "", append([]string{"pairs", "end", second, "--outcome", "completed", "--reason", "Closed by the operator."}, api...)...)
	if code != 0 || out != "ended pair "+second+": both tasks completed\n" {
		t.Fatalf("pairs end: exit %d %q %q", code, out, errs)
	}
	out, _, code = run(t, "", "resubscribe", secondA, waiting, "--json")
	if code != 0 || !strings.Contains(out, "TASK_STATE_COMPLETED") || !strings.Contains(out, "Closed by the operator.") {
		t.Fatalf("side A's task after pairs end: exit %d %q", code, out)
	}
	out, _, code = run(t, "", append([]string{"pairs", "list"}, api...)...)
	if code != 0 || !strings.HasPrefix(out, "PAIR") || strings.Count(out, "ended (completed)") != 2 || !strings.Contains(out, p.ID) || !strings.Contains(out, second) {
		t.Fatalf("pairs list: exit %d\n%s", code, out)
	}
	out, _, code = run(t, "", append([]string{"pairs", "list", "--json"}, api...)...)
	var l struct{ Pairs []pair.Info }
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil || len(l.Pairs) != 2 || l.Pairs[0].ID != p.ID || l.Pairs[0].Turns != 2 {
		t.Fatalf("pairs list --json: exit %d %q", code, out)
	}
	// Ending it again is a conflict (4); an unknown pair a 404 (4); a bad
	// outcome a usage error (2).
	if _, errs, code := run(t, "", append([]string{"pairs", "end", second}, api...)...); code != ExitTransport || !strings.Contains(errs, "HTTP 409") {
		t.Fatalf("pairs end twice: exit %d %q", code, errs)
	}
	if _, errs, code := run(t, "", append([]string{"pairs", "end", "nope"}, api...)...); code != ExitTransport || !strings.Contains(errs, "no such pair") {
		t.Fatalf("pairs end of an unknown pair: exit %d %q", code, errs)
	}
	if _, errs, code := run(t, "", append([]string{"pairs", "end", second, "--outcome", "done"}, api...)...); code != ExitUsage || !strings.Contains(errs, "--outcome") {
		t.Fatalf("pairs end --outcome done: exit %d %q", code, errs)
	}
}

// TestSendMetadataUsage: --metadata must be a JSON object; anything else
// is a usage error naming the flag, before anything is sent.
func TestSendMetadataUsage(t *testing.T) {
	for _, md := range []string{`[1]`, `{"a":`, `"x"`, `null`} {
		for _, cmd := range []string{"send", "stream"} {
			_, errs, code := run(t, "", cmd, "localhost:1", "hi", "--metadata", md)
			if code != ExitUsage || !strings.Contains(errs, "--metadata: want a JSON object") {
				t.Fatalf("%s --metadata %s: exit %d %q", cmd, md, code, errs)
			}
		}
	}
}

// TestConversationAnswerHint: when send or stream leaves a conversation's
// task waiting for input, stderr gives the exact command that answers it,
// and that command continues the task.
func TestConversationAnswerHint(t *testing.T) {
	if _, err := exec.LookPath("tr"); err != nil {
		t.Skip("tr is not on PATH")
	}
	base := startServe(t, "--config", writeConfig(t, conversationServeConfig))
	relay := base + "/a2a/relay"
	out, errs, code := run(t, "", "send", relay, "hello", "--json")
	id, state := sentTask(t, out)
	want := "task " + id + " is input-required\nanswer it: a2abridge send " + relay + " TEXT --task " + id + "\n"
	if code != 0 || state != "TASK_STATE_INPUT_REQUIRED" || errs != want {
		t.Fatalf("send: exit %d, stderr %q, want %q", code, errs, want)
	}
	// The hint's command, TEXT replaced, continues the task; stream gives
	// the same hint.
	args := strings.Fields(strings.TrimPrefix(strings.Split(errs, "\n")[1], "answer it: a2abridge "))
	for i, a := range args {
		if a == "TEXT" {
			args[i] = "again"
		}
	}
	args[0] = "stream"
	out, errs, code = run(t, "", append(args, "--json")...)
	if code != 0 || errs != want || !strings.Contains(out, `"taskId":"`+id+`"`) {
		t.Fatalf("stream %v: exit %d, stderr %q (want %q)\n%s", args, code, errs, want, out)
	}
	// The extensions a send activated are in its answer's command.
	out, errs, code = run(t, "", "send", relay, "hello", "--extension", "https://example.com/ext/x", "--json")
	if id, _ := sentTask(t, out); code != 0 || !strings.HasSuffix(errs, " TEXT --task "+id+" --extension https://example.com/ext/x\n") {
		t.Fatalf("send --extension: exit %d, stderr %q", code, errs)
	}
	// A completed task gets no hint.
	if _, errs, code := run(t, "", "send", base+"/a2a/echo", "hi", "--json"); code != 0 || errs != "" {
		t.Fatalf("send to echo: exit %d, stderr %q", code, errs)
	}
}
