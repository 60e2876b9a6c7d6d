// Package cli implements the a2abridge command line. Run is the whole
// program with replaceable arguments and output streams, so tests drive it
// in-process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
)

// Exit codes of a2abridge.
const (
	ExitOK        = 0
	ExitFailure   = 1 // runtime failure (server could not start, store error)
	ExitUsage     = 2 // bad flags or arguments
	ExitA2AError  = 3 // the agent answered with an A2A/JSON-RPC error
	ExitTransport = 4 // network or HTTP-level failure
)

type usageError struct{ error }

// Run executes the a2abridge command line with args (without the program
// name), reading stdin (for chat) and writing to stdout and stderr, and
// returns the process exit code (ExitOK, ExitFailure, ExitUsage,
// ExitA2AError, ExitTransport). ctx cancellation (SIGINT/SIGTERM in main)
// stops long-running commands gracefully.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:           "a2abridge",
		Short:         "Serve, call and check Agent2Agent (A2A) agents",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newServeCmd(stdout, stderr))
	root.AddCommand(newBenchCmd(stdout, stderr))
	addClientCommands(root, stdin, stdout, stderr)
	root.AddCommand(newCheckCmd(stdin, stdout, stderr))
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(stderr, "a2abridge:", err)
	return exitCode(err)
}

func exitCode(err error) int {
	var ue usageError
	var ae *a2a.Error
	var he *client.HTTPError
	var pe *client.ProtocolError
	// Typed errors first: a server's message must never decide the code.
	switch {
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &pe), errors.As(err, &he):
		return ExitTransport
	case errors.As(err, &ae):
		return ExitA2AError
	case errors.Is(err, context.Canceled):
		return ExitFailure
	case isTransport(err):
		return ExitTransport
	case isCobraUsage(err):
		return ExitUsage
	}
	return ExitFailure
}

func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument"} {
		if len(s) >= len(p) && contains(s, p) {
			return true
		}
	}
	return false
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
