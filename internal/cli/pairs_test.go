package cli

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/pair"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// createPair creates a pair at base with the bearer token (none when
// empty) and returns the status and, on 201, the pair.
func createPair(t *testing.T, base, token string) (int, pair.Info) {
	t.Helper()
	code, b := call(t, http.MethodPost, base+"/api/pairs", "", bearer(token)...)
	var info pair.Info
	if code == http.StatusCreated {
		if err := json.Unmarshal([]byte(b), &info); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
	}
	return code, info
}

// backchannel reads a pair's events until "end" (or the stream ends).
func backchannel(t *testing.T, u, token string) <-chan []pair.Event {
	t.Helper()
	resp := testutil.Open(t, testutil.NewRequest(t, context.Background(), http.MethodGet, u, "", bearer(token)...))
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan []pair.Event, 1)
	go func() {
		defer resp.Body.Close()
		var evs []pair.Event
		r := sse.NewReader(resp.Body)
		for {
			e, err := r.Next()
			if err != nil {
				break
			}
			var ev pair.Event
			if json.Unmarshal(e.Data, &ev) != nil || e.Event != ev.Type {
				break
			}
			evs = append(evs, ev)
		}
		out <- evs
	}()
	return out
}

// say sends text (in the task taskID when set; ending the pair when end)
// in a goroutine, and returns the channel of its answer.
func say(ctx context.Context, t *testing.T, c *client.Client, text, taskID string, end bool) <-chan *a2a.Task {
	t.Helper()
	p := testutil.UserMessage(text, taskID)
	if end {
		p.Message.Metadata = map[string]any{pair.MetadataKey: map[string]any{"end": true}}
	}
	out := make(chan *a2a.Task, 1)
	go func() {
		ev, err := c.SendMessage(ctx, p)
		task, _ := ev.(*a2a.Task)
		if err != nil || task == nil {
			t.Errorf("send %q: %v, %T", text, err, ev)
		}
		out <- task
	}()
	return out
}

// answer waits for the answer on c and checks its state and the text of
// its last artifact.
func answer(t *testing.T, c <-chan *a2a.Task, state a2a.TaskState, text string) *a2a.Task {
	t.Helper()
	task := testutil.Receive(t, c, 30*time.Second, "an answer")
	if task == nil {
		t.FailNow()
	}
	got := ""
	if n := len(task.Artifacts); n > 0 {
		for _, p := range task.Artifacts[n-1].Parts {
			if tp, ok := p.Content.(a2a.Text); ok {
				got = string(tp)
			}
		}
	}
	if task.Status.State != state || got != text {
		t.Fatalf("task %s: %s with last artifact %q, want %s and %q", task.ID, task.Status.State, got, state, text)
	}
	return task
}

