package check

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// check10 is an A2A 1.0 check written once and registered for each
// binding, as rpc10.<name> (JSON-RPC, A2A 1.0 §9), rest10.<name>
// (HTTP+JSON, A2A 1.0 §11) and grpc10.<name> (gRPC, A2A 1.0 §10).
type check10 struct {
	name, section                      string
	level                              Level
	title, requirement, recommendation string
	final                              bool
	only                               string // BindingJSONRPC, BindingREST or BindingGRPC: registered for that binding only
	// http: registered for the HTTP bindings only (it probes what gRPC
	// has not, or has otherwise: headers, statuses).
	http bool
	run  func(ctx context.Context, s *suite10) Result
}

// bindings10 are the categories of the A2A 1.0 bindings.
var bindings10 = []struct{ category, binding string }{{"rpc10", BindingJSONRPC}, {"rest10", BindingREST}, {"grpc10", BindingGRPC}}

func register10(cs ...check10) {
	for _, c := range cs {
		for _, b := range bindings10 {
			if c.only != "" && c.only != b.binding || c.http && b.binding == BindingGRPC {
				continue
			}
			run, binding := c.run, b.binding
			register(&Check{ID: b.category + "." + c.name, Category: b.category, Version: a2a.Version10, Binding: binding,
				Section: c.section, Level: c.level, Title: c.title, Requirement: c.requirement, Recommendation: c.recommendation, Final: c.final,
				Run: func(ctx context.Context, p *Probe) Result {
					s := p.suite(binding)
					if r := s.need(ctx); r != nil {
						return *r
					}
					return run(ctx, s)
				}})
		}
	}
}

