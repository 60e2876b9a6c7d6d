package check

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// rest03Server is a small, right A2A 0.3 HTTP+JSON server (bodies in the
// JSON of the 0.3 proto): its card declares JSON-RPC at /rpc (which it
// does not serve) and HTTP+JSON at the base URL; POST /v1/message:send
// and /v1/message:stream complete a task at once, GET /v1/tasks/{id}
// returns it.
func rest03Server(t *testing.T) http.Handler {
	t.Helper()
	var mu sync.Mutex
	tasks := map[string]string{}
	n := 0
	task := func(id, state string) string {
		return fmt.Sprintf(`{"id":%q,"contextId":"ctx-%s","status":{"state":%q}}`, id, id, state)
	}
	jsonAnswer := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := "http://" + r.Host
		switch p := r.URL.Path; {
		case p == "/.well-known/agent-card.json":
			jsonAnswer(w, http.StatusOK, `{"name":"rest03","description":"d","url":"`+base+`/rpc","version":"1","protocolVersion":"0.3.0",`+
				`"preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"`+base+`/rpc","transport":"JSONRPC"},{"url":"`+base+`","transport":"HTTP+JSON"}],`+
				`"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`)
		case r.Method == http.MethodPost && (p == "/v1/message:send" || p == "/v1/message:stream"):
			mu.Lock()
			n++
			id := fmt.Sprintf("t%d", n)
			tasks[id] = task(id, "TASK_STATE_COMPLETED")
			mu.Unlock()
			if p == "/v1/message:send" {
				jsonAnswer(w, http.StatusOK, `{"task":`+tasks[id]+`}`)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = fmt.Fprintf(w, "data: {\"task\":%s}\n\ndata: {\"statusUpdate\":{\"taskId\":%q,\"contextId\":\"ctx-%s\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"},\"final\":true}}\n\n",
				task(id, "TASK_STATE_SUBMITTED"), id, id)
		case r.Method == http.MethodGet && strings.HasPrefix(p, "/v1/tasks/"):
			mu.Lock()
			body, ok := tasks[strings.TrimPrefix(p, "/v1/tasks/")]
			mu.Unlock()
			if !ok {
				jsonAnswer(w, http.StatusNotFound, `{"error":{"code":404,"status":"NOT_FOUND","message":"task not found"}}`)
				return
			}
			jsonAnswer(w, http.StatusOK, body)
		default:
			jsonAnswer(w, http.StatusNotFound, `{"error":{"code":404,"status":"NOT_FOUND","message":"no route"}}`)
		}
	})
}

func faultCases03REST() []faultCase {
	edit := func(op string, e func(m map[string]any)) *fault {
		return &fault{resp: respFor(op, func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte { return editJSON(b, e) })}
	}
	return []faultCase{
		{id: "rest03.send", handler: rest03Server, f: edit("SendMessage", func(m map[string]any) {
			t := m["task"].(map[string]any)
			t["status"] = map[string]any{"state": "completed"}
		})},
		{id: "rest03.get", handler: rest03Server, f: edit("GetTask", func(m map[string]any) { m["id"] = "another" })},
		{id: "rest03.get-unknown", handler: rest03Server, f: &fault{resp: respFor("GetTask", func(_ rpcReq, st *int, _ http.Header, b []byte) []byte {
			*st = http.StatusInternalServerError
			return b
		})}},
		{id: "rest03.stream", handler: rest03Server, f: &fault{sse: func(_ rpcReq, i int, d []byte) []byte {
			if i == 0 {
				return nil
			}
			return d
		}}},
		{id: "rest03.content-type", handler: rest03Server, f: &fault{resp: func(_ rpcReq, _ *int, h http.Header, b []byte) []byte {
			h.Set("Content-Type", "application/problem+json")
			return b
		}}},
	}
}

// TestREST03: every rest03 check passes against the right server, which
// the report lists as its 0.3 HTTP+JSON interface.
func TestREST03(t *testing.T) {
	t.Parallel()
	base := serve(t, rest03Server(t))
	rep, err := Run(t.Context(), Options{URL: base, Protocol: "0.3", Binding: BindingREST})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(faultCases03REST()) {
		t.Errorf("%d results", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.Status != Pass {
			t.Errorf("%s: %s %s", r.ID, r.Status, r.Message)
		}
	}
	var ifs []string
	for _, i := range rep.Interfaces {
		ifs = append(ifs, fmt.Sprintf("%s %s %v %.0f", i.Name, strings.TrimPrefix(i.URL, base), i.Checked, i.Score))
	}
	if want := "A2A 0.3 JSON-RPC /rpc false 0|A2A 0.3 HTTP+JSON  true 100"; strings.Join(ifs, "|") != want {
		t.Errorf("interfaces %q, want %q", strings.Join(ifs, "|"), want)
	}
}

// TestREST03NotOffered: without a 0.3 HTTP+JSON interface on the card, the
// rest03 checks do not run.
func TestREST03NotOffered(t *testing.T) {
	t.Parallel()
	no03REST := func(_ string, m map[string]any) map[string]any {
		keep := func(key, binding string) {
			var out []any
			for _, x := range m[key].([]any) {
				it := x.(map[string]any)
				if it[binding] != "HTTP+JSON" || (key == "supportedInterfaces" && it["protocolVersion"] != "0.3") {
					out = append(out, it)
				}
			}
			m[key] = out
		}
		keep("supportedInterfaces", "protocolBinding")
		keep("additionalInterfaces", "transport")
		return m
	}
	rep, err := Run(t.Context(), Options{URL: serve(t, faulty(newHost(t, hostOpts{}), &fault{card: no03REST})) + "/a2a/echo", Categories: []string{"rest03", "card10"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 5 || rep.Results[0].Category != "card10" {
		t.Errorf("results: %+v", rep.Results)
	}
	for _, i := range rep.Interfaces {
		if i.Version == "0.3" && i.Binding == BindingREST {
			t.Errorf("the report lists %s", i.Name)
		}
	}
}
