package testutil_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// childEnv makes the test binary act as a child process for TestStart:
// it prints the variable's value as its listening line, then waits for
// stdin to close.
const childEnv = "TESTUTIL_TEST_CHILD"

func TestMain(m *testing.M) {
	if line, ok := os.LookupEnv(childEnv); ok {
		fmt.Println("starting")
		if line != "" {
			fmt.Println(line)
		}
		fmt.Fprintln(os.Stderr, "child stderr")
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func TestSetHeaders(t *testing.T) {
	h := http.Header{"Content-Type": {"application/json"}}
	testutil.SetHeaders(h, "content-type", "text/plain", "A2A-Extensions", "a", "A2A-Extensions", "b")
	if got := h.Values("Content-Type"); !slices.Equal(got, []string{"text/plain"}) {
		t.Errorf("Content-Type %q, want the pair to replace the default", got)
	}
	if got := h.Values("A2A-Extensions"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("A2A-Extensions %q, want both values", got)
	}
}

func TestSendHeadersAndBody(t *testing.T) {
	var got http.Header
	var body string
	ts := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		b, _ := io.ReadAll(r.Body)
		body = r.Method + " " + string(b)
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "answer")
	}))
	resp, b := testutil.RPC(t, ts.URL, "m", `{"x":1}`, "X-One", "1")
	if resp.StatusCode != http.StatusTeapot || string(b) != "answer" {
		t.Fatalf("%d %q", resp.StatusCode, b)
	}
	if got.Get("Content-Type") != "application/json" || got.Get("X-One") != "1" || body != `POST {"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1}}` {
		t.Errorf("headers %v, body %q", got, body)
	}
	testutil.Post(t, ts.URL, "{}", "Content-Type", "application/a2a+json")
	if ct := got.Values("Content-Type"); !slices.Equal(ct, []string{"application/a2a+json"}) {
		t.Errorf("Content-Type %q, want only the one given", ct)
	}
	testutil.Get(t, ts.URL)
	if body != "GET " {
		t.Errorf("GET sent %q", body)
	}
}

func TestText(t *testing.T) {
	task := &a2a.Task{
		Status: a2a.TaskStatus{Message: &a2a.Message{Parts: []a2a.Part{a2a.NewTextPart("a"), a2a.NewDataPart(nil), a2a.NewTextPart("b")}}},
		Artifacts: []a2a.Artifact{
			{Parts: []a2a.Part{a2a.NewTextPart("x")}},
			{Parts: []a2a.Part{a2a.NewTextPart("y")}},
		},
	}
	if got := testutil.StatusText(task.Status); got != "ab" {
		t.Errorf("StatusText %q", got)
	}
	if got := testutil.StatusText(a2a.TaskStatus{}); got != "" {
		t.Errorf("StatusText without a message %q", got)
	}
	if got := testutil.ArtifactText(task); got != "xy" {
		t.Errorf("ArtifactText %q", got)
	}
}

func TestSendParams03(t *testing.T) {
	got := testutil.SendParams03(`say "hi"`, "m-1", `,"configuration":{"blocking":false}`)
	want := `{"message":{"kind":"message","role":"user","messageId":"m-1","parts":[{"kind":"text","text":"say \"hi\""}]},"configuration":{"blocking":false}}`
	if got != want {
		t.Errorf("SendParams03 %s, want %s", got, want)
	}
}

func TestFreeAddr(t *testing.T) {
	addr := testutil.FreeAddr(t)
	ln, err := net.Listen("tcp", addr)
	if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("FreeAddr %q: listen: %v", addr, err)
	}
	ln.Close()
}

func TestPoll(t *testing.T) {
	n := 0
	if !testutil.Poll(5*time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("Poll ended after %d calls", n)
	}
	start := time.Now()
	if testutil.Poll(20*time.Millisecond, func() bool { return false }) {
		t.Fatal("Poll of a condition that never holds reported true")
	}
	if d := time.Since(start); d < 20*time.Millisecond || d > 5*time.Second {
		t.Errorf("Poll gave up after %s, want about 20ms", d)
	}
}

func TestDrain(t *testing.T) {
	ch := make(chan int, 3)
	ch <- 1
	ch <- 2
	close(ch)
	if got := testutil.Drain(t, ch, time.Second); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("Drain %v", got)
	}
}

func TestProxy(t *testing.T) {
	echo := testutil.ServeTCP(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
	p := testutil.StartProxy(t, echo)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "ping"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("through the proxy: %q %v", buf, err)
	}
	if n := p.Cut(); n != 1 {
		t.Errorf("Cut closed %d connections, want 1", n)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(buf); err == nil {
		t.Error("the connection still reads after Cut")
	}
	if got := p.Sent(); !slices.Equal(got, []string{"ping"}) {
		t.Errorf("Sent %q", got)
	}
	p.Refuse(true)
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c2.Read(buf); err == nil {
		t.Error("a refusing proxy forwarded a new connection")
	}
}

func TestStart(t *testing.T) {
	child := func(line string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+line)
		return cmd
	}
	cmd := child("child listening on http://127.0.0.1:1 (ready)")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := testutil.Start(cmd, "listening on ", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.Ready != "http://127.0.0.1:1 (ready)" {
		t.Errorf("Ready %q", p.Ready)
	}
	if exited, _ := p.Wait(10 * time.Millisecond); exited {
		t.Fatal("the child exited before its stdin closed")
	}
	stdin.Close()
	exited, err := p.Wait(30 * time.Second)
	if ee, ok := err.(*exec.ExitError); !exited || !ok || ee.ExitCode() != 3 {
		t.Fatalf("Wait: %v %v, want exit status 3", exited, err)
	}
	if !strings.Contains(p.Stderr.String(), "child stderr") || !strings.HasPrefix(p.Stdout.String(), "starting\n") {
		t.Errorf("stdout %q stderr %q", p.Stdout, p.Stderr)
	}

	// A child that exits without its listening line: the error holds its stderr.
	cmd = child("")
	cmd.Stdin = strings.NewReader("")
	if _, err := testutil.Start(cmd, "listening on ", 30*time.Second); err == nil || !strings.Contains(err.Error(), "child stderr") {
		t.Errorf("Start of a child that never listens: %v", err)
	}
}

func TestCallRPC(t *testing.T) {
	ts := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t1","status":{"state":"completed","message":{"parts":[{"text":"a"},{"text":"b"}]}},"artifacts":[{"parts":[{"text":"x"}]},{"parts":[{"text":"y"}]}]}}`)
	}))
	r := testutil.CallRPC(t, ts.URL, "tasks/get", `{"id":"t1"}`)
	if r.Error != nil || r.Result.ID != "t1" || r.Result.Status.State != "completed" {
		t.Fatalf("CallRPC %+v", r)
	}
	if got := r.Result.StatusText(); got != "ab" {
		t.Errorf("StatusText %q", got)
	}
	if got := r.Result.ArtifactText(); got != "xy" {
		t.Errorf("ArtifactText %q", got)
	}
}

func TestForward(t *testing.T) {
	upstream := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/x-echo")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("X-One"), b)
	}))
	front := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		testutil.Forward(w, r, upstream.URL)
	}))
	resp, b := testutil.Post(t, front.URL, "body", "X-One", "1")
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Content-Type") != "text/x-echo" || string(b) != "POST 1 body" {
		t.Fatalf("through Forward: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	front = testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		testutil.Forward(w, r, testutil.ClosedURL(t))
	}))
	if resp, _ := testutil.Get(t, front.URL); resp.StatusCode != http.StatusBadGateway {
		t.Errorf("Forward to a closed port: %d, want 502", resp.StatusCode)
	}
}
