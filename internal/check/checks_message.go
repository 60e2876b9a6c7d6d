package check

import (
	"context"
	"encoding/base64"
	"slices"
	"time"
)

func init() {
	register(
		&Check{ID: "message.send", Category: "message", Section: "§7.1", Level: Must,
			Title:          "message/send returns a Task or a Message",
			Requirement:    "Agents MUST implement message/send (§11.1.2); its result is a Task (id, contextId, status with a valid state) or a Message from the agent (§7.1, §6.1, §6.4).",
			Recommendation: "Answer message/send with a Task (kind \"task\") or a Message (kind \"message\", role \"agent\").",
			Run:            checkMsgSend},
		&Check{ID: "message.blocking", Category: "message", Section: "§7.1.1", Level: Should,
			Title:          "A blocking send waits for a final or interrupted state",
			Requirement:    "configuration.blocking: true means the client waits for the task to complete (§7.1.1): the answer is a Task in a terminal or interrupted (input-required, auth-required) state, or a Message.",
			Recommendation: "With blocking: true (the default), answer only once the task is completed, failed, canceled, rejected or waiting for input.",
			Run:            checkMsgBlocking},
		&Check{ID: "message.non-blocking", Category: "message", Section: "§7.1.1", Level: Should,
			Title:          "A non-blocking send returns at once",
			Requirement:    "configuration.blocking: false lets the client poll with tasks/get (§7.1, §7.1.1): the server answers with the task as it is, without waiting for completion.",
			Recommendation: "With blocking: false, answer with the submitted/working task right away and keep working in the background.",
			Run:            checkMsgNonBlocking},
		&Check{ID: "message.history-length", Category: "message", Section: "§7.1.1", Level: Should,
			Title:          "historyLength 0 returns no history",
			Requirement:    "configuration.historyLength is the number of most recent messages of the task's history to return (§7.1.1): 0 means none (A2A 1.0 §3.2.4 makes this explicit).",
			Recommendation: "Return at most historyLength messages; for 0 omit history (or send an empty array).",
			Run:            checkMsgHistoryLength},
		&Check{ID: "message.continue", Category: "message", Section: "§7.1", Level: Must,
			Title:          "A task waiting for input can be continued",
			Requirement:    "message/send continues an existing interaction (§7.1): a message with the taskId (and contextId) of an input-required task continues that task (§9.4).",
			Recommendation: "Accept a message whose taskId names an input-required/auth-required task and answer with that task.",
			Run:            checkMsgContinue},
		&Check{ID: "message.terminal-task", Category: "message", Section: "§7.1", Level: Must,
			Title:          "A message to a terminal task is rejected",
			Requirement:    "A task which has reached a terminal state (completed, canceled, rejected, failed) can't be restarted; sending a message to such a task will result in an error (§7.1, §6.1).",
			Recommendation: "Answer a message whose taskId names a terminal task with a JSON-RPC error (A2A 1.0 names -32004 UnsupportedOperationError).",
			Run:            checkMsgTerminalTask},
		&Check{ID: "message.unknown-task", Category: "message", Section: "§8.2", Level: Should,
			Title:          "A message to an unknown task is answered -32001",
			Requirement:    "A taskId that does not correspond to an existing task is answered -32001 TaskNotFoundError (§8.2); servers SHOULD use these codes.",
			Recommendation: "Answer -32001 when message.taskId names no task (do not create a task with a client-chosen id).",
			Run:            checkMsgUnknownTask},
		&Check{ID: "message.context-mismatch", Category: "message", Section: "§7.1", Level: Should,
			Title:          "A taskId/contextId mismatch is rejected",
			Requirement:    "A message continuing a task carries that task's contextId; a different contextId is an invalid request (A2A 1.0 §3.4.3: agents MUST reject mismatching contextId and taskId).",
			Recommendation: "Reject a message whose contextId differs from its task's contextId with -32602.",
			Run:            checkMsgContextMismatch},

		&Check{ID: "parts.text", Category: "parts", Section: "§6.5.1", Level: Must,
			Title:          "TextParts are accepted",
			Requirement:    "A Message's parts are TextPart, FilePart or DataPart (§6.5); TextPart conveys plain text (§6.5.1).",
			Recommendation: "Accept messages made of text parts.",
			Run: func(ctx context.Context, p *Probe) Result {
				return checkPart(ctx, p, "two TextParts", map[string]any{"kind": "text", "text": "second part", "metadata": map[string]any{"a2a-check": true}})
			}},
		&Check{ID: "parts.data", Category: "parts", Section: "§6.5.3", Level: Must,
			Title:          "DataParts are accepted",
			Requirement:    "DataPart conveys structured JSON data (§6.5.3); an agent that cannot use it answers -32005 ContentTypeNotSupportedError rather than failing to parse it.",
			Recommendation: "Decode {\"kind\":\"data\",\"data\":{…}} parts.",
			Run: func(ctx context.Context, p *Probe) Result {
				return checkPart(ctx, p, "a DataPart", map[string]any{"kind": "data", "data": map[string]any{"a2a-check": true, "n": 1}})
			}},
		&Check{ID: "parts.file-bytes", Category: "parts", Section: "§6.6.1", Level: Must,
			Title:          "FileParts with bytes are accepted",
			Requirement:    "A FilePart carries a file by value (FileWithBytes: base64 bytes, optional name and mimeType, §6.6.1).",
			Recommendation: "Decode {\"kind\":\"file\",\"file\":{\"bytes\":…}} parts (or answer -32005 if files are not supported).",
			Run: func(ctx context.Context, p *Probe) Result {
				return checkPart(ctx, p, "a FilePart with bytes", map[string]any{"kind": "file", "file": map[string]any{
					"name": "a2a-check.txt", "mimeType": "text/plain", "bytes": base64.StdEncoding.EncodeToString([]byte("hello from a2abridge check\n"))}})
			}},
		&Check{ID: "parts.file-uri", Category: "parts", Section: "§6.6.2", Level: Must,
			Title:          "FileParts with uri are accepted",
			Requirement:    "A FilePart carries a file by reference (FileWithUri: uri, optional name and mimeType, §6.6.2).",
			Recommendation: "Decode {\"kind\":\"file\",\"file\":{\"uri\":…}} parts (or answer -32005 if files are not supported).",
			Run: func(ctx context.Context, p *Probe) Result {
				return checkPart(ctx, p, "a FilePart with uri", map[string]any{"kind": "file", "file": map[string]any{
					"name": "a2a-check.txt", "mimeType": "text/plain", "uri": "https://example.com/a2a-check.txt"}})
			}},
		&Check{ID: "parts.file-both", Category: "parts", Section: "§6.6", Level: Should,
			Title:          "A file with both bytes and uri is rejected",
			Requirement:    "A file is either FileWithBytes or FileWithUri, never both (§6.6: bytes and uri exclude each other); servers MUST rigorously validate parameters (§10.2), so this is -32602.",
			Recommendation: "Answer a file that has both bytes and uri (or neither) with -32602 Invalid params.",
			Run:            checkPartFileBoth},
	)
}

