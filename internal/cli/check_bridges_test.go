package cli

import (
	"testing"
)

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
