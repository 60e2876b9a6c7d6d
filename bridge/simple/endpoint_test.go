package simple_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/bridge/simple"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
)

// countingEcho answers each message with an artifact of its parts and
// counts its executions.
type countingEcho struct{ runs atomic.Int32 }

func (e *countingEcho) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	e.runs.Add(1)
	art := a2a.Artifact{ArtifactID: a2a.NewID(), Name: "echo", Parts: req.Message.Parts}
	if err := t.AddArtifact(ctx, art, false, true); err != nil {
		return err
	}
	return t.Complete(ctx, "")
}

// asker asks for a name, then greets.
type asker struct{ runs atomic.Int32 }

func (a *asker) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	a.runs.Add(1)
	users := 0
	for _, m := range req.Task.History {
		if m.Role == a2a.RoleUser {
			users++
		}
	}
	if users == 1 {
		return t.RequireInput(ctx, "What is your name?")
	}
	name := ""
	for _, p := range req.Message.Parts {
		if tp, ok := p.Content.(a2a.Text); ok {
			name += string(tp)
		}
	}
	art := a2a.Artifact{ArtifactID: a2a.NewID(), Parts: []a2a.Part{a2a.NewTextPart("Hello, " + name + "!")}}
	if err := t.AddArtifact(ctx, art, false, true); err != nil {
		return err
	}
	return t.Complete(ctx, "")
}

// gated works until release is closed, then completes with "done".
type gated struct {
	runs    atomic.Int32
	started chan struct{}
	release chan struct{}
}

func newGated() *gated { return &gated{started: make(chan struct{}, 16), release: make(chan struct{})} }

func (g *gated) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	g.runs.Add(1)
	g.started <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	art := a2a.Artifact{ArtifactID: a2a.NewID(), Parts: []a2a.Part{a2a.NewTextPart("done")}}
	if err := t.AddArtifact(ctx, art, false, true); err != nil {
		return err
	}
	return t.Complete(ctx, "")
}

// inlineGated is gated, run inline by a blocking SendMessage.
type inlineGated struct{ *gated }

func (inlineGated) Inline() bool { return true }

type endpointFixture struct {
	*a2aServer
	echo, authEcho, cookieEcho *countingEcho
	ask                        *asker
	slow, slowIn               *gated
}

func newEndpointFixture(t *testing.T) *endpointFixture {
	t.Helper()
	f := &endpointFixture{a2aServer: newA2AServer(t), echo: &countingEcho{}, authEcho: &countingEcho{},
		cookieEcho: &countingEcho{}, ask: &asker{},
		slow: newGated(), slowIn: newGated()}
	f.add(t, "echo", f.echo, server.HandlerOptions{})
	f.add(t, "ask", f.ask, server.HandlerOptions{})
	f.add(t, "slow", f.slow, server.HandlerOptions{})
	f.add(t, "slow-inline", inlineGated{f.slowIn}, server.HandlerOptions{})
	f.add(t, "fail", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		return u.Fail(ctx, "no way")
	}), server.HandlerOptions{})
	f.add(t, "reject", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		return u.SetStatus(ctx, a2a.TaskStateRejected, nil)
	}), server.HandlerOptions{})
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"alice": "tok-alice", "bob": "tok-bob"})
	if err != nil {
		t.Fatal(err)
	}
	f.add(t, "private", f.authEcho, server.HandlerOptions{Auth: auth.Set{bearer}})
	cookie, err := auth.NewAPIKey("session", "cookie", "session", map[string]string{"alice": "k3y"})
	if err != nil {
		t.Fatal(err)
	}
	f.add(t, "cookie", f.cookieEcho, server.HandlerOptions{Auth: auth.Set{cookie}})
	f.start(t, simple.EndpointOptions{MaxBody: 4096})
	t.Cleanup(func() {
		for _, g := range []*gated{f.slow, f.slowIn} {
			select {
			case <-g.release:
			default:
				close(g.release)
			}
		}
	})
	return f
}

type callResult struct {
	code   int
	header http.Header
	resp   *simple.Response
	raw    string
}

