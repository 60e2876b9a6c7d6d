package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	_ "github.com/a2abridge/a2abridge/client/grpc" // --binding grpc
	v03 "github.com/a2abridge/a2abridge/internal/wire/v03"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// outFlags choose the output format.
type outFlags struct {
	json  bool
	human bool
}

func (o *outFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&o.json, "json", false, "print raw A2A JSON, one value per line (default when stdout is not a terminal)")
	fs.BoolVar(&o.human, "human", false, "print human-readable output even when stdout is not a terminal")
}

// clientEnv is what the client commands share: their flags (one set,
// registered on each command that uses it), the streams, the signal
// router, and the target of the running command.
type clientEnv struct {
	conn    connFlags
	out     outFlags
	iface   ifaceFlags
	timeout time.Duration
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	intr    *interrupts
	tgt     *target
	// spoken is the protocol version of the interface called (a2a.Version03
	// or a2a.Version10): --json prints that version's JSON.
	spoken string
	// extensions are the URIs send and stream activate (--extension).
	extensions []string
}

// ifaceFlags force the interface the client commands call.
type ifaceFlags struct {
	protocol string // "", "0.3" or "1.0"
	binding  string // "", "jsonrpc", "rest" or "grpc"
}

func (f *ifaceFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.protocol, "protocol", "", "A2A protocol version to speak: 0.3 or 1.0 (default: 1.0 when the card offers it, else 0.3)")
	fs.StringVar(&f.binding, "binding", "", "protocol binding: jsonrpc, rest (HTTP+JSON: /message:send, … in A2A 1.0, /v1/message:send, … in A2A 0.3) or grpc (A2A 1.0: the card's GRPC interface, cleartext when the card came over http://) (default: the card's preference among jsonrpc and rest)")
}

// options checks the flags and returns them as client options.
func (f *ifaceFlags) options() (protocol, binding string, err error) {
	switch f.protocol {
	case "", a2a.Version03, a2a.Version10:
	default:
		return "", "", usageError{fmt.Errorf("--protocol %q: want 0.3 or 1.0", f.protocol)}
	}
	switch strings.ToLower(f.binding) {
	case "":
	case "jsonrpc", "json-rpc":
		binding = a2a.TransportJSONRPC
	case "rest", "http+json":
		binding = a2a.TransportHTTPJSON
	case "grpc":
		binding = a2a.TransportGRPC
		if f.protocol == a2a.Version03 {
			return "", "", usageError{fmt.Errorf("--binding grpc with --protocol 0.3: gRPC is spoken in A2A 1.0 only")}
		}
	default:
		return "", "", usageError{fmt.Errorf("--binding %q: want jsonrpc, rest or grpc", f.binding)}
	}
	return f.protocol, binding, nil
}

// hintFlags are the interface flags given, for commands that hints repeat.
func (f *ifaceFlags) hintFlags() []string {
	var out []string
	if f.protocol != "" {
		out = append(out, "--protocol", f.protocol)
	}
	if f.binding != "" {
		out = append(out, "--binding", strings.ToLower(f.binding))
	}
	return out
}

func isTransport(err error) bool {
	var ne net.Error
	var ue *url.Error
	return errors.As(err, &ne) || errors.As(err, &ue) || errors.Is(err, client.ErrStreamEnded) || errors.Is(err, io.ErrUnexpectedEOF)
}

// clientFlags registers the client commands' flags on cmd.
func (e *clientEnv) clientFlags(cmd *cobra.Command) *cobra.Command {
	fs := cmd.Flags()
	e.conn.register(fs, true)
	e.iface.register(fs)
	fs.DurationVar(&e.timeout, "timeout", 0, "give up after this long (e.g. 30s; 0: wait as long as it takes)")
	e.out.register(fs)
	return cmd
}

// jsonOut reports whether output is JSON: --json, or stdout is a file or
// pipe (not a terminal) and --human is not set.
func (e *clientEnv) jsonOut() bool {
	if e.out.json {
		return true
	}
	if e.out.human {
		return false
	}
	return pipedFile(e.stdout)
}

// color reports whether human output is coloured: stdout is a capable
// terminal, NO_COLOR is not set, TERM is not "dumb".
func (e *clientEnv) color() bool { return !e.jsonOut() && fancyTerminal(e.stdout) }

// paint shows text in the colour of state s when output is coloured.
func (e *clientEnv) paint(s a2a.TaskState, text string) string {
	if !e.color() {
		return text
	}
	return stateColor(s) + text + sgrReset
}

func (e *clientEnv) ctx(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	if e.timeout < 0 {
		e.timeout = 0
	}
	if e.timeout > 0 {
		return context.WithTimeout(cmd.Context(), e.timeout)
	}
	return context.WithCancel(cmd.Context())
}

// target resolves the URL argument (a URL or a profile name) with the
// connection flags and remembers it for hints.
func (e *clientEnv) target(arg string) (*target, client.Options, error) {
	protocol, binding, err := e.iface.options()
	if err != nil {
		return nil, client.Options{}, err
	}
	t, err := resolveTarget(arg, &e.conn)
	if err != nil {
		return nil, client.Options{}, err
	}
	t.flags = append(t.flags, e.iface.hintFlags()...)
	e.tgt = t
	o := client.Options{Token: t.token, APIKey: t.apiKey, Protocol: protocol, Binding: binding, Extensions: e.extensions}
	if len(t.headers) > 0 {
		h := t.headers
		o.Headers = func(context.Context, string) (http.Header, error) { return h, nil }
	}
	return t, o, nil
}

