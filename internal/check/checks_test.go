package check

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// faultCase is one check run twice: against the right server (want clean,
// default Pass) and behind a fault that breaks the requirement (want Fail).
type faultCase struct {
	id    string
	agent string // default "/a2a/slow"
	host  hostOpts
	opts  Options
	clean Status
	f     *fault
	// brokenHost, if set, is the server of the broken run (faults inside
	// the server, such as push deliveries).
	brokenHost *hostOpts
	// handler, if set, is the server of both runs instead of a2abridge's
	// (agent "" then: the checks run at its root).
	handler func(t *testing.T) http.Handler
}

func withMethod(method string, f func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool)) func(http.ResponseWriter, *http.Request, []byte, rpcReq) ([]byte, bool) {
	return func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
		if m.Method != method {
			return nil, false
		}
		return f(w, r, body, m)
	}
}

func respFor(method string, f func(m rpcReq, status *int, h http.Header, body []byte) []byte) func(rpcReq, *int, http.Header, []byte) []byte {
	return func(m rpcReq, status *int, h http.Header, body []byte) []byte {
		if m.Method != method {
			return body
		}
		return f(m, status, h, body)
	}
}

func answerErr(code string) func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
	return func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
		answer(w, m, "error", `{"code":`+code+`,"message":"fault"}`)
		return nil, true
	}
}

func msgTaskID(m rpcReq) string {
	msg, _ := m.Params["message"].(map[string]any)
	s, _ := msg["taskId"].(string)
	return s
}

// restartTerminal answers a message to an existing task as if the task
// went on working.
func restartTerminal(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
	if m.Method != "message/send" || msgTaskID(m) == "" {
		return nil, false
	}
	answer(w, m, "result", `{"kind":"task","id":"`+msgTaskID(m)+`","contextId":"c","status":{"state":"working"}}`)
	return nil, true
}

func onlyWithParts(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
	msg, _ := m.Params["message"].(map[string]any)
	if parts, _ := msg["parts"].([]any); m.Method == "message/send" && len(parts) > 1 {
		answer(w, m, "error", `{"code":-32602,"message":"one part only"}`)
		return nil, true
	}
	return nil, false
}

func setTimestamps(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if k == "timestamp" {
				x[k] = "yesterday at noon"
				continue
			}
			setTimestamps(c)
		}
	case []any:
		for _, c := range x {
			setTimestamps(c)
		}
	}
}

