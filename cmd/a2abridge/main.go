// Command a2abridge serves A2A agents and calls them. See the README.
package main

import (
	"os"

	"github.com/a2abridge/a2abridge/internal/cli"
)

func main() {
	// cli.Main wires SIGINT and SIGTERM itself: a chat needs each Ctrl-C
	// delivered to whatever waits at that moment (a turn, the prompt), not
	// one context cancelled for good.
	os.Exit(cli.Main(os.Args[1:]))
}
