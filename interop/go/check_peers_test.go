package interop

// `a2abridge check` (the binary built by TestMain, run with --json) against
// the servers, each started once on 127.0.0.1: `a2abridge serve` (plain,
// and with authentication, an extended card and push notifications; A2A
// 0.3 and 1.0), the A2A 0.3 peers a2a-go v0.3.15 (cmd/peer-a2ago),
// @a2a-js/sdk 0.3.14 (../js/peer-server.mjs) and trpc-a2a-go
// (cmd/peer-trpc), and the A2A 1.0 peers a2a-go v2.4.0 (cmd/peer-a2agov2)
// and @a2a-js/sdk 1.3.0 (../js/peer-server-v1.mjs). Against a2abridge every
// MUST passes (but one, named); against the peers the report runs to
// completion and states specific true findings about them (see
// ../README.md and ../V1_WIRE_NOTES.md for the quirks).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkRunTimeout bounds one `a2abridge check` run; every run is expected
// to take well under it (the slowest, trpc's slow agent, about 12 s).
const checkRunTimeout = 60 * time.Second

// checkReport is the part of the --json report the tests read.
type checkReport struct {
	Score  float64        `json:"score"`
	Failed map[string]int `json:"failedByLevel"`
	Counts struct {
		Total, Pass, Fail, Skip, NotApplicable int
	} `json:"counts"`
	Results []struct {
		ID      string `json:"id"`
		Level   string `json:"level"`
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"results"`
	Interfaces []struct {
		Name       string  `json:"name"`
		URL        string  `json:"url"`
		Checked    bool    `json:"checked"`
		NotChecked string  `json:"notChecked"`
		Score      float64 `json:"score"`
	} `json:"interfaces"`
}

// result returns the status and message of check id.
func (r *checkReport) result(t *testing.T, id string) (string, string) {
	t.Helper()
	for _, x := range r.Results {
		if x.ID == id {
			return x.Status, x.Message
		}
	}
	t.Fatalf("check %s is not in the report", id)
	return "", ""
}

// expect asserts the status of a check, and that its message contains each
// of the fragments.
func (r *checkReport) expect(t *testing.T, id, status string, fragments ...string) {
	t.Helper()
	st, msg := r.result(t, id)
	if st != status {
		t.Errorf("%s: %s (%s), want %s", id, st, msg, status)
		return
	}
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Errorf("%s: message %q lacks %q", id, msg, f)
		}
	}
}

// runCheck runs `a2abridge check URL --json -q args...` and returns the
// report; the exit status must be 0 (no MUST failed) or 1 (some did).
func runCheck(t *testing.T, url string, args ...string) *checkReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), checkRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, append([]string{"check", url, "--json", "-q"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("check %s: %v\nstderr:\n%s", url, err, stderr.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("check %s did not finish within %s", url, checkRunTimeout)
	}
	var rep checkReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("check %s: exit %d, not a JSON report (%v)\nstdout:\n%s\nstderr:\n%s", url, code, err, stdout.String(), stderr.String())
	}
	if code != 0 && code != 1 {
		t.Fatalf("check %s: exit %d\nstderr:\n%s", url, code, stderr.String())
	}
	if (code == 1) != (rep.Failed["MUST"] > 0) {
		t.Errorf("check %s: exit %d with %d MUST failures", url, code, rep.Failed["MUST"])
	}
	t.Logf("check %s %s: %.1f%%, %d pass, %d fail (MUST %d, SHOULD %d, MAY %d), %d skip, %d n/a in %s",
		url, strings.Join(args, " "), rep.Score, rep.Counts.Pass, rep.Counts.Fail, rep.Failed["MUST"], rep.Failed["SHOULD"], rep.Failed["MAY"],
		rep.Counts.Skip, rep.Counts.NotApplicable, took.Round(10*time.Millisecond))
	for _, x := range rep.Results {
		if x.Status == "fail" {
			t.Logf("  fail %-6s %-28s %s", x.Level, x.ID, x.Message)
		}
	}
	return &rep
}

// readmeRow asserts that the table of what `check` reports, in
// docs/reference/check.md, has the row (server cell starting with server,
// agent cell agent) with the measured score and pass / fail / skip / n/a
// counts, so the check reference cannot go stale.
//
// racy names checks whose outcome depends on timing: they need a task
// caught while it runs, and an agent that is input-required a moment
// after it starts (chat) is usually not caught, so the reference counts
// them as skipped; one that passed on a slow machine is counted so too.
func readmeRow(t *testing.T, rep *checkReport, server, agent string, racy ...string) {
	t.Helper()
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "reference", "check.md"))
	if err != nil {
		t.Fatal(err)
	}
	score := fmt.Sprintf("%.1f %%", rep.Score)
	if score == "100.0 %" {
		score = "100 %"
	}
	pass, skip := rep.Counts.Pass, rep.Counts.Skip
	for _, x := range rep.Results {
		if x.Status == "pass" && slices.Contains(racy, x.ID) {
			pass, skip = pass-1, skip+1
		}
	}
	counts := fmt.Sprintf("%d / %d / %d / %d", pass, rep.Counts.Fail, skip, rep.Counts.NotApplicable)
	for _, line := range strings.Split(string(md), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), server) || strings.TrimSpace(cells[2]) != agent {
			continue
		}
		if got := strings.TrimSpace(cells[3]); got != score {
			t.Errorf("docs/reference/check.md says %s %s scores %s; measured %s", server, agent, got, score)
		}
		if got := strings.TrimSpace(cells[4]); got != counts {
			t.Errorf("docs/reference/check.md says %s %s has %s (pass / fail / skip / n/a); measured %s", server, agent, got, counts)
		}
		return
	}
	t.Errorf("docs/reference/check.md has no row for %s %s in the table of what check reports (measured %s, %s)", server, agent, score, counts)
}

// mustAllPass asserts that no MUST failed but the known ones.
func mustAllPass(t *testing.T, rep *checkReport, known ...string) {
	t.Helper()
	for _, x := range rep.Results {
		if x.Level == "MUST" && x.Status == "fail" && !slices.Contains(known, x.ID) {
			t.Errorf("MUST %s failed: %s", x.ID, x.Message)
		}
	}
}

// absent asserts that no check of the categories ran (the card does not
// offer their interface).
func (r *checkReport) absent(t *testing.T, categories ...string) {
	t.Helper()
	for _, x := range r.Results {
		if cat, _, _ := strings.Cut(x.ID, "."); slices.Contains(categories, cat) {
			t.Errorf("check %s ran; the card does not offer its interface", x.ID)
			return
		}
	}
}

// ifaceScore returns the score of an interface, which must have been checked.
func (r *checkReport) ifaceScore(t *testing.T, name string) float64 {
	t.Helper()
	for _, i := range r.Interfaces {
		if i.Name == name {
			if !i.Checked {
				t.Errorf("interface %s was not checked", name)
			}
			return i.Score
		}
	}
	t.Errorf("the report lists no interface %s", name)
	return -1
}

// iface asserts an interface's entry in the report: checked with the
// score, or not checked.
func (r *checkReport) iface(t *testing.T, name string, score float64) {
	t.Helper()
	for _, i := range r.Interfaces {
		if i.Name == name {
			if !i.Checked || i.Score != score {
				t.Errorf("interface %s: checked %v, score %.1f; want %.1f", name, i.Checked, i.Score, score)
			}
			return
		}
	}
	t.Errorf("the report lists no interface %s", name)
}

// secureConfig is an `a2abridge serve --config` file: bearer tokens, an
// extended card for echo, push notifications with loopback refused.
const secureConfig = `memory: true
auth:
  bearer_tokens:
    checker: check-token-0123456789
agents:
  echo:
    extended_card:
      description: Echo, extended for authenticated callers.
      skills:
        - id: echo-files
          name: Echo files
          description: Echoes files too.
          tags: [echo]
push:
  enabled: true
`

func TestCheckPeers(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "secure.yaml")
	if err := os.WriteFile(cfg, []byte(secureConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	ours := startServer(t, "--memory", "--push-allow", "127.0.0.0/8").base
	secure := startServer(t, "--config", cfg).base
	a2ago := startPeer(t, buildPeer(t, peerPkg)).base
	gov2 := v1StartGoPeer(t, false).base
	gov2compat := v1StartGoPeer(t, true).base
	gov2grpc := startPeer(t, buildPeer(t, v1PeerPkg), "--grpc", "--step", "250ms").base
	jsv1 := v1StartJSPeer(t)
	jsv1grpc := v1StartJSPeerArgs(t, "--grpc", "--step-ms", "250")
	trpc := startPeer(t, buildPeer(t, "./cmd/peer-trpc")).base
	js := startJSPeer(t, false)

	// The slow agents: "0" finishes at once, "3" keeps them busy for the
	// cancel and resubscribe probes (which cancel it right away).
	slowArgs := []string{"--text", "0", "--long-text", "3", "--timeout", "10s"}

	t.Run("a2abridge", func(t *testing.T) {
		t.Parallel()
		t.Run("echo", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, ours)
			mustAllPass(t, rep)
			rep.expect(t, "stream.resume", "pass")
			rep.expect(t, "card.cap-extended-card", "pass", "-32007")
		})
		t.Run("chat", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, ours+"/a2a/chat")
			mustAllPass(t, rep)
			readmeRow(t, rep, "`a2abridge serve --push-allow 127.0.0.0/8`", "`chat`",
				"tasks.cancel-running", "tasks.cancel-state", "stream.resubscribe-running",
				"rpc10.cancel", "rpc10.subscribe", "rest10.cancel", "rest10.subscribe", "grpc10.cancel", "grpc10.subscribe")
			rep.expect(t, "grpc10.subscribe-interrupted", "pass")
			rep.expect(t, "message.continue", "pass")
			rep.expect(t, "message.context-mismatch", "pass")
		})
		t.Run("slow", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, ours+"/a2a/slow", slowArgs...)
			mustAllPass(t, rep)
			readmeRow(t, rep, "`a2abridge serve --push-allow 127.0.0.0/8`", "`slow`")
			for _, name := range []string{"A2A 1.0 JSON-RPC", "A2A 1.0 HTTP+JSON", "A2A 1.0 gRPC", "A2A 0.3 JSON-RPC"} {
				rep.iface(t, name, 100)
			}
			for _, id := range []string{"grpc10.cancel", "grpc10.subscribe", "grpc10.push", "grpc10.stream-end", "grpc10.errors", "grpc10.list-paging"} {
				rep.expect(t, id, "pass")
			}
			for _, id := range []string{"rpc10.cancel", "rest10.cancel", "rpc10.subscribe", "rest10.subscribe", "rpc10.push", "rest10.push",
				"rpc10.list-paging", "rest10.list-paging", "rpc10.version-missing", "rest10.routes"} {
				rep.expect(t, id, "pass")
			}
			for _, id := range []string{"tasks.cancel-running", "tasks.cancel-state", "stream.resubscribe-running",
				"push.set", "push.get", "push.list", "push.delete", "push.delivery", "push.token", "rpc.content-type", "rpc.batch"} {
				rep.expect(t, id, "pass")
			}
		})
		t.Run("secure", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, secure+"/a2a/echo", "--token", "check-token-0123456789")
			// The served card writes security requirement scopes as bare
			// arrays, which a2a-go v2 up to v2.4.0 needs (server/host.go
			// cardOptions); ProtoJSON has {"list": […]}.
			mustAllPass(t, rep, "card10.schema")
			rep.expect(t, "card10.schema", "fail", "at '/securityRequirements/0/schemes/bearer': got array, want object")
			rep.expect(t, "rpc10.extended-card", "pass")
			rep.expect(t, "rest10.extended-card", "pass")
			for _, id := range []string{"auth.unauthenticated", "auth.challenge", "auth.extended-card", "auth.extended-card-unauth"} {
				rep.expect(t, id, "pass")
			}
			// --push without --push-allow refuses the checker's loopback
			// webhook, and its fallback, a name that does not resolve.
			rep.expect(t, "push.set", "skip", "refused the loopback webhook", "a2a-check.invalid/webhook too")
			rep.expect(t, "push.delivery", "skip", "refused the loopback webhook")
		})
	})

	t.Run("a2a-go", func(t *testing.T) {
		t.Parallel()
		t.Run("slow", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, a2ago+"/a2a/slow", slowArgs...)
			readmeRow(t, rep, "a2a-go v0.3.15", "`slow`")
			// a2a-go v0.3.15 answers JSON-RPC with Content-Type text/plain.
			rep.expect(t, "rpc.content-type", "fail", `"text/plain; charset=utf-8"`)
			// It rejects batches with -32602.
			rep.expect(t, "rpc.batch", "fail", "-32602")
			// delete is answered with neither result nor error.
			rep.expect(t, "push.delete", "fail", "neither result nor error")
			rep.expect(t, "rpc.response-shape", "fail", "tasks/pushNotificationConfig/delete", "neither result nor error")
			// It cannot resubscribe once the execution has left memory.
			rep.expect(t, "stream.resubscribe-finished", "fail", "-32001")
			// A second cancel returns the canceled task instead of -32002.
			rep.expect(t, "tasks.cancel-terminal", "fail", "already canceled task")
			// SSE ids are random UUIDs: Last-Event-ID cannot resume.
			rep.expect(t, "stream.resume", "fail", "Last-Event-ID")
			rep.expect(t, "tasks.cancel-running", "pass")
			rep.expect(t, "stream.resubscribe-running", "pass")
			rep.expect(t, "push.delivery", "pass")
			if rep.Failed["MUST"] == 0 {
				t.Error("no MUST failure reported for a2a-go")
			}
		})
		t.Run("chat", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, a2ago+"/a2a/chat")
			rep.expect(t, "message.continue", "pass")
			rep.expect(t, "rpc.content-type", "fail", "text/plain")
		})
	})

	t.Run("js", func(t *testing.T) {
		t.Parallel()
		if js.skip != "" {
			skipOrFail(t, js.skip)
		}
		t.Run("slow", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, js.base+"/a2a/slow", slowArgs...)
			readmeRow(t, rep, "@a2a-js/sdk 0.3.14", "`slow`")
			rep.expect(t, "rpc.content-type", "pass")
			// express answers a parse error with HTTP 400.
			rep.expect(t, "rpc.http-status", "fail", "-32700 → HTTP 400")
			rep.expect(t, "rpc.batch", "fail", "-32600")
			// historyLength 0 returns the whole history (slice(-0)).
			rep.expect(t, "tasks.history-length", "fail", "historyLength 0 returned")
			// No SSE ids.
			rep.expect(t, "stream.resume", "n/a", "no SSE event ids")
			// params are not validated: the agent runs on a malformed message.
			rep.expect(t, "rpc.invalid-params", "fail", "result task")
			rep.expect(t, "stream.resubscribe-finished", "pass")
			rep.expect(t, "tasks.cancel-running", "pass")
			rep.expect(t, "push.delivery", "pass")
		})
		t.Run("chat", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, js.base+"/a2a/chat")
			rep.expect(t, "message.continue", "pass")
			rep.expect(t, "message.context-mismatch", "fail", "was accepted")
		})
	})

	// The A2A 1.0 peers serve 1.0 only (JSON-RPC at /a2a/{name}, HTTP+JSON at
	// /a2a/{name}/rest): the 0.3 checks do not run. Their findings are in
	// ../V1_WIRE_NOTES.md ("What a2abridge check finds").
	// a2a-go v2.4.0's gRPC server alone (a2agrpc/v1): its quirks are
	// those of its other bindings, read as gRPC statuses.
	t.Run("a2a-go-v2-grpc", func(t *testing.T) {
		t.Parallel()
		rep := runCheck(t, gov2grpc+"/a2a/slow", slowArgs...)
		readmeRow(t, rep, "a2a-go v2.4.0 gRPC", "`slow`")
		rep.absent(t, "card", "rpc", "message", "parts", "tasks", "stream", "state", "push", "auth", "schema", "rpc10", "rest10")
		rep.expect(t, "grpc10.version-unsupported", "fail", "A2A-Version: 9.9", "-32001")
		rep.expect(t, "grpc10.terminal-task-message", "fail", "-32602", "UNSUPPORTED_OPERATION")
		rep.expect(t, "grpc10.subscribe-terminal", "fail", "-32001", "no active execution")
		rep.expect(t, "grpc10.extended-card-unsupported", "fail", "-32007")
		for _, id := range []string{"send", "send-blocking", "get", "get-history-length", "cancel", "list", "list-paging", "list-order",
			"list-filter", "list-page-size", "list-artifacts", "stream", "stream-first", "stream-end", "subscribe", "errors", "push"} {
			rep.expect(t, "grpc10."+id, "pass")
		}
		if score := rep.ifaceScore(t, "A2A 1.0 gRPC"); score >= 100 {
			t.Errorf("gRPC scores %.1f with MUST failures", score)
		}
	})

	t.Run("a2a-go-v2", func(t *testing.T) {
		t.Parallel()
		t.Run("slow", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, gov2+"/a2a/slow", slowArgs...)
			readmeRow(t, rep, "a2a-go v2.4.0", "`slow`")
			rep.absent(t, "card", "rpc", "message", "parts", "tasks", "stream", "state", "push", "auth", "schema")
			for _, b := range []string{"rpc10", "rest10"} {
				// It ignores A2A-Version: any value, or none, is served as 1.0.
				rep.expect(t, b+".version-missing", "fail", "served as 1.0")
				rep.expect(t, b+".version-unsupported", "fail", "A2A-Version: 9.9", "-32001")
				// A message to a completed task is -32602, subscribing to one -32001.
				rep.expect(t, b+".terminal-task-message", "fail", "-32602", "UNSUPPORTED_OPERATION")
				rep.expect(t, b+".subscribe-terminal", "fail", "-32001", "no active execution")
				// ListTasks with no match writes "tasks": null.
				rep.expect(t, b+".schema", "fail", "ListTasks", "at '/tasks': got null, want array")
				for _, id := range []string{"send", "send-blocking", "get", "get-history-length", "cancel", "list", "list-paging", "list-order",
					"list-filter", "list-page-size", "list-artifacts", "stream", "stream-frames", "stream-first", "stream-end", "subscribe", "errors", "payload-shape"} {
					rep.expect(t, b+"."+id, "pass")
				}
			}
			// DeleteTaskPushNotificationConfig answers {"jsonrpc":"2.0","id":…}: no result.
			rep.expect(t, "rpc10.push", "fail", "DeleteTaskPushNotificationConfig", "neither result nor error")
			rep.expect(t, "rpc10.push-delete-idempotent", "fail", "neither result nor error")
			rep.expect(t, "rest10.push-delete-idempotent", "pass")
			// A card that declares no extended card: -32007, not -32004.
			rep.expect(t, "rpc10.extended-card-unsupported", "fail", "-32007")
			rep.expect(t, "rest10.extended-card-unsupported", "fail", "-32007")
			rep.expect(t, "rpc10.envelope", "fail", "DeleteTaskPushNotificationConfig", "neither result nor error")
			rep.expect(t, "rest10.push", "pass")
			rep.expect(t, "rest10.routes", "pass")
			rep.expect(t, "card10.schema", "pass")
			for _, name := range []string{"A2A 1.0 JSON-RPC", "A2A 1.0 HTTP+JSON"} {
				if score := rep.ifaceScore(t, name); score >= 100 {
					t.Errorf("%s scores %.1f with MUST failures", name, score)
				}
			}
		})
	})

	// With --compat, a2a-go v2 serves a union card: the 1.0 interfaces, and
	// 0.3 JSON-RPC and HTTP+JSON at /a2a/{name}/v0.3 (url and
	// preferredTransport name the 0.3 JSON-RPC one). Each interface is
	// checked where the card says.
	t.Run("a2a-go-v2-compat", func(t *testing.T) {
		t.Parallel()
		rep := runCheck(t, gov2compat+"/a2a/echo")
		var got []string
		for _, i := range rep.Interfaces {
			what := "checked"
			if !i.Checked {
				what = i.NotChecked
			}
			got = append(got, fmt.Sprintf("%s %s: %s", i.Name, strings.TrimPrefix(i.URL, gov2compat), what))
		}
		want := []string{"A2A 1.0 JSON-RPC /a2a/echo: checked", "A2A 1.0 HTTP+JSON /a2a/echo/rest: checked", "A2A 0.3 JSON-RPC /a2a/echo/v0.3: checked",
			"A2A 0.3 HTTP+JSON /a2a/echo/v0.3: checked"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("interfaces:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		rep.expect(t, "card.url", "pass", "/a2a/echo/v0.3")
		rep.expect(t, "rpc10.send", "pass")
		rep.expect(t, "rest10.send", "pass")
		rep.expect(t, "card10.schema", "pass")
		for _, id := range []string{"rest03.send", "rest03.get", "rest03.get-unknown", "rest03.stream"} {
			rep.expect(t, id, "pass")
		}
		// Its 0.3 HTTP+JSON errors are application/problem+json.
		rep.expect(t, "rest03.content-type", "fail", `Content-Type "application/problem+json"`)
	})

	t.Run("js-v1", func(t *testing.T) {
		t.Parallel()
		if jsv1.skip != "" {
			skipOrFail(t, jsv1.skip)
		}
		t.Run("slow", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, jsv1.base+"/a2a/slow", slowArgs...)
			readmeRow(t, rep, "@a2a-js/sdk 1.3.0", "`slow`")
			rep.absent(t, "card", "rpc", "message", "parts", "tasks", "stream", "state", "push", "auth", "schema")
			mustAllPass(t, rep)
			rep.iface(t, "A2A 1.0 JSON-RPC", 100)
			// express answers a route with the wrong method 404 (HTML).
			rep.expect(t, "rest10.wrong-method", "fail", "HTTP 404 text/html")
			for _, b := range []string{"rpc10", "rest10"} {
				for _, id := range []string{"version-missing", "version-unsupported", "terminal-task-message", "subscribe-terminal",
					"push", "schema", "errors", "list-paging", "cancel", "subscribe"} {
					rep.expect(t, b+"."+id, "pass")
				}
			}
		})
		t.Run("chat", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, jsv1.base+"/a2a/chat")
			mustAllPass(t, rep)
			// A second cancel returns the canceled task (cancel is idempotent).
			rep.expect(t, "rpc10.cancel-terminal", "pass", "idempotent")
		})
	})

	// @a2a-js/sdk 1.3.0's gRPC service alone (server/grpc on @grpc/grpc-js).
	t.Run("js-v1-grpc", func(t *testing.T) {
		t.Parallel()
		if jsv1grpc.skip != "" {
			skipOrFail(t, jsv1grpc.skip)
		}
		rep := runCheck(t, jsv1grpc.base+"/a2a/slow", slowArgs...)
		readmeRow(t, rep, "@a2a-js/sdk 1.3.0 gRPC", "`slow`")
		rep.absent(t, "card", "rpc", "message", "parts", "tasks", "stream", "state", "push", "auth", "schema", "rpc10", "rest10")
		mustAllPass(t, rep)
		rep.iface(t, "A2A 1.0 gRPC", 100)
		for _, id := range []string{"send", "send-blocking", "get", "get-history-length", "cancel", "list", "list-paging", "list-order",
			"list-filter", "list-page-size", "list-artifacts", "stream", "stream-first", "stream-end", "subscribe", "subscribe-terminal",
			"terminal-task-message", "version-unsupported", "errors", "push"} {
			rep.expect(t, "grpc10."+id, "pass")
		}
	})

	t.Run("trpc", func(t *testing.T) {
		t.Parallel()
		t.Run("slow", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, trpc+"/a2a/slow/", slowArgs...)
			readmeRow(t, rep, "trpc-a2a-go v0.2.5", "`slow`")
			// trpc-a2a-go answers JSON-RPC errors with HTTP 500 (and 400/404).
			rep.expect(t, "rpc.http-status", "fail", "-32001 → HTTP 500", "-32601 → HTTP 404")
			rep.expect(t, "rpc.missing-method", "fail", "HTTP 404", "-32601")
			rep.expect(t, "rpc.parse-error", "fail", "no id member")
			rep.expect(t, "card.protocol-version", "fail", `"0.2.5"`)
			// It "cancels" completed tasks, and deletes tasks on cancel.
			rep.expect(t, "tasks.cancel-terminal", "fail", "result task canceled")
			rep.expect(t, "state.terminal-immutable", "fail", "tasks/cancel returned it canceled")
			rep.expect(t, "tasks.cancel-state", "fail", "-32001")
			rep.expect(t, "stream.resubscribe-running", "fail", "no event has final: true")
			// Only set and get of the push config methods exist; nothing is delivered.
			rep.expect(t, "push.list", "fail", "-32601")
			rep.expect(t, "push.delivery", "fail", "no notification")
			rep.expect(t, "message.unknown-task", "fail", "was accepted")
		})
		t.Run("chat", func(t *testing.T) {
			t.Parallel()
			rep := runCheck(t, trpc+"/a2a/chat/")
			// input-required is not final for trpc: a chat turn's stream has no final event.
			rep.expect(t, "stream.final-last", "fail", "status-update input-required")
			rep.expect(t, "message.continue", "pass")
		})
	})
}
