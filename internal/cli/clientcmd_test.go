package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// testHost serves the agents echo, chat and slow (1 s, a step every
// 50 ms) in this process, tasks in memory, until the test ends. The map
// holds the last X-Test header seen ("X-Test") and the count of POSTs
// ("POST", an *atomic.Int64).
func testHost(t *testing.T) (*httptest.Server, *sync.Map) {
	t.Helper()
	eng := servertest.Engine(t, server.EngineOptions{})
	host := servertest.Host("echo",
		server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}),
		server.NewHandler(eng, "chat", agents.Chat{}, agents.Chat{}.Card(), server.HandlerOptions{}),
		server.NewHandler(eng, "slow", agents.Slow{Seconds: 1, Step: 50 * time.Millisecond}, agents.Slow{}.Card(), server.HandlerOptions{}))
	seen := &sync.Map{}
	ts := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("X-Test"); v != "" {
			seen.Store("X-Test", v)
		}
		if r.Method == http.MethodPost {
			n, _ := seen.LoadOrStore("POST", &atomic.Int64{})
			n.(*atomic.Int64).Add(1)
		}
		host.ServeHTTP(w, r)
	}), eng.Close)
	return ts, seen
}

type wireTask struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Final  bool   `json:"final"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	History   []jsontext.Value `json:"history"`
	Artifacts []struct {
		Parts []map[string]any `json:"parts"`
	} `json:"artifacts"`
}

func lines(t *testing.T, out string) []wireTask {
	t.Helper()
	var res []wireTask
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		w, err := parseWire([]byte(l))
		if err != nil {
			t.Fatalf("not a JSON line: %q (%v)", l, err)
		}
		res = append(res, w)
	}
	return res
}

// wrappers are the A2A 1.0 oneof members (SendMessageResponse,
// StreamResponse) and the 0.3 kinds they stand for.
var wrappers = map[string]string{"task": "task", "message": "message", "statusUpdate": "status-update", "artifactUpdate": "artifact-update"}

// parseWire reads an event printed by --json in either version: a 0.3
// event with its kind, or a 1.0 Task or wrapper ({"task": …}), which is
// read as the 0.3 event it stands for (kind set, state named as in 0.3,
// final set on a status-update in a terminal or interrupted state).
func parseWire(b []byte) (wireTask, error) {
	var w wireTask
	if err := json.Unmarshal(b, &w); err != nil || w.Kind != "" {
		return w, err
	}
	var top map[string]jsontext.Value
	if err := json.Unmarshal(b, &top); err != nil {
		return w, err
	}
	if len(top) == 1 {
		for k, v := range top {
			if kind, ok := wrappers[k]; ok {
				if err := json.Unmarshal(v, &w); err != nil {
					return w, err
				}
				w.Kind = kind
			}
		}
	} else if top["id"] != nil && top["status"] != nil {
		w.Kind = "task"
	}
	if st, ok := strings.CutPrefix(w.Status.State, "TASK_STATE_"); ok {
		w.Status.State = strings.ReplaceAll(strings.ToLower(st), "_", "-")
		state, _ := a2a.ParseTaskState(w.Status.State)
		w.Final = w.Kind == "status-update" && state.Final()
	}
	return w, nil
}

// streamLines parses stream --json output: the events and their ids.
// Each line is {"eventId":"N","result":EVENT}; unless withIDs, a line may
// also be {"result":EVENT}, an event without an SSE id (its id is "").
func streamLines(t *testing.T, out string, withIDs bool) ([]wireTask, []string) {
	t.Helper()
	var evs []wireTask
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var top map[string]jsontext.Value
		var id string
		var ev wireTask
		err := json.Unmarshal([]byte(l), &top)
		_, hasID := top["eventId"]
		if err == nil && hasID {
			err = json.Unmarshal(top["eventId"], &id)
		}
		if err == nil && top["result"] != nil {
			ev, err = parseWire(top["result"])
		}
		fields := 1
		if hasID || withIDs {
			fields = 2
		}
		if err != nil || len(top) != fields || ev.Kind == "" || (withIDs && !hasID) {
			t.Fatalf("not a stream line {eventId, result}: %q (%v)", l, err)
		}
		evs, ids = append(evs, ev), append(ids, id)
	}
	return evs, ids
}

func TestClientCommands(t *testing.T) {
	ts, seen := testHost(t)
	out, errs, code := run(t, "", "card", ts.URL, "--json")
	if code != ExitOK || !strings.Contains(out, `"name":"echo"`) {
		t.Fatalf("card: %d %s %s", code, out, errs)
	}
	out, _, _ = run(t, "", "card", ts.URL+"/a2a/chat", "--human")
	if !strings.HasPrefix(out, "chat 1.0.0  (A2A 1.0, 0.3)") || !strings.Contains(out, "\n  calls      A2A 1.0 JSONRPC at "+ts.URL+"/a2a/chat\n") {
		t.Fatalf("human card: %s", out)
	}

	file := writeFile(t, "note.txt", "file body")
	out, errs, code = run(t, "", "send", ts.URL, "hello", "--file", file, "--data", `{"n":1}`, "--history", "0", "--json", "--header", "X-Test: yes")
	if code != ExitOK {
		t.Fatalf("send: %d %s", code, errs)
	}
	sent := lines(t, out)[0]
	if sent.Status.State != "completed" || len(sent.History) != 0 || len(sent.Artifacts[0].Parts) != 3 {
		t.Fatalf("send result: %s", out)
	}
	if v, _ := seen.Load("X-Test"); v != "yes" {
		t.Fatalf("--header not sent: %v", v)
	}

	out, _, code = run(t, "", "get", ts.URL, sent.ID, "--json")
	if code != ExitOK || lines(t, out)[0].ID != sent.ID {
		t.Fatalf("get: %d %s", code, out)
	}

	// stream --json: {"eventId":"N","result":EVENT} per line; the ids are
	// the task's event numbers, so --from can continue from any line.
	out, _, code = run(t, "", "stream", ts.URL+"/a2a/slow", "0", "--json")
	evs, ids := streamLines(t, out, true)
	if code != ExitOK || evs[0].Kind != "task" || !evs[len(evs)-1].Final || evs[len(evs)-1].Status.State != "completed" {
		t.Fatalf("stream: %d %s", code, out)
	}
	for i, id := range ids {
		if id != fmt.Sprint(i+1) {
			t.Fatalf("stream --json event ids %q, want 1, 2, 3…", ids)
		}
	}

	out, _, code = run(t, "", "resubscribe", ts.URL+"/a2a/slow", evs[0].ID, "--from", ids[1], "--json")
	rs, rids := streamLines(t, out, true)
	if code != ExitOK || len(rs) != len(evs)-2 || !rs[len(rs)-1].Final || rids[0] != ids[2] {
		t.Fatalf("resubscribe --from %s: %d events of %d: %s", ids[1], len(rs), len(evs), out)
	}

	out, _, code = run(t, "", "send", ts.URL+"/a2a/slow", "30", "--no-blocking", "--json")
	started := lines(t, out)[0]
	if code != ExitOK || started.Status.State != "submitted" {
		t.Fatalf("no-blocking send: %s", out)
	}
	out, _, code = run(t, "", "cancel", ts.URL+"/a2a/slow", started.ID, "--json")
	if code != ExitOK || lines(t, out)[0].Status.State != "canceled" {
		t.Fatalf("cancel: %d %s", code, out)
	}

	out, _, code = run(t, "hello\nbye\n", "chat", ts.URL+"/a2a/chat")
	if code != ExitOK || !strings.Contains(out, `turn 1: you said "hello"`) || !strings.Contains(out, "Goodbye! (2 turns)") {
		t.Fatalf("chat: %d %s", code, out)
	}
}

func TestClientExitCodes(t *testing.T) {
	ts, _ := testHost(t)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"get", ts.URL, "nope"}, ExitA2AError, "-32001"},
		{[]string{"cancel", ts.URL, "nope"}, ExitA2AError, "-32001"},
		{[]string{"push", "list", ts.URL, "nope"}, ExitA2AError, "-32003"}, // no push here: said before any lookup
		{[]string{"extended-card", ts.URL}, ExitA2AError, "-32004"},        // A2A 1.0: the card declares none
		{[]string{"send", ts.URL}, ExitUsage, "nothing to send"},
		{[]string{"send", ts.URL, "x", "--data", "[1]"}, ExitUsage, "JSON object"},
		{[]string{"send", ts.URL, "x", "--header", "novalue"}, ExitUsage, "NAME:VALUE"},
		{[]string{"get", ts.URL}, ExitUsage, "accepts 2 arg"},
		{[]string{"get", "http://127.0.0.1:1", "x", "--timeout", "2s"}, ExitTransport, "connect"},
		{[]string{"card", ts.URL + "/nothing-here/"}, ExitTransport, "404"},
	}
	for _, c := range cases {
		_, errs, code := run(t, "", c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args, code, c.code, errs, c.msg)
		}
	}
}

// Exit codes follow the error's type, never the server's wording.
func TestExitCodesFromHostileAnswers(t *testing.T) {
	var ts *httptest.Server
	ts = testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/bad/.well-known/agent-card.json":
			fmt.Fprintf(w, `{"name":"x","description":"d","url":"%s/bad","protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`, ts.URL)
		case strings.HasSuffix(r.URL.Path, "agent-card.json"):
			fmt.Fprintf(w, `{"name":"x","description":"d","url":"%s/rpc","version":"1","protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`, ts.URL)
		default:
			b, _ := io.ReadAll(r.Body)
			id := strings.Split(strings.Split(string(b), `"id":`)[1], ",")[0]
			if strings.Contains(string(b), `"wordy"`) {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"invalid argument: unknown flag accepts 2 arg(s)"}}`, id)
			} else {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":"t"}}`, id)
			}
		}
	}))
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"get", ts.URL, "wordy"}, ExitA2AError},
		{[]string{"get", ts.URL, "malformed"}, ExitTransport},
		{[]string{"card", ts.URL + "/bad"}, ExitTransport},
		{[]string{"card", "ftp://example.com"}, ExitUsage},
		{[]string{"get", ts.URL, "t", "--history", "-1"}, ExitUsage},
	} {
		if _, errs, code := run(t, "", c.args...); code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, c.code, errs)
		}
	}
}
