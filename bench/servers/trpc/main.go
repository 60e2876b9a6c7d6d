// Command trpc is the echo agent on trpc.group/trpc-go/trpc-a2a-go v0.2.5:
// taskmanager.NewMemoryTaskManager with a MessageProcessor, served by
// server.NewA2AServer's handler. The processor produces what a2abridge's
// echo agent produces for a short text: for message/send a completed Task
// whose history is the message and whose artifact "echo" repeats its
// parts; for message/stream the Task (submitted), one artifact-update and a
// final completed status-update.
//
// Usage: trpc [--addr 127.0.0.1:0]. It prints `listening on http://ADDR`
// and serves POST /a2a/echo until SIGINT/SIGTERM.
package main

import (
	"context"
	"net/http"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"trpc.group/trpc-go/trpc-a2a-go/log"
	"trpc.group/trpc-go/trpc-a2a-go/protocol"
	"trpc.group/trpc-go/trpc-a2a-go/server"
	"trpc.group/trpc-go/trpc-a2a-go/taskmanager"

	"github.com/a2abridge/a2abridge/bench/servers/internal/peer"
)

type echo struct{}

func (echo) ProcessMessage(ctx context.Context, msg protocol.Message, opts taskmanager.ProcessOptions, h taskmanager.TaskHandler) (*taskmanager.MessageProcessingResult, error) {
	taskID, err := h.BuildTask(nil, msg.ContextID)
	if err != nil {
		return nil, err
	}
	name := "echo"
	art := protocol.Artifact{ArtifactID: protocol.GenerateArtifactID(), Name: &name, Parts: msg.Parts}
	snapshot := func() (*protocol.Task, error) {
		ct, err := h.GetTask(&taskID)
		if err != nil {
			return nil, err
		}
		t := ct.Task()
		msg.TaskID = &taskID
		t.History = []protocol.Message{msg}
		return t, nil
	}
	if !opts.Streaming {
		if err := h.AddArtifact(&taskID, art, true, false); err != nil {
			return nil, err
		}
		if err := h.UpdateTaskState(&taskID, protocol.TaskStateCompleted, nil); err != nil {
			return nil, err
		}
		t, err := snapshot()
		if err != nil {
			return nil, err
		}
		return &taskmanager.MessageProcessingResult{Result: t}, nil
	}
	sub, err := h.SubscribeTask(&taskID)
	if err != nil {
		return nil, err
	}
	go func() {
		defer sub.Close()
		t, err := snapshot()
		if err != nil {
			return
		}
		if sub.Send(protocol.StreamingMessageEvent{Result: t}) != nil {
			return
		}
		// Both notify the task's subscribers, sub among them.
		if h.AddArtifact(&taskID, art, true, false) != nil {
			return
		}
		_ = h.UpdateTaskState(&taskID, protocol.TaskStateCompleted, nil)
	}()
	return &taskmanager.MessageProcessingResult{StreamingEvents: sub}, nil
}

func main() {
	ln, base := peer.Listen("trpc")
	// Warnings and errors only, as every target of the benchmark logs.
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(zapcore.WarnLevel)
	cfg.OutputPaths, cfg.ErrorOutputPaths = []string{"stderr"}, []string{"stderr"}
	if l, err := cfg.Build(); err == nil {
		log.Default = l.Sugar()
	}
	tm, err := taskmanager.NewMemoryTaskManager(echo{})
	peer.Check("trpc", err)
	streaming := true
	card := server.AgentCard{
		Name: "echo", Description: "Echoes each message back as an artifact.", URL: base + "/a2a/echo", Version: "1.0.0",
		Capabilities:      server.AgentCapabilities{Streaming: &streaming},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []server.AgentSkill{{ID: "echo", Name: "Echo", Tags: []string{"echo"}}},
	}
	a2a, err := server.NewA2AServer(card, tm, server.WithJSONRPCEndpoint("/a2a/echo"))
	peer.Check("trpc", err)
	// The SDK's own Start uses 60 s read/write timeouts; the handler is the
	// same either way.
	peer.Serve("trpc", ln, &http.Server{Handler: a2a.Handler()})
}
