//go:build unix

package command

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/server"
)

func platformSupported() error { return nil }

// Sizes of the stdout pipeline.
const (
	// readSize is the size of one read from stdout.
	readSize = 32 << 10
	// coalesce is the size up to which reads that are already waiting
	// are joined into one chunk (artifact update).
	coalesce = 32 << 10
	// queued is the number of reads that may wait for the emitter;
	// then the reader, and so the command, waits (backpressure).
	queued = 8
	// drainGrace is how long the pipes are read after the command's
	// exit (added to KillGrace) when a process outside its process
	// group still holds them; then they are closed.
	drainGrace = 2 * time.Second
)

// Why a run was stopped.
var (
	errTimeout  = errors.New("timeout")
	errOverflow = errors.New("max_output exceeded")
	errEmit     = errors.New("an event could not be stored")
)

func (a *Agent) execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	s := &a.s
	log := s.log.With("task", t.TaskID())
	input, err := a.input(&req.Message)
	if err != nil {
		return ignoreClosed(t.Fail(ctx, "The message cannot be written as JSON for the command: "+err.Error()))
	}
	env := s.environ(os.LookupEnv)
	path, reason := resolve(s.argv[0], s.workdir, pathOf(env))
	if reason == "" && s.workdir != "" {
		reason = checkDir(s.workdir)
	}
	if reason != "" {
		log.Warn("exec: cannot start the command", "reason", reason)
		return ignoreClosed(t.Fail(ctx, reason))
	}
	if ok, err := a.acquire(ctx, t); !ok {
		return err
	}
	defer a.release()
	if err := t.Working(ctx, ""); err != nil {
		if ctx.Err() != nil {
			return a.stopped(ctx, t)
		}
		return ignoreClosed(err)
	}

	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File) {
		if err == nil {
			if r, w, err = os.Pipe(); err == nil {
				files = append(files, r, w)
			}
		}
		return r, w
	}
	inR, inW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	if err != nil {
		closeAll()
		return fmt.Errorf("exec: pipes: %w", err)
	}
	cmd := &exec.Cmd{
		Path: path, Args: s.argv, Env: env, Dir: s.workdir,
		Stdin: inR, Stdout: outW, Stderr: errW,
		// Its own process group, so that signals reach the whole tree.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	// The child has its copies; ours would keep the pipes open.
	_, _, _ = inR.Close(), outW.Close(), errW.Close()
	if err != nil {
		closeAll()
		reason := startFailure(s.argv[0], err)
		log.Warn("exec: cannot start the command", "reason", reason)
		return ignoreClosed(t.Fail(ctx, reason))
	}
	pid := cmd.Process.Pid
	log = log.With("pid", pid)
	log.Debug("exec: started", "program", s.argv[0])
	k := &killer{pgid: pid, grace: s.killGrace}

	exited := make(chan struct{})
	go func() {
		k.reap(cmd) // the result is in cmd.ProcessState
		close(exited)
	}()

	inDone := make(chan struct{})
	go func() {
		defer close(inDone)
		if len(input) > 0 {
			_, _ = inW.Write(input) // EPIPE when the command does not read it all
		}
		_ = inW.Close()
	}()

	var stderr tail
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		logged := 0
		readLines(errR, func(line []byte, cut bool) {
			stderr.add(line, cut)
			if logged < maxLoggedLines {
				log.LogAttrs(context.Background(), slog.LevelInfo, "exec: stderr", slog.String("line", printable(line, maxLine, cut)))
			} else if logged == maxLoggedLines {
				log.Info("exec: stderr: further lines are not logged")
			}
			logged++
		})
	}()

	out := &output{t: t, ch: make(chan []byte, queued), failed: make(chan struct{}), overflow: make(chan struct{}), max: s.maxOutput}
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		out.read(outR)
	}()
	emitDone := make(chan struct{})
	go func() {
		defer close(emitDone)
		out.emit(ctx)
	}()

	// Until the command exits, or has to be stopped.
	var cause error
	var timeout <-chan time.Time
	if s.timeout > 0 {
		tm := time.NewTimer(s.timeout)
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case <-exited:
	case <-ctx.Done():
		cause = context.Cause(ctx)
	case <-timeout:
		cause = errTimeout
	case <-out.overflow:
		cause = errOverflow
	case <-out.failed:
		cause = errEmit
	}
	if cause != nil {
		log.Info("exec: stopping the command", "why", cause.Error())
		k.start()
		<-exited
	}
	// Processes the command left in its group are stopped too (start
	// does nothing when the group is empty); the pipes are read to their
	// end, unless something outside the group keeps them open for longer
	// than the grace periods.
	k.start()
	readersDone := func() bool {
		select {
		case <-outDone:
		default:
			return false
		}
		select {
		case <-errDone:
			return true
		default:
			return false
		}
	}
	if !readersDone() {
		deadline := make(chan struct{})
		tm := time.AfterFunc(s.killGrace+drainGrace, func() { close(deadline) })
		select {
		case <-outDone:
		case <-deadline:
		}
		select {
		case <-errDone:
		case <-deadline:
		}
		tm.Stop()
		if !readersDone() {
			log.Warn("exec: a process outside the command's process group keeps its output open; closing it")
			_, _ = outR.Close(), errR.Close()
			<-outDone
			<-errDone
		}
	}
	_ = inW.Close()
	<-inDone
	<-emitDone
	closeAll()
	k.finish()

	st := cmd.ProcessState
	switch {
	case cause == nil:
	case errors.Is(cause, errTimeout):
		return a.fail(ctx, t, fmt.Sprintf("timed out after %s; the command was stopped", s.timeout), &stderr, nil)
	case errors.Is(cause, errOverflow):
		return a.fail(ctx, t, fmt.Sprintf("the command wrote more than max_output (%d bytes) to stdout; it was stopped", s.maxOutput), nil, nil)
	case errors.Is(cause, errEmit):
		return ignoreClosed(out.err)
	case errors.Is(cause, errClosed):
		return a.fail(context.WithoutCancel(ctx), t, "stopped: the exec agent was closed", nil, nil)
	default: // tasks/cancel or shutdown: the task is settled elsewhere
		return ctx.Err()
	}
	if out.err != nil {
		return ignoreClosed(out.err)
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		sig := ws.Signal()
		return a.fail(ctx, t, fmt.Sprintf("terminated by signal %d (%s)", int(sig), sig), &stderr, nil)
	case st.ExitCode() != 0:
		return a.fail(ctx, t, fmt.Sprintf("exit status %d", st.ExitCode()), &stderr, map[string]any{MetadataExitCode: st.ExitCode()})
	}
	return ignoreClosed(t.Emit(ctx, &a2a.TaskStatusUpdateEvent{
		Status:   a2a.TaskStatus{State: a2a.TaskStateCompleted},
		Metadata: map[string]any{MetadataExitCode: 0},
	}))
}

