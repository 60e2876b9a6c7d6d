package check

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/grpcdial"
	"github.com/a2abridge/a2abridge/internal/schema"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

func init() {
	register10(
		check10{name: "push", section: "§3.1.7", level: Must,
			title:          "Push notification configs can be created, read, listed and deleted",
			requirement:    "With capabilities.pushNotifications, CreateTaskPushNotificationConfig stores a config and returns it with its id (§3.1.7), Get returns it (§3.1.8), List returns every config of the task (§3.1.9), and Delete MUST permanently remove it (§3.1.10).",
			recommendation: "Implement the four push config operations with the flat TaskPushNotificationConfig (taskId, id, url, token, authentication).",
			run:            check10Push},
		check10{name: "push-unsupported", section: "§3.3.4", level: Should,
			title:          "Undeclared push notifications fail with PushNotificationNotSupportedError",
			requirement:    "Without capabilities.pushNotifications, the push config operations give PushNotificationNotSupportedError (§3.1.7, §3.3.4): -32003, HTTP 400 (§5.4).",
			recommendation: "Answer CreateTaskPushNotificationConfig with PushNotificationNotSupportedError when push notifications are not supported.",
			run:            check10PushUnsupported},
		check10{name: "extended-card", section: "§3.1.11", level: Must,
			title:          "GetExtendedAgentCard follows capabilities.extendedAgentCard",
			requirement:    "GetExtendedAgentCard is available only if capabilities.extendedAgentCard is true (§3.1.11): then it returns a complete AgentCard to an authenticated client (extended-card-unsupported checks the answer when the card does not claim it).",
			recommendation: "Serve the extended AgentCard when the card claims it.",
			run:            check10ExtendedCard},
		check10{name: "version-unsupported", section: "§3.6.2", level: Must,
			title:          "An unsupported A2A-Version is VersionNotSupportedError",
			requirement:    "If the version is not supported by the interface, agents MUST return a VersionNotSupportedError (§3.6.2): -32009, HTTP 400 (§5.4).",
			recommendation: "Answer a request with A2A-Version: 9.9 with VersionNotSupportedError naming the versions served.",
			run:            check10VersionUnsupported},
		check10{name: "version-missing", section: "§3.6.2", level: Must, http: true,
			title:          "A request without A2A-Version is not served as 1.0",
			requirement:    "Agents MUST interpret an empty A2A-Version as 0.3 (§3.6.2) and MUST process requests with the semantics of the requested version: a 1.0 operation without the header is answered as 0.3 would answer it (VersionNotSupportedError, or -32601 for a method 0.3 does not have), not served as 1.0.",
			recommendation: "Read a missing A2A-Version as 0.3: answer 1.0 operations without the header with VersionNotSupportedError.",
			run:            check10VersionMissing},
		check10{name: "tenant", section: "§8.3.2", level: Must,
			title:          "The interface's tenant is honoured",
			requirement:    "Clients set the tenant field in every request to the value the AgentInterface declares (§8.3.2); the server routes by it (§4.4.6): HTTP+JSON puts it in the path, /{tenant}/tasks/{id}.",
			recommendation: "Serve every operation with the declared tenant (as the tenant field, and as the /{tenant} path prefix in HTTP+JSON).",
			run:            check10Tenant},
		check10{name: "errors", section: "§3.3.2", level: Must, final: true,
			title:          "Errors carry a google.rpc.ErrorInfo with the right reason",
			requirement:    "A2A-specific errors MUST carry a google.rpc.ErrorInfo with reason (TASK_NOT_FOUND, …) and domain \"a2a-protocol.org\" (§10.6, §11.6); each detail has an @type (§3.3.2). JSON-RPC: error.data is an array of details (§9.5). HTTP+JSON: a google.rpc.Status body {\"error\": {code, status, message, details}} whose code is the HTTP status of §5.4.",
			recommendation: "Write every A2A error with its ErrorInfo (reason matching the code) in error.data (JSON-RPC) or error.details (HTTP+JSON), with the HTTP status of §5.4.",
			run:            check10Errors},
		check10{name: "payload-shape", section: "§5.5", level: Must, final: true, http: true,
			title:          "Payloads are ProtoJSON: enum names, no kind, no final, one part type",
			requirement:    "All JSON serializations MUST use camelCase names and enum values by their proto names (TASK_STATE_COMPLETED, ROLE_AGENT) (§5.5); 1.0 objects have no \"kind\" discriminator and a status update no \"final\" flag (§4.2.1); a Part has exactly one of text, raw, url, data (§4.1.6).",
			recommendation: "Write 1.0 payloads with the 1.0 codec: ProtoJSON enum names, no kind members, one content member per part.",
			run:            check10PayloadShape},
		check10{name: "schema", section: "§4", level: Must, final: true, http: true,
			title:          "Every payload is valid against the A2A 1.0.1 JSON Schema",
			requirement:    "Results and stream events are the objects of §4 and §3.2 in ProtoJSON: each result is the operation's response message (Task, SendMessageResponse, StreamResponse, ListTasksResponse, TaskPushNotificationConfig, …) of the A2A 1.0.1 JSON Schema, which admits no unknown members (such as 0.3's final or kind).",
			recommendation: "Fix the members listed so that every payload validates against the A2A 1.0.1 schema.",
			run:            check10Schema},
	)
	register10(
		check10{name: "envelope", section: "§9.1", level: Must, final: true, only: BindingJSONRPC,
			title:          "Every answer is a JSON-RPC 2.0 response in application/json",
			requirement:    "JSON-RPC 2.0 over HTTP with Content-Type application/json for requests and responses (§9.1): jsonrpc \"2.0\", the request's id with its JSON type, exactly one of result and error (JSON-RPC 2.0 §5).",
			recommendation: "Answer every 1.0 request with {\"jsonrpc\":\"2.0\",\"id\":<the request's id>,\"result\"|\"error\":…} as application/json.",
			run:            check10Envelope},
		check10{name: "http-status", section: "§9.5", level: Should, final: true, only: BindingJSONRPC,
			title:          "JSON-RPC errors are sent with HTTP 200",
			requirement:    "The JSON-RPC error is the response body (§9.5); the HTTP exchange succeeds. a2a-go v2's client turns any other status into a generic transport error and loses the A2A error.",
			recommendation: "Send JSON-RPC error responses with HTTP 200 (keep 401/403 for authentication failures).",
			run:            check10HTTPStatus},
		check10{name: "routes", section: "§11.3", level: Must, only: BindingREST,
			title:          "Every HTTP+JSON route is served",
			requirement:    "The HTTP+JSON binding serves the routes of §11.3 (and §5.3): POST /message:send and /message:stream, GET /tasks and /tasks/{id}, POST /tasks/{id}:cancel and :subscribe, POST and GET /tasks/{id}/pushNotificationConfigs, GET and DELETE …/{configId}, GET /extendedAgentCard. For an unknown task each answers an A2A error (TaskNotFoundError), not a routing failure.",
			recommendation: "Route each path of §11.3 (also below the interface's tenant) and answer unknown tasks with a google.rpc.Status TASK_NOT_FOUND.",
			run:            check10Routes},
		check10{name: "unknown-path", section: "§11.3", level: Should, only: BindingREST,
			title:          "An unknown path is answered 404",
			requirement:    "A path that is no route of §11.3 names no resource: HTTP 404 Not Found (RFC 9110 §15.5.5).",
			recommendation: "Answer paths the binding does not have with 404.",
			run:            check10UnknownPath},
		check10{name: "wrong-method", section: "§11.3", level: Should, only: BindingREST,
			title:          "A route with the wrong HTTP method is answered 405 with Allow",
			requirement:    "Each route of §11.3 has its HTTP method; another method is 405 Method Not Allowed, whose response MUST carry an Allow header (RFC 9110 §15.5.6).",
			recommendation: "Answer DELETE /message:send (and the like) with 405 and Allow: POST.",
			run:            check10WrongMethod},
	)
}

