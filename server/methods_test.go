package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// methodsEnv is a Host with one agent "m" that serves Methods of its own
// (and one "secure" that authenticates), on a loopback server.
type methodsEnv struct {
	url, secureURL string
	// gate holds the stream of test/stream after its first value until
	// closed; done receives once that stream has stopped, with whether
	// the client went away (its context ended) before it finished.
	gate chan struct{}
	done chan bool
}

func newMethodsEnv(t *testing.T) *methodsEnv {
	t.Helper()
	env := &methodsEnv{gate: make(chan struct{}), done: make(chan bool, 1)}
	methods := map[string]server.Method{
		// test/echo answers {"params": PARAMS, "nil": params == nil, "who": SUBJECT}.
		"test/echo": func(ctx context.Context, params []byte) (server.MethodResult, error) {
			who := ""
			if p, ok := auth.FromContext(ctx); ok && p != nil {
				who = p.Subject
			}
			res := map[string]any{"nil": params == nil, "who": who}
			if params != nil {
				res["params"] = jsontext.Value(params)
			}
			b, err := json.Marshal(res, json.Deterministic(true))
			return server.MethodResult{Result: b}, err
		},
		"test/null": func(ctx context.Context, params []byte) (server.MethodResult, error) {
			return server.MethodResult{}, nil
		},
		"test/coded": func(ctx context.Context, params []byte) (server.MethodResult, error) {
			return server.MethodResult{}, &a2a.Error{Code: -32052, Message: "rate limited", Data: map[string]any{"retryAfterSeconds": 3}}
		},
		"test/internal": func(ctx context.Context, params []byte) (server.MethodResult, error) {
			return server.MethodResult{}, errors.New("secret internal detail")
		},
		"test/badjson": func(ctx context.Context, params []byte) (server.MethodResult, error) {
			return server.MethodResult{Result: []byte(`{"a":`)}, nil
		},
		"test/panic": func(ctx context.Context, params []byte) (server.MethodResult, error) {
			panic("boom")
		},
		// test/stream yields {"n":1}, waits for gate, yields {"n":2} and
		// {"n":3}; with params {"fail":true} it then fails with -32050.
		"test/stream": func(ctx context.Context, params []byte) (server.MethodResult, error) {
			fail := strings.Contains(string(params), `"fail":true`)
			return server.MethodResult{Result: []byte(`"ignored"`), Stream: func(yield func([]byte, error) bool) {
				gone := false
				defer func() { env.done <- gone }()
				if !yield([]byte(`{"n":1}`), nil) {
					gone = true
					return
				}
				select {
				case <-env.gate:
				case <-ctx.Done():
					gone = true
					return
				}
				for _, v := range []string{`{"n":2}`, "{\n\"n\": 3}"} {
					if !yield([]byte(v), nil) {
						gone = true
						return
					}
				}
				if fail {
					yield(nil, &a2a.Error{Code: -32050, Message: "upstream timeout"})
				}
			}}, nil
		},
		"test/streampanic": func(ctx context.Context, params []byte) (server.MethodResult, error) {
			return server.MethodResult{Stream: func(yield func([]byte, error) bool) {
				if yield([]byte(`1`), nil) {
					panic("boom in stream")
				}
			}}, nil
		},
		"test/streambad": func(ctx context.Context, params []byte) (server.MethodResult, error) {
			return server.MethodResult{Stream: func(yield func([]byte, error) bool) {
				_ = yield([]byte(`1`), nil) && yield([]byte(`[`), nil)
			}}, nil
		},
	}
	eng := servertest.Engine(t, server.EngineOptions{})
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"alice": "alice-token"})
	if err != nil {
		t.Fatal(err)
	}
	host := servertest.Host("m",
		server.NewHandler(eng, "m", agents.Echo{}, testutil.Card("m"), server.HandlerOptions{Methods: methods}),
		server.NewHandler(eng, "secure", agents.Echo{}, testutil.Card("secure"), server.HandlerOptions{Methods: methods, Auth: auth.Set{bearer}}))
	ts := testutil.Serve(t, host, eng.Close)
	env.url, env.secureURL = ts.URL+"/a2a/m", ts.URL+"/a2a/secure"
	return env
}

