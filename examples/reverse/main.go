// Command reverse is a complete A2A agent written with the a2abridge server
// SDK: it streams the reversed text of each message as an artifact, one
// word per chunk, and reports progress while doing so.
//
// It shows the whole lifecycle of a server built with the SDK: a durable
// store (SQLite in -data), an Engine (which fails the tasks a crashed
// previous run left working as it is made), a Host serving the agent, and
// a graceful shutdown on SIGINT or SIGTERM (running tasks get -grace to
// finish, the rest are failed with a reason, open streams get their final
// event).
//
//	go run ./examples/reverse -addr 127.0.0.1:9090 -data /tmp/reverse
//	curl -s localhost:9090/.well-known/agent-card.json
package main

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
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

// Reverse is the agent: it implements server.Agent.
type Reverse struct {
	// WordDelay is a pause before each word, to watch a task stream (and
	// to test what a crash in the middle of one leaves).
	WordDelay time.Duration
}

// Execute reverses the words of every text part, streaming one word per
// artifact chunk. Cancellation (tasks/cancel, shutdown) arrives through ctx.
func (r Reverse) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	if err := t.Working(ctx, "reversing"); err != nil {
		return err
	}
	var words []string
	for _, p := range req.Message.Parts {
		if tp, ok := p.Content.(a2a.Text); ok {
			words = append(words, strings.Fields(string(tp))...)
		}
	}
	if len(words) == 0 {
		return t.Fail(ctx, "send some text to reverse")
	}
	id := a2a.NewID()
	for i := len(words) - 1; i >= 0; i-- {
		if r.WordDelay > 0 {
			select {
			case <-time.After(r.WordDelay):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		chunk := a2a.Artifact{ArtifactID: id, Name: "reversed", Parts: []a2a.Part{a2a.NewTextPart(words[i] + " ")}}
		if err := t.AddArtifact(ctx, chunk, i < len(words)-1, i == 0); err != nil {
			return err
		}
	}
	return t.Complete(ctx, "done")
}

// Card is the agent's card; the URL is filled in per request by server.Host.
func Card() a2a.AgentCard {
	return a2a.AgentCard{
		Name: "reverse", Description: "Reverses the words of a message.", Version: "1.0.0",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "reverse", Name: "Reverse words", Description: "Reverses word order.", Tags: []string{"text"}}},
	}
}

// NewServer returns the HTTP handler serving agent at / and /a2a/reverse
// on st, and the engine behind it (Shutdown or Close it when done). The
// engine recovers st as it is made: a task a previous process left
// working is failed with server.RecoveryMessage.
func NewServer(ctx context.Context, st store.Store, agent Reverse, log *slog.Logger) (http.Handler, *server.Engine, error) {
	eng, err := server.NewEngine(ctx, st, server.EngineOptions{Logger: log})
	if err != nil {
		return nil, nil, err
	}
	host := server.NewHost(server.HostOptions{Transport: server.TransportOptions{Logger: log}})
	host.Add(server.NewHandler(eng, "reverse", agent, Card(), server.HandlerOptions{}))
	return host, eng, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "reverse:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:9090", "listen address")
	data := flag.String("data", "", "data directory of the SQLite store (empty: in memory, lost at exit)")
	grace := flag.Duration("grace", 10*time.Second, "how long running tasks may finish at shutdown")
	delay := flag.Duration("word-delay", 0, "pause before each word")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	// 1. The store. SQLite keeps every task across restarts and crashes.
	var st store.Store = memory.New()
	if *data != "" {
		if err := os.MkdirAll(*data, 0o700); err != nil {
			return err
		}
		s, err := sqlite.Open(filepath.Join(*data, "reverse.db"), sqlite.Options{})
		if err != nil {
			return err
		}
		defer s.Close() // last: after the engine has stopped
		st = s
	}

	// 2. The engine and the host.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, eng, err := NewServer(ctx, st, Reverse{WordDelay: *delay}, log)
	if err != nil {
		return err
	}

	// 3. Serve until a signal.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		_ = eng.Close(context.Background())
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("reverse agent listening on http://%s\n", ln.Addr())
	select {
	case err := <-errc:
		_ = eng.Close(context.Background())
		return err
	case <-ctx.Done():
	}

	// 4. Graceful shutdown: stop accepting connections and refuse new
	// messages, let running tasks finish for the grace period, fail the
	// rest (their streams get that final event), then wait for the HTTP
	// server's last answers.
	log.Info("shutting down", "grace", *grace)
	sctx, cancel := context.WithTimeout(context.Background(), *grace+5*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(sctx) }()
	gctx, cancelGrace := context.WithTimeout(context.Background(), *grace)
	defer cancelGrace()
	if n, err := eng.Shutdown(gctx); err != nil {
		log.Warn("engine shutdown", "err", err)
	} else if n > 0 {
		log.Info("tasks failed at the end of the grace period", "tasks", n)
	}
	if err := <-shut; err != nil {
		_ = srv.Close()
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	return nil
}
