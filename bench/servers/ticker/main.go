// Command ticker is the event source of runbench's cross-replica latency
// measurement: run by an `a2abridge serve` agent of kind
// exec, it waits --delay, then writes --n lines to stdout, one every
// --every, each in its own write, so that each line becomes one streamed
// artifact-update event of the task (one append, one commit). It ignores
// its stdin.
//
// Usage: ticker [--n 100] [--every 10ms] [--delay 1s].
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	n := flag.Int("n", 100, "lines to write")
	every := flag.Duration("every", 10*time.Millisecond, "time between two lines")
	delay := flag.Duration("delay", time.Second, "time before the first line (for a subscriber to join the task)")
	flag.Parse()
	time.Sleep(*delay)
	next := time.Now()
	for i := range *n {
		if _, err := fmt.Fprintf(os.Stdout, "tick %d\n", i); err != nil {
			os.Exit(1)
		}
		next = next.Add(*every)
		time.Sleep(time.Until(next))
	}
}
