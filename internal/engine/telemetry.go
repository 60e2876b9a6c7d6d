package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/a2abridge/a2abridge/internal/telemetry"
	"github.com/a2abridge/a2abridge/store"
	"go.opentelemetry.io/otel/trace"
)

// SpanOf is the span context of the request in ctx that an execution's
// span will be the child of; none (and no lookup) with tracing off.
func (e *Engine) SpanOf(ctx context.Context) trace.SpanContext {
	if !e.tel.Tracing() {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(ctx)
}

// traceparent is the W3C traceparent of the span in ctx, which a store
// keeps as the trace context of the task whose execution starts under it
// (store.Append.Trace); "" with tracing off.
func (e *Engine) traceparent(ctx context.Context) string {
	if !e.tel.Tracing() {
		return ""
	}
	return telemetry.Traceparent(trace.SpanContextFromContext(ctx))
}

// taskCountsTTL is how long the a2abridge.tasks gauge reuses a count
// of the store's tasks, or waits after a count failed: scrapes more
// frequent than this cost the store nothing.
const taskCountsTTL = 15 * time.Second

// taskCountsTimeout bounds one count of the store's tasks.
const taskCountsTimeout = 2 * time.Second

// taskCounts reports a store's counts of tasks by agent and state to the
// a2abridge.tasks gauge, counting at most once per taskCountsTTL.
type taskCounts struct {
	st store.TaskCounter

	mu     sync.Mutex
	at     time.Time // of the last count, successful or not
	counts []store.TaskCount
	err    error // the last count's
}

func newTaskCounts(st store.TaskCounter) *taskCounts { return &taskCounts{st: st} }

// observe is the gauge's callback: the counts of the last taskCountsTTL,
// or new ones. While the last count failed (a store that cannot count
// within taskCountsTimeout, say), nothing is reported, the gauge's series
// go stale rather than show numbers that are not the store's, and the
// store is asked again only after taskCountsTTL.
func (c *taskCounts) observe(ctx context.Context, observe func(agent, state string, n int64)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) >= taskCountsTTL {
		ctx, cancel := context.WithTimeout(ctx, taskCountsTimeout)
		c.counts, c.err = c.st.CountTasks(ctx)
		cancel()
		c.at = time.Now()
	}
	if c.err != nil {
		return fmt.Errorf("a2abridge.tasks: %w", c.err)
	}
	for _, tc := range c.counts {
		observe(tc.Agent, tc.State.String(), tc.Tasks)
	}
	return nil
}
