package server

// HoldOf reports StreamEvent's hold hint (for the tests of package
// server_test).
func HoldOf(ev StreamEvent) bool { return ev.hold }

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