func (e *clientEnv) dial(ctx context.Context, arg string) (*client.Client, error) {
	_, o, err := e.target(arg)
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(ctx, e.tgt.url, o)
	if err != nil {
		return nil, err
	}
	e.spoken = c.Interface().ProtocolVersion
	return c, nil
}

const urlHelp = `
URL is the agent's base URL (its card is looked up under
/.well-known/agent-card.json), its card URL, or the name of a profile of the
client config file. Without a scheme, loopback hosts (localhost, 127.0.0.1,
[::1]) default to http://. The client speaks A2A 1.0 when the card offers it
(JSON-RPC or HTTP+JSON, in the card's order), else A2A 0.3 (JSON-RPC or
HTTP+JSON, the card's preferredTransport first); --protocol 0.3|1.0 and
--binding jsonrpc|rest|grpc force the choice. --json prints the JSON of the
version spoken: over 1.0 as it is on the wire; over 0.3 the JSON-RPC shapes
of A2A 0.3.0 (with "kind") whatever the binding (0.3 HTTP+JSON carries the
same objects as the JSON of the 0.3 proto).`

func addClientCommands(root *cobra.Command, e *clientEnv) {
	var verify bool
	var jwks string
	var jkuHosts []string
	card := e.clientFlags(&cobra.Command{
		Use:   "card URL",
		Short: "Fetch and validate an agent's card (base URL or card URL)",
		Long: `Fetch an agent's Agent Card (an A2A 0.3, 1.0 or union card), validate it and
print it: name, version, its interfaces (URL, binding, protocol version), the
interface the client commands would call (with --protocol and --binding as
given), capabilities, input and output modes, security schemes and skills.
With --json, the card in the JSON of the version the client would speak.

With --verify, the card's signatures are checked first (A2A 1.0 §8.4.3): one
must verify, with a key from --jwks (a JWK Set URL or file) or, without
--jwks, from the signature's jku on the card's own origin (or a --jku-host).
The key that verified and what it proves are printed (to stderr with --json):
a key from the card's own host proves only that the card is as that host
signed it; a --jwks key is one you trust. The card printed is then what the
signature covers only: its A2A 1.0 members (no 0.3 url, preferredTransport
or protocolVersion; scopes served as bare arrays are not covered and shown
empty). A card that does not verify is an error saying why.
` + urlHelp,
		Example: `  a2abridge card localhost:8080
  a2abridge card https://agents.example.com/a2a/echo/.well-known/agent-card.json --json
  a2abridge card https://agents.example.com --verify --jwks https://agents.example.com/.well-known/jwks.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			t, o, err := e.target(args[0])
			if err != nil {
				return err
			}
			if !verify && (jwks != "" || len(jkuHosts) > 0) {
				return usageError{errors.New("--jwks and --jku-host need --verify")}
			}
			if verify {
				w := e.stdout
				if e.jsonOut() {
					w = e.stderr
				}
				if o.CardVerifier, err = cardVerifier(jwks, jkuHosts, w); err != nil {
					return err
				}
			}
			card, err := client.Resolve(ctx, t.url, o)
			if err != nil {
				return e.stopped(ctx, nil, err)
			}
			in, err := client.SelectInterface(&card, o.Protocol, o.Binding)
			e.spoken = in.ProtocolVersion
			if perr := e.printCard(&card, &in, err); perr != nil {
				return perr
			}
			return err
		},
	})
	card.Flags().BoolVar(&verify, "verify", false, "verify the card's signatures (A2A 1.0 §8.4); fail when none verifies")
	card.Flags().StringVar(&jwks, "jwks", "", "with --verify: the trusted keys, a JWK Set URL or file (default: the signature's jku on the card's host)")
	card.Flags().StringArrayVar(&jkuHosts, "jku-host", nil, "with --verify: a host (HOST or HOST:PORT) whose jku URLs may be fetched (repeatable)")
	root.AddCommand(card)
	root.AddCommand(e.clientFlags(&cobra.Command{
		Use:   "extended-card URL",
		Short: "Call GetExtendedAgentCard (0.3: agent/getAuthenticatedExtendedCard)",
		Long: `Call GetExtendedAgentCard (A2A 1.0 §3.1.11; agent/getAuthenticatedExtendedCard
in A2A 0.3.0 §7.10) and print the extended Agent Card the agent shows to
authenticated callers. It needs credentials (--token, $` + envClientToken + `, a
profile, or --api-key); an agent without an extended card answers -32007.
` + urlHelp,
		Example: `  a2abridge extended-card http://127.0.0.1:8080 --token "$TOKEN"
  A2ABRIDGE_CLIENT_TOKEN=s3cret a2abridge extended-card localhost:8080`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in client.Interface
			card, err := callAgent(e, cmd, args[0], func(ctx context.Context, c *client.Client) (*a2a.AgentCard, error) {
				in = c.Interface()
				return c.GetExtendedAgentCard(ctx)
			})
			if err != nil {
				return err
			}
			return e.printCard(card, &in, nil)
		},
	}))
	root.AddCommand(e.sendCmd(false), e.sendCmd(true))

	var history int
	get := &cobra.Command{
		Use:   "get URL TASK",
		Short: "Call GetTask (0.3: tasks/get)",
		Long: `Call GetTask (A2A 1.0 §3.1.3; tasks/get in 0.3) and print the task: its state, context,
status message, artifacts and, with --history N, its N most recent messages.
The exit status reflects the task: 5 when it failed or was rejected, 6 when it
was canceled, 0 otherwise (input-required and auth-required included).
` + urlHelp,
		Example: `  a2abridge get localhost:8080 0f6c3d7e-4b1a-4c47-9a3e-2f0e8f9b1c2d
  a2abridge get http://127.0.0.1:8080/a2a/slow "$TASK" --history 2 --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := a2a.GetTaskRequest{ID: args[1]}
			if cmd.Flags().Changed("history") {
				if history < 0 {
					return usageError{errors.New("--history must not be negative")}
				}
				p.HistoryLength = &history
			}
			t, err := callAgent(e, cmd, args[0], func(ctx context.Context, c *client.Client) (*a2a.Task, error) {
				return c.GetTask(ctx, p)
			})
			if err != nil {
				return err
			}
			if err := e.printResult(t, 0, false); err != nil {
				return err
			}
			return taskOutcome(t, false)
		},
	}
	get.Flags().IntVar(&history, "history", 0, "historyLength: at most N most recent messages")
	root.AddCommand(e.clientFlags(get))

	root.AddCommand(e.listCmd())

	root.AddCommand(e.clientFlags(&cobra.Command{
		Use:   "cancel URL TASK",
		Short: "Call CancelTask (0.3: tasks/cancel)",
		Long: `Call CancelTask (A2A 1.0 §3.1.5; tasks/cancel in 0.3) and print the task the
agent returns.
A task that is now canceled is success (exit status 0); one that ended failed
or rejected instead exits 5. A task that had already ended answers -32002
(exit status 3).
` + urlHelp,
		Example: `  a2abridge cancel http://127.0.0.1:8080/a2a/slow "$TASK"`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := callAgent(e, cmd, args[0], func(ctx context.Context, c *client.Client) (*a2a.Task, error) {
				return c.CancelTask(ctx, a2a.CancelTaskRequest{ID: args[1]})
			})
			if err != nil {
				return err
			}
			if err := e.printResult(t, 0, false); err != nil {
				return err
			}
			return taskOutcome(t, true)
		},
	}))

	var from string
	resub := &cobra.Command{
		Use:   "resubscribe URL TASK",
		Short: "Call SubscribeToTask (0.3: tasks/resubscribe) and print events until the task is final",
		Long: `Call SubscribeToTask (A2A 1.0 §3.1.6; tasks/resubscribe in 0.3) and print the
task's events as they
arrive, until it is final (terminal, input-required or auth-required). --from N
resumes after event N (sent as Last-Event-ID; a2abridge servers replay every
event after it, so no update is missed); without it the stream starts with the
task as it is now. stream --json prints each event's id as "eventId". Ctrl-C
stops following (the task goes on) and prints how to continue. The exit status
reflects the task's last state, as for get. A task that has already ended,
which A2A 1.0 does not subscribe to (without --from), is shown as GetTask
returns it.
` + urlHelp,
		Example: `  a2abridge resubscribe http://127.0.0.1:8080/a2a/slow "$TASK"
  a2abridge resubscribe http://127.0.0.1:8080/a2a/slow "$TASK" --from 3 --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.ContainsAny(from, "\r\n") {
				return usageError{fmt.Errorf("--from %q: not a valid event id", from)}
			}
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return e.stopped(ctx, nil, err)
			}
			prog := &progress{taskID: args[1], lastID: from}
			return e.runStream(ctx, follow(ctx, c, args[1], from), time.Now(), prog)
		},
	}
	resub.Flags().StringVar(&from, "from", "", "resume after this event id (sent as Last-Event-ID; a2abridge ids are event numbers)")
	root.AddCommand(e.clientFlags(resub))
	root.AddCommand(e.pushCmd())
	root.AddCommand(e.clientFlags(e.chatCmd()))
}

type sendFlags struct {
	task, contextID, dataJSON, fileURI, mimeType, pushURL, pushToken string
	metadataJSON                                                     string
	files                                                            []string
	history                                                          int
	noBlocking                                                       bool
}

func (e *clientEnv) sendCmd(stream bool) *cobra.Command {
	f := &sendFlags{}
	cmd := &cobra.Command{
		Use:   "send URL [TEXT]",
		Short: "Call SendMessage (0.3: message/send)",
		Long: `Call SendMessage (A2A 1.0 §3.1.1; message/send in 0.3) with a message made of
TEXT and the parts
given by --file, --file-uri and --data, and print the result: the task (or the
agent's direct message). The call waits until the task is final unless
--no-blocking; on a terminal a spinner on stderr shows the wait. TEXT "-" reads
the text from stdin, as does an omitted TEXT when stdin is not a terminal and
no other part is given (echo hi | a2abridge send URL); one trailing newline is
dropped. Ctrl-C stops waiting (the task goes on) and prints how to follow or
cancel it. The exit status reflects the task: 5 failed or rejected, 6
canceled.
` + urlHelp,
		Example: `  a2abridge send localhost:8080 hello
  a2abridge send http://127.0.0.1:8080 hello --data '{"n":1}' --file notes.txt
  git diff | a2abridge send https://agents.example.com/a2a/review -
  a2abridge send http://127.0.0.1:8080/a2a/slow 60 --no-blocking --json
  a2abridge send URL bye --task TASK --metadata '{"a2abridge/pair":{"end":true}}'`,
		Args: cobra.RangeArgs(1, 2),
	}
	if stream {
		cmd.Use, cmd.Short = "stream URL [TEXT]", "Call SendStreamingMessage (0.3: message/stream) and print events as they arrive"
		cmd.Long = `Call SendStreamingMessage (A2A 1.0 §3.1.2; message/stream in 0.3) with the
same message as send and print
the events as they arrive, each with the time since the call and its SSE event
id (#N). Text that an artifact streams in chunks is printed as it comes, on one
line. With --json each line is {"eventId":"N","result":EVENT}, EVENT being the
A2A event as received, so resubscribe --from N can continue from any line. If
the connection breaks, the stream is resumed where it stopped. Ctrl-C stops
following (the task goes on) and prints how to resubscribe or cancel. TEXT is
read from stdin as for send. The exit status reflects the task's last state.
` + urlHelp
		cmd.Example = `  a2abridge stream http://127.0.0.1:8080/a2a/slow 5
  a2abridge stream localhost:8080 "a long text" --json | jq -c .result.kind
  echo hello | a2abridge stream localhost:8080`
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx, cancel := e.ctx(cmd)
		defer cancel()
		text, err := e.messageText(ctx, args, f)
		if err != nil {
			return e.stopped(ctx, nil, err)
		}
		p, err := f.params(text, cmd.Flags().Changed("history"))
		if err != nil {
			return err
		}
		c, err := e.dial(ctx, args[0])
		if err != nil {
			return e.stopped(ctx, nil, err)
		}
		start := time.Now()
		if stream {
			return e.runStream(ctx, c.SendStreamingMessage(ctx, p), start, &progress{})
		}
		sp := startSpinner(e.stderr, "waiting for the agent")
		res, err := c.SendMessage(ctx, p)
		sp.stop()
		if err != nil {
			if ctx.Err() != nil {
				return e.stopped(ctx, e.findSent(ctx, c, p), err)
			}
			return err
		}
		if err := e.printResult(res, time.Since(start), true); err != nil {
			return err
		}
		if t, ok := res.(*a2a.Task); ok {
			e.printAnswerHint(t.ID, t.Status.State)
		}
		return taskOutcome(res, false)
	}
	fl := cmd.Flags()
	fl.StringVar(&f.task, "task", "", "taskId: continue this task")
	fl.StringVar(&f.contextID, "context", "", "contextId")
	fl.StringArrayVar(&f.files, "file", nil, "attach a file by value (FilePart with bytes; repeatable)")
	fl.StringVar(&f.fileURI, "file-uri", "", "attach a file by reference (FilePart with uri)")
	fl.StringVar(&f.mimeType, "mime", "", "mimeType of --file/--file-uri (default: from the file name)")
	fl.StringVar(&f.dataJSON, "data", "", "attach a JSON object (DataPart)")
	fl.StringVar(&f.metadataJSON, "metadata", "", `the message's metadata, a JSON object (e.g. '{"a2abridge/pair":{"end":true}}' ends a pair)`)
	fl.IntVar(&f.history, "history", 0, "historyLength of the returned task")
	fl.StringArrayVar(&e.extensions, "extension", nil, "activate the extension with this URI (the A2A-Extensions header; repeatable): an agent refuses messages without the ones its card requires")
	fl.BoolVar(&f.noBlocking, "no-blocking", false, "return after the first state instead of waiting (send)")
	fl.StringVar(&f.pushURL, "push-url", "", "push notification webhook for this task")
	fl.StringVar(&f.pushToken, "push-token", "", "token sent with push notifications")
	return e.clientFlags(cmd)
}

// maxStdinText bounds a TEXT read from stdin.
const maxStdinText = 16 << 20

// messageText returns the message's TEXT: the argument, or stdin when the
// argument is "-", or when it is omitted, no other part is given and stdin
// is not a terminal. One trailing newline is dropped.
func (e *clientEnv) messageText(ctx context.Context, args []string, f *sendFlags) (string, error) {
	if len(args) == 2 && args[1] != "-" {
		return args[1], nil
	}
	if len(args) == 1 && (len(f.files) > 0 || f.fileURI != "" || f.dataJSON != "" || isTerminal(e.stdin)) {
		return "", nil
	}
	type result struct {
		b   []byte
		err error
	}
	rc := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(e.stdin, maxStdinText+1))
		rc <- result{b, err}
	}()
	var r result
	select {
	case r = <-rc:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if r.err != nil {
		return "", fmt.Errorf("reading TEXT from stdin: %w", r.err)
	}
	if len(r.b) > maxStdinText {
		return "", usageError{fmt.Errorf("TEXT from stdin is over %d MiB: attach large content with --file", maxStdinText>>20)}
	}
	if !utf8.Valid(r.b) {
		return "", usageError{errors.New("stdin is not UTF-8 text: attach binary content with --file PATH")}
	}
	s := string(r.b)
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\r")
	return s, nil
}

func (f *sendFlags) params(text string, historySet bool) (a2a.SendMessageRequest, error) {
	var parts []a2a.Part
	if text != "" {
		parts = append(parts, a2a.NewTextPart(text))
	}
	for _, path := range f.files {
		b, err := os.ReadFile(path)
		if err != nil {
			return a2a.SendMessageRequest{}, usageError{fmt.Errorf("--file: %w", err)}
		}
		mt := f.mimeType
		if mt == "" {
			mt = mime.TypeByExtension(filepath.Ext(path))
		}
		if mt == "" {
			mt = "application/octet-stream"
		}
		parts = append(parts, a2a.Part{Content: a2a.Raw(b), MediaType: mt, Filename: filepath.Base(path)})
	}
	if f.fileURI != "" {
		u, err := url.Parse(f.fileURI)
		if err != nil || u.Scheme == "" {
			return a2a.SendMessageRequest{}, usageError{fmt.Errorf("--file-uri %q: want an absolute URI", f.fileURI)}
		}
		parts = append(parts, a2a.Part{Content: a2a.URL(f.fileURI), MediaType: f.mimeType, Filename: filepath.Base(u.Path)})
	}
	if f.dataJSON != "" {
		var d map[string]any
		if err := v03.UnmarshalValue([]byte(f.dataJSON), &d); err != nil || d == nil {
			return a2a.SendMessageRequest{}, usageError{fmt.Errorf("--data: want a JSON object, got %.40q", f.dataJSON)}
		}
		parts = append(parts, a2a.NewDataPart(d))
	}
	if len(parts) == 0 {
		return a2a.SendMessageRequest{}, usageError{errors.New("nothing to send: give TEXT (or - for stdin), --file, --file-uri or --data")}
	}
	msg := a2a.NewMessage(a2a.RoleUser, parts...)
	msg.TaskID, msg.ContextID = f.task, f.contextID
	if f.metadataJSON != "" {
		var md map[string]any
		if err := v03.UnmarshalValue([]byte(f.metadataJSON), &md); err != nil || md == nil {
			return a2a.SendMessageRequest{}, usageError{fmt.Errorf("--metadata: want a JSON object, got %.40q", f.metadataJSON)}
		}
		msg.Metadata = md
	}
	p := a2a.SendMessageRequest{Message: msg}
	cfg := &a2a.SendMessageConfiguration{}
	set := false
	if f.noBlocking {
		b := false
		cfg.Blocking, set = &b, true
	}
	if historySet {
		if f.history < 0 {
			return p, usageError{errors.New("--history must not be negative")}
		}
		h := f.history
		cfg.HistoryLength, set = &h, true
	}
	if f.pushURL != "" {
		cfg.PushNotificationConfig, set = &a2a.PushNotificationConfig{URL: f.pushURL, Token: f.pushToken}, true
	}
	if set {
		p.Configuration = cfg
	}
	return p, nil
}

// progress follows a task through what a command has seen of it, to say
// how to continue when the command stops early.
type progress struct {
	taskID string
	state  a2a.TaskState
	lastID string // the last SSE event id
	// message: the agent answered with a Message, there is no task to
	// continue.
	message bool
}

func (p *progress) see(ev a2a.Event, sseID string) {
	if sseID != "" {
		p.lastID = sseID
	}
	switch v := ev.(type) {
	case *a2a.Task:
		p.taskID, p.state = v.ID, v.Status.State
	case *a2a.TaskStatusUpdateEvent:
		p.taskID, p.state = v.TaskID, v.Status.State
	case *a2a.TaskArtifactUpdateEvent:
		p.taskID = v.TaskID
	case *a2a.Message:
		if v.TaskID == "" {
			p.message = true
		}
	}
}

// stopped turns the error of a command that ctx stopped (Ctrl-C, SIGTERM,
// --timeout) into one that says so, with how to continue with the task
// when one is known; other errors are returned as they are.
func (e *clientEnv) stopped(ctx context.Context, prog *progress, err error) error {
	if ctx.Err() == nil {
		return err
	}
	var hint []string
	if prog != nil {
		hint = e.continueHint(prog)
	}
	if sig, ok := stoppedBy(ctx); ok {
		return &stoppedError{sig: sig, hint: hint}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &hinted{err: timeoutError{e.timeout}, hint: hint}
	}
	return err
}

// timeoutError is --timeout expiring; errors.Is(err,
// context.DeadlineExceeded) holds.
type timeoutError struct{ d time.Duration }

func (e timeoutError) Error() string        { return fmt.Sprintf("--timeout %s expired", e.d) }
func (e timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// continueHint says what became of the task and gives the commands that
// follow it and cancel it. Credentials are never repeated.
func (e *clientEnv) continueHint(p *progress) []string {
	if p.taskID == "" {
		if p.message {
			return nil
		}
		return []string{"the agent had not named a task yet: use a2abridge stream to see the task id as soon as the task is created"}
	}
	name := ""
	if e.tgt != nil {
		name = e.tgt.name
	}
	cmdline := e.cmdline
	var out []string
	state := "running"
	if p.state != a2a.TaskStateUnspecified {
		state = p.state.String()
	}
	if p.state.Terminal() {
		out = append(out, fmt.Sprintf("task %s is %s", p.taskID, state),
			"see it:    "+cmdline("get", name, p.taskID))
	} else {
		follow := []string{"resubscribe", name, p.taskID}
		if p.lastID != "" {
			follow = append(follow, "--from", p.lastID)
		}
		out = append(out, fmt.Sprintf("task %s is %s", p.taskID, state),
			"follow it: "+cmdline(follow...),
			"cancel it: "+cmdline("cancel", name, p.taskID))
	}
	if e.tgt != nil && e.tgt.secretFlags {
		out = append(out, "(add the --token, --api-key or --header options you gave)")
	}
	return out
}

// cmdline is the a2abridge command line of words with the target's
// options that hints repeat (--profile NAME), quoted for a POSIX shell.
// Credentials are never repeated.
func (e *clientEnv) cmdline(words ...string) string {
	var extra []string
	if e.tgt != nil {
		extra = e.tgt.flags
	}
	q := make([]string, 0, len(words)+len(extra)+1)
	q = append(q, "a2abridge")
	for _, w := range append(slices.Clip(words), extra...) {
		q = append(q, shellQuote(w))
	}
	return strings.Join(q, " ")
}

// printAnswerHint writes to stderr, after a command showed a task that
// waits for the caller (input-required, or auth-required), the command
// line that answers it: a2abridge send URL TEXT --task ID, as the hints of
// a stopped command give theirs (continueHint). Nothing for other states.
func (e *clientEnv) printAnswerHint(taskID string, state a2a.TaskState) {
	if taskID == "" || e.tgt == nil || (state != a2a.TaskStateInputRequired && state != a2a.TaskStateAuthRequired) {
		return
	}
	fmt.Fprintf(e.stderr, "task %s is %s\n", taskID, state)
	words := []string{"send", e.tgt.name, "TEXT", "--task", taskID}
	for _, x := range e.extensions {
		// The answer activates the same extensions (an agent that
		// requires one refuses a message without it).
		words = append(words, "--extension", x)
	}
	fmt.Fprintf(e.stderr, "answer it: %s\n", e.cmdline(words...))
	if e.tgt.secretFlags {
		fmt.Fprintln(e.stderr, "(add the --token, --api-key or --header options you gave)")
	}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-[]", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// findSent learns the task of a message/send that was stopped before the
// agent answered. Servers that declare a2a.ExtensionEventLog process a
// messageId once and answer a repeat with the task it created, so the
// message is sent again, non-blocking, under the same messageId; with
// other servers a repeat could start a second task, so nothing is sent.
// The lookup has its own 5 s limit; a second Ctrl-C ends the process.
func (e *clientEnv) findSent(ctx context.Context, c *client.Client, p a2a.SendMessageRequest) *progress {
	prog := &progress{}
	card := c.Card()
	if !slices.ContainsFunc(card.Capabilities.Extensions, func(x a2a.AgentExtension) bool { return x.URI == a2a.ExtensionEventLog }) {
		return prog
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	q := p
	cfg := a2a.SendMessageConfiguration{}
	if p.Configuration != nil {
		cfg = *p.Configuration
	}
	nb := false
	cfg.Blocking = &nb
	q.Configuration = &cfg
	if res, err := c.SendMessage(lctx, q); err == nil {
		prog.see(res, "")
	}
	return prog
}

// runStream prints a stream's events as they come and returns the task's
// outcome; prog is what is known of the task beforehand.
func (e *clientEnv) runStream(ctx context.Context, events func(func(client.StreamEvent, error) bool), start time.Time, prog *progress) error {
	sp := &streamPrinter{e: e, start: start, json: e.jsonOut()}
	for ev, err := range events {
		if err != nil {
			sp.closeLine()
			return e.stopped(ctx, prog, err)
		}
		prog.see(ev.Event, ev.ID)
		if err := sp.print(ev); err != nil {
			return err
		}
	}
	sp.closeLine()
	if ctx.Err() != nil {
		return e.stopped(ctx, prog, ctx.Err())
	}
	if prog.message {
		return nil
	}
	e.printAnswerHint(prog.taskID, prog.state)
	return stateOutcome(prog.taskID, prog.state, false)
}

func (e *clientEnv) pushCmd() *cobra.Command {
	push := &cobra.Command{
		Use:   "push",
		Short: "Manage a task's push notification configs (…TaskPushNotificationConfig…); receive notifications",
		Long: `Manage the push notification configs of a task (A2A 1.0 §3.1.7–3.1.10, 0.3.0
§7.5–7.8: set, get, list, delete) and receive notifications on a local webhook
that verifies them
(listen). The server must run with --push (or push.enabled), and a webhook on a
loopback or private address must be allowed there with --push-allow.`,
		Example: `  a2abridge push listen --addr 127.0.0.1:9000 --server http://127.0.0.1:8080
  a2abridge push set http://127.0.0.1:8080 "$TASK" http://127.0.0.1:9000/hook --push-token t0k
  a2abridge push list http://127.0.0.1:8080 "$TASK"`,
	}
	var token, id string
	set := &cobra.Command{
		Use:   "set URL TASK WEBHOOK_URL",
		Short: "CreateTaskPushNotificationConfig (0.3: tasks/pushNotificationConfig/set)",
		Long: `Call CreateTaskPushNotificationConfig (A2A 1.0 §3.1.7;
tasks/pushNotificationConfig/set in 0.3.0 §7.5): the agent will POST the task's
changes to WEBHOOK_URL. --push-token is sent back in each notification (0.3:
X-A2A-Notification-Token); --id names the config (default: chosen by the
server).
` + urlHelp,
		Example: `  a2abridge push set http://127.0.0.1:8080/a2a/slow "$TASK" http://127.0.0.1:9000/hook --push-token t0k`,
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := callAgent(e, cmd, args[0], func(ctx context.Context, c *client.Client) (*a2a.TaskPushNotificationConfig, error) {
				return c.CreateTaskPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: args[1],
					PushNotificationConfig: a2a.PushNotificationConfig{ID: id, URL: args[2], Token: token}})
			})
			if err != nil {
				return err
			}
			return e.printPush([]a2a.TaskPushNotificationConfig{*out})
		},
	}
	set.Flags().StringVar(&token, "push-token", "", "token the server sends with each notification")
	set.Flags().StringVar(&id, "id", "", "config id (default: chosen by the server)")
	get := &cobra.Command{
		Use:   "get URL TASK [CONFIG_ID]",
		Short: "GetTaskPushNotificationConfig (0.3: tasks/pushNotificationConfig/get)",
		Long: `Call GetTaskPushNotificationConfig (A2A 1.0 §3.1.8;
tasks/pushNotificationConfig/get in 0.3.0 §7.6) and print one push
notification config of the task: CONFIG_ID, or the task's first config.
` + urlHelp,
		Example: `  a2abridge push get http://127.0.0.1:8080 "$TASK" "$CONFIG"`,
		Args:    cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := callAgent(e, cmd, args[0], func(ctx context.Context, c *client.Client) (*a2a.TaskPushNotificationConfig, error) {
				p := a2a.GetTaskPushNotificationConfigRequest{TaskID: args[1]}
				if len(args) == 3 {
					p.ID = args[2]
				}
				return c.GetTaskPushNotificationConfig(ctx, p)
			})
			if err != nil {
				return err
			}
			return e.printPush([]a2a.TaskPushNotificationConfig{*out})
		},
	}
	list := &cobra.Command{
		Use:   "list URL TASK",
		Short: "ListTaskPushNotificationConfigs (0.3: tasks/pushNotificationConfig/list)",
		Long: `Call ListTaskPushNotificationConfigs (A2A 1.0 §3.1.9;
tasks/pushNotificationConfig/list in 0.3.0 §7.7) and print every push
notification config of the task, one per line (every page).
` + urlHelp,
		Example: `  a2abridge push list http://127.0.0.1:8080 "$TASK" --json`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := callAgent(e, cmd, args[0], func(ctx context.Context, c *client.Client) ([]a2a.TaskPushNotificationConfig, error) {
				return listAllPush(ctx, c, args[1])
			})
			if err != nil {
				return err
			}
			return e.printPush(out)
		},
	}
	del := &cobra.Command{
		Use:   "delete URL TASK CONFIG_ID",
		Short: "DeleteTaskPushNotificationConfig (0.3: tasks/pushNotificationConfig/delete)",
		Long: `Call DeleteTaskPushNotificationConfig (A2A 1.0 §3.1.10;
tasks/pushNotificationConfig/delete in 0.3.0 §7.8): the task's config
CONFIG_ID is removed and no further notifications go to its webhook. --json
prints null.
` + urlHelp,
		Example: `  a2abridge push delete http://127.0.0.1:8080 "$TASK" "$CONFIG"`,
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := callAgent(e, cmd, args[0], func(ctx context.Context, c *client.Client) (struct{}, error) {
				return struct{}{}, c.DeleteTaskPushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigRequest{TaskID: args[1], ID: args[2]})
			})
			if err != nil {
				return err
			}
			if e.jsonOut() {
				_, err = fmt.Fprintln(e.stdout, "null")
			} else {
				_, err = fmt.Fprintf(e.stdout, "deleted push config %s of task %s\n", args[2], args[1])
			}
			return err
		},
	}
	listen := e.listenCmd()
	e.out.register(listen.Flags())
	push.AddCommand(e.clientFlags(set), e.clientFlags(get), e.clientFlags(list), e.clientFlags(del), listen)
	return push
}

