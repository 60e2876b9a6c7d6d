package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// v10Task is the part of an A2A 1.0 Task (ProtoJSON) the tests read.
type v10Task struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string `json:"state"`
		Message *struct {
			Role string `json:"role"`
		} `json:"message"`
	} `json:"status"`
	History []struct {
		Role  string           `json:"role"`
		Kind  string           `json:"kind"`
		Parts []map[string]any `json:"parts"`
	} `json:"history"`
	Artifacts []struct {
		ArtifactID string           `json:"artifactId"`
		Parts      []map[string]any `json:"parts"`
	} `json:"artifacts"`
	Kind string `json:"kind"`
}

// v10Error is a JSON-RPC error whose data is A2A 1.0's detail array.
type v10Error struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Data    []map[string]any `json:"data"`
}

type v10Response struct {
	ID     jsontext.Value `json:"id"`
	Result jsontext.Value `json:"result"`
	Error  *v10Error      `json:"error"`
}

func v10SendParams(text, msgID, extra string) string {
	return fmt.Sprintf(`{"message":{"role":"ROLE_USER","messageId":%q,"parts":[{"text":%q}]}%s}`, msgID, text, extra)
}

// rpc10 posts one A2A 1.0 JSON-RPC request (A2A-Version: 1.0).
func rpc10(t testing.TB, url, method, params string) v10Response {
	t.Helper()
	_, b := testutil.Post(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":"r1","method":%q,"params":%s}`, method, params), "A2A-Version", "1.0")
	var r v10Response
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v: %s", method, err, b)
	}
	return r
}

func reasonOf(data []map[string]any) string {
	for _, d := range data {
		if d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" && d["domain"] == "a2a-protocol.org" {
			r, _ := d["reason"].(string)
			return r
		}
	}
	return ""
}

