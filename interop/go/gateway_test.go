package interop

// The whole gateway as a user runs it: the a2abridge binary,
// `serve --config` with nothing but an admin block, agents registered at
// runtime with curl in the registry format, called by an official A2A
// client and, with curl again, through POST /simple/{agent}. Behind it:
//
//	simple1   kind http (registered as "simple-a2a"): ../python/backend.py,
//	          a Python standard-library HTTP service that echoes its input
//	jsagent   kind a2a (registered as "jsonrpc-2.0"): the echo agent of
//	          ../js/peer-server-v1.mjs (@a2a-js/sdk 1.3.0)

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	simplebridge "github.com/a2abridge/a2abridge/bridge/simple"

	a2av2 "github.com/a2aproject/a2a-go/v2/a2a"
	clientv2 "github.com/a2aproject/a2a-go/v2/a2aclient"
	cardv2 "github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// gatewayToken is the admin bearer token, given to serve as ${ADMIN_TOKEN}.
const gatewayToken = "gateway-admin-0123456789"

// gatewayConfig is the whole configuration file: the admin API, nothing else.
const gatewayConfig = `admin:
  bearer_tokens:
    ops: ${ADMIN_TOKEN}
`

// TestGateway registers an http agent (Python backend) and an a2a agent
// (the JS 1.3.0 peer) with curl through the admin API of `a2abridge serve`,
// calls both with the a2a-go v2 client and with curl through
// /simple/{agent} (twice with the same task_id: answered from the task, the
// backend and the peer are not called again), and removes one.
func TestGateway(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		skipOrFail(t, "curl is not on PATH: the gateway test drives the admin API and /simple/{agent} with the real curl binary (CI has it)")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		skipOrFail(t, "python3 is not on PATH: the gateway test's simple-dialect backend is ../python/backend.py (CI has it)")
	}
	js := v1StartJSPeerArgs(t)
	if js.skip != "" {
		skipOrFail(t, js.skip)
	}
	backendPy, err := filepath.Abs(filepath.Join("..", "python", "backend.py"))
	if err != nil {
		t.Fatal(err)
	}
	backend := startPeerCommand(t, "", python, backendPy, "--port", "0").base

	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(cfg, []byte(gatewayConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ADMIN_TOKEN", gatewayToken) // inherited by the server process
	srv := startServer(t, "--config", cfg, "--memory").base
	api := srv + "/api/v1/agents"
	g := &gateway{t: t, curl: curl}

	// --- register, with curl, in the registry format
	if code, body := g.do("GET", api, "", ""); code != http.StatusUnauthorized {
		t.Fatalf("GET %s without the admin token: %d %s", api, code, body)
	}
	simpleReg := fmt.Sprintf(`{"name":"simple1","url":%q,"protocol":"simple-a2a","timeout_ms":5000}`, backend+"/echo")
	jsCard := js.base + "/a2a/echo/.well-known/agent-card.json"
	jsReg := fmt.Sprintf(`{"name":"jsagent","url":%q,"protocol":"jsonrpc-2.0"}`, jsCard)
	for _, c := range []struct {
		reg, name, kind string
		spec            map[string]any
	}{
		{simpleReg, "simple1", "http", map[string]any{"name": "simple1", "kind": "http", "url": backend + "/echo", "timeout_ms": 5000.0}},
		{jsReg, "jsagent", "a2a", map[string]any{"name": "jsagent", "kind": "a2a", "url": jsCard}},
	} {
		code, body := g.do("POST", api, gatewayToken, c.reg)
		if code != http.StatusCreated {
			t.Fatalf("register %s: HTTP %d %s", c.name, code, body)
		}
		var a gwAgent
		g.decode(body, &a)
		url := srv + "/a2a/" + c.name
		if a.Name != c.name || a.Kind != c.kind || a.Source != "admin" || a.URL != url ||
			a.Card != url+"/.well-known/agent-card.json" || !a.Running || fmt.Sprint(a.Spec) != fmt.Sprint(c.spec) {
			t.Errorf("register %s: 201 with %s, want kind %s, source admin, url %s, spec %v", c.name, body, c.kind, url, c.spec)
		}
	}
	code, body := g.do("GET", api, gatewayToken, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", api, code, body)
	}
	if got, want := g.list(body), []string{"echo config", "chat config", "slow config", "jsagent admin", "simple1 admin"}; !slices.Equal(got, want) {
		t.Fatalf("GET %s lists %q, want %q", api, got, want)
	}

	// --- the official a2a-go v2 client (default resolver and factory: A2A 1.0)
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	simple := gwV2Client(t, ctx, srv+"/a2a/simple1")
	task := v1SendTask(t, ctx, simple, v1Text("hello gateway", "", ""))
	if task.Status.State != a2av2.TaskStateCompleted || v1ArtifactText(task) != "hello gateway" {
		t.Fatalf("simple1: %s, artifacts %q; want completed with the echo", task.Status.State, v1ArtifactText(task))
	}
	if calls := g.calls(backend); len(calls) != 1 || calls[0].TaskID != string(task.ID) || fmt.Sprint(calls[0].Input) != "map[text:hello gateway]" {
		t.Fatalf("the backend got %+v, want one call for task %s with input {text: hello gateway}", calls, task.ID)
	}
	// The same agent, registered at runtime, over gRPC (a2a-go v2's
	// a2agrpc/v1 transport, dialing the card's GRPC interface).
	simpleGRPC := gwV2GRPCClient(t, ctx, srv+"/a2a/simple1")
	task = v1SendTask(t, ctx, simpleGRPC, v1Text("hello grpc", "", ""))
	if task.Status.State != a2av2.TaskStateCompleted || v1ArtifactText(task) != "hello grpc" {
		t.Fatalf("simple1 over gRPC: %s, artifacts %q; want completed with the echo", task.Status.State, v1ArtifactText(task))
	}
	if calls := g.calls(backend); len(calls) != 2 || calls[1].TaskID != string(task.ID) || fmt.Sprint(calls[1].Input) != "map[text:hello grpc]" {
		t.Fatalf("the backend got %+v, want a second call for task %s with input {text: hello grpc}", calls, task.ID)
	}

	jsagent := gwV2Client(t, ctx, srv+"/a2a/jsagent")
	task = v1SendTask(t, ctx, jsagent, v1Text("hello js", "", ""))
	remoteID := remoteIDOf(task.Metadata)
	if task.Status.State != a2av2.TaskStateCompleted || v1ArtifactText(task) != "hello js" || remoteID == "" {
		t.Fatalf("jsagent: %s, artifacts %q, remote task %q; want completed with the echo and the remote task id", task.Status.State, v1ArtifactText(task), remoteID)
	}
	peer := gwV2Client(t, ctx, js.base+"/a2a/echo")
	pt, err := peer.GetTask(ctx, &a2av2.GetTaskRequest{ID: a2av2.TaskID(remoteID)})
	if err != nil || pt.Status.State != a2av2.TaskStateCompleted || v1ArtifactText(pt) != "hello js" {
		t.Fatalf("the JS peer's task %s: %+v %v", remoteID, pt, err)
	}
	jsGRPC := gwV2GRPCClient(t, ctx, srv+"/a2a/jsagent")
	task = v1SendTask(t, ctx, jsGRPC, v1Text("hello js over grpc", "", ""))
	if task.Status.State != a2av2.TaskStateCompleted || v1ArtifactText(task) != "hello js over grpc" || remoteIDOf(task.Metadata) == "" {
		t.Fatalf("jsagent over gRPC: %s, artifacts %q, remote task %q", task.Status.State, v1ArtifactText(task), remoteIDOf(task.Metadata))
	}

	// --- /simple/{agent} with curl; the same task_id again is answered
	// from the task without calling the backend or the peer again.
	const call = `{"task_id":"t-1","input":{"text":"hi"}}`
	const want = `{"task_id":"t-1","status":"success","output":{"text":"hi"},"error":null}`
	peerTasks := g.peerTaskCount(ctx, peer)
	for i := 1; i <= 2; i++ {
		for _, agent := range []string{"simple1", "jsagent"} {
			code, body := g.do("POST", srv+"/simple/"+agent, "", call)
			if code != http.StatusOK || strings.TrimSpace(body) != want {
				t.Fatalf("call %d of /simple/%s: HTTP %d %s, want 200 %s", i, agent, code, body, want)
			}
		}
		calls := g.calls(backend)
		// The key is derived from the A2A task id and the messageId the
		// endpoint gave the message ("simple:" + the caller's task_id).
		if len(calls) != 3 || fmt.Sprint(calls[2].Input) != "map[text:hi]" || calls[2].IdempotencyKey != simplebridge.IdempotencyKey(calls[2].TaskID, "simple:t-1") {
			t.Fatalf("after call %d the backend got %+v, want a third call with input {text: hi} and the Idempotency-Key of messageId simple:t-1", i, calls)
		}
		if n := g.peerTaskCount(ctx, peer); n != peerTasks+1 {
			t.Fatalf("after call %d the JS peer's echo has %d tasks, want %d", i, n, peerTasks+1)
		}
	}

	// --- remove simple1 with curl
	if code, body := g.do("DELETE", api+"/simple1", gatewayToken, ""); code != http.StatusNoContent {
		t.Fatalf("DELETE simple1: %d %s", code, body)
	}
	code, body = g.do("GET", api, gatewayToken, "")
	// simple1 is listed as removed (its tombstone keeps its tasks readable).
	if got, want := g.list(body), []string{"echo config", "chat config", "slow config", "jsagent admin", "simple1 admin"}; code != http.StatusOK || !slices.Equal(got, want) {
		t.Fatalf("GET %s after the removal: %d, lists %q, want %q", api, code, got, want)
	}
	if code, body := g.do("GET", api+"/simple1", gatewayToken, ""); code != http.StatusOK || !strings.Contains(body, `"removed":true`) {
		t.Fatalf("GET the removed simple1: %d %s", code, body)
	}
	// Its finished task stays readable; a new task gets 404, as for an
	// agent never hosted, and nothing is stored.
	if code, body := g.do("POST", srv+"/simple/simple1", "", call); code != http.StatusOK || strings.TrimSpace(body) != want {
		t.Errorf("/simple/simple1 t-1 after the removal: HTTP %d %s, want 200 %s", code, body, want)
	}
	code, body = g.do("POST", srv+"/simple/simple1", "", `{"task_id":"t-2","input":{"text":"hi"}}`)
	var r struct {
		TaskID string `json:"task_id"`
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	g.decode(body, &r)
	if code != http.StatusNotFound || r.Status != "error" || r.TaskID != "t-2" || !strings.Contains(r.Error, `no agent named "simple1"`) {
		t.Errorf("/simple/simple1 t-2 after the removal: HTTP %d %s, want 404 naming no agent simple1", code, body)
	}
	// Over gRPC the removed agent is NOT_FOUND, naming it.
	if _, err := simpleGRPC.SendMessage(ctx, v1Text("after the removal", "", "")); err == nil || !strings.Contains(err.Error(), `No agent named "simple1" is hosted here`) {
		t.Errorf("simple1 over gRPC after the removal: %v, want NOT_FOUND naming simple1", err)
	}
	if n := len(g.calls(backend)); n != 3 {
		t.Errorf("the backend was called %d times, want 3", n)
	}
	// The other agent still answers.
	task = v1SendTask(t, ctx, jsagent, v1Text("still here", "", ""))
	if task.Status.State != a2av2.TaskStateCompleted || v1ArtifactText(task) != "still here" {
		t.Errorf("jsagent after the removal of simple1: %s %q", task.Status.State, v1ArtifactText(task))
	}
}

// gateway runs curl against the server.
type gateway struct {
	t    *testing.T
	curl string
}

// do runs `curl -X METHOD URL [-H Authorization] [--data-binary BODY]` and
// returns the HTTP status and the body.
func (g *gateway) do(method, url, token, body string) (int, string) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(g.t.Context(), callTimeout)
	defer cancel()
	args := []string{"-sS", "--max-time", "30", "-X", method, "-w", "\n%{http_code}"}
	if token != "" {
		args = append(args, "-H", "Authorization: Bearer "+token)
	}
	if body != "" {
		args = append(args, "-H", "Content-Type: application/json", "--data-binary", body)
	}
	cmd := exec.CommandContext(ctx, g.curl, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		g.t.Fatalf("curl -X %s %s: %v\n%s", method, url, err, stderr.String())
	}
	out := stdout.String()
	i := strings.LastIndexByte(out, '\n')
	code, err := strconv.Atoi(out[i+1:])
	if i < 0 || err != nil {
		g.t.Fatalf("curl -X %s %s: no status code at the end of %q", method, url, out)
	}
	return code, out[:i]
}

func (g *gateway) decode(body string, v any) {
	g.t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		g.t.Fatalf("not the JSON expected (%v): %s", err, body)
	}
}

