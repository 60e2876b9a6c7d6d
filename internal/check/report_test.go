package check

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// sampleReport is a fixed report with every kind of result.
func sampleReport() *Report {
	mk := func(id string, st Status, msg string, ev ...Evidence) CheckResult {
		c := Lookup(id)
		return CheckResult{ID: c.ID, Category: c.Category, Section: c.Section, Level: c.Level, Title: c.Title,
			Requirement: c.Requirement, Recommendation: c.Recommendation, Status: st, Message: msg,
			Duration: 3 * time.Millisecond, Evidence: ev}
	}
	card := Evidence{Seq: 1, DurationMS: 2,
		Request: EvidenceRequest{Method: "GET", URL: "http://127.0.0.1:9/a2a/echo/.well-known/agent-card.json", Headers: map[string]string{"Accept": "application/json"}},
		Response: &EvidenceResponse{Status: 200, Headers: map[string]string{"Content-Type": "application/json"},
			Body: `{"name":"echo","protocolVersion":"0.3.0","url":"http://127.0.0.1:9/a2a/echo"}`}}
	rpcText := Evidence{Seq: 7, DurationMS: 1,
		Request: EvidenceRequest{Method: "POST", URL: "http://127.0.0.1:9/a2a/echo", RPCMethod: "tasks/get",
			Headers: map[string]string{"Content-Type": "application/json", "Authorization": "Bearer ***"},
			Body:    `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"id":"a2a-check-unknown-1"}}`},
		Response: &EvidenceResponse{Status: 200, Headers: map[string]string{"Content-Type": "text/plain; charset=utf-8"},
			Body: `{"jsonrpc":"2.0","id":4,"error":{"code":-32001,"message":"task not found"}}`}}
	stream := Evidence{Seq: 12, DurationMS: 40,
		Request: EvidenceRequest{Method: "POST", URL: "http://127.0.0.1:9/a2a/echo", RPCMethod: "message/stream",
			Body: `{"jsonrpc":"2.0","id":9,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m1","parts":[{"kind":"text","text":"hello"}],"role":"user"}}}`},
		Response: &EvidenceResponse{Status: 200, Headers: map[string]string{"Content-Type": "text/event-stream"},
			Events: []EvidenceEvent{
				{ID: "1", Data: `{"jsonrpc":"2.0","id":9,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"submitted"}}}`, AtMS: 1},
				{Event: "status", Data: `{"jsonrpc":"2.0","id":9,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working"},"final":false}}`, AtMS: 2},
			},
			Stream: "still open after the final event; closed by the checker"}}
	unreachable := Evidence{Seq: 20, DurationMS: 3000, Error: "no complete answer within 3s",
		Request: EvidenceRequest{Method: "POST", URL: "http://127.0.0.1:9/a2a/echo", RPCMethod: "tasks/cancel", Body: `{"jsonrpc":"2.0","id":15,"method":"tasks/cancel","params":{"id":"t1"}}`}}
	r := &Report{
		Checker: "a2abridge check", Protocol: "0.3.0", Target: "http://127.0.0.1:9/a2a/echo",
		CardURL: "http://127.0.0.1:9/a2a/echo/.well-known/agent-card.json", Endpoint: "http://127.0.0.1:9/a2a/echo",
		Agent: "echo", AgentVersion: "1.0.0", DeclaredProtocol: "0.3.0",
		Started: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), Duration: 1234 * time.Millisecond,
		Results: []CheckResult{
			mk("card.fetch", Pass, "served at http://127.0.0.1:9/a2a/echo/.well-known/agent-card.json (HTTP 200, 81 bytes)", card),
			mk("card.interfaces", NotApplicable, "the card has no additionalInterfaces"),
			mk("rpc.content-type", Fail, `12 of 12 JSON-RPC answers are not application/json: Content-Type "text/plain; charset=utf-8" ×12`, rpcText),
			mk("rpc.batch", Fail, "a batch of 2 requests was answered with error -32602 \"invalid params\", not an array of responses"),
			mk("stream.final-last", Fail, "no event has final: true; the last is result status-update working and the stream stayed open | (timeout)", stream),
			mk("tasks.cancel-running", Skip, "could not obtain a running task: message/send (blocking:false) returned a task already completed", unreachable),
			mk("stream.resume", Fail, "the server ignores Last-Event-ID"),
			mk("schema.responses", Pass, "all 12 responses and stream events are valid"),
		},
	}
	r.summarize()
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", name, diff)
	}
}