func checkMsgSend(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	r := p.sendText(ctx, p.opts.Text, nil)
	m := r.resultObj()
	switch {
	case r.ex.Status == 0:
		return fail("message/send: %s", r.ex.Err).with(r.ex)
	case r.Err != nil || m == nil:
		return fail("message/send answered %s", r.describe()).with(r.ex)
	}
	switch str(m, "kind") {
	case "task":
		var missing []string
		for _, f := range []string{"id", "contextId"} {
			if str(m, f) == "" {
				missing = append(missing, f)
			}
		}
		st := str(m, "status", "state")
		if !slices.Contains(taskStates, st) {
			missing = append(missing, "a valid status.state (got "+quote(st)+")")
		}
		if len(missing) > 0 {
			return fail("message/send returned a Task without %v", missing).with(r.ex)
		}
		return pass("message/send returned a Task (state %s)", st).with(r.ex)
	case "message":
		if str(m, "messageId") == "" {
			return fail("message/send returned a Message without messageId").with(r.ex)
		}
		if role := str(m, "role"); role != "agent" {
			return fail("message/send returned a Message with role %q, not \"agent\"", role).with(r.ex)
		}
		return pass("message/send returned a Message from the agent").with(r.ex)
	}
	return fail("message/send returned a result of kind %q, neither \"task\" nor \"message\"", str(m, "kind")).with(r.ex)
}

