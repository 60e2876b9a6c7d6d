package check

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

func init() {
	register(
		&Check{ID: "stream.headers", Category: "stream", Section: "§3.3.1", Level: Must,
			Title:          "message/stream answers 200 text/event-stream",
			Requirement:    "The server responds with HTTP 200 OK and Content-Type: text/event-stream (§3.3.1, §7.2).",
			Recommendation: "Answer message/stream with 200 and Content-Type: text/event-stream, then SSE events.",
			Run:            checkStreamHeaders},
		&Check{ID: "stream.frames", Category: "stream", Section: "§3.3.1", Level: Must, Final: true,
			Title:          "Every SSE event is a JSON-RPC response with the request's id",
			Requirement:    "Each SSE data field contains a complete JSON-RPC 2.0 Response object (a SendStreamingMessageResponse) whose id matches the id of the request (§3.3.1, §7.2.1).",
			Recommendation: "Write each event as `data: {\"jsonrpc\":\"2.0\",\"id\":<request id>,\"result\":…}` followed by a blank line.",
			Run:            checkStreamFrames},
		&Check{ID: "stream.first-event", Category: "stream", Section: "§7.2", Level: Should,
			Title:          "A new task's stream starts with the Task",
			Requirement:    "The stream of a message that starts a task opens with the Task (then status and artifact updates), as in §9.3; a stream of a direct reply is one Message.",
			Recommendation: "Send the Task (kind \"task\") as the first event of message/stream for a new task.",
			Run:            checkStreamFirstEvent},
		&Check{ID: "stream.task-ids", Category: "stream", Section: "§7.2.2", Level: Must,
			Title:          "Every event belongs to the stream's task",
			Requirement:    "Status and artifact updates carry the taskId and contextId of the task they update (§7.2.2, §7.2.3); one stream concerns one task.",
			Recommendation: "Set taskId and contextId of every update to those of the Task of the stream.",
			Run:            checkStreamTaskIDs},
		&Check{ID: "stream.final-last", Category: "stream", Section: "§7.2", Level: Must,
			Title:          "The last event is a status-update with final: true",
			Requirement:    "The server signals the end of a stream with final: true on a TaskStatusUpdateEvent (§7.2.2; Streaming & Async §1), in a terminal or interrupted state; nothing follows it.",
			Recommendation: "End every stream with a status-update {\"final\":true} and send nothing after it.",
			Run:            checkStreamFinalLast},
		&Check{ID: "stream.closed", Category: "stream", Section: "§7.2", Level: Should,
			Title:          "The server closes the stream after the final event",
			Requirement:    "After sending a final: true event, the server closes the SSE connection for that request (§9.3; Streaming & Async §1).",
			Recommendation: "Close the response (end the HTTP body) right after the final event.",
			Run:            checkStreamClosed},
		&Check{ID: "stream.resubscribe-running", Category: "stream", Section: "§7.9", Level: Must,
			Title:          "tasks/resubscribe follows a running task to its end",
			Requirement:    "tasks/resubscribe reconnects a client to the SSE stream of an ongoing task (§7.9, requires capabilities.streaming): events of that task as JSON-RPC responses, ending with the final status-update.",
			Recommendation: "Answer tasks/resubscribe of a running task with an SSE stream of its updates that ends with a final status-update (here: canceled).",
			Run:            checkStreamResubscribeRunning},
		&Check{ID: "stream.resubscribe-finished", Category: "stream", Section: "§7.9", Level: Should,
			Title:          "tasks/resubscribe of a finished task delivers its final state",
			Requirement:    "A client that lost its stream resubscribes (§7.9); if the task finished meanwhile it must still learn the outcome: the stream delivers the terminal state and ends. The task exists, so -32001 TaskNotFoundError is wrong (§8.2).",
			Recommendation: "Answer tasks/resubscribe of a finished task with its final state (the Task, or a final status-update) and close the stream.",
			Run:            checkStreamResubscribeFinished},
		&Check{ID: "stream.resume", Category: "stream", Section: "§7.9", Level: May,
			Title:          "Resubscribing with Last-Event-ID resumes after that event",
			Requirement:    "Whether a server backfills missed events is implementation-dependent (§7.9); SSE ids and Last-Event-ID (W3C SSE) allow resuming without loss.",
			Recommendation: "Give events resumable ids (e.g. a per-task sequence number) and replay the events after Last-Event-ID on tasks/resubscribe.",
			Run:            checkStreamResume},
	)
}

