package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

type panicHook struct{}

func (panicHook) Execute(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	return u.RequireInput(ctx, "?")
}
func (panicHook) Cancel(ctx context.Context, task a2a.Task) error { panic("hook bug") }

// A panicking Canceler hook reached through a batch request (whose members
// run in goroutines net/http does not guard) must not kill the process: the
// task is canceled and the batch answered.
func TestBatchCancelHookPanicIsContained(t *testing.T) {
	eng := servertest.Engine(t, server.EngineOptions{})
	h := server.NewHandler(eng, "a", panicHook{}, card(), server.HandlerOptions{})
	host := servertest.Host("", h)
	ts := httptest.NewServer(host)
	defer ts.Close()
	tk, err := h.SendMessageForTask(context.Background(), testutil.UserMessage("hi", ""))
	if err != nil {
		t.Fatal(err)
	}
	body := `[{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"` + tk.ID + `"}}]`
	resp, err := http.Post(ts.URL+"/a2a/a", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"state":"canceled"`) {
		t.Fatalf("batch cancel answer: %s", b)
	}
}
