package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

func init() {
	register10(
		check10{name: "stream", section: "§3.1.2", level: Must,
			title:          "SendStreamingMessage answers 200 text/event-stream",
			requirement:    "The operation MUST establish a streaming connection (§3.1.2): HTTP 200 with Content-Type text/event-stream, each event's data a StreamResponse (§9.4.2, §11.7). Requires capabilities.streaming (§3.3.4).",
			recommendation: "Answer SendStreamingMessage with 200, Content-Type: text/event-stream, then SSE events.",
			run:            check10Stream},
		check10{name: "stream-frames", section: "§3.2.3", level: Must, final: true, http: true,
			title:          "Every event is one StreamResponse",
			requirement:    "Each SSE event's data is a StreamResponse with exactly one of task, message, statusUpdate, artifactUpdate (§3.2.3, §11.7); in JSON-RPC, wrapped in a JSON-RPC response whose id is the request's (§9.4.2).",
			recommendation: "Write each event as `data: <StreamResponse>` (JSON-RPC: `data: {\"jsonrpc\":\"2.0\",\"id\":<request id>,\"result\":<StreamResponse>}`).",
			run:            check10StreamFrames},
		check10{name: "stream-first", section: "§3.1.2", level: Must,
			title:          "A stream starts with the Task (or is one Message)",
			requirement:    "A Task lifecycle stream MUST begin with the Task object; a Message-only stream MUST contain exactly one Message and then close (§3.1.2).",
			recommendation: "Send {\"task\": …} as the first event of SendStreamingMessage (or one {\"message\": …} and close).",
			run:            check10StreamFirst},
		check10{name: "stream-end", section: "§3.1.2", level: Must,
			title:          "The stream closes after the terminal or interrupted state",
			requirement:    "The stream MUST close when the task reaches a terminal state (§3.1.2); events follow until a terminal or interrupted state, at which point the stream closes (§11.7). 1.0 has no final flag: the end of the stream is the signal.",
			recommendation: "Close the response right after the status update (or Task) in a terminal or interrupted state, and send nothing after it.",
			run:            check10StreamEnd},
		check10{name: "subscribe", section: "§3.1.6", level: Must,
			title:          "SubscribeToTask starts with the Task and follows it to its end",
			requirement:    "SubscribeToTask MUST return a Task object as the first event, the current state of the task (§3.1.6), then its updates; the stream MUST terminate when the task reaches a terminal state.",
			recommendation: "Answer SubscribeToTask of a running task with an SSE stream: the Task snapshot, its updates, and the end after the terminal state (here: canceled).",
			run:            check10Subscribe},
		check10{name: "subscribe-terminal", section: "§3.1.6", level: Should,
			title:          "SubscribeToTask of a finished task is UnsupportedOperationError",
			requirement:    "SubscribeToTask of a task in a terminal state gives UnsupportedOperationError (§3.1.6, §10.4.6): -32004, HTTP 400 (§5.4); as a plain error answer or as the stream's only event. The task exists, so TaskNotFoundError is wrong.",
			recommendation: "Answer SubscribeToTask of a completed, failed, canceled or rejected task with UnsupportedOperationError.",
			run:            check10SubscribeTerminal},
	)
}

// needStreaming returns n/a unless the card declares capabilities.streaming.
func (s *suite10) needStreaming() *Result {
	if !s.p.capability("streaming") {
		r := notApplicable("the card does not declare capabilities.streaming")
		return &r
	}
	return nil
}

// recorded is a complete SendStreamingMessage of Text (cached).
func (s *suite10) recorded(ctx context.Context) (*Exchange, *Result) {
	if r := s.needStreaming(); r != nil {
		return nil, r
	}
	return cached(s.p, s.key+"/stream", func() (*Exchange, *Result) {
		return s.stream(ctx, s.send(userMessage("", "", s.p.opts.Text), true), streamOpt{}), nil
	})
}

// streamed returns the recorded stream when it is a usable stream.
func (s *suite10) streamed(ctx context.Context) (*Exchange, []frame10, *Result) {
	e, res := s.recorded(ctx)
	if res != nil {
		return nil, nil, res
	}
	if f := s.streamFailure(e); f != "" {
		r := skip("SendStreamingMessage did not stream: %s", f)
		return e, nil, &r
	}
	return e, s.frames(e), nil
}