func init() {
	register10(
		check10{name: "send", section: "§3.1.1", level: Must,
			title:          "SendMessage returns {task} or {message}",
			requirement:    "SendMessage returns a Task or a Message (§3.1.1) in the SendMessageResponse wrapper: exactly one of task and message (§9.4.1, §11.4); a Task has id, contextId and status with a TASK_STATE_* state; a Message is from ROLE_AGENT and has a messageId and parts (§4.1.1, §4.1.4, §5.7).",
			recommendation: "Answer SendMessage with {\"task\": {…}} or {\"message\": {…}} (no \"kind\"), never the bare Task.",
			run:            check10Send},
		check10{name: "extension-required", section: "§3.3.4", level: Must,
			title:          "A message without a required extension is ExtensionSupportRequiredError",
			requirement:    "When the Agent Card declares an extension required: true and the client does not declare support for it (the A2A-Extensions service parameter, §3.2.6), the agent MUST return ExtensionSupportRequiredError (§3.3.4): -32008 in JSON-RPC, HTTP 400 in HTTP+JSON (§5.4). A message that activates it is not refused so. Not applicable when the card requires no extension.",
			recommendation: "Refuse SendMessage (and SendStreamingMessage) whose A2A-Extensions header does not list every required extension with ExtensionSupportRequiredError naming the missing ones; accept those that list them.",
			run:            check10ExtensionRequired},
		check10{name: "send-blocking", section: "§3.2.2", level: Must,
			title:          "A blocking SendMessage waits for a terminal or interrupted state",
			requirement:    "Operations are blocking by default (returnImmediately false or unset): the operation MUST wait until the task reaches a terminal state or an interrupted state (TASK_STATE_INPUT_REQUIRED, TASK_STATE_AUTH_REQUIRED) before returning (§3.2.2).",
			recommendation: "Without returnImmediately, answer only once the task is completed, failed, canceled, rejected or waiting for input.",
			run:            check10SendBlocking},
		check10{name: "send-return-immediately", section: "§3.2.2", level: Must,
			title:          "returnImmediately returns at once",
			requirement:    "With returnImmediately: true the operation MUST return immediately after creating the task, even if processing is still in progress (§3.2.2).",
			recommendation: "With configuration.returnImmediately true, answer with the submitted/working task right away and keep working in the background.",
			run:            check10SendReturnImmediately},
		check10{name: "get", section: "§3.1.3", level: Must,
			title:          "GetTask returns the task",
			requirement:    "GetTask retrieves the current state of a previously initiated task (§3.1.3): the Task itself (not wrapped), same id and contextId.",
			recommendation: "Answer GetTask with the bare Task.",
			run:            check10Get},
		check10{name: "get-history-length", section: "§3.2.4", level: Should,
			title:          "GetTask honours historyLength",
			requirement:    "historyLength 0: no history should be returned, the history field SHOULD be omitted; > 0: at most this many recent messages (§3.2.4).",
			recommendation: "Return the last historyLength messages of history; for 0 omit history.",
			run:            check10GetHistoryLength},
		check10{name: "get-unknown", section: "§3.3.2", level: Must,
			title:          "GetTask of an unknown id is TaskNotFoundError",
			requirement:    "Servers MUST return a not found error when a requested resource does not exist (§3.3.2): TaskNotFoundError (§3.1.3), -32001 in JSON-RPC, HTTP 404 in HTTP+JSON (§5.4).",
			recommendation: "Answer GetTask of an unknown id with TaskNotFoundError.",
			run: func(ctx context.Context, s *suite10) Result {
				return expect10(s.do(ctx, s.getTask("a2a-check-unknown-"+newUUID(), nil)), "GetTask of an unknown id", a2a.CodeTaskNotFound)
			}},
		check10{name: "cancel", section: "§3.1.5", level: Must,
			title:          "CancelTask of a running task returns it canceled",
			requirement:    "CancelTask attempts to cancel the task and returns its updated state (§3.1.5): the Task, TASK_STATE_CANCELED (or TaskNotCancelableError).",
			recommendation: "Stop the task's work and answer with the Task in TASK_STATE_CANCELED.",
			run:            check10Cancel},
		check10{name: "cancel-terminal", section: "§3.1.5", level: Should,
			title:          "CancelTask of a finished task is TaskNotCancelableError",
			requirement:    "A task that is not in a cancelable state (already completed, failed or canceled) gives TaskNotCancelableError (§3.1.5, §3.3.2): -32002, HTTP 400 (§5.4). Cancel is idempotent (§3.3.1): an already canceled task may also be returned as it is.",
			recommendation: "Answer CancelTask of a terminal task with TaskNotCancelableError and leave the task unchanged.",
			run:            check10CancelTerminal},
		check10{name: "unknown-task-message", section: "§3.4.2", level: Must,
			title:          "A message to an unknown taskId is TaskNotFoundError",
			requirement:    "When a client includes a taskId in a Message, it MUST reference an existing task; agents MUST return a TaskNotFoundError if it does not (§3.4.2).",
			recommendation: "Answer a message whose taskId names no task with TaskNotFoundError (do not create a task with a client-chosen id).",
			run: func(ctx context.Context, s *suite10) Result {
				r := s.do(ctx, s.send(userMessage("a2a-check-unknown-"+newUUID(), "", s.p.opts.Text), false))
				return expect10(r, "SendMessage with an unknown taskId", a2a.CodeTaskNotFound)
			}},
		check10{name: "terminal-task-message", section: "§3.1.1", level: Should,
			title:          "A message to a finished task is UnsupportedOperationError",
			requirement:    "Messages sent to Tasks that are in a terminal state cannot accept further messages: UnsupportedOperationError (§3.1.1), -32004, HTTP 400 (§5.4).",
			recommendation: "Answer a message whose taskId names a completed, failed, canceled or rejected task with UnsupportedOperationError.",
			run:            check10TerminalTaskMessage},
	)
}

// expect10 judges an answer that must be the A2A error code.
func expect10(r *reply10, what string, code int) Result {
	switch {
	case r.ex.Status == 0:
		return fail("%s: %s", what, r.ex.Err).with(r.ex)
	case r.err != nil && r.err.Code == code:
		return pass("%s was answered with %s", what, r.describe()).with(r.ex)
	case r.err != nil:
		return fail("%s was answered with %s, not %s (%d)", what, r.describe(), a2a.Reason(code), code).with(r.ex)
	}
	return fail("%s was answered with %s, not the error %s (%d)", what, r.describe(), a2a.Reason(code), code).with(r.ex)
}

// check10ExtensionRequired sends a message without the extensions the
// card requires (expecting -32008, HTTP 400 over HTTP+JSON), then one
// with them (not refused so).
func check10ExtensionRequired(ctx context.Context, s *suite10) Result {
	exts := s.p.requiredExtensions()
	if exts == "" {
		return notApplicable("the card declares no extension required: true")
	}
	r := s.send(userMessage("", "", s.p.opts.Text), false)
	r.noExt, r.invalid = true, true
	without := s.do(ctx, r)
	if res := expect10(without, "SendMessage without A2A-Extensions", a2a.CodeExtensionSupportRequired); res.Status != Pass {
		return res
	}
	if s.rest && without.ex.Status != http.StatusBadRequest {
		return fail("SendMessage without A2A-Extensions was answered with HTTP %d, not 400", without.ex.Status).with(without.ex)
	}
	with := s.do(ctx, s.send(userMessage("", "", s.p.opts.Text), false))
	switch {
	case with.ex.Status == 0:
		return fail("SendMessage with A2A-Extensions: %s", with.ex.Err).with(without.ex, with.ex)
	case with.err != nil && with.err.Code == a2a.CodeExtensionSupportRequired:
		return fail("SendMessage with A2A-Extensions: %s was answered with %s all the same", exts, with.describe()).with(without.ex, with.ex)
	}
	return pass("SendMessage without %s was answered with %s; with it, %s", exts, without.describe(), with.describe()).with(without.ex, with.ex)
}

