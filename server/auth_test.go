package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/schematest"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// whoAmI answers with the caller's subject and waits for input, so tasks
// stay open for continuation and cancel tests.
var whoAmI = server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	who := "nobody"
	if r.Principal != nil {
		who = r.Principal.Scheme + ":" + r.Principal.Subject
	}
	return u.RequireInput(ctx, "you are "+who)
})

func secureHost(t *testing.T) *httptest.Server {
	t.Helper()
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"alice": "alice-token", "bob": auth.HashToken("bob-token")})
	if err != nil {
		t.Fatal(err)
	}
	key, err := auth.NewAPIKey("apiKey", "header", "X-API-Key", map[string]string{"carol": "carol-key"})
	if err != nil {
		t.Fatal(err)
	}
	eng := servertest.Engine(t, server.EngineOptions{Push: &server.PushOptions{}})
	host := servertest.Host("secure")
	ext := testutil.Card("secure")
	ext.Description = "extended: admin skills"
	ext.Skills = append(ext.Skills, a2a.AgentSkill{ID: "admin", Name: "Admin", Description: "only for known callers", Tags: []string{"admin"}})
	host.Add(server.NewHandler(eng, "secure", whoAmI, testutil.Card("secure"), server.HandlerOptions{Auth: auth.Set{bearer, key}, ExtendedCard: &ext}))
	host.Add(server.NewHandler(eng, "locked", whoAmI, testutil.Card("locked"), server.HandlerOptions{Auth: auth.Set{bearer}, CardRequiresAuth: true}))
	ts := testutil.Serve(t, host, eng.Close)
	return ts
}

func authCall(t *testing.T, url, method, params string, hdr ...string) (int, http.Header, testutil.RPCAnswer, string) {
	t.Helper()
	resp, b := testutil.Post(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params), hdr...)
	var r testutil.RPCAnswer
	_ = json.Unmarshal(b, &r)
	return resp.StatusCode, resp.Header, r, string(b)
}

