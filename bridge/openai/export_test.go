package openai

import (
	"context"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/server"
)

// SetContextHistory replaces the source of earlier tasks of a context
// until the returned function restores it.
func SetContextHistory(f func(ctx context.Context, t *server.TaskUpdater, maxTasks int) ([]a2a.Task, error)) (restore func()) {
	old := contextHistory
	contextHistory = f
	return func() { contextHistory = old }
}