// call POSTs body to /simple/{agent}, as application/json unless header
// names another Content-Type.
func (s *a2aServer) call(t *testing.T, agent, body string, header ...string) callResult {
	t.Helper()
	return s.do(t, http.MethodPost, "/simple/"+agent, body, header...)
}

// do sends a request with the headers header (name, value, name, value,
// …; a name again adds a value, an empty value removes the header), and
// "Content-Type: application/json" unless header names it.
func (s *a2aServer) do(t *testing.T, method, path, body string, header ...string) callResult {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	seen := map[string]bool{}
	for i := 0; i+1 < len(header); i += 2 {
		name, v := http.CanonicalHeaderKey(header[i]), header[i+1]
		switch {
		case v == "":
			req.Header.Del(name)
		case seen[name]:
			req.Header.Add(name, v)
		default:
			req.Header.Set(name, v)
		}
		seen[name] = true
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q; body %s", method, path, ct, b)
	}
	r, err := simple.ParseResponse(b)
	if err != nil {
		t.Fatalf("%s %s: answer %s: %v", method, path, b, err)
	}
	return callResult{code: resp.StatusCode, header: resp.Header, resp: r, raw: strings.TrimSpace(string(b))}
}

// canonical is a JSON document with its keys sorted.
func canonical(t *testing.T, doc string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return jsonOf(t, v)
}

// want checks an answer's status code and its JSON (keys in any order).
func (c callResult) want(t *testing.T, code int, doc string) {
	t.Helper()
	if c.code != code || canonical(t, c.raw) != canonical(t, doc) {
		t.Fatalf("got HTTP %d %s\nwant HTTP %d %s", c.code, c.raw, code, doc)
	}
}

// wantError checks an error answer: its status code and a part of its error.
func (c callResult) wantError(t *testing.T, code int, part string) {
	t.Helper()
	if c.code != code || c.resp.Status != simple.StatusError || c.resp.Error == nil || !strings.Contains(*c.resp.Error, part) {
		t.Fatalf("got HTTP %d %s\nwant HTTP %d, an error containing %q", c.code, c.raw, code, part)
	}
}

func TestEndpointCall(t *testing.T) {
	f := newEndpointFixture(t)
	for _, tc := range []struct{ input, output string }{
		{`{"text":"hi"}`, `{"text":"hi"}`},
		{`"hi"`, `{"text":"hi"}`},
		{`{"a":1,"b":[true,null]}`, `{"a":1,"b":[true,null]}`},
		{`{"text":"hi","n":12345678901234567890}`, `{"n":12345678901234567890,"text":"hi"}`},
		{`[1,2]`, `{"data":[[1,2]]}`},
		{`{"text":"see","files":[{"name":"a.txt","mediaType":"text/plain","bytes":"aGk="},{"uri":"https://example.com/x"}]}`,
			`{"files":[{"bytes":"aGk=","mediaType":"text/plain","name":"a.txt"},{"uri":"https://example.com/x"}],"text":"see"}`},
	} {
		id := a2a.NewID()
		f.call(t, "echo", `{"task_id":"`+id+`","input":`+tc.input+`}`).
			want(t, 200, `{"error":null,"output":`+tc.output+`,"status":"success","task_id":"`+id+`"}`)
	}
	// Without a task_id, one is generated and returned.
	r := f.call(t, "echo", `{"input":{"text":"hi"}}`)
	if r.code != 200 || r.resp.TaskID == "" || r.resp.Status != simple.StatusSuccess {
		t.Fatalf("got HTTP %d %s", r.code, r.raw)
	}
	again := f.call(t, "echo", `{"task_id":"`+r.resp.TaskID+`"}`)
	again.want(t, 200, r.raw)

	f.call(t, "fail", `{"task_id":"f1","input":"x"}`).want(t, 200, `{"error":"no way","output":null,"status":"error","task_id":"f1"}`)
	f.call(t, "reject", `{"task_id":"r1","input":"x"}`).want(t, 200, `{"error":"the task was rejected","output":null,"status":"error","task_id":"r1"}`)
}

