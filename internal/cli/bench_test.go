package cli

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

func TestBenchCommand(t *testing.T) {
	ts, seen := testHost(t)
	out, errs, code := run(t, "", "bench", ts.URL+"/a2a/echo", "--requests", "60", "-c", "3", "--warmup", "0", "--json", "--header", "X-Test: bench", "--token", "tok")
	if code != ExitOK {
		t.Fatalf("bench: %d %s", code, errs)
	}
	var r struct {
		Mode     string
		Requests int64
		Errors   int64
		Latency  struct{ P50, P99, Max float64 } `json:"latency_ms"`
	}
	if err := json.Unmarshal([]byte(out), &r, json.MatchCaseInsensitiveNames(true)); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Mode != "send" || r.Requests != 60 || r.Errors != 0 || !(r.Latency.P50 > 0 && r.Latency.P50 <= r.Latency.P99 && r.Latency.P99 <= r.Latency.Max) {
		t.Fatalf("result: %s", out)
	}
	if v, _ := seen.Load("X-Test"); v != "bench" {
		t.Fatalf("--header not sent: %v", v)
	}

	out, _, code = run(t, "", "bench", ts.URL, "--mode", "stream", "-d", "500ms", "--warmup", "100ms", "--human", "-q")
	if code != ExitOK || !strings.Contains(out, "throughput") || !strings.Contains(out, "first event") {
		t.Fatalf("human stream: %d %s", code, out)
	}

	// A2A 1.0 over both bindings.
	for _, binding := range []string{"jsonrpc", "rest"} {
		out, errs, code = run(t, "", "bench", ts.URL+"/a2a/echo", "--protocol", "1.0", "--binding", binding, "--mode", "stream", "-n", "20", "-c", "2", "--warmup", "0", "--json")
		if code != ExitOK || !strings.Contains(out, `"protocol":"1.0"`) || !strings.Contains(out, `"binding":"`+binding+`"`) || !strings.Contains(out, `"requests":20`) || !strings.Contains(out, `"errors":0`) {
			t.Fatalf("1.0 %s: %d %s %s", binding, code, out, errs)
		}
	}

	for _, args := range [][]string{
		{"bench", ts.URL, "--mode", "nope"},
		{"bench", ts.URL, "--protocol", "2.0"},
		{"bench", ts.URL, "--binding", "grpc"},
		{"bench", ts.URL, "--binding", "rest"},
		{"bench", ts.URL, "--duration", "1s", "--requests", "5"},
		{"bench", ts.URL, "--mode", "idle", "--requests", "5"},
		{"bench", ts.URL, "-c", "0"},
		{"bench", "example.com:1"}, // no scheme, not loopback
		{"bench", ts.URL, "--header", "nocolon"},
	} {
		if _, errs, code := run(t, "", args...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d (%s)", args, code, ExitUsage, errs)
		}
	}
	// Nothing listening: a transport error.
	if _, errs, code := run(t, "", "bench", "http://127.0.0.1:1/", "-n", "1"); code != ExitTransport {
		t.Errorf("closed port: exit %d (%s)", code, errs)
	}
	// A loopback host without a scheme is http://.
	if _, errs, code := run(t, "", "bench", "localhost:1", "-n", "1"); code != ExitTransport || !strings.Contains(errs, "http://localhost:1") {
		t.Errorf("localhost:1: exit %d (%s)", code, errs)
	}
	// Client-only flags do not exist on bench.
	if _, errs, code := run(t, "", "bench", ts.URL, "--api-key", "k"); code != ExitUsage || !strings.Contains(errs, "unknown flag") {
		t.Errorf("--api-key on bench: exit %d (%s)", code, errs)
	}
}