// pushURL returns the webhook URL configs are created with: the checker's
// receiver, or the fallback when it cannot run.
func (s *suite10) pushURL() string {
	if hook, err := s.p.webhook(); err == nil {
		return hook.base + "/a2a-check/push10-" + newUUID()[:8]
	}
	return fallbackWebhook
}

func check10Push(ctx context.Context, s *suite10) Result {
	if !s.p.capability("pushNotifications") {
		return notApplicable("the card does not declare capabilities.pushNotifications")
	}
	t, res := s.finishedTask(ctx, false)
	if res != nil {
		return *res
	}
	cfg := a2a.TaskPushNotificationConfig{TaskID: t.ID, PushNotificationConfig: a2a.PushNotificationConfig{ID: "a2a-check-" + newUUID()[:8], URL: s.pushURL(), Token: "a2a-check-token"}}
	c := s.do(ctx, s.createPush(cfg))
	refused := func(r *reply10) bool { return r.err != nil && r.err.Code == a2a.CodeInvalidParams }
	if refused(c) && cfg.PushNotificationConfig.URL != fallbackWebhook {
		// The server refuses the loopback receiver: the fallback name.
		first := c
		cfg.PushNotificationConfig.URL = fallbackWebhook
		if c = s.do(ctx, s.createPush(cfg)); refused(c) {
			return skip("the server refused the checker's loopback webhook (%s), and %s too (%s)", first.describe(), fallbackWebhook, c.describe()).with(first.ex, c.ex)
		}
	}
	created, err := v10.UnmarshalTaskPushNotificationConfig(c.body)
	if !c.ok || err != nil {
		return fail("CreateTaskPushNotificationConfig answered %s", c.describe()).with(c.ex)
	}
	id, want := created.PushNotificationConfig.ID, cfg.PushNotificationConfig.URL
	if id == "" {
		return fail("the created config has no id").with(c.ex)
	}
	s.pushes = append(s.pushes, [2]string{t.ID, id})
	if created.PushNotificationConfig.URL != want || created.TaskID != t.ID {
		return fail("the created config is for task %q at %q; sent task %s at %s", created.TaskID, created.PushNotificationConfig.URL, t.ID, want).with(c.ex)
	}
	g := s.do(ctx, s.pushConfigRequest(opGetPushConfig, http.MethodGet, t.ID, id))
	if got, err := v10.UnmarshalTaskPushNotificationConfig(g.body); !g.ok || err != nil || got.PushNotificationConfig.URL != want {
		return fail("GetTaskPushNotificationConfig of %s answered %s", id, g.describe()).with(c.ex, g.ex)
	}
	l := s.do(ctx, s.listPush(t.ID))
	if !pushListed(l, id) {
		return fail("ListTaskPushNotificationConfigs does not return config %s: %s", id, l.describe()).with(c.ex, l.ex)
	}
	d := s.do(ctx, s.pushConfigRequest(opDeletePushConfig, http.MethodDelete, t.ID, id))
	if !d.ok {
		return fail("DeleteTaskPushNotificationConfig answered %s", d.describe()).with(c.ex, d.ex)
	}
	s.pushes = s.pushes[:len(s.pushes)-1]
	l2 := s.do(ctx, s.listPush(t.ID))
	if pushListed(l2, id) {
		return fail("after DeleteTaskPushNotificationConfig, List still returns config %s", id).with(d.ex, l2.ex)
	}
	g2 := s.do(ctx, s.pushConfigRequest(opGetPushConfig, http.MethodGet, t.ID, id))
	if g2.ok {
		return fail("after DeleteTaskPushNotificationConfig, Get still returns config %s", id).with(d.ex, g2.ex)
	}
	return pass("created, read, listed and deleted config %s; Get then answered %s", id, g2.describe()).with(c.ex, g.ex, l.ex, d.ex, g2.ex)
}

