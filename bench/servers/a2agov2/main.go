// Command a2agov2 is the echo agent on the official A2A Go SDK v2,
// github.com/a2aproject/a2a-go/v2 v2.4.0 (A2A 1.0), with its defaults:
// a2asrv.NewHandler (its in-memory task store and event queues) served by
// both of the SDK's A2A 1.0 bindings:
//
//	POST /a2a/echo                              JSON-RPC (a2asrv.NewJSONRPCHandler)
//	     /a2a/echo/rest/message:send, …         HTTP+JSON (a2asrv.NewRESTHandler)
//	GET  /a2a/echo/.well-known/agent-card.json  its card (supportedInterfaces: both)
//
// and over the SDK's gRPC binding (a2agrpc/v1, grpc-go with its defaults)
// on a port of its own on the same host, printed first as `over gRPC at
// ADDR`.
//
// The executor writes the same events as a2abridge's echo agent for a
// short text: the Task (submitted), one artifact-update "echo" repeating
// the parts, and a completed status-update.
//
// Usage: a2agov2 [--addr 127.0.0.1:0]. It prints `listening on
// http://ADDR` and serves until SIGINT/SIGTERM.
package main

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"

	"github.com/a2abridge/a2abridge/bench/servers/internal/peer"
)

type echo struct{}

func (echo) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		ev := &a2a.TaskArtifactUpdateEvent{
			TaskID: ec.TaskID, ContextID: ec.ContextID, LastChunk: true,
			Artifact: &a2a.Artifact{ID: a2a.NewArtifactID(), Name: "echo", Parts: ec.Message.Parts},
		}
		if !yield(ev, nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (echo) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

func main() {
	ln, base := peer.Listen("a2agov2")
	base += "/a2a/echo"
	// Warnings and errors only, as every target of the benchmark logs.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	card := &a2a.AgentCard{
		Name: "echo", Description: "Echoes each message back as an artifact.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(base, a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface(base+"/rest", a2a.TransportProtocolHTTPJSON),
		},
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "Returns the parts it is sent.", Tags: []string{"echo"}}},
	}
	handler := a2asrv.NewHandler(echo{}, a2asrv.WithLogger(logger))
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	gln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	peer.Check("a2agov2", err)
	gs := grpc.NewServer()
	a2agrpcv1.NewHandler(handler).RegisterWith(gs)
	go func() { _ = gs.Serve(gln) }()
	defer gs.Stop()
	fmt.Printf("serving A2A 1.0 over gRPC at %s\n", gln.Addr())
	mux := http.NewServeMux()
	mux.Handle("/a2a/echo", a2asrv.NewJSONRPCHandler(handler))
	mux.Handle("/a2a/echo/rest/", http.StripPrefix("/a2a/echo/rest", a2asrv.NewRESTHandler(handler)))
	mux.Handle("/a2a/echo"+a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	peer.Serve("a2agov2", ln, &http.Server{Handler: mux, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelError)})
}
