package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
)

// chatCmd is an interactive session: each input line is sent to the agent
// (streamed when the agent can); task and context are kept across turns.
func (e *clientEnv) chatCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "chat URL",
		Short: "Talk to an agent interactively (keeps task and context across turns)",
		Long: `Talk to an agent: each line you type is a message (message/stream when the
agent streams, else message/send), and the agent's answers are printed as they
arrive. The task continues while the agent asks for input (input-required);
when it ends, the next line starts a new task in the same context. /new starts
a new task, /quit (or end of input) leaves. Ctrl-C during a turn stops waiting
for it (the task goes on; how to follow or cancel it is printed) and returns to
the prompt; Ctrl-C at the prompt leaves with exit status 130. --timeout limits
each turn.
` + urlHelp,
		Example: `  a2abridge chat http://127.0.0.1:8080/a2a/chat
  printf 'hello\nbye\n' | a2abridge chat localhost:8080/a2a/chat`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := e.dial(ctx, args[0])
			if err != nil {
				return e.stopped(ctx, nil, err)
			}
			card := c.Card()
			fmt.Fprintf(e.stdout, "Connected to %s (%s). Type a message; /new starts a new task, /quit leaves.\n", printable(card.Name), c.URL())

			// Lines are read by a goroutine so that the prompt can also
			// wait for Ctrl-C.
			lines := make(chan string)
			readErr := make(chan error, 1)
			go func() {
				in := bufio.NewScanner(e.stdin)
				in.Buffer(nil, 1<<20)
				for in.Scan() {
					select {
					case lines <- in.Text():
					case <-ctx.Done():
						return
					}
				}
				readErr <- in.Err()
				close(lines)
			}()
			promptIntr := make(chan os.Signal, 1)
			defer e.intr.push(func(s os.Signal) { promptIntr <- s })()

			var taskID, contextID string
			for {
				fmt.Fprint(e.stdout, "you> ")
				var line string
				select {
				case l, ok := <-lines:
					if !ok {
						fmt.Fprintln(e.stdout)
						return <-readErr
					}
					line = strings.TrimSpace(l)
				case s := <-promptIntr:
					fmt.Fprintln(e.stdout)
					return &stoppedError{sig: s, quiet: true}
				case <-ctx.Done():
					fmt.Fprintln(e.stdout)
					return ctx.Err()
				}
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
				msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(line))
				msg.TaskID, msg.ContextID = taskID, contextID
				prog, turnErr := e.chatTurn(ctx, c, a2a.SendMessageRequest{Message: msg})
				if prog.taskID != "" {
					taskID = prog.taskID
				}
				if prog.contextID != "" {
					contextID = prog.contextID
				}
				var ae *a2a.Error
				var se *stoppedError
				var he *hinted
				switch {
				case turnErr == nil:
				case errors.As(turnErr, &se) && se.sig == os.Interrupt, errors.As(turnErr, &he):
					// The turn was stopped; the task goes on without us.
					fmt.Fprintln(e.stderr, "a2abridge:", turnErr)
					for _, l := range hintsFor(turnErr, false) {
						fmt.Fprintln(e.stderr, "  "+l)
					}
					taskID = ""
					continue
				case errors.As(turnErr, &ae):
					fmt.Fprintf(e.stdout, "agent error %d: %s\n", ae.Code, printable(ae.Message))
					taskID = ""
					continue
				default:
					return turnErr
				}
				switch {
				case prog.state.Interrupted():
					// The agent waits for our next line on the same task.
				case prog.state.Terminal():
					fmt.Fprintf(e.stdout, "(task %s; the next message starts a new task in the same context)\n", e.paint(prog.state, prog.state.String()))
					taskID = ""
				case prog.message:
					taskID = ""
				}
			}
		},
	}
}

// chatProgress is progress plus the context a chat keeps.
type chatProgress struct {
	progress
	contextID string
}

func (p *chatProgress) see(ev a2a.Event, sseID string) {
	p.progress.see(ev, sseID)
	switch v := ev.(type) {
	case *a2a.Task:
		p.contextID = v.ContextID
	case *a2a.TaskStatusUpdateEvent:
		p.contextID = v.ContextID
	case *a2a.Message:
		p.contextID = v.ContextID
	}
}

// chatTurn sends one message and shows the answer. A SIGINT during the
// turn cancels it (and only it); --timeout bounds it.
func (e *clientEnv) chatTurn(parent context.Context, c *client.Client, p a2a.SendMessageRequest) (*chatProgress, error) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	if e.timeout > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, e.timeout)
		defer c2()
	}
	pop := e.intr.push(func(s os.Signal) { cancel(signalError{s}) })
	defer pop()
	prog := &chatProgress{}
	if !c.Card().Capabilities.Streaming {
		sp := startSpinner(e.stderr, "waiting for the agent")
		res, err := c.SendMessage(ctx, p)
		sp.stop()
		if err != nil {
			if ctx.Err() != nil {
				found := e.findSent(ctx, c, p)
				prog.progress = *found
				return prog, e.stopped(ctx, found, err)
			}
			return prog, err
		}
		prog.see(res, "")
		switch v := res.(type) {
		case *a2a.Task:
			e.printHuman(v, 0)
		case *a2a.Message:
			fmt.Fprintf(e.stdout, "agent> %s\n", partsText(v.Parts))
		}
		return prog, nil
	}
	cp := &chatPrinter{e: e}
	defer cp.closeLine()
	for ev, err := range c.SendStreamingMessage(ctx, p) {
		if err != nil {
			cp.closeLine()
			return prog, e.stopped(ctx, &prog.progress, err)
		}
		prog.see(ev.Event, ev.ID)
		cp.event(ev.Event)
	}
	if ctx.Err() != nil {
		cp.closeLine()
		return prog, e.stopped(ctx, &prog.progress, ctx.Err())
	}
	return prog, nil
}

// chatPrinter shows streamed events in a conversation; an artifact's
// chunks continue one line as they arrive.
type chatPrinter struct {
	e                      *clientEnv
	open                   bool
	openTask, openArtifact string
}

func (p *chatPrinter) closeLine() {
	if p.open {
		fmt.Fprintln(p.e.stdout)
		p.open = false
	}
}

func (p *chatPrinter) event(ev a2a.Event) {
	w := p.e.stdout
	if v, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
		if v.Append && p.open && p.openTask == v.TaskID && p.openArtifact == v.Artifact.ArtifactID {
			fmt.Fprint(w, partsText(v.Artifact.Parts))
		} else {
			p.closeLine()
			fmt.Fprintf(w, "agent> %s%s", artifactLabel(&v.Artifact), partsText(v.Artifact.Parts))
			p.open, p.openTask, p.openArtifact = true, v.TaskID, v.Artifact.ArtifactID
		}
		if v.LastChunk {
			p.closeLine()
		}
		return
	}
	p.closeLine()
	switch v := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		if v.Status.Message != nil {
			fmt.Fprintf(w, "agent> %s\n", partsText(v.Status.Message.Parts))
		}
		if v.Status.State != a2a.TaskStateWorking || v.Status.Message == nil {
			fmt.Fprintf(w, "       [%s]\n", p.e.paint(v.Status.State, v.Status.State.String()))
		}
	case *a2a.Message:
		fmt.Fprintf(w, "agent> %s\n", partsText(v.Parts))
	}
}
