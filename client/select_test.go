package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	wirecard "github.com/a2abridge/a2abridge/internal/wire/card"
)

// Card shapes as the SDKs serve them (interop/V1_WIRE_NOTES.md §2).
const (
	// a2a-go v2.4.0, default (1.0 only).
	cardA2AGoV2 = `{"supportedInterfaces":[{"url":"http://h/a2a/echo","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
  {"url":"http://h/a2a/echo/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],
 "capabilities":{"pushNotifications":true,"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
 "description":"d","name":"echo","skills":[{"id":"echo","name":"Echo","description":"d","tags":["echo"]}],"version":"1.0.0"}`
	// @a2a-js/sdk 1.3.0 with REST listed first.
	cardJSV1 = `{"name":"echo","description":"d","version":"1.0.0","capabilities":{"streaming":true},
 "supportedInterfaces":[{"url":"http://h/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},{"url":"http://h/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
 "defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`
	// a2a-go v2's legacy-compat union card: 1.0 interfaces and the 0.3 url.
	cardA2AGoCompat = `{"supportedInterfaces":[{"url":"http://h/v1","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"http://h/v0","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],
 "url":"http://h/v0","protocolVersion":"0.3","preferredTransport":"JSONRPC","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"description":"d","name":"echo","skills":[],"version":"1"}`
	// A 0.3-only card with an HTTP+JSON interface preferred.
	card03 = `{"protocolVersion":"0.3.0","name":"old","description":"d","url":"http://h/rest","preferredTransport":"HTTP+JSON",
 "additionalInterfaces":[{"url":"http://h/rest","transport":"HTTP+JSON"},{"url":"http://h/rpc","transport":"JSONRPC"}],
 "version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`
	// 1.0 versions spelled differently, a tenant, and interfaces we cannot use.
	cardOdd = `{"name":"odd","description":"d","version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],
 "supportedInterfaces":[{"url":"grpc://h:1","protocolBinding":"GRPC","protocolVersion":"1.0"},{"url":"/relative","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
  {"url":"http://h/t","protocolBinding":"jsonrpc","protocolVersion":"1.0.1","tenant":"acme"},{"url":"http://h/r","protocolBinding":"HTTP+JSON","protocolVersion":"v1"},
  {"url":"http://h/two","protocolBinding":"JSONRPC","protocolVersion":"2.0"}]}`
	// Ours with the 0.3 HTTP+JSON interface: in additionalInterfaces after
	// the preferred JSON-RPC url, and last in supportedInterfaces.
	ours03rest = `{"protocolVersion":"0.3.0","name":"echo","description":"d","url":"http://h/a2a/echo","preferredTransport":"JSONRPC",
 "additionalInterfaces":[{"url":"http://h/a2a/echo","transport":"JSONRPC"},{"url":"http://h/a2a/echo","transport":"HTTP+JSON"}],"version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],
 "supportedInterfaces":[{"url":"http://h/a2a/echo","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"http://h/a2a/echo","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},{"url":"http://h/a2a/echo","protocolBinding":"HTTP+JSON","protocolVersion":"0.3"}]}`
	// a2a-go v2's compat card with --compat's 0.3 HTTP+JSON interface.
	cardA2AGoCompatREST = `{"supportedInterfaces":[{"url":"http://h/v1","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"http://h/v0","protocolBinding":"JSONRPC","protocolVersion":"0.3"},{"url":"http://h/v0","protocolBinding":"HTTP+JSON","protocolVersion":"0.3"}],
 "url":"http://h/v0","protocolVersion":"0.3","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"http://h/v0","transport":"HTTP+JSON"}],"capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"description":"d","name":"echo","skills":[],"version":"1"}`
	// A card whose only usable interface is a 0.3 HTTP+JSON entry of
	// supportedInterfaces.
	cardSI03REST = `{"name":"s","description":"d","version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],
 "supportedInterfaces":[{"url":"http://h/g","protocolBinding":"GRPC","protocolVersion":"1.0"},{"url":"http://h/r03","protocolBinding":"HTTP+JSON","protocolVersion":"0.3"}]}`
	cardGRPC = `{"name":"g","description":"d","version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],
 "supportedInterfaces":[{"url":"http://h/g","protocolBinding":"GRPC","protocolVersion":"1.0"}]}`
	cardGRPCTarget = `{"name":"g","description":"d","version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],
 "supportedInterfaces":[{"url":"g.example:443","protocolBinding":"GRPC","protocolVersion":"1.0","tenant":"t"}]}`
	cardBoth = `{"name":"g","description":"d","version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],
 "supportedInterfaces":[{"url":"dns:///g.example:8443","protocolBinding":"GRPC","protocolVersion":"1.0"},{"url":"http://h/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`
)

