package check

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/push"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// The tests run the checks against an in-process a2abridge server (which
// behaves right) and against the same server behind a fault: a middleware
// that rewrites requests or responses so that one requirement is broken.

const testToken = "s3cret-check-token"

// hostOpts configure the in-process server.
type hostOpts struct {
	push     bool                     // push notifications, loopback allowed
	pushDeny bool                     // push notifications, loopback refused
	pushHook func(*http.Request) bool // runs on every delivery (may edit it); false drops it
	auth     bool                     // bearer token testToken on every agent, extended card on echo
	// intercept, if set, wraps every agent's operations (a fault inside
	// the server, which the gRPC suite sees too).
	intercept server.Interceptor
}

// noHosts is a push.Resolver for which no host name exists.
type noHosts struct{}

func (noHosts) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// signedExtension is the extension the card of the agent "signed" (an
// echo) requires.
const signedExtension = "https://example.com/ext/signed/v1"

// newHost returns the a2abridge host with echo, chat and slow (slow: 1 s by
// default, progress every 50 ms), and signed: an echo whose card requires
// signedExtension.
func newHost(t *testing.T, o hostOpts) http.Handler {
	t.Helper()
	eo := server.EngineOptions{Logger: testutil.Logger()}
	if o.push || o.pushDeny {
		allow := []string{"127.0.0.0/8"}
		if o.pushDeny {
			allow = nil
		}
		hc := push.NewGuardedClient(push.GuardOptions{Allow: allow})
		if o.pushHook != nil {
			inner := hc.Transport
			if inner == nil {
				inner = http.DefaultTransport
			}
			hc.Transport = roundTrip(func(r *http.Request) (*http.Response, error) {
				if !o.pushHook(r) {
					return nil, io.ErrUnexpectedEOF
				}
				return inner.RoundTrip(r)
			})
		}
		// As a2abridge serve checks webhooks; no host name resolves here.
		check := func(ctx context.Context, u string) error { return push.CheckURLContext(ctx, u, allow, noHosts{}) }
		eo.Push = &server.PushOptions{Client: hc, CheckURL: check,
			RetryBase: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond}
	}
	eng, err := server.NewEngine(context.Background(), memory.New(), eo)
	if err != nil {
		t.Fatal(err)
	}
	host := server.NewHost(server.HostOptions{Default: "echo", Transport: server.TransportOptions{Logger: testutil.Logger(), KeepAlive: 100 * time.Millisecond}})
	var ho server.HandlerOptions
	if o.intercept != nil {
		ho.Interceptors = []server.Interceptor{o.intercept}
	}
	echoOpts := ho
	if o.auth {
		a, err := auth.NewBearerTokens("bearer", map[string]string{"tester": testToken})
		if err != nil {
			t.Fatal(err)
		}
		ho.Auth = auth.Set{a}
		echoOpts = ho
		ext := agents.Echo{}.Card()
		ext.Description = "Echo, extended for authenticated callers."
		ext.Skills = append(ext.Skills, a2a.AgentSkill{ID: "echo-files", Name: "Echo files", Description: "Echoes files too.", Tags: []string{"echo"}})
		echoOpts.ExtendedCard = &ext
	}
	host.Add(server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), echoOpts))
	host.Add(server.NewHandler(eng, "chat", agents.Chat{}, agents.Chat{}.Card(), ho))
	host.Add(server.NewHandler(eng, "slow", agents.Slow{Seconds: 1, Step: 50 * time.Millisecond}, agents.Slow{}.Card(), ho))
	signed := agents.Echo{}.Card()
	signed.Capabilities.Extensions = []a2a.AgentExtension{{URI: signedExtension, Description: "Messages are signed.", Required: true}}
	host.Add(server.NewHandler(eng, "signed", agents.Echo{}, signed, ho))
	testutil.CloseAtEnd(t, eng.Close)
	return host
}

// serve starts h on loopback and returns its base URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	return testutil.Serve(t, h).URL
}

// ---------------------------------------------------------------- faults

// rpcReq is what the fault middleware knows of a request.
type rpcReq struct {
	Method  string // the JSON-RPC method, or the A2A 1.0 operation of an HTTP+JSON route
	ID      jsontext.Value
	Params  map[string]any // the JSON-RPC params, or the HTTP+JSON body
	Batch   bool
	Invalid bool // not a JSON object
	REST    bool // an A2A 1.0 HTTP+JSON request
	HTTP    string
	Version string // the A2A-Version header
}

