package check

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func init() {
	register(
		&Check{ID: "rpc.content-type", Category: "rpc", Section: "§3.2.1", Level: Must, Final: true,
			Title:          "JSON-RPC answers are application/json",
			Requirement:    "The Content-Type header for HTTP requests and responses containing JSON-RPC payloads MUST be application/json (§3.2.1, §7).",
			Recommendation: "Set Content-Type: application/json on every JSON-RPC answer, errors included (some clients, e.g. Copilot, reject anything else).",
			Run:            checkRPCContentType},
		&Check{ID: "rpc.parse-error", Category: "rpc", Section: "§8.1", Level: Must,
			Title:          "Malformed JSON is answered -32700 with id null",
			Requirement:    "A body that is not well-formed JSON is answered with error -32700 (§8.1); when the id cannot be detected it MUST be null (§6.11.2).",
			Recommendation: "Answer unparsable bodies with {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,…}}.",
			Run:            checkRPCParseError},
		&Check{ID: "rpc.invalid-request", Category: "rpc", Section: "§6.11.1", Level: Must,
			Title:          "A wrong jsonrpc version is answered -32600",
			Requirement:    "jsonrpc MUST be exactly \"2.0\" (§6.11.1); a JSON value that is not a valid request is answered -32600 Invalid Request (§8.1).",
			Recommendation: "Reject requests whose jsonrpc member is not \"2.0\" with -32600.",
			Run:            checkRPCInvalidRequest},
		&Check{ID: "rpc.missing-method", Category: "rpc", Section: "§6.11.1", Level: Must,
			Title:          "A request without method is answered -32600",
			Requirement:    "A request object has a method string (§6.11.1); otherwise it is an Invalid Request, -32600 (§8.1).",
			Recommendation: "Reject requests without a string method with -32600.",
			Run:            checkRPCMissingMethod},
		&Check{ID: "rpc.method-not-found", Category: "rpc", Section: "§8.1", Level: Must,
			Title:          "An unknown method is answered -32601",
			Requirement:    "A method that does not exist is answered with -32601 Method not found (§8.1).",
			Recommendation: "Answer unknown methods with -32601 (and the request's id).",
			Run:            checkRPCMethodNotFound},
		&Check{ID: "rpc.invalid-params", Category: "rpc", Section: "§8.1", Level: Must,
			Title:          "Bad params are answered -32602",
			Requirement:    "Invalid method parameters (wrong type, missing required field) are answered with -32602 (§8.1); servers MUST validate all RPC parameters (§10.2).",
			Recommendation: "Validate params against the A2A types and answer -32602 for a message whose parts is not an array.",
			Run:            checkRPCInvalidParams},
		&Check{ID: "rpc.id-string", Category: "rpc", Section: "§6.11.2", Level: Must,
			Title:          "A string id is echoed exactly",
			Requirement:    "The response id MUST be the same as the value of the id member in the request (§6.11.2).",
			Recommendation: "Echo the request id unchanged, as a JSON string.",
			Run:            checkRPCIDString},
		&Check{ID: "rpc.id-number", Category: "rpc", Section: "§6.11.2", Level: Must,
			Title:          "A number id is echoed as a number",
			Requirement:    "The response id MUST be the same as the request id (§6.11.2): a number stays a number (clients match ids by type).",
			Recommendation: "Keep the id's JSON type: echo 42 as 42, never \"42\".",
			Run:            checkRPCIDNumber},
		&Check{ID: "rpc.no-id", Category: "rpc", Section: "§6.11.1", Level: Should,
			Title:          "A request without id is handled cleanly",
			Requirement:    "A request without id is a notification (§6.11.1, JSON-RPC 2.0 §4.1): no answer, or (A2A methods always answer) an answer with id null.",
			Recommendation: "Answer a request without id with no body or with \"id\": null; never with another id or a server error.",
			Run:            checkRPCNoID},
		&Check{ID: "rpc.batch", Category: "rpc", Section: "§3.2.1", Level: Should,
			Title:          "Batch requests are answered",
			Requirement:    "Requests and responses MUST adhere to JSON-RPC 2.0 (§3.2.1), which answers a batch (an array of requests) with an array of responses (JSON-RPC 2.0 §6).",
			Recommendation: "Answer a JSON array of requests with an array holding one response per request (ids echoed).",
			Run:            checkRPCBatch},
		&Check{ID: "rpc.http-status", Category: "rpc", Section: "§7", Level: Should, Final: true,
			Title:          "JSON-RPC errors are sent with HTTP 200",
			Requirement:    "The HTTP response body MUST be a JSONRPCResponse (§7); the error is carried in the body, so the HTTP exchange succeeds (200). A2A clients (a2a-go, @a2a-js/sdk) treat other statuses as transport failures and never read the error object.",
			Recommendation: "Send JSON-RPC error responses with HTTP 200 (keep 401/403 for authentication failures).",
			Run:            checkRPCHTTPStatus},
		&Check{ID: "rpc.response-shape", Category: "rpc", Section: "§6.11.2", Level: Must, Final: true,
			Title:          "Every answer is a well-formed JSON-RPC response",
			Requirement:    "A response has jsonrpc \"2.0\", the request's id, and exactly one of result and error; error has an integer code and a string message (§6.11.2, §6.12).",
			Recommendation: "Build every response as {\"jsonrpc\":\"2.0\",\"id\":…,\"result\":…} or {…,\"error\":{\"code\":…,\"message\":…}}; a void method answers \"result\": null.",
			Run:            checkRPCResponseShape},
	)
}