func TestSelectInterface(t *testing.T) {
	t.Parallel()
	ours := fmt.Sprintf(`{"protocolVersion":"0.3.0","name":"echo","description":"d","url":"http://h/a2a/echo","preferredTransport":"JSONRPC","version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],
 "supportedInterfaces":[{"url":"http://h/a2a/echo","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"http://h/a2a/echo","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},{"url":"http://h/a2a/echo","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]}`)
	for _, tc := range []struct {
		name, card        string
		protocol, binding string
		want              string // Interface.String(), or "error: <substrings>"
	}{
		{"a2a-go v2", cardA2AGoV2, "", "", "A2A 1.0 JSONRPC at http://h/a2a/echo"},
		{"a2a-go v2 rest", cardA2AGoV2, "", "rest", "A2A 1.0 HTTP+JSON at http://h/a2a/echo/rest"},
		{"a2a-go v2 forced 0.3", cardA2AGoV2, "0.3", "", "error: A2A 0.3|JSONRPC 1.0 at \"http://h/a2a/echo\"|HTTP+JSON 1.0 at \"http://h/a2a/echo/rest\""},
		{"a2a-js 1.x: card order", cardJSV1, "", "", "A2A 1.0 HTTP+JSON at http://h/rest"},
		{"a2a-js 1.x jsonrpc", cardJSV1, "1.0", a2a.TransportJSONRPC, "A2A 1.0 JSONRPC at http://h/rpc"},
		{"a2a-go compat", cardA2AGoCompat, "", "", "A2A 1.0 JSONRPC at http://h/v1"},
		{"a2a-go compat 0.3", cardA2AGoCompat, "0.3", "", "A2A 0.3 JSONRPC at http://h/v0"},
		{"ours", ours, "", "", "A2A 1.0 JSONRPC at http://h/a2a/echo"},
		{"ours 0.3", ours, "0.3", "", "A2A 0.3 JSONRPC at http://h/a2a/echo"},
		{"ours rest", ours, "", a2a.TransportHTTPJSON, "A2A 1.0 HTTP+JSON at http://h/a2a/echo"},
		{"0.3 only: the preferred HTTP+JSON", card03, "", "", "A2A 0.3 HTTP+JSON at http://h/rest"},
		{"0.3 only, forced rest", card03, "", "rest", "A2A 0.3 HTTP+JSON at http://h/rest"},
		{"0.3 only, forced JSON-RPC", card03, "0.3", a2a.TransportJSONRPC, "A2A 0.3 JSONRPC at http://h/rpc"},
		{"ours 0.3 rest", ours03rest, "0.3", "rest", "A2A 0.3 HTTP+JSON at http://h/a2a/echo"},
		{"ours 0.3: preferred JSON-RPC though listed last", ours03rest, "0.3", "", "A2A 0.3 JSONRPC at http://h/a2a/echo"},
		{"ours, rest: 1.0 wins", ours03rest, "", "rest", "A2A 1.0 HTTP+JSON at http://h/a2a/echo"},
		{"a2a-go compat 0.3 rest", cardA2AGoCompatREST, "0.3", "rest", "A2A 0.3 HTTP+JSON at http://h/v0"},
		{"supportedInterfaces only, 0.3 rest", cardSI03REST, "", "", "A2A 0.3 HTTP+JSON at http://h/r03"},
		{"0.3 only, forced 1.0", card03, "1.0", "", "error: A2A 1.0 JSON-RPC or HTTP+JSON"},
		{"1.0 JSON-RPC only, forced rest", cardA2AGoCompat, "", "rest", "error: A2A 1.0 or 0.3 HTTP+JSON|JSONRPC 0.3 at \"http://h/v0\""},
		{"odd versions and tenant", cardOdd, "", "", "A2A 1.0 JSONRPC at http://h/t (tenant acme)"},
		{"odd, rest", cardOdd, "", "rest", "A2A 1.0 HTTP+JSON at http://h/r"},
		{"gRPC only", cardGRPC, "", "", "error: offers no interface this client speaks|GRPC 1.0 at \"http://h/g\""},
		{"bad protocol", cardA2AGoV2, "1.1.x", "", "error: Options.Protocol"},
		{"bad binding", cardA2AGoV2, "", "SOAP", "error: Options.Binding"},
		{"gRPC at a URL, not a target", cardGRPC, "", "GRPC", "error: offers no A2A 1.0 GRPC interface"},
		{"gRPC over 0.3", cardGRPC, "0.3", "GRPC", "error: gRPC in A2A 1.0 only"},
		{"gRPC only, a target", cardGRPCTarget, "", "", "A2A 1.0 GRPC at g.example:443 (tenant t)"},
		{"gRPC only, 0.3 asked", cardGRPCTarget, "0.3", "", "error: offers no A2A 0.3 JSON-RPC or HTTP+JSON interface"},
		{"gRPC and JSON-RPC, unforced", cardBoth, "", "", "A2A 1.0 JSONRPC at http://h/rpc"},
		{"gRPC and JSON-RPC, gRPC asked", cardBoth, "", "grpc", "A2A 1.0 GRPC at dns:///g.example:8443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			card, _, err := wirecard.Unmarshal([]byte(tc.card))
			if err != nil {
				t.Fatal(err)
			}
			got, err := client.SelectInterface(&card, tc.protocol, tc.binding)
			if want, isErr := strings.CutPrefix(tc.want, "error: "); isErr {
				if err == nil {
					t.Fatalf("chose %s, want an error", got)
				}
				for _, s := range strings.Split(want, "|") {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				return
			}
			if err != nil || got.String() != tc.want {
				t.Fatalf("got %v, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// fake serves card (with %s as its base URL) at the well-known path and
// answers every other request with h.
func fake(t *testing.T, card string, h http.HandlerFunc) *httptest.Server {
	var ts *httptest.Server
	ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, card, ts.URL, ts.URL)
			return
		}
		h(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// card10 is a 1.0-only card with a JSON-RPC interface at %s/rpc and an
// HTTP+JSON one at %s/rest.
const card10 = `{"name":"f","description":"d","version":"1","capabilities":{"streaming":true},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],
 "supportedInterfaces":[{"url":"%s/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"%s/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`

const errorInfo = `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":%q,"domain":"a2a-protocol.org"}]`

// TestErrorsPerBinding: what 1.0 servers answer becomes *a2a.Error with the
// right code (errors.Is works), *HTTPError only when no A2A error is there.
func TestErrorsPerBinding(t *testing.T) {
	t.Parallel()
	rpcErr := func(code int, reason string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"m","data":`+errorInfo+`}}`, rpcID(r), code, reason)
		}
	}
	restErr := func(status int, ct, reason string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"code":%d,"status":"X","message":"m","details":`+errorInfo+`}}`, status, reason)
		}
	}
	isHTTP := func(err error) bool { var he *client.HTTPError; return errors.As(err, &he) }
	for _, tc := range []struct {
		name     string
		binding  string
		h        http.HandlerFunc
		want     *a2a.Error // nil: an *HTTPError only
		alsoHTTP bool
	}{
		{"JSON-RPC TASK_NOT_FOUND", a2a.TransportJSONRPC, rpcErr(-32001, "TASK_NOT_FOUND"), a2a.ErrTaskNotFound, false},
		{"JSON-RPC unknown code, known reason (a2a-go)", a2a.TransportJSONRPC, rpcErr(-31401, "UNAUTHENTICATED"), a2a.ErrUnauthenticated, false},
		{"REST 404 application/json", a2a.TransportHTTPJSON, restErr(404, "application/json", "TASK_NOT_FOUND"), a2a.ErrTaskNotFound, false},
		{"REST 404 application/a2a+json (a2a-js)", a2a.TransportHTTPJSON, restErr(404, "application/a2a+json; charset=utf-8", "TASK_NOT_FOUND"), a2a.ErrTaskNotFound, false},
		{"REST 400 UNSUPPORTED_OPERATION", a2a.TransportHTTPJSON, restErr(400, "application/json", "UNSUPPORTED_OPERATION"), a2a.ErrUnsupportedOperation, false},
		{"REST 503 with a status: retryable", a2a.TransportHTTPJSON, restErr(503, "application/json", "INTERNAL"), a2a.ErrInternal, true},
		{"REST 502 HTML", a2a.TransportHTTPJSON, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<html>bad gateway</html>")
		}, nil, true},
		{"REST 404 not a status", a2a.TransportHTTPJSON, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			io.WriteString(w, `{"error":"agent not found"}`)
		}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := fake(t, card10, tc.h)
			c := dial(t, ts.URL, client.Options{Binding: tc.binding, MaxRetries: -1})
			_, err := c.GetTask(context.Background(), a2a.GetTaskRequest{ID: "t"})
			var ae *a2a.Error
			if tc.want == nil {
				if !isHTTP(err) || errors.As(err, &ae) {
					t.Fatalf("err = %v (%T), want an *HTTPError only", err, err)
				}
				return
			}
			if !errors.Is(err, tc.want) || isHTTP(err) != tc.alsoHTTP {
				t.Fatalf("err = %v (%T), want %v (also an HTTP error: %v)", err, err, tc.want, tc.alsoHTTP)
			}
		})
	}
}

