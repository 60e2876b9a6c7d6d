package cli

import (
	"context"
	"log/slog"

	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
)

// startAdmin mounts the admin API when cfg.admin is set (TODO).
func startAdmin(ctx context.Context, log *slog.Logger, st store.Store, eng *server.Engine, host *server.Host, cfg serveConfig) error {
	return nil
}
