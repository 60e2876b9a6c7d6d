//go:build unix

package command_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/command"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// logs records log records (message and attributes) for the tests.
type logs struct {
	mu   sync.Mutex
	recs []map[string]string
}

type logHandler struct {
	l     *logs
	attrs []slog.Attr
}

func (h logHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logHandler{h.l, append(slices.Clip(h.attrs), as...)}
}
func (h logHandler) WithGroup(string) slog.Handler { return h }
func (h logHandler) Handle(_ context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message}
	for _, a := range h.attrs {
		m[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	h.l.mu.Lock()
	h.l.recs = append(h.l.recs, m)
	h.l.mu.Unlock()
	return nil
}

func (l *logs) find(msg string) []map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]string
	for _, r := range l.recs {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

type env struct {
	c     *client.Client
	agent *command.Agent
	logs  *logs
}

func dur(d time.Duration) *time.Duration { return &d }

// newEnv serves an exec agent for cfg as the default agent of a loopback
// a2abridge server (memory store) and dials it with our client.
func newEnv(t *testing.T, cfg command.Config, opts ...client.Options) *env {
	t.Helper()
	l := &logs{}
	cfg.Logger = slog.New(logHandler{l: l}).With("agent", "exec")
	a, err := command.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	host := server.NewHost(server.HostOptions{Default: "exec", Transport: server.TransportOptions{Logger: quiet}})
	// Text and JSON in, as the exec kind's card in a2abridge serve (the
	// server refuses a part of another type, -32005).
	card := a2a.AgentCard{Name: "exec", Description: "exec test agent", Version: "1",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain", "application/json"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{a.Skill()}}
	host.Add(server.NewHandler(eng, "exec", a, card, server.HandlerOptions{}))
	ts := httptest.NewServer(host)
	t.Cleanup(func() {
		// A run that never ends would hang Close: it fails the test with
		// the goroutines instead of reaching the package's timeout.
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			ts.CloseClientConnections()
			ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = eng.Close(ctx)
			_ = a.Close()
		}()
		select {
		case <-closed:
		case <-time.After(callBound):
			var b strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
			t.Errorf("the server or the exec agent did not close within %s; goroutines:\n%s", callBound, b.String())
		}
	})
	var o client.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	// Each test's server has a port of its own, which a later test's
	// server may get again: the process-wide card cache would answer
	// that one with this one's card.
	o.NoCardCache = true
	c, err := client.Dial(context.Background(), ts.URL, o)
	if err != nil {
		t.Fatal(err)
	}
	return &env{c: c, agent: a, logs: l}
}

func textMessage(texts ...string) a2a.Message {
	var parts []a2a.Part
	for _, s := range texts {
		parts = append(parts, a2a.NewTextPart(s))
	}
	return a2a.NewMessage(a2a.RoleUser, parts...)
}

// send sends m (blocking) and returns the final task.
func (e *env) send(t *testing.T, m a2a.Message) *a2a.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	return testutil.SendTask(t, ctx, e.c, a2a.SendMessageRequest{Message: m})
}

// partBytes returns the bytes of text and raw parts, concatenated.
func partBytes(t *testing.T, parts []a2a.Part) []byte {
	t.Helper()
	var b []byte
	for _, p := range parts {
		switch c := p.Content.(type) {
		case a2a.Text:
			b = append(b, string(c)...)
		case a2a.Raw, a2a.URL:
			if _, isRaw := c.(a2a.Raw); p.MediaType != command.OctetStream || !isRaw {
				t.Fatalf("raw part %+v", p)
			}
			b = append(b, p.Raw()...)
		default:
			t.Fatalf("unexpected part %T", c)
		}
	}
	return b
}

