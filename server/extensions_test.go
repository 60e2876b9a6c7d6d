package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

const (
	extRequired = "https://example.com/ext/signed/v1"
	extOptional = "https://example.com/ext/citations/v1"
)

// extRecorder is an agent that records the extensions of each request
// and applies every one it was given, then completes.
type extRecorder struct {
	mu   sync.Mutex
	seen [][]string
}

func (a *extRecorder) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	a.mu.Lock()
	a.seen = append(a.seen, slices.Clone(req.Extensions))
	a.mu.Unlock()
	for _, u := range req.Extensions {
		if !req.ApplyExtension(u) {
			return fmt.Errorf("ApplyExtension(%s) refused", u)
		}
	}
	if req.ApplyExtension("https://example.com/not-activated") {
		return fmt.Errorf("ApplyExtension of an extension not activated was recorded")
	}
	return t.Complete(ctx, "done")
}

func (a *extRecorder) last() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.seen) == 0 {
		return nil
	}
	return a.seen[len(a.seen)-1]
}

// modesAgent asks for input on a task's first message and completes on
// the next one.
func modesAgent() server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
		if len(req.Task.History) <= 1 {
			return t.SetStatus(ctx, a2a.TaskStateInputRequired, t.TextMessage("more"))
		}
		return t.Complete(ctx, "ok")
	})
}