// gwAgent is an agent in the admin API's answers.
type gwAgent struct {
	Name, Kind, Source, URL, Card string
	Running                       bool
	Spec                          map[string]any
}

// list reads GET /api/v1/agents: "NAME SOURCE" per agent, in order.
func (g *gateway) list(body string) []string {
	g.t.Helper()
	var l struct{ Agents []gwAgent }
	g.decode(body, &l)
	var out []string
	for _, a := range l.Agents {
		out = append(out, a.Name+" "+a.Source)
	}
	return out
}

// gwCall is one call the Python backend received.
type gwCall struct {
	TaskID         string `json:"task_id"`
	Input          any    `json:"input"`
	IdempotencyKey string `json:"idempotency_key"`
}

// calls asks the Python backend for the calls it received (with curl).
func (g *gateway) calls(backend string) []gwCall {
	g.t.Helper()
	code, body := g.do("GET", backend+"/calls", "", "")
	if code != http.StatusOK {
		g.t.Fatalf("GET %s/calls: %d %s", backend, code, body)
	}
	var c struct{ Calls []gwCall }
	g.decode(body, &c)
	return c.Calls
}

// peerTaskCount is the number of tasks of the JS peer's echo agent.
func (g *gateway) peerTaskCount(ctx context.Context, peer *clientv2.Client) int {
	g.t.Helper()
	l, err := peer.ListTasks(ctx, &a2av2.ListTasksRequest{})
	if err != nil {
		g.t.Fatalf("ListTasks at the JS peer: %v", err)
	}
	return int(l.TotalSize)
}

