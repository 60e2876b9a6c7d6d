package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/store"
)

// Changes records what a store.Watcher's Watch reports, for tests of a
// store's notifications: per task, the highest sequence number reported
// (0 for a change of its push configs only), and the number of resyncs.
type Changes struct {
	mu     sync.Mutex
	last   map[string]int64
	resync int
	wake   chan struct{}
}

// WatchChanges runs w.Watch until the test ends and returns what it
// reports.
func WatchChanges(t *testing.T, w store.Watcher) *Changes {
	t.Helper()
	c := &Changes{last: map[string]int64{}, wake: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Watch(ctx, func(ch store.Change) {
			c.mu.Lock()
			if ch.Resync {
				c.resync++
			} else if cur, ok := c.last[ch.TaskID]; !ok || ch.Seq > cur {
				c.last[ch.TaskID] = ch.Seq
			}
			c.mu.Unlock()
			select {
			case c.wake <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// Until waits, up to 10 s, for cond over what was reported (the highest
// sequence number per task, the resyncs); the test fails with what when
// it does not hold by then.
func (c *Changes) Until(t *testing.T, what string, cond func(last map[string]int64, resyncs int) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		ok := cond(c.last, c.resync)
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-c.wake:
		case <-deadline:
			c.mu.Lock()
			defer c.mu.Unlock()
			t.Fatalf("%s: not reported within 10 s (seen %v, %d resyncs)", what, c.last, c.resync)
		}
	}
}

// Seen returns the highest sequence number reported for the task, and
// whether any change of it was.
func (c *Changes) Seen(taskID string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.last[taskID]
	return v, ok
}

// Tasks returns how many tasks had a change reported.
func (c *Changes) Tasks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.last)
}

// Resyncs returns how many resyncs were reported.
func (c *Changes) Resyncs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resync
}
