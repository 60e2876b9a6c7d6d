package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/a2abridge/a2abridge/internal/bench"
)

// newBenchCmd is `a2abridge bench URL`: a load generator for any A2A
// JSON-RPC endpoint. Its --header, --token, --profile, --json and --human
// work as for the client commands.
func newBenchCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		o       bench.Options
		mode    string
		quiet   bool
		conn    connFlags
		out     outFlags
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "bench URL",
		Short: "Load-test an A2A endpoint over 0.3 or 1.0, JSON-RPC or REST (throughput, latency percentiles, idle streams)",
		Long: `Load-test an A2A endpoint. URL is the endpoint that receives the JSON-RPC
POSTs (e.g. http://127.0.0.1:8080/a2a/echo), or with --binding rest the REST
interface URL the paths are appended to (the same URL for a2abridge serve); it
is used as is, without reading the agent card.

--protocol 0.3 (the default) speaks A2A 0.3.0 (message/send, …); --protocol 1.0
speaks A2A 1.0 with the A2A-Version: 1.0 header and ProtoJSON bodies
(SendMessage, SendStreamingMessage, SubscribeToTask), over JSON-RPC or, with
--binding rest, the HTTP+JSON binding (POST URL/message:send,
URL/message:stream, URL/tasks/{id}:subscribe).

Modes (0.3 names):
  send         message/send round trips (each with a unique messageId)
  stream       message/stream round trips, until the status update that ends the
               stream (0.3: final=true; 1.0: a terminal or interrupted state)
  resubscribe  tasks/resubscribe round trips (snapshot + final) on finished
               tasks that message/send created beforehand; with --protocol 1.0,
               which refuses a plain subscription to a finished task, each
               SubscribeToTask resumes one from its start (Last-Event-ID: 0)
               and its events are replayed
  idle         open --idle-streams streams to a long-running task and hold them
               for --duration, counting keep-alive comments and events; by default
               one task is started with a non-blocking message/send of --idle-text
               ("3600": an hour of the built-in slow agent, so point URL at
               …/a2a/slow), or give --idle-task

Requests are pre-built raw bodies sent over keep-alive connections; an answer
counts as a success when it is HTTP 200 with the request's id (JSON-RPC) and a
Task or Message as result (for streams: every event, through the last one).
Progress goes to stderr once a second; the result is a table, or JSON with
--json (the default when stdout is not a terminal).`,
		Example: `  a2abridge bench http://127.0.0.1:8080/a2a/echo --concurrency 32 --duration 10s
  a2abridge bench http://127.0.0.1:8080/a2a/echo --mode stream --requests 50000 --json
  a2abridge bench http://127.0.0.1:8080/a2a/echo --protocol 1.0 --binding rest
  a2abridge bench http://127.0.0.1:8080/a2a/echo --protocol 1.0 --binding grpc --mode stream
  a2abridge bench http://127.0.0.1:8080/a2a/slow --mode idle --idle-streams 10000 --duration 30s`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			tgt, err := resolveTarget(args[0], &conn)
			if err != nil {
				return err
			}
			o.URL = tgt.url
			o.Mode = bench.Mode(mode)
			switch o.Mode {
			case bench.ModeSend, bench.ModeStream, bench.ModeResubscribe, bench.ModeIdle:
			default:
				return usageError{fmt.Errorf("--mode %q: want send, stream, resubscribe or idle", mode)}
			}
			switch {
			case o.Protocol != bench.Protocol03 && o.Protocol != bench.Protocol10:
				return usageError{fmt.Errorf("--protocol %q: want 0.3 or 1.0", o.Protocol)}
			case o.Binding != bench.BindingJSONRPC && o.Binding != bench.BindingREST && o.Binding != bench.BindingGRPC:
				return usageError{fmt.Errorf("--binding %q: want jsonrpc, rest or grpc", o.Binding)}
			case o.Binding == bench.BindingREST && o.Protocol != bench.Protocol10:
				return usageError{errors.New("--binding rest is the HTTP+JSON binding of A2A 1.0: add --protocol 1.0")}
			case o.Binding == bench.BindingGRPC && o.Protocol != bench.Protocol10:
				return usageError{errors.New("--binding grpc is a binding of A2A 1.0: add --protocol 1.0")}
			case o.Binding == bench.BindingGRPC && o.Mode != bench.ModeSend && o.Mode != bench.ModeStream:
				return usageError{errors.New("--binding grpc measures the send and stream modes")}
			}
			if o.Binding == bench.BindingGRPC {
				// The gRPC target is URL's host:port; an a2abridge agent's
				// URL (/a2a/NAME) names the tenant.
				u, err := url.Parse(o.URL)
				if err != nil || u.Host == "" {
					return usageError{fmt.Errorf("--binding grpc: URL %q: want http://HOST:PORT[/a2a/AGENT]", o.URL)}
				}
				o.URL = u.Host
				if name, ok := strings.CutPrefix(strings.TrimRight(u.Path, "/"), "/a2a/"); ok && o.Tenant == "" && !strings.Contains(name, "/") {
					o.Tenant = name
				}
			}
			if fl.Changed("duration") && fl.Changed("requests") {
				return usageError{errors.New("give --duration or --requests, not both")}
			}
			if o.Mode == bench.ModeIdle && fl.Changed("requests") {
				return usageError{errors.New("--requests does not apply to idle mode: it holds streams for --duration")}
			}
			if o.Concurrency < 1 || o.Duration <= 0 || o.Requests < 0 || o.Warmup < 0 || o.IdleStreams < 1 || o.Timeout < 0 {
				return usageError{errors.New("--concurrency, --duration and --idle-streams must be positive; --requests, --warmup and --request-timeout not negative")}
			}
			if o.Payload == 0 {
				o.Payload = -1 // an empty text part
			}
			if fl.Changed("requests") {
				o.Duration = 0
			}
			if tgt.apiKey != "" {
				return usageError{errors.New("bench sends no API key (from the environment or a profile): pass it with --header NAME:VALUE")}
			}
			h := tgt.headers.Clone()
			if tgt.token != "" && h.Get("Authorization") == "" {
				h.Set("Authorization", "Bearer "+tgt.token)
			}
			o.Header = h
			if !quiet {
				o.Progress = stderr
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			res, err := bench.Run(ctx, o)
			if err != nil {
				return err
			}
			if out.json || (!out.human && pipedFile(stdout)) {
				b, err := json.Marshal(res, json.Deterministic(true))
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "%s\n", b)
			} else if err := bench.WriteText(stdout, res); err != nil {
				return err
			}
			if res.Requests == 0 && res.Errors > 0 {
				return fmt.Errorf("every request failed (first error: %s)", res.FirstError)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&mode, "mode", "send", "what to measure: send, stream, resubscribe or idle")
	f.StringVar(&o.Protocol, "protocol", bench.Protocol03, "A2A version to speak: 0.3 or 1.0 (with the A2A-Version: 1.0 header)")
	f.StringVar(&o.Binding, "binding", bench.BindingJSONRPC, "jsonrpc, rest (A2A 1.0 HTTP+JSON: URL is the interface URL, paths such as /message:send are appended) or grpc (A2A 1.0 gRPC, cleartext: URL's host:port is the target, and an a2abridge agent URL /a2a/NAME the tenant)")
	f.StringVar(&o.Tenant, "tenant", "", "--binding grpc: the requests' tenant (default: NAME of a URL /a2a/NAME)")
	f.IntVarP(&o.Concurrency, "concurrency", "c", bench.DefaultConcurrency, "concurrent clients (idle mode: streams opened at once)")
	f.DurationVarP(&o.Duration, "duration", "d", bench.DefaultDuration, "how long to measure (idle mode: how long to hold the streams)")
	f.Int64VarP(&o.Requests, "requests", "n", 0, "measure this many requests instead of a duration")
	f.DurationVar(&o.Warmup, "warmup", time.Second, "load before measuring, not counted")
	f.IntVar(&o.Payload, "payload", bench.DefaultPayload, "length in bytes of the message's text part")
	f.DurationVar(&o.Timeout, "request-timeout", bench.DefaultTimeout, "limit of each request (streams included)")
	f.IntVar(&o.Tasks, "tasks", 0, "resubscribe mode: tasks to cycle through (default 4 × concurrency)")
	f.IntVar(&o.IdleStreams, "idle-streams", bench.DefaultIdleStreams, "idle mode: streams to open and hold")
	f.StringVar(&o.IdleVia, "idle-via", "resubscribe", "idle mode: resubscribe (all streams follow one task) or stream (one message/stream, so one task, each)")
	f.StringVar(&o.IdleTask, "idle-task", "", "idle mode: follow this existing task instead of starting one")
	f.StringVar(&o.IdleText, "idle-text", bench.DefaultIdleText, "idle mode: text of the message that starts a task")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress lines on stderr")
	conn.register(f, false)
	f.DurationVar(&timeout, "timeout", 0, "overall limit of the run, warm-up included (0: none)")
	out.register(f)
	return cmd
}

// pipedFile reports whether w is a file or pipe that is not a terminal
// (false for anything but an *os.File, such as a test's buffer).
func pipedFile(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && !isTerminal(f)
}