// maxPushPages bounds the pages push list follows, so that a server whose
// tokens never end cannot keep it going.
const maxPushPages = 100

// listAllPush returns every push notification config of task, following
// the pages of A2A 1.0.
func listAllPush(ctx context.Context, c *client.Client, task string) ([]a2a.TaskPushNotificationConfig, error) {
	var all []a2a.TaskPushNotificationConfig
	p := a2a.ListTaskPushNotificationConfigsRequest{TaskID: task}
	for range maxPushPages {
		out, next, err := c.ListTaskPushNotificationConfigs(ctx, p)
		if err != nil {
			return nil, err
		}
		all = append(all, out...)
		if next == "" || next == p.PageToken {
			return all, nil
		}
		p.PageToken = next
	}
	return nil, fmt.Errorf("push list: still more pages after %d", maxPushPages)
}

// listFlags are the flags of the list command.
type listFlags struct {
	contextID, state, pageToken string
	pageSize, history           int
	includeArtifacts            bool
}

// params checks the flags and returns the ListTasks params; changed says
// which flags were given.
func (f *listFlags) params(changed func(string) bool) (a2a.ListTasksRequest, error) {
	p := a2a.ListTasksRequest{ContextID: f.contextID, PageToken: f.pageToken, IncludeArtifacts: f.includeArtifacts}
	if f.state != "" {
		st, ok := parseState(f.state)
		if !ok {
			return p, usageError{fmt.Errorf("--state %q: want a task state (submitted, working, input-required, auth-required, completed, canceled, failed, rejected; or TASK_STATE_…)", f.state)}
		}
		p.Status = st
	}
	if changed("page-size") {
		if f.pageSize < 1 || f.pageSize > a2a.ListTasksMaxPageSize {
			return p, usageError{fmt.Errorf("--page-size %d: want 1 to %d", f.pageSize, a2a.ListTasksMaxPageSize)}
		}
		n := f.pageSize
		p.PageSize = &n
	}
	if changed("history-length") {
		if f.history < 0 {
			return p, usageError{errors.New("--history-length must not be negative")}
		}
		n := f.history
		p.HistoryLength = &n
	}
	return p, nil
}

