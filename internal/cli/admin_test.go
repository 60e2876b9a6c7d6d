package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/gateway"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// adminCall sends one admin API request and returns the status and body.
func adminCall(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	return call(t, method, url, body, bearer(token)...)
}

// adminTestConfig is TestAdminAPI's config file: an admin block and a
// configured agent.
const adminTestConfig = `admin:
  bearer_tokens:
    ops: ${A2ABRIDGE_TEST_ADMIN}
  env: [A2ABRIDGE_TEST_DESC, A2ABRIDGE_TEST_UNSET]
agents:
  echo2:
    kind: echo
    description: a second echo
`

// TestAdminAPI registers, lists, calls and removes agents on a running
// serve (a child process on SQLite), and checks that a registration is
// back after a restart and that bad registrations are 400s naming the
// field.
func TestAdminAPI(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "serve.yaml")
	os.WriteFile(cfg, []byte(adminTestConfig), 0o600)
	t.Setenv("A2ABRIDGE_TEST_ADMIN", "adm1n")
	t.Setenv("A2ABRIDGE_TEST_DESC", "described by the environment")
	data := filepath.Join(dir, "data")
	addr := freeAddr(t)
	base := "http://" + addr
	api := base + "/api/v1/agents"
	child := startChild(t, "--config", cfg, "--data", data, "--addr", addr)

	// Without the token: 401, nothing else said.
	if code, body := adminCall(t, "GET", api, "", ""); code != 401 || !strings.Contains(body, "admin bearer token") {
		t.Fatalf("no token: %d %s", code, body)
	}
	if code, _ := adminCall(t, "GET", api, "wrong", ""); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}

	// The CLI registers an agent of our kinds.
	out, errs, code := run(t, "", "agents", "add", "myecho", "--kind", "echo", "--set", "description=registered echo", "--server", base, "--token", "adm1n")
	if code != 0 || !strings.Contains(out, "registered myecho (echo) at "+base+"/a2a/myecho") {
		t.Fatalf("agents add: %d %q %q", code, out, errs)
	}
	if r := testutil.CallRPC(t, base+"/a2a/myecho", "message/send", testutil.SendParams03("hi", "m1", "")); r.Result.Status.State != "completed" {
		t.Fatalf("the registered agent: %+v", r)
	}
	// Its card is derived like a configured agent's.
	var card struct {
		Name, Description string
	}
	getJSON(t, base+"/a2a/myecho/.well-known/agent-card.json", &card)
	if card.Description != "registered echo" {
		t.Fatalf("card: %+v", card)
	}

	// A slow agent with a running task, removed: the task fails with a
	// reason, stays readable, and a new message gets the 404 of an unknown
	// agent (nothing is stored).
	if code, body := adminCall(t, "POST", api, "adm1n", `{"name":"slowy","kind":"slow"}`); code != 201 {
		t.Fatalf("register slowy: %d %s", code, body)
	}
	r := testutil.CallRPC(t, base+"/a2a/slowy", "message/send", testutil.SendParams03("60", "m2", `,"configuration":{"blocking":false}`))
	taskID := r.Result.ID
	if taskID == "" {
		t.Fatalf("slow task: %+v", r)
	}
	out, _, code = run(t, "", "agents", "list", "--server", base, "--token", "adm1n")
	for _, want := range []string{"echo  ", "echo2", "config", "myecho", "slowy", "admin"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("agents list lacks %q: %d\n%s", want, code, out)
		}
	}
	if out, errs, code := run(t, "", "agents", "rm", "slowy", "--server", base, "--token", "adm1n"); code != 0 {
		t.Fatalf("agents rm: %d %q %q", code, out, errs)
	}
	got := testutil.CallRPC(t, base+"/a2a/slowy", "tasks/get", `{"id":"`+taskID+`"}`)
	if got.Result.Status.State != "failed" || got.Result.Status.Message == nil || !strings.Contains(got.Result.Status.Message.Parts[0].Text, "slowy was removed") {
		t.Fatalf("the removed agent's running task: %+v", got)
	}
	removedAnswersUnknown(t, base, "slowy", "m3")
	if code, body := adminCall(t, "GET", api+"/slowy", "adm1n", ""); code != 200 || !strings.Contains(body, `"removed":true`) || !strings.Contains(body, `"running":false`) {
		t.Fatalf("the removed agent in the admin API: %d %s", code, body)
	}
	// A multi-turn agent with a task waiting for input, removed: that task
	// fails too.
	if code, body := adminCall(t, "POST", api, "adm1n", `{"name":"chatty","kind":"chat"}`); code != 201 {
		t.Fatalf("register chatty: %d %s", code, body)
	}
	r = testutil.CallRPC(t, base+"/a2a/chatty", "message/send", testutil.SendParams03("hello", "m5", ""))
	chatTask := r.Result.ID
	if r.Result.Status.State != "input-required" {
		t.Fatalf("chat task: %+v", r)
	}
	if code, body := adminCall(t, "DELETE", api+"/chatty", "adm1n", ""); code != 204 {
		t.Fatalf("remove chatty: %d %s", code, body)
	}
	got = testutil.CallRPC(t, base+"/a2a/chatty", "tasks/get", `{"id":"`+chatTask+`"}`)
	if got.Result.Status.State != "failed" || got.Result.Status.Message == nil || !strings.Contains(got.Result.Status.Message.Parts[0].Text, "chatty was removed") {
		t.Fatalf("the removed agent's task waiting for input: %+v", got)
	}

	// Bad registrations: each a 400 (or 409, 413) naming what is wrong.
	for _, c := range []struct {
		body  string
		code  int
		field string
		want  string
	}{
		{`{"kind":"echo"}`, 400, "name", "name: required"},
		{`{"name":"a b","kind":"echo"}`, 400, "name", "use letters"},
		{`{"name":"x"}`, 400, "kind", "kind: required"},
		{`{"name":"x","kind":"nope"}`, 400, "kind", `unknown kind "nope"`},
		{`{"name":"x","kind":"echo","colour":"red"}`, 400, "colour", `unknown key "colour" in agents.x`},
		{`{"name":"x","kind":"echo","description":"${A2ABRIDGE_SURELY_UNSET}"}`, 400, "description", "${A2ABRIDGE_SURELY_UNSET} is not among the environment variables registrations may use (admin.env)"},
		{`{"name":"x","kind":"echo","description":"${A2ABRIDGE_TEST_UNSET}"}`, 400, "description", "agents.x.description: environment variable A2ABRIDGE_TEST_UNSET is not set"},
		{`{"name":"x","kind":"exec","command":["id"]}`, 400, "kind", `"exec" may not be registered through the admin API (admin.kinds allows`},
		{`{"name":"x","kind":"openai","base_url":"http://127.0.0.1:1/v1","model":"m","max_tokens":"many"}`, 400, "max_tokens", "agents.x.max_tokens: want a whole number"},
		{`{"name":"x","kind":"http","url":"http://127.0.0.1:1/","timeout_ms":[1]}`, 400, "timeout_ms", "agents.x.timeout_ms: want a whole number"},
		{`{"name":"x","kind":"http","url":"http://127.0.0.1:1/","credentials":{"bearer_token":{"a":1}}}`, 400, "credentials.bearer_token", "agents.x.credentials.bearer_token: want a string"},
		{`{"name":"x","protocol":"simple-a2a","url":"http://h","protocol_config":{"kind":"exec"}}`, 400, "protocol_config.kind", "not allowed here"},
		{`{"name":"x","protocol":"grpc","url":"http://h"}`, 400, "protocol", `"grpc" is not one of`},
		{`{"name":"x","protocol":"simple-a2a","url":"http://h","auth_type":"bearer"}`, 400, "protocol_config.token", "protocol_config.token: required"},
		{`{"name":"x","protocol":"simple-a2a","url":"http://h","timeout_ms":-5}`, 400, "timeout_ms", "timeout_ms"},
		{`{"name":"x","kind":"echo"} {}`, 400, "", "more than one JSON value"},
		{`[1]`, 400, "", "not a JSON object"},
		{`{"name":"echo2","kind":"echo"}`, 409, "name", "read-only"},
		{`{"name":"myecho","kind":"echo"}`, 409, "name", "already registered"},
		{`{"name":"x","kind":"echo","description":"` + strings.Repeat("a", 2<<20) + `"}`, 413, "", "larger than"},
	} {
		code, body := adminCall(t, "POST", api, "adm1n", c.body)
		var e gateway.AdminErrorBody
		json.Unmarshal([]byte(body), &e)
		if code != c.code || e.Field != c.field || !strings.Contains(e.Error, c.want) {
			b := c.body
			if len(b) > 80 {
				b = b[:80]
			}
			t.Errorf("%s: %d %s, want %d field %q and %q", b, code, body, c.code, c.field, c.want)
		}
	}
	// What the admin API shows of a registration: never its secrets.
	code, body := adminCall(t, "POST", api, "adm1n", `{"name":"svc","kind":"http","url":"http://u:pw@127.0.0.1:1/run?key=qsecret",
		"credentials":{"bearer_token":"tok-secret"},"headers":{"X-Extra":"hdr-secret"},
		"auth":{"bearer_tokens":{"carol":"caller-secret"}},"description":"${A2ABRIDGE_TEST_DESC}"}`)
	if code != 201 {
		t.Fatalf("register svc: %d %s", code, body)
	}
	_, listed := adminCall(t, "GET", api, "adm1n", "")
	for _, secret := range []string{"tok-secret", "hdr-secret", "caller-secret", "qsecret", "pw@", "described by the environment"} {
		if strings.Contains(body+listed, secret) {
			t.Errorf("the admin API shows %q:\n%s\n%s", secret, body, listed)
		}
	}
	for _, shown := range []string{`"X-Extra":"***"`, `"carol":"***"`, `"description":"${A2ABRIDGE_TEST_DESC}"`, `"url":"http://127.0.0.1:1/run?***"`} {
		if !strings.Contains(body, shown) {
			t.Errorf("the registration lacks %s:\n%s", shown, body)
		}
	}
	if code, body := adminCall(t, "DELETE", api+"/echo2", "adm1n", ""); code != 409 {
		t.Fatalf("removing a config agent: %d %s", code, body)
	}
	if code, body := adminCall(t, "DELETE", api+"/nobody", "adm1n", ""); code != 404 {
		t.Fatalf("removing an unknown agent: %d %s", code, body)
	}

	// After a restart the registered agent is back; the removed ones are
	// tombstones, one of them (chatty) now shadowed by an agent of the
	// configuration file of that name, which serves its tasks.
	os.WriteFile(cfg, []byte(adminTestConfig+`  chatty:
    kind: echo
`), 0o600)
	child.Cmd.Process.Signal(os.Interrupt)
	if exited, _ := child.Wait(30 * time.Second); !exited {
		t.Fatal("serve did not stop")
	}
	// svc cannot be rebuilt without its variable: it is listed with its
	// problem, and can be removed.
	os.Unsetenv("A2ABRIDGE_TEST_DESC")
	startChild(t, "--config", cfg, "--data", data, "--addr", addr)
	if r := testutil.CallRPC(t, base+"/a2a/myecho", "message/send", testutil.SendParams03("again", "m4", "")); r.Result.Status.State != "completed" {
		t.Fatalf("the registered agent after a restart: %+v", r)
	}
	// The removed agents' tasks are still readable after the restart; a
	// new message still gets the 404 of an unknown agent.
	got = testutil.CallRPC(t, base+"/a2a/slowy", "tasks/get", `{"id":"`+taskID+`"}`)
	if got.Result.Status.State != "failed" || !strings.Contains(got.Result.Status.Message.Parts[0].Text, "slowy was removed") {
		t.Fatalf("the removed agent's task after a restart: %+v", got)
	}
	if got := testutil.CallRPC(t, base+"/a2a/chatty", "tasks/get", `{"id":"`+chatTask+`"}`); got.Result.Status.State != "failed" {
		t.Fatalf("the other removed agent's task after a restart: %+v", got)
	}
	removedAnswersUnknown(t, base, "slowy", "m6")
	code, body = adminCall(t, "GET", api, "adm1n", "")
	if code != 200 || !strings.Contains(body, `"myecho"`) || !strings.Contains(body, `"name":"slowy"`) || !strings.Contains(body, `"removed":true`) {
		t.Fatalf("list after a restart: %d %s", code, body)
	}
	// Deleting a tombstone: the removed agent's tasks are no longer served.
	if code, body := adminCall(t, "DELETE", api+"/slowy", "adm1n", ""); code != 204 {
		t.Fatalf("deleting a tombstone: %d %s", code, body)
	}
	if code, _ := adminCall(t, "GET", api+"/slowy", "adm1n", ""); code != 404 {
		t.Fatalf("a deleted tombstone in the admin API: %d", code)
	}
	if resp, _ := testutil.RPC(t, base+"/a2a/slowy", "tasks/get", `{"id":"`+taskID+`"}`); resp.StatusCode != 404 {
		t.Fatalf("a deleted tombstone's tasks: %v", resp)
	}
	code, body = adminCall(t, "GET", api+"/svc", "adm1n", "")
	if code != 200 || !strings.Contains(body, `"running":false`) || !strings.Contains(body, "A2ABRIDGE_TEST_DESC is not set") {
		t.Fatalf("a registration that could not be restored: %d %s", code, body)
	}
	if code, body := adminCall(t, "DELETE", api+"/svc", "adm1n", ""); code != 204 {
		t.Fatalf("removing a registration that could not be restored: %d %s", code, body)
	}
	if code, _ := adminCall(t, "GET", api+"/svc", "adm1n", ""); code != 404 {
		t.Fatalf("after removing it: %d", code)
	}
	// Without an admin block, there is no admin API.
	code, _ = adminCall(t, "GET", "http://"+startServeNoAdmin(t)+"/api/v1/agents", "adm1n", "")
	if code != 404 {
		t.Fatalf("admin API without admin tokens: %d", code)
	}
}

