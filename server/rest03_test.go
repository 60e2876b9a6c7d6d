package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
)

// rest03Error is the error body of the 0.3 HTTP+JSON binding: a
// google.rpc.Status under "error" and the JSON-RPC members.
type rest03Error struct {
	restStatus
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

// rest03Task is the part of a Task of the 0.3 proto's JSON the tests read.
type rest03Task struct {
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	History []struct {
		Content []map[string]any `json:"content"`
	} `json:"history"`
	Artifacts []struct {
		Parts []map[string]any `json:"parts"`
	} `json:"artifacts"`
}

// rest03 sends one request of the 0.3 binding (no A2A-Version) with the
// header pairs hdr and returns the status, the headers and the body.
func rest03(t testing.TB, method, url, body string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	resp, b := testutil.Send(t, method, url, body, hdr...)
	return resp.StatusCode, resp.Header, b
}

// want03Error fails t unless b is the 0.3 binding's error body with HTTP
// status status, A2A code code and ErrorInfo reason reason.
func want03Error(t testing.TB, what string, gotStatus int, b []byte, status, code int, reason string) rest03Error {
	t.Helper()
	var e rest03Error
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%s: not an error body: %v: %s", what, err, b)
	}
	if gotStatus != status || e.Error.Code != status || e.Code != code || e.Message == "" || e.Error.Message != e.Message || reasonOf(e.Error.Details) != reason {
		t.Fatalf("%s: got %d %s, want %d, code %d, reason %s", what, gotStatus, b, status, code, reason)
	}
	return e
}

func send03(text, msgID, config string) string {
	return fmt.Sprintf(`{"message":{"role":"ROLE_USER","messageId":%q,"content":[{"text":%q}]}%s}`, msgID, text, config)
}

func sentTask03(t testing.TB, code int, b []byte) rest03Task {
	t.Helper()
	var r struct {
		Task *rest03Task `json:"task"`
	}
	if code != 200 || json.Unmarshal(b, &r) != nil || r.Task == nil || r.Task.ID == "" {
		t.Fatalf("message:send: %d %s", code, b)
	}
	return *r.Task
}

