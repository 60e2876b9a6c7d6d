// Package conversation is the conversation bridge: a conversation of
// several agents taking turns, served as one A2A agent whose task is the
// conversation. An A2A client joins as one participant (the scenario's
// external participant, StartingAgentID); the other participants are agents
// of any kind (an OpenAI-compatible model, an HTTP service, a remote A2A
// agent, a command, Go code), built by a Factory.
//
// # Scenarios
//
// A Scenario says who takes part, who the client speaks as and the rules
// (turn policy, MaxTurns, TurnTimeout, OnParticipantFailure). Its JSON
// form is decoded strictly (ParseJSON: unknown members, other cases and
// duplicates are errors) and validated (Validate); every error is a
// *FieldError naming the field ("agents[2].id: duplicate \"bob\"",
// "startingAgentId: \"x\" is not among the agents"). A config64 is the
// base64url (RFC 4648 §5, unpadded; padded is accepted) of that JSON:
// EncodeConfig64, DecodeConfig64 (with a size limit). A scenario that comes
// from a URL is checked against an Allow policy (kinds and URL prefixes
// the operator allowed) before anything is built.
//
// # Semantics (task ↔ conversation)
//
//   - A message without taskId creates the conversation (the task); it is
//     the external participant's first turn. Every later message of the
//     client (with the task's id) is its next turn.
//   - Internal participants then take their turns per the policy. Each
//     turn is a TaskArtifactUpdateEvent (artifactId "turn-N", name the
//     participant's display name, its text and files, lastChunk) and a
//     working TaskStatusUpdateEvent whose message (role agent; metadata
//     participantId, displayName, turn) is appended to the task's history
//     — a status update rather than a Message event, as A2A clients end a
//     stream at a Message. tasks/get returns it all. Every message the
//     client sends is the external participant's turn, whatever its role
//     and metadata (a client cannot speak as an internal participant or
//     the moderator): the agent tells the client's messages by their
//     place in the history (the first entry, and each one right after
//     the input-required status message), not by their content. The turn
//     artifacts are the agent's alone.
//   - When it is the external participant's turn the task is
//     input-required; the status message (metadata system: true) says who
//     spoke last and that the client is expected.
//   - The conversation ends completed when a turn closes it or after
//     MaxTurns turns; tasks/cancel ends it canceled with a final system
//     message (metadata outcome: "canceled", CancelMessage); a
//     participant's failure (its task failed, rejected or canceled, an
//     empty answer, or no answer within TurnTimeout) fails the task with
//     the reason, or with OnParticipantFailure "skip" is recorded as a
//     skipped turn (metadata skipped: true, reason) and the conversation
//     goes on. The last status message of an ended conversation has
//     metadata outcome (completed, failed).
//   - Continuing an ended conversation is answered by the engine:
//     -32004 UnsupportedOperation ("a task in a terminal state cannot be
//     restarted"). Unknown tasks are -32001, unknown methods -32601; push
//     notification config methods -32003 (serve the agent with
//     server.HandlerOptions.NoPush).
//
// # What a participant sees
//
// A participant's turn is one execution of its agent (server.RunAgent)
// against a private in-memory task: the new message holds every turn
// since it last spoke, each text part of another participant prefixed
// "Name: " (metadata names the last speaker); the task's history holds
// the earlier turns (its own as agent messages, the others' as user
// messages), and its ContextHistory the same turns as earlier tasks
// (the others' turns as user messages, its own as the answer), which is
// how bridge/openai builds chat messages. Its answer is its artifacts'
// parts, else its agent and status messages.
//
// # Files
//
// Served with server.HandlerOptions.Attachments (the a2abridge server
// does so for every conversation endpoint), the files the client sends by
// value are stored and replaced by URLs ({base}/api/attachments/{id}/content)
// before the conversation sees them, and the files an internal
// participant answers by value are stored the same way
// (server.TaskUpdater.StoreFiles) before its turn's artifact and message
// are emitted: the conversation's artifacts and history carry file parts
// with URLs, never inline bytes. A participant's file over the size limit
// is that participant's failure (reason "its answer has a file over the
// attachment size limit …"). Without the option, files stay inline.
//
// # Turn policies and markers
//
// Round-robin gives the turn to the next entry of Agents after the last
// speaker, cyclically. With the moderator policy the moderator (internal
// or the client) speaks after every other turn and names the next
// speaker with a first or last text line "next: ID" or a DataPart
// {"next": "ID"}; "next: end" (or "close") ends the conversation. An
// internal moderator that names nobody valid fails (or, with skip, hands
// the decision to the client); the client as moderator is asked again.
// Any turn closes the conversation with a first or last text line "/end"
// (or "/close"), metadata close: true, or a DataPart {"close": true}; an
// internal participant's task metadata close: true does too.
//
// # Restarts
//
// The conversation's state is its task: every acknowledged turn is in the
// task's durable log, and each execution reads the turns from the
// history. A conversation waiting for the client (input-required)
// survives a restart and continues. One interrupted while internal
// participants were taking turns is failed by the engine's recovery when
// the server starts again (server.RecoveryMessage, as for every running
// task); the turns acknowledged before remain in its history. (A graceful
// shutdown fails it likewise after the grace period.)
package conversation