// TestJSONRPC10: the A2A 1.0 JSON-RPC methods on the same URL as 0.3
// (A2A 1.0 §9.4): SendMessage's {task} wrapper with ProtoJSON enums and no
// kind, GetTask, errors with a google.rpc.ErrorInfo, and the version rules.
func TestJSONRPC10(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	url := ts.URL + "/a2a/echo"

	r := rpc10(t, url, "SendMessage", v10SendParams("hello 1.0", "m10-1", ""))
	if r.Error != nil || string(r.ID) != `"r1"` {
		t.Fatalf("SendMessage: %+v", r)
	}
	var res struct {
		Task *v10Task `json:"task"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || res.Task == nil {
		t.Fatalf("SendMessage result is not {task}: %s", r.Result)
	}
	task := res.Task
	if task.Status.State != "TASK_STATE_COMPLETED" || task.Kind != "" || len(task.History) == 0 ||
		task.History[0].Role != "ROLE_USER" || task.History[0].Kind != "" || task.History[0].Parts[0]["text"] != "hello 1.0" {
		t.Fatalf("task: %s", r.Result)
	}
	if len(task.Artifacts) == 0 || !strings.Contains(fmt.Sprint(task.Artifacts[0].Parts[0]["text"]), "hello 1.0") {
		t.Fatalf("echo artifact missing: %s", r.Result)
	}

	// The same task through 0.3 and through 1.0.
	g := rpc10(t, url, "GetTask", fmt.Sprintf(`{"id":%q,"historyLength":0}`, task.ID))
	var got v10Task
	if g.Error != nil || json.Unmarshal(g.Result, &got) != nil || got.ID != task.ID || len(got.History) != 0 {
		t.Fatalf("GetTask: %+v %s", g.Error, g.Result)
	}
	if old := testutil.CallRPC(t, url, "tasks/get", fmt.Sprintf(`{"id":%q}`, task.ID)); old.Result.Status.State != "completed" {
		t.Fatalf("0.3 tasks/get of a task made over 1.0: %+v", old)
	}

	// Errors carry ErrorInfo.
	e := rpc10(t, url, "GetTask", `{"id":"no-such-task"}`)
	if e.Error == nil || e.Error.Code != -32001 || reasonOf(e.Error.Data) != "TASK_NOT_FOUND" {
		t.Fatalf("GetTask of an unknown id: %+v", e.Error)
	}
	e = rpc10(t, url, "CancelTask", fmt.Sprintf(`{"id":%q}`, task.ID))
	if e.Error == nil || e.Error.Code != -32002 || reasonOf(e.Error.Data) != "TASK_NOT_CANCELABLE" {
		t.Fatalf("CancelTask of a completed task: %+v", e.Error)
	}
	e = rpc10(t, url, "SubscribeToTask", fmt.Sprintf(`{"id":%q}`, task.ID))
	if e.Error == nil || e.Error.Code != -32004 {
		t.Fatalf("SubscribeToTask of a completed task: %+v", e.Error)
	}
	e = rpc10(t, url, "SendMessage", `{"message":{"role":"ROLE_USER","messageId":"x","parts":[{"text":"a"}],"kind":"message"}}`)
	if e.Error != nil && e.Error.Code != -32602 {
		t.Fatalf("unexpected error for a message with a stray kind: %+v", e.Error)
	}

	// A 1.0 method without the header, or with 0.3, contradicts the version.
	for _, hdr := range [][]string{nil, {"A2A-Version", "0.3"}} {
		_, b := testutil.Post(t, url, `{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":`+v10SendParams("x", "m10-nohdr", "")+`}`, hdr...)
		var vr v10Response
		if err := json.Unmarshal(b, &vr); err != nil || vr.Error == nil || vr.Error.Code != -32009 || !strings.Contains(vr.Error.Message, "A2A-Version: 1.0") {
			t.Fatalf("SendMessage with %v: %s", hdr, b)
		}
	}
	// Nothing ran for the refused message: the id is still free.
	if r := rpc10(t, url, "SendMessage", v10SendParams("x", "m10-nohdr", "")); r.Error != nil {
		t.Fatalf("the refused message left something behind: %+v", r.Error)
	}
}

// TestJSONRPC10Stream: SendStreamingMessage frames are JSON-RPC responses
// whose result is a StreamResponse (task first, then statusUpdate and
// artifactUpdate; no final), with event ids that resume.
func TestJSONRPC10Stream(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":9,"method":"SendStreamingMessage","params":` + v10SendParams("streamed", "m10-s1", "") + `}`
	frames := streamRaw(t, ctx, ts.URL+"/a2a/echo", body, "A2A-Version", "1.0", "Accept", "text/event-stream")
	if len(frames) < 2 {
		t.Fatalf("frames: %v", frames)
	}
	var kinds []string
	for i, f := range frames {
		var r struct {
			ID     int                       `json:"id"`
			Result map[string]jsontext.Value `json:"result"`
		}
		if err := json.Unmarshal([]byte(f.data), &r); err != nil || r.ID != 9 || len(r.Result) != 1 {
			t.Fatalf("frame %d is not a JSON-RPC response with one StreamResponse member: %s", i, f.data)
		}
		for k, v := range r.Result {
			kinds = append(kinds, k)
			if strings.Contains(string(v), `"final"`) || strings.Contains(string(v), `"kind"`) {
				t.Errorf("frame %d carries 0.3 fields: %s", i, f.data)
			}
		}
		if f.id != fmt.Sprint(i+1) {
			t.Errorf("frame %d has id %q", i, f.id)
		}
	}
	if kinds[0] != "task" || kinds[len(kinds)-1] != "statusUpdate" || !strings.Contains(frames[len(frames)-1].data, "TASK_STATE_COMPLETED") {
		t.Fatalf("stream shape: %v %s", kinds, frames[len(frames)-1].data)
	}
}

type rawFrame struct{ id, data string }

func streamRaw(t testing.TB, ctx context.Context, url, body string, hdr ...string) []rawFrame {
	t.Helper()
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req := testutil.NewRequest(t, ctx, method, url, body)
	req.Header.Set("Content-Type", "application/json")
	testutil.SetHeaders(req.Header, hdr...)
	resp := testutil.OpenEvents(t, req)
	defer resp.Body.Close()
	var out []rawFrame
	rd2 := sse.NewReader(resp.Body)
	for {
		ev, err := rd2.Next()
		if err != nil {
			return out
		}
		out = append(out, rawFrame{id: ev.ID, data: string(ev.Data)})
	}
}

// restDo sends one HTTP+JSON request with A2A-Version: 1.0.
func restDo(t testing.TB, method, url, body string) (int, []byte) {
	t.Helper()
	hdr := []string{"A2A-Version", "1.0"}
	if body != "" {
		hdr = append(hdr, "Content-Type", "application/a2a+json")
	}
	resp, b := testutil.Do(t, testutil.NewRequest(t, context.Background(), method, url, body, hdr...))
	return resp.StatusCode, b
}

type restStatus struct {
	Error struct {
		Code    int              `json:"code"`
		Status  string           `json:"status"`
		Message string           `json:"message"`
		Details []map[string]any `json:"details"`
	} `json:"error"`
}

func restError(t testing.TB, b []byte) restStatus {
	t.Helper()
	var s restStatus
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("not a google.rpc.Status: %v: %s", err, b)
	}
	return s
}

