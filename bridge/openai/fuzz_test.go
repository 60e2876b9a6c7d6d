package openai_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/openai"
)

// FuzzUpstream answers the agent's request with arbitrary bodies and
// statuses: the task always ends completed (with its answer) or failed
// (with a reason), and nothing panics or hangs.
func FuzzUpstream(f *testing.F) {
	chunk := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}` + "\n\n"
	done := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	usage := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}` + "\n\n"
	f.Add(uint16(0), chunk+done+usage+"data: [DONE]\n\n")
	f.Add(uint16(0), chunk+chunk)
	f.Add(uint16(0), `data: {"choices":[{"index":0,"delta":{"refusal":"no"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	f.Add(uint16(0), `data: {"error":{"message":"boom"}}`+"\n\n")
	f.Add(uint16(0), "data: {not json\n\n")
	f.Add(uint16(0), `data: {"choices":[{"index":1,"delta":{"content":"x"}}]}`+"\n\n"+done)
	f.Add(uint16(201), `{"error":{"message":"model gone"}}`)
	f.Add(uint16(229), `{"error":"slow down"}`)
	f.Add(uint16(300), "<html>bad gateway</html>")
	f.Add(uint16(0), "event: ping\ndata: x\n\n: comment\n\n"+done)

	var status atomic.Int32
	var body atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := int(status.Load())
		if st == 200 {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(st)
		_, _ = w.Write([]byte(body.Load().(string)))
	}))
	f.Cleanup(up.Close)
	zero := 0
	e := startFuzz(f, openai.Config{BaseURL: up.URL + "/v1", Model: "m", MaxRetries: &zero, Timeout: 10 * time.Second, APIKey: "sk-fuzz-key"})

	f.Fuzz(func(t *testing.T, st uint16, b string) {
		code := 200
		if st != 0 {
			code = 200 + int(st)%400
		}
		if code == 204 || code == 304 || code < 200 {
			code = 200
		}
		status.Store(int32(code))
		body.Store(b)
		ev, err := e.c.SendMessage(context.Background(), a2a.MessageSendParams{Message: userText("hi")})
		if err != nil {
			t.Fatal(err)
		}
		task := ev.(*a2a.Task)
		switch task.Status.State {
		case a2a.TaskStateCompleted:
			if len(task.Artifacts) != 1 {
				t.Fatalf("completed with artifacts %+v", task.Artifacts)
			}
		case a2a.TaskStateFailed:
			reason := statusText(task)
			if reason == "" || strings.Contains(reason, "sk-fuzz-key") || strings.ContainsAny(reason, "\n\r") {
				t.Fatalf("failure reason %q", reason)
			}
		default:
			t.Fatalf("task ended %s", task.Status.State)
		}
	})
}
