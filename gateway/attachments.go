package gateway

import (
	"log/slog"

	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
)

// attachmentOptions are the server options of the agent's attachments
// block (nil: none).
func (a *AgentConfig) attachmentOptions() *server.AttachmentOptions {
	if a == nil || a.Attachments == nil {
		return nil
	}
	return &server.AttachmentOptions{MaxBytes: int64(a.Attachments.MaxBytes)}
}

// mountAttachments serves GET /api/attachments/{id}/content (the files
// of agents with an attachments block, of conversations and of pairs),
// when the store keeps attachments (memory and SQLite do); lookup finds
// an attachment's agent by name (the hosted agents and the ad-hoc
// scenarios).
func mountAttachments(host *server.Host, st store.Store, lookup func(string) (*server.AgentHandler, bool), log *slog.Logger) {
	if as, ok := st.(store.AttachmentStore); ok {
		host.Handle(server.AttachmentContentPattern, server.NewAttachmentHandler(as, lookup, log))
	}
}