// restOp returns the A2A 1.0 operation of an HTTP+JSON route ("" if the
// path is none).
func restOp(method, path string) string {
	seg := path[strings.LastIndexByte(path, '/')+1:]
	parent := strings.TrimSuffix(path, "/"+seg)
	parentSeg := parent[strings.LastIndexByte(parent, '/')+1:]
	switch {
	case seg == "message:send":
		return "SendMessage"
	case seg == "message:stream":
		return "SendStreamingMessage"
	case seg == "extendedAgentCard":
		return "GetExtendedAgentCard"
	case seg == "tasks":
		return "ListTasks"
	case strings.HasSuffix(seg, ":cancel") && parentSeg == "tasks":
		return "CancelTask"
	case strings.HasSuffix(seg, ":subscribe") && parentSeg == "tasks":
		return "SubscribeToTask"
	case seg == "pushNotificationConfigs" && method == http.MethodPost:
		return "CreateTaskPushNotificationConfig"
	case seg == "pushNotificationConfigs":
		return "ListTaskPushNotificationConfigs"
	case parentSeg == "pushNotificationConfigs" && method == http.MethodDelete:
		return "DeleteTaskPushNotificationConfig"
	case parentSeg == "pushNotificationConfigs":
		return "GetTaskPushNotificationConfig"
	case parentSeg == "tasks":
		return "GetTask"
	}
	return ""
}

func parseReq(b []byte) rpcReq {
	var m map[string]jsontext.Value
	v := jsontext.Value(bytes.TrimSpace(b))
	if len(v) > 0 && v[0] == '[' {
		return rpcReq{Batch: true}
	}
	if json.Unmarshal(b, &m) != nil {
		return rpcReq{Invalid: true}
	}
	r := rpcReq{ID: m["id"]}
	_ = json.Unmarshal(m["method"], &r.Method)
	_ = json.Unmarshal(m["params"], &r.Params)
	return r
}

// fault breaks one requirement. Every hook is optional.
type fault struct {
	// req may rewrite the request body (return it) or answer the request
	// itself (write to w and return handled).
	req func(w http.ResponseWriter, r *http.Request, body []byte, m rpcReq) (newBody []byte, handled bool)
	// resp rewrites a plain (non-SSE) JSON-RPC answer.
	resp func(m rpcReq, status *int, h http.Header, body []byte) []byte
	// sse rewrites the data of each SSE event (nil drops the event).
	sse func(m rpcReq, i int, data []byte) []byte
	// sseHeader edits the headers of a stream.
	sseHeader func(h http.Header)
	// streamTail is how long to keep a stream open after the server ends it.
	streamTail time.Duration
	// card rewrites the card document (nil result: answer 404).
	card func(path string, card map[string]any) map[string]any
	// cardHeader edits the card response headers.
	cardHeader func(h http.Header)
}

func faulty(next http.Handler, f *fault) http.Handler {
	if f == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/.well-known/agent") {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			if f.card != nil && rec.Code == http.StatusOK {
				var m map[string]any
				if err := json.Unmarshal(body, &m); err == nil {
					m = f.card(r.URL.Path, m)
					if m == nil {
						http.NotFound(w, r)
						return
					}
					body, _ = json.Marshal(m, json.Deterministic(true))
				}
			}
			for k, vs := range rec.Header() {
				w.Header()[k] = vs
			}
			w.Header().Del("Content-Length")
			if f.cardHeader != nil {
				f.cardHeader(w.Header())
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
			return
		}
		body, _ := io.ReadAll(r.Body)
		m := parseReq(body)
		m.HTTP, m.Version = r.Method+" "+r.URL.Path, r.Header.Get("A2A-Version")
		if op := restOp(r.Method, r.URL.Path); op != "" && (r.Method != http.MethodPost || m.Method == "") {
			m.Method, m.REST, m.Invalid = op, true, false
			if err := json.Unmarshal(body, &m.Params); err != nil {
				m.Params = nil
			}
		}
		if f.req != nil {
			nb, handled := f.req(w, r, body, m)
			if handled {
				return
			}
			if nb != nil {
				body = nb
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		fw := &faultWriter{w: w, f: f, m: m, status: http.StatusOK}
		next.ServeHTTP(fw, r)
		fw.finish()
	})
}