// extServer hosts "req" (a required and an optional extension, an
// extRecorder), "modes" (text/plain and image/* in, a skill taking
// application/pdf), "open" (no defaultInputModes), "wild" (*/*), and the
// built-in echo (whose card declares only the event-log extension).
func extServer(t *testing.T) (string, *extRecorder) {
	t.Helper()
	eng := servertest.Engine(t, server.EngineOptions{})
	host := servertest.Host("echo")
	rec := &extRecorder{}
	c := testutil.Card("req")
	c.Capabilities.Extensions = []a2a.AgentExtension{{URI: extRequired, Required: true}, {URI: extOptional}}
	host.Add(server.NewHandler(eng, "req", rec, c, server.HandlerOptions{}))
	c = testutil.Card("modes")
	c.DefaultInputModes = []string{"text/plain", "image/*"}
	c.Skills[0].InputModes = []string{"application/PDF"}
	host.Add(server.NewHandler(eng, "modes", modesAgent(), c, server.HandlerOptions{}))
	c = testutil.Card("open")
	c.DefaultInputModes = nil
	host.Add(server.NewHandler(eng, "open", modesAgent(), c, server.HandlerOptions{}))
	c = testutil.Card("bare")
	c.DefaultInputModes = []string{"text", "application/json;charset=utf-8"}
	host.Add(server.NewHandler(eng, "bare", modesAgent(), c, server.HandlerOptions{}))
	c = testutil.Card("wild")
	c.DefaultInputModes = []string{"text/plain", "*/*"}
	host.Add(server.NewHandler(eng, "wild", modesAgent(), c, server.HandlerOptions{}))
	host.Add(server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
	ts := testutil.Serve(t, host, eng.Close)
	return ts.URL, rec
}

// do sends one request with the header pairs hdr.
func do(t *testing.T, method, url, body string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	resp, b := testutil.Send(t, method, url, body, hdr...)
	return resp.StatusCode, resp.Header, b
}

// sent is the outcome of one message: the error's code (0 on success)
// and message, the HTTP status and ErrorInfo reason, the task's id and
// state, the response headers and the body.
type sent struct {
	code   int // A2A error code, 0 when none
	status int // HTTP status
	reason string
	msg    string
	taskID string
	state  string
	header http.Header
	body   string
}

// part is one part in the three shapes: 1.0, 0.3 JSON-RPC, 0.3 proto.
type part struct{ v10, v03, p03 string }

var (
	textPart = part{`{"text":"hi"}`, `{"kind":"text","text":"hi"}`, `{"text":"hi"}`}
	dataPart = part{`{"data":{"k":1}}`, `{"kind":"data","data":{"k":1}}`, `{"data":{"data":{"k":1}}}`}
)

func filePart(mediaType string) part {
	return part{fmt.Sprintf(`{"url":"https://example.com/f","mediaType":%q}`, mediaType),
		fmt.Sprintf(`{"kind":"file","file":{"uri":"https://example.com/f","mimeType":%q}}`, mediaType),
		fmt.Sprintf(`{"file":{"fileWithUri":"https://example.com/f","mimeType":%q}}`, mediaType)}
}

func joinParts(ps []part, pick func(part) string) string {
	var s []string
	for _, p := range ps {
		s = append(s, pick(p))
	}
	return strings.Join(s, ",")
}

var bindings = []struct {
	name string
	send func(t *testing.T, base, agent, taskID string, ps []part, stream bool, hdr ...string) sent
}{
	{"1.0 JSON-RPC", func(t *testing.T, base, agent, taskID string, ps []part, stream bool, hdr ...string) sent {
		method := "SendMessage"
		if stream {
			method = "SendStreamingMessage"
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"message":{"role":"ROLE_USER","messageId":%q,"taskId":%q,"parts":[%s]}}}`,
			method, a2a.NewID(), taskID, joinParts(ps, func(p part) string { return p.v10 }))
		return rpcOutcome(t, base+"/a2a/"+agent, body, stream, append([]string{"A2A-Version", "1.0"}, hdr...))
	}},
	{"1.0 HTTP+JSON", func(t *testing.T, base, agent, taskID string, ps []part, stream bool, hdr ...string) sent {
		body := fmt.Sprintf(`{"message":{"role":"ROLE_USER","messageId":%q,"taskId":%q,"parts":[%s]}}`,
			a2a.NewID(), taskID, joinParts(ps, func(p part) string { return p.v10 }))
		return restOutcome(t, base+"/a2a/"+agent, body, stream, append([]string{"A2A-Version", "1.0"}, hdr...))
	}},
	{"0.3 JSON-RPC", func(t *testing.T, base, agent, taskID string, ps []part, stream bool, hdr ...string) sent {
		method := "message/send"
		if stream {
			method = "message/stream"
		}
		tid := ""
		if taskID != "" {
			tid = fmt.Sprintf(`,"taskId":%q`, taskID)
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"message":{"kind":"message","role":"user","messageId":%q%s,"parts":[%s]}}}`,
			method, a2a.NewID(), tid, joinParts(ps, func(p part) string { return p.v03 }))
		return rpcOutcome(t, base+"/a2a/"+agent, body, stream, hdr)
	}},
	{"0.3 HTTP+JSON", func(t *testing.T, base, agent, taskID string, ps []part, stream bool, hdr ...string) sent {
		body := fmt.Sprintf(`{"message":{"role":"ROLE_USER","messageId":%q,"taskId":%q,"content":[%s]}}`,
			a2a.NewID(), taskID, joinParts(ps, func(p part) string { return p.p03 }))
		return restOutcome(t, base+"/a2a/"+agent+"/v1", body, stream, hdr)
	}},
}