// pushListed reports whether a List answer holds the config id.
func pushListed(r *reply10, id string) bool {
	if !r.ok {
		return false
	}
	configs, _, err := v10.UnmarshalListTaskPushNotificationConfigsResponse(r.body)
	return err == nil && slices.ContainsFunc(configs, func(c a2a.TaskPushNotificationConfig) bool { return c.PushNotificationConfig.ID == id })
}

func check10PushUnsupported(ctx context.Context, s *suite10) Result {
	if s.p.capability("pushNotifications") {
		return notApplicable("the card declares capabilities.pushNotifications; rpc10.push and rest10.push verify that they work")
	}
	t, res := s.finishedTask(ctx, false)
	if res != nil {
		return *res
	}
	cfg := a2a.TaskPushNotificationConfig{TaskID: t.ID, PushNotificationConfig: a2a.PushNotificationConfig{URL: fallbackWebhook}}
	return expect10(s.do(ctx, s.createPush(cfg)), "CreateTaskPushNotificationConfig", a2a.CodePushNotificationNotSupported)
}

func check10ExtendedCard(ctx context.Context, s *suite10) Result {
	if !s.p.capability("extendedAgentCard") {
		return notApplicable("the card does not claim capabilities.extendedAgentCard; extended-card-unsupported checks the answer")
	}
	if s.p.securityDeclared() && !s.p.hasCredentials() {
		return skip("no credentials given (use --token, --api-key or --header)")
	}
	r := s.do(ctx, s.extendedCard())
	if !r.ok {
		return fail("GetExtendedAgentCard answered %s", r.describe()).with(r.ex)
	}
	if err := schema.Validate10(definitionAgentCard, r.body); err != nil {
		return fail("the extended card is %v", err).with(r.ex)
	}
	return pass("GetExtendedAgentCard returned a valid AgentCard %q", str(decodeObj(r.body), "name")).with(r.ex)
}