// TestREST10: the HTTP+JSON binding (A2A 1.0 §11) below the agent's URL,
// with tenants as a path prefix scoping tasks.
func TestREST10(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	base := ts.URL + "/a2a/echo"

	code, b := restDo(t, http.MethodPost, base+"/message:send", v10SendParams("rest hello", "rest-1", ""))
	var sent struct {
		Task *v10Task `json:"task"`
	}
	if code != 200 || json.Unmarshal(b, &sent) != nil || sent.Task == nil || sent.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("message:send: %d %s", code, b)
	}
	id := sent.Task.ID

	code, b = restDo(t, http.MethodGet, base+"/tasks/"+id+"?historyLength=1", "")
	var got v10Task
	if code != 200 || json.Unmarshal(b, &got) != nil || got.ID != id || len(got.History) != 1 {
		t.Fatalf("GET tasks/{id}: %d %s", code, b)
	}

	code, b = restDo(t, http.MethodGet, base+"/tasks/nope", "")
	if s := restError(t, b); code != 404 || s.Error.Code != 404 || s.Error.Status != "NOT_FOUND" || reasonOf(s.Error.Details) != "TASK_NOT_FOUND" {
		t.Fatalf("GET unknown task: %d %s", code, b)
	}
	code, b = restDo(t, http.MethodPost, base+"/tasks/"+id+":cancel", "")
	if s := restError(t, b); code != 400 || reasonOf(s.Error.Details) != "TASK_NOT_CANCELABLE" {
		t.Fatalf("cancel of a completed task: %d %s", code, b)
	}
	code, b = restDo(t, http.MethodDelete, base+"/message:send", "")
	if code != 405 {
		t.Fatalf("DELETE message:send: %d %s", code, b)
	}
	code, b = restDo(t, http.MethodGet, base+"/no/such/route/here", "")
	if code != 404 {
		t.Fatalf("unknown path: %d %s", code, b)
	}
	code, b = restDo(t, http.MethodPost, base+"/message:send", `{"message":`)
	if s := restError(t, b); code != 400 || s.Error.Code != 400 {
		t.Fatalf("malformed body: %d %s", code, b)
	}

	// Without A2A-Version the request is 0.3, which has no such path.
	resp, b := testutil.Get(t, base+"/tasks/"+id)
	if s := restError(t, b); resp.StatusCode != 400 || reasonOf(s.Error.Details) != "VERSION_NOT_SUPPORTED" {
		t.Fatalf("no A2A-Version: %d %s", resp.StatusCode, b)
	}

	// Tenants: a task of one tenant is not found from another or from none.
	code, b = restDo(t, http.MethodPost, base+"/acme/message:send", v10SendParams("tenant", "rest-t1", ""))
	if code != 200 || json.Unmarshal(b, &sent) != nil || sent.Task == nil {
		t.Fatalf("tenant message:send: %d %s", code, b)
	}
	tid := sent.Task.ID
	if code, b = restDo(t, http.MethodGet, base+"/acme/tasks/"+tid, ""); code != 200 {
		t.Fatalf("own tenant: %d %s", code, b)
	}
	for _, other := range []string{base + "/tasks/" + tid, base + "/globex/tasks/" + tid} {
		if code, b = restDo(t, http.MethodGet, other, ""); code != 404 {
			t.Fatalf("%s: %d %s", other, code, b)
		}
	}
	// The same message id in another tenant is another message.
	if code, b = restDo(t, http.MethodPost, base+"/globex/message:send", v10SendParams("tenant", "rest-t1", "")); code != 200 {
		t.Fatalf("same message id, other tenant: %d %s", code, b)
	}

	// message:stream: StreamResponse frames.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	frames := streamRaw(t, ctx, base+"/message:stream", v10SendParams("s", "rest-s1", ""), "A2A-Version", "1.0", "Accept", "text/event-stream")
	if len(frames) < 2 || !strings.HasPrefix(frames[0].data, `{"task":`) || !strings.Contains(frames[len(frames)-1].data, `"statusUpdate"`) {
		t.Fatalf("message:stream frames: %v", frames)
	}
}

