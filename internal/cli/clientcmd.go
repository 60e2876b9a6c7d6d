package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
)

// globalFlags are the client commands' persistent flags.
type globalFlags struct {
	headers []string
	token   string
	apiKey  string
	timeout time.Duration
	json    bool
	human   bool
}

type clientEnv struct {
	g      *globalFlags
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func isTransport(err error) bool {
	var ne net.Error
	var ue *url.Error
	return errors.As(err, &ne) || errors.As(err, &ue) || errors.Is(err, client.ErrStreamEnded) || errors.Is(err, io.ErrUnexpectedEOF)
}

// jsonOut reports whether output is JSON: --json, or stdout is not a
// terminal and --human is not set.
// printable replaces control characters (ANSI escapes from a hostile
// server, say) in text shown to a person.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return '�'
	}, s)
}

func (e *clientEnv) jsonOut() bool {
	if e.g.json {
		return true
	}
	if e.g.human {
		return false
	}
	f, ok := e.stdout.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice == 0
}

func (e *clientEnv) ctx(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	if e.g.timeout > 0 {
		return context.WithTimeout(cmd.Context(), e.g.timeout)
	}
	return context.WithCancel(cmd.Context())
}

func (e *clientEnv) options() (client.Options, error) {
	h := http.Header{}
	for _, kv := range e.g.headers {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return client.Options{}, usageError{fmt.Errorf("--header %q: want NAME:VALUE", kv)}
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	o := client.Options{Token: e.g.token, APIKey: e.g.apiKey}
	if len(h) > 0 {
		o.Headers = func(context.Context, string) (http.Header, error) { return h, nil }
	}
	return o, nil
}

// checkURL rejects what is not an absolute http(s) URL, as a usage error.
func checkURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return usageError{fmt.Errorf("%q is not an http(s) URL", u)}
	}
	return nil
}

func (e *clientEnv) dial(ctx context.Context, u string) (*client.Client, error) {
	if err := checkURL(u); err != nil {
		return nil, err
	}
	o, err := e.options()
	if err != nil {
		return nil, err
	}
	return client.Dial(ctx, u, o)
}

func addClientCommands(root *cobra.Command, stdin io.Reader, stdout, stderr io.Writer) {
	g := &globalFlags{}
	pf := root.PersistentFlags()
	pf.StringArrayVar(&g.headers, "header", nil, "extra request header NAME:VALUE (repeatable)")
	pf.StringVar(&g.token, "token", "", "bearer token (sent as the card's security schemes require)")
	pf.StringVar(&g.apiKey, "api-key", "", "API key (placed where the card's apiKey scheme says)")
	pf.DurationVar(&g.timeout, "timeout", 0, "overall timeout of the command (0: none)")
	pf.BoolVar(&g.json, "json", false, "print raw A2A JSON results, one per line (default when stdout is not a terminal)")
	pf.BoolVar(&g.human, "human", false, "print human-readable output even when stdout is not a terminal")
	e := &clientEnv{g: g, stdin: stdin, stdout: stdout, stderr: stderr}

	root.AddCommand(&cobra.Command{
		Use:   "card URL",
		Short: "Fetch and validate an agent's card (base URL or card URL)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			if err := checkURL(args[0]); err != nil {
				return err
			}
			o, err := e.options()
			if err != nil {
				return err
			}
			card, err := client.Resolve(ctx, args[0], o)
			if err != nil {
				return err
			}
			return e.printCard(&card)
		},
	})
	root.AddCommand(&cobra.Command{
		Use:   "extended-card URL",
		Short: "Call agent/getAuthenticatedExtendedCard",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return err
			}
			card, err := c.GetAuthenticatedExtendedCard(ctx)
			if err != nil {
				return err
			}
			return e.printCard(card)
		},
	})
	root.AddCommand(e.sendCmd(false), e.sendCmd(true))

	var history int
	get := &cobra.Command{
		Use:   "get URL TASK",
		Short: "Call tasks/get",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := a2a.TaskQueryParams{ID: args[1]}
			if cmd.Flags().Changed("history") {
				if history < 0 {
					return usageError{errors.New("--history must not be negative")}
				}
				p.HistoryLength = &history
			}
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return err
			}
			t, err := c.GetTask(ctx, p)
			if err != nil {
				return err
			}
			return e.printResult(t, 0)
		},
	}
	get.Flags().IntVar(&history, "history", 0, "historyLength: at most N most recent messages")
	root.AddCommand(get)

	root.AddCommand(&cobra.Command{
		Use:   "cancel URL TASK",
		Short: "Call tasks/cancel",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return err
			}
			t, err := c.CancelTask(ctx, a2a.TaskIDParams{ID: args[1]})
			if err != nil {
				return err
			}
			return e.printResult(t, 0)
		},
	})

	var from string
	resub := &cobra.Command{
		Use:   "resubscribe URL TASK",
		Short: "Call tasks/resubscribe and print events until the task is final",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.ContainsAny(from, "\r\n") {
				return usageError{fmt.Errorf("--from %q: not a valid event id", from)}
			}
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return err
			}
			return e.printStream(c.Resubscribe(ctx, a2a.TaskIDParams{ID: args[1]}, from), time.Now())
		},
	}
	resub.Flags().StringVar(&from, "from", "", "resume after this event id (sent as Last-Event-ID; a2abridge ids are event numbers)")
	root.AddCommand(resub)
	root.AddCommand(e.pushCmd())
	root.AddCommand(e.chatCmd())
}