// expectCode checks an error answer's code.
func expectCode(r *rpcResp, what string, code int) Result {
	switch {
	case r.ex.Status == 0:
		return fail("%s: %s", what, r.ex.Err).with(r.ex)
	case r.code() == code && r.Err.CodeOK:
		return pass("%s was answered with %s", what, r.describe()).with(r.ex)
	case r.Err != nil:
		return fail("%s was answered with %s, not %d", what, r.describe(), code).with(r.ex)
	}
	return fail("%s was answered with %s, not error %d", what, r.describe(), code).with(r.ex)
}

func checkRPCParseError(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	r := p.send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":`), reqOpt{rpcMethod: "(malformed JSON)", schema: "JSONRPCErrorResponse", invalid: true})
	res := expectCode(r, "a truncated JSON body", -32700)
	if res.Status == Pass && (!r.HasID || string(r.ID) != "null") {
		id := "no id member"
		if r.HasID {
			id = "id " + string(r.ID)
		}
		return fail("a truncated JSON body was answered -32700 with %s; the id MUST be null", id).with(r.ex)
	}
	return res
}

func checkRPCInvalidRequest(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	id := p.newID()
	r := p.send(ctx, []byte(`{"jsonrpc":"1.0","id":`+id+`,"method":"tasks/get","params":{"id":"a2a-check-x"}}`),
		reqOpt{rpcMethod: "tasks/get (jsonrpc 1.0)", schema: "JSONRPCErrorResponse", reqID: jsontext.Value(id), invalid: true})
	return expectCode(r, `"jsonrpc":"1.0"`, -32600)
}

func checkRPCMissingMethod(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	id := p.newID()
	r := p.send(ctx, []byte(`{"jsonrpc":"2.0","id":`+id+`,"params":{"id":"a2a-check-x"}}`),
		reqOpt{rpcMethod: "(no method)", schema: "JSONRPCErrorResponse", reqID: jsontext.Value(id), invalid: true})
	return expectCode(r, "a request without method", -32600)
}

func checkRPCMethodNotFound(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	r := p.call(ctx, "a2a-check/no-such-method", map[string]any{})
	res := expectCode(r, "method a2a-check/no-such-method", -32601)
	if res.Status == Pass && !idsEqual(r.ID, r.ex.ReqID) {
		return fail("-32601 was answered with id %s, not the request's %s", r.ID, r.ex.ReqID).with(r.ex)
	}
	return res
}

func checkRPCInvalidParams(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	msg := map[string]any{"kind": "message", "role": "user", "messageId": newUUID(), "parts": "not-an-array"}
	r := p.callOpt(ctx, "message/send", map[string]any{"message": msg}, reqOpt{invalid: true})
	return expectCode(r, `message/send with "parts":"not-an-array"`, -32602)
}

func checkRPCID(ctx context.Context, p *Probe, id string) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	r := p.callOpt(ctx, "tasks/get", map[string]any{"id": "a2a-check-unknown-" + newUUID()}, reqOpt{reqID: jsontext.Value(id)})
	switch {
	case r.ex.Status == 0:
		return fail("tasks/get: %s", r.ex.Err).with(r.ex)
	case r.obj == nil:
		return fail("tasks/get answered %s", r.describe()).with(r.ex)
	case !r.HasID:
		return fail("the answer has no id member; the request's id was %s", id).with(r.ex)
	case string(r.ID) == id:
		return pass("id %s echoed exactly (%s)", id, r.describe()).with(r.ex)
	case idsEqual(r.ID, jsontext.Value(id)):
		return pass("id %s echoed as %s (same value and type)", id, r.ID).with(r.ex)
	}
	return fail("the request's id %s was answered with id %s", id, r.ID).with(r.ex)
}

