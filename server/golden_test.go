package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/a2abridge/a2abridge/internal/schematest"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
)

var update = flag.Bool("update", false, "rewrite golden response files")

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"`)
	refRE  = regexp.MustCompile(`<uuid-(\d+)>`)
)

// normalizer replaces generated ids and times with stable placeholders.
type normalizer struct {
	ids   map[string]int
	byNum []string
	host  string // the test server's host:port
}

func (n *normalizer) normalize(s string) string {
	s = strings.ReplaceAll(s, n.host, "<host>")
	s = uuidRE.ReplaceAllStringFunc(s, func(u string) string {
		i, ok := n.ids[u]
		if !ok {
			n.byNum = append(n.byNum, u)
			i = len(n.byNum)
			n.ids[u] = i
		}
		return fmt.Sprintf("<uuid-%d>", i)
	})
	return timeRE.ReplaceAllString(s, `"<time>"`)
}

func (n *normalizer) resolve(s string) string {
	return refRE.ReplaceAllStringFunc(s, func(ref string) string {
		var i int
		fmt.Sscanf(ref, "<uuid-%d>", &i)
		if i < 1 || i > len(n.byNum) {
			return ref
		}
		return n.byNum[i-1]
	})
}

// TestGolden replays the request/response pairs of testdata/golden/*.txtar
// against a fresh Host: each "N.request" section is an HTTP request
// (request line, headers, blank line, body) and "N.response" the exact
// answer (status, content type, body) with ids and times normalized.
// Every JSON document in a response is validated against the A2A 0.3.0
// JSON Schema. Run with -update to rewrite the responses.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		for _, backend := range []string{"memory", "sqlite"} {
			if *update && backend != "memory" {
				continue
			}
			t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar")+"/"+backend, func(t *testing.T) {
				t.Parallel()
				goldenFile(t, file, backend)
			})
		}
	}
}

