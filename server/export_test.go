package server

import "github.com/a2abridge/a2abridge/internal/engine"

// TaskStates counts the engine's task states, and those holding a pipe.
func TaskStates(e *Engine) (n, pipes int) { return engine.TaskStates(e.e) }

// SetBeforeSnapshotHold sets the hook a stream runs before it decides
// whether its opening snapshot is held; set it before the engine serves.
func SetBeforeSnapshotHold(e *Engine, f func(taskID string)) { engine.SetBeforeSnapshotHold(e.e, f) }

// Subscribers counts the streams of task id that follow its log in e.
func Subscribers(e *Engine, id string) int { return engine.Subscribers(e.e, id) }