// output returns the bytes of the task's "output" artifact.
func output(t *testing.T, task *a2a.Task) []byte {
	t.Helper()
	for _, a := range task.Artifacts {
		if a.ArtifactID == command.ArtifactName {
			if a.Name != command.ArtifactName {
				t.Errorf("artifact name %q", a.Name)
			}
			return partBytes(t, a.Parts)
		}
	}
	t.Fatalf("task %s (%s) has no output artifact: %+v", task.ID, task.Status.State, task.Artifacts)
	return nil
}

func wantState(t *testing.T, task *a2a.Task, want a2a.TaskState) {
	t.Helper()
	if task.Status.State != want {
		t.Fatalf("task state %s (%q), want %s", task.Status.State, testutil.StatusText(task.Status), want)
	}
}

// stream is a streaming call whose events are read one at a time.
type stream struct {
	next   func() (client.StreamEvent, error, bool)
	stop   func()
	taskID string // of the first event
}

// bounded returns a context that ends after callBound (or with the test).
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	t.Cleanup(cancel)
	return ctx
}

// callBound bounds a test's calls, so that one that never ends fails
// with a message instead of reaching the package's timeout.
const callBound = 2 * time.Minute

func (e *env) stream(t *testing.T, m a2a.Message) *stream {
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	next, stop := iter.Pull2(e.c.SendStreamingMessage(ctx, a2a.SendMessageRequest{Message: m}))
	s := &stream{next: next, stop: func() { stop(); cancel() }}
	t.Cleanup(s.stop)
	return s
}

// event returns the next event; it fails the test at the end of the stream.
func (s *stream) event(t *testing.T) a2a.Event {
	t.Helper()
	ev, err, ok := s.next()
	if !ok {
		t.Fatal("the stream ended")
	}
	if err != nil {
		t.Fatal(err)
	}
	if task, ok := ev.Event.(*a2a.Task); ok && s.taskID == "" {
		s.taskID = task.ID
	}
	return ev.Event
}

// untilArtifact returns the next artifact update, skipping other events.
func (s *stream) untilArtifact(t *testing.T) *a2a.TaskArtifactUpdateEvent {
	t.Helper()
	for {
		if a, ok := s.event(t).(*a2a.TaskArtifactUpdateEvent); ok {
			return a
		}
	}
}

// rest reads the stream to its end and returns its events.
func (s *stream) rest(t *testing.T) []a2a.Event {
	t.Helper()
	var evs []a2a.Event
	for {
		ev, err, ok := s.next()
		if !ok {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev.Event)
	}
}

func lastStatus(t *testing.T, evs []a2a.Event) *a2a.TaskStatusUpdateEvent {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		if s, ok := evs[i].(*a2a.TaskStatusUpdateEvent); ok {
			return s
		}
	}
	t.Fatal("no status update")
	return nil
}

func TestEchoOverEveryInterface(t *testing.T) {
	bin := make([]byte, 70000)
	_, _ = rand.Read(bin)
	bin[0] = 0xff // surely not UTF-8
	file := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(file, bin, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, in := range testutil.Interfaces {
		o := client.Options{Protocol: in.Protocol, Binding: in.Binding}
		t.Run(o.Protocol+"/"+o.Binding, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, command.Config{Command: []string{"cat"}}, o)
			task := e.send(t, textMessage("héllo wörld ✓"))
			wantState(t, task, a2a.TaskStateCompleted)
			if got := string(output(t, task)); got != "héllo wörld ✓" {
				t.Errorf("output %q", got)
			}
			// The final status update's metadata is folded into the task's.
			if got := fmt.Sprint(task.Metadata[command.MetadataExitCode]); got != "0" {
				t.Errorf("task metadata %v", task.Metadata)
			}
			// Binary stdout: raw parts, byte for byte.
			e2 := newEnv(t, command.Config{Command: []string{"cat", file}}, o)
			task = e2.send(t, textMessage(""))
			wantState(t, task, a2a.TaskStateCompleted)
			if got := output(t, task); !bytes.Equal(got, bin) {
				t.Errorf("binary output differs: %d bytes, want %d", len(got), len(bin))
			}
		})
	}
}

