package command

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/a2a/a2av1"
	"github.com/a2abridge/a2abridge/server"
)

// Metadata keys this agent sets on the final status update of a task
// (merged into the task's metadata).
const (
	// MetadataExitCode holds the command's exit status (a number) when it
	// exited by itself, with 0 or otherwise.
	MetadataExitCode = "a2abridge/exit_code"
)

// ArtifactName is the name and the artifactId of the artifact that
// carries a command's stdout.
const ArtifactName = "output"

// errClosed stops the runs of a closed Agent.
var errClosed = errors.New("exec: agent closed")

// Agent runs its command once per message (A2A 1.0 §3.1.1
// SendMessage/SendStreamingMessage): it implements server.Agent and
// server.Canceler. Create it with New; it is safe for concurrent use, and
// every message gets its own process.
type Agent struct {
	s     settings
	slots chan struct{} // one token per running command (max_concurrency)

	mu     sync.Mutex
	runs   map[string]*run // by task id
	closed bool
	wg     sync.WaitGroup
}

// run is one execution of the command.
type run struct {
	stop context.CancelCauseFunc
	done chan struct{} // closed when the execution is over
}

// New returns an Agent for c. It returns c.Validate's error when c is
// invalid, and an error on systems other than Unix (the agent relies on
// process groups and signals). It starts nothing: the command runs when
// a message arrives.
func New(c Config) (*Agent, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := platformSupported(); err != nil {
		return nil, err
	}
	s := c.settings()
	return &Agent{s: s, slots: make(chan struct{}, s.maxConc), runs: map[string]*run{}}, nil
}

// Skill returns a default skill for the agent's card: id "exec", named
// after the program (its base name only: the arguments, which may hold
// secrets, are not shown), with the input and output modes of the
// configuration.
func (a *Agent) Skill() a2a.AgentSkill {
	prog := filepath.Base(a.s.argv[0])
	in := []string{"text/plain"}
	desc := fmt.Sprintf("Runs %s with the message's text on its standard input and answers with its standard output.", prog)
	if a.s.json {
		in = []string{"text/plain", "application/json", "*/*"}
		desc = fmt.Sprintf("Runs %s with the message (A2A 1.0 JSON) on its standard input and answers with its standard output.", prog)
	}
	return a2a.AgentSkill{
		ID:          "exec",
		Name:        prog,
		Description: desc,
		Tags:        []string{"exec", "command"},
		InputModes:  in,
		OutputModes: []string{"text/plain", OctetStream},
	}
}

// Execute runs the command for req.Message and reports through t: a
// working status (first one saying that the message waits, when
// MaxConcurrency commands already run: see Config.MaxConcurrency),
// stdout as the chunks of the artifact "output", then
// completed (exit status 0) or failed with a reason: "exit status N" or
// "terminated by signal N (name)" with the last lines of stderr, "timed
// out after D", "output exceeded max_output", or a start failure naming
// the program ("command not found: …"), or "timed out after D waiting
// for a free slot" naming max_concurrency. The final status update carries
// MetadataExitCode when the command exited by itself.
//
// When ctx is cancelled (tasks/cancel, server shutdown) the process group
// gets SIGTERM, then SIGKILL after KillGrace; Execute returns once the
// process is reaped, with ctx's error. It returns an error also when the
// task's events cannot be stored; a task closed meanwhile (ErrTaskClosed)
// is not an error.
func (a *Agent) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	r := &run{stop: stop, done: make(chan struct{})}
	id := t.TaskID()
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ignoreClosed(t.Fail(ctx, "The exec agent is closed."))
	}
	a.runs[id] = r
	a.wg.Add(1)
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		if a.runs[id] == r {
			delete(a.runs, id)
		}
		a.mu.Unlock()
		close(r.done)
		a.wg.Done()
	}()
	return a.execute(ctx, req, t)
}

// Cancel implements server.Canceler: it stops the task's process, if it
// still runs (SIGTERM, then SIGKILL after KillGrace), and returns once
// the process is gone and reaped, or with ctx's error when ctx ends first.
func (a *Agent) Cancel(ctx context.Context, task a2a.Task) error {
	a.mu.Lock()
	r := a.runs[task.ID]
	a.mu.Unlock()
	if r == nil {
		return nil
	}
	r.stop(context.Canceled)
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops every running command (their tasks fail with "the exec
// agent was closed") and returns once they are all reaped. Messages that
// arrive afterwards fail their tasks. It always returns nil.
func (a *Agent) Close() error {
	a.mu.Lock()
	a.closed = true
	for _, r := range a.runs {
		r.stop(errClosed)
	}
	a.mu.Unlock()
	a.wg.Wait()
	return nil
}

// acquire takes one of the agent's slots (Config.MaxConcurrency) for a
// run. When none is free it tells the task that it waits, then waits,
// bounded by ctx (cancel, Close) and by the timeout. ok is true when the
// caller holds a slot and must give it back with release; otherwise the
// wait ended and the caller returns err (the task failed here, or was
// settled elsewhere).
func (a *Agent) acquire(ctx context.Context, t *server.TaskUpdater) (ok bool, err error) {
	if ctx.Err() != nil {
		return false, a.stopped(ctx, t)
	}
	select {
	case a.slots <- struct{}{}:
		return true, nil
	default:
	}
	n := a.s.maxConc
	msg := fmt.Sprintf("Waiting for a free slot: max_concurrency (%d) commands of this agent are running; this one starts when one of them ends.", n)
	if err := t.Working(ctx, msg); err != nil {
		if ctx.Err() != nil {
			return false, a.stopped(ctx, t)
		}
		return false, ignoreClosed(err)
	}
	var timeout <-chan time.Time
	if a.s.timeout > 0 {
		tm := time.NewTimer(a.s.timeout)
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case a.slots <- struct{}{}:
		if ctx.Err() == nil {
			return true, nil
		}
		a.release() // ctx ended too: that wins
	case <-ctx.Done():
	case <-timeout:
		return false, ignoreClosed(t.Fail(ctx, fmt.Sprintf("timed out after %s waiting for a free slot (max_concurrency %d: that many commands of this agent kept running); the command was not started", a.s.timeout, n)))
	}
	return false, a.stopped(ctx, t)
}

// stopped is the outcome of a run whose ctx ended before its command
// started: Close fails the task; tasks/cancel and shutdown settle it
// elsewhere (ctx's error is returned).
func (a *Agent) stopped(ctx context.Context, t *server.TaskUpdater) error {
	if errors.Is(context.Cause(ctx), errClosed) {
		return ignoreClosed(t.Fail(context.WithoutCancel(ctx), "stopped: the exec agent was closed"))
	}
	return ctx.Err()
}

// release gives back the slot taken by acquire.
func (a *Agent) release() { <-a.slots }

// input returns what the command reads on stdin for m.
func (a *Agent) input(m *a2a.Message) ([]byte, error) {
	if a.s.json {
		b, err := a2av1.Marshal(m)
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	}
	var sb strings.Builder
	n := 0
	for _, p := range m.Parts {
		if tp, ok := p.Content.(a2a.Text); ok {
			if n > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(string(tp))
			n++
		}
	}
	return []byte(sb.String()), nil
}

// ignoreClosed returns nil for server.ErrTaskClosed (the task ended
// elsewhere, e.g. canceled), else err.
func ignoreClosed(err error) error {
	if errors.Is(err, server.ErrTaskClosed) {
		return nil
	}
	return err
}