func TestAuthenticationAndCards(t *testing.T) {
	t.Parallel()
	ts := secureHost(t)
	url := ts.URL + "/a2a/secure"
	// The card is public and generated from the configuration.
	resp, err := http.Get(url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card map[string]any
	b := readAll(t, resp)
	schematest.Validate(t, "AgentCard", b)
	_ = json.Unmarshal(b, &card)
	if resp.StatusCode != 200 || card["supportsAuthenticatedExtendedCard"] != true || card["securitySchemes"] == nil || card["security"] == nil {
		t.Fatalf("public card: %d %s", resp.StatusCode, b)
	}
	// A card that requires authentication.
	if resp, _ := http.Get(ts.URL + "/a2a/locked/.well-known/agent-card.json"); resp.StatusCode != 401 {
		t.Fatalf("locked card without credentials: %d", resp.StatusCode)
	}

	// No credentials, a wrong token, a wrong key: 401 with challenges and a JSON-RPC body.
	for _, hdr := range [][]string{nil, {"Authorization", "Bearer nope"}, {"X-API-Key", "nope"}} {
		status, h, r, raw := authCall(t, url, "tasks/get", `{"id":"x"}`, hdr...)
		if status != 401 || r.Error == nil || r.Error.Code != a2a.CodeUnauthenticated || len(h.Values("WWW-Authenticate")) == 0 || h.Get("Content-Type") != "application/json" {
			t.Fatalf("credentials %v: %d %v %s", hdr, status, h, raw)
		}
		schematest.Validate(t, "JSONRPCErrorResponse", []byte(raw))
	}
	// Each scheme authenticates, and the agent sees the principal.
	for _, c := range []struct {
		hdr  []string
		want string
	}{{[]string{"Authorization", "Bearer alice-token"}, "bearer:alice"}, {[]string{"X-API-Key", "carol-key"}, "apiKey:carol"}} {
		status, _, r, raw := authCall(t, url, "message/send", testutil.SendParams03("hi", "m-"+c.want, ""), c.hdr...)
		if status != 200 || r.Result.Status.State != "input-required" || !strings.Contains(raw, "you are "+c.want) {
			t.Fatalf("%v: %d %s", c.hdr, status, raw)
		}
	}
	// The extended card, for authenticated callers.
	_, _, _, raw := authCall(t, url, "agent/getAuthenticatedExtendedCard", `{}`, "Authorization", "Bearer bob-token")
	if !strings.Contains(raw, "extended: admin skills") || !strings.Contains(raw, `"url":"`+url+`"`) {
		t.Fatalf("extended card: %s", raw)
	}
	if status, _, _, _ := authCall(t, url, "agent/getAuthenticatedExtendedCard", `{}`); status != 401 {
		t.Fatal("extended card without credentials")
	}
	if _, _, r, _ := authCall(t, ts.URL+"/a2a/locked", "agent/getAuthenticatedExtendedCard", `{}`, "Authorization", "Bearer bob-token"); r.Error == nil || r.Error.Code != a2a.CodeAuthenticatedExtendedCardNotConfigured {
		t.Fatalf("no extended card configured: %+v", r)
	}
}

// TestTaskOwnership: a task belongs to the principal that created it;
// another principal gets -32001 from every method that names it.
func TestTaskOwnership(t *testing.T) {
	t.Parallel()
	ts := secureHost(t)
	url := ts.URL + "/a2a/secure"
	alice := []string{"Authorization", "Bearer alice-token"}
	bob := []string{"Authorization", "Bearer bob-token"}
	_, _, r, _ := authCall(t, url, "message/send", testutil.SendParams03("mine", "own-1", ""), alice...)
	id := r.Result.ID
	if id == "" {
		t.Fatal("no task")
	}
	methods := []struct{ method, params string }{
		{"tasks/get", fmt.Sprintf(`{"id":%q}`, id)},
		{"tasks/cancel", fmt.Sprintf(`{"id":%q}`, id)},
		{"message/send", fmt.Sprintf(`{"message":{"kind":"message","role":"user","messageId":"own-2","taskId":%q,"parts":[{"kind":"text","text":"x"}]}}`, id)},
		{"message/stream", fmt.Sprintf(`{"message":{"kind":"message","role":"user","messageId":"own-3","taskId":%q,"parts":[{"kind":"text","text":"x"}]}}`, id)},
		{"tasks/resubscribe", fmt.Sprintf(`{"id":%q}`, id)},
		{"tasks/pushNotificationConfig/set", fmt.Sprintf(`{"taskId":%q,"pushNotificationConfig":{"url":"http://127.0.0.1:1/hook"}}`, id)},
		{"tasks/pushNotificationConfig/get", fmt.Sprintf(`{"id":%q}`, id)},
		{"tasks/pushNotificationConfig/list", fmt.Sprintf(`{"id":%q}`, id)},
		{"tasks/pushNotificationConfig/delete", fmt.Sprintf(`{"id":%q,"pushNotificationConfigId":"c"}`, id)},
	}
	for _, m := range methods {
		_, _, r, raw := authCall(t, url, m.method, m.params, bob...)
		if r.Error == nil || r.Error.Code != a2a.CodeTaskNotFound {
			t.Errorf("%s by another principal: %s", m.method, raw)
		}
	}
	// The events endpoint too.
	resp, _ := testutil.Get(t, url+"/tasks/"+id+"/events", bob...)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("events endpoint by another principal: %d", resp.StatusCode)
	}
	// Message ids are scoped to their principal: bob's "own-1" is his own
	// new task, neither alice's (a leak) nor refused (a way to probe hers).
	if _, _, r, raw := authCall(t, url, "message/send", testutil.SendParams03("mine", "own-1", ""), bob...); r.Error != nil || r.Result.ID == id || r.Result.ID == "" {
		t.Errorf("messageId used by another principal: %s", raw)
	}
	// The owner still has it all.
	if _, _, r, raw := authCall(t, url, "tasks/get", fmt.Sprintf(`{"id":%q}`, id), alice...); r.Error != nil {
		t.Fatalf("owner: %s", raw)
	}
	if _, _, r, raw := authCall(t, url, "tasks/cancel", fmt.Sprintf(`{"id":%q}`, id), alice...); r.Result.Status.State != "canceled" {
		t.Fatalf("owner cancel: %s", raw)
	}
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return []byte(b.String())
		}
	}
}

// A JSON-RPC handler mounted directly (without Host) still authenticates,
// and refuses form content types on authenticated agents.
func TestJSONRPCHandlerAuthenticatesByItself(t *testing.T) {
	t.Parallel()
	bearer, _ := auth.NewBearerTokens("bearer", map[string]string{"alice": "alice-token"})
	eng := servertest.Engine(t, server.EngineOptions{})
	defer eng.Close(context.Background())
	h := server.NewHandler(eng, "x", whoAmI, testutil.Card("x"), server.HandlerOptions{Auth: auth.Set{bearer}})
	ts := httptest.NewServer(server.NewJSONRPCHandler(h, server.TransportOptions{Logger: testutil.Logger()}))
	defer ts.Close()
	if status, _, _, raw := authCall(t, ts.URL, "message/send", testutil.SendParams03("x", "d-1", "")); status != 401 {
		t.Fatalf("anonymous call: %d %s", status, raw)
	}
	if status, _, r, raw := authCall(t, ts.URL, "message/send", testutil.SendParams03("x", "d-2", ""), "Authorization", "Bearer alice-token"); status != 200 || r.Error != nil {
		t.Fatalf("authenticated call: %d %s", status, raw)
	}
	if status, _, _, raw := authCall(t, ts.URL, "message/send", testutil.SendParams03("x", "d-3", ""), "Authorization", "Bearer alice-token", "Content-Type", "text/plain"); status != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain on an authenticated agent: %d %s", status, raw)
	}
	// No media type at all: what fetch() sends for an untyped Blob,
	// cross-site and without a preflight.
	if status, _, _, raw := authCall(t, ts.URL, "message/send", testutil.SendParams03("x", "d-4", ""), "Authorization", "Bearer alice-token", "Content-Type", ""); status != http.StatusUnsupportedMediaType {
		t.Fatalf("no Content-Type on an authenticated agent: %d %s", status, raw)
	}
}