// taskOf reads the Task of a SendMessage answer.
func taskOf(r *reply10) (*a2a.Task, bool) {
	if !r.ok {
		return nil, false
	}
	ev, err := v10.UnmarshalSendMessageResponse(r.body)
	t, ok := ev.(*a2a.Task)
	return t, err == nil && ok
}

// stateName is the ProtoJSON name of a state.
func stateName(s a2a.TaskState) string { return v10.TaskStateName(s) }

// sendTask sends text (blocking or not) and returns the task.
func (s *suite10) sendTask(ctx context.Context, text string, blocking bool) (*a2a.Task, *reply10, *Result) {
	r := s.do(ctx, s.send(withBlocking(userMessage("", "", text), blocking), false))
	t, ok := taskOf(r)
	if ok {
		return t, r, nil
	}
	if r.ok {
		if ev, err := v10.UnmarshalSendMessageResponse(r.body); err == nil {
			if _, isMsg := ev.(*a2a.Message); isMsg {
				res := skip("the agent answers with a Message, not a Task, so there is no task to probe")
				return nil, r, &res
			}
		}
	}
	res := skip("could not create a task: SendMessage answered %s", r.describe())
	return nil, r, &res
}

// finishedTask returns a task in a terminal state (cached unless fresh):
// a blocking SendMessage of Text, polled briefly, canceled if it waits
// for input or keeps running.
func (s *suite10) finishedTask(ctx context.Context, fresh bool) (*a2a.Task, *Result) {
	get := func() (*a2a.Task, *Result) {
		t, _, res := s.sendTask(ctx, s.p.opts.Text, true)
		if res != nil {
			return nil, res
		}
		deadline := time.Now().Add(min(s.p.timeout, 3*time.Second))
		for !t.Status.State.Final() && time.Now().Before(deadline) {
			if !sleep(ctx, 200*time.Millisecond) {
				break
			}
			if g, err := v10.UnmarshalTask(s.do(ctx, s.getTask(t.ID, nil)).body); err == nil {
				t = &g
			}
		}
		if !t.Status.State.Terminal() {
			c := s.do(ctx, s.cancelTask(t.ID))
			ct, err := v10.UnmarshalTask(c.body)
			if !c.ok || err != nil || !ct.Status.State.Terminal() {
				res := skip("could not obtain a task in a terminal state: the task stayed %s and CancelTask answered %s", stateName(t.Status.State), c.describe())
				return nil, &res
			}
			t = &ct
		}
		return t, nil
	}
	if fresh {
		return get()
	}
	return cached(s.p, s.key+"/finished", get)
}

// runningTask starts a task with LongText (returnImmediately) and returns
// it while it is submitted or working.
func (s *suite10) runningTask(ctx context.Context) (*a2a.Task, *reply10, *Result) {
	t, r, res := s.sendTask(ctx, s.p.opts.LongText, false)
	if res != nil {
		res.Message = strings.Replace(res.Message, "could not create a task", "could not obtain a running task", 1)
		return nil, r, res
	}
	busy := func(st a2a.TaskState) bool { return st == a2a.TaskStateSubmitted || st == a2a.TaskStateWorking }
	if !busy(t.Status.State) {
		res := skip("could not obtain a running task: SendMessage (returnImmediately) returned a task already %s (use --long-text with a message that keeps the agent busy)", stateName(t.Status.State))
		return nil, r, &res
	}
	if g, err := v10.UnmarshalTask(s.do(ctx, s.getTask(t.ID, nil)).body); err == nil && !busy(g.Status.State) {
		res := skip("could not obtain a running task: the task started with --long-text was already %s a moment later (use --long-text with a message that keeps the agent busy)", stateName(g.Status.State))
		return nil, r, &res
	}
	return t, r, nil
}

