package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/push"
	"github.com/a2abridge/a2abridge/server"
)

// The three-replica test: `serve --replica` three times on
// one PostgreSQL schema, behind nginx (Debian's package, round robin,
// SSE unbuffered), with kill -9 of one replica under load and with
// streams open. Its counts are printed (t.Logf; .ci/run runs it with -v).

// nginxBinary is nginx's path; without it the test is skipped, or fails
// under CI (.ci/run installs Debian's nginx-light).
func nginxBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("nginx is not installed (apt-get install nginx-light; .ci/run does)")
	}
	t.Skip("nginx is not installed: apt-get install nginx-light to run the replicas test")
	return ""
}

// startNginx runs nginx on listen as a round-robin reverse proxy to
// upstreams, configured as the README's example for replicas (no
// buffering, so SSE events pass at once; long read timeout for streams),
// until the test ends.
func startNginx(t *testing.T, listen string, upstreams []string) {
	t.Helper()
	bin := nginxBinary(t)
	dir := t.TempDir()
	conf := nginxConf(t, dir, listen, upstreams)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr testutil.Buffer
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", path)
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if !testutil.Poll(10*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", listen, 200*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		t.Fatalf("nginx did not start: %s\n%s", stderr.String(), log)
	}
}

// nginxConf is testdata/nginx-replicas.conf for a proxy on listen to
// upstreams, keeping its files in dir.
func nginxConf(t *testing.T, dir, listen string, upstreams []string) string {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join("..", "..", "testdata", "nginx-replicas.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var servers []string
	for _, u := range upstreams {
		servers = append(servers, fmt.Sprintf("    server %s max_fails=1 fail_timeout=5s;", u))
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	return strings.NewReplacer("@USER@", user, "@DIR@", dir, "@UPSTREAMS@", strings.Join(servers, "\n"), "@LISTEN@", listen, "@GRPC@", "").Replace(string(tmpl))
}

// tryRPC is rpc for goroutines: errors are returned, and a response that
// is not JSON-RPC (nginx's 502 page) is an error naming its status.
func tryRPC(url, method, params string) (testutil.RPCAnswer, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(testutil.RPCBody(method, params)))
	if err != nil {
		return testutil.RPCAnswer{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r testutil.RPCAnswer
	if resp.StatusCode != http.StatusOK {
		return r, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%v: %.200s", err, b)
	}
	return r, nil
}

// streamTap reads one SSE stream of a task (message/stream or
// tasks/resubscribe) in the background, checking that event ids follow
// one another from first.
type streamTap struct {
	taskID chan string // the task's id, once known
	mu     sync.Mutex
	ids    []int64
	states []string
	errs   []string // ids out of order (lost or repeated events)
	done   chan struct{}
	err    error // how the stream ended (nil: EOF)
	resp   *http.Response
}

func (s *streamTap) last() (int64, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) == 0 {
		return 0, ""
	}
	return s.ids[len(s.ids)-1], s.states[len(s.states)-1]
}

// openStream posts a streaming request and taps it; after is the
// Last-Event-ID to send (< 0: none).
func openStream(t *testing.T, url, method, params string, after int64) *streamTap {
	t.Helper()
	var hdr []string
	if after >= 0 {
		hdr = []string{"Last-Event-ID", strconv.FormatInt(after, 10)}
	}
	resp := testutil.Open(t, testutil.NewRequest(t, context.Background(), http.MethodPost, url,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":"s","method":%q,"params":%s}`, method, params), hdr...))
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("%s %s: HTTP %d: %s", method, url, resp.StatusCode, b)
	}
	s := &streamTap{taskID: make(chan string, 1), done: make(chan struct{}), resp: resp}
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		rd := sse.NewReader(resp.Body)
		next := after + 1
		sentID := false
		for {
			ev, err := rd.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					s.err = err
				}
				return
			}
			id, _ := strconv.ParseInt(ev.ID, 10, 64)
			var r struct {
				Result struct {
					ID     string `json:"id"`
					TaskID string `json:"taskId"`
					Status struct {
						State string `json:"state"`
					} `json:"status"`
				} `json:"result"`
			}
			_ = json.Unmarshal(ev.Data, &r)
			s.mu.Lock()
			if after < 0 && len(s.ids) == 0 {
				next = id // a new stream starts where the server starts it
			}
			if id != next {
				s.errs = append(s.errs, fmt.Sprintf("event id %d, want %d", id, next))
			}
			next = id + 1
			s.ids = append(s.ids, id)
			s.states = append(s.states, r.Result.Status.State)
			s.mu.Unlock()
			if !sentID {
				sentID = true
				tid := r.Result.TaskID
				if tid == "" {
					tid = r.Result.ID
				}
				s.taskID <- tid
			}
		}
	}()
	return s
}