// TestREST03: every unary route of the 0.3 binding below an agent's URL
// and for the default agent, with its errors (A2A 0.3.0 §3.2.3, §7).
func TestREST03(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{transport: server.TransportOptions{MaxBodyBytes: 4096}})
	base := ts.URL + "/a2a/echo/v1"

	code, _, b := rest03(t, http.MethodPost, base+"/message:send", `{"request":{"role":"ROLE_USER","messageId":"r03-1","content":[{"text":"hi"},{"data":{"data":{"k":1}}},{"file":{"fileWithBytes":"AAE=","mimeType":"application/octet-stream"}}]}}`)
	task := sentTask03(t, code, b)
	if task.Status.State != "TASK_STATE_COMPLETED" || len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 3 || len(task.History) != 1 || len(task.History[0].Content) != 3 {
		t.Fatalf("message:send: %s", b)
	}
	if !strings.Contains(string(b), `{"file":{"fileWithBytes":"AAE=","mimeType":"application/octet-stream"}}`) {
		t.Fatalf("file part not echoed in the 0.3 shape: %s", b)
	}

	code, _, b = rest03(t, http.MethodGet, base+"/tasks/"+task.ID+"?historyLength=0", "")
	var got rest03Task
	if code != 200 || json.Unmarshal(b, &got) != nil || got.ID != task.ID || len(got.History) != 0 {
		t.Fatalf("GET tasks/{id}: %d %s", code, b)
	}
	code, _, b = rest03(t, http.MethodGet, base+"/tasks", "")
	var list struct {
		Tasks []rest03Task `json:"tasks"`
	}
	if code != 200 || json.Unmarshal(b, &list) != nil || len(list.Tasks) == 0 || !strings.Contains(string(b), `"nextPageToken":""`) {
		t.Fatalf("GET tasks: %d %s", code, b)
	}

	// Cancel: a running task, with the optional {"name"} body; then errors.
	code, _, b = rest03(t, http.MethodPost, ts.URL+"/a2a/wait/v1/message:send", send03("wait", "r03-w", `,"configuration":{}`))
	running := sentTask03(t, code, b)
	code, _, b = rest03(t, http.MethodPost, ts.URL+"/a2a/wait/v1/tasks/"+running.ID+":cancel", `{"name":"tasks/other"}`)
	want03Error(t, "cancel with another task's name", code, b, 400, -32602, "INVALID_PARAMS")
	code, _, b = rest03(t, http.MethodPost, ts.URL+"/a2a/wait/v1/tasks/"+running.ID+":cancel", fmt.Sprintf(`{"name":"tasks/%s"}`, running.ID))
	if code != 200 || !strings.Contains(string(b), `"state":"TASK_STATE_CANCELLED"`) {
		t.Fatalf("cancel: %d %s", code, b)
	}
	code, _, b = rest03(t, http.MethodPost, base+"/tasks/"+task.ID+":cancel", "")
	want03Error(t, "cancel of a completed task", code, b, 400, -32002, "TASK_NOT_CANCELABLE")
	code, _, b = rest03(t, http.MethodGet, base+"/tasks/nope", "")
	want03Error(t, "unknown task", code, b, 404, -32001, "TASK_NOT_FOUND")

	// Bad requests.
	code, _, b = rest03(t, http.MethodPost, base+"/message:send", `{"message":`)
	want03Error(t, "malformed body", code, b, 400, -32700, "PARSE_ERROR")
	code, _, b = rest03(t, http.MethodPost, base+"/message:send", `{"message":{"role":"ROLE_USER","messageId":"x","content":[{"kind":"file","file":{"bytes":"AAE="}}]}}`)
	if e := want03Error(t, "0.3 JSON-RPC file part", code, b, 400, -32602, "INVALID_PARAMS"); e.Data["field"] != "/message/content/0/file" {
		t.Fatalf("error does not name the field: %s", b)
	}
	code, _, b = rest03(t, http.MethodPost, base+"/message:send", send03(strings.Repeat("x", 5000), "big", ""))
	want03Error(t, "body over the limit", code, b, 400, -32600, "INVALID_REQUEST")
	code, _, b = rest03(t, http.MethodGet, base+"/tasks/"+task.ID+"?historyLength=-1", "")
	want03Error(t, "negative historyLength", code, b, 400, -32602, "INVALID_PARAMS")

	// Routes: 405 with Allow, 404 with a JSON error, no tenants, no 1.0 paths.
	code, hdr, b := rest03(t, http.MethodPut, base+"/message:send", "")
	want03Error(t, "PUT message:send", code, b, 405, -32004, "UNSUPPORTED_OPERATION")
	if hdr.Get("Allow") != "POST" {
		t.Fatalf("Allow %q", hdr.Get("Allow"))
	}
	for _, p := range []string{base + "/nope", base + "/extendedAgentCard", ts.URL + "/v1/tasks/a/b/c/d"} {
		code, _, b = rest03(t, http.MethodPost, p, send03("x", "y", ""))
		want03Error(t, p, code, b, 404, -32601, "METHOD_NOT_FOUND")
	}
	// A tenant before /v1/ is no 0.3 path (nor a 1.0 one).
	if code, _, b = rest03(t, http.MethodPost, ts.URL+"/a2a/echo/acme/v1/message:send", send03("x", "y", "")); code != 404 {
		t.Fatalf("tenant before /v1/: %d %s", code, b)
	}
	code, _, b = rest03(t, http.MethodGet, base+"/card", "")
	want03Error(t, "card without an extended card", code, b, 400, -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED")

	// Versions: 2.0 is not served; 1.0 below /v1/ is the 1.0 binding with
	// the tenant "v1".
	code, _, b = rest03(t, http.MethodGet, base+"/tasks/"+task.ID, "", "A2A-Version", "2.0")
	want03Error(t, "A2A-Version 2.0", code, b, 400, -32009, "VERSION_NOT_SUPPORTED")
	code, _, b = rest03(t, http.MethodPost, base+"/message:send", v10SendParams("tenant v1", "r03-v1", ""), "A2A-Version", "1.0")
	if code != 200 || !strings.Contains(string(b), `"parts":[{"text":"tenant v1"}]`) {
		t.Fatalf("1.0 request below /v1/: %d %s", code, b)
	}
	code, _, b = rest03(t, http.MethodGet, base+"/tasks/"+task.ID, "", "A2A-Version", "0.3")
	if code != 200 {
		t.Fatalf("A2A-Version 0.3: %d %s", code, b)
	}

	// The default agent at the root.
	code, _, b = rest03(t, http.MethodPost, ts.URL+"/v1/message:send", send03("root", "r03-root", ""))
	root := sentTask03(t, code, b)
	if code, _, b = rest03(t, http.MethodGet, base+"/tasks/"+root.ID, ""); code != 200 {
		t.Fatalf("the root's task from the agent's URL: %d %s", code, b)
	}
}