// faultWriter passes streams through event by event (rewriting them) and
// buffers plain answers to rewrite them whole.
type faultWriter struct {
	w      http.ResponseWriter
	f      *fault
	m      rpcReq
	mu     sync.Mutex
	status int
	mode   int // 0 undecided, 1 stream, 2 buffered
	buf    bytes.Buffer
	n      int
}

func (fw *faultWriter) Header() http.Header { return fw.w.Header() }

func (fw *faultWriter) decide() {
	if fw.mode != 0 {
		return
	}
	if strings.HasPrefix(fw.w.Header().Get("Content-Type"), "text/event-stream") {
		fw.mode = 1
		if fw.f.sseHeader != nil {
			fw.f.sseHeader(fw.w.Header())
		}
		fw.w.WriteHeader(fw.status)
		return
	}
	fw.mode = 2
}

func (fw *faultWriter) WriteHeader(code int) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.mode == 0 {
		fw.status = code
		fw.decide()
	}
}

func (fw *faultWriter) Write(b []byte) (int, error) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.decide()
	fw.buf.Write(b)
	if fw.mode == 1 {
		fw.flushEvents()
	}
	return len(b), nil
}

// flushEvents writes the complete events buffered so far.
func (fw *faultWriter) flushEvents() {
	for {
		data := fw.buf.Bytes()
		i := bytes.Index(data, []byte("\n\n"))
		if i < 0 {
			return
		}
		block := append([]byte(nil), data[:i+2]...)
		fw.buf.Next(i + 2)
		if fw.f.sse != nil && bytes.Contains(block, []byte("data:")) {
			block = fw.rewriteEvent(block)
		}
		if block != nil {
			_, _ = fw.w.Write(block)
		}
	}
}

func (fw *faultWriter) rewriteEvent(block []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSuffix(block, []byte("\n\n")), []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			nd := fw.f.sse(fw.m, fw.n, d)
			fw.n++
			if nd == nil {
				return nil
			}
			line = append([]byte("data: "), nd...)
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	out.WriteByte('\n')
	return out.Bytes()
}

func (fw *faultWriter) Flush() {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.decide()
	if fw.mode == 1 {
		if f, ok := fw.w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

func (fw *faultWriter) finish() {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.decide()
	if fw.mode == 1 {
		if f, ok := fw.w.(http.Flusher); ok {
			f.Flush()
		}
		if fw.f.streamTail > 0 {
			time.Sleep(fw.f.streamTail)
		}
		return
	}
	body := fw.buf.Bytes()
	status := fw.status
	if fw.f.resp != nil {
		body = fw.f.resp(fw.m, &status, fw.w.Header(), body)
	}
	fw.w.Header().Del("Content-Length")
	fw.w.WriteHeader(status)
	_, _ = fw.w.Write(body)
}

// answer writes a JSON-RPC answer for m.
func answer(w http.ResponseWriter, m rpcReq, member, value string) {
	id := string(m.ID)
	if id == "" {
		id = "null"
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"`+member+`":`+value+`}`)
}

// editJSON decodes a JSON object, edits it and encodes it back.
func editJSON(b []byte, edit func(m map[string]any)) []byte {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return b
	}
	edit(m)
	out, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		return b
	}
	return out
}

// setResult edits the result object of an answer.
func editResult(b []byte, edit func(res map[string]any)) []byte {
	return editJSON(b, func(m map[string]any) {
		if res, ok := m["result"].(map[string]any); ok {
			edit(res)
		}
	})
}

// recode replaces error code from with to in an answer.
func recode(b []byte, from, to float64) []byte {
	return editJSON(b, func(m map[string]any) {
		if e, ok := m["error"].(map[string]any); ok && e["code"] == from {
			e["code"] = to
		}
	})
}

// editParams rewrites a request's params.
func editParams(body []byte, edit func(p map[string]any)) []byte {
	return editJSON(body, func(m map[string]any) {
		if p, ok := m["params"].(map[string]any); ok {
			edit(p)
		}
	})
}

// runOne runs one check against base and returns its result.
func runOne(t *testing.T, base, id string, o Options) CheckResult {
	t.Helper()
	o.URL = base
	o.Only = []string{id}
	if o.Timeout == 0 {
		o.Timeout = 3 * time.Second
	}
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Result(id)
	if r == nil {
		t.Fatalf("check %s did not run", id)
	}
	return *r
}