func checkRPCIDString(ctx context.Context, p *Probe) Result {
	return checkRPCID(ctx, p, `"a2a-check-`+newUUID()[:8]+`"`)
}

func checkRPCIDNumber(ctx context.Context, p *Probe) Result {
	return checkRPCID(ctx, p, "4242")
}

func checkRPCNoID(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	r := p.send(ctx, rpcBody("", "tasks/get", map[string]any{"id": "a2a-check-unknown-" + newUUID()}), reqOpt{rpcMethod: "tasks/get (no id)", schema: "GetTaskResponse"})
	e := r.ex
	switch {
	case e.Status == 0:
		return fail("tasks/get without id: %s", e.Err).with(e)
	case len(bytes.TrimSpace(e.RespBody)) == 0 && e.Status < 300:
		return pass("no answer (HTTP %d, empty body): handled as a notification", e.Status).with(e)
	case r.obj == nil:
		return fail("tasks/get without id answered %s, %s", statusText(e), r.describe()).with(e)
	case !r.HasID:
		return fail("tasks/get without id was answered (%s) without an id member; it MUST be null", r.describe()).with(e)
	case string(r.ID) == "null":
		return pass("answered with id null (%s)", r.describe()).with(e)
	}
	return fail("a request without id was answered with id %s", r.ID).with(e)
}

func checkRPCBatch(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	body := []byte(`[{"jsonrpc":"2.0","id":"a2a-check-b1","method":"tasks/get","params":{"id":"a2a-check-unknown-` + newUUID() + `"}},` +
		`{"jsonrpc":"2.0","id":2,"method":"a2a-check/no-such-method","params":{}}]`)
	e := p.do(ctx, body, reqOpt{rpcMethod: "(batch of 2)"})
	if e.Status == 0 {
		return fail("batch: %s", e.Err).with(e)
	}
	var arr []jsontext.Value
	if err := json.Unmarshal(e.RespBody, &arr, lenient); err != nil {
		r := parseRPC(e.RespBody)
		return fail("a batch of 2 requests was answered with %s, not an array of responses", r.describe()).with(e)
	}
	if len(arr) != 2 {
		return fail("a batch of 2 requests was answered with an array of %d", len(arr)).with(e)
	}
	want := map[string]bool{`"a2a-check-b1"`: false, `2`: false}
	for _, m := range arr {
		r := parseRPC(m)
		if r.obj == nil {
			return fail("a batch member is not a response object: %s", excerpt(m, 200)).with(e)
		}
		for id := range want {
			if idsEqual(r.ID, jsontext.Value(id)) {
				want[id] = true
			}
		}
	}
	for id, ok := range want {
		if !ok {
			return fail("no response in the batch answer has id %s", id).with(e)
		}
	}
	return pass("a batch of 2 requests was answered with 2 responses, ids matched").with(e)
}

// rpcExchanges returns the recorded exchanges that carry a plain (not
// SSE) JSON-RPC answer, excluding batches and the checker's cleanup.
func rpcExchanges(p *Probe) []*Exchange {
	var out []*Exchange
	for _, e := range p.exchanges() {
		if e.RPCMethod == "" || e.Status == 0 || e.Check == "cleanup" || strings.HasPrefix(e.RPCMethod, "(batch") {
			continue
		}
		if e.Stream && mediaType(e.RespContentType()) == "text/event-stream" {
			continue
		}
		out = append(out, e)
	}
	return out
}

// ensureTraffic makes sure a final check has something to judge when it
// runs alone (--only): one error answer and one message/send.
func ensureTraffic(ctx context.Context, p *Probe) {
	if len(rpcExchanges(p)) > 2 {
		return
	}
	p.call(ctx, "tasks/get", map[string]any{"id": "a2a-check-unknown-" + newUUID()})
	p.sendText(ctx, p.opts.Text, map[string]any{"blocking": false})
}

