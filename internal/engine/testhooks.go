package engine

// Test hooks: what the tests of package server look at inside an engine.
// Not for other code.

// TaskStates counts the engine's task states, and those holding a pipe.
func TaskStates(e *Engine) (n, pipes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ts := range e.tasks {
		n++
		if ts.pipe != nil {
			pipes++
		}
	}
	return n, pipes
}

// SetBeforeSnapshotHold sets the hook a stream runs before it decides
// whether its opening snapshot is held; set it before the engine serves.
func SetBeforeSnapshotHold(e *Engine, f func(taskID string)) { e.beforeSnapshotHold = f }

// Subscribers counts the streams of task id that follow its log in e.
func Subscribers(e *Engine, id string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ts := e.tasks[id]; ts != nil {
		return len(ts.subs)
	}
	return 0
}