// parseState reads a task state by its 0.3 name (completed,
// input-required) or its 1.0 name (TASK_STATE_COMPLETED), in any case.
func parseState(s string) (a2a.TaskState, bool) {
	if st, ok := a2a.ParseTaskState(strings.ToLower(s)); ok && st != a2a.TaskStateUnspecified {
		return st, true
	}
	st, ok := v10.ParseTaskState(strings.ToUpper(s))
	return st, ok && st != a2a.TaskStateUnspecified
}

func (e *clientEnv) listCmd() *cobra.Command {
	f := &listFlags{}
	cmd := &cobra.Command{
		Use:   "list URL",
		Short: "Call ListTasks (A2A 1.0; A2A 0.3 over HTTP+JSON) and print a page of your tasks",
		Long: `Call ListTasks (A2A 1.0 §3.1.4, A2A 0.3.0 §3.5.6) and print one page of the caller's tasks,
newest first, as a table (id, state, last update, context) followed by the
next page's token; --page-token continues there. --context and --state filter
(--state takes completed or TASK_STATE_COMPLETED alike), --page-size is 1 to
100 (default: the server's, 50), --history-length and --include-artifacts
shape the tasks. With --json, the ListTasksResponse as received ({"tasks":
[…], "nextPageToken": …, "pageSize": …, "totalSize": …}) on one line.
A2A 0.3 has ListTasks over HTTP+JSON only (GET /v1/tasks): an agent that
offers only 0.3 JSON-RPC gets an error.
` + urlHelp,
		Example: `  a2abridge list localhost:8080
  a2abridge list http://127.0.0.1:8080/a2a/slow --state working --page-size 10
  a2abridge list localhost:8080 --context "$CTX" --json | jq -r '.tasks[].id'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := f.params(cmd.Flags().Changed)
			if err != nil {
				return err
			}
			r, err := callAgent(e, cmd, args[0], func(ctx context.Context, c *client.Client) (*a2a.ListTasksResponse, error) {
				return c.ListTasks(ctx, p)
			})
			if err != nil {
				return err
			}
			return e.printTasks(r, p.IncludeArtifacts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.contextID, "context", "", "only tasks of this contextId")
	fl.StringVar(&f.state, "state", "", "only tasks in this state (e.g. working, completed)")
	fl.IntVar(&f.pageSize, "page-size", 0, "tasks per page, 1 to 100 (default: the server's, 50)")
	fl.StringVar(&f.pageToken, "page-token", "", "continue after the page that returned this next page token")
	fl.IntVar(&f.history, "history-length", 0, "at most N most recent messages of each task's history")
	fl.BoolVar(&f.includeArtifacts, "include-artifacts", false, "include each task's artifacts")
	return e.clientFlags(cmd)
}

// follow streams a task's events (SubscribeToTask) until the task is
// final: terminal, or interrupted (an A2A 1.0 subscription would go on
// with the task's next turn; the command stops there and says how to
// continue, as stream does). A task that has already ended, which A2A 1.0
// refuses to subscribe to (UnsupportedOperationError, A2A 1.0 §3.1.6), is
// read with GetTask and yielded as the stream's one event.
func follow(ctx context.Context, c *client.Client, id, from string) iter.Seq2[client.StreamEvent, error] {
	return func(yield func(client.StreamEvent, error) bool) {
		first := true
		for ev, err := range c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: id}, from) {
			if first && errors.Is(err, a2a.ErrUnsupportedOperation) {
				if t, gerr := c.GetTask(ctx, a2a.GetTaskRequest{ID: id}); gerr == nil && t.Status.State.Final() {
					yield(client.StreamEvent{Event: t}, nil)
					return
				}
			}
			first = false
			if !yield(ev, err) {
				return
			}
			switch v := ev.Event.(type) {
			case *a2a.Task:
				if v.Status.State.Interrupted() {
					return
				}
			case *a2a.TaskStatusUpdateEvent:
				if v.Status.State.Interrupted() {
					return
				}
			}
		}
	}
}

// callAgent dials the agent at url under the command's context and returns
// what op returns of it; an error of either ends the command as e.stopped
// says (an interrupt told apart from a failure).
func callAgent[T any](e *clientEnv, cmd *cobra.Command, url string, op func(ctx context.Context, c *client.Client) (T, error)) (T, error) {
	ctx, cancel := e.ctx(cmd)
	defer cancel()
	var zero T
	c, err := e.dial(ctx, url)
	if err != nil {
		return zero, e.stopped(ctx, nil, err)
	}
	v, err := op(ctx, c)
	if err != nil {
		return zero, e.stopped(ctx, nil, err)
	}
	return v, nil
}
