// Package remote puts a remote A2A agent behind a2abridge: its Agent is a
// server.Agent that forwards each message, through the client package, to
// an agent found by its Agent Card URL, whatever protocol version (0.3 or
// 1.0) and binding (JSON-RPC or HTTP+JSON) the card offers, and reports
// the remote task's events as its own task's. It is the "a2a" kind of
// `a2abridge serve --config`:
//
//	agents:
//	  weather:
//	    kind: a2a
//	    url: https://agents.example.com/weather   # or the card URL itself
//	    credentials: {bearer_token: "${WEATHER_TOKEN}"}
//	    timeout: 30s
//
// and a library user's building block:
//
//	ag, err := remote.New(remote.Config{URL: "https://agents.example.com/weather"})
//	if err != nil { … }
//	defer ag.Close()
//	rc, err := ag.RemoteCard(ctx) // fetched once, then cached
//	if err != nil { … }
//	host.Add(server.NewHandler(engine, "weather", ag, remote.DeriveCard(rc), server.HandlerOptions{}))
//
// What it does (A2A 1.0 §3.1; A2A 0.3.0 §7):
//
//   - Streaming is passed through event by event, as the remote emits
//     it, when the remote card declares streaming (else a blocking
//     SendMessage): status-updates with their messages, artifact-updates
//     with append and lastChunk, agent messages, all under this task's id
//     and contextId. A remote answer that is a Message completes the task
//     with that message.
//   - The remote task's state becomes this task's: completed, failed,
//     canceled, rejected; input-required and auth-required too, and the
//     caller's next message on this task goes to the same remote task
//     (whose ids are kept in the task's metadata under MetadataKey).
//   - tasks/cancel is forwarded to the remote task (Agent.Cancel), and
//     cancelling the execution aborts the calls in flight.
//   - A stream that drops is resumed by the client (SubscribeToTask with
//     Last-Event-ID: every event once against servers with a2abridge's
//     event log; otherwise the snapshot it gets).
//   - Failures (remote unreachable, HTTP or A2A errors, malformed
//     answers, timeouts) fail the task with a status message naming the
//     remote's URL and the error; credentials never appear in it.
//
// The message sent to the remote carries the caller's parts, metadata,
// extensions and accepted output modes, but not the caller's push
// notification config (a2abridge serves that itself) nor its
// referenceTaskIds (ids of this server). Its messageId is derived from
// this task's id and the caller's messageId: a retry is the same message
// to the remote, and callers who pick the same id do not meet there. A new
// task starts a new remote task; when the caller reuses a contextId, it
// goes to the remote context of the latest earlier task of that caller in
// that context (server.TaskUpdater.ContextHistory), so the remote sees one
// conversation too.
package remote
