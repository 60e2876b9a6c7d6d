package client_test

// Tests of the client's A2A 0.3 HTTP+JSON interface against the answers
// of the official 0.3 servers (interop/V03_REST_NOTES.md): a2a-go v2's
// a2acompat/a2av0 and @a2a-js/sdk 0.3.14. a2abridge's own /v1/… binding
// is covered with the other interfaces in versions_test.go.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
)

// card03REST is a 0.3 card whose preferred interface is HTTP+JSON at %s/r.
const card03REST = `{"protocolVersion":"0.3.0","name":"f","description":"d","url":"%s/r","preferredTransport":"HTTP+JSON",
 "additionalInterfaces":[{"url":"%s/rpc","transport":"JSONRPC"}],"version":"1","capabilities":{"streaming":true},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`

const task03 = `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}`

// TestREST03ErrorBodies: the error bodies of a2a-go v2 (a google.rpc.Status
// as application/problem+json), @a2a-js/sdk (the JSON-RPC error members),
// a2a-python ({"message"} alone) and a proxy.
func TestREST03ErrorBodies(t *testing.T) {
	t.Parallel()
	answer := func(status int, ct, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/r/v1/tasks/t" || r.Method != http.MethodGet || r.Header.Get("A2A-Version") != "" {
				t.Errorf("request %s %s (A2A-Version %q)", r.Method, r.URL, r.Header.Get("A2A-Version"))
			}
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	for _, tc := range []struct {
		name     string
		h        http.HandlerFunc
		want     *a2a.Error // nil: an *HTTPError only
		alsoHTTP bool
	}{
		{"a2a-go v2", answer(404, "application/problem+json", `{"error":{"code":404,"status":"NOT_FOUND","message":"task not found","details":`+fmt.Sprintf(errorInfo, "TASK_NOT_FOUND")+`}}`), a2a.ErrTaskNotFound, false},
		{"a2a-js", answer(404, "application/json", `{"code":-32001,"message":"Task not found: t"}`), a2a.ErrTaskNotFound, false},
		{"a2a-js 409 not cancelable", answer(409, "application/json", `{"code":-32002,"message":"no"}`), a2a.ErrTaskNotCancelable, false},
		{"503 with an error: retryable", answer(503, "application/json", `{"code":-32603,"message":"busy"}`), a2a.ErrInternal, true},
		{"a2a-python", answer(422, "application/json", `{"message":"invalid"}`), nil, true},
		{"proxy", answer(502, "text/html", `<html>bad gateway</html>`), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, fake(t, card03REST, tc.h).URL, client.Options{MaxRetries: -1})
			_, err := c.GetTask(context.Background(), a2a.GetTaskRequest{ID: "t"})
			var ae *a2a.Error
			var he *client.HTTPError
			if tc.want == nil {
				if !errors.As(err, &he) || errors.As(err, &ae) {
					t.Fatalf("err = %v (%T), want an *HTTPError only", err, err)
				}
				return
			}
			if !errors.Is(err, tc.want) || errors.As(err, &he) != tc.alsoHTTP {
				t.Fatalf("err = %v (%T), want %v (also an HTTP error: %v)", err, err, tc.want, tc.alsoHTTP)
			}
		})
	}
}

// TestREST03StreamErrors: an error inside a 0.3 HTTP+JSON stream, as
// a2abridge and @a2a-js/sdk send it (event: error, the JSON-RPC members;
// a2abridge adds the Status) and as a2a-go v2 does (a bare {"error"} frame).
func TestREST03StreamErrors(t *testing.T) {
	t.Parallel()
	status := `{"error":{"code":404,"status":"NOT_FOUND","message":"gone","details":` + fmt.Sprintf(errorInfo, "TASK_NOT_FOUND") + `}}`
	for _, tc := range []struct {
		name, frame string
	}{
		{"a2a-js event: error", "event: error\ndata: {\"code\":-32001,\"message\":\"gone\"}\n\n"},
		{"a2abridge event: error", "event: error\ndata: " + strings.TrimSuffix(status, "}") + `,"code":-32001,"message":"gone"}` + "\n\n"},
		{"a2a-go v2 bare frame", "data: " + status + "\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := fake(t, card03REST, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/r/v1/tasks/t:subscribe" || r.Method != http.MethodPost {
					t.Errorf("request %s %s", r.Method, r.URL)
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "data: {\"task\":"+task03+"}\n\n", tc.frame)
			})
			c := dial(t, ts.URL, client.Options{MaxRetries: -1})
			n := 0
			var last error
			for ev, err := range c.SubscribeToTask(context.Background(), a2a.SubscribeToTaskRequest{ID: "t"}, "") {
				if err != nil {
					last = err
					break
				}
				if task, ok := ev.Event.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateWorking {
					t.Fatalf("event %+v", ev.Event)
				}
				n++
			}
			var ae *a2a.Error
			if n != 1 || !errors.Is(last, a2a.ErrTaskNotFound) || !errors.As(last, &ae) || ae.Message != "gone" {
				t.Fatalf("%d events, then %v (%T)", n, last, last)
			}
		})
	}
}

