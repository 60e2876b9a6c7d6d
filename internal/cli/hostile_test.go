package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// hostileEnv makes this test binary, re-executed, run hostileMain: an A2A
// 0.3 JSON-RPC server on loopback that misbehaves as a backend of the
// gateway may (its value is unused).
const hostileEnv = "A2ABRIDGE_TEST_HOSTILE"

// startHostile starts the hostile backend as a child process and returns
// it; its base URL is the process's Ready. It prints "cancel PATH TASKID"
// for every tasks/cancel it gets. It is killed when the test ends.
func startHostile(t *testing.T) *testutil.Process {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a hostile backend process: not with -short")
	}
	cmd := childCommand()
	cmd.Env = append(cmd.Env, hostileEnv+"=1")
	p, err := testutil.Start(cmd, "listening on ", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

// hostileMain serves, each as an A2A 0.3 agent with a card at
// PATH/.well-known/agent-card.json that declares streaming:
//
//   - /flood: every stream gets a task and then 64 KiB text artifact
//     chunks, without end, as fast as they are read;
//   - /floodsend: a card without streaming, and every send is answered
//     with a task whose artifact has 64 KiB text parts without end;
//   - /hang: a stream's headers, then nothing; a send is never answered;
//   - /idle: a stream's first event (a working task), then nothing;
//   - /status: a working status update every 10 ms, without end;
//   - /bigcard: a 50 MB card;
//   - /hangcard: nothing is ever answered, not even the card;
//   - /snapshots: a stream of the same working Task snapshot, without end;
//   - /bigevent: a stream whose second event never ends;
//   - /pollforever: a card without streaming; a send answers a working
//     task, which tasks/get shows working, with a new status time each
//     time, for ever;
//   - /redirect: every request (its card included) is answered 307 to
//     the address in the query's "to";
//   - /cardelsewhere: a card whose interface URL is the "to" address;
//   - /openai/v1/…: an OpenAI-compatible endpoint whose answers never end
//     (hostileOpenAI).
//
// tasks/cancel is answered with a canceled task, and printed.
func hostileMain() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	base := "http://" + ln.Addr().String()
	var seq atomic.Int64
	chunk := strings.Repeat("x", 64<<10)
	out := bufio.NewWriter(os.Stdout)
	outMu := make(chan struct{}, 1)
	say := func(format string, args ...any) {
		outMu <- struct{}{}
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
		<-outMu
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		path = "/" + path
		if path == "/openai" {
			hostileOpenAI(w, r, rest, chunk)
			return
		}
		if path == "/redirect" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusTemporaryRedirect)
			return
		}
		if path == "/hangcard" {
			<-r.Context().Done() // not even the card is answered
			return
		}
		if strings.HasPrefix(rest, ".well-known/") {
			url := base + path
			if path == "/cardelsewhere" {
				url = r.URL.Query().Get("to")
			}
			w.Header().Set("Content-Type", "application/json")
			if path == "/bigcard" {
				writeBigCard(w, url)
				return
			}
			streaming := path != "/floodsend" && path != "/pollforever"
			fmt.Fprintf(w, `{"name":"hostile%s","description":"hostile","url":%q,"version":"1","protocolVersion":"0.3.0",`+
				`"capabilities":{"streaming":%v},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`,
				strings.ReplaceAll(path, "/", "-"), url, streaming)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ID      string `json:"id"`
				Message struct {
					ContextID string `json:"contextId"`
				} `json:"message"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
		}
		switch req.Method {
		case "tasks/cancel":
			say("cancel %s %s", path, req.Params.ID)
			answer(fmt.Sprintf(`{"kind":"task","id":%q,"contextId":"c","status":{"state":"canceled"}}`, req.Params.ID))
			return
		case "tasks/get":
			// Working, with a new status time at every read.
			answer(fmt.Sprintf(`{"kind":"task","id":%q,"contextId":"c","status":{"state":"working","timestamp":%q}}`,
				req.Params.ID, time.Now().UTC().Format(time.RFC3339Nano)))
			return
		case "message/send", "message/stream":
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, req.ID)
			return
		}
		task := fmt.Sprintf("t%d", seq.Add(1))
		ctxID := "c-" + task
		taskJSON := fmt.Sprintf(`{"kind":"task","id":%q,"contextId":%q,"status":{"state":"working"}}`, task, ctxID)
		if path == "/hang" {
			if req.Method == "message/stream" {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				http.NewResponseController(w).Flush()
			}
			<-r.Context().Done()
			return
		}
		if req.Method == "message/send" {
			if path == "/floodsend" {
				// A blocking send answered with a task of endless artifacts:
				// one enormous response.
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":%q,"contextId":%q,"status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[`, req.ID, task, ctxID)
				for i := 0; r.Context().Err() == nil; i++ {
					if i > 0 {
						fmt.Fprint(w, ",")
					}
					if _, err := fmt.Fprintf(w, `{"kind":"text","text":%q}`, chunk); err != nil {
						return
					}
				}
				return
			}
			answer(taskJSON)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		event := func(result string) error {
			_, err := fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", req.ID, result)
			if err == nil {
				err = rc.Flush()
			}
			return err
		}
		if event(taskJSON) != nil {
			return
		}
		switch path {
		case "/idle":
			<-r.Context().Done()
		case "/snapshots":
			for r.Context().Err() == nil {
				if event(taskJSON) != nil {
					return
				}
			}
		case "/bigevent":
			// One event that never ends.
			if _, err := fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"message\",\"messageId\":\"m\",\"role\":\"agent\",\"parts\":[{\"kind\":\"text\",\"text\":\"", req.ID); err != nil {
				return
			}
			for {
				if _, err := fmt.Fprint(w, chunk); err != nil {
					return
				}
			}
		case "/flood":
			for i := 0; ; i++ {
				if event(fmt.Sprintf(`{"kind":"artifact-update","taskId":%q,"contextId":%q,"artifact":{"artifactId":"a","parts":[{"kind":"text","text":%q}]},"append":%v}`,
					task, ctxID, chunk, i > 0)) != nil {
					return
				}
			}
		case "/status":
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
				}
				if event(fmt.Sprintf(`{"kind":"status-update","taskId":%q,"contextId":%q,"status":{"state":"working"},"final":false}`, task, ctxID)) != nil {
					return
				}
			}
		default:
			event(fmt.Sprintf(`{"kind":"status-update","taskId":%q,"contextId":%q,"status":{"state":"completed"},"final":true}`, task, ctxID))
		}
	})
	say("listening on %s", base)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// hostileOpenAI answers an OpenAI-compatible request without end: a