// rpcAny is one JSON-RPC response with its members kept raw.
type rpcAny struct {
	ID     jsontext.Value `json:"id"`
	Result jsontext.Value `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

func decodeRPC(t *testing.T, b []byte) rpcAny {
	t.Helper()
	var r rpcAny
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("not a JSON-RPC response: %v: %s", err, b)
	}
	return r
}

func TestMethodResultInEveryVersion(t *testing.T) {
	t.Parallel()
	env := newMethodsEnv(t)
	for _, version := range []string{"", "0.3", "1.0", "9.9"} {
		var hdr []string
		if version != "" {
			hdr = []string{"A2A-Version", version}
		}
		resp, b := testutil.Post(t, env.url, `{"jsonrpc":"2.0","id":"x1","method":"test/echo","params":{"a":[1,2]}}`, hdr...)
		r := decodeRPC(t, b)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || r.Error != nil ||
			string(r.ID) != `"x1"` || string(r.Result) != `{"nil":false,"params":{"a":[1,2]},"who":""}` {
			t.Fatalf("A2A-Version %q: %d %s: %s", version, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
	// An A2A method still answers the unsupported version with -32009.
	_, b := testutil.Post(t, env.url, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`, "A2A-Version", "9.9")
	if r := decodeRPC(t, b); r.Error == nil || r.Error.Code != a2a.CodeVersionNotSupported {
		t.Fatalf("A2A method with version 9.9: %s", b)
	}
	// Without params the Method gets nil; a nil Result is null. The
	// default agent at / serves them too.
	_, b = testutil.Post(t, strings.TrimSuffix(env.url, "/a2a/m")+"/", `{"jsonrpc":"2.0","id":7,"method":"test/echo"}`)
	if r := decodeRPC(t, b); string(r.Result) != `{"nil":true,"who":""}` || string(r.ID) != "7" {
		t.Fatalf("no params: %s", b)
	}
	_, b = testutil.Post(t, env.url, `{"jsonrpc":"2.0","id":8,"method":"test/null","params":[]}`)
	if r := decodeRPC(t, b); string(r.Result) != "null" || r.Error != nil {
		t.Fatalf("nil result: %s", b)
	}
	// A method nobody serves stays -32601.
	_, b = testutil.Post(t, env.url, `{"jsonrpc":"2.0","id":9,"method":"test/nothing"}`)
	if r := decodeRPC(t, b); r.Error == nil || r.Error.Code != a2a.CodeMethodNotFound {
		t.Fatalf("unknown method: %s", b)
	}
}