// streamFailure says why a stream exchange is not a usable stream ("" if
// it is one).
func (s *suite10) streamFailure(e *Exchange) string {
	switch {
	case e.Status == 0:
		return e.Err
	case !isSSE(e):
		return s.read(e).describe()
	case len(e.Events) == 0:
		if e.Err != "" {
			return "no event: " + e.Err
		}
		return "an event stream without events"
	}
	if f := s.frame(e.Events[0]); f.err != nil && len(e.Events) == 1 {
		return fmt.Sprintf("one SSE event with error %d %q", f.err.Code, f.err.Message)
	}
	return ""
}

func check10Stream(ctx context.Context, s *suite10) Result {
	e, res := s.recorded(ctx)
	if res != nil {
		return *res
	}
	switch {
	case e.Status == 0:
		return fail("SendStreamingMessage: %s", e.Err).with(e)
	case !isSSE(e):
		return fail("SendStreamingMessage answered %s, Content-Type %q: %s", statusText(e), e.RespContentType(), s.read(e).describe()).with(e)
	case len(e.Events) == 0:
		return fail("SendStreamingMessage answered an event stream without events (%s)", e.Err).with(e)
	}
	if s.grpc {
		return pass("a gRPC server stream of %d event(s)", len(e.Events)).with(e)
	}
	return pass("HTTP 200, Content-Type %s, %d event(s)", e.RespContentType(), len(e.Events)).with(e)
}

func check10StreamFrames(ctx context.Context, s *suite10) Result {
	if _, res := s.recorded(ctx); res != nil {
		return *res
	}
	var f findings
	n := 0
	for _, e := range s.p.exchangesOf(s.key) {
		if !e.Stream || !isSSE(e) || e.Check == "cleanup" {
			continue
		}
		for i, ev := range e.Events {
			n++
			if prob := s.frameProblem(e, ev); prob != "" {
				f.add(e, "%s #%d event %d: %s", e.RPCMethod, e.Seq, i+1, prob)
			}
		}
	}
	if n == 0 {
		return skip("no SSE event was received")
	}
	return f.result("with events that are not StreamResponses", fmt.Sprintf("all %d events are StreamResponses", n))
}

// frameProblem says what is wrong with one event of a stream ("" if nothing).
func (s *suite10) frameProblem(e *Exchange, ev SSEEvent) string {
	if !s.rest {
		if prob := shapeProblem(ev.Data, e.ReqID); prob != "" {
			return prob
		}
	}
	f := s.frame(ev)
	switch {
	case f.bad != "":
		return f.bad
	case f.err != nil:
		return ""
	case f.decErr != "":
		return "not a StreamResponse: " + f.decErr
	}
	m, _ := decode(f.payload).(map[string]any)
	var members []string
	for _, k := range []string{"task", "message", "statusUpdate", "artifactUpdate"} {
		if _, ok := m[k]; ok {
			members = append(members, k)
		}
	}
	if len(members) != 1 {
		return fmt.Sprintf("the StreamResponse has %d of task, message, statusUpdate, artifactUpdate (%s)", len(members), strings.Join(members, ", "))
	}
	return ""
}

func check10StreamFirst(ctx context.Context, s *suite10) Result {
	e, fs, res := s.streamed(ctx)
	if res != nil {
		return *res
	}
	switch ev := fs[0].ev.(type) {
	case *a2a.Task:
		return pass("the first event is the Task (%s)", stateName(ev.Status.State)).with(e)
	case *a2a.Message:
		if len(fs) > 1 {
			return fail("the first event is a Message, and %d more event(s) follow; a Message-only stream has exactly one", len(fs)-1).with(e)
		}
		return pass("the stream is one Message").with(e)
	case nil:
		return fail("the first event is not a StreamResponse: %s %s", fs[0].bad, fs[0].decErr).with(e)
	default:
		return fail("the first event is a %s, not the Task", eventName(ev)).with(e)
	}
}

func eventName(ev a2a.Event) string {
	switch x := ev.(type) {
	case *a2a.Task:
		return "Task " + stateName(x.Status.State)
	case *a2a.Message:
		return "Message"
	case *a2a.TaskStatusUpdateEvent:
		return "statusUpdate " + stateName(x.Status.State)
	case *a2a.TaskArtifactUpdateEvent:
		return "artifactUpdate"
	}
	return "error"
}

