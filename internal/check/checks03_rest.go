package check

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
)

// The A2A 0.3 HTTP+JSON binding (A2A 0.3.0 §3.2.3: the /v1/… routes of
// §3.5.3), probed when the card declares it. Its bodies are the JSON of the
// A2A 0.3 proto (a2a.v1: camelCase, enums by name, a message's parts in
// "content"), as the SDKs that implement it send them; the checks judge
// the shapes the binding's sections name, not every member.

func init() {
	rest03 := func(c *Check) *Check {
		c.Category, c.Version, c.Binding = "rest03", a2a.Version03, BindingREST
		return c
	}
	register(
		rest03(&Check{ID: "rest03.send", Section: "§7.1", Level: Must,
			Title:          "POST /v1/message:send returns {task} or {message}",
			Requirement:    "message/send over HTTP+JSON is POST /v1/message:send with {message, configuration?, metadata?}; the answer is {task} or {message} (§7.1 REST), HTTP 200 (§3.2.3).",
			Recommendation: "Serve POST /v1/message:send below the interface URL and answer {\"task\": {…}} or {\"message\": {…}}.",
			Run:            check03Send}),
		rest03(&Check{ID: "rest03.get", Section: "§7.3", Level: Must,
			Title:          "GET /v1/tasks/{id} returns the task",
			Requirement:    "tasks/get over HTTP+JSON is GET /v1/tasks/{id}?historyLength=N (§7.3 REST): the Task, same id.",
			Recommendation: "Serve GET /v1/tasks/{id} with the Task.",
			Run:            check03Get}),
		rest03(&Check{ID: "rest03.get-unknown", Section: "§3.2.3", Level: Must,
			Title:          "An unknown task is HTTP 404 with a JSON error",
			Requirement:    "HTTP+JSON MUST use HTTP status codes that correspond to A2A error types and return errors in a consistent JSON format that maps to them (§3.2.3): TaskNotFoundError is 404 Not Found.",
			Recommendation: "Answer GET /v1/tasks/{unknown id} with 404 and a JSON error body.",
			Run:            check03GetUnknown}),
		rest03(&Check{ID: "rest03.stream", Section: "§3.3.3", Level: Must,
			Title:          "POST /v1/message:stream streams StreamResponses",
			Requirement:    "HTTP+JSON streaming MUST use Server-Sent Events like JSON-RPC (§3.3.3): HTTP 200 text/event-stream, each event one of {task}, {message}, {statusUpdate}, {artifactUpdate} (§7.2 REST), the Task (or one Message) first, and the stream closed after the final state.",
			Recommendation: "Answer POST /v1/message:stream with 200 text/event-stream, one StreamResponse per event, and close the stream after the final status update.",
			Run:            check03Stream}),
		rest03(&Check{ID: "rest03.content-type", Section: "§3.2.3", Level: Must, Final: true,
			Title:          "Answers are application/json",
			Requirement:    "HTTP+JSON MUST use application/json for request and response bodies (§3.2.3), errors included.",
			Recommendation: "Send every HTTP+JSON answer (but streams) with Content-Type: application/json.",
			Run:            check03ContentType}),
	)
}

// rest03 returns the URL of the 0.3 HTTP+JSON interface, or a skip when it
// cannot be probed: not offered, not an absolute URL, unreachable, or
// refusing the checker's credentials (pinged once, GET /v1/tasks/{id}).
func (p *Probe) rest03(ctx context.Context) (string, *Result) {
	it, ok := p.offered(a2a.Version03, BindingREST)
	switch {
	case !ok:
		r := notApplicable("the card offers no A2A 0.3 HTTP+JSON interface")
		return "", &r
	case !absoluteHTTP(it.URL):
		r := skip("the A2A 0.3 HTTP+JSON interface's url %q is not an absolute http(s) URL", it.URL)
		return "", &r
	}
	base := strings.TrimRight(it.URL, "/")
	return cached(p, "rest03/setup", func() (string, *Result) {
		e, _ := p.do03(ctx, http.MethodGet, base+"/v1/tasks/a2a-check-ping-"+newUUID(), nil, "tasks/get")
		switch {
		case e.Status == 0:
			r := skip("the A2A 0.3 HTTP+JSON interface %s is unreachable: %s", base, e.Err)
			return "", &r
		case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
			with := "without credentials; give them with --token, --api-key or --header"
			if p.hasCredentials() {
				with = "with the credentials given"
			}
			r := skip("the A2A 0.3 HTTP+JSON interface answers HTTP %d %s", e.Status, with)
			return "", &r
		}
		return base, nil
	})
}

