// Package cli implements the a2abridge command line. Run is the whole
// program with replaceable arguments and output streams, so tests drive it
// in-process; Main wires it to the process (standard streams, signals).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/suggest"
)

// Exit codes of a2abridge.
const (
	ExitOK        = 0
	ExitFailure   = 1 // runtime failure (server could not start, store error); check: a MUST check failed
	ExitUsage     = 2 // bad flags or arguments, or a bad configuration file
	ExitA2AError  = 3 // the agent answered with an A2A/JSON-RPC error
	ExitTransport = 4 // network or HTTP-level failure, or --timeout expired
	// ExitTaskFailed: the task ended failed or rejected (send, stream,
	// get, resubscribe, cancel).
	ExitTaskFailed = 5
	// ExitTaskCanceled: the task ended canceled (send, stream, get,
	// resubscribe; for cancel a canceled task is success, 0).
	ExitTaskCanceled = 6
	// ExitInterrupted: Ctrl-C (SIGINT), 128+2. SIGTERM stops a client
	// command with 143 (128+15); serve exits 0 after a graceful shutdown.
	ExitInterrupted = 130
)

type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// hinted is an error with lines that tell the user what to do next,
// printed under the error message.
type hinted struct {
	err  error
	hint []string
}

func (e *hinted) Error() string { return e.err.Error() }
func (e *hinted) Unwrap() error { return e.err }

// Program is a2abridge with its environment: standard streams and,
// optionally, the signals it receives. The zero value of Signals and Exit
// is a program without signals (tests).
type Program struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Signals delivers SIGINT (os.Interrupt) and SIGTERM. The first SIGINT
	// stops what the command waits for (see README: Ctrl-C); a second one
	// while the first is being handled calls Exit(130). SIGTERM stops the
	// command (serve: graceful shutdown).
	Signals <-chan os.Signal
	// Exit ends the process at once (os.Exit in Main).
	Exit func(code int)
}

// Main runs a2abridge on the process's standard streams with SIGINT and
// SIGTERM wired, and returns its exit status.
func Main(args []string) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	p := Program{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Signals: sigs, Exit: os.Exit}
	return p.Run(context.Background(), args)
}

// Run executes the a2abridge command line with args (without the program
// name), reading stdin (chat, TEXT -) and writing to stdout and stderr, and
// returns the process exit code (see the Exit constants). ctx cancellation
// stops long-running commands gracefully, as SIGTERM does.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	p := Program{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	return p.Run(ctx, args)
}

// Run executes the command line args; see the package function Run.
func (p *Program) Run(ctx context.Context, args []string) int {
	stdin, stdout, stderr := p.Stdin, p.Stdout, p.Stderr
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	intr := &interrupts{exit: p.Exit}
	intr.push(func(s os.Signal) { cancel(signalError{s}) })
	if p.Signals != nil {
		done := make(chan struct{})
		defer close(done)
		go intr.loop(p.Signals, done)
	}

	root := &cobra.Command{
		Use:   "a2abridge",
		Short: "Serve, call and check Agent2Agent (A2A) agents",
		Long: `a2abridge serves Agent2Agent agents (A2A 1.0 and 0.3.0, each over JSON-RPC
and HTTP+JSON, streaming over SSE) on a durable store, calls any A2A agent from
the terminal (card, send, stream, get, cancel, resubscribe, push, chat), checks
an endpoint's conformance (check) and load-tests it (bench).

Exit status: 0 ok, 1 failure, 2 usage error, 3 the agent answered with an
A2A/JSON-RPC error, 4 transport or HTTP error (or --timeout expired), 5 the
task ended failed or rejected, 6 the task ended canceled, 130 interrupted
(Ctrl-C).`,
		Example: `  a2abridge serve
  a2abridge send localhost:8080 hello
  a2abridge stream http://127.0.0.1:8080/a2a/slow 5
  a2abridge check http://127.0.0.1:8080`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionText(),
	}
	root.SetVersionTemplate("{{.Version}}")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetIn(stdin)
	root.SetArgs(args)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newServeCmd(stdout, stderr))
	root.AddCommand(newBenchCmd(stdout, stderr))
	root.AddCommand(newAgentsCmd(stdout, stderr))
	root.AddCommand(newPairsCmd(stdout))
	env := &clientEnv{stdin: stdin, stdout: stdout, stderr: stderr, intr: intr}
	addClientCommands(root, env)
	root.AddCommand(newCheckCmd(stdin, stdout, stderr))
	root.AddCommand(newScenarioCmd(stdout))
	root.AddCommand(newVersionCmd(stdout))
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var se *stoppedError
	if errors.As(err, &se) && se.quiet {
		return exitCode(err)
	}
	if sig, ok := stoppedBy(ctx); ok && !errors.As(err, &se) {
		err = &stoppedError{sig: sig}
	}
	fmt.Fprintln(stderr, "a2abridge:", err)
	for _, l := range hintsFor(err, env.tgt != nil && env.tgt.credentials()) {
		fmt.Fprintln(stderr, "  "+l)
	}
	return exitCode(err)
}