type sendFlags struct {
	task, contextID, dataJSON, fileURI, mimeType, pushURL, pushToken string
	files                                                            []string
	history                                                          int
	noBlocking                                                       bool
}

func (e *clientEnv) sendCmd(stream bool) *cobra.Command {
	f := &sendFlags{}
	use, short := "send URL TEXT", "Call message/send"
	if stream {
		use, short = "stream URL TEXT", "Call message/stream and print events as they arrive"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			text := ""
			if len(args) == 2 {
				text = args[1]
			}
			p, err := f.params(text, cmd.Flags().Changed("history"))
			if err != nil {
				return err
			}
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return err
			}
			start := time.Now()
			if stream {
				return e.printStream(c.SendStreamingMessage(ctx, p), start)
			}
			res, err := c.SendMessage(ctx, p)
			if err != nil {
				return err
			}
			return e.printResult(res, time.Since(start))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.task, "task", "", "taskId: continue this task")
	fl.StringVar(&f.contextID, "context", "", "contextId")
	fl.StringArrayVar(&f.files, "file", nil, "attach a file by value (FilePart with bytes; repeatable)")
	fl.StringVar(&f.fileURI, "file-uri", "", "attach a file by reference (FilePart with uri)")
	fl.StringVar(&f.mimeType, "mime", "", "mimeType of --file/--file-uri (default: from the file name)")
	fl.StringVar(&f.dataJSON, "data", "", "attach a JSON object (DataPart)")
	fl.IntVar(&f.history, "history", 0, "historyLength of the returned task")
	fl.BoolVar(&f.noBlocking, "no-blocking", false, "return after the first state instead of waiting (send)")
	fl.StringVar(&f.pushURL, "push-url", "", "push notification webhook for this task")
	fl.StringVar(&f.pushToken, "push-token", "", "token sent with push notifications")
	return cmd
}