func TestMethodErrors(t *testing.T) {
	t.Parallel()
	env := newMethodsEnv(t)
	for _, c := range []struct {
		method string
		code   int
		msg    string
		data   string
	}{
		{"test/coded", -32052, "rate limited", `{"retryAfterSeconds":3}`},
		{"test/internal", a2a.CodeInternalError, "Internal error", "requestId"},
		{"test/badjson", a2a.CodeInternalError, "Internal error", "requestId"},
		{"test/panic", a2a.CodeInternalError, "Internal error", "requestId"},
	} {
		_, b := testutil.Post(t, env.url, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":%q,"params":{}}`, c.method))
		r := decodeRPC(t, b)
		if r.Error == nil || r.Error.Code != c.code || r.Error.Message != c.msg || string(r.ID) != "3" {
			t.Fatalf("%s: %s", c.method, b)
		}
		d, _ := json.Marshal(r.Error.Data)
		if c.data == "requestId" {
			if len(r.Error.Data) != 1 || r.Error.Data["requestId"] == nil {
				t.Errorf("%s: data %s, want only the request id", c.method, d)
			}
		} else if string(d) != c.data {
			t.Errorf("%s: data %s, want %s", c.method, d, c.data)
		}
		if strings.Contains(string(b), "secret") || strings.Contains(string(b), "boom") {
			t.Errorf("%s: the answer leaks the error: %s", c.method, b)
		}
	}
	// A streaming client gets an error before any stream as one event.
	resp, body := testutil.Post(t, env.url, `{"jsonrpc":"2.0","id":4,"method":"test/coded"}`, "Accept", "text/event-stream")
	if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(string(body), `data: {"jsonrpc":"2.0","id":4,"error":{"code":-32052`) {
		t.Fatalf("error to a streaming client: %s: %s", resp.Header.Get("Content-Type"), body)
	}
}

func TestMethodBatch(t *testing.T) {
	t.Parallel()
	env := newMethodsEnv(t)
	_, b := testutil.Post(t, env.url, `[
		{"jsonrpc":"2.0","id":1,"method":"test/echo","params":{"k":1}},
		{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"nope"}},
		{"jsonrpc":"2.0","id":3,"method":"test/stream"},
		{"jsonrpc":"2.0","id":4,"method":"test/coded"},
		{"jsonrpc":"2.0","id":5,"method":"test/internal"},
		{"jsonrpc":"2.0","id":6,"method":"test/nothing"}
	]`)
	var rs []rpcAny
	if err := json.Unmarshal(b, &rs); err != nil || len(rs) != 6 {
		t.Fatalf("batch answer: %v: %s", err, b)
	}
	if string(rs[0].Result) != `{"nil":false,"params":{"k":1},"who":""}` {
		t.Errorf("member 1: %s", b)
	}
	for i, code := range []int{0, a2a.CodeTaskNotFound, a2a.CodeInvalidRequest, -32052, a2a.CodeInternalError, a2a.CodeMethodNotFound} {
		if string(rs[i].ID) != fmt.Sprint(i+1) || (code != 0) != (rs[i].Error != nil) || code != 0 && rs[i].Error.Code != code {
			t.Errorf("member %d: want code %d: %s", i+1, code, b)
		}
	}
	if !strings.Contains(rs[2].Error.Message, "stream") {
		t.Errorf("a streaming method in a batch: %s", rs[2].Error.Message)
	}
	// The stream was never ranged over.
	select {
	case <-env.done:
		t.Error("the stream of a batch member was ranged over")
	default:
	}
}

// readEvents reads an SSE body into its events' data.
func readEvents(t *testing.T, body io.Reader) iter.Seq[string] {
	return func(yield func(string) bool) {
		rd := sse.NewReader(body)
		for {
			ev, err := rd.Next()
			if err != nil {
				return
			}
			if !yield(string(ev.Data)) {
				return
			}
		}
	}
}

func TestMethodStream(t *testing.T) {
	t.Parallel()
	env := newMethodsEnv(t)
	resp := testutil.Open(t, testutil.NewRequest(t, context.Background(), http.MethodPost, env.url, `{"jsonrpc":"2.0","id":"s1","method":"test/stream","params":{"fail":true}}`, "Content-Type", "application/json", "A2A-Version", "1.0"))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var got []string
	for data := range readEvents(t, resp.Body) {
		got = append(got, data)
		if len(got) == 1 {
			// The first event arrived while the stream is held: events are
			// sent as they are yielded.
			close(env.gate)
		}
	}
	want := []string{
		`{"jsonrpc":"2.0","id":"s1","result":{"n":1}}`,
		`{"jsonrpc":"2.0","id":"s1","result":{"n":2}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{\n\"n\": 3}}",
		`{"jsonrpc":"2.0","id":"s1","error":{"code":-32050,"message":"upstream timeout"}}`,
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if gone := <-env.done; gone {
		t.Error("the stream saw its client go away")
	}
	// A panic, or a value that is not JSON, ends the stream with -32603.
	for _, m := range []string{"test/streampanic", "test/streambad"} {
		resp, b := testutil.Post(t, env.url, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":%q}`, m))
		var evs []string
		for d := range readEvents(t, strings.NewReader(string(b))) {
			evs = append(evs, d)
		}
		if resp.Header.Get("Content-Type") != "text/event-stream" || len(evs) != 2 || evs[0] != `{"jsonrpc":"2.0","id":2,"result":1}` ||
			!strings.HasPrefix(evs[1], `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error","data":{"requestId":`) {
			t.Errorf("%s: %q", m, evs)
		}
	}
}