func check10Send(ctx context.Context, s *suite10) Result {
	r := s.do(ctx, s.send(userMessage("", "", s.p.opts.Text), false))
	if !r.ok {
		return fail("SendMessage answered %s", r.describe()).with(r.ex)
	}
	m, _ := decode(r.body).(map[string]any)
	_, hasTask := m["task"]
	_, hasMsg := m["message"]
	switch {
	case m == nil:
		return fail("the result is not a JSON object: %s", excerpt(r.body, 80)).with(r.ex)
	case hasTask == hasMsg:
		if str(m, "id") != "" && m["status"] != nil {
			return fail("the result is a bare Task; A2A 1.0 wraps it: {\"task\": {…}}").with(r.ex)
		}
		return fail("the result has %s of task and message; it must have exactly one", map[bool]string{true: "both", false: "neither"}[hasTask]).with(r.ex)
	}
	ev, err := v10.UnmarshalSendMessageResponse(r.body)
	if err != nil {
		return fail("the result is not a valid SendMessageResponse: %v", err).with(r.ex)
	}
	switch x := ev.(type) {
	case *a2a.Task:
		if x.ID == "" || x.ContextID == "" || !x.Status.State.Valid() || x.Status.State == a2a.TaskStateUnspecified {
			return fail("the Task lacks id, contextId or a status state (id %q, contextId %q, state %s)", x.ID, x.ContextID, stateName(x.Status.State)).with(r.ex)
		}
		return pass("SendMessage returned {task} (%s)", stateName(x.Status.State)).with(r.ex)
	case *a2a.Message:
		if x.Role != a2a.RoleAgent {
			return fail("the Message's role is %q, not ROLE_AGENT", x.Role).with(r.ex)
		}
		return pass("SendMessage returned {message} from the agent").with(r.ex)
	}
	return fail("the result is %T", ev).with(r.ex)
}

func check10SendBlocking(ctx context.Context, s *suite10) Result {
	r := s.do(ctx, s.send(userMessage("", "", s.p.opts.Text), false))
	t, ok := taskOf(r)
	switch {
	case !r.ok:
		return fail("SendMessage answered %s", r.describe()).with(r.ex)
	case !ok:
		return notApplicable("the agent answers with a Message, not a Task")
	case t.Status.State.Final():
		return pass("SendMessage without returnImmediately returned the task %s after %s", stateName(t.Status.State), roundDur(r.ex.Duration)).with(r.ex)
	}
	return fail("SendMessage without returnImmediately returned while the task was still %s", stateName(t.Status.State)).with(r.ex)
}

func check10SendReturnImmediately(ctx context.Context, s *suite10) Result {
	r := s.do(ctx, s.send(withBlocking(userMessage("", "", s.p.opts.LongText), false), false))
	t, ok := taskOf(r)
	switch {
	case !r.ok:
		return fail("SendMessage (returnImmediately) answered %s", r.describe()).with(r.ex)
	case !ok:
		return notApplicable("the agent answers with a Message, not a Task")
	case !t.Status.State.Final():
		return pass("SendMessage (returnImmediately) returned the task %s after %s", stateName(t.Status.State), roundDur(r.ex.Duration)).with(r.ex)
	case r.ex.Duration < time.Second:
		return pass("the task was already %s when the answer came (%s): the agent is fast; not conclusive", stateName(t.Status.State), roundDur(r.ex.Duration)).with(r.ex)
	}
	return fail("SendMessage (returnImmediately) took %s and returned the task %s: it waited for the task", roundDur(r.ex.Duration), stateName(t.Status.State)).with(r.ex)
}

func check10Get(ctx context.Context, s *suite10) Result {
	t, res := s.finishedTask(ctx, false)
	if res != nil {
		return *res
	}
	r := s.do(ctx, s.getTask(t.ID, nil))
	if !r.ok {
		return fail("GetTask of task %s answered %s", t.ID, r.describe()).with(r.ex)
	}
	if m, _ := decode(r.body).(map[string]any); m != nil && m["task"] != nil && m["id"] == nil {
		return fail("GetTask returned the Task wrapped in {\"task\": …}; the result is the bare Task").with(r.ex)
	}
	g, err := v10.UnmarshalTask(r.body)
	switch {
	case err != nil:
		return fail("GetTask's result is not a valid Task: %v", err).with(r.ex)
	case g.ID != t.ID || g.ContextID != t.ContextID:
		return fail("GetTask of task %s (context %s) returned task %s (context %s)", t.ID, t.ContextID, g.ID, g.ContextID).with(r.ex)
	case g.Status.State != t.Status.State:
		return fail("GetTask returned the %s task as %s", stateName(t.Status.State), stateName(g.Status.State)).with(r.ex)
	}
	return pass("GetTask returned the task (%s)", stateName(g.Status.State)).with(r.ex)
}