// waitEnd waits for the stream's end and returns its last state.
func (s *streamTap) waitEnd(t *testing.T, limit time.Duration) string {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(limit):
		t.Fatalf("a stream did not end within %s", limit)
	}
	_, st := s.last()
	return st
}

// failedAt is the time of the task's status (its failure), as the
// server stamped it.
func failedAt(t *testing.T, url, id string) time.Time {
	t.Helper()
	_, b := testutil.RPC(t, url, "tasks/get", fmt.Sprintf(`{"id":%q,"historyLength":0}`, id))
	var r struct {
		Result struct {
			Status struct {
				Timestamp time.Time `json:"timestamp"`
			} `json:"status"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Result.Status.Timestamp.IsZero() {
		t.Fatalf("tasks/get %s: %v: %s", id, err, b)
	}
	return r.Result.Status.Timestamp
}

// TestServeReplicas: three `serve --replica` on one
// PostgreSQL behind nginx. Any request works on any replica (send on
// one, get and stream on the others, cancel from a third; raw JSON-RPC
// and our client SDK through the proxy); concurrent
// cancel and continue of one task on two replicas end in one state; a
// replica killed with SIGKILL under load and with streams open loses no
// acknowledged task, resumed streams lose and repeat no event, the tasks
// it ran are failed within the lease time on the survivors, and the
// tasks the others run go on.
func TestServeReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dsn := pgtest.DSN(t)
	nginxBinary(t)
	const lease = 3 * time.Second
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	proxyAddr := freeAddr(t)
	proxy := "http://" + proxyAddr
	children := make([]*testutil.Process, len(addrs))
	for i, a := range addrs {
		// The proxy is every replica's public URL: the issuer (iss) of
		// their push tokens, which the webhook checks.
		children[i] = startChild(t, "--postgres", dsn, "--replica", "--lease", lease.String(), "--addr", a, "--push-allow", "127.0.0.0/8", "--public-url", proxy)
	}
	startNginx(t, proxyAddr, addrs)
	direct := func(i int) string { return "http://" + addrs[i] }

	// A serve without --replica refuses the database the replicas use.
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--postgres", dsn}, nil, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "with --replica") {
		t.Errorf("serve without --replica beside replicas: exit %d, %s", code, errb.String())
	}

	// Send on one replica; get on the others and through the proxy.
	sent := testutil.CallRPC(t, direct(0)+"/a2a/echo", "message/send", testutil.SendParams03("hello replicas", "rep-1", ""))
	if sent.Result.Status.State != "completed" {
		t.Fatalf("message/send on replica 0: %+v", sent)
	}
	for i, url := range []string{direct(1), direct(2), proxy, proxy, proxy} {
		got := testutil.CallRPC(t, url+"/a2a/echo", "tasks/get", fmt.Sprintf(`{"id":%q}`, sent.Result.ID))
		if got.Result.Status.State != "completed" || len(got.Result.Artifacts) != 1 || got.Result.Artifacts[0].Parts[0].Text != "hello replicas" {
			t.Fatalf("tasks/get #%d (%s): %+v", i, url, got)
		}
	}
	// The message id is claimed once, whichever replica it reaches.
	for i := range addrs {
		if again := testutil.CallRPC(t, direct(i)+"/a2a/echo", "message/send", testutil.SendParams03("hello replicas", "rep-1", "")); again.Result.ID != sent.Result.ID {
			t.Errorf("the same messageId on replica %d: task %q, want %q", i, again.Result.ID, sent.Result.ID)
		}
	}
	// A stream through the proxy.
	if st := openStream(t, proxy+"/a2a/echo", "message/stream", testutil.SendParams03("streamed", "rep-2", ""), -1).waitEnd(t, 10*time.Second); st != "completed" {
		t.Fatalf("message/stream through the proxy ended %q", st)
	}

	// Stream on replica 0, follow on replica 1, cancel from replica 2.
	s0 := openStream(t, direct(0)+"/a2a/slow", "message/stream", testutil.SendParams03("60", "rep-slow", ""), -1)
	slowID := <-s0.taskID
	s1 := openStream(t, direct(1)+"/a2a/slow", "tasks/resubscribe", fmt.Sprintf(`{"id":%q}`, slowID), 0)
	if c := testutil.CallRPC(t, direct(2)+"/a2a/slow", "tasks/cancel", fmt.Sprintf(`{"id":%q}`, slowID)); c.Result.Status.State != "canceled" {
		t.Fatalf("tasks/cancel on replica 2: %+v", c)
	}
	for i, s := range []*streamTap{s0, s1} {
		if st := s.waitEnd(t, 10*time.Second); st != "canceled" || len(s.errs) > 0 {
			t.Fatalf("stream %d of the canceled task ended %q (%v)", i, st, s.errs)
		}
	}
	time.Sleep(1500 * time.Millisecond) // a progress event would come now, were the execution still running
	if r := testutil.CallRPC(t, direct(0)+"/a2a/slow", "tasks/get", fmt.Sprintf(`{"id":%q}`, slowID)); r.Result.Status.State != "canceled" {
		t.Fatalf("the canceled task on replica 0: %+v", r.Result.Status)
	}
	if n, _ := s0.last(); n != func() int64 { v, _ := s1.last(); return v }() {
		t.Errorf("the streams on replicas 0 and 1 ended at events %d and %d", n, func() int64 { v, _ := s1.last(); return v }())
	}

	ourClientThroughProxy(t, proxy)
	raceCancelAndContinue(t, direct)
	killUnderLoad(t, children, direct, proxy, lease, newVerifyingHook(t, proxy))
}

// verifyingHook is a push webhook that verifies each notification's JWT
// against the JWK Set served through the proxy (any replica's), and
// records it by task: "state:status timestamp", one per event notified.
type verifyingHook struct {
	url     string
	mu      sync.Mutex
	byTask  map[string][]string
	at      map[string][]time.Time // when each of byTask's came
	refused []error
}

func newVerifyingHook(t *testing.T, proxy string) *verifyingHook {
	h := &verifyingHook{byTask: map[string][]string{}, at: map[string][]time.Time{}}
	srv := testutil.Serve(t, nil)
	h.url = srv.URL + "/hook"
	v := push.NewVerifier(push.VerifierOptions{JWKSURL: proxy + "/.well-known/jwks.json", Audience: h.url, Issuer: proxy})
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		claims, err := v.Verify(r, body)
		if err != nil {
			h.mu.Lock()
			h.refused = append(h.refused, err)
			h.mu.Unlock()
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var task struct {
			ID     string `json:"id"`
			Status struct {
				State     string `json:"state"`
				Timestamp string `json:"timestamp"`
			} `json:"status"`
		}
		_ = json.Unmarshal(body, &task)
		if task.ID != claims.TaskID {
			t.Errorf("a notification of task %s carries the token of %s", task.ID, claims.TaskID)
		}
		h.mu.Lock()
		h.byTask[task.ID] = append(h.byTask[task.ID], task.Status.State+":"+task.Status.Timestamp)
		h.at[task.ID] = append(h.at[task.ID], time.Now())
		h.mu.Unlock()
	})
	return h
}

// of returns the notifications of a task so far.
func (h *verifyingHook) of(id string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.byTask[id]...)
}

// waitFinal waits for a notification of the task in state, and returns
// the notifications then, how many of them repeat an earlier one, and how
// many of those repeats the kill explains: the first copy came before
// killed (made by the replica killed then, its cursor not yet advanced)
// and the repeat after it (made by the replica that took the config
// over). The config of a live replica's task may be delivered by the
// killed one: a config is delivered by the replica that claims it, not
// necessarily the one that runs its task.
func (h *verifyingHook) waitFinal(t *testing.T, id, state string, killed time.Time) (got []string, repeated, byKill int) {
	t.Helper()
	if !testutil.Poll(15*time.Second, func() bool {
		got = h.of(id)
		return len(got) > 0 && strings.HasPrefix(got[len(got)-1], state+":")
	}) {
		t.Fatalf("task %s: no %s notification within 15 s; got %q", id, state, got)
	}
	time.Sleep(200 * time.Millisecond) // room for a repeat
	h.mu.Lock()
	got = append([]string(nil), h.byTask[id]...)
	at := append([]time.Time(nil), h.at[id]...)
	h.mu.Unlock()
	first := map[string]time.Time{}
	for i, n := range got {
		if f, ok := first[n]; ok {
			repeated++
			// The first copy may arrive a little after the signal
			// (in flight); the other replicas take the claim over
			// only once its lease has expired (seconds later).
			if f.Before(killed.Add(100*time.Millisecond)) && at[i].After(killed.Add(time.Second)) {
				byKill++
			}
			continue
		}
		first[n] = at[i]
	}
	return got, repeated, byKill
}

// raceCancelAndContinue: tasks/cancel on replica 1 and a continuation
// (message/send with the taskId) on replica 2 of one input-required task,
// at once, rounds times: every replica then shows one state, one event
// log and one history; a successful cancel means canceled.
func raceCancelAndContinue(t *testing.T, direct func(int) string) {
	const rounds = 20
	cancelFirst, continueFirst := 0, 0
	for round := range rounds {
		first := testutil.CallRPC(t, direct(0)+"/a2a/chat", "message/send", testutil.SendParams03("hello", fmt.Sprintf("race-%d-a", round), ""))
		if first.Result.Status.State != "input-required" {
			t.Fatalf("chat: %+v", first)
		}
		id := first.Result.ID
		var cancelRes, contRes testutil.RPCAnswer
		var cancelErr, contErr error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			cancelRes, cancelErr = tryRPC(direct(1)+"/a2a/chat", "tasks/cancel", fmt.Sprintf(`{"id":%q}`, id))
		}()
		go func() {
			defer wg.Done()
			contRes, contErr = tryRPC(direct(2)+"/a2a/chat", "message/send",
				fmt.Sprintf(`{"message":{"kind":"message","role":"user","messageId":"race-%d-b","taskId":%q,"parts":[{"kind":"text","text":"more"}]}}`, round, id))
		}()
		wg.Wait()
		if cancelErr != nil || contErr != nil {
			t.Fatalf("round %d: cancel %v, continue %v", round, cancelErr, contErr)
		}
		canceled := cancelRes.Error == nil
		continued := contRes.Error == nil
		switch {
		case !canceled && !continued:
			t.Fatalf("round %d: both failed: cancel %+v, continue %+v", round, cancelRes.Error, contRes.Error)
		case canceled && !continued:
			cancelFirst++
		default:
			continueFirst++
		}
		if !canceled && cancelRes.Error.Code != -32002 {
			t.Fatalf("round %d: cancel failed with %d, want -32002", round, cancelRes.Error.Code)
		}
		if !continued && contRes.Error.Code != -32002 && contRes.Error.Code != -32004 {
			t.Fatalf("round %d: continue failed with %d", round, contRes.Error.Code)
		}
		// One state, one log on every replica.
		var states []string
		var lasts []int64
		for i := range 3 {
			g := testutil.CallRPC(t, direct(i)+"/a2a/chat", "tasks/get", fmt.Sprintf(`{"id":%q}`, id))
			states = append(states, g.Result.Status.State)
			// Canceled or input-required: either way the stream
			// ends after the task's last event.
			s := openStream(t, direct(i)+"/a2a/chat", "tasks/resubscribe", fmt.Sprintf(`{"id":%q}`, id), 0)
			s.waitEnd(t, 10*time.Second)
			if len(s.errs) > 0 {
				t.Fatalf("round %d: the log on replica %d: %v", round, i, s.errs)
			}
			n, _ := s.last()
			lasts = append(lasts, n)
		}
		if states[0] != states[1] || states[1] != states[2] || lasts[0] != lasts[1] || lasts[1] != lasts[2] {
			t.Fatalf("round %d: replicas disagree: states %v, last events %v", round, states, lasts)
		}
		if canceled && states[0] != "canceled" {
			t.Fatalf("round %d: the cancel succeeded, the task is %s", round, states[0])
		}
	}
	t.Logf("replicas: %d rounds of cancel (replica 1) racing continue (replica 2): cancel alone took effect %d times, the continuation %d times; every replica agreed every time", rounds, cancelFirst, continueFirst)
}

// killUnderLoad kills replica 0 with SIGKILL while a load of
// message/send goes through the proxy and slow tasks stream on every
// replica, then counts what was lost.
func killUnderLoad(t *testing.T, children []*testutil.Process, direct func(int) string, proxy string, lease time.Duration, hook *verifyingHook) {
	// Slow tasks on every replica, each streamed from where it runs.
	type slowTask struct {
		replica int
		id      string
		s       *streamTap
	}
	var slow []slowTask
	for i := range children {
		for k := range 2 {
			s := openStream(t, direct(i)+"/a2a/slow", "message/stream", testutil.SendParams03("60", fmt.Sprintf("kill-slow-%d-%d", i, k), ""), -1)
			slow = append(slow, slowTask{i, <-s.taskID, s})
		}
	}
	// A push config for each, set through the proxy (so mostly on
	// another replica than the one running the task).
	for _, st := range slow {
		r, err := tryRPC(proxy+"/a2a/slow", "tasks/pushNotificationConfig/set",
			fmt.Sprintf(`{"taskId":%q,"pushNotificationConfig":{"id":"hook","url":%q}}`, st.id, hook.url))
		if err != nil || r.Error != nil {
			t.Fatalf("push config for %s: %v %+v", st.id, err, r.Error)
		}
	}
	// The load: echo message/send through the proxy.
	type acked struct{ id, text string }
	var mu sync.Mutex
	var done []acked
	var refused atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				text := fmt.Sprintf("load %d/%d", w, n)
				r, err := tryRPC(proxy+"/a2a/echo", "message/send", testutil.SendParams03(text, fmt.Sprintf("load-%d-%d", w, n), ""))
				if err != nil || r.Error != nil || r.Result.Status.State != "completed" {
					refused.Add(1) // not acknowledged: the replica died with it
					continue
				}
				mu.Lock()
				done = append(done, acked{r.Result.ID, text})
				mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Second)
	mu.Lock()
	before := len(done)
	mu.Unlock()
	if err := children[0].Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-children[0].Exited()
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	if before == 0 || len(done) == before {
		t.Fatalf("the load did not go on: %d acknowledged before the kill, %d in all", before, len(done))
	}

	// Every acknowledged task is there, through the proxy.
	lost := 0
	for _, a := range done {
		r, err := tryRPC(proxy+"/a2a/echo", "tasks/get", fmt.Sprintf(`{"id":%q}`, a.id))
		if err != nil || r.Result.Status.State != "completed" || len(r.Result.Artifacts) != 1 || r.Result.Artifacts[0].Parts[0].Text != a.text {
			lost++
			t.Errorf("acknowledged task %s: %+v %v", a.id, r, err)
		}
	}

	// The dead replica's tasks: failed within the lease time; their
	// streams, resumed through the proxy from the last event seen, end
	// with the failure and lose or repeat nothing.
	var slowest time.Duration
	resumed, eventsLost := 0, 0
	for _, st := range slow {
		if st.replica != 0 {
			continue
		}
		<-st.s.done // its replica died
		lastSeen, _ := st.s.last()
		eventsLost += len(st.s.errs)
		if !testutil.Poll(lease+10*time.Second-time.Since(killed), func() bool {
			r := testutil.CallRPC(t, proxy+"/a2a/slow", "tasks/get", fmt.Sprintf(`{"id":%q}`, st.id))
			if r.Result.Status.State == "failed" {
				if r.Result.Status.Message == nil || r.Result.Status.Message.Parts[0].Text != server.RecoveryMessage {
					t.Errorf("task %s of the dead replica failed without the reason: %+v", st.id, r.Result.Status)
				}
				return true
			}
			if r.Result.Status.State != "working" {
				t.Fatalf("task %s of the dead replica: %s", st.id, r.Result.Status.State)
			}
			return false
		}) {
			t.Fatalf("task %s of the dead replica is not failed %s after the kill (lease %s)", st.id, time.Since(killed), lease)
		}
		slowest = max(slowest, failedAt(t, proxy+"/a2a/slow", st.id).Sub(killed))
		r := openStream(t, proxy+"/a2a/slow", "tasks/resubscribe", fmt.Sprintf(`{"id":%q}`, st.id), lastSeen)
		if end := r.waitEnd(t, 10*time.Second); end != "failed" {
			t.Errorf("the resumed stream of %s ended %q", st.id, end)
		}
		if first := func() int64 { r.mu.Lock(); defer r.mu.Unlock(); return r.ids[0] }(); first != lastSeen+1 {
			t.Errorf("the resumed stream of %s starts at event %d, want %d", st.id, first, lastSeen+1)
		}
		eventsLost += len(r.errs)
		resumed++
	}
	// With the lease's renewal every lease/5 and its expiry 4/5 lease
	// after one, a survivor's sweep (every lease/5) fails the tasks
	// within the lease time; the margin is for a loaded machine (the
	// race detector, other tests).
	if slowest > lease+2*time.Second {
		t.Errorf("the dead replica's tasks were failed %s after the kill; the lease is %s", slowest, lease)
	}

	// The live replicas' tasks go on, their streams too; a stream of
	// each through the proxy (resumed from event 1) sees the same log.
	liveFailed := 0
	for _, st := range slow {
		if st.replica == 0 {
			continue
		}
		r := testutil.CallRPC(t, proxy+"/a2a/slow", "tasks/get", fmt.Sprintf(`{"id":%q}`, st.id))
		if r.Result.Status.State != "working" {
			liveFailed++
			t.Errorf("task %s of live replica %d: %s", st.id, st.replica, r.Result.Status.State)
		}
		via := openStream(t, proxy+"/a2a/slow", "tasks/resubscribe", fmt.Sprintf(`{"id":%q}`, st.id), 1)
		if c := testutil.CallRPC(t, proxy+"/a2a/slow", "tasks/cancel", fmt.Sprintf(`{"id":%q}`, st.id)); c.Result.Status.State != "canceled" {
			t.Errorf("tasks/cancel of %s through the proxy: %+v", st.id, c)
		}
		for _, s := range []*streamTap{st.s, via} {
			if end := s.waitEnd(t, 10*time.Second); end != "canceled" {
				t.Errorf("a stream of %s ended %q", st.id, end)
			}
			eventsLost += len(s.errs)
		}
		a, _ := st.s.last()
		b, _ := via.last()
		if a != b {
			t.Errorf("the streams of %s ended at events %d (on its replica) and %d (through the proxy)", st.id, a, b)
		}
		resumed++
	}
	// Push: every task's last notification is its end, each signed by a
	// key the JWK Set of any replica holds; no task got a notification
	// twice, but one that the killed replica sent without recording it
	// and the replica that took its claim over sent again (at least once:
	// at most one per task, the config's delivery in flight at the kill).
	pushRepeated, pushRepeatedDead := 0, 0
	for _, st := range slow {
		want := "canceled"
		if st.replica == 0 {
			want = "failed"
		}
		got, rep, byKill := hook.waitFinal(t, st.id, want, killed)
		pushRepeatedDead += byKill
		pushRepeated += rep - byKill
		if rep-byKill > 0 || byKill > 1 {
			t.Errorf("task %s of replica %d: %d notifications repeated, %d of them across the kill: %q", st.id, st.replica, rep, byKill, got)
		}
	}
	// A delivery attempt refused because the webhook could not fetch the
	// JWK Set (push.ErrKeysUnavailable: its fetch through the proxy
	// failed, as one may while a replica is killed) is retried by the
	// server and counted; any other refusal (an unknown key, a bad
	// signature, a wrong issuer) fails the test.
	hook.mu.Lock()
	pushed, unavailable := 0, 0
	for _, l := range hook.byTask {
		pushed += len(l)
	}
	var reasons []string
	for _, err := range hook.refused {
		reasons = append(reasons, err.Error())
		if errors.Is(err, push.ErrKeysUnavailable) {
			unavailable++
		} else {
			t.Errorf("a notification failed verification: %v", err)
		}
	}
	hook.mu.Unlock()
	t.Logf("replicas: push: %d notifications verified with the JWK Set served through the proxy; %d attempts refused (%d because the JWK Set could not be fetched, retried): %q; repeated: %d across the kill (sent by the killed replica, then by the one that took its claim over: at least once), %d otherwise",
		pushed, len(reasons), unavailable, reasons, pushRepeatedDead, pushRepeated)
	t.Logf("replicas: kill -9 of replica 0 under load: %d tasks acknowledged (%d before the kill), %d lost, %d requests not acknowledged; "+
		"%d streams resumed or followed, %d events lost or repeated; the dead replica's %d running tasks failed within %s of the kill (lease %s); "+
		"%d tasks of live replicas failed",
		len(done), before, lost, refused.Load(), resumed, eventsLost, 2, slowest.Round(10*time.Millisecond), lease, liveFailed)
	if lost > 0 || eventsLost > 0 || liveFailed > 0 {
		t.Fail()
	}
}

// ourClientThroughProxy: our client SDK (card discovery with its
// defaults, A2A 1.0 first) through the proxy: send, get, and a stream
// canceled while it runs, each call on whichever replica nginx picks.
func ourClientThroughProxy(t *testing.T, proxy string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(agent string) *client.Client {
		card, err := client.Resolve(ctx, proxy+"/a2a/"+agent, client.Options{})
		if err != nil {
			t.Fatalf("resolve %s through the proxy: %v", agent, err)
		}
		c, err := client.New(card, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	echo := connect("echo")
	ev, err := echo.SendMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("our client"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := ev.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("our client's send: %#v", ev)
	}
	for range 3 {
		got, err := echo.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 {
			t.Fatalf("our client's get: %+v %v", got, err)
		}
	}
	slow := connect("slow")
	var taskID string
	var last a2a.TaskState
	n := 0
	for se, err := range slow.SendStreamingMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("60"))}) {
		if err != nil {
			t.Fatalf("our client's stream: %v", err)
		}
		n++
		switch e := se.Event.(type) {
		case *a2a.Task:
			taskID, last = e.ID, e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			last = e.Status.State
		}
		if n == 2 {
			if _, err := slow.CancelTask(ctx, a2a.CancelTaskRequest{ID: taskID}); err != nil {
				t.Fatalf("our client's cancel: %v", err)
			}
		}
	}
	if last != a2a.TaskStateCanceled {
		t.Fatalf("our client's stream ended %s after %d events, want canceled", last, n)
	}
}
