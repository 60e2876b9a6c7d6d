// Command a2ago is the echo agent on the official A2A Go SDK,
// github.com/a2aproject/a2a-go v0.3.15: a2asrv.NewHandler (its default
// in-memory task store and event queues) behind a2asrv.NewJSONRPCHandler.
// The executor writes the same events as a2abridge's echo agent for a
// short text: the Task (submitted), one artifact-update "echo" repeating the
// parts, and a final completed status-update.
//
// Usage: a2ago [--addr 127.0.0.1:0]. It prints `listening on http://ADDR`
// and serves POST /a2a/echo (and POST /) until SIGINT/SIGTERM.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/a2abridge/a2abridge/bench/servers/internal/peer"
)

type echo struct{}

func (echo) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if rc.StoredTask == nil {
		if err := q.Write(ctx, a2a.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
	}
	ev := &a2a.TaskArtifactUpdateEvent{
		TaskID: rc.TaskID, ContextID: rc.ContextID, LastChunk: true,
		Artifact: &a2a.Artifact{ID: a2a.NewArtifactID(), Name: "echo", Parts: rc.Message.Parts},
	}
	if err := q.Write(ctx, ev); err != nil {
		return err
	}
	done := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCompleted, nil)
	done.Final = true
	return q.Write(ctx, done)
}

func (echo) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

func main() {
	ln, base := peer.Listen("a2ago")
	// Warnings and errors only, as every target of the benchmark logs.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	card := &a2a.AgentCard{
		Name: "echo", Description: "Echoes each message back as an artifact.", URL: base + "/a2a/echo",
		PreferredTransport: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0", Version: "1.0.0",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "Returns the parts it is sent.", Tags: []string{"echo"}}},
	}
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(echo{}, a2asrv.WithLogger(logger)))
	mux := http.NewServeMux()
	mux.Handle("/a2a/echo", rpc)
	mux.Handle("/{$}", rpc)
	mux.Handle("/a2a/echo"+a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	peer.Serve("a2ago", ln, &http.Server{Handler: mux, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelError)})
}