// TestServePairs: two clients (A2A 1.0 JSON-RPC on side A, 0.3
// HTTP+JSON on side B) hold a conversation through a pair, turn by turn,
// and A ends it; the backchannel shows every turn. In a second pair, B
// cancels, and A's task ends canceled too. The pairs API requires the
// admin token.
func TestServePairs(t *testing.T) {
	cfg := writeConfig(t, "admin:\n  bearer_tokens:\n    ops: s3cret\npairs:\n  enabled: true\n  max_open: 2\n")
	addr := freeAddr(t)
	base := "http://" + addr
	startChild(t, "--config", cfg, "--memory", "--addr", addr)
	if code, _ := createPair(t, base, ""); code != http.StatusUnauthorized {
		t.Fatalf("POST /api/pairs without the admin token: %d", code)
	}
	code, info := createPair(t, base, "s3cret")
	if code != http.StatusCreated || info.A.URL != base+"/a2a/pair-"+info.ID+"-a" {
		t.Fatalf("POST /api/pairs: %d %+v", code, info)
	}
	events := backchannel(t, info.Events, "s3cret")
	ctx := context.Background()
	ca, err := client.Dial(ctx, info.A.Card, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := client.Dial(ctx, info.B.Card, client.Options{Protocol: a2a.Version03, Binding: a2a.TransportHTTPJSON})
	if err != nil {
		t.Fatal(err)
	}
	aTurn := say(ctx, t, ca, "Hello, B.", "", false)
	b := answer(t, say(ctx, t, cb, "(joining)", "", false), a2a.TaskStateInputRequired, "Hello, B.")
	bTurn := say(ctx, t, cb, "Hello, A.", b.ID, false)
	a := answer(t, aTurn, a2a.TaskStateInputRequired, "Hello, A.")
	for i, line := range []string{"How are you?", "Fine.", "Good to hear."} {
		if i%2 == 0 {
			aTurn = say(ctx, t, ca, line, a.ID, false)
			answer(t, bTurn, a2a.TaskStateInputRequired, line)
			bTurn = nil
		} else {
			bTurn = say(ctx, t, cb, line, b.ID, false)
			answer(t, aTurn, a2a.TaskStateInputRequired, line)
		}
	}
	// B's turn: B says goodbye and ends.
	answer(t, say(ctx, t, cb, "Bye.", b.ID, true), a2a.TaskStateCompleted, "Good to hear.")
	answer(t, aTurn, a2a.TaskStateCompleted, "Bye.")
	evs := <-events
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, ev.Type+ev.Side)
	}
	if got := strings.Join(kinds, " "); strings.Count(got, "turn") != 6 || !strings.HasPrefix(got, "created") || !strings.HasSuffix(got, "turnb end") ||
		evs[len(evs)-1].Outcome != a2a.TaskStateCompleted || evs[len(evs)-2].Text != "Bye." {
		t.Fatalf("backchannel: %s", got)
	}
	// A continuation of a finished task is refused.
	if _, err := ca.SendMessage(ctx, testutil.UserMessage("more?", a.ID)); err == nil {
		t.Fatal("continuing an ended pair's task succeeded")
	}

	// Cancel from one side ends both.
	_, info = createPair(t, base, "s3cret")
	ca, _ = client.Dial(ctx, info.A.Card, client.Options{})
	cb, _ = client.Dial(ctx, info.B.Card, client.Options{})
	aTurn = say(ctx, t, ca, "Hi.", "", false)
	b = answer(t, say(ctx, t, cb, "(joining)", "", false), a2a.TaskStateInputRequired, "Hi.")
	if task, err := cb.CancelTask(ctx, a2a.CancelTaskRequest{ID: b.ID}); err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %v", err)
	}
	answer(t, aTurn, a2a.TaskStateCanceled, "")
	var ae *a2a.Error
	if _, err := cb.CancelTask(ctx, a2a.CancelTaskRequest{ID: b.ID}); !errors.As(err, &ae) || ae.Code != a2a.CodeTaskNotCancelable {
		t.Fatalf("second cancel: %v", err)
	}
}

// TestPairsServerAuth: without an admin block, the
// pairs API requires the server's default authentication (auth:, or
// --auth-token), the pair's state and backchannel too; with no
// authentication configured at all it is open, as the agents are.
func TestPairsServerAuth(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		token string
	}{
		{"auth block", []string{"--config", writeConfig(t, "auth:\n  bearer_tokens:\n    alice: s3cret-token\npairs:\n  enabled: true\n")}, "s3cret-token"},
		{"--auth-token", []string{"--config", writeConfig(t, "pairs:\n  enabled: true\n"), "--auth-token", "bob=b0b-token"}, "b0b-token"},
		{"no auth", []string{"--config", writeConfig(t, "pairs:\n  enabled: true\n")}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := startServe(t, c.args...)
			code, _ := createPair(t, base, "")
			if c.token == "" {
				if code != http.StatusCreated {
					t.Fatalf("POST /api/pairs with no authentication configured: %d", code)
				}
				return
			}
			if code != http.StatusUnauthorized {
				t.Fatalf("POST /api/pairs without credentials: %d, want 401", code)
			}
			if code, _ := createPair(t, base, "wrong"); code != http.StatusUnauthorized {
				t.Fatalf("POST /api/pairs with a wrong token: %d, want 401", code)
			}
			code, info := createPair(t, base, c.token)
			if code != http.StatusCreated {
				t.Fatalf("POST /api/pairs with the server's token: %d", code)
			}
			for _, u := range []string{base + "/api/pairs/" + info.ID, info.Events} {
				resp, _ := testutil.Get(t, u)
				if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
					t.Fatalf("GET %s without credentials: %d %q, want 401 with a challenge", u, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
				}
			}
		})
	}
}
