// Command embed runs the a2abridge gateway inside a Go program: the same
// agents, routes and store as `a2abridge serve`, configured in code or
// from a serve config file, on an address of your choice.
//
//	go run ./examples/embed                      # echo, chat, slow and "upper" on 127.0.0.1:8080
//	go run ./examples/embed -config examples/bridges/exec.yaml -addr 127.0.0.1:9090
//	curl -s localhost:8080/simple/upper -d '{"input":"hello"}'
//
// SIGINT or SIGTERM shuts it down gracefully.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/a2abridge/a2abridge/gateway"
)

func main() {
	configPath := flag.String("config", "", "a serve config file (YAML); default: the configuration built in code")
	addr := flag.String("addr", "", "listen address (HOST:PORT; port 0 picks a free port); default: the config's addr, else 127.0.0.1:8080")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, *configPath, *addr, log, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

// config is the configuration built in code: the built-in agents and an
// agent of kind exec that upper-cases what it is sent, tasks kept in
// memory.
func config() *gateway.Config {
	return &gateway.Config{
		Memory: true,
		Agents: map[string]gateway.AgentConfig{
			"upper": {
				AgentKeys: gateway.AgentKeys{Kind: "exec", Description: "Upper-cases the text it is sent."},
				KindKeys:  map[string]any{"command": []string{"tr", "a-z", "A-Z"}, "env": []string{"PATH"}},
			},
		},
	}
}

// run serves the gateway on addr until ctx ends: the configuration of the
// file at configPath, else config(); addr, when not "", replaces the
// configured address. It writes the agents' URLs to out
// once they answer.
func run(ctx context.Context, configPath, addr string, log *slog.Logger, out io.Writer) error {
	cfg := config()
	if configPath != "" {
		var err error
		if cfg, err = gateway.LoadConfig(configPath); err != nil {
			return err
		}
	}
	var ov gateway.Overrides
	if addr != "" {
		ov.Addr = &addr // as serve's --addr: over the config's addr
	}
	g, err := gateway.New(ctx, cfg, gateway.Options{Logger: log, Overrides: &ov, ConfigName: configPath})
	if err != nil {
		return err
	}
	for _, name := range g.Agents() {
		fmt.Fprintf(out, "%s/a2a/%s\n", g.URL(), name)
	}
	return g.Run(ctx)
}
