package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/internal/testutil"
)

func TestCheckList(t *testing.T) {
	out, _, code := run(t, "", "check", "--list")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"rpc.content-type", "MUST", "§3.2.1", "stream.resume", "MAY", "push.delivery"} {
		if !strings.Contains(out, want) {
			t.Errorf("--list output lacks %q", want)
		}
	}
}

func TestCheckUsage(t *testing.T) {
	for _, args := range [][]string{
		{"check"},
		{"check", "ftp://example.com"},
		{"check", "http://127.0.0.1:1", "--category", "nope"},
		{"check", "http://127.0.0.1:1", "--only", "rpc.nope"},
		{"check", "http://127.0.0.1:1", "--header", "no-colon"},
		{"check", "--list", "http://127.0.0.1:1"},
	} {
		_, errOut, code := run(t, "", args...)
		if code != ExitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", args, code, ExitUsage, errOut)
		}
	}
}

type jsonReport struct {
	Score  float64 `json:"score"`
	Counts struct {
		Total int `json:"total"`
		Pass  int `json:"pass"`
		Fail  int `json:"fail"`
	} `json:"counts"`
	Failed  map[string]int `json:"failedByLevel"`
	Results []struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		Level   string `json:"level"`
		Message string `json:"message"`
	} `json:"results"`
}

// parseReport reads the JSON report `check --json` printed.
func parseReport(t *testing.T, out string) jsonReport {
	t.Helper()
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not a JSON report: %v\n%s", err, out)
	}
	return rep
}

// wantNoFailures fails t for each failed check of rep.
func wantNoFailures(t *testing.T, rep jsonReport) {
	t.Helper()
	for _, r := range rep.Results {
		if r.Status == "fail" {
			t.Errorf("%s (%s) failed: %s", r.ID, r.Level, r.Message)
		}
	}
}

// TestCheckA2Abridge: `check --json --report` against the in-process
// server's slow agent: every MUST passes (exit 0), the JSON report parses
// and the Markdown report is written.
func TestCheckA2Abridge(t *testing.T) {
	t.Parallel()
	ts, _ := testHost(t)
	report := filepath.Join(t.TempDir(), "report.md")
	out, errOut, code := run(t, "", "check", ts.URL+"/a2a/slow", "--json", "--text", "0", "--long-text", "1", "--timeout", "5s", "--report", report)
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	rep := parseReport(t, out)
	if rep.Failed["MUST"] != 0 || rep.Counts.Pass < 40 {
		t.Errorf("report: %+v", rep)
	}
	wantNoFailures(t, rep)
	if !strings.Contains(errOut, "rpc.content-type") || !strings.Contains(errOut, "report written to") {
		t.Errorf("no progress on stderr:\n%s", errOut)
	}
	md, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# A2A 0.3.0 and 1.0 compliance report: slow", "## Interfaces", "| A2A 1.0 HTTP+JSON |", "## Summary", "## Findings", "## Acceptance checklist", "- [x] `card.fetch`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// TestCheckFailingServer: a server that breaks MUSTs gives exit status 1
// and the failures with evidence in the terminal summary.
func TestCheckFailingServer(t *testing.T) {
	t.Parallel()
	var base string
	ts := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"name":"bad","description":"d","url":"` + base + `/","version":"1","protocolVersion":"0.3.0",` +
				`"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`))
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"nothing works"}}`))
	}))
	base = ts.URL
	out, errOut, code := run(t, "", "check", ts.URL, "--human", "-q", "--category", "card,rpc", "--timeout", "2s")
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitFailure, errOut)
	}
	for _, want := range []string{"FAILURES", "✗ rpc.content-type  MUST", "← HTTP 200  text/plain", "NOT CONFORMANT", "card.preferred-transport"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "MUST requirement(s) failed") {
		t.Errorf("stderr: %q", errOut)
	}
	if strings.Contains(errOut, "[") {
		t.Errorf("-q printed progress: %q", errOut)
	}
}

// TestCheckProtocolBinding: --protocol 1.0 --binding rest checks the A2A
// 1.0 HTTP+JSON interface (and the 1.0 card) only; bad values are usage
// errors.
func TestCheckProtocolBinding(t *testing.T) {
	t.Parallel()
	ts, _ := testHost(t)
	out, errOut, code := run(t, "", "check", ts.URL+"/a2a/echo", "--json", "-q", "--protocol", "1.0", "--binding", "rest", "--timeout", "5s")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	rep := parseReport(t, out)
	if rep.Counts.Pass < 20 {
		t.Errorf("report: %+v", rep.Counts)
	}
	for _, r := range rep.Results {
		if !strings.HasPrefix(r.ID, "rest10.") && !strings.HasPrefix(r.ID, "card10.") {
			t.Errorf("check %s ran with --protocol 1.0 --binding rest", r.ID)
		}
		if r.Status == "fail" {
			t.Errorf("%s failed: %s", r.ID, r.Message)
		}
	}
	for _, args := range [][]string{{"--protocol", "2.0"}, {"--binding", "soap"}} {
		_, errOut, code := run(t, "", append([]string{"check", ts.URL}, args...)...)
		if code != ExitUsage || !strings.Contains(errOut, "unknown") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestCheckBridgedAgents: `a2abridge check` scores a bridged agent of each
// kind (an http agent in front of the simple endpoint of echo, an a2a agent
// in front of echo, an exec agent running cat) like any hosted agent: every
// check of every version and binding passes.
func TestCheckBridgedAgents(t *testing.T) {
	addr := freeAddr(t)
	base := "http://" + addr
	cfg := writeFile(t, "bridges.yaml", `agents:
  viahttp:
    kind: http
    url: `+base+`/simple/echo
  viaa2a:
    kind: a2a
    url: `+base+`/a2a/echo
  cat:
    kind: exec
    command: [cat]
`)
	startChild(t, "--memory", "--config", cfg, "--addr", addr)
	for _, agent := range []string{"viahttp", "viaa2a", "cat"} {
		t.Run(agent, func(t *testing.T) {
			out, errOut, code := run(t, "", "check", base+"/a2a/"+agent, "--json", "--timeout", "10s")
			if code != ExitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, errOut)
			}
			rep := parseReport(t, out)
			if rep.Counts.Pass < 100 {
				t.Errorf("only %d checks passed: %+v", rep.Counts.Pass, rep.Counts)
			}
			wantNoFailures(t, rep)
		})
	}
}