func faultCases() []faultCase {
	slow := Options{Text: "0", LongText: "1"}
	card := func(edit func(m map[string]any)) *fault {
		return &fault{card: func(_ string, m map[string]any) map[string]any { edit(m); return m }}
	}
	return append([]faultCase{
		// card
		{id: "card.fetch", f: &fault{card: func(string, map[string]any) map[string]any { return nil }}},
		{id: "card.well-known", f: &fault{card: func(path string, m map[string]any) map[string]any {
			if strings.HasSuffix(path, "agent-card.json") {
				return nil
			}
			return m
		}}},
		{id: "card.content-type", f: &fault{cardHeader: func(h http.Header) { h.Set("Content-Type", "text/plain") }}},
		{id: "card.schema", f: card(func(m map[string]any) { m["capabilities"] = "all of them" })},
		{id: "card.required-fields", f: card(func(m map[string]any) { delete(m, "description") })},
		{id: "card.protocol-version", f: card(func(m map[string]any) { m["protocolVersion"] = "0.2.5" })},
		{id: "card.preferred-transport", f: card(func(m map[string]any) { delete(m, "preferredTransport") })},
		{id: "card.url", f: card(func(m map[string]any) { m["url"] = "http://127.0.0.1:1/a2a/slow" })},
		{id: "card.interfaces", f: card(func(m map[string]any) {
			m["additionalInterfaces"] = []any{map[string]any{"url": m["url"], "transport": "GRPC"}}
		})},
		{id: "card.interfaces-complete", f: card(func(m map[string]any) {
			m["additionalInterfaces"] = []any{map[string]any{"url": "http://127.0.0.1:1/grpc", "transport": "GRPC"}}
		})},
		{id: "card.cap-streaming", clean: NotApplicable, f: card(func(m map[string]any) {
			m["capabilities"].(map[string]any)["streaming"] = false
		})},
		{id: "card.cap-push", f: &fault{req: withMethod("tasks/pushNotificationConfig/set", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			answer(w, m, "result", `{"taskId":"t","pushNotificationConfig":{"url":"https://a2a-check.invalid/webhook"}}`)
			return nil, true
		})}},
		{id: "card.cap-extended-card", f: &fault{req: withMethod("agent/getAuthenticatedExtendedCard", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			answer(w, m, "result", `{"name":"secret"}`)
			return nil, true
		})}},

		// rpc
		{id: "rpc.content-type", f: &fault{resp: func(_ rpcReq, _ *int, h http.Header, b []byte) []byte {
			h.Set("Content-Type", "text/plain; charset=utf-8")
			return b
		}}},
		{id: "rpc.parse-error", f: &fault{req: func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			if !m.Invalid {
				return nil, false
			}
			m.ID = []byte("1")
			answer(w, m, "error", `{"code":-32700,"message":"parse error"}`)
			return nil, true
		}}},
		{id: "rpc.invalid-request", f: &fault{req: func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			return bytes.Replace(body, []byte(`"jsonrpc":"1.0"`), []byte(`"jsonrpc":"2.0"`), 1), false
		}}},
		{id: "rpc.missing-method", f: &fault{req: func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			if m.Invalid || m.Batch || m.Method != "" {
				return nil, false
			}
			answer(w, m, "error", `{"code":-32601,"message":"Method not found"}`)
			return nil, true
		}}},
		{id: "rpc.method-not-found", f: &fault{resp: func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte { return recode(b, -32601, -32603) }}},
		{id: "rpc.invalid-params", f: &fault{resp: respFor("message/send", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte { return recode(b, -32602, -32603) })}},
		{id: "rpc.id-string", f: &fault{resp: func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editJSON(b, func(m map[string]any) {
				if _, ok := m["id"].(string); ok {
					m["id"] = "another-id"
				}
			})
		}}},
		{id: "rpc.id-number", f: &fault{resp: func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editJSON(b, func(m map[string]any) {
				if n, ok := m["id"].(float64); ok {
					m["id"] = strconv.FormatInt(int64(n), 10)
				}
			})
		}}},
		{id: "rpc.no-id", f: &fault{resp: func(m rpcReq, _ *int, _ http.Header, b []byte) []byte {
			if m.ID != nil {
				return b
			}
			return editJSON(b, func(m map[string]any) { m["id"] = 7 })
		}}},
		{id: "rpc.batch", f: &fault{req: func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			if !m.Batch {
				return nil, false
			}
			answer(w, m, "error", `{"code":-32600,"message":"no batches"}`)
			return nil, true
		}}},
		{id: "rpc.http-status", f: &fault{resp: func(_ rpcReq, status *int, _ http.Header, b []byte) []byte {
			if bytes.Contains(b, []byte(`"error"`)) {
				*status = http.StatusInternalServerError
			}
			return b
		}}},
		{id: "rpc.response-shape", f: &fault{resp: func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editJSON(b, func(m map[string]any) { delete(m, "jsonrpc") })
		}}},

		// message
		{id: "message.send", f: &fault{resp: respFor("message/send", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editResult(b, func(r map[string]any) { r["kind"] = "weird" })
		})}},
		{id: "message.blocking", opts: slow, f: &fault{req: withMethod("message/send", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			return editParams(body, func(p map[string]any) {
				if c, ok := p["configuration"].(map[string]any); ok {
					c["blocking"] = false
				}
			}), false
		})}},
		{id: "message.non-blocking", opts: Options{Text: "0", LongText: "0"}, f: &fault{req: withMethod("message/send", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			time.Sleep(1100 * time.Millisecond)
			return editParams(body, func(p map[string]any) {
				if c, ok := p["configuration"].(map[string]any); ok {
					c["blocking"] = true
				}
			}), false
		})}},
		{id: "message.history-length", opts: slow, f: &fault{req: withMethod("message/send", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			return editParams(body, func(p map[string]any) {
				if c, ok := p["configuration"].(map[string]any); ok {
					delete(c, "historyLength")
				}
			}), false
		})}},
		{id: "message.continue", agent: "/a2a/chat", f: &fault{req: func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			if m.Method != "message/send" || msgTaskID(m) == "" {
				return nil, false
			}
			return answerErr("-32004")(w, r, body, m)
		}}},
		{id: "message.terminal-task", opts: slow, f: &fault{req: restartTerminal}},
		{id: "message.unknown-task", opts: slow, f: &fault{resp: respFor("message/send", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte { return recode(b, -32001, -32602) })}},
		{id: "message.context-mismatch", agent: "/a2a/chat", f: &fault{req: func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			if m.Method != "message/send" || msgTaskID(m) == "" {
				return nil, false
			}
			return editParams(body, func(p map[string]any) { delete(p["message"].(map[string]any), "contextId") }), false
		}}},

		// parts
		{id: "parts.text", opts: slow, f: &fault{req: onlyWithParts}},
		{id: "parts.data", opts: slow, f: &fault{req: onlyWithParts}},
		{id: "parts.file-bytes", opts: slow, f: &fault{req: onlyWithParts}},
		{id: "parts.file-uri", opts: slow, f: &fault{req: onlyWithParts}},
		{id: "parts.file-both", opts: slow, f: &fault{req: withMethod("message/send", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			return editParams(body, func(p map[string]any) {
				for _, pt := range p["message"].(map[string]any)["parts"].([]any) {
					if f, ok := pt.(map[string]any)["file"].(map[string]any); ok && f["bytes"] != nil {
						delete(f, "uri")
					}
				}
			}), false
		})}},

		// tasks
		{id: "tasks.get", opts: slow, f: &fault{resp: respFor("tasks/get", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editResult(b, func(r map[string]any) { r["status"].(map[string]any)["state"] = "working" })
		})}},
		{id: "tasks.get-unknown", f: &fault{resp: respFor("tasks/get", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte { return recode(b, -32001, -32603) })}},
		{id: "tasks.history-length", opts: slow, f: &fault{req: withMethod("tasks/get", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			return editParams(body, func(p map[string]any) { delete(p, "historyLength") }), false
		})}},
		{id: "tasks.cancel-running", opts: slow, f: &fault{req: withMethod("tasks/cancel", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			return answerErr("-32603")(w, r, body, m)
		})}},
		{id: "tasks.cancel-state", opts: slow, f: &fault{resp: respFor("tasks/get", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editResult(b, func(r map[string]any) {
				if st := r["status"].(map[string]any); st["state"] == "canceled" {
					st["state"] = "working"
				}
			})
		})}},
		{id: "tasks.cancel-unknown", f: &fault{resp: respFor("tasks/cancel", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte { return recode(b, -32001, -32603) })}},
		{id: "tasks.cancel-terminal", opts: slow, f: &fault{resp: respFor("tasks/cancel", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte { return recode(b, -32002, -32603) })}},

		// stream
		{id: "stream.headers", opts: slow, f: &fault{sseHeader: func(h http.Header) { h.Set("Content-Type", "text/plain") }}},
		{id: "stream.frames", opts: slow, f: &fault{sse: func(_ rpcReq, _ int, d []byte) []byte {
			return editJSON(d, func(m map[string]any) { m["id"] = "not-the-request-id" })
		}}},
		{id: "stream.first-event", opts: slow, f: &fault{sse: func(_ rpcReq, i int, d []byte) []byte {
			if i == 0 {
				return nil
			}
			return d
		}}},
		{id: "stream.task-ids", opts: slow, f: &fault{sse: func(_ rpcReq, _ int, d []byte) []byte {
			return editResult(d, func(r map[string]any) {
				if r["kind"] == "artifact-update" {
					r["taskId"] = "another-task"
				}
			})
		}}},
		{id: "stream.final-last", opts: slow, f: &fault{sse: func(_ rpcReq, _ int, d []byte) []byte {
			return editResult(d, func(r map[string]any) {
				if r["final"] == true {
					r["final"] = false
				}
			})
		}}},
		{id: "stream.closed", opts: slow, f: &fault{streamTail: 2600 * time.Millisecond}},
		{id: "stream.resubscribe-running", opts: slow, f: &fault{req: withMethod("tasks/resubscribe", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			return answerErr("-32001")(w, r, body, m)
		})}},
		{id: "stream.resubscribe-finished", opts: slow, f: &fault{req: withMethod("tasks/resubscribe", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			return answerErr("-32001")(w, r, body, m)
		})}},
		{id: "stream.resume", opts: slow, f: &fault{req: withMethod("tasks/resubscribe", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			r.Header.Del("Last-Event-ID")
			return nil, false
		})}},

		// state
		{id: "state.terminal-immutable", opts: slow, f: &fault{req: restartTerminal}},
		{id: "state.timestamps", opts: slow, f: &fault{resp: func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editJSON(b, func(m map[string]any) { setTimestamps(m) })
		}}},

		// push
		{id: "push.set", opts: slow, host: hostOpts{push: true}, f: &fault{req: withMethod("tasks/pushNotificationConfig/set", func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			return answerErr("-32603")(w, r, body, m)
		})}},
		{id: "push.get", opts: slow, host: hostOpts{push: true}, f: &fault{resp: respFor("tasks/pushNotificationConfig/get", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editResult(b, func(r map[string]any) {
				r["pushNotificationConfig"].(map[string]any)["url"] = "http://elsewhere.invalid/"
			})
		})}},
		{id: "push.list", opts: slow, host: hostOpts{push: true}, f: &fault{resp: respFor("tasks/pushNotificationConfig/list", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editJSON(b, func(m map[string]any) { m["result"] = []any{} })
		})}},
		{id: "push.delete", opts: slow, host: hostOpts{push: true}, f: &fault{resp: respFor("tasks/pushNotificationConfig/delete", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editJSON(b, func(m map[string]any) { delete(m, "result") })
		})}},
		{id: "push.delivery", opts: slow, host: hostOpts{push: true}, brokenHost: &hostOpts{push: true, pushHook: func(*http.Request) bool { return false }}},
		{id: "push.token", opts: slow, host: hostOpts{push: true}, brokenHost: &hostOpts{push: true, pushHook: func(r *http.Request) bool {
			r.Header.Del("X-A2A-Notification-Token")
			return true
		}}},

		// auth
		{id: "auth.unauthenticated", agent: "/a2a/echo", host: hostOpts{auth: true}, opts: Options{Token: testToken}, f: &fault{req: func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			if r.Header.Get("Authorization") == "" {
				r.Header.Set("Authorization", "Bearer "+testToken)
			}
			return nil, false
		}}},
		{id: "auth.challenge", agent: "/a2a/echo", host: hostOpts{auth: true}, opts: Options{Token: testToken}, f: &fault{resp: func(_ rpcReq, status *int, h http.Header, b []byte) []byte {
			h.Del("Www-Authenticate")
			return b
		}}},
		{id: "auth.extended-card", agent: "/a2a/echo", host: hostOpts{auth: true}, opts: Options{Token: testToken}, f: &fault{resp: respFor("agent/getAuthenticatedExtendedCard", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editResult(b, func(r map[string]any) { delete(r, "skills") })
		})}},
		{id: "auth.extended-card-unauth", agent: "/a2a/echo", host: hostOpts{auth: true}, opts: Options{Token: testToken}, f: &fault{req: func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) ([]byte, bool) {
			if r.Header.Get("Authorization") == "" {
				r.Header.Set("Authorization", "Bearer "+testToken)
			}
			return nil, false
		}}},

		// schema
		{id: "schema.responses", opts: slow, f: &fault{resp: respFor("message/send", func(_ rpcReq, _ *int, _ http.Header, b []byte) []byte {
			return editResult(b, func(r map[string]any) {
				if st, ok := r["status"].(map[string]any); ok {
					st["state"] = "done"
				}
			})
		})}},
	}, append(faultCases10(), faultCases03REST()...)...)
}

