// Package server is the a2abridge server SDK: write an agent in Go, get a
// conformant A2A 0.3.0 server (JSON-RPC 2.0 over HTTP, SSE streaming, the
// Agent Card, push notifications) on a durable store.
//
// The data path of a request:
//
//	HTTP ─▶ Host (routes /a2a/{name}, cards) ─▶ JSON-RPC transport (decode, authenticate)
//	     ─▶ Handler (one method per A2A operation) ─▶ Engine ─▶ store.Store
//	                                                    └─▶ Agent.Execute (through a TaskUpdater)
//
// Every task is an ordered, durable log of events; the Task is the fold of
// that log. The Engine appends each event to the store before any client
// sees it, enforces the task state machine, runs agent executions, and
// fans new events out to streams, which can resume from any event.
//
// The lifecycle: NewEngine on a store (it fails the tasks a crashed
// previous process left working, and resumes pending push deliveries, as
// it makes the engine), one Handler per agent added to a Host, the Host
// served by an http.Server, and Engine.Shutdown at SIGTERM (running tasks
// get a grace period, the rest are failed with a reason) before the store
// is closed. examples/reverse is the whole program.
//
//	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
//		art := a2a.Artifact{ArtifactID: "greeting", Parts: []a2a.Part{a2a.TextPart{Text: "Hello!"}}}
//		if err := t.AddArtifact(ctx, art, false, true); err != nil {
//			return err
//		}
//		return t.Complete(ctx, "")
//	})
//	eng, err := server.NewEngine(ctx, memory.New(), server.EngineOptions{})
//	if err != nil {
//		return err
//	}
//	host := server.NewHost(server.HostOptions{})
//	host.Add(server.NewHandler(eng, "greeter", agent, card, server.HandlerOptions{}))
//	srv := &http.Server{Addr: "127.0.0.1:9090", Handler: host}
//	go srv.ListenAndServe()
//	…
//	eng.Shutdown(graceCtx) // then srv.Shutdown, then close the store
//
// The package's Example runs this against a test server.
//
// An agent's JSON-RPC endpoint can serve methods of one's own beside the
// A2A methods (extension methods such as bridge/openai's ai/chat):
// HandlerOptions.Methods, each a Method answering a result or an SSE
// stream of results.
//
// Files that clients send by value can be kept by the server and passed
// on by URL instead (HandlerOptions.Attachments, AttachmentOptions), and
// served to the task's owner by NewAttachmentHandler at
// {base}/api/attachments/{id}/content.
//
// Concurrency: a task's appends are serialised by a lock per task (striped
// by id); the Engine's maps are guarded by one mutex, which is taken while
// a task's lock may be held, never the other way round; subscribers are
// handed events without blocking the writer (a subscriber that falls
// behind re-reads the log). A TaskUpdater is safe for concurrent use.
package server
