package rest_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/binding"
	"github.com/a2abridge/a2abridge/internal/binding/edge"
	"github.com/a2abridge/a2abridge/internal/binding/rest"
)

// stub is a binding.Handler of its own, not the engine's.
type stub struct {
	binding.Handler
	task *a2a.Task
}

func (s stub) GetTask(_ context.Context, req a2a.GetTaskRequest) (*a2a.Task, error) {
	if req.ID != s.task.ID || req.Tenant != "acme" {
		return nil, a2a.ErrTaskNotFound.WithMessage("Task not found: %s", req.ID)
	}
	return s.task, nil
}

func (s stub) CancelTask(context.Context, a2a.CancelTaskRequest) (*a2a.Task, error) {
	return nil, errors.New("the disk is on fire")
}

// serve routes and serves one request as a Host does.
func serve(b *rest.Binding, method, path, version string) (*http.Response, string) {
	r := httptest.NewRequest(method, path, nil)
	if version != "" {
		r.Header.Set(edge.HeaderA2AVersion, version)
	}
	w := httptest.NewRecorder()
	if rt, ok := b.Route(method, strings.TrimPrefix(r.URL.EscapedPath(), "/")); !ok {
		b.WriteError(w, r, http.StatusNotFound, a2a.ErrMethodNotFound)
	} else {
		b.Serve(w, r, rt)
	}
	return w.Result(), w.Body.String()
}

// Both versions' bindings answer from any Handler, each in its JSON, with
// the HTTP status and error body of its version.
func TestServesAnyHandler(t *testing.T) {
	task := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	opts := edge.Options{MaxBodyBytes: 1 << 20, MaxBatch: 4, KeepAlive: -1, StreamWriteTimeout: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), ProtocolVersions: edge.ServedVersions}
	a := &edge.Agent{Handler: stub{task: task}, Name: "stub"}
	v10 := rest.New(a, a2a.Version10, opts, nil, edge.CardCaching{}, time.Time{})
	v03 := rest.New(a, a2a.Version03, opts, nil, edge.CardCaching{}, time.Time{})
	for _, tc := range []struct {
		name                  string
		b                     *rest.Binding
		method, path, version string
		status                int
		want                  string
	}{
		{"1.0 GetTask below a tenant", v10, "GET", "/acme/tasks/t1", "1.0", 200,
			`{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}`},
		{"1.0 unknown task", v10, "GET", "/tasks/t1", "1.0", 404, `"reason":"TASK_NOT_FOUND"`},
		{"1.0 internal error", v10, "POST", "/acme/tasks/t1:cancel", "1.0", 500, `"code":500`},
		{"1.0 path of another method", v10, "DELETE", "/tasks/t1", "1.0", 405, `"reason":"UNSUPPORTED_OPERATION"`},
		{"1.0 path asked as 0.3", v10, "GET", "/acme/tasks/t1", "", 400, `"reason":"VERSION_NOT_SUPPORTED"`},
		{"0.3 unknown task", v03, "GET", "/v1/tasks/t1", "", 404, `"code":404`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := serve(tc.b, tc.method, tc.path, tc.version)
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
				t.Fatalf("HTTP %d %s\nwant %d with %s", resp.StatusCode, body, tc.status, tc.want)
			}
			if strings.Contains(body, "disk") {
				t.Fatalf("an internal error's text reached the client: %s", body)
			}
		})
	}
}