// recordedStream is a complete message/stream of Text (cached).
func (p *Probe) recordedStream(ctx context.Context) (*Exchange, *Result) {
	if r := p.needCapability("streaming"); r != nil {
		return nil, r
	}
	return cached(p, "stream", func() (*Exchange, *Result) {
		return p.stream(ctx, "message/stream", sendParams(message("", "", textPart(p.opts.Text)), nil), streamOpt{}), nil
	})
}

// streamEvents parses a recorded stream's events.
func streamEvents(e *Exchange) []*rpcResp {
	out := make([]*rpcResp, len(e.Events))
	for i, ev := range e.Events {
		out[i] = parseRPC(ev.Data)
	}
	return out
}

// isSSE reports whether the exchange was answered with an event stream.
func isSSE(e *Exchange) bool {
	if e.GRPCStatus != "" {
		return e.Stream && e.Status == http.StatusOK // a gRPC server stream that opened
	}
	return e.Status == http.StatusOK && mediaType(e.RespContentType()) == "text/event-stream"
}

// streamFailure describes why a stream exchange is not a usable stream
// ("" if it is one).
func streamFailure(e *Exchange) string {
	switch {
	case e.Status == 0:
		return e.Err
	case !isSSE(e):
		r := parseRPC(e.RespBody)
		return fmt.Sprintf("%s, %s", statusText(e), r.describe())
	case len(e.Events) == 0:
		if e.Err != "" {
			return "no event: " + e.Err
		}
		return "an event stream without events"
	}
	if r := parseRPC(e.Events[0].Data); r.Err != nil && len(e.Events) == 1 {
		return "one SSE event with " + r.describe()
	}
	return ""
}

func checkStreamHeaders(ctx context.Context, p *Probe) Result {
	e, res := p.recordedStream(ctx)
	if res != nil {
		return *res
	}
	switch {
	case e.Status == 0:
		return fail("message/stream: %s", e.Err).with(e)
	case e.Status != http.StatusOK:
		return fail("message/stream answered HTTP %d", e.Status).with(e)
	case !isSSE(e):
		return fail("message/stream answered Content-Type %q, not text/event-stream: %s", e.RespContentType(), parseRPC(e.RespBody).describe()).with(e)
	}
	return pass("HTTP 200, Content-Type %s", e.RespContentType()).with(e)
}

func checkStreamFrames(ctx context.Context, p *Probe) Result {
	if _, res := p.recordedStream(ctx); res != nil {
		return *res
	}
	var msgs []string
	var bad []*Exchange
	n, streams := 0, 0
	for _, e := range p.exchanges() {
		if !e.Stream || !isSSE(e) || e.Check == "cleanup" {
			continue
		}
		streams++
		badHere := false
		for i, ev := range e.Events {
			n++
			prob := shapeProblem(ev.Data, e.ReqID)
			if prob == "" {
				continue
			}
			badHere = true
			if len(msgs) < 4 {
				msgs = append(msgs, fmt.Sprintf("%s #%d event %d: %s", e.RPCMethod, e.Seq, i+1, prob))
			}
		}
		if badHere {
			bad = append(bad, e)
		}
	}
	if n == 0 {
		return skip("no SSE event was received")
	}
	if len(bad) > 0 {
		return fail("%s", strings.Join(msgs, "; ")).with(firstN(bad, 2)...)
	}
	return pass("all %d events of %d streams are JSON-RPC responses with the request's id", n, streams)
}

func checkStreamFirstEvent(ctx context.Context, p *Probe) Result {
	e, res := p.recordedStream(ctx)
	if res != nil {
		return *res
	}
	if f := streamFailure(e); f != "" {
		return skip("message/stream did not stream: %s", f)
	}
	first := streamEvents(e)[0].resultObj()
	switch k := str(first, "kind"); k {
	case "task", "message":
		return pass("the first event is a %s", k).with(e)
	default:
		return fail("the first event is a %s, not the Task", kindOrNone(k)).with(e)
	}
}

func kindOrNone(k string) string {
	if k == "" {
		return "result without kind"
	}
	return k
}

func checkStreamTaskIDs(ctx context.Context, p *Probe) Result {
	e, res := p.recordedStream(ctx)
	if res != nil {
		return *res
	}
	if f := streamFailure(e); f != "" {
		return skip("message/stream did not stream: %s", f)
	}
	var taskID, contextID string
	for i, r := range streamEvents(e) {
		m := r.resultObj()
		var id, cid string
		switch str(m, "kind") {
		case "task":
			id, cid = str(m, "id"), str(m, "contextId")
		case "status-update", "artifact-update":
			id, cid = str(m, "taskId"), str(m, "contextId")
		default:
			continue
		}
		if id == "" {
			return fail("event %d (%s) has no task id", i+1, str(m, "kind")).with(e)
		}
		if taskID == "" {
			taskID, contextID = id, cid
			continue
		}
		if id != taskID {
			return fail("event %d belongs to task %s; the stream's task is %s", i+1, id, taskID).with(e)
		}
		if cid != contextID {
			return fail("event %d has contextId %q; the stream's task has %q", i+1, cid, contextID).with(e)
		}
	}
	if taskID == "" {
		return notApplicable("the stream carried no task (a direct Message reply)")
	}
	return pass("all %d events belong to task %s", len(e.Events), taskID).with(e)
}

