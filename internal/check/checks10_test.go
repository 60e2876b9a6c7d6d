package check

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// The A2A 1.0 fault cases: each breaks one requirement over the binding
// given, so that each check runs as rpc10.<name> and rest10.<name>.

// edit10 edits the payload of an A2A 1.0 answer: the JSON-RPC result, or
// the HTTP+JSON body.
func edit10(m rpcReq, b []byte, edit func(p map[string]any)) []byte {
	if m.REST {
		return editJSON(b, func(p map[string]any) {
			if p["error"] == nil {
				edit(p)
			}
		})
	}
	return editResult(b, edit)
}

// params10 edits the params of an A2A 1.0 POST request: the JSON-RPC
// params, or the HTTP+JSON body.
func params10(m rpcReq, body []byte, edit func(p map[string]any)) []byte {
	if m.REST {
		return editJSON(body, edit)
	}
	return editParams(body, edit)
}

// query10 edits the query of an HTTP+JSON GET, or the JSON-RPC params.
func query10(r *http.Request, m rpcReq, body []byte, name string) []byte {
	if m.REST {
		q := r.URL.Query()
		q.Del(name)
		r.URL.RawQuery = q.Encode()
		return nil
	}
	return editParams(body, func(p map[string]any) { delete(p, name) })
}

// recode10 turns an A2A 1.0 error answer of code from into one of code
// to: the JSON-RPC code and ErrorInfo reason, or the HTTP+JSON status and
// reason.
func recode10(m rpcReq, status *int, b []byte, from, to int) []byte {
	reason := func(details []any) bool {
		found := false
		for _, d := range details {
			if dm, ok := d.(map[string]any); ok && dm["reason"] == a2a.Reason(from) {
				dm["reason"], found = a2a.Reason(to), true
			}
		}
		return found
	}
	return editJSON(b, func(doc map[string]any) {
		e, _ := doc["error"].(map[string]any)
		if e == nil {
			return
		}
		if !m.REST {
			if e["code"] == float64(from) {
				e["code"] = float64(to)
				d, _ := e["data"].([]any)
				reason(d)
			}
			return
		}
		if d, _ := e["details"].([]any); reason(d) {
			code, name := v10.HTTPStatus(&a2a.Error{Code: to})
			e["code"], e["status"], *status = float64(code), name, code
		}
	})
}

// answer10 answers an A2A 1.0 request: a JSON-RPC result or error, or an
// HTTP+JSON body with the status.
func answer10(w http.ResponseWriter, m rpcReq, status int, result string, code int) {
	if !m.REST {
		if result != "" {
			answer(w, m, "result", result)
			return
		}
		answer(w, m, "error", string(v10.AppendError(nil, &a2a.Error{Code: code, Message: "fault"})))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if result == "" {
		b, st := v10.AppendRESTError(nil, &a2a.Error{Code: code, Message: "fault"})
		w.WriteHeader(st)
		_, _ = w.Write(b)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(result))
}

func answerErr10(code int) func(http.ResponseWriter, *http.Request, []byte, rpcReq) ([]byte, bool) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte, m rpcReq) ([]byte, bool) {
		answer10(w, m, 0, "", code)
		return nil, true
	}
}

// sse10 edits the StreamResponse of each event (JSON-RPC: the result).
func sse10(edit func(i int, p map[string]any)) func(rpcReq, int, []byte) []byte {
	return func(m rpcReq, i int, d []byte) []byte {
		if m.Version == "" {
			return d
		}
		return edit10(m, d, func(p map[string]any) { edit(i, p) })
	}
}

// cardInterfaces edits each supportedInterfaces entry of the card.
func cardInterfaces(edit func(i int, it map[string]any)) *fault {
	return &fault{card: func(_ string, m map[string]any) map[string]any {
		ifs, _ := m["supportedInterfaces"].([]any)
		for i, x := range ifs {
			if it, ok := x.(map[string]any); ok {
				edit(i, it)
			}
		}
		return m
	}}
}

// fault10 is one A2A 1.0 check's fault case, for either binding.
type fault10 struct {
	name  string
	only  string // BindingJSONRPC or BindingREST: that binding only
	agent string // default "/a2a/slow"
	host  hostOpts
	opts  Options
	clean Status
	f     *fault
}