// TestStreamErrorsPerBinding: errors before and inside 1.0 streams.
func TestStreamErrorsPerBinding(t *testing.T) {
	t.Parallel()
	task := `{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`
	status := `{"error":{"code":404,"status":"NOT_FOUND","message":"gone","details":` + fmt.Sprintf(errorInfo, "TASK_NOT_FOUND") + `}}`
	sse := func(frames ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			id := ""
			if strings.HasSuffix(r.URL.Path, "/rpc") {
				id = rpcID(r)
			}
			for _, f := range frames {
				if strings.Contains(f, "%s") {
					f = fmt.Sprintf(f, id)
				}
				fmt.Fprint(w, f)
			}
		}
	}
	for _, tc := range []struct {
		name, binding string
		h             http.HandlerFunc
		events        int
	}{
		{"JSON-RPC error frame", a2a.TransportJSONRPC, sse(`data: {"jsonrpc":"2.0","id":%s,"result":`+task+"}\n\n",
			`data: {"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"gone","data":`+fmt.Sprintf(errorInfo, "TASK_NOT_FOUND")+"}}\n\n"), 1},
		{"JSON-RPC error as JSON before the stream", a2a.TransportJSONRPC, rpcErrorJSON(-32001), 0},
		{"REST status before the stream", a2a.TransportHTTPJSON, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			io.WriteString(w, status)
		}, 0},
		{"REST event: error (a2abridge, a2a-js)", a2a.TransportHTTPJSON, sse("data: "+task+"\n\n", "event: error\ndata: "+status+"\n\n"), 1},
		{"REST bare error frame (a2a-go v2)", a2a.TransportHTTPJSON, sse("data: " + status + "\n\n"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := fake(t, card10, tc.h)
			c := dial(t, ts.URL, client.Options{Binding: tc.binding, MaxRetries: -1})
			n := 0
			var last error
			for _, err := range c.SubscribeToTask(context.Background(), a2a.SubscribeToTaskRequest{ID: "t"}, "") {
				if err != nil {
					last = err
					break
				}
				n++
			}
			var he *client.HTTPError
			if n != tc.events || !errors.Is(last, a2a.ErrTaskNotFound) || errors.As(last, &he) {
				t.Fatalf("%d events, then %v (%T)", n, last, last)
			}
		})
	}
}