func TestTextInputJoinsTextParts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"cat"}})
	m := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("one"), a2a.NewDataPart(map[string]any{"skip": true}), a2a.NewTextPart("two\n"))
	task := e.send(t, m)
	wantState(t, task, a2a.TaskStateCompleted)
	if got := string(output(t, task)); got != "one\ntwo\n" {
		t.Errorf("stdin was %q, want %q", got, "one\ntwo\n")
	}
}

func TestEmptyOutput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"true"}})
	s := e.stream(t, textMessage("ignored"))
	evs := s.rest(t)
	var arts []*a2a.TaskArtifactUpdateEvent
	for _, ev := range evs {
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			arts = append(arts, a)
		}
	}
	if len(arts) != 1 || arts[0].Append || !arts[0].LastChunk || len(partBytes(t, arts[0].Artifact.Parts)) != 0 {
		t.Fatalf("artifact updates %+v, want one empty last chunk", arts)
	}
	if st := lastStatus(t, evs); st.Status.State != a2a.TaskStateCompleted || fmt.Sprint(st.Metadata[command.MetadataExitCode]) != "0" {
		t.Errorf("final status %+v", st)
	}
}

func TestJSONInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"cat"}, Input: command.InputJSON})
	m := a2a.NewMessage(a2a.RoleUser,
		a2a.NewTextPart("hello"),
		a2a.NewDataPart(map[string]any{"k": json.Number("1")}),
		a2a.Part{Content: a2a.Raw([]byte("hi")), MediaType: "text/plain", Filename: "a.txt"},
		a2a.Part{Content: a2a.URL("https://example.com/f.pdf"), MediaType: "application/pdf"},
	)
	m.Metadata = map[string]any{"from": "test"}
	task := e.send(t, m)
	wantState(t, task, a2a.TaskStateCompleted)
	out := output(t, task)
	if !bytes.HasSuffix(out, []byte("}\n")) || bytes.Count(out, []byte("\n")) != 1 {
		t.Errorf("stdin is not one JSON line: %q", out)
	}
	var got struct {
		MessageID, ContextID, TaskID, Role string
		Parts                              []map[string]any
		Metadata                           map[string]any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.MessageID != m.MessageID || got.TaskID != task.ID || got.ContextID != task.ContextID || got.Role != "ROLE_USER" || got.Metadata["from"] != "test" {
		t.Errorf("message fields: %s", out)
	}
	want := []map[string]any{
		{"text": "hello"},
		{"data": map[string]any{"k": 1.0}},
		{"raw": base64.StdEncoding.EncodeToString([]byte("hi")), "mediaType": "text/plain", "filename": "a.txt"},
		{"url": "https://example.com/f.pdf", "mediaType": "application/pdf"},
	}
	if fmt.Sprint(got.Parts) != fmt.Sprint(want) {
		t.Errorf("parts\n got %v\nwant %v", got.Parts, want)
	}
}

// The first output arrives while the command still runs: it then waits
// for a line on a fifo that the test writes only after seeing it.
func TestOutputStreamsBeforeExit(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, command.Config{Command: []string{"sh", "-c", `echo first; read x < "$1"; echo "second $x"`, "sh", fifo}})
	s := e.stream(t, textMessage(""))
	a := s.untilArtifact(t)
	if got := string(partBytes(t, a.Artifact.Parts)); got != "first\n" || a.Append || a.LastChunk {
		t.Fatalf("first chunk %q append=%v last=%v", got, a.Append, a.LastChunk)
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("go\n")
	f.Close()
	var rest []byte
	evs := s.rest(t)
	for i, ev := range evs {
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			if !a.Append {
				t.Errorf("chunk %d has append=false", i)
			}
			rest = append(rest, partBytes(t, a.Artifact.Parts)...)
			if a.LastChunk != (i == len(evs)-2) {
				t.Errorf("chunk %d lastChunk=%v", i, a.LastChunk)
			}
		}
	}
	if string(rest) != "second go\n" {
		t.Errorf("rest of output %q", rest)
	}
	if st := lastStatus(t, evs); st.Status.State != a2a.TaskStateCompleted {
		t.Errorf("final state %s", st.Status.State)
	}
}

