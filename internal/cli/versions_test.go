package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestClientVersions: --protocol and --binding, the wire JSON of the
// version spoken, list, and the card's "calls" line.
func TestClientVersions(t *testing.T) {
	ts, _ := testHost(t)
	for _, bad := range [][]string{{"--protocol", "2.0"}, {"--binding", "soap"}} {
		_, errs, code := run(t, "", append([]string{"get", ts.URL, "t"}, bad...)...)
		if code != ExitUsage || !strings.Contains(errs, bad[len(bad)-2]) {
			t.Errorf("%v: exit %d %q, want a usage error naming the flag", bad, code, errs)
		}
	}
	out, _, code := run(t, "", "card", ts.URL+"/a2a/chat", "--human", "--binding", "rest")
	if code != ExitOK || !strings.Contains(out, "\n  calls      A2A 1.0 HTTP+JSON at "+ts.URL+"/a2a/chat\n") {
		t.Fatalf("card --binding rest: %d %s", code, out)
	}
	// --json: the card in the version spoken (1.0: supportedInterfaces, no url).
	out, _, _ = run(t, "", "card", ts.URL, "--json")
	if !strings.Contains(out, `"supportedInterfaces"`) || strings.Contains(out, `"url":"`+ts.URL+`/a2a/echo","preferredTransport"`) {
		t.Fatalf("card --json over 1.0: %s", out)
	}
	out, _, _ = run(t, "", "card", ts.URL, "--json", "--protocol", "0.3")
	if !strings.Contains(out, `"protocolVersion":"0.3.0"`) || strings.Contains(out, `"supportedInterfaces"`) {
		t.Fatalf("card --json --protocol 0.3: %s", out)
	}

	for _, binding := range []string{"jsonrpc", "rest"} {
		ctxID := "ctx-" + binding
		out, errs, code := run(t, "", "send", ts.URL, "hi", "--context", ctxID, "--binding", binding, "--json")
		if code != ExitOK || !strings.HasPrefix(out, `{"task":{"id":`) || !strings.Contains(out, `"TASK_STATE_COMPLETED"`) {
			t.Fatalf("send --binding %s: %d %s %s", binding, code, out, errs)
		}
		id := lines(t, out)[0].ID
		out, _, code = run(t, "", "get", ts.URL, id, "--binding", binding, "--json")
		if code != ExitOK || !strings.HasPrefix(out, `{"id":"`+id+`"`) {
			t.Fatalf("get --binding %s: %d %s", binding, code, out)
		}
		out, errs, code = run(t, "", "stream", ts.URL, "more", "--context", ctxID, "--binding", binding, "--json")
		if code != ExitOK || !strings.Contains(out, `"result":{"statusUpdate":`) || strings.Contains(out, `"final"`) {
			t.Fatalf("stream --binding %s: %d %s %s", binding, code, out, errs)
		}
		// A finished task over 1.0: resubscribe shows it as GetTask returns it.
		out, _, code = run(t, "", "resubscribe", ts.URL, id, "--binding", binding, "--json")
		var line struct{ Result json.RawMessage }
		err := json.Unmarshal([]byte(out), &line)
		var ev wireTask
		if err == nil {
			ev, err = parseWire(line.Result)
		}
		if code != ExitOK || err != nil || strings.Count(out, "\n") != 1 || ev.ID != id || ev.Status.State != "completed" {
			t.Fatalf("resubscribe to a finished task: %d %s", code, out)
		}

		out, errs, code = run(t, "", "list", ts.URL, "--context", ctxID, "--page-size", "1", "--binding", binding, "--json")
		var page struct {
			Tasks         []map[string]any
			NextPageToken string
			TotalSize     int
		}
		if code != ExitOK || json.Unmarshal([]byte(out), &page) != nil || len(page.Tasks) != 1 || page.NextPageToken == "" || page.TotalSize != 2 {
			t.Fatalf("list --json: %d %s %s", code, out, errs)
		}
		out, _, code = run(t, "", "list", ts.URL, "--context", ctxID, "--page-token", page.NextPageToken, "--page-size", "1", "--human")
		if code != ExitOK || !strings.Contains(out, id) || !strings.Contains(out, "completed") || !strings.Contains(out, "1 of 2 task(s)\n") {
			t.Fatalf("list page 2: %d %s", code, out)
		}
	}
	out, _, code = run(t, "", "list", ts.URL, "--state", "TASK_STATE_COMPLETED", "--page-size", "2", "--human")
	if code != ExitOK || !strings.HasPrefix(out, "TASK ") || !strings.Contains(out, "2 of 4 task(s); next page: --page-token ") {
		t.Fatalf("list: %d %s", code, out)
	}
	for _, bad := range [][]string{{"--page-size", "0"}, {"--page-size", "101"}, {"--state", "sleeping"}, {"--history-length", "-1"}} {
		if _, errs, code := run(t, "", append([]string{"list", ts.URL}, bad...)...); code != ExitUsage || !strings.Contains(errs, bad[0]) {
			t.Errorf("list %v: exit %d %q", bad, code, errs)
		}
	}
	_, errs, code := run(t, "", "list", ts.URL, "--protocol", "0.3", "--binding", "jsonrpc")
	if code == ExitOK || !strings.Contains(errs, "ListTasks is an operation of A2A 1.0 and of A2A 0.3 over HTTP+JSON") {
		t.Fatalf("list over 0.3 JSON-RPC: %d %s", code, errs)
	}
}