// fail fails the task with reason, followed by the last lines of stderr
// when there are any.
func (a *Agent) fail(ctx context.Context, t *server.TaskUpdater, reason string, stderr *tail, md map[string]any) error {
	if stderr != nil {
		if lines := stderr.last(); len(lines) > 0 {
			reason += "; stderr:\n" + strings.Join(lines, "\n")
		}
	}
	return ignoreClosed(t.Emit(ctx, &a2a.TaskStatusUpdateEvent{
		Status:   a2a.TaskStatus{State: a2a.TaskStateFailed, Message: t.TextMessage(reason)},
		Metadata: md,
	}))
}

// output carries stdout to the task: read feeds ch, emit sends chunks.
type output struct {
	t        *server.TaskUpdater
	ch       chan []byte
	max      int64
	overflow chan struct{} // closed when stdout went past max
	failed   chan struct{} // closed when an event could not be stored
	err      error         // why (set before failed is closed)
}

// read reads r until EOF (or until r is closed), queueing up to max
// bytes in o.ch and discarding the rest.
func (o *output) read(r *os.File) {
	defer close(o.ch)
	var total int64
	over := false
	for {
		buf := make([]byte, readSize)
		n, err := r.Read(buf)
		if n > 0 && !over {
			keep := int64(n)
			if total+keep > o.max {
				keep = o.max - total
				over = true
				close(o.overflow)
			}
			total += keep
			if keep > 0 {
				o.ch <- buf[:keep]
			}
		}
		if err != nil {
			return
		}
	}
}