func TestNonZeroExit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"sh", "-c", `echo out; i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo "err $i" >&2; done; printf 'bad \377 byte' >&2; exit 3`}})
	s := e.stream(t, textMessage(""))
	evs := s.rest(t)
	st := lastStatus(t, evs)
	task := &a2a.Task{Status: st.Status}
	wantState(t, task, a2a.TaskStateFailed)
	var lines []string
	for i := 12; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("err %d", i))
	}
	want := "exit status 3; stderr:\n" + strings.Join(lines, "\n") + "\nbad \uFFFD byte"
	if got := testutil.StatusText(task.Status); got != want {
		t.Errorf("reason\n%q\nwant\n%q", got, want)
	}
	if fmt.Sprint(st.Metadata[command.MetadataExitCode]) != "3" {
		t.Errorf("status metadata %v", st.Metadata)
	}
	got, err := e.c.GetTask(context.Background(), a2a.GetTaskRequest{ID: st.TaskID})
	if err != nil {
		t.Fatal(err)
	}
	if string(output(t, got)) != "out\n" {
		t.Errorf("output %q", output(t, got))
	}
	if fmt.Sprint(got.Metadata[command.MetadataExitCode]) != "3" {
		t.Errorf("task metadata %v", got.Metadata)
	}
	// stderr went to the log, line by line, with the agent and task.
	recs := e.logs.find("exec: stderr")
	if len(recs) != 31 {
		t.Fatalf("%d stderr records, want 31", len(recs))
	}
	r := recs[0]
	if r["line"] != "err 1" || r["agent"] != "exec" || r["task"] != st.TaskID || r["pid"] == "" {
		t.Errorf("stderr record %v", r)
	}
}

func TestKilledBySignal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"sh", "-c", `echo dying >&2; kill -USR1 $$`}})
	task := e.send(t, textMessage(""))
	wantState(t, task, a2a.TaskStateFailed)
	want := fmt.Sprintf("terminated by signal %d (%s); stderr:\ndying", int(syscall.SIGUSR1), syscall.SIGUSR1)
	if got := testutil.StatusText(task.Status); got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"sh", "-c", `echo started >&2; exec sleep 1000`}, Timeout: dur(300 * time.Millisecond), KillGrace: dur(100 * time.Millisecond)})
	task := e.send(t, textMessage(""))
	wantState(t, task, a2a.TaskStateFailed)
	if got, want := testutil.StatusText(task.Status), "timed out after 300ms; the command was stopped; stderr:\nstarted"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
}

// gone fails the test unless pid is no process at all (our children are
// reaped: no zombies).
func gone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists (kill 0: %v)", pid, err)
	}
}

// pids reads the first chunk of the output: pids written by the command.
func pids(t *testing.T, s *stream) []int {
	t.Helper()
	a := s.untilArtifact(t)
	var out []int
	for _, f := range strings.Fields(string(partBytes(t, a.Artifact.Parts))) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("output %q", partBytes(t, a.Artifact.Parts))
		}
		out = append(out, n)
	}
	return out
}