// taskOf reads the task id and state of any of the bindings' answers (a
// Task, a {task} wrapper, a stream's first event).
func taskOf(s *sent, v []byte) {
	var r struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
		Task *struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"task"`
	}
	if json.Unmarshal(v, &r) != nil {
		return
	}
	s.taskID, s.state = r.ID, r.Status.State
	if r.Task != nil {
		s.taskID, s.state = r.Task.ID, r.Task.Status.State
	}
}

func rpcOutcome(t *testing.T, url, body string, stream bool, hdr []string) sent {
	t.Helper()
	status, h, b := do(t, http.MethodPost, url, body, hdr...)
	s := sent{status: status, header: h, body: string(b)}
	if stream && strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		// The first frame's data.
		_, data, _ := strings.Cut(string(b), "data: ")
		data, _, _ = strings.Cut(data, "\n")
		b = []byte(data)
	}
	var r struct {
		Result jsontext.Value `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    any    `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v: %s", url, err, b)
	}
	if r.Error != nil {
		s.code, s.msg = r.Error.Code, r.Error.Message
		if d, ok := r.Error.Data.([]any); ok {
			var ds []map[string]any
			for _, x := range d {
				m, _ := x.(map[string]any)
				ds = append(ds, m)
			}
			s.reason = reasonOf(ds)
		}
		return s
	}
	taskOf(&s, r.Result)
	return s
}

func restOutcome(t *testing.T, base, body string, stream bool, hdr []string) sent {
	t.Helper()
	path := "/message:send"
	if stream {
		path = "/message:stream"
	}
	status, h, b := do(t, http.MethodPost, base+path, body, hdr...)
	s := sent{status: status, header: h, body: string(b)}
	if status != http.StatusOK {
		var e rest03Error
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("%s: %d %s", base, status, b)
		}
		s.code, s.msg, s.reason = e.Code, e.Error.Message, reasonOf(e.Error.Details)
		if c, ok := a2a.CodeForReason(s.reason); ok && s.code == 0 {
			s.code = c // the 1.0 body has no JSON-RPC code: the reason's
		}
		return s
	}
	if stream {
		_, data, _ := strings.Cut(string(b), "data: ")
		data, _, _ = strings.Cut(data, "\n")
		b = []byte(data)
	}
	taskOf(&s, b)
	return s
}

// TestRequiredExtensions: an agent whose card declares an extension
// required: true refuses SendMessage and SendStreamingMessage that do not
// activate it (A2A 1.0 §3.3.4: ExtensionSupportRequiredError, -32008,
// HTTP 400 with the reason EXTENSION_SUPPORT_REQUIRED; the same code over
// 0.3, which activates extensions with X-A2A-Extensions), sees the
// activated ones it declares in Request.Extensions, and the response
// names those it applied in A2A-Extensions (X-A2A-Extensions for 0.3).
// Card fetches and the other operations are not refused; the event-log
// extension of every card is not required.
func TestRequiredExtensions(t *testing.T) {
	t.Parallel()
	base, rec := extServer(t)
	for _, b := range bindings {
		is10 := strings.HasPrefix(b.name, "1.0")
		respHeader, reqHeader := "X-A2A-Extensions", "X-A2A-Extensions"
		if is10 {
			respHeader, reqHeader = "A2A-Extensions", "A2A-Extensions"
		}
		for _, stream := range []bool{false, true} {
			what := b.name
			if stream {
				what += " stream"
			}
			s := b.send(t, base, "req", "", []part{textPart}, stream)
			if s.code != a2a.CodeExtensionSupportRequired || !strings.Contains(s.msg, extRequired) || strings.Contains(s.msg, extOptional) {
				t.Fatalf("%s without the required extension: %+v", what, s)
			}
			if strings.Contains(b.name, "HTTP+JSON") && (s.status != http.StatusBadRequest || s.reason != "EXTENSION_SUPPORT_REQUIRED") {
				t.Fatalf("%s: HTTP %d reason %q, want 400 EXTENSION_SUPPORT_REQUIRED", what, s.status, s.reason)
			}
			if is10 && s.reason != "EXTENSION_SUPPORT_REQUIRED" {
				t.Fatalf("%s: reason %q: %s", what, s.reason, s.body)
			}
			// Only the optional one: still refused.
			if s := b.send(t, base, "req", "", []part{textPart}, stream, reqHeader, extOptional); s.code != a2a.CodeExtensionSupportRequired {
				t.Fatalf("%s with only the optional extension: %+v", what, s)
			}
			// Both, one undeclared, spaces; the other header name too.
			s = b.send(t, base, "req", "", []part{textPart}, stream, reqHeader, " "+extRequired+" , https://example.com/unknown", "A2A-Extensions", extOptional)
			if s.code != 0 || s.taskID == "" {
				t.Fatalf("%s with the extension: %+v", what, s)
			}
			if !stream {
				if s.state != "completed" && s.state != "TASK_STATE_COMPLETED" {
					t.Fatalf("%s: state %q: %s", what, s.state, s.body)
				}
				// (Both header names: the order of the lists joined is not
				// promised.)
				if got := slices.Sorted(slices.Values(rec.last())); !slices.Equal(got, []string{extOptional, extRequired}) {
					t.Fatalf("%s: the agent saw %v, want the declared ones activated", what, got)
				}
				// Blocking: the header is written after the execution, with
				// what the agent applied.
				if got := s.header.Get(respHeader); got != extRequired+","+extOptional && got != extOptional+","+extRequired {
					t.Fatalf("%s: %s %q, want the applied extensions (headers %v)", what, respHeader, got, s.header)
				}
			} else if got := s.header.Get(respHeader); got != "" && got != extRequired && got != extRequired+","+extOptional && got != extOptional+","+extRequired {
				t.Fatalf("%s: %s %q", what, respHeader, got)
			}
		}
	}

	// The other operations and the card need no activation.
	s := bindings[0].send(t, base, "req", "", []part{textPart}, false, "A2A-Extensions", extRequired)
	if r := rpc10(t, base+"/a2a/req", "GetTask", fmt.Sprintf(`{"id":%q}`, s.taskID)); r.Error != nil {
		t.Fatalf("GetTask without the extension: %+v", r.Error)
	}
	if r := rpc10(t, base+"/a2a/req", "ListTasks", `{}`); r.Error != nil {
		t.Fatalf("ListTasks without the extension: %+v", r.Error)
	}
	status, _, card := do(t, http.MethodGet, base+"/a2a/req/.well-known/agent-card.json", "")
	if status != 200 || !strings.Contains(string(card), `{"uri":"`+extRequired+`","required":true}`) {
		t.Fatalf("card: %d %s", status, card)
	}

	// The built-in event-log extension is not required; activating it
	// applies it (the server's own), in the stream's header as well.
	if s := bindings[0].send(t, base, "echo", "", []part{textPart}, false); s.code != 0 || s.header.Get("A2A-Extensions") != "" {
		t.Fatalf("echo without extensions: %+v", s)
	}
	for _, b := range bindings {
		name := "A2A-Extensions"
		if !strings.HasPrefix(b.name, "1.0") {
			name = "X-A2A-Extensions"
		}
		s := b.send(t, base, "echo", "", []part{textPart}, true, "A2A-Extensions", a2a.ExtensionEventLog+","+extOptional)
		if s.code != 0 || s.header.Get(name) != a2a.ExtensionEventLog {
			t.Fatalf("%s stream activating the event log: %s %q: %+v", b.name, name, s.header.Get(name), s)
		}
	}
}

// TestInputModes: a part whose media type the card does not accept
// (defaultInputModes or any skill's inputModes, with wildcards) is
// ContentTypeNotSupportedError (-32005, HTTP 400) naming the accepted
// types, over every binding, for new tasks and continuations, before
// anything is stored; no defaultInputModes, or */*, accept everything.
func TestInputModes(t *testing.T) {
	t.Parallel()
	base, _ := extServer(t)
	for _, b := range bindings {
		for _, tc := range []struct {
			parts []part
			ok    bool
		}{
			{[]part{textPart}, true},
			{[]part{textPart, filePart("image/png")}, true},        // image/*
			{[]part{filePart("application/pdf")}, true},            // the skill's (case-insensitive)
			{[]part{filePart("IMAGE/JPEG; q=1")}, true},            // parameters cut
			{[]part{filePart("")}, true},                           // no media type: not refused
			{[]part{textPart, dataPart}, false},                    // application/json
			{[]part{textPart, filePart("application/zip")}, false}, // nothing matches
			{[]part{textPart, filePart("*/*")}, false},             // a wildcard is no type
			{[]part{textPart, filePart("image/*")}, false},
		} {
			what := fmt.Sprintf("%s %s", b.name, joinParts(tc.parts, func(p part) string { return p.v10 }))
			for _, stream := range []bool{false, true} {
				s := b.send(t, base, "modes", "", tc.parts, stream)
				if tc.ok {
					if s.code != 0 || s.taskID == "" {
						t.Fatalf("%s (stream %v): %+v", what, stream, s)
					}
					continue
				}
				if s.code != a2a.CodeContentTypeNotSupported || !strings.Contains(s.msg, "text/plain, image/*, application/pdf") || !strings.Contains(s.msg, "part 1") {
					t.Fatalf("%s (stream %v): %+v", what, stream, s)
				}
				if strings.Contains(b.name, "HTTP+JSON") && (s.status != http.StatusBadRequest || s.reason != "CONTENT_TYPE_NOT_SUPPORTED") {
					t.Fatalf("%s: HTTP %d %q", what, s.status, s.reason)
				}
			}
		}
		// A continuation: refused before it is stored, the task still
		// waits for input and takes an accepted one.
		s := b.send(t, base, "modes", "", []part{textPart}, false)
		if s.code != 0 || !strings.Contains(strings.ToLower(s.state), "input") {
			t.Fatalf("%s first message: %+v", b.name, s)
		}
		if c := b.send(t, base, "modes", s.taskID, []part{filePart("video/mp4")}, false); c.code != a2a.CodeContentTypeNotSupported {
			t.Fatalf("%s continuation with video/mp4: %+v", b.name, c)
		}
		r := rpc10(t, base+"/a2a/modes", "GetTask", fmt.Sprintf(`{"id":%q}`, s.taskID))
		var task v10Task
		if r.Error != nil || json.Unmarshal(r.Result, &task) != nil || task.Status.State != "TASK_STATE_INPUT_REQUIRED" || len(task.History) != 2 {
			t.Fatalf("%s: task after a refused continuation: %s", b.name, r.Result)
		}
		if c := b.send(t, base, "modes", s.taskID, []part{filePart("image/gif")}, false); c.code != 0 || !strings.Contains(strings.ToLower(c.state), "completed") {
			t.Fatalf("%s continuation with image/gif: %+v", b.name, c)
		}
		// A bare type is the whole type; parameters of a mode are ignored.
		if s := b.send(t, base, "bare", "", []part{textPart, filePart("text/csv"), dataPart}, false); s.code != 0 {
			t.Fatalf("%s bare: %+v", b.name, s)
		}
		if s := b.send(t, base, "bare", "", []part{filePart("image/png")}, false); s.code != a2a.CodeContentTypeNotSupported || !strings.Contains(s.msg, "text/*, application/json") {
			t.Fatalf("%s bare image: %+v", b.name, s)
		}
		// Cards that accept everything.
		for _, agent := range []string{"open", "wild", "echo"} {
			if s := b.send(t, base, agent, "", []part{textPart, dataPart, filePart("application/zip")}, false); s.code != 0 {
				t.Fatalf("%s %s: %+v", b.name, agent, s)
			}
		}
	}
}

// A Method sees every extension the request activated
// (RequestedExtensions) and names the ones it applied in the response
// header (ApplyExtension); code that calls a Handler itself activates
// extensions with WithExtensions.
func TestExtensionsOutsideExecute(t *testing.T) {
	t.Parallel()
	eng := servertest.Engine(t, server.EngineOptions{})
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	rec := &extRecorder{}
	c := testutil.Card("req")
	c.Capabilities.Extensions = []a2a.AgentExtension{{URI: extRequired, Required: true}}
	h := server.NewHandler(eng, "req", rec, c, server.HandlerOptions{Methods: map[string]server.Method{
		"x/extensions": func(ctx context.Context, _ []byte) (server.MethodResult, error) {
			if server.ApplyExtension(ctx, "https://example.com/not-activated") {
				return server.MethodResult{}, fmt.Errorf("applied an extension not activated")
			}
			server.ApplyExtension(ctx, extOptional)
			b, _ := json.Marshal(server.RequestedExtensions(ctx))
			return server.MethodResult{Result: b}, nil
		}}})
	host := servertest.Host("", h)
	ts := httptest.NewServer(host)
	t.Cleanup(ts.Close)
	_, hdr, b := do(t, http.MethodPost, ts.URL+"/a2a/req", `{"jsonrpc":"2.0","id":1,"method":"x/extensions"}`, "A2A-Extensions", extOptional+", https://example.com/undeclared", "A2A-Version", "1.0")
	if !strings.Contains(string(b), `"result":["`+extOptional+`","https://example.com/undeclared"]`) || hdr.Get("A2A-Extensions") != extOptional {
		t.Fatalf("method: %s %v", b, hdr)
	}
	_, hdr, b = do(t, http.MethodPost, ts.URL+"/a2a/req", `{"jsonrpc":"2.0","id":1,"method":"x/extensions"}`)
	if !strings.Contains(string(b), `"result":[]`) || hdr.Get("A2A-Extensions") != "" || hdr.Get("X-A2A-Extensions") != "" {
		t.Fatalf("method without extensions: %s %v", b, hdr)
	}

	msg := a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))}
	if _, err := h.SendMessageForTask(context.Background(), msg); !errors.Is(err, a2a.ErrExtensionSupportRequired) {
		t.Fatalf("SendMessage without WithExtensions: %v", err)
	}
	msg.Message.MessageID = a2a.NewID()
	task, err := h.SendMessageForTask(server.WithExtensions(context.Background(), " ", extRequired, extRequired), msg)
	if err != nil || task.Status.State != a2a.TaskStateCompleted || !slices.Equal(rec.last(), []string{extRequired}) {
		t.Fatalf("SendMessage with WithExtensions: %v %v, the agent saw %v", task, err, rec.last())
	}
}

// A MessageResponder sees the extensions the caller activated, as Execute
// does, and the ones it applies are in the answer's A2A-Extensions.
func TestExtensionsMessageResponder(t *testing.T) {
	t.Parallel()
	eng := servertest.Engine(t, server.EngineOptions{})
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	var seen []string
	c := testutil.Card("pong")
	c.Capabilities.Extensions = []a2a.AgentExtension{{URI: extRequired, Required: true}, {URI: extOptional}}
	host := servertest.Host("")
	host.Add(server.NewHandler(eng, "pong", server.MessageFunc(func(ctx context.Context, req *server.Request) (*a2a.Message, error) {
		seen = slices.Clone(req.Extensions)
		req.ApplyExtension(extOptional)
		m := a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart("pong"))
		return &m, nil
	}), c, server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	t.Cleanup(ts.Close)
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"ping"}]}}}`
	_, hdr, b := do(t, http.MethodPost, ts.URL+"/a2a/pong", body, "A2A-Version", "1.0", "A2A-Extensions", extRequired+","+extOptional)
	if !strings.Contains(string(b), `"message":{`) || !slices.Equal(seen, []string{extRequired, extOptional}) || hdr.Get("A2A-Extensions") != extOptional {
		t.Fatalf("answer %s, header %q, the responder saw %v", b, hdr.Get("A2A-Extensions"), seen)
	}
}