func check10VersionUnsupported(ctx context.Context, s *suite10) Result {
	req := s.getTask("a2a-check-unknown-"+newUUID(), nil)
	req.version, req.invalid = "9.9", true
	return expect10(s.do(ctx, req), "GetTask with A2A-Version: 9.9", a2a.CodeVersionNotSupported)
}

func check10VersionMissing(ctx context.Context, s *suite10) Result {
	req := s.getTask("a2a-check-unknown-"+newUUID(), nil)
	req.version, req.invalid = noVersion, true
	r := s.do(ctx, req)
	switch {
	case r.ex.Status == 0:
		return fail("GetTask without A2A-Version: %s", r.ex.Err).with(r.ex)
	case r.ok:
		return fail("GetTask without A2A-Version was served as 1.0: %s", r.describe()).with(r.ex)
	case r.err != nil && r.err.Code == a2a.CodeVersionNotSupported:
		return pass("GetTask without A2A-Version was answered %s", r.describe()).with(r.ex)
	case r.err != nil && r.err.Code == a2a.CodeMethodNotFound && !s.rest:
		return pass("GetTask without A2A-Version was answered %s (read as 0.3, which has no GetTask)", r.describe()).with(r.ex)
	case r.err != nil && r.err.Code == a2a.CodeTaskNotFound:
		return fail("GetTask without A2A-Version was served as 1.0 (%s); an empty A2A-Version means 0.3", r.describe()).with(r.ex)
	}
	return fail("GetTask without A2A-Version was answered %s, not VersionNotSupportedError", r.describe()).with(r.ex)
}

func check10Tenant(ctx context.Context, s *suite10) Result {
	if s.iface.Tenant == "" {
		return notApplicable("the %s interface declares no tenant", s.iface.Name())
	}
	t, res := s.finishedTask(ctx, false)
	if res != nil {
		return *res
	}
	r := s.do(ctx, s.getTask(t.ID, nil))
	if g, err := v10.UnmarshalTask(r.body); !r.ok || err != nil || g.ID != t.ID {
		return fail("GetTask of task %s with tenant %q answered %s", t.ID, s.iface.Tenant, r.describe()).with(r.ex)
	}
	return pass("SendMessage and GetTask with tenant %q work", s.iface.Tenant).with(r.ex)
}

// errorAnswers returns the recorded error answers of the suite: unary
// answers and the error events of streams, with the error document.
type errorAnswer struct {
	e      *Exchange
	status int // HTTP status (for a stream event, 0)
	doc    []byte
	err    *a2a.Error
}