// finalProblem says why a stream does not end properly with a final
// status-update ("" if it does).
func finalProblem(e *Exchange) string {
	evs := streamEvents(e)
	for i, r := range evs {
		m := r.resultObj()
		isFinal := endsStream(r, m)
		if !isFinal {
			continue
		}
		if i != len(evs)-1 {
			return fmt.Sprintf("event %d (%s) is final but %d more event(s) follow", i+1, summarizeResult(m, r.Result), len(evs)-1-i)
		}
		if str(m, "kind") == "status-update" && !terminal(str(m, "status", "state")) && !interrupted(str(m, "status", "state")) {
			return fmt.Sprintf("the final status-update is in state %s, neither terminal nor interrupted", str(m, "status", "state"))
		}
		return ""
	}
	last := evs[len(evs)-1]
	how := "the server closed the stream"
	if !e.Closed {
		how = "the stream stayed open (" + e.Err + ")"
	}
	return fmt.Sprintf("no event has final: true; the last is %s and %s", last.describe(), how)
}

func checkStreamFinalLast(ctx context.Context, p *Probe) Result {
	e, res := p.recordedStream(ctx)
	if res != nil {
		return *res
	}
	if f := streamFailure(e); f != "" {
		return skip("message/stream did not stream: %s", f)
	}
	if prob := finalProblem(e); prob != "" {
		return fail("%s", prob).with(e)
	}
	return pass("%d events; the last is %s", len(e.Events), streamEvents(e)[len(e.Events)-1].describe()).with(e)
}

func checkStreamClosed(ctx context.Context, p *Probe) Result {
	e, res := p.recordedStream(ctx)
	if res != nil {
		return *res
	}
	if f := streamFailure(e); f != "" {
		return skip("message/stream did not stream: %s", f)
	}
	switch {
	case !e.FinalSeen && e.Closed:
		return skip("the stream had no final event (see stream.final-last)")
	case !e.FinalSeen:
		return skip("the stream had no final event and stayed open (see stream.final-last)")
	case e.Closed:
		return pass("the server closed the stream %s after the final event", roundDur(e.CloseDelay)).with(e)
	}
	return fail("the stream was still open 2 s after the final event").with(e)
}

func checkStreamResubscribeRunning(ctx context.Context, p *Probe) Result {
	if r := p.needCapability("streaming"); r != nil {
		return *r
	}
	t, res := p.runningTask(ctx)
	if res != nil {
		return *res
	}
	// Cancel the task once the first event arrived (or after 1.5 s without
	// one), so the stream's end is reached whatever the task's length.
	var cancelResp *rpcResp
	onEvent, wait := cancelAfterFirstEvent(ctx, func() {
		cancelResp = p.call(ctx, "tasks/cancel", map[string]any{"id": t.ID})
	})
	e := p.stream(ctx, "tasks/resubscribe", map[string]any{"id": t.ID}, streamOpt{onEvent: onEvent})
	wait()
	ev := []*Exchange{t.Resp.ex, e}
	if cancelResp != nil {
		ev = append(ev, cancelResp.ex)
	}
	if f := streamFailure(e); f != "" {
		return fail("tasks/resubscribe of the %s task answered %s", t.State, f).with(ev...)
	}
	for i, r := range streamEvents(e) {
		m := r.resultObj()
		id := str(m, "taskId")
		if str(m, "kind") == "task" {
			id = str(m, "id")
		}
		if id != "" && id != t.ID {
			return fail("event %d belongs to task %s, not the resubscribed %s", i+1, id, t.ID).with(ev...)
		}
	}
	if prob := finalProblem(e); prob != "" {
		cancelled := ""
		if cancelResp != nil {
			cancelled = fmt.Sprintf(" (the checker canceled the task meanwhile: %s)", cancelResp.describe())
		}
		return fail("%s%s", prob, cancelled).with(ev...)
	}
	last := streamEvents(e)[len(e.Events)-1]
	return pass("%d event(s) of the running task, ending with %s", len(e.Events), last.describe()).with(ev...)
}