// A client that goes away ends the stream: the Method's context ends and
// yield returns false.
func TestMethodStreamClientGone(t *testing.T) {
	t.Parallel()
	env := newMethodsEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := testutil.Open(t, testutil.NewRequest(t, ctx, http.MethodPost, env.url, `{"jsonrpc":"2.0","id":1,"method":"test/stream"}`))
	for data := range readEvents(t, resp.Body) {
		if data != `{"jsonrpc":"2.0","id":1,"result":{"n":1}}` {
			t.Fatalf("first event %s", data)
		}
		break
	}
	cancel()
	if gone := <-env.done; !gone {
		t.Error("the stream did not see its client go away")
	}
}

func TestMethodAuthentication(t *testing.T) {
	t.Parallel()
	env := newMethodsEnv(t)
	resp, b := testutil.Post(t, env.secureURL, `{"jsonrpc":"2.0","id":1,"method":"test/echo"}`)
	if r := decodeRPC(t, b); resp.StatusCode != http.StatusUnauthorized || r.Error == nil || r.Error.Code != a2a.CodeUnauthenticated {
		t.Fatalf("without credentials: %d %s", resp.StatusCode, b)
	}
	resp, b = testutil.Post(t, env.secureURL, `{"jsonrpc":"2.0","id":1,"method":"test/echo"}`, "Authorization", "Bearer alice-token")
	if r := decodeRPC(t, b); resp.StatusCode != 200 || string(r.Result) != `{"nil":true,"who":"alice"}` {
		t.Fatalf("with credentials: %d %s", resp.StatusCode, b)
	}
	// In a batch too.
	_, b = testutil.Post(t, env.secureURL, `[{"jsonrpc":"2.0","id":1,"method":"test/echo"}]`, "Authorization", "Bearer alice-token")
	if !strings.Contains(string(b), `"who":"alice"`) {
		t.Fatalf("batch with credentials: %s", b)
	}
}

// Names that are A2A methods, lack a category, or use a reserved prefix
// are refused when the handler is made: A2A names always win.
func TestMethodNamesRefused(t *testing.T) {
	t.Parallel()
	eng := servertest.Engine(t, server.EngineOptions{})
	defer eng.Close(context.Background())
	ok := func(ctx context.Context, params []byte) (server.MethodResult, error) {
		return server.MethodResult{}, nil
	}
	for _, name := range []string{"message/send", "tasks/get", "SendMessage", "GetTask", "noslash", "/x", "x/", "rpc.x/y",
		"tasks/mine", "message/mine", "agent/mine", ""} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewHandler accepted the method name %q", name)
				}
			}()
			server.NewHandler(eng, "a", agents.Echo{}, testutil.Card("a"), server.HandlerOptions{Methods: map[string]server.Method{name: ok}})
		}()
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("NewHandler accepted a nil Method")
			}
		}()
		server.NewHandler(eng, "a", agents.Echo{}, testutil.Card("a"), server.HandlerOptions{Methods: map[string]server.Method{"x/y": nil}})
	}()
	// The map is copied: changing it later changes nothing.
	m := map[string]server.Method{"x/y": ok}
	h := server.NewHandler(eng, "a", agents.Echo{}, testutil.Card("a"), server.HandlerOptions{Methods: m})
	m["message/send"] = nil
	ts := httptest.NewServer(server.NewJSONRPCHandler(h, server.TransportOptions{Logger: testutil.Logger()}))
	defer ts.Close()
	_, b := testutil.Post(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"x/y"}`)
	if r := decodeRPC(t, b); string(r.Result) != "null" {
		t.Fatalf("x/y through NewJSONRPCHandler: %s", b)
	}
}
