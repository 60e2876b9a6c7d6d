package engine

import (
	"context"
	"errors"
	"time"

	"github.com/a2abridge/a2abridge/store"
)

// sweepEvery is how often the retention sweep runs: a quarter of the
// retention period, between 100 ms and a minute.
func sweepEvery(retention time.Duration) time.Duration {
	return min(max(retention/4, 100*time.Millisecond), time.Minute)
}

// retain deletes the tasks that finished more than retention ago
// (Store.DeleteFinished), every sweepEvery, until the engine closes. Each
// DeleteFinished call is a bounded write of its own, so the appends of
// running tasks go on between them.
func (e *Engine) retain(retention time.Duration) {
	tk := time.NewTicker(sweepEvery(retention))
	defer tk.Stop()
	for {
		select {
		case <-e.base.Done():
			return
		case <-tk.C:
		}
		before := time.Now().Add(-retention)
		total := 0
		for {
			n, more, err := e.st.DeleteFinished(e.base, before, 0)
			total += n
			if err != nil {
				if !errors.Is(err, store.ErrClosed) && !errors.Is(err, context.Canceled) {
					e.log.Warn("retention: deleting finished tasks failed; will retry", "err", err)
				}
				break
			}
			if !more || e.base.Err() != nil {
				break
			}
		}
		if total > 0 {
			e.log.Debug("retention: deleted finished tasks", "tasks", total, "finished_before", before.UTC().Format(time.RFC3339))
		}
	}
}