// streamed chat completion is 64 KiB content deltas, a chat completion
// and an embeddings response one JSON body that never closes.
func hostileOpenAI(w http.ResponseWriter, r *http.Request, rest, chunk string) {
	var req struct {
		Stream bool `json:"stream"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	rc := http.NewResponseController(w)
	switch {
	case rest == "v1/chat/completions" && req.Stream:
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", chunk); err != nil {
				return
			}
			_ = rc.Flush()
		}
	case rest == "v1/chat/completions":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`)
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
	case rest == "v1/embeddings":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","model":"m","data":[{"object":"embedding","index":0,"embedding":[0.5`)
		block := strings.Repeat(",0.125", 8192)
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, block); err != nil {
				return
			}
		}
	default:
		http.NotFound(w, r)
	}
}

// hostileCancels reports whether the hostile backend got a tasks/cancel
// for a task on path, within a generous limit.
func hostileCancels(t *testing.T, p *testutil.Process, path string) bool {
	t.Helper()
	return testutil.Poll(20*time.Second, func() bool { return strings.Contains(p.Stdout.String(), "cancel "+path+" ") })
}

// streamFinal streams text to the agent at u and returns the last status
// (state and text) the stream carried, and the task's id.
func streamFinal(t *testing.T, u, text string) (string, string, string) {
	t.Helper()
	state, reason, id, err := streamOutcome(u, text)
	if err != nil {
		t.Fatal(err)
	}
	return state, reason, id
}

// streamOutcome is streamFinal for any goroutine: errors are returned.
func streamOutcome(u, text string) (state, reason, id string, err error) {
	c, err := client.Dial(context.Background(), u, client.Options{NoCardCache: true, MaxRetries: -1})
	if err != nil {
		return "", "", "", fmt.Errorf("dial %s: %w", u, err)
	}
	defer c.Close()
	for ev, err := range c.SendStreamingMessage(context.Background(), testutil.UserMessage(text, "")) {
		if err != nil {
			return "", "", "", fmt.Errorf("stream to %s: %w", u, err)
		}
		switch e := ev.Event.(type) {
		case *a2a.Task:
			id, state = e.ID, e.Status.State.String()
		case *a2a.TaskStatusUpdateEvent:
			id, state = e.TaskID, e.Status.State.String()
			if e.Status.Message != nil {
				reason = testutil.Text(e.Status.Message.Parts)
			}
		}
	}
	return state, reason, id, nil
}

