package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/a2abridge/a2abridge/a2a"
)

// isTerminal reports whether v (an io.Reader or io.Writer) is a terminal.
// Tests replace it.
var isTerminal = func(v any) bool {
	f, ok := v.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// fancyTerminal reports whether w is a terminal that understands colours
// and cursor movement: not when NO_COLOR is set (https://no-color.org) or
// TERM is "dumb".
func fancyTerminal(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(w)
}

// ANSI SGR colours for task states.
const (
	sgrReset  = "\033[0m"
	sgrRed    = "\033[31m"
	sgrGreen  = "\033[32m"
	sgrYellow = "\033[33m"
	sgrBlue   = "\033[34m"
	sgrCyan   = "\033[36m"
	sgrBold   = "\033[1m"
)

// stateColor is the colour a state is shown in: green done, red failed or
// rejected, yellow canceled or waiting for the user, cyan still running.
func stateColor(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateCompleted:
		return sgrGreen
	case a2a.TaskStateFailed, a2a.TaskStateRejected:
		return sgrBold + sgrRed
	case a2a.TaskStateCanceled:
		return sgrYellow
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		return sgrBold + sgrYellow
	case a2a.TaskStateSubmitted, a2a.TaskStateWorking:
		return sgrCyan
	}
	return sgrBlue
}

// spinner shows, on a terminal, that a command is waiting: a line on w
// rewritten in place every 100 ms, erased by stop. It draws nothing during
// the first 200 ms (a quick answer shows no flicker) and nothing at all
// when w is not a capable terminal.
type spinner struct {
	stopc chan struct{}
	done  chan struct{}
	once  sync.Once
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// startSpinner starts a spinner with text (e.g. "waiting for the agent").
func startSpinner(w io.Writer, text string) *spinner {
	s := &spinner{stopc: make(chan struct{}), done: make(chan struct{})}
	if !fancyTerminal(w) {
		close(s.done)
		return s
	}
	go func() {
		defer close(s.done)
		start := time.Now()
		delay := time.NewTimer(200 * time.Millisecond)
		defer delay.Stop()
		select {
		case <-delay.C:
		case <-s.stopc:
			return
		}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(w, "\r\033[K%s %s (%ds; Ctrl-C stops waiting)", spinnerFrames[i%len(spinnerFrames)], text, int(time.Since(start).Seconds()))
			select {
			case <-tick.C:
			case <-s.stopc:
				fmt.Fprint(w, "\r\033[K")
				return
			}
		}
	}()
	return s
}

// stop erases the spinner's line and returns when it is gone.
func (s *spinner) stop() {
	s.once.Do(func() { close(s.stopc) })
	<-s.done
}