// TestREST03PeerShapes: what a2a-go v2's 0.3 server answers besides
// errors: 204 without a body for DELETE, TASK_STATE_CANCELLED, a config
// named by "name" alone, a bare array of configs; and what the client
// sends: the 0.3 proto's JSON, the whole create request, no body for
// cancel.
func TestREST03PeerShapes(t *testing.T) {
	t.Parallel()
	cfg := `{"name":"tasks/t/pushNotificationConfigs/p1","pushNotificationConfig":{"url":"https://h/hook"}}`
	ts := fake(t, card03REST, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		route := r.Method + " " + strings.TrimPrefix(r.URL.Path, "/r/v1")
		w.Header().Set("Content-Type", "application/json")
		switch route {
		case "POST /message:send":
			if !strings.Contains(string(body), `"content":[{"text":"hi"}]`) || !strings.Contains(string(body), `"role":"ROLE_USER"`) {
				t.Errorf("send body %s", body)
			}
			io.WriteString(w, `{"message":{"messageId":"m","role":"ROLE_AGENT","content":[{"file":{"fileWithBytes":"YWJj","mimeType":"text/plain"}}]}}`)
		case "POST /tasks/t:cancel":
			if len(body) != 0 {
				t.Errorf("cancel body %s", body)
			}
			io.WriteString(w, `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_CANCELLED"}}`)
		case "POST /tasks/t/pushNotificationConfigs":
			members := `"name":"tasks/t/pushNotificationConfigs/","pushNotificationConfig":{"url":"https://h/hook"}`
			if want := `{"parent":"tasks/t","config":{` + members + `},` + members + `}`; string(body) != want {
				t.Errorf("create body %s, want %s", body, want)
			}
			io.WriteString(w, cfg)
		case "GET /tasks/t/pushNotificationConfigs":
			io.WriteString(w, "["+cfg+"]")
		case "DELETE /tasks/t/pushNotificationConfigs/p1":
			w.WriteHeader(http.StatusNoContent)
		case "GET /card":
			fmt.Fprintf(w, card03REST, "http://x", "http://x")
		default:
			t.Errorf("unexpected %s", route)
			http.NotFound(w, r)
		}
	})
	ctx := context.Background()
	c := dial(t, ts.URL, client.Options{MaxRetries: -1})
	if got := c.Interface(); got.Binding != a2a.TransportHTTPJSON || got.ProtocolVersion != a2a.Version03 || got.URL != ts.URL+"/r" {
		t.Fatalf("interface %v", got)
	}
	res, err := c.SendMessage(ctx, text("hi"))
	if m, ok := res.(*a2a.Message); err != nil || !ok || string(m.Parts[0].Raw()) != "abc" {
		t.Fatalf("send: %#v %v", res, err)
	}
	task, err := c.CancelTask(ctx, a2a.CancelTaskRequest{ID: "t", Metadata: map[string]any{"not": "sent"}})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %+v %v", task, err)
	}
	pc, err := c.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: "t", PushNotificationConfig: a2a.PushNotificationConfig{URL: "https://h/hook"}})
	if err != nil || pc.TaskID != "t" || pc.PushNotificationConfig.ID != "p1" {
		t.Fatalf("create: %+v %v", pc, err)
	}
	// No config id: the first of the list.
	if pc, err = c.GetTaskPushNotificationConfig(ctx, a2a.GetTaskPushNotificationConfigRequest{TaskID: "t"}); err != nil || pc.PushNotificationConfig.ID != "p1" {
		t.Fatalf("get first: %+v %v", pc, err)
	}
	if err := c.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t", ID: "p1"}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if card, err := c.GetExtendedAgentCard(ctx); err != nil || card.URL != "http://x/r" {
		t.Fatalf("extended card: %+v %v", card, err)
	}
	if _, err := c.GetTask(ctx, a2a.GetTaskRequest{ID: ""}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty id: %v", err)
	}
}

// TestREST03ProtocolErrorNamesTheMember: an answer our decoders reject is
// a *ProtocolError that says where (a2a-go v2 answers a file part it could
// not read as {}).
func TestREST03ProtocolErrorNamesTheMember(t *testing.T) {
	t.Parallel()
	ts := fake(t, card03REST, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"task":{"id":"t","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"text":"x"},{}]}]}}`)
	})
	_, err := dial(t, ts.URL, client.Options{}).SendMessage(context.Background(), text("x"))
	var pe *client.ProtocolError
	if !errors.As(err, &pe) || pe.Method != "SendMessage" || !strings.HasSuffix(err.Error(), "part has none of text, file or data; exactly one is required at /task/artifacts/0/parts/1") {
		t.Fatalf("err = %v (%T)", err, err)
	}
}
