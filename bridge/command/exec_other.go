//go:build !unix

package command

import (
	"context"
	"errors"

	"github.com/a2abridge/a2abridge/server"
)

func platformSupported() error {
	return errors.New("exec: runs commands on Unix systems only (it needs process groups and signals)")
}

func (a *Agent) execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	return platformSupported()
}