// The a2a bridge bounds what a remote sends back: the output of a task
// (max_output), the wait for a stream's first event and between two
// events, the whole exchange (timeout, when set), and the remote's card;
// each ends the task failed with a reason naming the bound, and cancels
// the remote task when there is one.
func TestA2ARemoteBounds(t *testing.T) {
	h := startHostile(t)
	remote := h.Ready
	cfg := fmt.Sprintf(`agents:
  flood: {kind: a2a, url: %[1]s/flood, max_output: 4194304}
  floodsend: {kind: a2a, url: %[1]s/floodsend, max_output: 4194304}
  hang: {kind: a2a, url: %[1]s/hang, first_event_timeout: 300ms}
  idle: {kind: a2a, url: %[1]s/idle, idle_timeout: 300ms}
  endless: {kind: a2a, url: %[1]s/status, timeout: 1s}
  bigcard: {kind: a2a, url: %[1]s/bigcard, card_timeout: 60s}
  model: {kind: openai, base_url: %[1]s/openai/v1, model: m, max_output: 4194304, max_answer_bytes: 1048576}
  snapshots: {kind: a2a, url: %[1]s/snapshots, max_output: 1048576}
  bigevent: {kind: a2a, url: %[1]s/bigevent, max_output: 1048576}
  pollforever: {kind: a2a, url: %[1]s/pollforever, idle_timeout: 500ms}
`, remote)
	base := startServe(t, "--config", writeConfig(t, cfg))

	t.Run("max_output", func(t *testing.T) {
		state, reason, id := streamFinal(t, base+"/a2a/flood", "hi")
		if state != "failed" || !strings.Contains(reason, "its output passed max_output (4194304 bytes)") {
			t.Fatalf("flood: %s %q", state, reason)
		}
		if !hostileCancels(t, h, "/flood") {
			t.Fatal("the remote task was not canceled")
		}
		// What was kept stays within the limit.
		st, body := call(t, http.MethodPost, base+"/a2a/flood", testutil.RPCBody("tasks/get", fmt.Sprintf(`{"id":%q}`, id)), "Content-Type", "application/json")
		if st != http.StatusOK || len(body) > 4<<20+64<<10 || len(body) < 3<<20 {
			t.Fatalf("tasks/get: %d, %d bytes; want at most the limit, and what came before it", st, len(body))
		}
	})
	// Each bound ends the task failed with a reason naming it; where the
	// remote task is known, the remote gets a tasks/cancel for it.
	for _, c := range []struct {
		name, agent, want string
		send              bool   // a blocking message/send (else a stream)
		canceled          string // the hostile path that must see a cancel ("" none)
	}{
		// A blocking send answered with an endless task is read no further
		// than the limit allows.
		{"one enormous answer", "floodsend", "an answer of the remote passed the size that max_output allows", true, ""},
		{"events that add nothing count", "snapshots", "its output passed max_output (1048576 bytes)", false, "/snapshots"},
		{"one enormous event", "bigevent", "an answer of the remote passed the size that max_output allows", false, "/bigevent"},
		{"polling without change", "pollforever", "showed no change for idle_timeout 500ms", true, "/pollforever"},
		{"first_event_timeout", "hang", "no event within first_event_timeout 300ms", false, ""},
		{"idle_timeout", "idle", "no event for idle_timeout 300ms", false, "/idle"},
		{"timeout", "endless", "no answer within timeout 1s", false, "/status"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var state, reason string
			if c.send {
				r := testutil.CallRPC(t, base+"/a2a/"+c.agent, "message/send", testutil.SendParams03("hi", a2a.NewID(), ""))
				state, reason = r.Result.Status.State, r.Result.StatusText()
			} else {
				state, reason, _ = streamFinal(t, base+"/a2a/"+c.agent, "hi")
			}
			if state != "failed" || !strings.Contains(reason, c.want) {
				t.Fatalf("%s: %s %q; want failed naming %q", c.agent, state, reason, c.want)
			}
			if c.canceled != "" && !hostileCancels(t, h, c.canceled) {
				t.Fatal("the remote task was not canceled")
			}
		})
	}
	t.Run("openai max_output and max_answer_bytes", func(t *testing.T) {
		state, reason, _ := streamFinal(t, base+"/a2a/model", "hi")
		if state != "failed" || !strings.Contains(reason, "the model's answer passed max_output (4194304 bytes)") {
			t.Fatalf("model: %s %q", state, reason)
		}
		for _, c := range []struct{ method, params string }{
			{"ai/embeddings", `{"input":"x"}`},
			{"ai/chat", `{"messages":[{"role":"user","content":"hi"}]}`},
			{"ai/chat", `{"messages":[{"role":"user","content":"hi"}],"stream":true}`},
		} {
			st, body := call(t, http.MethodPost, base+"/a2a/model", testutil.RPCBody(c.method, c.params), "Content-Type", "application/json")
			// A streamed ai/chat passes on the deltas it read before the
			// limit, then the error.
			if st != http.StatusOK || !strings.Contains(body, "passed max_answer_bytes (1048576 bytes)") || len(body) > 2<<20 {
				t.Errorf("%s %s: %d %.400s", c.method, c.params, st, body)
			}
		}
	})
	t.Run("max_card_bytes", func(t *testing.T) {
		// The 50 MB card is refused: the agent is served under a small
		// generic card, and a message fails naming the limit.
		st, card := call(t, http.MethodGet, base+"/a2a/bigcard/.well-known/agent-card.json", "")
		if st != http.StatusOK || len(card) > 16<<10 || strings.Contains(card, "dddd") {
			t.Fatalf("card: %d, %d bytes", st, len(card))
		}
		state, reason, _ := streamFinal(t, base+"/a2a/bigcard", "hi")
		if state != "failed" || !strings.Contains(reason, "over 1048576 bytes") {
			t.Fatalf("bigcard: %s %q", state, reason)
		}
	})
}