func exitCode(err error) int {
	var ue usageError
	var ae *a2a.Error
	var he *client.HTTPError
	var pe *client.ProtocolError
	var se *stoppedError
	var te *taskEndError
	var apie *apiError
	// Typed errors first: a server's message must never decide the code.
	switch {
	case errors.As(err, &se):
		return exitCodeFor(se.sig)
	case errors.As(err, &te):
		return te.code()
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &apie):
		return apie.exitCode()
	case errors.As(err, &pe), errors.As(err, &he):
		return ExitTransport
	case errors.As(err, &ae):
		return ExitA2AError
	case errors.Is(err, context.DeadlineExceeded):
		return ExitTransport
	case errors.Is(err, context.Canceled):
		return ExitFailure
	case isTransport(err):
		return ExitTransport
	case isCobraUsage(err):
		return ExitUsage
	}
	return ExitFailure
}

// taskEndError reports a task that ended failed, rejected or canceled;
// the command printed the task itself.
type taskEndError struct {
	id    string
	state a2a.TaskState
}

func (e *taskEndError) Error() string {
	switch e.state {
	case a2a.TaskStateFailed:
		return fmt.Sprintf("task %s failed", e.id)
	case a2a.TaskStateRejected:
		return fmt.Sprintf("task %s was rejected", e.id)
	}
	return fmt.Sprintf("task %s was canceled", e.id)
}

func (e *taskEndError) code() int {
	if e.state == a2a.TaskStateCanceled {
		return ExitTaskCanceled
	}
	return ExitTaskFailed
}

// taskOutcome is the error a command returns for a task it printed: nil
// unless the task ended failed, rejected or (unless canceledOK) canceled.
// input-required and auth-required are not failures.
func taskOutcome(ev a2a.Event, canceledOK bool) error {
	t, ok := ev.(*a2a.Task)
	if !ok {
		return nil
	}
	return stateOutcome(t.ID, t.Status.State, canceledOK)
}

func stateOutcome(id string, s a2a.TaskState, canceledOK bool) error {
	switch {
	case s == a2a.TaskStateFailed, s == a2a.TaskStateRejected, s == a2a.TaskStateCanceled && !canceledOK:
		return &taskEndError{id: id, state: s}
	}
	return nil
}

// flagError turns a flag parsing error of command c into a usage error;
// for an unknown long flag it suggests c's flag (its own or inherited)
// nearest to the one given: at most 2 edits (1 for names of up to 4
// characters), '_' read as '-', ties to the first name in alphabetical
// order; else the only flag the name begins. Flags hidden from help are
// not suggested.
func flagError(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok || name == "" {
		return usageError{err}
	}
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	c.Flags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	slices.Sort(names)
	best := suggest.Closest(name, names)
	if best == "" && len(name) >= 3 {
		var prefixed []string
		for _, n := range names {
			if strings.HasPrefix(n, name) {
				prefixed = append(prefixed, n)
			}
		}
		if len(prefixed) == 1 {
			best = prefixed[0]
		}
	}
	if best == "" {
		return usageError{err}
	}
	return usageError{fmt.Errorf("%w (did you mean --%s?)", err, best)}
}

func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