var taskStates = []string{"submitted", "working", "input-required", "completed", "canceled", "failed", "rejected", "auth-required", "unknown"}

func quote(s string) string { return "\"" + s + "\"" }

func checkMsgBlocking(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	r := p.sendText(ctx, p.opts.Text, map[string]any{"blocking": true})
	m := r.resultObj()
	switch {
	case r.Err != nil || m == nil:
		return fail("message/send (blocking:true) answered %s", r.describe()).with(r.ex)
	case str(m, "kind") == "message":
		return pass("the agent answered with a Message").with(r.ex)
	}
	st := str(m, "status", "state")
	if terminal(st) || interrupted(st) {
		return pass("message/send (blocking:true) returned the task %s after %s", st, roundDur(r.ex.Duration)).with(r.ex)
	}
	return fail("message/send (blocking:true) returned while the task was still %s", st).with(r.ex)
}

func checkMsgNonBlocking(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	r := p.sendText(ctx, p.opts.LongText, map[string]any{"blocking": false})
	m := r.resultObj()
	switch {
	case r.Err != nil || m == nil:
		return fail("message/send (blocking:false) answered %s", r.describe()).with(r.ex)
	case str(m, "kind") == "message":
		return pass("the agent answered with a Message").with(r.ex)
	}
	st := str(m, "status", "state")
	switch {
	case !terminal(st) && !interrupted(st):
		return pass("message/send (blocking:false) returned the task %s after %s", st, roundDur(r.ex.Duration)).with(r.ex)
	case r.ex.Duration < time.Second:
		return pass("the task was already %s when the answer came (%s): the agent is fast; not conclusive", st, roundDur(r.ex.Duration)).with(r.ex)
	}
	return fail("message/send (blocking:false) took %s and returned the task %s: it waited for the task", roundDur(r.ex.Duration), st).with(r.ex)
}

// historyLen returns the number of messages in a task's history.
func historyLen(m map[string]any) int {
	h, _ := m["history"].([]any)
	return len(h)
}

func checkMsgHistoryLength(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	r := p.sendText(ctx, p.opts.Text, map[string]any{"blocking": true, "historyLength": 0})
	m := r.resultObj()
	switch {
	case r.Err != nil || m == nil:
		return fail("message/send (historyLength 0) answered %s", r.describe()).with(r.ex)
	case str(m, "kind") != "task":
		return notApplicable("the agent answers with a Message, which has no history")
	}
	if n := historyLen(m); n > 0 {
		return fail("message/send with historyLength 0 returned %d message(s) of history", n).with(r.ex)
	}
	return pass("message/send with historyLength 0 returned no history").with(r.ex)
}

func checkMsgContinue(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	t, res := p.interruptedTask(ctx)
	if res != nil {
		return *res
	}
	r := p.call(ctx, "message/send", sendParams(message(t.ID, t.ContextID, textPart(p.opts.Text)), map[string]any{"blocking": true}))
	m := r.resultObj()
	switch {
	case r.Err != nil || m == nil:
		return fail("continuing the %s task %s answered %s", t.State, t.ID, r.describe()).with(t.Resp.ex, r.ex)
	case str(m, "kind") == "task" && str(m, "id") == t.ID:
		return pass("the %s task continued: now %s", t.State, str(m, "status", "state")).with(t.Resp.ex, r.ex)
	case str(m, "kind") == "task":
		return fail("continuing task %s returned another task, %s", t.ID, str(m, "id")).with(t.Resp.ex, r.ex)
	}
	return pass("the agent answered the continuation with a %s", str(m, "kind")).with(t.Resp.ex, r.ex)
}

