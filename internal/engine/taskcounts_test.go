package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

type fakeCounter struct {
	calls  int
	err    error
	counts []store.TaskCount
}

func (f *fakeCounter) CountTasks(context.Context) ([]store.TaskCount, error) {
	f.calls++
	return f.counts, f.err
}

// TestTaskCountsBackoff: the a2abridge.tasks gauge asks the store at most
// once per taskCountsTTL, also after a count failed (reporting nothing
// meanwhile), and reports the last count in between.
func TestTaskCountsBackoff(t *testing.T) {
	f := &fakeCounter{err: errors.New("statement timeout")}
	c := newTaskCounts(f)
	var got map[string]int64
	obs := func(agent, state string, n int64) { got[agent+"/"+state] = n }
	for range 3 {
		got = map[string]int64{}
		if err := c.observe(context.Background(), obs); err == nil || len(got) != 0 {
			t.Fatalf("a failed count: err %v, reported %v", err, got)
		}
	}
	if f.calls != 1 {
		t.Fatalf("the store was asked %d times within %s of a failure", f.calls, taskCountsTTL)
	}
	f.err, f.counts = nil, []store.TaskCount{{Agent: "echo", State: a2a.TaskStateCompleted, Tasks: 7}}
	c.at = time.Now().Add(-taskCountsTTL)
	for range 2 {
		got = map[string]int64{}
		if err := c.observe(context.Background(), obs); err != nil || got["echo/completed"] != 7 {
			t.Fatalf("after the wait: err %v, reported %v", err, got)
		}
	}
	if f.calls != 2 {
		t.Fatalf("the store was asked %d times, want 2", f.calls)
	}
}
