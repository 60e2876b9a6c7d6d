// Command a2abridge serves A2A agents and calls them. See the README.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/a2abridge/a2abridge/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
