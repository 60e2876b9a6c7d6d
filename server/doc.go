// Package server is the a2abridge server SDK: write an agent in Go, get a
// conformant A2A 1.0 and 0.3.0 server (JSON-RPC 2.0 and HTTP+JSON over
// HTTP, SSE streaming, the Agent Card, push notifications) on a durable
// store.
//
// The data path of a request, package by package:
//
//	HTTP ─▶ Host (routes /a2a/{name}, cards, authentication, telemetry)
//	     ─▶ binding: internal/binding/jsonrpc or internal/binding/rest (decode this version's wire, edge limits)
//	     ─▶ binding.Handler: the interceptors ─▶ AgentHandler (checks the request) ─▶ Engine ─▶ store.Store
//	                                                                                └─▶ Agent.Execute (through a TaskUpdater)
//	     ◀─ stream events: Engine fan-out ─▶ binding ─▶ SSE (internal/binding/edge), push deliveries
//
// binding.Handler is the interface of the A2A operations (one method per
// operation, A2A 1.0 names and values, whatever version and binding the
// request came in); an AgentHandler implements it for one agent on an
// Engine, and HandlerOptions.Interceptors wrap it (authorization, limits,
// auditing) for every binding and every Go caller alike. The bindings
// read nothing else of an AgentHandler than what it hands them: its
// Handler, name, authentication and retired flags, trace start and card
// signing.
//
// Every task is an ordered, durable log of events; the Task is the fold of
// that log. The Engine appends each event to the store before any client
// sees it, enforces the task state machine, runs agent executions, and
// fans new events out to streams, which can resume from any event.
//
// The lifecycle: NewEngine on a store (it fails the tasks a crashed
// previous process left working, and resumes pending push deliveries, as
// it makes the engine), one AgentHandler per agent added to a Host, the Host
// served by an http.Server, and Engine.Shutdown at SIGTERM (running tasks
// get a grace period, the rest are failed with a reason) before the store
// is closed. examples/reverse is the whole program.
//
//	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
//		art := a2a.Artifact{ArtifactID: "greeting", Parts: []a2a.Part{a2a.NewTextPart("Hello!")}}
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
// A stateless agent may answer a new message with a Message instead of a
// task (MessageResponder, MessageFunc): the AgentHandler asks it after the
// request's checks and before any task is created, and the answer goes
// back to the client without touching the Engine's log or the store.
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
// The Engine is package internal/engine (its doc has the lock order);
// the AgentHandler gives it an execution to run (an engine.Runner: the
// agent's Execute with a TaskUpdater over the engine's Execution handle)
// and the agent's cancellation hooks (engine.Hooks). Three parts of the
// engine meet at each task's state:
//
//   - the executor starts an agent's execution for an accepted message,
//     settles the task when Execute returns, and stops the execution when
//     the task is ended by someone else (a cancel here, or another
//     replica's append seen through a store.Watcher);
//   - the task-log writer is the one write path of every event: the
//     event is folded into the snapshot (the state machine refuses what
//     does not fit), appended to the store, and only then published. A
//     store that appends at once (memory) completes each append at once;
//     the group commit of SQLite and PostgreSQL queues an execution's
//     appends and publishes them in order as they become durable
//     (store.GroupCommitter);
//   - the fan-out hands published events to the task's subscribers, and
//     wakes them when another process appended (store.Watcher: in
//     process for the Replicas of one memory.Store, across processes
//     with LISTEN/NOTIFY for PostgreSQL), so that they read the log from
//     where they are; a subscriber that reads the log tells the store
//     first that this process follows the task (Watcher.WatchTask).
//
// One engine serves one process and N replicas alike: what differs is
// only which optional interfaces the store offers (store.Leaser,
// store.Watcher, store.PushClaimer). The replica tests of this package
// run the same engines on memory.Store Replicas and on PostgreSQL.
//
// The lock order is the engine's (the task's lock, then the engine's
// mutex, then a pipe's; internal/engine's package doc). Agent code
// (Execute, Canceler, CancelMessenger) runs with no engine lock held,
// except CancelMessenger, which runs under the task's lock and must not
// call back into the engine. A TaskUpdater is safe for concurrent use.
package server