// TestListTasks10: ListTasks over JSON-RPC and REST: newest first, pages
// that cover every task once, filters, and artifacts only on request.
func TestListTasks10(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	url := ts.URL + "/a2a/echo"
	var ids []string
	for i := range 5 {
		r := rpc10(t, url, "SendMessage", v10SendParams(fmt.Sprint("list ", i), fmt.Sprint("list-", i), ""))
		var res struct {
			Task v10Task `json:"task"`
		}
		if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
			t.Fatalf("send %d: %+v", i, r.Error)
		}
		ids = append(ids, res.Task.ID)
		time.Sleep(2 * time.Millisecond) // distinct status timestamps
	}
	type page struct {
		Tasks         []v10Task `json:"tasks"`
		NextPageToken *string   `json:"nextPageToken"`
		PageSize      int       `json:"pageSize"`
		TotalSize     int       `json:"totalSize"`
	}
	var seen []string
	token := ""
	for range 10 {
		r := rpc10(t, url, "ListTasks", fmt.Sprintf(`{"pageSize":2,"pageToken":%q}`, token))
		var p page
		if r.Error != nil || json.Unmarshal(r.Result, &p) != nil || p.NextPageToken == nil || p.PageSize != 2 || p.TotalSize != 5 {
			t.Fatalf("ListTasks page: %+v %s", r.Error, r.Result)
		}
		for _, tk := range p.Tasks {
			seen = append(seen, tk.ID)
			if tk.Artifacts != nil {
				t.Errorf("artifacts without includeArtifacts: %s", r.Result)
			}
		}
		if token = *p.NextPageToken; token == "" {
			break
		}
	}
	if len(seen) != 5 {
		t.Fatalf("pages covered %v, want the 5 tasks", seen)
	}
	for i := range seen {
		if seen[i] != ids[len(ids)-1-i] {
			t.Fatalf("order %v, want newest first %v", seen, ids)
		}
	}
	// REST, with filters.
	code, b := restDo(t, http.MethodGet, url+"/tasks?status=TASK_STATE_COMPLETED&includeArtifacts=true&pageSize=1", "")
	var p page
	if code != 200 || json.Unmarshal(b, &p) != nil || len(p.Tasks) != 1 || p.Tasks[0].Artifacts == nil || p.TotalSize != 5 {
		t.Fatalf("GET /tasks: %d %s", code, b)
	}
	code, b = restDo(t, http.MethodGet, url+"/tasks?status=TASK_STATE_WORKING", "")
	if code != 200 || json.Unmarshal(b, &p) != nil || len(p.Tasks) != 0 || p.NextPageToken == nil || *p.NextPageToken != "" {
		t.Fatalf("GET /tasks?status=WORKING: %d %s", code, b)
	}
	for _, bad := range []string{"pageSize=0", "pageSize=101", "pageToken=garbage", "status=DONE", "historyLength=-1"} {
		if code, b = restDo(t, http.MethodGet, url+"/tasks?"+bad, ""); code != 400 {
			t.Errorf("GET /tasks?%s: %d %s", bad, code, b)
		}
	}
	// Another agent's tasks are not listed.
	r := rpc10(t, ts.URL+"/a2a/chat", "ListTasks", `{}`)
	if r.Error != nil || json.Unmarshal(r.Result, &p) != nil || len(p.Tasks) != 0 {
		t.Fatalf("chat lists echo's tasks: %s", r.Result)
	}
}

// TestRESTEscapedColonInTaskID: an escaped colon belongs to the task id
// (GET /tasks/a%3Acancel is GetTask of "a:cancel"); only a literal one
// starts a custom method such as ":cancel".
func TestRESTEscapedColonInTaskID(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	base := ts.URL + "/a2a/echo"
	for _, path := range []string{"/tasks/a%3Acancel", "/v1/tasks/a%3Acancel", "/tasks/a%3Asubscribe"} {
		code, b := restDo(t, http.MethodGet, base+path, "")
		if code != http.StatusNotFound || !strings.Contains(string(b), "a:") {
			t.Errorf("GET %s: %d %s, want 404 naming the task a:…", path, code, b)
		}
	}
	// ListTaskPushNotificationConfigs of "a:subscribe" (not a routing
	// failure): this agent has no push notifications, which it says first.
	if code, b := restDo(t, http.MethodGet, base+"/tasks/a%3Asubscribe/pushNotificationConfigs", ""); code != http.StatusBadRequest || reasonOf(restError(t, b).Error.Details) != "PUSH_NOTIFICATION_NOT_SUPPORTED" {
		t.Errorf("GET /tasks/a%%3Asubscribe/pushNotificationConfigs: %d %s, want PushNotificationNotSupportedError", code, b)
	}
	if code, b := restDo(t, http.MethodGet, base+"/tasks/a:cancel", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /tasks/a:cancel: %d %s, want 405 (CancelTask is a POST)", code, b)
	}
}