// vmHWM is the peak resident set size of process pid, in bytes (Linux:
// VmHWM of /proc/PID/status); 0 when it cannot be read.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}

// soakRSSCeiling is the documented bound (docs/reference/limits.md) of
// the serve process's peak RSS while every hostile backend works on it
// at once with the default limits (measured: 740 to 910 MiB, most of it
// the two tasks at max_output (64 MiB: the a2a flood's and the model's), each held as its event log and its folded
// snapshot while it streams, and the garbage collector's headroom).
const soakRSSCeiling = 1280 << 20

// Every hostile backend at once, with the default limits: floods of
// artifacts, an endless answer to a blocking send, a stream that never
// answers, one that goes silent, an endless status stream, a 50 MB card,
// an endless model stream and embeddings answer, and amplifying
// conversations. The server
// (a child process) stays under soakRSSCeiling and its echo agent keeps
// answering meanwhile.
func TestHostileSoak(t *testing.T) {
	h := startHostile(t) // (skipped with -short)
	remote := h.Ready
	cfg := fmt.Sprintf(`agents:
  flood: {kind: a2a, url: %[1]s/flood}
  floodsend: {kind: a2a, url: %[1]s/floodsend}
  hang: {kind: a2a, url: %[1]s/hang, first_event_timeout: 2s}
  idle: {kind: a2a, url: %[1]s/idle, idle_timeout: 2s}
  endless: {kind: a2a, url: %[1]s/status, timeout: 5s}
  bigcard: {kind: a2a, url: %[1]s/bigcard}
  model: {kind: openai, base_url: %[1]s/openai/v1, model: m}
conversations:
  adhoc: true
  kinds: [echo]
`, remote)
	p := startChild(t, "--memory", "--addr", "127.0.0.1:0", "--log-level", "error", "--config", writeConfig(t, cfg))
	base := strings.Fields(p.Ready)[0]
	agents := []string{`{"id":"you","external":true}`}
	for i := range 31 {
		agents = append(agents, fmt.Sprintf(`{"id":"e%d","kind":"echo"}`, i))
	}
	c64 := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"title":"flood","agents":[%s],"startingAgentId":"you"}`, strings.Join(agents, ","))))

	done := make(chan string, 64)
	hostile := func(name string, f func() string) {
		go func() { done <- name + ": " + f() }()
	}
	hostile("flood", func() string {
		s, r, _, err := streamOutcome(base+"/a2a/flood", "hi")
		return fmt.Sprint(s, " ", r, err)
	})
	post := func(u, body string) string {
		resp, err := http.Post(u, "application/json", strings.NewReader(body))
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d bytes, failed %v %v", len(b), strings.Contains(string(b), `"state":"failed"`), err)
	}
	hostile("floodsend", func() string {
		return post(base+"/a2a/floodsend", testutil.RPCBody("message/send", testutil.SendParams03("hi", "m1", "")))
	})
	hostile("embeddings", func() string {
		return post(base+"/a2a/model", testutil.RPCBody("ai/embeddings", `{"input":"x"}`))
	})
	for _, name := range []string{"hang", "idle", "endless", "bigcard", "model"} {
		hostile(name, func() string {
			s, r, _, err := streamOutcome(base+"/a2a/"+name, "hi")
			return fmt.Sprint(s, " ", r, err)
		})
	}
	for i := range 4 {
		hostile(fmt.Sprintf("amplification %d", i), func() string {
			return post(base+"/api/bridge/"+c64+"/a2a", testutil.RPCBody("message/send", testutil.SendParams03("0123456789", a2a.NewID(), "")))
		})
	}
	// Meanwhile the echo agent answers, each call within a generous bound.
	const hostiles = 12
	echo, err := client.Dial(context.Background(), base+"/a2a/echo", client.Options{NoCardCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	calls := 0
	// The bound of one echo call; the race detector slows every part of
	// the server many times over.
	bound := 10 * time.Second
	if raceEnabled {
		bound = time.Minute
	}
	for finished := 0; finished < hostiles; {
		select {
		case r := <-done:
			finished++
			t.Log(r)
			continue
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		_, err := echo.SendMessage(ctx, testutil.UserMessage("ping", ""))
		cancel()
		if err != nil {
			t.Fatalf("the echo agent did not answer while the hostile backends ran: %v", err)
		}
		calls++
	}
	peak := vmHWM(p.Cmd.Process.Pid)
	t.Logf("echo answered %d calls meanwhile; the server's peak RSS: %d MiB", calls, peak>>20)
	if raceEnabled {
		return // the race detector multiplies memory: no ceiling holds
	}
	if peak > soakRSSCeiling {
		t.Fatalf("peak RSS %d MiB: over the documented ceiling of %d MiB", peak>>20, soakRSSCeiling>>20)
	}
}

// Bridge egress is guarded like push egress: an a2a agent (from the
// config or the admin API) whose remote redirects elsewhere, or whose
// card's interface is elsewhere, sends nothing there; a link-local or
// metadata address is refused at registration and on redirect; allow_hosts
// lets a listed host through.
func TestBridgeEgressGuarded(t *testing.T) {
	h := startHostile(t)
	var otherHits atomic.Int32
	other := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		http.NotFound(w, r)
	}))
	otherHost := strings.TrimPrefix(other.URL, "http://")
	cfg := fmt.Sprintf(`admin:
  bearer_tokens: {ops: adm1n}