func TestEndpointIdempotent(t *testing.T) {
	f := newEndpointFixture(t)
	first := f.call(t, "echo", `{"task_id":"same","input":{"text":"one"}}`)
	first.want(t, 200, `{"error":null,"output":{"text":"one"},"status":"success","task_id":"same"}`)
	f.call(t, "echo", `{"task_id":"same","input":{"text":"one"}}`).want(t, 200, first.raw)
	// Another input under the same task_id: still the same task's result.
	f.call(t, "echo", `{"task_id":"same","input":{"text":"two"}}`).want(t, 200, first.raw)
	f.call(t, "echo", `{"task_id":"same"}`).want(t, 200, first.raw)
	if n := f.echo.runs.Load(); n != 1 {
		t.Fatalf("the agent ran %d times, want 1", n)
	}
}

func TestEndpointInputRequired(t *testing.T) {
	f := newEndpointFixture(t)
	q := `{"error":null,"output":{"text":"What is your name?"},"status":"input_required","task_id":"a1"}`
	f.call(t, "ask", `{"task_id":"a1","input":"hi"}`).want(t, 200, q)
	// A retry of that call, and a poll without input: the question again.
	f.call(t, "ask", `{"task_id":"a1","input":"hi"}`).want(t, 200, q)
	f.call(t, "ask", `{"task_id":"a1"}`).want(t, 200, q)
	if n := f.ask.runs.Load(); n != 1 {
		t.Fatalf("the agent ran %d times, want 1", n)
	}
	// The answer continues the task.
	done := `{"error":null,"output":{"text":"Hello, Ada!"},"status":"success","task_id":"a1"}`
	f.call(t, "ask", `{"task_id":"a1","input":{"text":"Ada"}}`).want(t, 200, done)
	// A retry of the answer, and a later call: the result.
	f.call(t, "ask", `{"task_id":"a1","input":{"text":"Ada"}}`).want(t, 200, done)
	f.call(t, "ask", `{"task_id":"a1","input":"something else"}`).want(t, 200, done)
	if n := f.ask.runs.Load(); n != 2 {
		t.Fatalf("the agent ran %d times, want 2", n)
	}
	// It is one A2A task of two user messages, with the documented ids.
	h, _ := f.host.Handler("ask")
	task, err := h.MessageTask(context.Background(), "simple:a1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range task.History {
		if m.Role == a2a.RoleUser {
			ids = append(ids, m.MessageID)
		}
	}
	if len(ids) != 2 || ids[0] != "simple:a1" || !strings.HasPrefix(ids[1], "simple:a1:") || len(ids[1]) != len("simple:a1:")+16 {
		t.Fatalf("user message ids %q", ids)
	}
}