// TestEveryCheckCanFail runs each check against the right server and
// behind a fault that breaks its requirement.
func TestEveryCheckCanFail(t *testing.T) {
	t.Parallel()
	cases := faultCases()
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.id] = true
	}
	for _, c := range All() {
		// A grpc10 check runs the code of its rpc10 twin over the gRPC
		// adapter, whose faults TestGRPCSuite shows reaching the checks.
		if twin, ok := strings.CutPrefix(c.ID, "grpc10."); ok && covered["rpc10."+twin] {
			continue
		}
		if !covered[c.ID] {
			t.Errorf("check %s has no fault case", c.ID)
		}
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			t.Parallel()
			agent := tc.agent
			if agent == "" && tc.handler == nil {
				agent = "/a2a/slow"
			}
			want := tc.clean
			if want == "" {
				want = Pass
			}
			server := func(o hostOpts) http.Handler {
				if tc.handler != nil {
					return tc.handler(t)
				}
				return newHost(t, o)
			}
			clean := runOne(t, serve(t, server(tc.host))+agent, tc.id, tc.opts)
			if clean.Status != want {
				t.Errorf("right server: %s %s: %s\n%s", tc.id, clean.Status, clean.Message, evidenceText(clean))
			}
			bh := tc.host
			if tc.brokenHost != nil {
				bh = *tc.brokenHost
			}
			broken := runOne(t, serve(t, faulty(server(bh), tc.f))+agent, tc.id, tc.opts)
			if broken.Status != Fail {
				t.Errorf("behind the fault: %s %s (want fail): %s\n%s", tc.id, broken.Status, broken.Message, evidenceText(broken))
			} else if len(broken.Evidence) == 0 {
				t.Errorf("%s failed without evidence", tc.id)
			}
		})
	}
}