func (s *suite10) errorAnswers() []errorAnswer {
	var out []errorAnswer
	for _, e := range s.p.exchangesOf(s.key) {
		if e.Status == 0 || e.Check == "cleanup" || e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || routing(e) {
			continue
		}
		if e.Stream && isSSE(e) {
			for _, ev := range e.Events {
				if f := s.frame(ev); f.err != nil {
					doc := ev.Data
					if !s.rest && !s.grpc {
						doc = parseRPC(ev.Data).obj["error"]
					}
					out = append(out, errorAnswer{e: e, doc: doc, err: f.err})
				}
			}
			continue
		}
		if r := s.read(e); r.err != nil {
			status := e.Status
			if e.Invalid {
				status = 0 // a routing answer (405) or a refused version: no §5.4 status to judge
			}
			out = append(out, errorAnswer{e: e, status: status, doc: r.errDoc, err: r.err})
		}
	}
	return out
}

// errorProblem says what is wrong with one error answer ("" if nothing).
func (s *suite10) errorProblem(a errorAnswer) string {
	var details []any
	if s.grpc {
		// The status as recorded (statusDocument): its code is gRPC's.
		m, _ := decode(a.doc).(map[string]any)
		st, _ := m["error"].(map[string]any)
		code, _ := st["code"].(float64)
		if want := grpcdial.StatusFor(a.err.Code); specific(a.err.Code) && int(code) != want {
			return fmt.Sprintf("%s is gRPC %s, not %s (§5.4)", a2a.Reason(a.err.Code), str(st, "status"), grpcdial.CodeName(want))
		}
		details, _ = st["details"].([]any)
	} else if s.rest {
		m, _ := decode(a.doc).(map[string]any)
		st, _ := m["error"].(map[string]any)
		if st == nil {
			return "the body is not a google.rpc.Status {\"error\": {…}}"
		}
		code, _ := st["code"].(float64)
		if a.status != 0 && int(code) != a.status {
			return fmt.Sprintf("error.code %v differs from the HTTP status %d", st["code"], a.status)
		}
		if want, _ := v10.HTTPStatus(a.err); a.status != 0 && specific(a.err.Code) && a.status != want {
			return fmt.Sprintf("%s is HTTP %d, not %d (§5.4)", a2a.Reason(a.err.Code), a.status, want)
		}
		details, _ = st["details"].([]any)
	} else {
		m, _ := decode(a.doc).(map[string]any)
		var ok bool
		if details, ok = m["data"].([]any); !ok && m["data"] != nil {
			return "error.data is not an array of details"
		}
	}
	for i, d := range details {
		if dm, _ := d.(map[string]any); str(dm, "@type") == "" {
			return fmt.Sprintf("detail %d has no @type", i)
		}
	}
	reason := a2a.Reason(a.err.Code)
	if s.rest && a.status == http.StatusNotFound && !a.e.Invalid && !hasErrorInfo(details) {
		return "HTTP 404 without a google.rpc.ErrorInfo: clients cannot tell TaskNotFoundError from a missing route"
	}
	if !specific(a.err.Code) {
		return ""
	}
	for _, d := range details {
		dm, _ := d.(map[string]any)
		if str(dm, "@type") == v10.TypeErrorInfo {
			if str(dm, "reason") != reason || str(dm, "domain") != v10.ErrorDomain {
				return fmt.Sprintf("the ErrorInfo has reason %q and domain %q; want %q and %q", str(dm, "reason"), str(dm, "domain"), reason, v10.ErrorDomain)
			}
			return ""
		}
	}
	return fmt.Sprintf("error %d (%s) has no google.rpc.ErrorInfo", a.err.Code, reason)
}

// routing reports whether e probed the routing of the HTTP+JSON binding
// (an unknown path, a wrong method), not an A2A operation: its answer is
// judged by rest10.unknown-path and rest10.wrong-method.
func routing(e *Exchange) bool { return strings.HasPrefix(e.RPCMethod, "(") }