func TestCancel(t *testing.T) {
	t.Parallel()
	t.Run("sigterm", func(t *testing.T) {
		t.Parallel()
		mark := filepath.Join(t.TempDir(), "term")
		e := newEnv(t, command.Config{Command: []string{"sh", "-c", `trap 'echo term > "$1"; exit 0' TERM; sleep 1000 & echo $$ $!; wait`, "sh", mark}})
		s := e.stream(t, textMessage(""))
		p := pids(t, s)
		task, err := e.c.CancelTask(bounded(t), a2a.CancelTaskRequest{ID: s.taskID})
		if err != nil {
			t.Fatal(err)
		}
		wantState(t, task, a2a.TaskStateCanceled)
		// Cancel answers once the command is gone and reaped.
		gone(t, p[0])
		ended(t, p[1])
		if b, err := os.ReadFile(mark); err != nil || string(b) != "term\n" {
			t.Errorf("the command did not get SIGTERM: %q %v", b, err)
		}
	})
	t.Run("sigkill", func(t *testing.T) {
		t.Parallel()
		// Both the shell and its child ignore SIGTERM.
		e := newEnv(t, command.Config{Command: []string{"sh", "-c", `trap "" TERM; sleep 1000 & echo $$ $!; wait`}, KillGrace: dur(200 * time.Millisecond)})
		s := e.stream(t, textMessage(""))
		p := pids(t, s)
		task, err := e.c.CancelTask(bounded(t), a2a.CancelTaskRequest{ID: s.taskID})
		if err != nil {
			t.Fatal(err)
		}
		wantState(t, task, a2a.TaskStateCanceled)
		gone(t, p[0])
		ended(t, p[1])
	})
	t.Run("setsid", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("setsid"); err != nil || runtime.GOOS != "linux" {
			t.Skip("setsid, and finding processes outside the group, are Linux's")
		}
		// A child that left the group (its own session), and one that also
		// ignores SIGTERM, with a child of its own: all get stopped.
		e := newEnv(t, command.Config{Command: []string{"sh", "-c",
			`setsid sleep 1000 & a=$!; setsid sh -c 'trap "" TERM; sleep 1000; true' & echo $$ $a $!; wait`},
			KillGrace: dur(200 * time.Millisecond)})
		s := e.stream(t, textMessage(""))
		p := pids(t, s)
		if _, err := e.c.CancelTask(bounded(t), a2a.CancelTaskRequest{ID: s.taskID}); err != nil {
			t.Fatal(err)
		}
		gone(t, p[0])
		ended(t, p[1])
		ended(t, p[2])
	})
	t.Run("setsid-churn", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("setsid"); err != nil || runtime.GOOS != "linux" {
			t.Skip("setsid, and finding processes outside the group, are Linux's")
		}
		// The command keeps starting children that leave the group and
		// ignore SIGTERM, so some are leaving it while the stop begins:
		// each one that started must end.
		list := filepath.Join(t.TempDir(), "pids")
		e := newEnv(t, command.Config{Command: []string{"sh", "-c", `echo $$; i=0; while [ $i -lt 150 ]; do
			setsid sh -c 'trap "" TERM; echo $$ >> "$0"; exec sleep 1000' "$1" </dev/null >/dev/null 2>&1 &
			i=$((i+1)); done; wait`, "sh", list},
			KillGrace: dur(200 * time.Millisecond)})
		s := e.stream(t, textMessage(""))
		p := pids(t, s)
		// Cancel once some children run, while the others are started.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
			b, _ := os.ReadFile(list)
			if bytes.Count(b, []byte("\n")) >= 5 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the children did not start: %q", b)
			}
		}
		if _, err := e.c.CancelTask(bounded(t), a2a.CancelTaskRequest{ID: s.taskID}); err != nil {
			t.Fatal(err)
		}
		gone(t, p[0])
		b, err := os.ReadFile(list)
		if err != nil {
			t.Fatal(err)
		}
		started := strings.Fields(string(b))
		for _, f := range started {
			pid, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("pid list %q", b)
			}
			ended(t, pid)
		}
		t.Logf("%d children had started when the stop began; all ended", len(started))
	})
	t.Run("exec-sleep", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, command.Config{Command: []string{"sh", "-c", `echo $$; exec sleep 1000`}})
		s := e.stream(t, textMessage(""))
		p := pids(t, s)
		if _, err := e.c.CancelTask(bounded(t), a2a.CancelTaskRequest{ID: s.taskID}); err != nil {
			t.Fatal(err)
		}
		gone(t, p[0])
	})
}