func check10GetHistoryLength(ctx context.Context, s *suite10) Result {
	t, res := s.finishedTask(ctx, false)
	if res != nil {
		return *res
	}
	one, zero := 1, 0
	r1, r0 := s.do(ctx, s.getTask(t.ID, &one)), s.do(ctx, s.getTask(t.ID, &zero))
	var problems []string
	for _, x := range []struct {
		r   *reply10
		n   int
		raw string
	}{{r1, 1, "1"}, {r0, 0, "0"}} {
		g, err := v10.UnmarshalTask(x.r.body)
		switch {
		case !x.r.ok || err != nil:
			problems = append(problems, "historyLength "+x.raw+": "+x.r.describe())
		case len(g.History) > x.n:
			problems = append(problems, fmt.Sprintf("historyLength %s returned %d message(s)", x.raw, len(g.History)))
		case x.n == 0 && strings.Contains(string(x.r.body), `"history"`):
			if m, _ := decode(x.r.body).(map[string]any); m != nil && m["history"] != nil {
				problems = append(problems, "historyLength 0 returned an empty history member; it SHOULD be omitted")
			}
		}
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; ")).with(r1.ex, r0.ex)
	}
	return pass("historyLength 1 and 0 were honoured").with(r1.ex, r0.ex)
}

func check10Cancel(ctx context.Context, s *suite10) Result {
	t, sent, res := s.runningTask(ctx)
	if res != nil {
		return *res
	}
	r := s.do(ctx, s.cancelTask(t.ID))
	ct, err := v10.UnmarshalTask(r.body)
	switch {
	case r.err != nil && r.err.Code == a2a.CodeTaskNotCancelable:
		if g, err := v10.UnmarshalTask(s.do(ctx, s.getTask(t.ID, nil)).body); err == nil && g.Status.State.Terminal() && g.Status.State != a2a.TaskStateCanceled {
			return skip("could not obtain a running task: the task finished (%s) before the cancel arrived", stateName(g.Status.State))
		}
		return pass("the server declined to cancel the task: %s (allowed by §3.1.5)", r.describe()).with(sent.ex, r.ex)
	case !r.ok || err != nil:
		return fail("CancelTask of the %s task answered %s", stateName(t.Status.State), r.describe()).with(sent.ex, r.ex)
	case ct.ID != t.ID:
		return fail("CancelTask of task %s returned task %s", t.ID, ct.ID).with(r.ex)
	case ct.Status.State == a2a.TaskStateCanceled:
		return pass("the %s task was canceled", stateName(t.Status.State)).with(sent.ex, r.ex)
	case ct.Status.State.Terminal():
		return skip("could not obtain a running task: the task finished (%s) before the cancel arrived", stateName(ct.Status.State))
	}
	return fail("CancelTask returned the task in state %s, not TASK_STATE_CANCELED", stateName(ct.Status.State)).with(sent.ex, r.ex)
}

func check10CancelTerminal(ctx context.Context, s *suite10) Result {
	t, res := s.finishedTask(ctx, true)
	if res != nil {
		return *res
	}
	r := s.do(ctx, s.cancelTask(t.ID))
	if ct, err := v10.UnmarshalTask(r.body); r.ok && err == nil && t.Status.State == a2a.TaskStateCanceled && ct.Status.State == a2a.TaskStateCanceled {
		return pass("CancelTask of the canceled task returned it canceled again (cancel is idempotent, §3.3.1)").with(r.ex)
	}
	return expect10(r, "CancelTask of the "+stateName(t.Status.State)+" task", a2a.CodeTaskNotCancelable)
}

func check10TerminalTaskMessage(ctx context.Context, s *suite10) Result {
	t, res := s.finishedTask(ctx, true)
	if res != nil {
		return *res
	}
	r := s.do(ctx, s.send(userMessage(t.ID, t.ContextID, s.p.opts.Text), false))
	if r.ok {
		return fail("a message to the %s task %s was accepted: %s", stateName(t.Status.State), t.ID, r.describe()).with(r.ex)
	}
	return expect10(r, "a message to the "+stateName(t.Status.State)+" task", a2a.CodeUnsupportedOperation)
}