// hasErrorInfo reports whether details hold a google.rpc.ErrorInfo.
func hasErrorInfo(details []any) bool {
	return slices.ContainsFunc(details, func(d any) bool {
		dm, _ := d.(map[string]any)
		return str(dm, "@type") == v10.TypeErrorInfo
	})
}

// specific reports whether code is an A2A-specific error (§3.3.2), which
// MUST carry an ErrorInfo.
func specific(code int) bool { return code <= -32001 && code >= -32099 }

func check10Errors(ctx context.Context, s *suite10) Result {
	if len(s.errorAnswers()) < 2 {
		s.do(ctx, s.getTask("a2a-check-unknown-"+newUUID(), nil))
		s.do(ctx, s.cancelTask("a2a-check-unknown-"+newUUID()))
	}
	var f findings
	all := s.errorAnswers()
	for _, a := range all {
		if prob := s.errorProblem(a); prob != "" {
			f.add(a.e, "%s #%d: %s", a.e.RPCMethod, a.e.Seq, prob)
		}
	}
	if len(all) == 0 {
		return skip("no error answer was received")
	}
	return f.result(fmt.Sprintf("of %d error answers", len(all)), fmt.Sprintf("all %d error answers carry their ErrorInfo", len(all)))
}

// findings collects the problems a final check finds in recorded
// exchanges: the exchanges (evidence) and the first messages.
type findings struct {
	bad  []*Exchange
	msgs []string
}

// add records a problem of e.
func (f *findings) add(e *Exchange, format string, args ...any) {
	if !slices.Contains(f.bad, e) {
		f.bad = append(f.bad, e)
	}
	if len(f.msgs) < 4 {
		f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
	}
}

// result fails with the problems ("N exchange(s) <of>: …") or passes with ok.
func (f *findings) result(of, ok string) Result {
	if len(f.bad) == 0 {
		return pass("%s", ok)
	}
	return fail("%d exchange(s) %s: %s", len(f.bad), of, strings.Join(f.msgs, "; ")).with(firstN(f.bad, 3)...)
}

// payloads returns the recorded success payloads of the suite with their
// schema definition: unary results and stream events.
type payload struct {
	e          *Exchange
	definition string
	body       []byte
}

func (s *suite10) payloads() []payload {
	var out []payload
	for _, e := range s.p.exchangesOf(s.key) {
		if e.Status == 0 || e.Check == "cleanup" || e.Invalid {
			continue
		}
		if e.Stream && isSSE(e) {
			for _, ev := range e.Events {
				if f := s.frame(ev); f.payload != nil {
					out = append(out, payload{e, "StreamResponse", f.payload})
				}
			}
			continue
		}
		if r := s.read(e); r.ok && len(r.body) > 0 && string(r.body) != "null" && e.Schema != definitionNone {
			out = append(out, payload{e, e.Schema, r.body})
		}
	}
	return out
}

// shapeProblems walks a 1.0 payload for what ProtoJSON does not write.
func shapeProblems(v any, path string, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if strings.HasSuffix(path, "/parts/*") {
			n := 0
			for _, k := range []string{"text", "raw", "url", "data"} {
				if _, ok := x[k]; ok {
					n++
				}
			}
			if n != 1 {
				*out = append(*out, fmt.Sprintf("%s has %d of text, raw, url, data", path, n))
			}
		}
		for _, k := range keys {
			c := x[k]
			switch {
			case k == "metadata" || k == "data" || k == "params":
				continue // free-form values
			case k == "kind":
				*out = append(*out, fmt.Sprintf("%s has a \"kind\" member (%v)", path, c))
			case k == "final" && strings.HasSuffix(path, "statusUpdate"):
				*out = append(*out, fmt.Sprintf("%s has a \"final\" member; A2A 1.0 has none (the stream's end is the signal)", path))
			case k == "state" && !strings.HasPrefix(fmt.Sprint(c), "TASK_STATE_"):
				*out = append(*out, fmt.Sprintf("%s/state is %v, not a TASK_STATE_* name", path, c))
			case k == "role" && !strings.HasPrefix(fmt.Sprint(c), "ROLE_"):
				*out = append(*out, fmt.Sprintf("%s/role is %v, not a ROLE_* name", path, c))
			case strings.Contains(k, "_"):
				*out = append(*out, fmt.Sprintf("%s/%s is not camelCase", path, k))
			}
			shapeProblems(c, path+"/"+k, out)
		}
	case []any:
		for _, c := range x {
			shapeProblems(c, path+"/*", out)
		}
	}
}