// TestREST03Stream: message:stream and tasks/{id}:subscribe are SSE with
// the events' sequence numbers as ids; Last-Event-ID resumes after one.
func TestREST03Stream(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	base := ts.URL + "/a2a/echo/v1"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	frames := streamRaw(t, ctx, base+"/message:stream", send03("streamed", "r03-s1", ""), "Accept", "text/event-stream")
	if len(frames) < 3 || !strings.HasPrefix(frames[0].data, `{"task":`) || frames[0].id != "1" {
		t.Fatalf("message:stream: %v", frames)
	}
	last := frames[len(frames)-1]
	if !strings.HasPrefix(last.data, `{"statusUpdate":`) || !strings.Contains(last.data, `"state":"TASK_STATE_COMPLETED"`) || !strings.Contains(last.data, `"final":true`) {
		t.Fatalf("last frame: %s", last.data)
	}
	var first struct {
		Task rest03Task `json:"task"`
	}
	if err := json.Unmarshal([]byte(frames[0].data), &first); err != nil {
		t.Fatal(err)
	}
	sub := base + "/tasks/" + first.Task.ID + ":subscribe"

	// A finished task replays (0.3), from after Last-Event-ID: 1, by GET
	// and by POST.
	for _, body := range []string{"", fmt.Sprintf(`{"name":"tasks/%s"}`, first.Task.ID)} {
		resumed := streamRaw(t, ctx, sub, body, "Accept", "text/event-stream", "Last-Event-ID", "1")
		if len(resumed) != len(frames)-1 || resumed[0].id != "2" || resumed[len(resumed)-1] != last {
			t.Fatalf("resume after 1 (body %q): %v, want %v", body, resumed, frames[1:])
		}
	}
	code, _, b := rest03(t, http.MethodGet, sub, "", "Last-Event-ID", "x")
	want03Error(t, "bad Last-Event-ID", code, b, 400, -32602, "INVALID_PARAMS")
	code, _, b = rest03(t, http.MethodGet, base+"/tasks/nope:subscribe", "", "Accept", "text/event-stream")
	want03Error(t, "subscribe to an unknown task", code, b, 404, -32001, "TASK_NOT_FOUND")
	code, _, b = rest03(t, http.MethodPost, ts.URL+"/a2a/nostream/v1/message:stream", send03("x", "r03-ns", ""))
	want03Error(t, "stream from an agent without streaming", code, b, 400, -32004, "UNSUPPORTED_OPERATION")
}