const suite03REST = "0.3/rest"

// do03 sends one 0.3 HTTP+JSON request (body nil: none) and decodes the
// answer as a JSON object (nil if it is not one).
func (p *Probe) do03(ctx context.Context, method, u string, body []byte, op string) (*Exchange, map[string]any) {
	e := p.do(ctx, body, reqOpt{method: method, url: u, rpcMethod: op, suite: suite03REST})
	m, _ := decode(e.RespBody).(map[string]any)
	return e, m
}

// message03 is a SendMessageRequest of the 0.3 proto with one text part.
func message03(text string, blocking bool) []byte {
	m := map[string]any{
		"message":       map[string]any{"messageId": newUUID(), "role": "ROLE_USER", "content": []any{map[string]any{"text": text}}},
		"configuration": map[string]any{"blocking": blocking},
	}
	b, err := json.Marshal(m, json.Deterministic(true))
	if err != nil { // strings and booleans always encode
		return []byte("{}")
	}
	return b
}

// task03 checks a 0.3 proto Task object: id, contextId, status.state.
func task03(t map[string]any) string {
	switch {
	case t == nil:
		return "not an object"
	case str(t, "id") == "" || str(t, "contextId") == "":
		return "no id or contextId"
	case !strings.HasPrefix(str(t, "status", "state"), "TASK_STATE_"):
		return fmt.Sprintf("status.state %q is not a TASK_STATE_* name", str(t, "status", "state"))
	}
	return ""
}

// sent03 is the task of a blocking send of Text (cached).
func (p *Probe) sent03(ctx context.Context, base string) (*Exchange, map[string]any, *Result) {
	type sent struct {
		e *Exchange
		t map[string]any
	}
	s, res := cached(p, "rest03/send", func() (sent, *Result) {
		e, m := p.do03(ctx, http.MethodPost, base+"/v1/message:send", message03(p.opts.Text, true), "message/send")
		return sent{e, m}, nil
	})
	return s.e, s.t, res
}

func check03Send(ctx context.Context, p *Probe) Result {
	base, res := p.rest03(ctx)
	if res != nil {
		return *res
	}
	e, m, _ := p.sent03(ctx, base)
	switch {
	case e.Status != http.StatusOK:
		return fail("POST /v1/message:send answered %s: %s", statusText(e), excerpt(e.RespBody, 200)).with(e)
	case m["task"] != nil && m["message"] != nil, m["task"] == nil && m["message"] == nil:
		return fail("the answer has %s of task and message; it must have exactly one", map[bool]string{true: "both", false: "neither"}[m["task"] != nil]).with(e)
	case m["message"] != nil:
		return pass("POST /v1/message:send returned {message}").with(e)
	}
	t, _ := m["task"].(map[string]any)
	if prob := task03(t); prob != "" {
		return fail("the task: %s", prob).with(e)
	}
	return pass("POST /v1/message:send returned {task} (%s)", str(t, "status", "state")).with(e)
}

func check03Get(ctx context.Context, p *Probe) Result {
	base, res := p.rest03(ctx)
	if res != nil {
		return *res
	}
	sent, m, _ := p.sent03(ctx, base)
	t, _ := m["task"].(map[string]any)
	if task03(t) != "" {
		return skip("POST /v1/message:send returned no task (see rest03.send)")
	}
	id := str(t, "id")
	e, g := p.do03(ctx, http.MethodGet, base+"/v1/tasks/"+url.PathEscape(id)+"?historyLength=1", nil, "tasks/get")
	switch {
	case e.Status != http.StatusOK:
		return fail("GET /v1/tasks/%s answered %s: %s", id, statusText(e), excerpt(e.RespBody, 200)).with(sent, e)
	case g["task"] != nil && g["id"] == nil:
		return fail("GET /v1/tasks/%s returned the Task wrapped in {\"task\": …}; the answer is the Task", id).with(e)
	case str(g, "id") != id:
		return fail("GET /v1/tasks/%s returned task %q", id, str(g, "id")).with(e)
	}
	if prob := task03(g); prob != "" {
		return fail("the task: %s", prob).with(e)
	}
	return pass("GET /v1/tasks/%s returned the task (%s)", id, str(g, "status", "state")).with(e)
}