// emit sends what read queues as chunks of the artifact "output": the
// reads waiting are joined up to coalesce bytes; the first chunk has
// append false, the others true, and the last one, sent when stdout
// ends, has lastChunk (it may hold an empty text part). After an error
// it only drains the queue.
func (o *output) emit(ctx context.Context) {
	var ck chunker
	first := true
	send := func(p a2a.Part, last bool) {
		if o.err != nil {
			return
		}
		if p.Content == nil {
			p = a2a.NewTextPart("")
		}
		art := a2a.Artifact{ArtifactID: ArtifactName, Name: ArtifactName, Parts: []a2a.Part{p}}
		if err := o.t.AddArtifact(ctx, art, !first, last); err != nil {
			o.err = err
			close(o.failed)
		}
		first = false
	}
	for {
		acc, ok := <-o.ch
		if !ok {
			send(ck.next(nil, true), true)
			return
		}
	join:
		for len(acc) < coalesce {
			select {
			case b, ok := <-o.ch:
				if !ok {
					send(ck.next(acc, true), true)
					return
				}
				acc = append(acc, b...)
			default:
				break join
			}
		}
		if p := ck.next(acc, false); p.Content != nil {
			send(p, false)
		}
	}
}

// killer stops the process group of one run: SIGTERM, then SIGKILL
// after grace (at once when grace is 0).
//
// A process group id is the pid of the process that created the group,
// here the command (the leader), and it can be reused once the group has
// no member left and no process has that pid: after the leader was
// reaped and its leftovers exited. So the killer signals the group only
// while it is known to be the run's:
//   - until the leader is reaped, it holds the id (running or a zombie);
//   - once it is reaped, the group is the run's while a process found in
//     it at that moment (pidfds on Linux, see groupMembers) still runs in
//     it; where processes cannot be tracked, while the group has members
//     and no process has the group's id (a reused id belongs to a new
//     process that made its own group).
//
// When the group is found empty, or no longer the run's, the pending
// SIGKILL is cancelled.
type killer struct {
	pgid  int
	grace time.Duration

	mu      sync.Mutex
	started bool        // SIGTERM was sent (or SIGKILL, grace 0)
	timer   *time.Timer // the pending SIGKILL
	reaped  bool        // the leader was reaped
	over    bool        // nothing more to signal: the group is empty, not ours, or got SIGKILL
	members []member    // the group's processes when the leader was reaped
	tracked bool        // members were looked for
	// strays are the run's processes outside its group (they called
	// setsid), found when the stop began: they get the same signals,
	// through pidfds, on a timer of their own (the group's may be
	// cancelled when the group empties).
	strays     []member
	strayTimer *time.Timer
}

// start sends SIGTERM to the group and arms the SIGKILL, once; it does
// nothing when the group is empty or no longer the run's.
func (k *killer) start() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.started || k.over {
		return
	}
	if !k.oursLocked() {
		k.endLocked()
		return
	}
	k.started = true
	frozen := !k.reaped
	if frozen {
		// The leader runs (or is a zombie not reaped): its pid is the
		// run's, and so are the descendants /proc shows under it. The
		// run is stopped while they are looked for (freeze).
		k.strays = freeze(k.pgid)
	}
	if k.grace <= 0 {
		k.killLocked() // SIGKILL ends stopped processes too
		k.killStraysLocked()
		return
	}
	_ = syscall.Kill(-k.pgid, syscall.SIGTERM)
	for _, m := range k.strays {
		m.signal(syscall.SIGTERM)
	}
	if frozen {
		thaw(k.pgid, k.strays) // they see the SIGTERM as they continue
	}
	k.timer = time.AfterFunc(k.grace, k.kill)
	if len(k.strays) > 0 {
		k.strayTimer = time.AfterFunc(k.grace, func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.killStraysLocked()
		})
	}
}

