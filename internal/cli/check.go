package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2abridge/a2abridge/internal/check"
)

// checkMustFailedError is returned (exit status ExitFailure) when a MUST check fails.
type checkMustFailedError struct{ n int }

func (e checkMustFailedError) Error() string {
	return fmt.Sprintf("%d MUST requirement(s) failed", e.n)
}

func newCheckCmd(_ io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var (
		report, text, longText string
		protocol, binding      string
		credHosts              []string
		categories, only       []string
		list, quiet            bool
		conn                   connFlags
		out                    outFlags
		timeout                time.Duration
	)
	cmd := &cobra.Command{
		Use:   "check URL",
		Short: "Check an A2A endpoint (1.0 and 0.3.0, JSON-RPC and HTTP+JSON) for conformance and write a compliance report",
		Long: `Check an A2A endpoint for conformance, as a black box over the network, on
every interface its Agent Card offers: A2A 1.0 over JSON-RPC, HTTP+JSON and
gRPC (the card's supportedInterfaces), A2A 0.3.0 over JSON-RPC and, when the
card declares it, HTTP+JSON (--protocol 0.3|1.0 and --binding jsonrpc|rest|grpc
restrict the run).

A2A 0.3.0 (categories card, rpc, message, parts, tasks, stream, state, push,
auth, schema): discovery and the Agent Card, the JSON-RPC envelope and error
codes, message/send, parts, tasks/get and tasks/cancel, streaming and
tasks/resubscribe, the task state machine, push notifications (with a webhook
receiver the checker runs on 127.0.0.1), the authenticated extended card, and
every response against the A2A 0.3.0 JSON Schema.

A2A 1.0 (categories card10, rpc10, rest10, grpc10; the operation checks run
over each binding, rpc10.*, rest10.* and grpc10.*, each a suite with its own
score; over gRPC the answers are judged as their A2A 1.0 JSON, with the gRPC
status codes of §5.4): the card's supportedInterfaces, SendMessage
({task} or {message}, blocking and returnImmediately), GetTask and historyLength,
ListTasks (paging, order, filters, pageSize, includeArtifacts), CancelTask,
SendStreamingMessage and SubscribeToTask streams, push config CRUD, the extended
card, errors with their google.rpc.ErrorInfo, version negotiation (A2A-Version),
the HTTP+JSON routes, and every payload against the A2A 1.0.1 JSON Schema.

A2A 0.3 HTTP+JSON (category rest03, when the card declares it): the /v1/…
paths: message:send, tasks/{id}, an unknown task, message:stream, and
application/json answers.

URL is the agent's base URL (its card is looked up under
/.well-known/agent-card.json), the card's URL, or a profile of the client config
file (credentials: --token, $A2ABRIDGE_CLIENT_TOKEN, --api-key, --profile, as
for the client commands). Each check has an id, the
section of the specification it enforces, a level (MUST, SHOULD, MAY) and a
result (pass, fail, skip, n/a) with evidence: the requests sent and the
responses that decided it.

Messages carry --text (default "hello"): choose something the agent answers
quickly. The cancel and resubscribe probes need a task that is still running:
--long-text is a message that keeps the agent busy for a few seconds (default:
--text); without one they are skipped ("could not obtain a running task").
Every task the checker starts and leaves running is canceled at the end.
--timeout bounds each request and each stream (default 10s).

The score is the weighted share of applicable checks that passed (MUST 3,
SHOULD 2, MAY 1; skipped and n/a checks do not count), for the whole run and
for each interface (which also counts its version's Agent Card checks).

Output: live progress on stderr, then a summary with the failures and their
evidence (or the whole report as JSON with --json, the default when stdout is
not a terminal). --report FILE also writes a Markdown compliance report.

Exit status: 0 when no MUST check failed, 1 when at least one did, 2 for
usage errors.`,
		Example: `  a2abridge check http://127.0.0.1:8080
  a2abridge check http://127.0.0.1:8080/a2a/slow --text 0 --long-text 5 --report report.md
  A2ABRIDGE_CLIENT_TOKEN=s3cret a2abridge check https://agent.example.com --category rpc,stream
  a2abridge check http://127.0.0.1:8080/a2a/echo --protocol 1.0 --binding rest
  a2abridge check --list`,
		Args: func(cmd *cobra.Command, args []string) error {
			if list {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return checkListChecks(stdout)
			}
			if timeout < 0 {
				return usageError{errors.New("--timeout must not be negative")}
			}
			tgt, err := resolveTarget(args[0], &conn)
			if err != nil {
				return err
			}
			if _, err := check.Select(checkSplitList(categories), checkSplitList(only)); err != nil {
				return usageError{err}
			}
			if err := check.ValidateSuite(protocol, binding); err != nil {
				return usageError{err}
			}
			var rf *os.File
			if report != "" {
				f, err := os.Create(report)
				if err != nil {
					return usageError{fmt.Errorf("--report: %w", err)}
				}
				defer f.Close()
				rf = f
			}
			o := check.Options{
				URL: tgt.url, Header: tgt.headers, Token: tgt.token, APIKey: tgt.apiKey, Timeout: timeout,
				Text: text, LongText: longText,
				Categories: checkSplitList(categories), Only: checkSplitList(only),
				Protocol: protocol, Binding: binding, CredentialHosts: credHosts,
			}
			if !quiet {
				o.Progress = checkProgressPrinter(stderr)
			}
			rep, err := check.Run(cmd.Context(), o)
			if err != nil {
				return usageError{err}
			}
			if out.json || (!out.human && !checkIsTerminal(stdout)) {
				err = rep.WriteJSON(stdout)
			} else {
				fmt.Fprintln(stdout)
				err = rep.WriteText(stdout)
			}
			if err != nil {
				return err
			}
			if rf != nil {
				if err := rep.WriteMarkdown(rf); err != nil {
					return fmt.Errorf("--report: %w", err)
				}
				if err := rf.Close(); err != nil {
					return fmt.Errorf("--report: %w", err)
				}
				if !quiet {
					fmt.Fprintf(stderr, "report written to %s\n", report)
				}
			}
			if err := cmd.Context().Err(); err != nil {
				return err
			}
			if n := rep.MustFailures(); n > 0 {
				return checkMustFailedError{n}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&report, "report", "", "also write a Markdown compliance report to this file")
	f.StringSliceVar(&categories, "category", nil, "run only these categories (repeatable or comma-separated): card, rpc, message, parts, tasks, stream, state, push, auth, schema (A2A 0.3 JSON-RPC); card10, rpc10, rest10, grpc10 (A2A 1.0); rest03 (A2A 0.3 HTTP+JSON)")
	f.StringVar(&protocol, "protocol", "", "check only the interfaces of this protocol version: 0.3 or 1.0 (default: every version the card offers)")
	f.StringVar(&binding, "binding", "", "check only the interfaces of this binding: jsonrpc, rest or grpc (default: every binding the card offers)")
	f.StringSliceVar(&only, "only", nil, "run only these checks (repeatable or comma-separated ids; a trailing * matches a prefix)")
	f.StringVar(&text, "text", check.DefaultText, "text of the probe messages (something the agent answers quickly)")
	f.StringVar(&longText, "long-text", "", "a message that keeps the agent busy for a few seconds, for the cancel and resubscribe probes (default: --text)")
	f.StringSliceVar(&credHosts, "credential-host", nil, "another host (host or host:port) that may receive --token, --api-key and --header when the card's interfaces point there (default: only the host of URL)")
	f.BoolVar(&list, "list", false, "list the checks (id, level, section, title) and exit")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	conn.register(f, true)
	f.DurationVar(&timeout, "timeout", check.DefaultTimeout, "limit of each request and each stream")
	out.register(f)
	return cmd
}

func checkSplitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func checkIsTerminal(w io.Writer) bool { return isTerminal(w) }

// checkProgressPrinter shows each check as it runs (on a terminal the running
// check's line is rewritten in place).
func checkProgressPrinter(w io.Writer) func(done, total int, c *check.Check, r *check.Result, took time.Duration) {
	tty := checkIsTerminal(w)
	return func(done, total int, c *check.Check, r *check.Result, took time.Duration) {
		width := len(fmt.Sprint(total))
		if r == nil {
			if tty {
				fmt.Fprintf(w, "\r\033[K[%*d/%d] %-6s %s …", width, done+1, total, "", c.ID)
			}
			return
		}
		if tty {
			fmt.Fprint(w, "\r\033[K")
		}
		status := strings.ToUpper(string(r.Status))
		msg := r.Message
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if len(msg) > 100 {
			msg = msg[:100] + "…"
		}
		d := "<1ms"
		if took >= time.Millisecond {
			d = took.Round(time.Millisecond).String()
		}
		fmt.Fprintf(w, "[%*d/%d] %-4s %-6s %-30s %7s  %s\n", width, done, total, status, c.Level, c.ID, d, printable(msg))
	}
}

func checkListChecks(w io.Writer) error {
	for _, cat := range check.Categories {
		fmt.Fprintf(w, "%s (%s)\n", cat.Title, cat.Name)
		for _, c := range check.All() {
			if c.Category == cat.Name {
				fmt.Fprintf(w, "  %-30s %-6s %-8s %s\n", c.ID, c.Level, c.Section, c.Title)
			}
		}
	}
	return nil
}