// TestClientREST03: every client command with --protocol 0.3 --binding
// rest; --json prints the 0.3 objects as over JSON-RPC.
func TestClientREST03(t *testing.T) {
	ts, _ := testHost(t)
	flags := []string{"--protocol", "0.3", "--binding", "rest"}
	cmd := func(args ...string) (string, string, int) { return run(t, "", append(args, flags...)...) }
	out, _, code := cmd("card", ts.URL, "--human")
	if code != ExitOK || !strings.Contains(out, "\n  calls      A2A 0.3 HTTP+JSON at "+ts.URL+"/a2a/echo\n") {
		t.Fatalf("card: %d %s", code, out)
	}
	out, errs, code := cmd("send", ts.URL, "hi", "--context", "ctx03", "--json")
	if code != ExitOK || !strings.HasPrefix(out, `{"kind":"task","id":`) || !strings.Contains(out, `"parts":[{"kind":"text","text":"hi"}]`) || !strings.Contains(out, `"state":"completed"`) {
		t.Fatalf("send: %d %s %s", code, out, errs)
	}
	id := lines(t, out)[0].ID
	if out, _, code = cmd("get", ts.URL, id, "--json"); code != ExitOK || !strings.HasPrefix(out, `{"kind":"task","id":"`+id+`"`) {
		t.Fatalf("get: %d %s", code, out)
	}
	out, errs, code = cmd("stream", ts.URL, "more", "--context", "ctx03", "--json")
	if code != ExitOK || !strings.Contains(out, `{"eventId":"3","result":{"kind":"status-update"`) || !strings.Contains(out, `"final":true`) {
		t.Fatalf("stream: %d %s %s", code, out, errs)
	}
	if out, _, code = cmd("resubscribe", ts.URL, id, "--json"); code != ExitOK || !strings.Contains(out, `"state":"completed"`) {
		t.Fatalf("resubscribe: %d %s", code, out)
	}
	if out, errs, code = cmd("list", ts.URL, "--context", "ctx03", "--json"); code != ExitOK || !strings.Contains(out, `{"tasks":[{"id":`) || !strings.Contains(out, `"TASK_STATE_COMPLETED"`) || !strings.Contains(out, `"totalSize":2`) {
		t.Fatalf("list: %d %s %s", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", ts.URL, "nope"}, "-32001"},
		{[]string{"cancel", ts.URL, "nope"}, "-32001"},
		{[]string{"push", "list", ts.URL, "nope"}, "-32003"}, // no push here: said before any lookup
		{[]string{"extended-card", ts.URL}, "-32007"},
	} {
		if _, errs, code := cmd(tc.args...); code != ExitA2AError || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d %s, want the A2A error %s", tc.args, code, errs, tc.want)
		}
	}
}
