package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	v03 "github.com/a2abridge/a2abridge/internal/wire/v03"
	"github.com/a2abridge/a2abridge/server"

	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

// TestDataNumbersExact: numbers in a DataPart and in metadata come back
// with their exact text (no float64 rounding) in the send answer, in
// tasks/get (history and artifact), on both stores, before and after a
// finished task is packed or checkpointed.
func TestDataNumbersExact(t *testing.T) {
	const data = `{"big":123456789012345678901234567890,"exact":9007199254740993,"huge":1e400,"precise":0.1000000000000000055511151231257827,"neg":-12345678901234567890.5,"z":-0,"t":0.10}`
	want := []string{"123456789012345678901234567890", "9007199254740993", "1e400",
		"0.1000000000000000055511151231257827", "-12345678901234567890.5", `"z":-0`, `"t":0.10`}
	for _, tc := range []struct {
		name string
		open func(testing.TB) store.Store
	}{
		{"memory", func(testing.TB) store.Store { return memory.New() }},
		{"sqlite", sqliteStore},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, testServerOptions{store: tc.open(t)})
			params := `{"message":{"kind":"message","role":"user","messageId":"num-1","metadata":{"m":9007199254740993},` +
				`"parts":[{"kind":"data","data":` + data + `}]}}`
			_, b := testutil.Post(t, ts.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":`+params+`}`)
			check := func(what string, b []byte) {
				t.Helper()
				s := string(b)
				for _, w := range want {
					// Once in the history, once in the artifact.
					if n := strings.Count(s, w); n < 2 {
						t.Errorf("%s: %q appears %d times, want 2 or more:\n%s", what, w, n, s)
					}
				}
				if !strings.Contains(s, `"m":9007199254740993`) {
					t.Errorf("%s: message metadata number changed:\n%s", what, s)
				}
				if strings.Contains(s, "e+29") || strings.Contains(s, "9007199254740992") {
					t.Errorf("%s: a number was rounded:\n%s", what, s)
				}
			}
			check("message/send", b)
			res := testutil.CallRPC(t, ts.URL+"/a2a/echo", "message/send", params) // the same messageId: the same task
			if res.Result.ID == "" {
				t.Fatalf("repeated send: no task id")
			}
			_, g := testutil.Post(t, ts.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+res.Result.ID+`"}}`)
			check("tasks/get", g)
		})
	}
}

// TestAgentValueThatIsNotJSON: an agent that puts a value no client could
// read (a json.Number that is not a number, NaN) into an event gets
// ErrInvalidEvent, and its task is failed with a reason naming the value,
// and stays readable; nothing unreadable is stored.
func TestAgentValueThatIsNotJSON(t *testing.T) {
	for name, v := range map[string]any{"bad number": json.Number("abc"), "NaN": math.NaN(), "channel": make(chan int)} {
		t.Run(name, func(t *testing.T) {
			eng := servertest.Engine(t, server.EngineOptions{})
			defer eng.Close(context.Background())
			got := make(chan error, 1)
			h := server.NewHandler(eng, "bad", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
				err := u.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewDataPart(map[string]any{"n": []any{1, v}})}}, false, true)
				got <- err
				return err
			}), testutil.Card("bad"), server.HandlerOptions{})
			task, err := h.SendMessageForTask(context.Background(), a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("x"))})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-got; !errors.Is(err, server.ErrInvalidEvent) {
				t.Fatalf("AddArtifact: %v, want ErrInvalidEvent", err)
			}
			read, err := h.GetTask(context.Background(), a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if read.Status.State != a2a.TaskStateFailed || len(read.Artifacts) != 0 || read.Status.Message == nil ||
				!strings.Contains(read.Status.Message.Parts[0].Text(), "artifact.parts[0].data.n[1]") {
				t.Fatalf("task after the bad value: %+v", read.Status)
			}
			if _, err := v03.MarshalEvent(read); err != nil {
				t.Fatalf("the task cannot be encoded: %v", err)
			}
		})
	}
}