func (f *sendFlags) params(text string, historySet bool) (a2a.MessageSendParams, error) {
	var parts []a2a.Part
	if text != "" {
		parts = append(parts, a2a.TextPart{Text: text})
	}
	for _, path := range f.files {
		b, err := os.ReadFile(path)
		if err != nil {
			return a2a.MessageSendParams{}, usageError{fmt.Errorf("--file: %w", err)}
		}
		mt := f.mimeType
		if mt == "" {
			mt = mime.TypeByExtension(filepath.Ext(path))
		}
		if mt == "" {
			mt = "application/octet-stream"
		}
		parts = append(parts, a2a.FilePart{File: a2a.File{Name: filepath.Base(path), MimeType: mt, Bytes: b}})
	}
	if f.fileURI != "" {
		u, err := url.Parse(f.fileURI)
		if err != nil || u.Scheme == "" {
			return a2a.MessageSendParams{}, usageError{fmt.Errorf("--file-uri %q: want an absolute URI", f.fileURI)}
		}
		parts = append(parts, a2a.FilePart{File: a2a.File{URI: f.fileURI, MimeType: f.mimeType, Name: filepath.Base(u.Path)}})
	}
	if f.dataJSON != "" {
		var d map[string]any
		if err := json.Unmarshal([]byte(f.dataJSON), &d); err != nil || d == nil {
			return a2a.MessageSendParams{}, usageError{fmt.Errorf("--data: want a JSON object, got %.40q", f.dataJSON)}
		}
		parts = append(parts, a2a.DataPart{Data: d})
	}
	if len(parts) == 0 {
		return a2a.MessageSendParams{}, usageError{errors.New("nothing to send: give TEXT, --file, --file-uri or --data")}
	}
	msg := a2a.NewMessage(a2a.RoleUser, parts...)
	msg.TaskID, msg.ContextID = f.task, f.contextID
	p := a2a.MessageSendParams{Message: msg}
	cfg := &a2a.MessageSendConfiguration{}
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

func (e *clientEnv) pushCmd() *cobra.Command {
	push := &cobra.Command{Use: "push", Short: "Manage a task's push notification configs (tasks/pushNotificationConfig/*)"}
	var token, id string
	set := &cobra.Command{
		Use:   "set URL TASK WEBHOOK_URL",
		Short: "tasks/pushNotificationConfig/set",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return err
			}
			out, err := c.SetPushNotificationConfig(ctx, a2a.TaskPushNotificationConfig{TaskID: args[1],
				PushNotificationConfig: a2a.PushNotificationConfig{ID: id, URL: args[2], Token: token}})
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
		Short: "tasks/pushNotificationConfig/get",
		Args:  cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return err
			}
			p := a2a.GetTaskPushNotificationConfigParams{ID: args[1]}
			if len(args) == 3 {
				p.PushNotificationConfigID = args[2]
			}
			out, err := c.GetPushNotificationConfig(ctx, p)
			if err != nil {
				return err
			}
			return e.printPush([]a2a.TaskPushNotificationConfig{*out})
		},
	}
	list := &cobra.Command{
		Use:   "list URL TASK",
		Short: "tasks/pushNotificationConfig/list",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return err
			}
			out, err := c.ListPushNotificationConfigs(ctx, a2a.TaskIDParams{ID: args[1]})
			if err != nil {
				return err
			}
			return e.printPush(out)
		},
	}
	del := &cobra.Command{
		Use:   "delete URL TASK CONFIG_ID",
		Short: "tasks/pushNotificationConfig/delete",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return err
			}
			if err := c.DeletePushNotificationConfig(ctx, a2a.DeleteTaskPushNotificationConfigParams{ID: args[1], PushNotificationConfigID: args[2]}); err != nil {
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
	push.AddCommand(set, get, list, del, e.listenCmd())
	return push
}

// chatCmd is an interactive session: each input line is streamed to the
// agent; task and context are kept across turns.
func (e *clientEnv) chatCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "chat URL",
		Short: "Talk to an agent interactively (keeps task and context across turns)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := e.ctx(cmd)
			defer cancel()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return err
			}
			card := c.Card()
			fmt.Fprintf(e.stdout, "Connected to %s (%s). Type a message; /new starts a new task, /quit leaves.\n", card.Name, c.URL())
			in := bufio.NewScanner(e.stdin)
			in.Buffer(nil, 1<<20)
			var taskID, contextID string
			for {
				fmt.Fprint(e.stdout, "you> ")
				if !in.Scan() {
					fmt.Fprintln(e.stdout)
					return in.Err()
				}
				line := strings.TrimSpace(in.Text())
				switch line {
				case "":
					continue
				case "/quit", "/exit":
					return nil
				case "/new":
					taskID = ""
					fmt.Fprintln(e.stdout, "(new task)")
					continue
				}
				msg := a2a.NewMessage(a2a.RoleUser, a2a.TextPart{Text: line})
				msg.TaskID, msg.ContextID = taskID, contextID
				p := a2a.MessageSendParams{Message: msg}
				var state a2a.TaskState
				var turnErr error
				if card.Capabilities.Streaming {
					for ev, err := range c.SendStreamingMessage(ctx, p) {
						if err != nil {
							turnErr = err
							break
						}
						taskID, contextID, state = track(ev.Event, taskID, contextID, state)
						e.chatEvent(ev.Event)
					}
				} else {
					res, err := c.SendMessage(ctx, p)
					turnErr = err
					if err == nil {
						taskID, contextID, state = track(res, taskID, contextID, state)
						e.printHuman(res, 0)
					}
				}
				if turnErr != nil {
					var ae *a2a.Error
					if !errors.As(turnErr, &ae) {
						return turnErr
					}
					fmt.Fprintf(e.stdout, "agent error %d: %s\n", ae.Code, ae.Message)
					taskID = ""
					continue
				}
				switch {
				case state.Interrupted():
					// The agent waits for our next line on the same task.
				case state.Terminal():
					fmt.Fprintf(e.stdout, "(task %s; the next message starts a new task in the same context)\n", state)
					taskID = ""
				}
			}
		},
	}
}