// Processes the command leaves behind holding its stdout are stopped when
// it exits, and the task completes.
func TestLeftoversStopped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"sh", "-c", `sleep 1000 & echo $!`}})
	task := e.send(t, textMessage(""))
	wantState(t, task, a2a.TaskStateCompleted)
	pid, err := strconv.Atoi(strings.TrimSpace(string(output(t, task))))
	if err != nil {
		t.Fatal(err)
	}
	ended(t, pid)
}

func TestTenMegabytes(t *testing.T) {
	t.Parallel()
	const n = 1460000
	var want bytes.Buffer
	for i := 1; i <= n; i++ {
		want.WriteString(strconv.Itoa(i))
		want.WriteByte('\n')
	}
	if want.Len() < 10<<20 {
		t.Fatalf("only %d bytes", want.Len())
	}
	e := newEnv(t, command.Config{Command: []string{"seq", "1", strconv.Itoa(n)}})
	s := e.stream(t, textMessage(""))
	evs := s.rest(t)
	var got []byte
	chunks := 0
	var taskID string
	for _, ev := range evs {
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			if a.Append != (chunks > 0) {
				t.Fatalf("chunk %d append=%v", chunks, a.Append)
			}
			b := partBytes(t, a.Artifact.Parts)
			if len(b) > 2*32<<10+utf8.UTFMax {
				t.Errorf("chunk %d has %d bytes", chunks, len(b))
			}
			got = append(got, b...)
			chunks++
			taskID = a.TaskID
		}
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("streamed output differs: %d bytes, want %d", len(got), want.Len())
	}
	if st := lastStatus(t, evs); st.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("final state %s", st.Status.State)
	}
	t.Logf("%d chunks", chunks)
	if chunks < 10<<20/(64<<10) {
		t.Errorf("only %d chunks", chunks)
	}
	task, err := e.c.GetTask(context.Background(), a2a.GetTaskRequest{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(output(t, task), want.Bytes()) {
		t.Errorf("stored output differs")
	}
}

func TestYesTenMiB(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"sh", "-c", "yes | head -c 10485760"}, Env: []string{"PATH"}})
	task := e.send(t, textMessage(""))
	wantState(t, task, a2a.TaskStateCompleted)
	if got := output(t, task); !bytes.Equal(got, bytes.Repeat([]byte("y\n"), 10485760/2)) {
		t.Errorf("output differs: %d bytes", len(got))
	}
}

func TestMaxOutput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"yes"}, MaxOutput: 1001})
	task := e.send(t, textMessage(""))
	wantState(t, task, a2a.TaskStateFailed)
	if got, want := testutil.StatusText(task.Status), "the command wrote more than max_output (1001 bytes) to stdout; it was stopped"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	if got := string(output(t, task)); got != strings.Repeat("y\n", 500)+"y" {
		t.Errorf("output %d bytes %q…", len(got), got[:min(len(got), 20)])
	}
}

func TestEnvAllowlist(t *testing.T) {
	t.Setenv("A2AB_LISTED", "listed value")
	t.Setenv("A2AB_SECRET", "must not be seen")
	t.Setenv("A2AB_OVERRIDDEN", "server value")
	e := newEnv(t, command.Config{
		Command: []string{"env"},
		Env:     []string{"A2AB_LISTED", "A2AB_OVERRIDDEN", "A2AB_NOT_SET", "PATH"},
		SetEnv:  map[string]string{"A2AB_EXTRA": "x=y", "A2AB_OVERRIDDEN": "config value"},
	})
	task := e.send(t, textMessage(""))
	wantState(t, task, a2a.TaskStateCompleted)
	got := strings.Split(strings.TrimSpace(string(output(t, task))), "\n")
	slices.Sort(got)
	want := []string{"A2AB_EXTRA=x=y", "A2AB_LISTED=listed value", "A2AB_OVERRIDDEN=config value", "PATH=" + os.Getenv("PATH")}
	if !slices.Equal(got, want) {
		t.Errorf("environment\n got %q\nwant %q", got, want)
	}
}