func check10PayloadShape(ctx context.Context, s *suite10) Result {
	ensure10Traffic(ctx, s)
	var f findings
	ps := s.payloads()
	for _, p := range ps {
		var probs []string
		shapeProblems(decode(p.body), "", &probs)
		if len(probs) > 0 {
			f.add(p.e, "%s #%d: %s", p.e.RPCMethod, p.e.Seq, strings.Join(firstStrings(probs, 2), "; "))
		}
	}
	if len(ps) == 0 {
		return skip("no result was received")
	}
	return f.result("with payloads that are not ProtoJSON", fmt.Sprintf("all %d results and events are ProtoJSON", len(ps)))
}

// ensure10Traffic makes sure a final check has something to judge when
// it runs alone (--only): one SendMessage and one GetTask.
func ensure10Traffic(ctx context.Context, s *suite10) {
	if len(s.payloads()) > 1 {
		return
	}
	if t, _, res := s.sendTask(ctx, s.p.opts.Text, true); res == nil {
		s.do(ctx, s.getTask(t.ID, nil))
	}
}

func check10Schema(ctx context.Context, s *suite10) Result {
	ensure10Traffic(ctx, s)
	var f findings
	ps := s.payloads()
	for _, p := range ps {
		err := schema.Validate10(p.definition, p.body)
		if err == nil {
			continue
		}
		detail := err.Error()
		var se *schema.Error
		if errors.As(err, &se) {
			detail = strings.Join(firstStrings(se.Violations, 2), "; ")
		}
		f.add(p.e, "%s #%d is not a valid %s: %s", p.e.RPCMethod, p.e.Seq, p.definition, detail)
	}
	if len(ps) == 0 {
		return skip("no result was received")
	}
	return f.result("with invalid payloads", fmt.Sprintf("all %d results and events are valid", len(ps)))
}

func check10Envelope(ctx context.Context, s *suite10) Result {
	ensure10Traffic(ctx, s)
	var f findings
	n := 0
	for _, e := range s.p.exchangesOf(s.key) {
		if e.Status == 0 || e.Check == "cleanup" || (e.Stream && isSSE(e)) || e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
			continue
		}
		n++
		prob := shapeProblem(e.RespBody, e.ReqID)
		if prob == "" && mediaType(e.RespContentType()) != "application/json" {
			prob = fmt.Sprintf("Content-Type %q", e.RespContentType())
		}
		if prob != "" {
			f.add(e, "%s #%d (%s): %s", e.RPCMethod, e.Seq, statusText(e), prob)
		}
	}
	if n == 0 {
		return skip("no JSON-RPC answer was received")
	}
	return f.result(fmt.Sprintf("of %d", n), fmt.Sprintf("all %d answers are JSON-RPC 2.0 responses in application/json", n))
}

func check10HTTPStatus(ctx context.Context, s *suite10) Result {
	if len(s.errorAnswers()) == 0 {
		s.do(ctx, s.getTask("a2a-check-unknown-"+newUUID(), nil))
	}
	var bad []*Exchange
	n := 0
	for _, a := range s.errorAnswers() {
		if a.status == 0 {
			continue
		}
		n++
		if a.status != http.StatusOK {
			bad = append(bad, a.e)
		}
	}
	if n == 0 {
		return skip("no JSON-RPC error answer was received")
	}
	if len(bad) > 0 {
		return fail("%d of %d JSON-RPC error answers were not HTTP 200 (e.g. HTTP %d)", len(bad), n, bad[0].Status).with(firstN(bad, 2)...)
	}
	return pass("all %d JSON-RPC error answers were HTTP 200", n)
}