func evidenceText(cr CheckResult) string {
	var b strings.Builder
	for _, ev := range cr.Evidence {
		writeEvidenceText(&b, ev)
	}
	return b.String()
}

// TestAgainstA2Abridge runs every check against the in-process a2abridge
// server: no MUST fails, whichever agent is checked.
func TestAgainstA2Abridge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		host  hostOpts
		agent string
		opts  Options
		pass  []string // must pass (not just not fail)
		skip  map[string]string
		fail  map[string]string // known failures, with a fragment of their message
	}{
		{name: "echo", agent: "", pass: []string{"card.fetch", "card.well-known", "message.send", "stream.resume", "card.cap-push",
			"card10.schema", "rpc10.push-unsupported", "rest10.push-unsupported", "rpc10.list-artifacts", "rest10.list-artifacts", "rest10.routes",
			"rpc10.push-unsupported-first", "rest10.push-unsupported-first", "rpc10.extended-card-unsupported", "rest10.extended-card-unsupported"}},
		// Every check activates the extension the card requires; the
		// extension check sends one message without it.
		{name: "required-extension", agent: "/a2a/signed", pass: []string{"rpc10.extension-required", "rest10.extension-required",
			"message.send", "rpc10.send", "rest10.send", "rest03.send", "stream.resume", "rpc10.stream", "rest10.stream"}},
		{name: "chat", agent: "/a2a/chat", pass: []string{"message.continue", "message.context-mismatch", "tasks.cancel-terminal", "stream.resubscribe-finished",
			"rpc10.subscribe-interrupted", "rest10.subscribe-interrupted"}},
		{name: "slow+push", agent: "/a2a/slow", host: hostOpts{push: true}, opts: Options{Text: "0", LongText: "1"},
			pass: []string{"tasks.cancel-running", "tasks.cancel-state", "stream.resubscribe-running", "push.set", "push.get", "push.list", "push.delete", "push.delivery", "push.token",
				"rpc10.cancel", "rest10.cancel", "rpc10.subscribe", "rest10.subscribe", "rpc10.push", "rest10.push", "rpc10.list-paging", "rest10.list-paging",
				"rpc10.push-delete-idempotent", "rest10.push-delete-idempotent",
				"rest03.send", "rest03.get", "rest03.stream", "rest03.content-type"}},
		// The server refuses the loopback webhook, and the fallback name
		// too, since it does not resolve.
		{name: "slow+push-refused", agent: "/a2a/slow", host: hostOpts{pushDeny: true}, opts: Options{Text: "0", LongText: "1"},
			skip: map[string]string{"push.set": "a2a-check.invalid/webhook too", "push.get": "set failed", "push.list": "set failed", "push.delete": "set failed",
				"push.delivery": "refused the loopback webhook", "push.token": "refused the loopback webhook",
				"rpc10.push": "a2a-check.invalid/webhook too", "rest10.push": "a2a-check.invalid/webhook too"}},
		// The served card writes security requirement scopes as bare
		// arrays, for a2a-go v2 up to v2.4.0 (server/host.go cardOptions):
		// not ProtoJSON, which card10.schema reports.
		{name: "auth", agent: "/a2a/echo", host: hostOpts{auth: true}, opts: Options{Token: testToken},
			pass: []string{"auth.unauthenticated", "auth.challenge", "auth.extended-card", "auth.extended-card-unauth", "rpc10.extended-card", "rest10.extended-card"},
			fail: map[string]string{"card10.schema": "at '/securityRequirements/0/schemes/bearer': got array, want object"}},
		{name: "auth-without-credentials", agent: "/a2a/echo", host: hostOpts{auth: true},
			pass: []string{"card.fetch", "card.url", "auth.unauthenticated", "auth.challenge", "auth.extended-card-unauth"},
			skip: map[string]string{"rpc.content-type": "without credentials", "message.send": "HTTP 401", "auth.extended-card": "no credentials given",
				"rpc10.send": "answers HTTP 401 without credentials", "rest10.list": "answers HTTP 401 without credentials",
				"rest03.send": "answers HTTP 401 without credentials"},
			fail: map[string]string{"card10.schema": "at '/securityRequirements/0/schemes/bearer': got array, want object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := tt.opts
			o.URL = serve(t, newHost(t, tt.host)) + tt.agent
			o.Timeout = 5 * time.Second
			start := time.Now()
			rep, err := Run(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: score %.1f, %+v in %s", tt.name, rep.Score, rep.Counts, time.Since(start).Round(time.Millisecond))
			for _, r := range rep.Results {
				if r.Status == Fail && (tt.fail[r.ID] == "" || !strings.Contains(r.Message, tt.fail[r.ID])) {
					t.Errorf("%s (%s) failed: %s\n%s", r.ID, r.Level, r.Message, evidenceText(r))
				}
			}
			for id, why := range tt.fail {
				if r := rep.Result(id); r == nil || r.Status != Fail || !strings.Contains(r.Message, why) {
					t.Errorf("%s: want fail with %q, got %+v", id, why, r)
				}
			}
			for _, id := range tt.pass {
				if r := rep.Result(id); r == nil || r.Status != Pass {
					t.Errorf("%s: want pass, got %+v", id, r)
				}
			}
			for id, why := range tt.skip {
				if r := rep.Result(id); r == nil || r.Status != Skip || !strings.Contains(r.Message, why) {
					t.Errorf("%s: want skip with %q, got %+v", id, why, r)
				}
			}
			if rep.MustFailures() != len(tt.fail) {
				t.Errorf("MUST failures: %d, want %d", rep.MustFailures(), len(tt.fail))
			}
		})
	}
}