// Without PATH in its environment, a bare name is found in the server's;
// with one in set_env, there.
func TestLookupPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "hello-a2ab")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho from script\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, command.Config{Command: []string{"hello-a2ab"}, SetEnv: map[string]string{"PATH": dir}})
	task := e.send(t, textMessage(""))
	wantState(t, task, a2a.TaskStateCompleted)
	if got := string(output(t, task)); got != "from script\n" {
		t.Errorf("output %q", got)
	}
	e = newEnv(t, command.Config{Command: []string{"echo", "no env"}})
	task = e.send(t, textMessage(""))
	wantState(t, task, a2a.TaskStateCompleted)
	if got := string(output(t, task)); got != "no env\n" {
		t.Errorf("output %q", got)
	}
}

func TestWorkdir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\npwd\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{"pwd"}, {"./run.sh"}} {
		e := newEnv(t, command.Config{Command: argv, Workdir: dir})
		task := e.send(t, textMessage(""))
		wantState(t, task, a2a.TaskStateCompleted)
		if got := strings.TrimSpace(string(output(t, task))); got != real {
			t.Errorf("%v: pwd %q, want %q", argv, got, real)
		}
	}
}

func TestStartFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noexec := filepath.Join(dir, "noexec")
	if err := os.WriteFile(noexec, []byte("echo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  command.Config
		want string
	}{
		{command.Config{Command: []string{"no-such-command-a2ab", "--secret-arg"}}, `command not found: "no-such-command-a2ab" (not in PATH)`},
		{command.Config{Command: []string{"./missing.sh"}, Workdir: dir}, `command "./missing.sh": not found`},
		{command.Config{Command: []string{noexec}}, fmt.Sprintf("command %q: not executable", noexec)},
		{command.Config{Command: []string{dir}}, fmt.Sprintf("command %q: is a directory", dir)},
		{command.Config{Command: []string{"cat"}, Workdir: filepath.Join(dir, "nope")}, fmt.Sprintf("workdir %q: no such directory", filepath.Join(dir, "nope"))},
		{command.Config{Command: []string{"cat"}, Workdir: noexec}, fmt.Sprintf("workdir %q: not a directory", noexec)},
	} {
		e := newEnv(t, c.cfg)
		task := e.send(t, textMessage("x"))
		wantState(t, task, a2a.TaskStateFailed)
		if got := testutil.StatusText(task.Status); got != c.want {
			t.Errorf("%v: reason %q, want %q", c.cfg.Command, got, c.want)
		}
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"sh", "-c", `echo $$; exec sleep 1000`}})
	s := e.stream(t, textMessage(""))
	p := pids(t, s)
	if err := e.agent.Close(); err != nil {
		t.Fatal(err)
	}
	gone(t, p[0])
	st := lastStatus(t, s.rest(t))
	if st.Status.State != a2a.TaskStateFailed {
		t.Fatalf("state %s", st.Status.State)
	}
	// Later messages fail.
	task := e.send(t, textMessage(""))
	wantState(t, task, a2a.TaskStateFailed)
	if got := testutil.StatusText(task.Status); got != "The exec agent is closed." {
		t.Errorf("reason %q", got)
	}
}