// removedAnswersUnknown checks that a message to the removed agent name
// is answered exactly as one to an unknown agent, storing nothing: over
// JSON-RPC, through the CLI (exit 4, the hint listing the hosted agents
// without it) and through /simple/{agent} (404 with the caller's task_id).
func removedAnswersUnknown(t *testing.T, base, name, messageID string) {
	t.Helper()
	send := testutil.RPCBody("message/send", testutil.SendParams03("1", messageID, ""))
	code, unknown := adminCall(t, "POST", base+"/a2a/no-such-agent", "", send)
	want := strings.ReplaceAll(unknown, `\"no-such-agent\"`, `\"`+name+`\"`)
	if code != 404 || strings.Contains(want, `"name":"`+name+`"`) {
		t.Fatalf("a message to an unknown agent: %d %s", code, unknown)
	}
	if code, body := adminCall(t, "POST", base+"/a2a/"+name, "", send); code != 404 || body != want {
		t.Fatalf("a message to the removed agent %s: %d %s, want 404 %s", name, code, body, want)
	}
	// Nothing stored under that message id: the unknown agent's answer again.
	if code, body := adminCall(t, "POST", base+"/a2a/"+name, "", send); code != 404 || body != want {
		t.Fatalf("the message to the removed agent %s again: %d %s", name, code, body)
	}
	_, errs, code := run(t, "", "send", base+"/a2a/"+name, "hello", "--protocol", "1.0")
	if code != ExitTransport || !strings.Contains(errs, "HTTP 404") || !strings.Contains(errs, "hint: no agent by that name is hosted there") || strings.Contains(errs, "/a2a/"+name+"\n") {
		t.Fatalf("a2abridge send to the removed agent %s: exit %d %q", name, code, errs)
	}
	code, body := adminCall(t, "POST", base+"/simple/"+name, "", `{"task_id":"job-9","input":{"text":"hi"}}`)
	if code != 404 || !strings.Contains(body, `"task_id":"job-9"`) || !strings.Contains(body, "no agent named") {
		t.Fatalf("/simple/%s: %d %s", name, code, body)
	}
}