// killStraysLocked sends SIGKILL to the strays that still run and to the
// processes outside the group that descend from them meanwhile, and lets
// go of them.
func (k *killer) killStraysLocked() {
	var roots []int
	held := map[int]bool{}
	for _, m := range k.strays {
		if pid, ok := m.alive(); ok {
			roots = append(roots, pid)
			held[pid] = true
		}
	}
	var more []member
	if len(roots) > 0 {
		more = strays(procTable(), k.pgid, roots, held)
	}
	for _, m := range append(k.strays, more...) {
		m.signal(syscall.SIGKILL)
		m.close()
	}
	k.strays = nil
}

// kill sends SIGKILL to the group, if it is still the run's.
func (k *killer) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.killLocked()
}

func (k *killer) killLocked() {
	if k.over {
		return
	}
	if k.oursLocked() {
		_ = syscall.Kill(-k.pgid, syscall.SIGKILL)
	}
	k.endLocked()
}

// reap waits for the leader and reaps it (cmd.Wait), then looks at the
// group: empty, the SIGKILL is cancelled; else its processes are noted
// for oursLocked. Where the leader's exit can be awaited without reaping
// it (Linux), it is reaped under k.mu, so that no signal goes to the
// group between the reaping and the look.
func (k *killer) reap(cmd *exec.Cmd) {
	if waitExited(k.pgid) {
		k.mu.Lock()
		_ = cmd.Wait()
	} else {
		_ = cmd.Wait()
		k.mu.Lock()
	}
	defer k.mu.Unlock()
	k.reaped = true
	if k.over {
		return
	}
	if !groupAlive(k.pgid) {
		k.endLocked()
		return
	}
	k.members, k.tracked = groupMembers(k.pgid)
}

// finish is called when the run is over: the pending SIGKILL is
// cancelled unless a process of the run is left in the group (it then
// fires, and may be needed: the process may ignore SIGTERM).
func (k *killer) finish() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.over && !k.oursLocked() {
		k.endLocked()
	}
}

// oursLocked reports whether the group k.pgid is still the run's (see
// killer).
func (k *killer) oursLocked() bool {
	if !k.reaped {
		return true
	}
	if k.tracked {
		for _, m := range k.members {
			if m.inGroup(k.pgid) {
				return true
			}
		}
		return false
	}
	return !processExists(k.pgid) && groupAlive(k.pgid)
}

// endLocked stops the killer: no signal is sent afterwards.
func (k *killer) endLocked() {
	k.over = true
	if k.timer != nil {
		k.timer.Stop()
	}
	for _, m := range k.members {
		m.close()
	}
	k.members = nil
}

// groupAlive reports whether the process group pgid has members.
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

// processExists reports whether a process (or a zombie) has pid.
func processExists(pid int) bool { return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// pathOf returns the PATH of env, or the server's when env has none.
func pathOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return os.Getenv("PATH")
}

// resolve finds the program name: a name with a slash is taken as is
// (relative to dir), a bare name is looked up in the absolute entries of
// path. It returns the program's absolute path, or a reason for the task
// failure naming the program.
func resolve(name, dir, path string) (string, string) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Sprintf("command %q: %s", name, err)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Sprintf("command %q: %s", name, err)
		}
		return abs, ""
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue // "" and relative entries would depend on the working directory
		}
		p := filepath.Join(d, name)
		if executable(p) == nil {
			return p, ""
		}
	}
	return "", fmt.Sprintf("command not found: %q (not in PATH)", name)
}

// executable reports why p cannot be run, or nil.
func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("not found")
	case err != nil:
		return unwrapPath(err)
	case fi.IsDir():
		return errors.New("is a directory")
	case fi.Mode()&0o111 == 0:
		return errors.New("not executable")
	}
	return nil
}

// checkDir returns a reason when dir is not a usable working directory.
func checkDir(dir string) string {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("workdir %q: no such directory", dir)
	case err != nil:
		return fmt.Sprintf("workdir %q: %s", dir, unwrapPath(err))
	case !fi.IsDir():
		return fmt.Sprintf("workdir %q: not a directory", dir)
	}
	return ""
}

// startFailure describes an error of exec.Cmd.Start for the task.
func startFailure(name string, err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("command not found: %q", name)
	}
	return fmt.Sprintf("command %q could not be started: %s", name, unwrapPath(err))
}

// unwrapPath returns the cause of a *fs.PathError (without the path,
// which the caller names), else err.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