func TestValidate(t *testing.T) {
	neg := -time.Second
	for _, c := range []struct {
		cfg  command.Config
		want []string
	}{
		{command.Config{}, []string{"command: required"}},
		{command.Config{Command: []string{""}}, []string{"command: empty program name"}},
		{command.Config{Command: []string{"a", "b\x00"}, Input: "xml", Timeout: &neg, KillGrace: &neg, MaxOutput: -1, MaxConcurrency: -1,
			Workdir: "a\x00", Env: []string{"OK", "A=B", ""}, SetEnv: map[string]string{"": "x", "V": "a\x00"}},
			[]string{"command[1]: contains a NUL byte", `input: must be "text" or "json", not "xml"`, "timeout: must be >= 0",
				"kill_grace: must be >= 0", "max_output: must be >= 0", "max_concurrency: must be >= 1", "workdir: contains a NUL byte",
				`env[1]: "A=B" is not an environment variable name`, `env[2]: "" is not an environment variable name`,
				`set_env: "" is not an environment variable name`, "set_env.V: value contains a NUL byte"}},
	} {
		err := c.cfg.Validate()
		if err == nil {
			t.Errorf("%+v: valid", c.cfg)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q lacks %q", err, w)
			}
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != len(c.want) {
			t.Errorf("%d errors, want %d: %v", n, len(c.want), err)
		}
		if _, err := command.New(c.cfg); err == nil {
			t.Errorf("New accepted %+v", c.cfg)
		}
	}
	zero := time.Duration(0)
	if err := (command.Config{Command: []string{"cat"}, Input: "json", Timeout: &zero, KillGrace: &zero}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestSkill(t *testing.T) {
	a, err := command.New(command.Config{Command: []string{"/usr/bin/wc", "--secret"}})
	if err != nil {
		t.Fatal(err)
	}
	s := a.Skill()
	if s.ID != "exec" || s.Name != "wc" || strings.Contains(s.Description, "secret") || !slices.Equal(s.InputModes, []string{"text/plain"}) {
		t.Errorf("skill %+v", s)
	}
}

// Input the command does not read, or reads while it writes, blocks
// nothing.
func TestLargeInput(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	e := newEnv(t, command.Config{Command: []string{"true"}})
	task := e.send(t, textMessage(big))
	wantState(t, task, a2a.TaskStateCompleted)
	e = newEnv(t, command.Config{Command: []string{"cat"}})
	task = e.send(t, textMessage(big))
	wantState(t, task, a2a.TaskStateCompleted)
	if got := string(output(t, task)); got != big {
		t.Errorf("output of %d bytes differs", len(got))
	}
}

// TestOutputJoined: a command printing many lines streams its stdout in
// several chunks (the last one may be empty), and the task a blocking
// SendMessage returns holds it as one text part, with no empty part at
// the end, over every interface.
func TestOutputJoined(t *testing.T) {
	var want strings.Builder
	for i := 1; i <= 40000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	for _, in := range testutil.Interfaces {
		o := client.Options{Protocol: in.Protocol, Binding: in.Binding}
		t.Run(o.Protocol+"/"+o.Binding, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, command.Config{Command: []string{"seq", "1", "40000"}}, o)
			task := e.send(t, textMessage(""))
			wantState(t, task, a2a.TaskStateCompleted)
			if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 {
				t.Fatalf("artifacts %d, parts %d; want one text part", len(task.Artifacts), len(task.Artifacts[0].Parts))
			}
			if tp, ok := task.Artifacts[0].Parts[0].Content.(a2a.Text); !ok || string(tp) != want.String() {
				t.Fatalf("output part %T of %d bytes, want the text of %d bytes", task.Artifacts[0].Parts[0], len(partBytes(t, task.Artifacts[0].Parts)), want.Len())
			}
			// A stream delivers it in chunks (reads of at most 32 KiB,
			// joined up to 32 KiB: 229 kB make four at least).
			var chunks []string
			for _, ev := range e.stream(t, textMessage("")).rest(t) {
				if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
					chunks = append(chunks, string(partBytes(t, a.Artifact.Parts)))
				}
			}
			if all := strings.Join(chunks, ""); len(chunks) < 4 || all != want.String() {
				t.Errorf("%d chunks of %d bytes in all, want at least 4 of %d", len(chunks), len(all), want.Len())
			}
		})
	}
}