agents:
  redirect: {kind: a2a, url: "%[1]s/redirect?to=%[2]s/admin"}
  elsewhere: {kind: a2a, url: "%[1]s/cardelsewhere?to=%[2]s/rpc"}
  metadata: {kind: a2a, url: "%[1]s/redirect?to=http://169.254.169.254/latest/meta-data/"}
  allowed: {kind: a2a, url: "%[1]s/cardelsewhere?to=%[2]s/rpc", allow_hosts: [%[3]q]}
`, h.Ready, other.URL, otherHost)
	base := startServe(t, "--config", writeConfig(t, cfg))
	for _, c := range []struct{ agent, want string }{
		{"redirect", "is not on the configured URL's origin"},
		{"elsewhere", "its card's JSONRPC interface: egress refused: " + other.URL + "/rpc is not on the configured URL's origin"},
		{"metadata", "169.254.169.254/latest/meta-data/ is a link-local or cloud metadata address"},
	} {
		state, reason, _ := streamFinal(t, base+"/a2a/"+c.agent, "hi")
		if state != "failed" || !strings.Contains(reason, c.want) || !strings.Contains(reason, "allow_hosts") {
			t.Errorf("%s: %s %q; want failed naming %q and allow_hosts", c.agent, state, reason, c.want)
		}
	}
	if n := otherHits.Load(); n != 0 {
		t.Fatalf("the other host got %d requests from agents not allowed to reach it", n)
	}
	// Registered through the admin API: the same rules.
	reg := fmt.Sprintf(`{"name":"late","kind":"a2a","url":"%s/cardelsewhere?to=%s/rpc"}`, h.Ready, other.URL)
	if code, body := adminCall(t, "POST", base+"/api/v1/agents", "adm1n", reg); code != http.StatusCreated {
		t.Fatalf("register: %d %s", code, body)
	}
	if state, reason, _ := streamFinal(t, base+"/a2a/late", "hi"); state != "failed" || !strings.Contains(reason, "allow_hosts") {
		t.Fatalf("late: %s %q", state, reason)
	}
	if n := otherHits.Load(); n != 0 {
		t.Fatalf("the other host got %d requests from a registered agent", n)
	}
	// A link-local URL is refused when it is registered, naming the key.
	code, body := adminCall(t, "POST", base+"/api/v1/agents", "adm1n", `{"name":"imds","kind":"a2a","url":"http://169.254.169.254/latest"}`)
	if code != http.StatusBadRequest || !strings.Contains(body, "url") || !strings.Contains(body, "link-local or cloud metadata address") {
		t.Fatalf("register a metadata URL: %d %s", code, body)
	}
	code, body = adminCall(t, "POST", base+"/api/v1/agents", "adm1n", `{"name":"imds2","kind":"openai","base_url":"http://[fe80::1]:8080/v1","model":"m"}`)
	if code != http.StatusBadRequest || !strings.Contains(body, "base_url") {
		t.Fatalf("register a link-local base_url: %d %s", code, body)
	}
	wantServeUsageErrors(t, []serveUsage{
		{[]string{"--config", "agents:\n  imds: {kind: http, url: \"http://169.254.169.254/x\"}\n"}, "link-local or cloud metadata address"},
		{[]string{"--config", "agents:\n  x: {kind: a2a, url: \"http://127.0.0.1:1\", allow_hosts: [\"bad host\"]}\n"}, "allow_hosts[0]"},
	})
	// Listed in allow_hosts, the other host is reached.
	streamFinal(t, base+"/a2a/allowed", "hi")
	if otherHits.Load() == 0 {
		t.Fatal("allow_hosts did not let the agent reach the listed host")
	}
}

// A remote whose card never comes does not hold up the start: serve
// listens at once, the agent is served under a stand-in card meanwhile and
// listed unavailable by /readyz (which stays ready), a reachable remote's
// agent has its card from the start, and other agents answer.
func TestStartupDoesNotWaitForRemoteCards(t *testing.T) {
	h := startHostile(t)
	cfg := fmt.Sprintf(`agents:
  slowcard: {kind: a2a, url: %[1]s/hangcard, card_timeout: 60s}
  good: {kind: a2a, url: %[1]s/idle}