func startServeNoAdmin(t *testing.T) string {
	addr := freeAddr(t)
	startChild(t, "--memory", "--addr", addr)
	return addr
}

// TestAdminRegistryFormat: registrations in the registry format of the
// dual-protocol design reach their backend with the credentials auth_type
// names (bearer, api_key with its header), and timeout_ms becomes the
// kind's timeout (a2a: a duration).
func TestAdminRegistryFormat(t *testing.T) {
	seen := make(chan http.Header, 8)
	backend := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			TaskID string `json:"task_id"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		seen <- r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"task_id":%q,"status":"success","output":{"text":"ok"},"error":null}`, req.TaskID)
	}))
	cfg := writeConfig(t, "admin:\n  bearer_tokens:\n    ops: adm1n\n  env: [A2ABRIDGE_TEST_KEY]\n")
	t.Setenv("A2ABRIDGE_TEST_KEY", "k3y-from-env")
	addr := freeAddr(t)
	base := "http://" + addr
	api := base + "/api/v1/agents"
	startChild(t, "--config", cfg, "--memory", "--addr", addr)

	for _, c := range []struct {
		name, body, header, want string
	}{
		{"bearer", `{"name":"bearer","url":%q,"protocol":"simple-a2a","auth_type":"bearer","protocol_config":{"token":"t0ken"}}`, "Authorization", "Bearer t0ken"},
		{"apikey", `{"name":"apikey","url":%q,"protocol":"simple-a2a","auth_type":"api_key","protocol_config":{"api_key":"${A2ABRIDGE_TEST_KEY}","api_key_header":"X-Backend-Key"}}`, "X-Backend-Key", "k3y-from-env"},
		{"none", `{"name":"none","url":%q,"protocol":"simple-a2a","auth_type":"none","timeout_ms":2500}`, "Authorization", ""},
	} {
		if code, body := adminCall(t, "POST", api, "adm1n", fmt.Sprintf(c.body, backend.URL)); code != 201 {
			t.Fatalf("%s: register: %d %s", c.name, code, body)
		}
		if r := testutil.CallRPC(t, base+"/a2a/"+c.name, "message/send", testutil.SendParams03("hi", "m-"+c.name, "")); r.Result.Status.State != "completed" {
			t.Fatalf("%s: %+v", c.name, r)
		}
		if got := testutil.Receive(t, seen, 10*time.Second, c.name+": the backend's call").Get(c.header); got != c.want {
			t.Errorf("%s: the backend got %s %q, want %q", c.name, c.header, got, c.want)
		}
		// The registration shows the credential masked, never its value.
		_, body := adminCall(t, "GET", api+"/"+c.name, "adm1n", "")
		if strings.Contains(body, "t0ken") || strings.Contains(body, "k3y-from-env") {
			t.Errorf("%s: the admin API shows a credential: %s", c.name, body)
		}
		if c.name == "none" && !strings.Contains(body, `"timeout_ms":2500`) {
			t.Errorf("none: timeout_ms not kept: %s", body)
		}
	}
	// jsonrpc-2.0 → kind a2a, timeout_ms as its timeout (a duration). The
	// remote is our own echo agent.
	reg := fmt.Sprintf(`{"name":"remote","url":%q,"protocol":"jsonrpc-2.0","timeout_ms":1500,"auth_type":"bearer","protocol_config":{"token":"r3mote"}}`, base+"/a2a/echo")
	if code, body := adminCall(t, "POST", api, "adm1n", reg); code != 201 || !strings.Contains(body, `"kind":"a2a"`) || !strings.Contains(body, `"timeout":"1.5s"`) || strings.Contains(body, "r3mote") {
		t.Fatalf("register remote: %d %s", code, body)
	}
	if r := testutil.CallRPC(t, base+"/a2a/remote", "message/send", testutil.SendParams03("hello remote", "m-remote", "")); r.Result.Status.State != "completed" {
		t.Fatalf("remote: %+v", r)
	}
}