func faultCases10() []faultCase {
	slow := Options{Text: "0", LongText: "1"}
	completed := &fault{resp: respFor("GetTask", func(m rpcReq, _ *int, _ http.Header, b []byte) []byte {
		return edit10(m, b, func(p map[string]any) { p["status"].(map[string]any)["state"] = "TASK_STATE_WORKING" })
	})}
	cases := []fault10{
		{name: "send", f: &fault{resp: respFor("SendMessage", func(m rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return edit10(m, b, func(p map[string]any) {
				for k, v := range p["task"].(map[string]any) {
					p[k] = v
				}
				delete(p, "task")
			})
		})}},
		{name: "send-blocking", opts: slow, f: &fault{req: withMethod("SendMessage", func(_ http.ResponseWriter, _ *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			return params10(m, body, func(p map[string]any) { p["configuration"] = map[string]any{"returnImmediately": true} }), false
		})}},
		{name: "send-return-immediately", opts: Options{Text: "0", LongText: "0"}, f: &fault{req: withMethod("SendMessage", func(_ http.ResponseWriter, _ *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			time.Sleep(1100 * time.Millisecond)
			return params10(m, body, func(p map[string]any) { delete(p, "configuration") }), false
		})}},
		{name: "get", opts: slow, f: completed},
		{name: "get-history-length", opts: slow, f: &fault{req: withMethod("GetTask", func(_ http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			return query10(r, m, body, "historyLength"), false
		})}},
		{name: "get-unknown", f: &fault{resp: respFor("GetTask", func(m rpcReq, st *int, _ http.Header, b []byte) []byte {
			return recode10(m, st, b, a2a.CodeTaskNotFound, a2a.CodeInternalError)
		})}},
		{name: "cancel", opts: slow, f: &fault{req: withMethod("CancelTask", answerErr10(a2a.CodeInternalError))}},
		{name: "cancel-terminal", opts: slow, f: &fault{resp: respFor("CancelTask", func(m rpcReq, st *int, _ http.Header, b []byte) []byte {
			return recode10(m, st, b, a2a.CodeTaskNotCancelable, a2a.CodeInternalError)
		})}},
		{name: "unknown-task-message", opts: slow, f: &fault{resp: respFor("SendMessage", func(m rpcReq, st *int, _ http.Header, b []byte) []byte {
			return recode10(m, st, b, a2a.CodeTaskNotFound, a2a.CodeInvalidParams)
		})}},
		// a2a-go v2.4.0 answers a message to a completed task with -32602.
		{name: "terminal-task-message", opts: slow, f: &fault{resp: respFor("SendMessage", func(m rpcReq, st *int, _ http.Header, b []byte) []byte {
			return recode10(m, st, b, a2a.CodeUnsupportedOperation, a2a.CodeInvalidParams)
		})}},
		{name: "list", opts: slow, f: &fault{resp: respFor("ListTasks", func(m rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return edit10(m, b, func(p map[string]any) { delete(p, "nextPageToken") })
		})}},
		{name: "list-paging", opts: slow, f: &fault{resp: respFor("ListTasks", func(m rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return edit10(m, b, func(p map[string]any) { p["nextPageToken"] = "" })
		})}},
		{name: "list-order", opts: slow, f: &fault{resp: respFor("ListTasks", func(m rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return edit10(m, b, func(p map[string]any) {
				ts := p["tasks"].([]any)
				for i, j := 0, len(ts)-1; i < j; i, j = i+1, j-1 {
					ts[i], ts[j] = ts[j], ts[i]
				}
			})
		})}},
		{name: "list-filter", opts: slow, f: &fault{resp: respFor("ListTasks", func(m rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return edit10(m, b, func(p map[string]any) {
				p["tasks"] = append(p["tasks"].([]any), map[string]any{"id": "t-other", "contextId": "c-other", "status": map[string]any{"state": "TASK_STATE_WORKING"}})
			})
		})}},
		{name: "list-page-size", f: &fault{req: withMethod("ListTasks", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			if !strings.Contains(r.URL.RawQuery+string(body), "101") {
				return nil, false
			}
			answer10(w, m, http.StatusOK, `{"tasks":[],"nextPageToken":"","pageSize":101,"totalSize":0}`, 0)
			return nil, true
		})}},
		{name: "list-artifacts", f: &fault{resp: respFor("ListTasks", func(m rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return edit10(m, b, func(p map[string]any) {
				for _, t := range p["tasks"].([]any) {
					if tm := t.(map[string]any); tm["artifacts"] == nil {
						tm["artifacts"] = []any{}
					}
				}
			})
		})}},
		{name: "push", opts: slow, host: hostOpts{push: true}, f: &fault{req: withMethod("DeleteTaskPushNotificationConfig", func(w http.ResponseWriter, _ *http.Request, _ []byte, m rpcReq) ([]byte, bool) {
			answer10(w, m, http.StatusOK, "null", 0)
			return nil, true
		})}},
		{name: "push-unsupported", opts: slow, f: &fault{resp: respFor("CreateTaskPushNotificationConfig", func(m rpcReq, st *int, _ http.Header, b []byte) []byte {
			return recode10(m, st, b, a2a.CodePushNotificationNotSupported, a2a.CodeInternalError)
		})}},
		{name: "extended-card", agent: "/a2a/echo", host: hostOpts{auth: true}, opts: Options{Token: testToken},
			f: &fault{req: withMethod("GetExtendedAgentCard", answerErr10(a2a.CodeAuthenticatedExtendedCardNotConfigured))}},
		// The answer of an agent that checks the task before the capability.
		{name: "push-unsupported-first", f: &fault{req: withMethod("GetTaskPushNotificationConfig", answerErr10(a2a.CodeTaskNotFound))}},
		// The answer of an agent whose delete is not idempotent.
		{name: "push-delete-idempotent", opts: slow, host: hostOpts{push: true}, f: &fault{req: withMethod("DeleteTaskPushNotificationConfig", answerErr10(a2a.CodeTaskNotFound))}},
		// -32007 where the card declares no extended card.
		{name: "extended-card-unsupported", f: &fault{resp: respFor("GetExtendedAgentCard", func(m rpcReq, st *int, _ http.Header, b []byte) []byte {
			return recode10(m, st, b, a2a.CodeUnsupportedOperation, a2a.CodeAuthenticatedExtendedCardNotConfigured)
		})}},
		// A subscription that delivers nothing after its first event.
		{name: "subscribe-interrupted", agent: "/a2a/chat", f: &fault{sse: func(m rpcReq, i int, d []byte) []byte {
			if m.Method == "SubscribeToTask" && i > 0 {
				return nil
			}
			return d
		}}},
		{name: "version-unsupported", f: &fault{req: func(_ http.ResponseWriter, r *http.Request, _ []byte, _ rpcReq) ([]byte, bool) {
			if r.Header.Get("A2A-Version") == "9.9" {
				r.Header.Set("A2A-Version", "1.0")
			}
			return nil, false
		}}},
		{name: "version-missing", f: &fault{req: func(_ http.ResponseWriter, r *http.Request, _ []byte, m rpcReq) ([]byte, bool) {
			if m.Method == "GetTask" && r.Header.Get("A2A-Version") == "" {
				r.Header.Set("A2A-Version", "1.0")
			}
			return nil, false
		}}},
		{name: "tenant", opts: slow, clean: NotApplicable, f: &fault{
			card: func(_ string, m map[string]any) map[string]any {
				for _, x := range m["supportedInterfaces"].([]any) {
					x.(map[string]any)["tenant"] = "t1"
				}
				return m
			},
			req: withMethod("GetTask", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
				if strings.Contains(r.URL.Path+string(body), "t1") && !strings.Contains(string(body), "a2a-check-ping") && !strings.Contains(r.URL.Path, "a2a-check-ping") {
					return answerErr10(a2a.CodeTaskNotFound)(w, r, body, m)
				}
				return nil, false
			})}},
		{name: "errors", f: &fault{resp: func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editJSON(b, func(doc map[string]any) {
				if e, ok := doc["error"].(map[string]any); ok {
					delete(e, "data")
					delete(e, "details")
				}
			})
		}}},
		{name: "payload-shape", opts: slow, f: &fault{resp: respFor("GetTask", func(m rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return edit10(m, b, func(p map[string]any) { p["kind"] = "task" })
		})}},
		{name: "schema", opts: slow, f: &fault{resp: respFor("GetTask", func(m rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return edit10(m, b, func(p map[string]any) { p["status"].(map[string]any)["timestamp"] = "yesterday at noon" })
		})}},
		{name: "envelope", only: BindingJSONRPC, f: &fault{resp: func(m rpcReq, _ *int, _ http.Header, b []byte) []byte {
			if m.Version != "1.0" {
				return b
			}
			return editJSON(b, func(doc map[string]any) { delete(doc, "jsonrpc") })
		}}},
		{name: "http-status", only: BindingJSONRPC, f: &fault{resp: func(_ rpcReq, st *int, _ http.Header, b []byte) []byte {
			if bytes.Contains(b, []byte(`"error"`)) {
				*st = http.StatusInternalServerError
			}
			return b
		}}},
		{name: "routes", only: BindingREST, f: &fault{req: withMethod("CancelTask", func(w http.ResponseWriter, r *http.Request, _ []byte, _ rpcReq) ([]byte, bool) {
			http.NotFound(w, r)
			return nil, true
		})}},
		{name: "unknown-path", only: BindingREST, f: &fault{req: func(w http.ResponseWriter, r *http.Request, _ []byte, _ rpcReq) ([]byte, bool) {
			if !strings.Contains(r.URL.Path, "a2a-check-no-such-route") {
				return nil, false
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
			return nil, true
		}}},
		{name: "wrong-method", only: BindingREST, f: &fault{resp: func(_ rpcReq, _ *int, h http.Header, b []byte) []byte {
			h.Del("Allow")
			return b
		}}},
		{name: "stream", opts: slow, f: &fault{sseHeader: func(h http.Header) { h.Set("Content-Type", "text/plain") }}},
		{name: "stream-frames", opts: slow, f: &fault{sse: sse10(func(_ int, p map[string]any) {
			if p["statusUpdate"] != nil {
				p["message"] = map[string]any{"messageId": "m", "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": "x"}}}
			}
		})}},
		{name: "stream-first", opts: slow, f: &fault{sse: func(m rpcReq, i int, d []byte) []byte {
			if i == 0 {
				return nil
			}
			return d
		}}},
		{name: "stream-end", opts: slow, f: &fault{streamTail: 2600 * time.Millisecond}},
		{name: "subscribe", opts: slow, f: &fault{req: withMethod("SubscribeToTask", answerErr10(a2a.CodeTaskNotFound))}},
		// a2a-go v2.4.0 answers SubscribeToTask of a finished task with -32001.
		{name: "subscribe-terminal", opts: slow, f: &fault{req: withMethod("SubscribeToTask", answerErr10(a2a.CodeTaskNotFound))}},
	}
	var out []faultCase
	for _, c := range cases {
		for _, b := range bindings10 {
			if c.only != "" && c.only != b.binding || b.binding == BindingGRPC {
				continue // the HTTP faults; gRPC's are in TestGRPCSuite
			}
			out = append(out, faultCase{id: b.category + "." + c.name, agent: c.agent, host: c.host, opts: c.opts, clean: c.clean, f: c.f})
		}
	}
	card := func(edit func(m map[string]any)) *fault {
		return &fault{card: func(_ string, m map[string]any) map[string]any { edit(m); return m }}
	}
	// A server that does not enforce the required extension: the fault
	// activates it for every message.
	activate := &fault{req: withMethod("SendMessage", func(_ http.ResponseWriter, r *http.Request, _ []byte, _ rpcReq) ([]byte, bool) {
		r.Header.Set("A2A-Extensions", signedExtension)
		return nil, false
	})}
	return append(out,
		faultCase{id: "rpc10.extension-required", agent: "/a2a/signed", f: activate},
		faultCase{id: "rest10.extension-required", agent: "/a2a/signed", f: activate},
		faultCase{id: "card10.supported-interfaces", f: cardInterfaces(func(_ int, it map[string]any) { delete(it, "protocolBinding") })},
		faultCase{id: "card10.urls", f: cardInterfaces(func(_ int, it map[string]any) {
			u, _ := url.Parse(it["url"].(string))
			it["url"] = u.Path
		})},
		faultCase{id: "card10.protocol-version", f: cardInterfaces(func(_ int, it map[string]any) {
			if it["protocolVersion"] == "1.0" {
				it["protocolVersion"] = "1.0.1"
			}
		})},
		faultCase{id: "card10.required-fields", f: card(func(m map[string]any) { m["skills"].([]any)[0].(map[string]any)["tags"] = []any{} })},
		faultCase{id: "card10.schema", f: card(func(m map[string]any) { m["capabilities"].(map[string]any)["streaming"] = "yes" })},
	)
}
