package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// capServer serves the handlers that add makes on an engine with options
// eo; it returns the server's base URL.
func capServer(t *testing.T, eo server.EngineOptions, add func(e *server.Engine) []*server.AgentHandler) string {
	t.Helper()
	eo.Logger = testutil.Logger()
	eng, err := server.NewEngine(context.Background(), memory.New(), eo)
	if err != nil {
		t.Fatal(err)
	}
	host := servertest.Host("")
	for _, h := range add(eng) {
		host.Add(h)
	}
	ts := testutil.Serve(t, host, eng.Close)
	return ts.URL
}

// pushOn is a push configuration that accepts any webhook.
func pushOn() *server.PushOptions {
	return &server.PushOptions{CheckURL: func(context.Context, string) error { return nil }}
}

// completedTask sends a 0.3 message/send to the echo agent at url and
// returns its task id.
func completedTask(t *testing.T, url string) string {
	t.Helper()
	r := testutil.CallRPC(t, url, "message/send", `{"message":{"kind":"message","role":"user","messageId":"`+a2a.NewID()+`","parts":[{"kind":"text","text":"x"}]}}`)
	if r.Error != nil || r.Result.Status.State != "completed" {
		t.Fatalf("message/send: %+v", r)
	}
	return r.Result.ID
}

// errorAnswer is what a request answered: the JSON-RPC error code, or the
// HTTP status with the google.rpc.ErrorInfo reason (HTTP+JSON).
type errorAnswer struct {
	status int
	code   int
	reason string
	body   string
}

func (e errorAnswer) String() string {
	return fmt.Sprintf("HTTP %d, code %d, reason %q: %s", e.status, e.code, e.reason, e.body)
}

// jsonrpcAnswer posts a JSON-RPC request (with A2A-Version: 1.0 when v10).
func jsonrpcAnswer(t *testing.T, url, method, params string, v10 bool, hdr ...string) errorAnswer {
	t.Helper()
	if v10 {
		hdr = append(hdr, "A2A-Version", "1.0")
	}
	resp, b := testutil.Post(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params), hdr...)
	var r struct {
		Result any `json:"result"`
		Error  *struct {
			Code int              `json:"code"`
			Data []map[string]any `json:"data"`
		} `json:"error"`
	}
	a := errorAnswer{status: resp.StatusCode, body: string(b)}
	if json.Unmarshal(b, &r) == nil && r.Error != nil {
		a.code = r.Error.Code
		if v10 {
			a.reason = reasonOf(r.Error.Data)
		}
	}
	return a
}