func checkRPCContentType(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	ensureTraffic(ctx, p)
	var bad []*Exchange
	types := map[string]int{}
	n := 0
	for _, e := range rpcExchanges(p) {
		if parseRPC(e.RespBody).obj == nil {
			continue // not a JSON-RPC answer (judged by rpc.response-shape)
		}
		n++
		if mediaType(e.RespContentType()) != "application/json" {
			bad = append(bad, e)
			types[e.RespContentType()]++
		}
	}
	if n == 0 {
		return skip("no JSON-RPC answer was received")
	}
	if len(bad) == 0 {
		return pass("all %d JSON-RPC answers have Content-Type application/json", n)
	}
	var ts []string
	for t, c := range types {
		if t == "" {
			t = "(none)"
		}
		ts = append(ts, fmt.Sprintf("%q ×%d", t, c))
	}
	sort.Strings(ts)
	return fail("%d of %d JSON-RPC answers are not application/json: Content-Type %s", len(bad), n, strings.Join(ts, ", ")).with(firstN(bad, 2)...)
}

func firstN(es []*Exchange, n int) []*Exchange {
	if len(es) > n {
		return es[:n]
	}
	return es
}

func checkRPCHTTPStatus(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	ensureTraffic(ctx, p)
	var bad []*Exchange
	pairs := map[string]int{}
	n := 0
	for _, e := range rpcExchanges(p) {
		r := parseRPC(e.RespBody)
		if r.Err == nil || e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
			continue
		}
		n++
		if e.Status != http.StatusOK {
			bad = append(bad, e)
			pairs[fmt.Sprintf("%d → HTTP %d", r.Err.Code, e.Status)]++
		}
	}
	if n == 0 {
		return skip("no JSON-RPC error answer was received")
	}
	if len(bad) == 0 {
		return pass("all %d JSON-RPC error answers were HTTP 200", n)
	}
	var ps []string
	for k, c := range pairs {
		ps = append(ps, fmt.Sprintf("%s (×%d)", k, c))
	}
	sort.Strings(ps)
	return fail("%d of %d JSON-RPC error answers were not HTTP 200: %s", len(bad), n, strings.Join(ps, ", ")).with(firstN(bad, 2)...)
}

// shapeProblem returns what is wrong with one JSON-RPC response ("" if
// nothing). reqID is the request's id (nil: none).
func shapeProblem(b []byte, reqID jsontext.Value) string {
	r := parseRPC(b)
	if r.obj == nil {
		return r.parseErr
	}
	var problems []string
	if v, ok := r.obj["jsonrpc"]; !ok || string(v) != `"2.0"` {
		problems = append(problems, `"jsonrpc" is not "2.0"`)
	}
	switch {
	case !r.HasID:
		problems = append(problems, "no id member")
	case reqID != nil && !idsEqual(r.ID, reqID) && !(string(r.ID) == "null" && (r.code() == -32700 || r.code() == -32600)):
		problems = append(problems, fmt.Sprintf("id %s does not match the request's %s", r.ID, reqID))
	}
	switch {
	case r.HasResult && r.Err != nil:
		problems = append(problems, "both result and error")
	case !r.HasResult && r.Err == nil:
		problems = append(problems, "neither result nor error")
	case r.Err != nil && !r.Err.CodeOK:
		problems = append(problems, "error.code is missing or not an integer")
	}
	if r.Err != nil {
		var eo map[string]jsontext.Value
		_ = json.Unmarshal(r.obj["error"], &eo, lenient)
		if m, ok := eo["message"]; !ok || m.Kind() != '"' {
			problems = append(problems, "error.message is missing or not a string")
		}
	}
	return strings.Join(problems, "; ")
}

func checkRPCResponseShape(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	ensureTraffic(ctx, p)
	var bad []*Exchange
	var msgs []string
	n := 0
	for _, e := range rpcExchanges(p) {
		if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
			continue
		}
		if e.ReqID == nil && len(bytes.TrimSpace(e.RespBody)) == 0 {
			continue // a notification may go unanswered
		}
		n++
		if prob := shapeProblem(e.RespBody, e.ReqID); prob != "" {
			bad = append(bad, e)
			if len(msgs) < 4 {
				msgs = append(msgs, fmt.Sprintf("%s #%d (%s): %s", e.RPCMethod, e.Seq, statusText(e), prob))
			}
		}
	}
	if n == 0 {
		return skip("no JSON-RPC answer was received")
	}
	if len(bad) == 0 {
		return pass("all %d answers are well-formed JSON-RPC responses", n)
	}
	return fail("%d of %d answers are not well-formed JSON-RPC responses: %s", len(bad), n, strings.Join(msgs, "; ")).with(firstN(bad, 3)...)
}