// gwV2GRPCClient is an a2a-go v2 client for the agent at url over the
// card's GRPC interface: the default resolver and factory, the gRPC
// transport added (cleartext credentials) and preferred; at cleanup every
// call must have gone to that interface.
func gwV2GRPCClient(t *testing.T, ctx context.Context, url string) *clientv2.Client {
	t.Helper()
	card, err := cardv2.DefaultResolver.Resolve(ctx, url)
	if err != nil {
		t.Fatalf("resolve %s: %v", url, err)
	}
	want := v1Iface(card, a2av2.TransportProtocolGRPC)
	if want == nil {
		t.Fatalf("%s: the card has no GRPC interface: %s", url, v1Ifaces(card))
	}
	obs := &v1Observer{}
	c, err := clientv2.NewFromCard(ctx, card, clientv2.WithConfig(clientv2.Config{PreferredTransports: []a2av2.TransportProtocol{a2av2.TransportProtocolGRPC}}),
		clientv2.WithCallInterceptors(obs), a2agrpcv1.WithGRPCTransport(gogrpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatalf("gRPC client for %s: %v", url, err)
	}
	t.Cleanup(func() {
		_ = c.Destroy()
		for _, u := range obs.urls() {
			if u != want.URL {
				t.Errorf("a call went to %s, want the GRPC interface %s", u, want.URL)
			}
		}
	})
	return c
}

// gwV2Client is an a2a-go v2 client with the defaults for the agent at url.
func gwV2Client(t *testing.T, ctx context.Context, url string) *clientv2.Client {
	t.Helper()
	card, err := cardv2.DefaultResolver.Resolve(ctx, url)
	if err != nil {
		t.Fatalf("resolve %s: %v", url, err)
	}
	c, err := clientv2.NewFromCard(ctx, card)
	if err != nil {
		t.Fatalf("client for %s: %v", url, err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}