// restAnswer sends an HTTP+JSON request (1.0, or 0.3 for /v1/ paths).
func restAnswer(t *testing.T, method, url, body string, hdr ...string) errorAnswer {
	t.Helper()
	req := testutil.NewRequest(t, context.Background(), method, url, body)
	if !strings.Contains(url, "/v1/") {
		req.Header.Set("A2A-Version", "1.0")
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	testutil.SetHeaders(req.Header, hdr...)
	resp, b := testutil.Do(t, req)
	a := errorAnswer{status: resp.StatusCode, body: string(b)}
	var s struct {
		Error *struct {
			Details []map[string]any `json:"details"`
		} `json:"error"`
		Code int `json:"code"` // the 0.3 binding's JSON-RPC code
	}
	if json.Unmarshal([]byte(a.body), &s) == nil {
		if s.Error != nil {
			a.reason = reasonOf(s.Error.Details)
		}
		a.code = s.Code
	}
	return a
}

// TestDeletePushConfigIdempotent: deleting a push notification config the
// task does not have (never had, or already deleted) succeeds (A2A 1.0
// §3.1.10: deletion is idempotent), over 1.0 JSON-RPC, 1.0 HTTP+JSON and
// 0.3 (JSON-RPC and HTTP+JSON); an unknown task is still TaskNotFoundError.
func TestDeletePushConfigIdempotent(t *testing.T) {
	t.Parallel()
	base := capServer(t, server.EngineOptions{Push: pushOn()}, func(e *server.Engine) []*server.AgentHandler {
		return []*server.AgentHandler{server.NewHandler(e, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{})}
	})
	url := base + "/a2a/echo"
	id := completedTask(t, url)
	// A config that existed: deleted once, then again.
	if r := testutil.CallRPC(t, url, "tasks/pushNotificationConfig/set", fmt.Sprintf(`{"taskId":%q,"pushNotificationConfig":{"id":"c1","url":"https://example.com/hook"}}`, id)); r.Error != nil {
		t.Fatalf("set: %+v", r.Error)
	}
	deletes := []struct {
		name string
		do   func(cfg string) errorAnswer
	}{
		{"1.0 JSON-RPC", func(cfg string) errorAnswer {
			return jsonrpcAnswer(t, url, "DeleteTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"id":%q}`, id, cfg), true)
		}},
		{"1.0 HTTP+JSON", func(cfg string) errorAnswer {
			return restAnswer(t, http.MethodDelete, url+"/tasks/"+id+"/pushNotificationConfigs/"+cfg, "")
		}},
		{"0.3 JSON-RPC", func(cfg string) errorAnswer {
			return jsonrpcAnswer(t, url, "tasks/pushNotificationConfig/delete", fmt.Sprintf(`{"id":%q,"pushNotificationConfigId":%q}`, id, cfg), false)
		}},
		{"0.3 HTTP+JSON", func(cfg string) errorAnswer {
			return restAnswer(t, http.MethodDelete, url+"/v1/tasks/"+id+"/pushNotificationConfigs/"+cfg, "")
		}},
	}
	for _, d := range deletes {
		for _, cfg := range []string{"c1", "never-there"} {
			if a := d.do(cfg); a.status != http.StatusOK || a.code != 0 || a.reason != "" {
				t.Errorf("%s: delete of config %q: %s", d.name, cfg, a)
			}
		}
	}
	if a := jsonrpcAnswer(t, url, "tasks/pushNotificationConfig/list", fmt.Sprintf(`{"id":%q}`, id), false); !strings.Contains(a.body, `"result":[]`) {
		t.Fatalf("list after the deletes: %s", a)
	}
	// An unknown task is not found, whatever the config.
	id = "no-such-task"
	for _, d := range deletes {
		want := errorAnswer{status: http.StatusOK, code: a2a.CodeTaskNotFound}
		switch d.name {
		case "1.0 JSON-RPC":
			want.reason = "TASK_NOT_FOUND"
		case "1.0 HTTP+JSON":
			want = errorAnswer{status: http.StatusNotFound, reason: "TASK_NOT_FOUND"}
		case "0.3 HTTP+JSON":
			want.status, want.reason = http.StatusNotFound, "TASK_NOT_FOUND"
		}
		if a := d.do("c1"); a.status != want.status || a.code != want.code || a.reason != want.reason {
			t.Errorf("%s: delete on an unknown task: %s", d.name, a)
		}
	}
}

// TestPushCapabilityFirst: on an agent without push notifications (the
// engine delivers none, or HandlerOptions.NoPush), every push config
// method answers PushNotificationNotSupportedError (-32003; HTTP 400 with
// reason PUSH_NOTIFICATION_NOT_SUPPORTED) whatever the task id, before
// any lookup (A2A 1.0 §3.3.4), over 1.0 JSON-RPC, 1.0 HTTP+JSON and 0.3.
func TestPushCapabilityFirst(t *testing.T) {
	t.Parallel()
	noPush := capServer(t, server.EngineOptions{}, func(e *server.Engine) []*server.AgentHandler {
		return []*server.AgentHandler{server.NewHandler(e, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{})}
	})
	off := capServer(t, server.EngineOptions{Push: pushOn()}, func(e *server.Engine) []*server.AgentHandler {
		return []*server.AgentHandler{server.NewHandler(e, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{NoPush: true})}
	})
	for name, base := range map[string]string{"engine without push": noPush, "NoPush": off} {
		url := base + "/a2a/echo"
		known := completedTask(t, url)
		for _, id := range []string{known, "no-such-task"} {
			hook := `{"url":"https://example.com/hook"}`
			calls := map[string]errorAnswer{
				"1.0 Create": jsonrpcAnswer(t, url, "CreateTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"url":"https://example.com/hook"}`, id), true),
				"1.0 Get":    jsonrpcAnswer(t, url, "GetTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"id":"c"}`, id), true),
				"1.0 List":   jsonrpcAnswer(t, url, "ListTaskPushNotificationConfigs", fmt.Sprintf(`{"taskId":%q}`, id), true),
				"1.0 Delete": jsonrpcAnswer(t, url, "DeleteTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"id":"c"}`, id), true),
				"1.0 SendMessage with a config": jsonrpcAnswer(t, url, "SendMessage",
					fmt.Sprintf(`{"message":{"role":"ROLE_USER","messageId":%q,"taskId":%q,"parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":%s}}`, a2a.NewID(), id, hook), true),
				"POST /pushNotificationConfigs":     restAnswer(t, http.MethodPost, url+"/tasks/"+id+"/pushNotificationConfigs", hook),
				"GET /pushNotificationConfigs/c":    restAnswer(t, http.MethodGet, url+"/tasks/"+id+"/pushNotificationConfigs/c", ""),
				"GET /pushNotificationConfigs":      restAnswer(t, http.MethodGet, url+"/tasks/"+id+"/pushNotificationConfigs", ""),
				"DELETE /pushNotificationConfigs/c": restAnswer(t, http.MethodDelete, url+"/tasks/"+id+"/pushNotificationConfigs/c", ""),
				"0.3 set":                           jsonrpcAnswer(t, url, "tasks/pushNotificationConfig/set", fmt.Sprintf(`{"taskId":%q,"pushNotificationConfig":%s}`, id, hook), false),
				"0.3 get":                           jsonrpcAnswer(t, url, "tasks/pushNotificationConfig/get", fmt.Sprintf(`{"id":%q}`, id), false),
				"0.3 list":                          jsonrpcAnswer(t, url, "tasks/pushNotificationConfig/list", fmt.Sprintf(`{"id":%q}`, id), false),
				"0.3 delete":                        jsonrpcAnswer(t, url, "tasks/pushNotificationConfig/delete", fmt.Sprintf(`{"id":%q,"pushNotificationConfigId":"c"}`, id), false),
				"0.3 DELETE /v1/…/pushNotificationConfigs/c": restAnswer(t, http.MethodDelete, url+"/v1/tasks/"+id+"/pushNotificationConfigs/c", ""),
			}
			for what, a := range calls {
				ok := a.code == a2a.CodePushNotificationNotSupported
				switch {
				case strings.HasPrefix(what, "1.0"):
					ok = ok && a.status == http.StatusOK && a.reason == "PUSH_NOTIFICATION_NOT_SUPPORTED"
				case !strings.HasPrefix(what, "0.3"): // 1.0 HTTP+JSON
					ok = a.status == http.StatusBadRequest && a.reason == "PUSH_NOTIFICATION_NOT_SUPPORTED"
				case strings.Contains(what, "/v1/"):
					ok = ok && a.status == http.StatusBadRequest
				}
				if !ok {
					t.Errorf("%s, task %s: %s: %s", name, id, what, a)
				}
			}
		}
	}
}

// TestExtendedCardCapability: GetExtendedAgentCard (1.0, JSON-RPC and GET
// /extendedAgentCard) on an agent whose card does not declare
// capabilities.extendedAgentCard is UnsupportedOperationError (-32004),
// and ExtendedAgentCardNotConfiguredError (-32007) when the card declares
// it but none is configured (A2A 1.0 §3.3.4); 0.3
// (agent/getAuthenticatedExtendedCard, GET /v1/card) keeps -32007 for
// both. On an agent with authentication, a request without credentials
// is answered 401 first.
func TestExtendedCardCapability(t *testing.T) {
	t.Parallel()
	const token = "cap-test-token"
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"tester": token})
	if err != nil {
		t.Fatal(err)
	}
	base := capServer(t, server.EngineOptions{}, func(e *server.Engine) []*server.AgentHandler {
		declared := agents.Echo{}.Card()
		declared.Name = "declared"
		declared.Capabilities.ExtendedAgentCard = true
		ext := agents.Echo{}.Card()
		ext.Description = "extended"
		return []*server.AgentHandler{
			server.NewHandler(e, "plain", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}),
			server.NewHandler(e, "declared", agents.Echo{}, declared, server.HandlerOptions{}),
			server.NewHandler(e, "secure", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{Auth: auth.Set{bearer}}),
			server.NewHandler(e, "extended", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{Auth: auth.Set{bearer}, ExtendedCard: &ext}),
		}
	})
	authz := []string{"Authorization", "Bearer " + token}
	tests := []struct {
		agent string
		hdr   []string
		code  int    // 1.0 JSON-RPC error code (0: the card)
		v03   int    // 0.3 code (0: the card)
		rest  int    // 1.0 HTTP+JSON status
		why   string // the 1.0 reason
	}{
		{"plain", nil, a2a.CodeUnsupportedOperation, a2a.CodeAuthenticatedExtendedCardNotConfigured, http.StatusBadRequest, "UNSUPPORTED_OPERATION"},
		{"declared", nil, a2a.CodeAuthenticatedExtendedCardNotConfigured, a2a.CodeAuthenticatedExtendedCardNotConfigured, http.StatusBadRequest, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
		{"secure", authz, a2a.CodeUnsupportedOperation, a2a.CodeAuthenticatedExtendedCardNotConfigured, http.StatusBadRequest, "UNSUPPORTED_OPERATION"},
		{"extended", authz, 0, 0, http.StatusOK, ""},
	}
	for _, tt := range tests {
		url := base + "/a2a/" + tt.agent
		if tt.agent == "declared" {
			// The declared capability stays in the card that is served.
			_, b := restGet(t, url+"/.well-known/agent-card.json")
			if !strings.Contains(b, `"extendedAgentCard":true`) {
				t.Errorf("declared: the card does not keep capabilities.extendedAgentCard: %s", b)
			}
		}
		a := jsonrpcAnswer(t, url, "GetExtendedAgentCard", `{}`, true, tt.hdr...)
		if a.code != tt.code || a.reason != tt.why || (tt.code == 0 && !strings.Contains(a.body, `"description":"extended"`)) {
			t.Errorf("%s: 1.0 GetExtendedAgentCard: %s", tt.agent, a)
		}
		r := restAnswer(t, http.MethodGet, url+"/extendedAgentCard", "", tt.hdr...)
		if r.status != tt.rest || r.reason != tt.why {
			t.Errorf("%s: GET /extendedAgentCard: %s", tt.agent, r)
		}
		o := jsonrpcAnswer(t, url, "agent/getAuthenticatedExtendedCard", `{}`, false, tt.hdr...)
		if o.code != tt.v03 {
			t.Errorf("%s: agent/getAuthenticatedExtendedCard: %s", tt.agent, o)
		}
		o = restAnswer(t, http.MethodGet, url+"/v1/card", "", tt.hdr...)
		if o.code != tt.v03 {
			t.Errorf("%s: GET /v1/card: %s", tt.agent, o)
		}
		if tt.hdr != nil {
			// Without credentials: 401 before anything else.
			if a := jsonrpcAnswer(t, url, "GetExtendedAgentCard", `{}`, true); a.status != http.StatusUnauthorized {
				t.Errorf("%s: 1.0 GetExtendedAgentCard without credentials: %s", tt.agent, a)
			}
			if r := restAnswer(t, http.MethodGet, url+"/extendedAgentCard", ""); r.status != http.StatusUnauthorized {
				t.Errorf("%s: GET /extendedAgentCard without credentials: %s", tt.agent, r)
			}
		}
	}
}

// restGet fetches url and returns the status and the body.
func restGet(t *testing.T, url string) (int, string) {
	t.Helper()
	a := restAnswer(t, http.MethodGet, url, "")
	return a.status, a.body
}