func track(ev a2a.Event, taskID, contextID string, state a2a.TaskState) (string, string, a2a.TaskState) {
	switch v := ev.(type) {
	case *a2a.Task:
		return v.ID, v.ContextID, v.Status.State
	case *a2a.TaskStatusUpdateEvent:
		return v.TaskID, v.ContextID, v.Status.State
	case *a2a.Message:
		if v.ContextID != "" {
			contextID = v.ContextID
		}
		return "", contextID, a2a.TaskStateCompleted
	}
	return taskID, contextID, state
}

// chatEvent shows one streamed event in a conversation.
func (e *clientEnv) chatEvent(ev a2a.Event) {
	switch v := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		if v.Status.Message != nil {
			fmt.Fprintf(e.stdout, "agent> %s\n", partsText(v.Status.Message.Parts))
		}
		if v.Status.State != a2a.TaskStateWorking || v.Status.Message == nil {
			fmt.Fprintf(e.stdout, "       [%s]\n", v.Status.State)
		}
	case *a2a.TaskArtifactUpdateEvent:
		fmt.Fprintf(e.stdout, "agent> %s%s\n", artifactLabel(&v.Artifact), partsText(v.Artifact.Parts))
	case *a2a.Message:
		fmt.Fprintf(e.stdout, "agent> %s\n", partsText(v.Parts))
	}
}

func artifactLabel(a *a2a.Artifact) string {
	if a.Name != "" {
		return "[" + a.Name + "] "
	}
	return ""
}