// TestCleanup: tasks the run started and left running are canceled.
func TestCleanup(t *testing.T) {
	t.Parallel()
	base := serve(t, newHost(t, hostOpts{})) + "/a2a/slow"
	p := newProbe(Options{URL: base, Text: "30", LongText: "30", Timeout: 3 * time.Second})
	p.discover(t.Context())
	tk, res := p.runningTask(t.Context())
	if res != nil {
		t.Fatalf("no running task: %s", res.Message)
	}
	p.cleanup(t.Context())
	g, ok := asTask(p.getTask(t.Context(), tk.ID, nil))
	if !ok || g.State != "canceled" {
		t.Fatalf("after cleanup the task is %+v", g)
	}
}

// TestUnreachable: nothing answers; the run ends quickly with card.fetch
// failed and the rest skipped.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	start := time.Now()
	rep, err := Run(t.Context(), Options{URL: "http://127.0.0.1:1", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	if r := rep.Result("card.fetch"); r.Status != Fail {
		t.Errorf("card.fetch: %+v", r)
	}
	for _, r := range rep.Results {
		if r.ID != "card.fetch" && r.Status != Skip {
			t.Errorf("%s: %s %s", r.ID, r.Status, r.Message)
		}
	}
	if rep.MustFailures() != 1 {
		t.Errorf("MUST failures = %d", rep.MustFailures())
	}
}

func TestSelect(t *testing.T) {
	cs, err := Select([]string{"rpc"}, nil)
	if err != nil || len(cs) == 0 || slices.ContainsFunc(cs, func(c *Check) bool { return c.Category != "rpc" }) {
		t.Fatalf("Select(rpc) = %v, %v", cs, err)
	}
	cs, err = Select(nil, []string{"rpc.id-*", "card.fetch"})
	if err != nil || len(cs) != 3 {
		t.Fatalf("Select(ids) = %d checks, %v", len(cs), err)
	}
	if _, err := Select([]string{"nope"}, nil); err == nil {
		t.Error("unknown category: no error")
	}
	if _, err := Select(nil, []string{"rpc.nope"}); err == nil {
		t.Error("unknown id: no error")
	}
	for _, c := range All() {
		if c.Section == "" || c.Title == "" || c.Requirement == "" || c.Recommendation == "" || c.Run == nil {
			t.Errorf("check %s is incomplete", c.ID)
		}
		if !slices.Contains([]Level{Must, Should, May}, c.Level) {
			t.Errorf("check %s has level %q", c.ID, c.Level)
		}
	}
}

// TestInterrupted: a canceled context skips everything, quickly.
func TestInterrupted(t *testing.T) {
	t.Parallel()
	base := serve(t, newHost(t, hostOpts{})) + "/a2a/slow"
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rep, err := Run(ctx, Options{URL: base, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Status != Skip {
			t.Errorf("%s: %s %s", r.ID, r.Status, r.Message)
		}
	}
}

// TestCredentialsStayOnTheCheckedHost: a card whose interfaces point at
// another host gets the checker's token, API key and headers only there
// when that host is listed in CredentialHosts.
func TestCredentialsStayOnTheCheckedHost(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]int{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for _, h := range []string{"Authorization", "X-Api-Key", "X-Extra"} {
			if r.Header.Get(h) != "" {
				seen[h]++
			}
		}
		seen["requests"]++
		mu.Unlock()
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	card := fmt.Sprintf(`{"name":"elsewhere","description":"d","version":"1","url":%[1]q,"protocolVersion":"0.3.0",
		"supportedInterfaces":[{"url":%[1]q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`, other.URL+"/rpc")
	cardHost := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, card)
	}))
	t.Cleanup(cardHost.Close)
	run := func(extra []string) map[string]int {
		mu.Lock()
		clear(seen)
		mu.Unlock()
		_, err := Run(t.Context(), Options{URL: cardHost.URL, Token: "tok", APIKey: "key",
			Header: http.Header{"X-Extra": {"1"}}, CredentialHosts: extra, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
	got := run(nil)
	if got["requests"] == 0 {
		t.Fatal("the checker never called the card's interface")
	}
	if got["Authorization"]+got["X-Api-Key"]+got["X-Extra"] != 0 {
		t.Errorf("credentials sent to a host the card named: %v", got)
	}
	if got := run([]string{strings.TrimPrefix(other.URL, "http://")}); got["Authorization"] == 0 || got["X-Extra"] == 0 {
		t.Errorf("credentials not sent to a listed host: %v", got)
	}
}
