package jsonrpc_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/binding"
	"github.com/a2abridge/a2abridge/internal/binding/edge"
	"github.com/a2abridge/a2abridge/internal/binding/jsonrpc"
)

// stub is a binding.Handler of its own, not the engine's: the binding
// must serve any Handler from what edge.Agent gives it. Operations it
// does not implement panic (the embedded nil Handler).
type stub struct {
	binding.Handler
	task *a2a.Task
}

func (s stub) GetTask(_ context.Context, req a2a.GetTaskRequest) (*a2a.Task, error) {
	if req.ID != s.task.ID {
		return nil, a2a.ErrTaskNotFound.WithMessage("Task not found: %s", req.ID)
	}
	return s.task, nil
}

func (s stub) CancelTask(context.Context, a2a.CancelTaskRequest) (*a2a.Task, error) {
	return nil, errors.New("the disk is on fire")
}

func (s stub) SendStreamingMessage(_ context.Context, req a2a.SendMessageRequest) (iter.Seq2[binding.StreamEvent, error], error) {
	return func(yield func(binding.StreamEvent, error) bool) {
		t := *s.task
		if !yield(binding.StreamEvent{Seq: 1, Event: &t, Hold: true}, nil) {
			return
		}
		yield(binding.StreamEvent{Seq: 2, Event: &a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID,
			Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, Final: true}}, nil)
	}, nil
}

func newBinding(t *testing.T, logs io.Writer) http.Handler {
	t.Helper()
	task := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	opts := edge.Options{MaxBodyBytes: 1 << 20, MaxBatch: 4, KeepAlive: -1, StreamWriteTimeout: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), ProtocolVersions: edge.ServedVersions}
	return jsonrpc.New(&edge.Agent{Handler: stub{task: task}, Name: "stub"}, nil, opts, nil, nil)
}

func call(t *testing.T, h http.Handler, version, body string) (*http.Response, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if version != "" {
		r.Header.Set(edge.HeaderA2AVersion, version)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result(), w.Body.String()
}

// The binding answers each version's methods from the same Handler, in
// that version's JSON, and maps the Handler's errors.
func TestServesAnyHandler(t *testing.T) {
	var logs bytes.Buffer
	h := newBinding(t, &logs)
	for _, tc := range []struct{ name, version, body, want string }{
		{"1.0 GetTask", "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1"}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`},
		{"0.3 tasks/get", "", `{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":{"id":"t1"}}`,
			`{"jsonrpc":"2.0","id":"a","result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}}}`},
		{"unknown task", "1.0", `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"nope"}}`, `"code":-32001`},
		{"1.0 method without A2A-Version", "", `{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"t1"}}`, `"code":-32009`},
		{"internal error", "1.0", `{"jsonrpc":"2.0","id":4,"method":"CancelTask","params":{"id":"t1"}}`, `"code":-32603`},
		{"unknown method", "1.0", `{"jsonrpc":"2.0","id":5,"method":"Nope","params":{}}`, `"code":-32601`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, h, tc.version, tc.body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, tc.want) {
				t.Fatalf("HTTP %d %s\nwant %s", resp.StatusCode, body, tc.want)
			}
		})
	}
	if !strings.Contains(logs.String(), "the disk is on fire") {
		t.Fatalf("the internal error was not logged: %q", logs.String())
	}
	if _, body := call(t, h, "1.0", `{"jsonrpc":"2.0","id":4,"method":"CancelTask","params":{"id":"t1"}}`); strings.Contains(body, "disk") {
		t.Fatalf("an internal error's text reached the client: %s", body)
	}
}

// A stream is the Handler's events as SSE, each with its sequence number
// as id, in the version's frame.
func TestStreamsAnyHandler(t *testing.T) {
	h := newBinding(t, io.Discard)
	resp, body := call(t, h, "1.0", `{"jsonrpc":"2.0","id":7,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q: %s", ct, body)
	}
	want := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"task\":{\"id\":\"t1\",\"contextId\":\"c1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n" +
		"id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"statusUpdate\":{\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}}\n\n"
	if body != want {
		t.Fatalf("stream:\n%s\nwant:\n%s", body, want)
	}
}