// printResult prints a message/send, tasks/get or tasks/cancel result.
func (e *clientEnv) printResult(ev a2a.Event, took time.Duration) error {
	if e.jsonOut() {
		b, err := v03.MarshalEvent(ev)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	e.printHuman(ev, took)
	return nil
}

func (e *clientEnv) printHuman(ev a2a.Event, took time.Duration) {
	w := e.stdout
	switch v := ev.(type) {
	case *a2a.Task:
		fmt.Fprintf(w, "Task %s  %s", v.ID, strings.ToUpper(string(v.Status.State)))
		if took > 0 {
			fmt.Fprintf(w, "  (%s)", took.Round(time.Millisecond))
		}
		fmt.Fprintf(w, "\n  context  %s\n", v.ContextID)
		if v.Status.Message != nil {
			fmt.Fprintf(w, "  status   %s\n", partsText(v.Status.Message.Parts))
		}
		if !v.Status.Timestamp.IsZero() {
			fmt.Fprintf(w, "  updated  %s\n", v.Status.Timestamp.Format(time.RFC3339))
		}
		for _, a := range v.Artifacts {
			fmt.Fprintf(w, "  artifact %s%s\n", artifactLabel(&a), partsText(a.Parts))
		}
		if len(v.History) > 0 {
			fmt.Fprintf(w, "  history  %d message(s)\n", len(v.History))
			for _, m := range v.History {
				fmt.Fprintf(w, "    %-5s  %s\n", m.Role, partsText(m.Parts))
			}
		}
	case *a2a.Message:
		fmt.Fprintf(w, "Message %s from %s\n  %s\n", v.MessageID, v.Role, partsText(v.Parts))
	}
}

// printStream prints a stream's events as they come.
func (e *clientEnv) printStream(events func(func(client.StreamEvent, error) bool), start time.Time) error {
	asJSON := e.jsonOut()
	for ev, err := range events {
		if err != nil {
			return err
		}
		if asJSON {
			if ev.Resumed {
				fmt.Fprintf(e.stderr, "a2abridge: stream resumed (gap: %v)\n", ev.Gap)
			}
			b, err := v03.MarshalEvent(ev.Event)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s\n", b)
			continue
		}
		prefix := fmt.Sprintf("%7s", fmt.Sprintf("+%dms", time.Since(start).Milliseconds()))
		if ev.ID != "" {
			prefix += fmt.Sprintf(" #%s", ev.ID)
		}
		if ev.Gap {
			fmt.Fprintf(e.stdout, "%s  (stream resumed; the server did not replay, so updates in between may be missing)\n", prefix)
		} else if ev.Resumed {
			fmt.Fprintf(e.stdout, "%s  (stream resumed)\n", prefix)
		}
		switch v := ev.Event.(type) {
		case *a2a.Task:
			fmt.Fprintf(e.stdout, "%s  task %s %s (context %s)\n", prefix, v.ID, v.Status.State, v.ContextID)
		case *a2a.TaskStatusUpdateEvent:
			line := fmt.Sprintf("%s  status %s", prefix, v.Status.State)
			if v.Status.Message != nil {
				line += ": " + partsText(v.Status.Message.Parts)
			}
			if v.Final {
				line += "  [final]"
			}
			fmt.Fprintln(e.stdout, line)
		case *a2a.TaskArtifactUpdateEvent:
			flags := ""
			if v.Append {
				flags += " +append"
			}
			if v.LastChunk {
				flags += " +last"
			}
			fmt.Fprintf(e.stdout, "%s  artifact %s%s%s\n", prefix, artifactLabel(&v.Artifact), partsText(v.Artifact.Parts), flags)
		case *a2a.Message:
			fmt.Fprintf(e.stdout, "%s  message from %s: %s\n", prefix, v.Role, partsText(v.Parts))
		}
	}
	return nil
}

func (e *clientEnv) printCard(c *a2a.AgentCard) error {
	if e.jsonOut() {
		b, err := v03.MarshalAgentCard(c)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	w := e.stdout
	fmt.Fprintf(w, "%s\n", printable(fmt.Sprintf("%s %s  (A2A %s)\n  %s", c.Name, c.Version, c.ProtocolVersion, c.Description)))
	fmt.Fprintf(w, "  url        %s (%s)\n", c.URL, orDefault(c.PreferredTransport, "JSONRPC"))
	for _, i := range c.AdditionalInterfaces {
		fmt.Fprintf(w, "  also       %s (%s)\n", i.URL, i.Transport)
	}
	fmt.Fprintf(w, "  streaming %v, push notifications %v, state history %v, extended card %v\n",
		c.Capabilities.Streaming, c.Capabilities.PushNotifications, c.Capabilities.StateTransitionHistory, c.SupportsAuthenticatedExtendedCard)
	fmt.Fprintf(w, "  input      %s\n  output     %s\n", strings.Join(c.DefaultInputModes, ", "), strings.Join(c.DefaultOutputModes, ", "))
	names := make([]string, 0, len(c.SecuritySchemes))
	for name := range c.SecuritySchemes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(w, "  security   %s: %s\n", name, c.SecuritySchemes[name].SchemeType())
	}
	for _, s := range c.Skills {
		fmt.Fprintf(w, "  skill      %s\n", printable(s.ID+": "+s.Description))
	}
	return nil
}

func (e *clientEnv) printPush(cs []a2a.TaskPushNotificationConfig) error {
	for i := range cs {
		if e.jsonOut() {
			b, err := v03.MarshalTaskPushNotificationConfig(&cs[i])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s\n", b)
			continue
		}
		c := cs[i].PushNotificationConfig
		fmt.Fprintf(e.stdout, "task %s  config %s  → %s\n", cs[i].TaskID, orDefault(c.ID, "(no id)"), c.URL)
	}
	if len(cs) == 0 && !e.jsonOut() {
		fmt.Fprintln(e.stdout, "no push notification configs")
	}
	return nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// partsText renders parts on one line: text as is (consecutive text parts,
// such as streamed chunks, run together), data as JSON, files by name.
func partsText(ps []a2a.Part) string {
	return printable(rawPartsText(ps))
}

func rawPartsText(ps []a2a.Part) string {
	var b strings.Builder
	prevText := false
	for _, p := range ps {
		_, isText := p.(a2a.TextPart)
		if b.Len() > 0 && !(isText && prevText) {
			b.WriteByte(' ')
		}
		prevText = isText
		b.WriteString(partText(p))
	}
	return b.String()
}

func partText(p a2a.Part) string {
	switch v := p.(type) {
	case a2a.TextPart:
		return v.Text
	case a2a.DataPart:
		b, _ := json.Marshal(v.Data, json.Deterministic(true))
		return string(b)
	case a2a.FilePart:
		if v.File.HasBytes() {
			return fmt.Sprintf("<file %s, %s, %d bytes>", orDefault(v.File.Name, "unnamed"), orDefault(v.File.MimeType, "?"), len(v.File.Bytes))
		}
		return fmt.Sprintf("<file %s>", v.File.URI)
	}
	return ""
}