func checkMsgTerminalTask(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	t, res := p.terminalTask(ctx, true)
	if res != nil {
		return *res
	}
	r := p.call(ctx, "message/send", sendParams(message(t.ID, t.ContextID, textPart(p.opts.Text)), nil))
	switch {
	case r.ex.Status == 0:
		return fail("message/send: %s", r.ex.Err).with(r.ex)
	case r.Err != nil:
		return pass("a message to the %s task was rejected: %s", t.State, r.describe()).with(r.ex)
	}
	return fail("a message to the %s task %s was accepted: %s", t.State, t.ID, r.describe()).with(t.Resp.ex, r.ex)
}

func checkMsgUnknownTask(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	id := "a2a-check-unknown-" + newUUID()
	r := p.call(ctx, "message/send", sendParams(message(id, "", textPart(p.opts.Text)), map[string]any{"blocking": false}))
	if r.HasResult && r.Err == nil {
		return fail("a message to the unknown task %s was accepted: %s", id, r.describe()).with(r.ex)
	}
	return expectCode(r, "a message to an unknown taskId", -32001)
}

func checkMsgContextMismatch(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	t, res := p.interruptedTask(ctx)
	if res != nil {
		return *res
	}
	r := p.call(ctx, "message/send", sendParams(message(t.ID, "a2a-check-other-context-"+newUUID(), textPart(p.opts.Text)), map[string]any{"blocking": true}))
	switch {
	case r.ex.Status == 0:
		return fail("message/send: %s", r.ex.Err).with(r.ex)
	case r.Err != nil:
		return pass("a message with the task's id and another contextId was rejected: %s", r.describe()).with(r.ex)
	}
	return fail("a message with taskId %s and a contextId that is not the task's was accepted: %s", t.ID, r.describe()).with(t.Resp.ex, r.ex)
}

func checkPart(ctx context.Context, p *Probe, what string, part map[string]any) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	r := p.call(ctx, "message/send", sendParams(message("", "", textPart(p.opts.Text), part), map[string]any{"blocking": false}))
	switch {
	case r.ex.Status == 0:
		return fail("message/send with %s: %s", what, r.ex.Err).with(r.ex)
	case r.code() == -32005:
		return pass("the agent declined %s cleanly: %s", what, r.describe()).with(r.ex)
	case r.Err != nil:
		return fail("message/send with %s answered %s", what, r.describe()).with(r.ex)
	case r.resultObj() != nil:
		return pass("message/send with %s was accepted: %s", what, r.describe()).with(r.ex)
	}
	return fail("message/send with %s answered %s", what, r.describe()).with(r.ex)
}

func checkPartFileBoth(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	part := map[string]any{"kind": "file", "file": map[string]any{"name": "a2a-check.txt", "mimeType": "text/plain",
		"bytes": base64.StdEncoding.EncodeToString([]byte("hello\n")), "uri": "https://example.com/a2a-check.txt"}}
	r := p.callOpt(ctx, "message/send", sendParams(message("", "", textPart(p.opts.Text), part), map[string]any{"blocking": false}), reqOpt{invalid: true})
	switch {
	case r.HasResult && r.Err == nil:
		return fail("a file with both bytes and uri was accepted: %s", r.describe()).with(r.ex)
	case r.code() == -32600:
		return pass("a file with both bytes and uri was rejected: %s", r.describe()).with(r.ex)
	}
	return expectCode(r, "a file with both bytes and uri", -32602)
}