func check03GetUnknown(ctx context.Context, p *Probe) Result {
	base, res := p.rest03(ctx)
	if res != nil {
		return *res
	}
	id := "a2a-check-unknown-" + newUUID()
	e, m := p.do03(ctx, http.MethodGet, base+"/v1/tasks/"+id, nil, "tasks/get")
	switch {
	case e.Status == 0:
		return fail("GET /v1/tasks/%s: %s", id, e.Err).with(e)
	case e.Status != http.StatusNotFound:
		return fail("GET of an unknown task answered %s, not 404", statusText(e)).with(e)
	case m == nil:
		return fail("the 404 answer is not a JSON error: %s", excerpt(e.RespBody, 120)).with(e)
	}
	return pass("GET of an unknown task answered 404 with a JSON error").with(e)
}

// frame03 says what is wrong with one event of a 0.3 HTTP+JSON stream
// ("" if nothing), and what it is.
func frame03(data []byte) (kind, state, prob string) {
	m, _ := decode(data).(map[string]any)
	if m == nil {
		return "", "", "not a JSON object"
	}
	var kinds []string
	for _, k := range []string{"task", "message", "statusUpdate", "artifactUpdate"} {
		if m[k] != nil {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		return "", "", fmt.Sprintf("%d of task, message, statusUpdate, artifactUpdate", len(kinds))
	}
	return kinds[0], str(m, kinds[0], "status", "state"), ""
}

// final03 reports whether a 0.3 proto state ends a stream.
func final03(state string) bool {
	switch strings.TrimPrefix(state, "TASK_STATE_") {
	case "COMPLETED", "FAILED", "CANCELLED", "CANCELED", "REJECTED", "INPUT_REQUIRED", "AUTH_REQUIRED":
		return true
	}
	return false
}

func check03Stream(ctx context.Context, p *Probe) Result {
	base, res := p.rest03(ctx)
	if res != nil {
		return *res
	}
	if !p.capability("streaming") {
		return notApplicable("the card does not declare capabilities.streaming")
	}
	e := p.streamHTTP(ctx, message03(p.opts.Text, true), reqOpt{url: base + "/v1/message:stream", accept: "text/event-stream", rpcMethod: "message/stream", suite: suite03REST},
		streamOpt{}, func(ev SSEEvent) bool {
			kind, state, _ := frame03(ev.Data)
			return kind == "message" || final03(state)
		})
	if !isSSE(e) || len(e.Events) == 0 {
		return fail("POST /v1/message:stream answered %s, %d event(s): %s", statusText(e), len(e.Events), excerpt(e.RespBody, 200)).with(e)
	}
	for i, ev := range e.Events {
		kind, _, prob := frame03(ev.Data)
		switch {
		case prob != "":
			return fail("event %d: %s", i+1, prob).with(e)
		case i == 0 && kind != "task" && kind != "message":
			return fail("the first event is a %s, not the Task", kind).with(e)
		}
	}
	switch {
	case !e.FinalSeen:
		return fail("no event reaches a final state (%d events)", len(e.Events)).with(e)
	case !e.Closed:
		return fail("the stream was still open 2 s after the final event").with(e)
	}
	return pass("%d event(s), the first the Task; the server closed the stream after the final one", len(e.Events)).with(e)
}

func check03ContentType(ctx context.Context, p *Probe) Result {
	base, res := p.rest03(ctx)
	if res != nil {
		return *res
	}
	if len(p.exchangesOf(suite03REST)) == 0 {
		p.sent03(ctx, base)
	}
	var f findings
	n := 0
	for _, e := range p.exchangesOf(suite03REST) {
		if e.Status == 0 || isSSE(e) || len(e.RespBody) == 0 || e.Check == "cleanup" {
			continue
		}
		n++
		if mediaType(e.RespContentType()) != "application/json" {
			f.add(e, "%s #%d (%s): Content-Type %q", e.RPCMethod, e.Seq, statusText(e), e.RespContentType())
		}
	}
	if n == 0 {
		return skip("no HTTP+JSON answer was received")
	}
	return f.result(fmt.Sprintf("of %d", n), fmt.Sprintf("all %d answers are application/json", n))
}