func rpcErrorJSON(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"m"}}`, rpcID(r), code)
	}
}

// TestResumeWithoutEventLog10: a 1.0 HTTP+JSON server without the event
// log drops the stream; the client subscribes again (with the last id
// seen as Last-Event-ID, which such a server may ignore) and flags the gap. When the task ended
// meanwhile and the server refuses to subscribe (A2A 1.0 §3.1.6), the
// client reads the task and ends with it.
func TestResumeWithoutEventLog10(t *testing.T) {
	t.Parallel()
	const working = `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`
	for _, refuse := range []bool{false, true} {
		t.Run(fmt.Sprint("refuse=", refuse), func(t *testing.T) {
			var subs atomic.Int32
			ts := fake(t, card10, func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/rest/message:stream":
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, "id: a\ndata: "+working+"\n\n") // and the connection ends
				case r.URL.Path == "/rest/tasks/t1:subscribe" && r.Method == http.MethodPost:
					subs.Add(1)
					if r.Header.Get("Last-Event-ID") != "a" || r.Header.Get("A2A-Version") != "1.0" {
						t.Errorf("subscribe headers %v", r.Header)
					}
					if refuse {
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(400)
						fmt.Fprintf(w, `{"error":{"code":400,"message":"terminal","details":`+errorInfo+`}}`, "UNSUPPORTED_OPERATION")
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, "data: "+strings.Replace(working, "WORKING", "COMPLETED", 1)+"\n\n")
				case r.URL.Path == "/rest/tasks/t1" && r.Method == http.MethodGet:
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}`)
				default:
					t.Errorf("unexpected %s %s", r.Method, r.URL)
					http.NotFound(w, r)
				}
			})
			c := dial(t, ts.URL, client.Options{Binding: a2a.TransportHTTPJSON, RetryBaseDelay: time.Millisecond})
			var evs []client.StreamEvent
			for ev, err := range c.SendStreamingMessage(context.Background(), text("x")) {
				if err != nil {
					t.Fatal(err)
				}
				evs = append(evs, ev)
			}
			if len(evs) != 2 || subs.Load() != 1 || !evs[1].Resumed || !evs[1].Gap {
				t.Fatalf("events %+v after %d subscriptions", evs, subs.Load())
			}
			if tk, ok := evs[1].Event.(*a2a.Task); !ok || tk.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("last event %#v", evs[1].Event)
			}
		})
	}
}