func checkStreamResubscribeFinished(ctx context.Context, p *Probe) Result {
	if r := p.needCapability("streaming"); r != nil {
		return *r
	}
	t, res := p.terminalTask(ctx, false)
	if res != nil {
		return *res
	}
	// A finished task has nothing more to wait for: 5 s is plenty.
	e := p.stream(ctx, "tasks/resubscribe", map[string]any{"id": t.ID}, streamOpt{timeout: 5 * time.Second})
	if !isSSE(e) || len(e.Events) == 0 {
		r := parseRPC(e.RespBody)
		switch {
		case e.Status == 0:
			return fail("tasks/resubscribe: %s", e.Err).with(e)
		case r.code() == -32001:
			return fail("tasks/resubscribe of the %s task answered %s, although tasks/get finds it", t.State, r.describe()).with(e)
		case r.Err != nil:
			return pass("tasks/resubscribe of the %s task answered %s (the client can fall back to tasks/get)", t.State, r.describe()).with(e)
		}
		return fail("tasks/resubscribe of the %s task answered %s", t.State, streamFailure(e)).with(e)
	}
	evs := streamEvents(e)
	if len(evs) == 1 && evs[0].Err != nil {
		if evs[0].code() == -32001 {
			return fail("tasks/resubscribe of the %s task answered %s, although tasks/get finds it", t.State, evs[0].describe()).with(e)
		}
		return pass("tasks/resubscribe of the %s task answered %s (the client can fall back to tasks/get)", t.State, evs[0].describe()).with(e)
	}
	var final string
	for _, r := range evs {
		m := r.resultObj()
		if st := str(m, "status", "state"); terminal(st) {
			final = st
		}
	}
	switch {
	case final == "":
		return fail("tasks/resubscribe of the %s task streamed %d event(s) without its terminal state", t.State, len(evs)).with(e)
	case !e.Closed:
		return fail("tasks/resubscribe delivered the state %s but the stream stayed open (%s)", final, e.Err).with(e)
	}
	return pass("tasks/resubscribe delivered the state %s in %d event(s) and the server closed the stream", final, len(evs)).with(e)
}

func checkStreamResume(ctx context.Context, p *Probe) Result {
	e, res := p.recordedStream(ctx)
	if res != nil {
		return *res
	}
	if f := streamFailure(e); f != "" {
		return skip("message/stream did not stream: %s", f)
	}
	if len(e.Events) < 2 {
		return skip("the recorded stream has %d event(s); at least 2 are needed", len(e.Events))
	}
	k := len(e.Events) - 2
	id := e.Events[k].ID
	if id == "" {
		return notApplicable("the server sends no SSE event ids, so there is nothing to resume from")
	}
	taskID := ""
	for _, r := range streamEvents(e) {
		m := r.resultObj()
		if str(m, "kind") == "task" {
			taskID = str(m, "id")
		} else {
			taskID = str(m, "taskId")
		}
		if taskID != "" {
			break
		}
	}
	if taskID == "" {
		return skip("the recorded stream names no task")
	}
	want := parseRPC(e.Events[k+1].Data)
	r := p.stream(ctx, "tasks/resubscribe", map[string]any{"id": taskID}, streamOpt{lastEventID: id})
	if f := streamFailure(r); f != "" {
		return fail("tasks/resubscribe with Last-Event-ID %q answered %s", id, f).with(e, r)
	}
	got := parseRPC(r.Events[0].Data)
	if !sameJSON(got.Result, want.Result) {
		return fail("after Last-Event-ID %q the first event is %s; the original stream continued with %s", id, got.describe(), want.describe()).with(e, r)
	}
	return pass("resubscribing with Last-Event-ID %q replayed the stream from the next event (%s)", id, got.describe()).with(r)
}

// sameJSON compares two JSON values semantically.
func sameJSON(a, b jsontext.Value) bool {
	if a == nil || b == nil {
		return false
	}
	ca, cb := a.Clone(), b.Clone()
	if ca.Canonicalize() != nil || cb.Canonicalize() != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca, cb)
}

// cancelAfterFirstEvent runs cancel once a stream's first event arrived
// (the returned onEvent, for streamOpt, says so) or 1.5 s passed without
// one, so that a stream of a task of any length comes to its end; it does
// not run cancel when ctx ends first. wait, called once the stream is
// read, returns when cancel has run or will not.
func cancelAfterFirstEvent(ctx context.Context, cancel func()) (onEvent func(int, SSEEvent) bool, wait func()) {
	first := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-first:
		case <-time.After(1500 * time.Millisecond):
		case <-ctx.Done():
			return
		}
		cancel()
	}()
	arrived := func() { once.Do(func() { close(first) }) }
	return func(int, SSEEvent) bool { arrived(); return false }, func() { arrived(); <-done }
}
