package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes r as a small human-readable table.
func WriteText(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...)) }
	row("target", "%s", r.URL)
	if r.Idle != nil {
		id := r.Idle
		via := id.Via
		if id.TaskID != "" {
			via += " to task " + id.TaskID
		}
		row("mode", "idle streams (%s), opened %d at a time", via, r.Concurrency)
		row("streams", "%d requested, %d opened in %.1fs, %d failed", id.Requested, id.Opened, id.OpenSeconds, id.Failed)
		row("held", "%.1fs: %d still open at the end, %d ended early", id.HeldSeconds, id.OpenAtEnd, id.Ended)
		row("keep-alives", "%d (%d bytes), %.2f per stream per second", id.KeepAlives, id.KeepAliveBytes, id.KeepAlivesPerStreamPerSecond)
		row("events", "%d (%d bytes) during the hold", id.Events, id.EventBytes)
		row("open latency", "%s", fmtLatency(id.OpenLatency))
	} else {
		how := fmt.Sprintf("%d concurrent clients", r.Concurrency)
		if r.Concurrency == 1 {
			how = "1 client"
		}
		row("mode", "%s, %s, %d-byte text", r.Mode, how, r.Payload)
		row("measured", "%.2fs (after %.1fs warmup)", r.Elapsed, r.Warmup)
		row("requests", "%d ok, %d errors", r.Requests, r.Errors)
		row("throughput", "%.1f req/s", r.Throughput)
		row("latency", "%s", fmtLatency(r.Latency))
		if r.FirstEvent != nil {
			row("first event", "%s", fmtLatency(*r.FirstEvent))
			row("events", "%d", r.Events)
		}
		row("received", "%.1f MiB", float64(r.BytesReceived)/(1<<20))
	}
	if len(r.ErrorKinds) > 0 {
		var parts []string
		for _, k := range sortedKinds(r.ErrorKinds) {
			parts = append(parts, fmt.Sprintf("%s: %d", k, r.ErrorKinds[k]))
		}
		row("errors", "%s", strings.Join(parts, ", "))
		row("first error", "%s", r.FirstError)
	}
	return tw.Flush()
}

func fmtLatency(l Latency) string {
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s  (mean %s)", FormatMS(l.P50), FormatMS(l.P90), FormatMS(l.P99), FormatMS(l.Max), FormatMS(l.Mean))
}

// FormatMS formats milliseconds with a unit that keeps 3 significant digits.
func FormatMS(v float64) string {
	switch {
	case v <= 0:
		return "0"
	case v < 1:
		return fmt.Sprintf("%.0fµs", v*1000)
	case v < 10:
		return fmt.Sprintf("%.2fms", v)
	case v < 100:
		return fmt.Sprintf("%.1fms", v)
	case v < 10000:
		return fmt.Sprintf("%.0fms", v)
	}
	return fmt.Sprintf("%.1fs", v/1000)
}