// TestExtensionHeaderBounded: a request may list at most
// MaxExtensionURIs extension URIs (repeats counted); one that lists more
// is refused with -32602 naming the header (HTTP 400 over HTTP+JSON)
// before its method runs, so a huge header costs a bounded scan.
func TestExtensionHeaderBounded(t *testing.T) {
	t.Parallel()
	url, _ := extServer(t)
	list := func(n int) string {
		uris := make([]string, n)
		for i := range uris {
			uris[i] = fmt.Sprintf("https://example.com/ext/%d", i%3) // repeats count too
		}
		return strings.Join(uris, ",")
	}
	get := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`
	_, _, b := do(t, http.MethodPost, url+"/a2a/echo", get, "A2A-Version", "1.0", "A2A-Extensions", list(server.MaxExtensionURIs))
	if !strings.Contains(string(b), `"code":-32001`) {
		t.Fatalf("%d URIs: %s", server.MaxExtensionURIs, b)
	}
	half := list(server.MaxExtensionURIs/2 + 1)
	_, _, b = do(t, http.MethodPost, url+"/a2a/echo", get, "A2A-Version", "1.0", "A2A-Extensions", half, "X-A2A-Extensions", half)
	if !strings.Contains(string(b), `"code":-32602`) || !strings.Contains(string(b), "A2A-Extensions lists more than") {
		t.Fatalf("%d URIs over two headers: %s", server.MaxExtensionURIs+2, b)
	}
	code, _, b := do(t, http.MethodGet, url+"/a2a/echo/tasks/nope", "", "A2A-Version", "1.0", "A2A-Extensions", list(10*server.MaxExtensionURIs))
	if code != http.StatusBadRequest || !strings.Contains(string(b), "A2A-Extensions lists more than") {
		t.Fatalf("HTTP+JSON, %d URIs: %d %s", 10*server.MaxExtensionURIs, code, b)
	}
}
