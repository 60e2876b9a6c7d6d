//go:build unix

package command_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/command"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// waiting reads s until the working status that says the message waits
// for a free slot; an artifact before it (the command ran) fails the test.
func (s *stream) waiting(t *testing.T, n int) {
	t.Helper()
	want := "Waiting for a free slot: max_concurrency (" + strconv.Itoa(n) + ") commands of this agent are running"
	for {
		switch ev := s.event(t).(type) {
		case *a2a.TaskArtifactUpdateEvent:
			t.Fatalf("the command ran: artifact %+v", ev.Artifact)
		case *a2a.TaskStatusUpdateEvent:
			task := &a2a.Task{Status: ev.Status}
			if ev.Status.State == a2a.TaskStateWorking && strings.HasPrefix(testutil.StatusText(task.Status), want) {
				return
			}
			if ev.Status.State.Terminal() {
				t.Fatalf("task ended: %s %q", ev.Status.State, testutil.StatusText(task.Status))
			}
		}
	}
}

// feed writes line to the fifo, once a command opens it for reading.
func feed(t *testing.T, fifo, line string) {
	t.Helper()
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(line + "\n")
	f.Close()
}

func mkfifo(t *testing.T) string {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return fifo
}

// With max_concurrency 1, a second message waits (working, saying so)
// until the first's process ends, then runs; a third, canceled while it
// waits, never runs.
func TestMaxConcurrency(t *testing.T) {
	t.Parallel()
	fifo := mkfifo(t)
	log := filepath.Join(t.TempDir(), "log")
	script := `read id; echo "start $id" >> "$2"; echo $$; read x < "$1"; echo "end $id" >> "$2"; echo "got $x"`
	e := newEnv(t, command.Config{Command: []string{"sh", "-c", script, "sh", fifo, log}, MaxConcurrency: 1})

	s1 := e.stream(t, textMessage("a\n"))
	pids(t, s1) // a runs
	s2 := e.stream(t, textMessage("b\n"))
	s2.waiting(t, 1)
	s3 := e.stream(t, textMessage("c\n"))
	s3.waiting(t, 1)

	// Cancel works while waiting; c never starts.
	task, err := e.c.CancelTask(context.Background(), a2a.CancelTaskRequest{ID: s3.taskID})
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, task, a2a.TaskStateCanceled)
	for _, ev := range s3.rest(t) {
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			t.Errorf("the canceled message ran: %+v", a.Artifact)
		}
	}

	// a ends, then b runs.
	feed(t, fifo, "one")
	if st := lastStatus(t, s1.rest(t)); st.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("a: %s", st.Status.State)
	}
	pids(t, s2)
	feed(t, fifo, "two")
	evs := s2.rest(t)
	if st := lastStatus(t, evs); st.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("b: %s", st.Status.State)
	}
	got, err := e.c.GetTask(context.Background(), a2a.GetTaskRequest{ID: s2.taskID})
	if err != nil {
		t.Fatal(err)
	}
	if out := string(output(t, got)); !strings.HasSuffix(out, "got two\n") {
		t.Errorf("b's output %q", out)
	}
	if testutil.StatusText(got.Status) != "" {
		t.Errorf("b's final status message %q", testutil.StatusText(got.Status))
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "start a\nend a\nstart b\nend b\n"; string(b) != want {
		t.Errorf("runs\n%s\nwant one at a time:\n%s", b, want)
	}
}

// A message that waits longer than timeout for a slot fails and never
// runs.
func TestMaxConcurrencyTimeout(t *testing.T) {
	t.Parallel()
	fifo := mkfifo(t)
	// The first command outlives its own timeout: it ignores SIGTERM, and
	// SIGKILL would come a minute later; the test ends it through the
	// fifo.
	e := newEnv(t, command.Config{
		Command:        []string{"sh", "-c", `trap "" TERM; echo $$; read x < "$1"`, "sh", fifo},
		MaxConcurrency: 1, Timeout: dur(300 * time.Millisecond), KillGrace: dur(time.Minute),
	})
	s1 := e.stream(t, textMessage(""))
	pids(t, s1)
	s2 := e.stream(t, textMessage(""))
	s2.waiting(t, 1)
	evs := s2.rest(t)
	st := lastStatus(t, evs)
	task := &a2a.Task{Status: st.Status}
	wantState(t, task, a2a.TaskStateFailed)
	want := "timed out after 300ms waiting for a free slot (max_concurrency 1: that many commands of this agent kept running); the command was not started"
	if got := testutil.StatusText(task.Status); got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	for _, ev := range evs {
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			t.Errorf("the message ran: %+v", a.Artifact)
		}
	}
	feed(t, fifo, "end")
	if st := lastStatus(t, s1.rest(t)); st.Status.State != a2a.TaskStateFailed {
		t.Errorf("first: %s", st.Status.State)
	}
}

// Close ends the wait too.
func TestMaxConcurrencyClose(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"sh", "-c", `echo $$; exec sleep 1000`}, MaxConcurrency: 1})
	s1 := e.stream(t, textMessage(""))
	pids(t, s1)
	s2 := e.stream(t, textMessage(""))
	s2.waiting(t, 1)
	if err := e.agent.Close(); err != nil {
		t.Fatal(err)
	}
	st := lastStatus(t, s2.rest(t))
	task := &a2a.Task{Status: st.Status}
	wantState(t, task, a2a.TaskStateFailed)
	if got := testutil.StatusText(task.Status); got != "stopped: the exec agent was closed" {
		t.Errorf("reason %q", got)
	}
}

// A process left in the group that ignores SIGTERM gets the delayed
// SIGKILL after the command was reaped.
func TestLeftoverIgnoringTERM(t *testing.T) {
	t.Parallel()
	e := newEnv(t, command.Config{Command: []string{"sh", "-c", `(trap "" TERM; exec sleep 1000) & echo $!`}, KillGrace: dur(200 * time.Millisecond)})
	task := e.send(t, textMessage(""))
	wantState(t, task, a2a.TaskStateCompleted)
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(string(output(t, task))), &pid); err != nil {
		t.Fatal(err)
	}
	ended(t, pid)
}
