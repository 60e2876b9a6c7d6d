// Package peer holds what the interop peer servers (cmd/peer-a2ago,
// cmd/peer-a2agov2, cmd/peer-trpc) do alike, whatever SDK each is built
// on: the data of the three agents they host, the rules of those agents
// (how echo cuts a long text, what chat answers, how long slow works and
// what it says), and the serving of the HTTP handler an SDK built, with
// the listening line and the clean stop on SIGINT or SIGTERM.
package peer

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Agent is the SDK-neutral card data of one hosted agent: its path segment
// and name, its description and its one skill (whose id is Name).
type Agent struct {
	Name, Desc           string
	SkillName, SkillDesc string
	Tags, Examples       []string
}

// The three agents every peer hosts, as `a2abridge serve` does.
var (
	Echo = Agent{Name: "echo", Desc: "Echoes each message back as an artifact, streamed in chunks.",
		SkillName: "Echo", SkillDesc: "Returns the parts it is sent.",
		Tags: []string{"echo", "test"}, Examples: []string{"hello"}}
	Chat = Agent{Name: "chat", Desc: "A multi-turn conversation: echoes each turn and asks for more; say \"bye\" to finish.",
		SkillName: "Chat", SkillDesc: "Multi-turn echo that waits for input.",
		Tags: []string{"chat", "multi-turn"}, Examples: []string{"hello", "bye"}}
	Slow = Agent{Name: "slow", Desc: "Works for N seconds (send a number; default 10) with progress updates; cancellable.",
		SkillName: "Slow", SkillDesc: "A long-running, cancellable task.",
		Tags: []string{"slow", "cancel", "test"}, Examples: []string{"5"}}
)

// Modes returns the input and output media types of every agent's card (a
// new slice each time: the cards do not share it).
func Modes() []string { return []string{"text/plain", "application/json", "application/octet-stream"} }

// A text part longer than ChunkBytes bytes is streamed by echo in several
// artifact chunks of ChunkBytes bytes (as `a2abridge serve` does), but in
// at most MaxChunks chunks: a2a-go copies the whole task for every event,
// so thousands of chunks would take seconds.
const (
	ChunkBytes = 64
	MaxChunks  = 32
)

// SplitText cuts s into the texts of echo's artifact chunks, keeping UTF-8
// sequences whole. A text of at most ChunkBytes bytes is one chunk, s
// itself; a longer one is always at least two.
func SplitText(s string) []string {
	if len(s) <= ChunkBytes {
		return []string{s}
	}
	var out []string
	size := max(ChunkBytes, (len(s)+MaxChunks-1)/MaxChunks)
	for len(s) > 0 {
		n := min(size, len(s))
		for n < len(s) && n > 0 && s[n]&0xC0 == 0x80 { // keep UTF-8 sequences whole
			n--
		}
		if n == 0 {
			n = min(size, len(s))
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// ChatReply is the chat agent's answer to the turn-th user message, whose
// text is text, and whether it completes the task (the text "bye"); a turn
// that does not ends in input-required.
func ChatReply(turn int, text string) (reply string, bye bool) {
	if strings.EqualFold(strings.TrimSpace(text), "bye") {
		return fmt.Sprintf("Goodbye! (%d turns)", turn), true
	}
	return fmt.Sprintf("turn %d: you said %q. Say more, or \"bye\" to finish.", turn, text), false
}

// SlowDuration is how long the slow agent works on a message with text:
// that many seconds when it is a whole number from 0 to 3600, else 10 s.
func SlowDuration(text string) time.Duration {
	secs := 10
	if n, err := strconv.Atoi(strings.TrimSpace(text)); err == nil && n >= 0 && n <= 3600 {
		secs = n
	}
	return time.Duration(secs) * time.Second
}

// SlowWorking is the slow agent's first working status text.
func SlowWorking(total time.Duration) string { return fmt.Sprintf("working for %s", total) }

// SlowProgress is the slow agent's working status text after done of total.
func SlowProgress(done, total time.Duration) string {
	return fmt.Sprintf("progress: %d%%", int(100*done/total))
}

// SlowResult is the text of the slow agent's artifact "result".
func SlowResult(total time.Duration) string { return fmt.Sprintf("done after %s", total) }

// ParseFlags parses the command line into the flags defined so far and
// fails on arguments that are not flags.
func ParseFlags() error {
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	return nil
}

// Logger is a text logger on stderr at the level named by level (debug,
// info, warn or error), also made slog's default.
func Logger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
	slog.SetDefault(logger)
	return logger, nil
}

// Listen listens on addr (port 0 picks a free port) and returns the
// listener and its base URL, http://HOST:PORT.
func Listen(addr string) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	return ln, "http://" + ln.Addr().String(), nil
}

// Serve serves srv on ln, prints `peer listening on BASE` on stdout once it
// does, and on SIGINT or SIGTERM shuts srv down and returns nil (a clean
// stop, exit status 0). It sets srv.BaseContext to a context that ends at
// the shutdown, so that the open SSE streams end, which Shutdown would
// otherwise wait for. logger, when not nil, notes the signal.
func Serve(ln net.Listener, srv *http.Server, logger *slog.Logger) error {
	baseCtx, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv.BaseContext = func(net.Listener) context.Context { return baseCtx }
	// Catch the signals before announcing the address: a SIGINT right after
	// the listening line must still be a clean stop.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("peer listening on http://%s\n", ln.Addr())

	select {
	case err := <-served:
		return err
	case s := <-sig:
		if logger != nil {
			logger.Info("shutting down", "signal", s.String())
		}
	}
	signal.Stop(sig)
	cancelBase()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