`, h.Ready)
	// startServe gives serve 10 s to listen: far less than card_timeout.
	base := startServe(t, "--config", writeConfig(t, cfg))
	var ready struct {
		Status      string
		Unavailable []string
	}
	if st := getJSON(t, base+"/readyz", &ready); st != http.StatusOK || ready.Status != "ready" || strings.Join(ready.Unavailable, ",") != "slowcard" {
		t.Fatalf("/readyz: %d %+v; want ready, slowcard unavailable", st, ready)
	}
	var card struct{ Name, Description string }
	getJSON(t, base+"/a2a/slowcard/.well-known/agent-card.json", &card)
	if !strings.Contains(card.Description, "has not been fetched yet") {
		t.Fatalf("slowcard's card: %+v; want the stand-in", card)
	}
	getJSON(t, base+"/a2a/good/.well-known/agent-card.json", &card)
	if card.Name != "hostile-idle" {
		t.Fatalf("good's card: %+v; want the remote's, from the start", card)
	}
	if r := testutil.CallRPC(t, base+"/a2a/echo", "message/send", testutil.SendParams03("hi", "m1", "")); r.Result.Status.State != "completed" {
		t.Fatalf("echo: %+v", r)
	}
}

// bigCardParts are the 50 MB card of /bigcard around its interface URL,
// built once (quoting 50 MB on each request would make the answer slow
// instead of big).
var bigCardParts = sync.OnceValues(func() ([]byte, []byte) {
	return []byte(`{"name":"hostile-bigcard","description":"` + strings.Repeat("d", 50<<20) + `","url":`),
		[]byte(`,"version":"1","protocolVersion":"0.3.0","capabilities":{"streaming":true},` +
			`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`)
})

// writeBigCard writes the card of /bigcard, whose interface is at url.
func writeBigCard(w io.Writer, url string) {
	head, tail := bigCardParts()
	u, _ := json.Marshal(url)
	for _, b := range [][]byte{head, u, tail} {
		if _, err := w.Write(b); err != nil {
			return
		}
	}
}