// TestREST03AuthOwnershipPush: authentication answers 401 in the binding's
// error form, tasks are their owner's, and push notification configs are
// created (both request shapes), read, listed and deleted.
func TestREST03AuthOwnershipPush(t *testing.T) {
	t.Parallel()
	ts := secureHost(t)
	base := ts.URL + "/a2a/secure/v1"
	alice := []string{"Authorization", "Bearer alice-token"}
	bob := []string{"Authorization", "Bearer bob-token"}

	code, hdr, b := rest03(t, http.MethodPost, base+"/message:send", send03("hi", "r03-a0", ""))
	want03Error(t, "no credentials", code, b, 401, -32000, "UNAUTHENTICATED")
	if hdr.Get("WWW-Authenticate") == "" {
		t.Fatal("401 without WWW-Authenticate")
	}
	code, _, b = rest03(t, http.MethodPost, base+"/nope", "", alice...)
	want03Error(t, "unknown path, authenticated", code, b, 404, -32601, "METHOD_NOT_FOUND")

	code, _, b = rest03(t, http.MethodPost, base+"/message:send", send03("hi", "r03-a1", ""), alice...)
	task := sentTask03(t, code, b)
	configs := base + "/tasks/" + task.ID + "/pushNotificationConfigs"
	for _, p := range []string{"/tasks/" + task.ID, "/tasks/" + task.ID + "/pushNotificationConfigs", "/tasks/" + task.ID + ":subscribe"} {
		code, _, b = rest03(t, http.MethodGet, base+p, "", bob...)
		want03Error(t, p+" by another principal", code, b, 404, -32001, "TASK_NOT_FOUND")
	}

	// @a2a-js/sdk 0.3.14's shape: the TaskPushNotificationConfig itself.
	code, _, b = rest03(t, http.MethodPost, configs, fmt.Sprintf(`{"name":"tasks/%s/pushNotificationConfigs/","pushNotificationConfig":{"id":"c1","url":"http://127.0.0.1:1/hook","token":"tok","authentication":{"schemes":["Bearer"],"credentials":"s"}}}`, task.ID), alice...)
	wantConfig := fmt.Sprintf(`{"name":"tasks/%s/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"http://127.0.0.1:1/hook","token":"tok","authentication":{"schemes":["Bearer"],"credentials":"s"}}}`, task.ID)
	if code != 200 || string(b) != wantConfig {
		t.Fatalf("create (TaskPushNotificationConfig): %d %s\nwant %s", code, b, wantConfig)
	}
	// a2a-go v2's and a2a-python's shape: the whole request.
	code, _, b = rest03(t, http.MethodPost, configs, fmt.Sprintf(`{"parent":"tasks/%s","configId":"c2","config":{"pushNotificationConfig":{"url":"http://127.0.0.1:1/two"}}}`, task.ID), alice...)
	if code != 200 || !strings.Contains(string(b), `"pushNotificationConfig":{"id":"c2","url":"http://127.0.0.1:1/two"}`) {
		t.Fatalf("create (CreateTaskPushNotificationConfigRequest): %d %s", code, b)
	}
	code, _, b = rest03(t, http.MethodPost, configs, fmt.Sprintf(`{"parent":"tasks/%s","configId":"c3","config":{"pushNotificationConfig":{"id":"c4","url":"http://127.0.0.1:1/x"}}}`, task.ID), alice...)
	want03Error(t, "config ids that disagree", code, b, 400, -32602, "INVALID_PARAMS")

	// Read back, its secrets are not returned (HandlerOptions.RevealPushSecrets).
	wantRead := strings.Replace(strings.Replace(wantConfig, `"token":"tok",`, "", 1), `,"credentials":"s"`, "", 1)
	if code, _, b = rest03(t, http.MethodGet, configs+"/c1", "", alice...); code != 200 || string(b) != wantRead {
		t.Fatalf("get: %d %s\nwant %s", code, b, wantRead)
	}
	code, _, b = rest03(t, http.MethodGet, configs, "", alice...)
	if code != 200 || !strings.HasPrefix(string(b), `{"configs":[`) || strings.Count(string(b), `"name":`) != 2 {
		t.Fatalf("list: %d %s", code, b)
	}
	if code, _, b = rest03(t, http.MethodDelete, configs+"/c1", "", alice...); code != 200 || string(b) != "{}" {
		t.Fatalf("delete: %d %s", code, b)
	}
	code, _, b = rest03(t, http.MethodGet, configs+"/c1", "", alice...)
	want03Error(t, "get a deleted config", code, b, 404, -32001, "TASK_NOT_FOUND")

	// The extended card, in the 0.3 JSON, for an authenticated caller.
	code, _, b = rest03(t, http.MethodGet, base+"/card", "", alice...)
	if code != 200 || !strings.Contains(string(b), `"description":"extended: admin skills"`) || !strings.Contains(string(b), `"url":"`+ts.URL+`/a2a/secure"`) {
		t.Fatalf("card: %d %s", code, b)
	}
}