func TestEndpointTimeout(t *testing.T) {
	f := newEndpointFixture(t)
	for agent, g := range map[string]*gated{"slow": f.slow, "slow-inline": f.slowIn} {
		t.Run(agent, func(t *testing.T) {
			f.call(t, agent, `{"task_id":"t1","input":"x","timeout_ms":50}`).
				want(t, 504, `{"error":"`+simple.TimeoutMessage+`","output":null,"status":"error","task_id":"t1"}`)
			<-g.started
			// Still working: a call waits for the task (here: until it ends
			// again); then it is released and a call gets the result.
			f.call(t, agent, `{"task_id":"t1","timeout_ms":50}`).wantError(t, 504, simple.TimeoutMessage)
			type raw struct {
				code int
				body string
				err  error
			}
			waiting := make(chan raw, 1)
			go func() {
				resp, err := http.Post(f.url+"/simple/"+agent, "application/json", strings.NewReader(`{"task_id":"t1","timeout_ms":60000}`))
				if err != nil {
					waiting <- raw{err: err}
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				waiting <- raw{resp.StatusCode, string(b), err}
			}()
			close(g.release)
			done := `{"error":null,"output":{"text":"done"},"status":"success","task_id":"t1"}`
			res := <-waiting
			if res.err != nil {
				t.Fatal(res.err)
			}
			callResult{code: res.code, raw: res.body}.want(t, 200, done)
			f.call(t, agent, `{"task_id":"t1"}`).want(t, 200, done)
			if n := g.runs.Load(); n != 1 {
				t.Fatalf("the agent ran %d times, want 1", n)
			}
		})
	}
}

func TestEndpointAuth(t *testing.T) {
	f := newEndpointFixture(t)
	r := f.call(t, "private", `{"task_id":"p1","input":"hi"}`)
	r.wantError(t, 401, "Authentication required")
	if r.header.Get("WWW-Authenticate") == "" {
		t.Fatal("401 without WWW-Authenticate")
	}
	f.call(t, "private", `{"task_id":"p1","input":"hi"}`, "Authorization", "Bearer wrong").wantError(t, 401, "Invalid credentials")
	alice := f.call(t, "private", `{"task_id":"p1","input":"alice's"}`, "Authorization", "Bearer tok-alice")
	alice.want(t, 200, `{"error":null,"output":{"text":"alice's"},"status":"success","task_id":"p1"}`)
	// Bob's p1 is another task than Alice's.
	f.call(t, "private", `{"task_id":"p1","input":"bob's"}`, "Authorization", "Bearer tok-bob").
		want(t, 200, `{"error":null,"output":{"text":"bob's"},"status":"success","task_id":"p1"}`)
	f.call(t, "private", `{"task_id":"p1"}`, "Authorization", "Bearer tok-alice").want(t, 200, alice.raw)
	if n := f.authEcho.runs.Load(); n != 2 {
		t.Fatalf("the agent ran %d times, want 2", n)
	}
}

// TestEndpointContentType: an agent that authenticates takes JSON bodies
// only (cross-site request forgery with a cookie), before its
// authentication runs; one without authentication takes any.
func TestEndpointContentType(t *testing.T) {
	f := newEndpointFixture(t)
	refused := [][]string{
		{"Content-Type", "text/plain"},
		{"Content-Type", "text/plain;charset=UTF-8"},
		{"Content-Type", "application/x-www-form-urlencoded"},
		{"Content-Type", "multipart/form-data; boundary=xyz"},
		{"Content-Type", ""}, // none: fetch() of an untyped Blob
		{"Content-Type", "application/jsonp"},
		{"Content-Type", "application/+json"},
		{"Content-Type", "text/json"},
		{"Content-Type", "application/json, text/plain"},
		{"Content-Type", "application/json", "Content-Type", "text/plain"},
		{"Content-Type", "application/json; charset"},
	}
	accepted := []string{"application/json", "Application/JSON; charset=utf-8", "application/a2a+json", "application/vnd.example+JSON"}
	creds := map[string][]string{
		"private": {"Authorization", "Bearer tok-alice"},
		"cookie":  {"Cookie", "session=k3y"},
	}
	for agent, cred := range creds {
		for _, ct := range refused {
			// With the credential, without one, and with a wrong one: 415.
			for _, hdr := range [][]string{append(ct, cred...), ct, append(ct, cred[0], "session=wrong")} {
				r := f.call(t, agent, `{"task_id":"c1","input":{"text":"csrf"}}`, hdr...)
				r.wantError(t, 415, "Content-Type must be application/json (or application/*+json) for this agent")
				if r.resp.TaskID != "" || r.header.Get("WWW-Authenticate") != "" {
					t.Fatalf("%s %q: got %s, %v", agent, hdr, r.raw, r.header)
				}
			}
		}
		for i, ct := range accepted {
			id := fmt.Sprintf("ok%d", i)
			f.call(t, agent, `{"task_id":"`+id+`","input":{"text":"json"}}`, append([]string{"Content-Type", ct}, cred...)...).
				want(t, 200, `{"error":null,"output":{"text":"json"},"status":"success","task_id":"`+id+`"}`)
		}
		// A JSON call without the credential goes on to authentication.
		f.call(t, agent, `{"task_id":"c1","input":"x"}`).wantError(t, 401, "Authentication required")
	}
	if n, m := f.authEcho.runs.Load(), f.cookieEcho.runs.Load(); n != int32(len(accepted)) || m != int32(len(accepted)) {
		t.Fatalf("the agents ran %d and %d times, want %d", n, m, len(accepted))
	}
	// Without authentication, any Content-Type (or none) is read as JSON.
	for i, ct := range append([]string{""}, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz", "application/json") {
		id := fmt.Sprintf("any%d", i)
		f.call(t, "echo", `{"task_id":"`+id+`","input":{"text":"hi"}}`, "Content-Type", ct).
			want(t, 200, `{"error":null,"output":{"text":"hi"},"status":"success","task_id":"`+id+`"}`)
	}
}

func TestEndpointBadRequests(t *testing.T) {
	f := newEndpointFixture(t)
	for _, tc := range []struct {
		body string
		code int
		want string
	}{
		{``, 400, "request is empty, not a JSON object"},
		{`{"input":`, 400, "request is not JSON"},
		{`[1]`, 400, "request is a JSON array, not an object"},
		{`null`, 400, "request is null, not a JSON object"},
		{`{"input":"x","inputs":"y"}`, 400, `"inputs": unknown member`},
		{`{"input":"x","Input":"y"}`, 400, `"Input": unknown member`},
		{`{"input":"x","input":"y"}`, 400, "input: appears twice"},
		{`{"task_id":5,"input":"x"}`, 400, "task_id: must be a string, not a number"},
		{`{"task_id":"` + strings.Repeat("x", 257) + `","input":"x"}`, 400, "task_id: longer than 256 bytes"},
		{`{"task_id":"a\nb","input":"x"}`, 400, "task_id: must not hold control characters"},
		{`{"input":"x","timeout_ms":0}`, 400, "timeout_ms: must be a positive integer"},
		{`{"input":"x","timeout_ms":1.5}`, 400, "timeout_ms: must be a positive integer"},
		{`{"input":"x","timeout_ms":"5"}`, 400, "timeout_ms: must be a positive integer (milliseconds), not a string"},
		{`{"input":"x","timeout_ms":600001}`, 400, "timeout_ms: must be at most 600000"},
		{`{"task_id":"new"}`, 400, "input: required"},
		{`{"task_id":"new","input":null}`, 400, "input: required"},
		{`{"input":"` + strings.Repeat("x", 5000) + `"}`, 413, "the request body exceeds 4096 bytes"},
	} {
		f.call(t, "echo", tc.body).wantError(t, tc.code, tc.want)
	}
	f.call(t, "nobody", `{"input":"x"}`).want(t, 404, `{"error":"no agent named \"nobody\"","output":null,"status":"error","task_id":""}`)
	// The caller's task_id comes back with the 404, as with other errors.
	f.call(t, "nobody", `{"task_id":"job-7","input":"x"}`).want(t, 404, `{"error":"no agent named \"nobody\"","output":null,"status":"error","task_id":"job-7"}`)
	r := f.do(t, http.MethodGet, "/simple/echo", "")
	r.wantError(t, 405, "method GET not allowed")
	if r.header.Get("Allow") != "POST" {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
	if n := f.echo.runs.Load(); n != 0 {
		t.Fatalf("the agent ran %d times, want 0", n)
	}
}

// TestChain: an http agent in front of the endpoint (a2abridge in front of
// itself) keeps text, data and the input-required turn.
func TestChain(t *testing.T) {
	f := newEndpointFixture(t)
	for _, name := range []string{"echo", "ask"} {
		a, err := simple.New(simple.Config{URL: f.url + "/simple/" + name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		f.add(t, "via-"+name, a, server.HandlerOptions{})
	}
	task := f.send(t, "via-echo", a2a.NewTextPart("hi"), a2a.NewDataPart(map[string]any{"k": "v"}))
	wantState(t, task, a2a.TaskStateCompleted)
	if got, want := partsJSON(t, onlyArtifact(t, task).Parts), `[{"text":"hi"},{"data":{"k":"v","text":"hi"}}]`; got != want {
		t.Fatalf("artifact %s, want %s", got, want)
	}
	task = f.send(t, "via-ask", a2a.NewTextPart("hi"))
	wantState(t, task, a2a.TaskStateInputRequired)
	if got := testutil.StatusText(task.Status); got != "What is your name?" {
		t.Fatalf("question %q", got)
	}
	m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("Ada"))
	m.TaskID = task.ID
	task = f.sendMsg(t, "via-ask", m, nil)
	wantState(t, task, a2a.TaskStateCompleted)
	if got := partsJSON(t, onlyArtifact(t, task).Parts); got != `[{"text":"Hello, Ada!"}]` {
		t.Fatalf("artifact %s", got)
	}
	if n := f.ask.runs.Load(); n != 2 {
		t.Fatalf("the asking agent ran %d times, want 2", n)
	}
}