// goldenReport compares r written as Markdown, JSON and text with the
// golden files base.md, base.json and base.txt.
func goldenReport(t *testing.T, r *Report, base string) {
	t.Helper()
	var md, js, txt bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	golden(t, base+".md", md.Bytes())
	golden(t, base+".json", js.Bytes())
	golden(t, base+".txt", txt.Bytes())
}

func TestReportGolden(t *testing.T) { goldenReport(t, sampleReport(), "report") }

func TestScore(t *testing.T) {
	r := sampleReport()
	// Pass: card.fetch (MUST 3), schema.responses (MUST 3); fail:
	// rpc.content-type (MUST 3), rpc.batch (SHOULD 2), stream.final-last
	// (MUST 3), stream.resume (MAY 1); skip and n/a do not count.
	if want := 40.0; r.Score != want {
		t.Errorf("score = %v, want %v (6 of 15)", r.Score, want)
	}
	if r.MustFailures() != 2 || r.Failed[Should] != 1 || r.Failed[May] != 1 {
		t.Errorf("failed by level = %v", r.Failed)
	}
	if r.Counts != (Counts{Total: 8, Pass: 2, Fail: 4, Skip: 1, NotApplicable: 1}) {
		t.Errorf("counts = %+v", r.Counts)
	}
	// The JSON report round-trips.
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Score != r.Score || len(back.Results) != len(r.Results) || back.Results[2].Evidence[0].Response.Headers["Content-Type"] != "text/plain; charset=utf-8" {
		t.Errorf("JSON round trip lost data: %+v", back)
	}
	empty := &Report{}
	empty.summarize()
	if empty.Score != 0 || !strings.Contains(empty.verdict(), "NOTHING VERIFIED") {
		t.Errorf("empty report: score %v, verdict %q", empty.Score, empty.verdict())
	}
}

func TestMarkdownEscapesAndFences(t *testing.T) {
	r := sampleReport()
	r.Results[2].Evidence[0].Response.Body = "```\x1b[31mred``` | pipe"
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	if strings.Contains(s, "\x1b") {
		t.Error("control character in the Markdown report")
	}
	if !strings.Contains(s, "````http") {
		t.Error("evidence with ``` is not fenced with a longer fence")
	}
	if !strings.Contains(s, `stream stayed open \| (timeout)`) {
		t.Error("| in a message is not escaped")
	}
}

// sampleReport10 is a fixed report of an endpoint with A2A 1.0 and 0.3
// interfaces.
func sampleReport10() *Report {
	mk := func(id string, st Status, msg string) CheckResult {
		c := Lookup(id)
		return newCheckResult(c, Result{Status: st, Message: msg}, 2*time.Millisecond)
	}
	base := "http://127.0.0.1:9/a2a/echo"
	iface := func(version, binding, u, why string) InterfaceReport {
		i := Interface{Version: version, Binding: binding, URL: u}
		return InterfaceReport{Interface: i, Name: i.Name(), Checked: why == "", NotChecked: why}
	}
	r := &Report{
		Checker: "a2abridge check", Protocol: "0.3.0 and 1.0", Target: base,
		CardURL: base + "/.well-known/agent-card.json", Endpoint: base,
		Agent: "echo", AgentVersion: "1.0.0", DeclaredProtocol: "0.3.0",
		Started: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), Duration: 2500 * time.Millisecond,
		Interfaces: []InterfaceReport{
			iface("1.0", BindingJSONRPC, base, ""),
			iface("1.0", BindingREST, base, ""),
			iface("0.3", BindingJSONRPC, base, ""),
			iface("1.0", "GRPC", "grpc://127.0.0.1:9", "the checker does not speak this interface"),
		},
		Results: []CheckResult{
			mk("card.fetch", Pass, "served"),
			mk("card10.schema", Fail, "not a valid A2A 1.0.1 AgentCard: at '/securityRequirements/0/schemes/bearer': got array, want object"),
			mk("rpc10.send", Pass, "SendMessage returned {task} (TASK_STATE_COMPLETED)"),
			mk("rpc10.version-missing", Fail, "GetTask without A2A-Version was served as 1.0"),
			mk("rest10.send", Pass, "SendMessage returned {task} (TASK_STATE_COMPLETED)"),
			mk("rest10.subscribe-terminal", Skip, "the card does not declare capabilities.streaming"),
		},
	}
	r.summarize()
	return r
}

func TestReportGolden10(t *testing.T) { goldenReport(t, sampleReport10(), "report10") }