// goldenFile replays one golden file against a server on the given store:
// the SQLite store (queued appends, group commit) must answer byte for byte
// like the in-memory one.
func goldenFile(t *testing.T, file, backend string) {
	{
		{
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			o := testServerOptions{}
			if backend == "sqlite" {
				o.store = sqliteStore(t)
			}
			// A comment line "agents: NAME…" hosts these test agents too.
			for _, l := range strings.Split(string(ar.Comment), "\n") {
				if names, ok := strings.CutPrefix(l, "agents: "); ok {
					o.more = map[string]server.Agent{}
					for _, name := range strings.Fields(names) {
						if goldenAgents[name] == nil {
							t.Fatalf("%s: no golden agent %q", file, name)
						}
						o.more[name] = goldenAgents[name]()
					}
				}
			}
			srv := newTestServer(t, o)
			n := &normalizer{ids: map[string]int{}, host: strings.TrimPrefix(srv.URL, "http://")}
			changed := false
			for i := 0; i < len(ar.Files); i++ {
				f := ar.Files[i]
				if !strings.HasSuffix(f.Name, ".request") {
					continue
				}
				step := strings.TrimSuffix(f.Name, ".request")
				got := doRaw(t, srv.URL, n.resolve(string(f.Data)))
				got = n.normalize(got)
				validateResponse(t, step, string(f.Data), got)
				respName := step + ".response"
				j := -1
				for k := range ar.Files {
					if ar.Files[k].Name == respName {
						j = k
					}
				}
				if *update {
					changed = true
					if j < 0 {
						ar.Files = append(ar.Files[:i+1], append([]txtar.File{{Name: respName}}, ar.Files[i+1:]...)...)
						j = i + 1
					}
					ar.Files[j].Data = []byte(got)
					continue
				}
				if j < 0 {
					t.Fatalf("%s: no %s section (run with -update)", file, respName)
				}
				if want := string(ar.Files[j].Data); want != got {
					t.Errorf("step %s: response mismatch\n--- want\n%s\n--- got\n%s", step, want, got)
				}
			}
			if changed {
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// goldenAgents are the agents a golden file may ask for (see goldenFile).
var goldenAgents = map[string]func() server.Agent{
	"reply": func() server.Agent { return &replyAgent{} },
}

// doRaw sends a request written as "METHOD PATH\nHeader: v\n\nbody" and
// returns "STATUS CONTENT-TYPE\n" + body (+ "\n").
func doRaw(t *testing.T, base, raw string) string {
	t.Helper()
	head, body, _ := strings.Cut(raw, "\n\n")
	lines := strings.Split(strings.TrimSpace(head), "\n")
	method, path, _ := strings.Cut(lines[0], " ")
	var hdr []string
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, ":")
		hdr = append(hdr, strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, b := testutil.Send(t, method, base+path, strings.TrimSuffix(body, "\n"), hdr...)
	out := fmt.Sprintf("%d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out
}

// responseDefinition is the schema definition a method's response must match.
var responseDefinition = map[string]string{
	"message/send":                        "SendMessageResponse",
	"message/stream":                      "SendStreamingMessageResponse",
	"tasks/resubscribe":                   "SendStreamingMessageResponse",
	"tasks/get":                           "GetTaskResponse",
	"tasks/cancel":                        "CancelTaskResponse",
	"tasks/pushNotificationConfig/set":    "SetTaskPushNotificationConfigResponse",
	"tasks/pushNotificationConfig/get":    "GetTaskPushNotificationConfigResponse",
	"tasks/pushNotificationConfig/list":   "ListTaskPushNotificationConfigResponse",
	"tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfigResponse",
	"agent/getAuthenticatedExtendedCard":  "GetAuthenticatedExtendedCardResponse",
}

var methodRE = regexp.MustCompile(`"method"\s*:\s*"([^"]*)"`)

// validateResponse checks every JSON document of a normalized response
// against the 0.3.0 schema, or, for an A2A 1.0 request (A2A-Version:
// 1.0), the 1.0.1 schema (validate10). 0.3 HTTP+JSON bodies (/v1/…, the
// 0.3 proto's JSON) have no schema.
func validateResponse(t *testing.T, step, request, resp string) {
	t.Helper()
	head, body, _ := strings.Cut(resp, "\n")
	reqHead, _, _ := strings.Cut(request, "\n\n")
	if strings.Contains(reqHead, "A2A-Version: 1.0") {
		validate10(t, request, reqHead, head, body)
		return
	}
	if line, _, _ := strings.Cut(reqHead, "\n"); strings.Contains(line, "/v1/") {
		return
	}
	def := "JSONRPCResponse"
	if m := methodRE.FindStringSubmatch(request); m != nil && !strings.HasPrefix(strings.TrimSpace(request), "[") {
		if d, ok := responseDefinition[m[1]]; ok {
			def = d
		}
	}
	switch {
	case strings.Contains(request, "agent-card.json") || strings.Contains(request, "agent.json"):
		if strings.HasPrefix(head, "200") {
			schematest.Validate(t, "AgentCard", []byte(body))
		}
	case strings.Contains(head, "text/event-stream"):
		sc := bufio.NewScanner(strings.NewReader(body))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				if strings.Contains(request, "/events") {
					validateEvent(t, []byte(d))
				} else {
					schematest.Validate(t, def, []byte(d))
				}
			}
		}
	case strings.Contains(head, "application/json"):
		b := bytes.TrimSpace([]byte(body))
		if len(b) > 0 && b[0] == '[' {
			validateBatch(t, b)
			return
		}
		if bytes.Contains(b, []byte(`"error":`)) {
			def = "JSONRPCErrorResponse"
		}
		schematest.Validate(t, def, b)
	}
}

// validate10 checks the documents of an A2A 1.0 response to a request
// whose head (request line and headers) is reqHead, as the 1.0.1 schema's
// SendMessageResponse (SendMessage; POST …/message:send) or
// StreamResponse (SendStreamingMessage, SubscribeToTask; their HTTP+JSON
// routes): JSON-RPC results and HTTP+JSON bodies. Errors and other
// operations are not checked here.
func validate10(t *testing.T, request, reqHead, head, body string) {
	t.Helper()
	line, _, _ := strings.Cut(reqHead, "\n")
	op := ""
	if m := methodRE.FindStringSubmatch(request); m != nil {
		op = m[1]
	} else if i := strings.LastIndex(line, ":"); i >= 0 {
		op = line[i+1:]
	}
	def := map[string]string{"SendMessage": "SendMessageResponse", "send": "SendMessageResponse",
		"SendStreamingMessage": "StreamResponse", "SubscribeToTask": "StreamResponse", "stream": "StreamResponse", "subscribe": "StreamResponse"}[op]
	if def == "" || !strings.HasPrefix(head, "200") {
		return
	}
	var docs []string
	if strings.Contains(head, "text/event-stream") {
		for _, l := range strings.Split(body, "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				docs = append(docs, d)
			}
		}
	} else {
		docs = []string{strings.TrimSpace(body)}
	}
	for _, d := range docs {
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			Result  json.RawMessage `json:"result"`
		}
		doc := []byte(d)
		if err := json.Unmarshal(doc, &env); err == nil && env.JSONRPC != "" {
			if env.Result == nil {
				continue // an error
			}
			doc = env.Result
		}
		schematest.Validate10(t, def, doc)
	}
}