// endProblem says why a stream does not end right ("" if it does).
func (s *suite10) endProblem(e *Exchange, fs []frame10) string {
	for i, f := range fs {
		if !f.ends() {
			continue
		}
		if i != len(fs)-1 {
			return fmt.Sprintf("event %d (%s) ends the task, but %d more event(s) follow", i+1, eventName(f.ev), len(fs)-1-i)
		}
		if !e.Closed {
			return fmt.Sprintf("the stream was still open 2 s after event %d (%s)", i+1, eventName(f.ev))
		}
		return ""
	}
	how := "the server closed the stream"
	if !e.Closed {
		how = "the stream stayed open (" + e.Err + ")"
	}
	return fmt.Sprintf("no event reaches a terminal or interrupted state; the last is %s and %s", eventName(fs[len(fs)-1].ev), how)
}

func check10StreamEnd(ctx context.Context, s *suite10) Result {
	e, fs, res := s.streamed(ctx)
	if res != nil {
		return *res
	}
	if prob := s.endProblem(e, fs); prob != "" {
		return fail("%s", prob).with(e)
	}
	return pass("%d event(s); the last is %s and the server closed the stream %s after it", len(fs), eventName(fs[len(fs)-1].ev), roundDur(e.CloseDelay)).with(e)
}

func check10Subscribe(ctx context.Context, s *suite10) Result {
	if r := s.needStreaming(); r != nil {
		return *r
	}
	t, sent, res := s.runningTask(ctx)
	if res != nil {
		return *res
	}
	// Cancel the task once the first event arrived (or after 1.5 s), so
	// that the stream's end comes whatever the task's length.
	var cancel *reply10
	onEvent, wait := cancelAfterFirstEvent(ctx, func() { cancel = s.do(ctx, s.cancelTask(t.ID)) })
	e := s.stream(ctx, s.subscribe(t.ID), streamOpt{onEvent: onEvent})
	wait()
	ev := []*Exchange{sent.ex, e}
	if cancel != nil {
		ev = append(ev, cancel.ex)
	}
	if f := s.streamFailure(e); f != "" {
		// A task that ended between the checker's GetTask and its
		// SubscribeToTask is rightly refused (§3.1.6: a terminal task
		// cannot be subscribed to): the agent was too quick to check.
		if g, err := v10.UnmarshalTask(s.do(ctx, s.getTask(t.ID, nil)).body); err == nil && g.Status.State.Terminal() && s.subscribeRefused(e) {
			return skip("the task ended (%s) before SubscribeToTask reached it, which then rightly refused it; use --long-text with a message that keeps the agent busy", stateName(g.Status.State)).with(ev...)
		}
		return fail("SubscribeToTask of the %s task answered %s", stateName(t.Status.State), f).with(ev...)
	}
	fs := s.frames(e)
	if ft, ok := fs[0].ev.(*a2a.Task); !ok || ft.ID != t.ID {
		return fail("the first event is %s, not the Task %s", eventName(fs[0].ev), t.ID).with(ev...)
	}
	if prob := s.endProblem(e, fs); prob != "" {
		return fail("%s (the checker canceled the task meanwhile)", prob).with(ev...)
	}
	return pass("the Task, then %d event(s), ending with %s", len(fs)-1, eventName(fs[len(fs)-1].ev)).with(ev...)
}

// subscribeRefused reports whether a SubscribeToTask exchange was refused
// with UnsupportedOperationError, as a plain answer or as a single SSE
// error event.
func (s *suite10) subscribeRefused(e *Exchange) bool {
	if isSSE(e) {
		fs := s.frames(e)
		return len(fs) == 1 && fs[0].err != nil && fs[0].err.Code == a2a.CodeUnsupportedOperation
	}
	r := s.read(e)
	return r.err != nil && r.err.Code == a2a.CodeUnsupportedOperation
}

func check10SubscribeTerminal(ctx context.Context, s *suite10) Result {
	if r := s.needStreaming(); r != nil {
		return *r
	}
	t, res := s.finishedTask(ctx, false)
	if res != nil {
		return *res
	}
	e := s.stream(ctx, s.subscribe(t.ID), streamOpt{timeout: 5 * time.Second})
	r := &reply10{ex: e}
	if isSSE(e) {
		fs := s.frames(e)
		if len(fs) != 1 || fs[0].err == nil {
			return fail("SubscribeToTask of the %s task streamed %d event(s) (first: %s), not UnsupportedOperationError", stateName(t.Status.State), len(fs), firstEventName(fs)).with(e)
		}
		r.err = fs[0].err
	} else {
		r = s.read(e)
	}
	return expect10(r, "SubscribeToTask of the "+stateName(t.Status.State)+" task", a2a.CodeUnsupportedOperation)
}

func firstEventName(fs []frame10) string {
	if len(fs) == 0 {
		return "none"
	}
	return eventName(fs[0].ev)
}
