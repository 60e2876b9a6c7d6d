package check

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
)

func init() {
	register(
		&Check{ID: "tasks.get", Category: "tasks", Section: "§7.3", Level: Must,
			Title:          "tasks/get returns the task",
			Requirement:    "Agents MUST implement tasks/get (§11.1.2); it returns the Task with its current status (§7.3).",
			Recommendation: "Answer tasks/get {id} with the Task: same id and contextId, current status.",
			Run:            checkTasksGet},
		&Check{ID: "tasks.get-unknown", Category: "tasks", Section: "§8.2", Level: Should,
			Title:          "tasks/get of an unknown id is answered -32001",
			Requirement:    "An id that does not correspond to an existing task is answered -32001 TaskNotFoundError (§8.2).",
			Recommendation: "Answer -32001 for unknown task ids.",
			Run: func(ctx context.Context, p *Probe) Result {
				if r := p.needEndpoint(); r != nil {
					return *r
				}
				return expectCode(p.getTask(ctx, "a2a-check-unknown-"+newUUID(), nil), "tasks/get of an unknown id", -32001)
			}},
		&Check{ID: "tasks.history-length", Category: "tasks", Section: "§7.3.1", Level: Should,
			Title:          "tasks/get honours historyLength",
			Requirement:    "historyLength is the number of most recent messages of the task's history to return (§7.3.1): at most N, and none for 0 (A2A 1.0 §3.2.4).",
			Recommendation: "Return the last historyLength messages of history; for 0 return none.",
			Run:            checkTasksHistoryLength},
		&Check{ID: "tasks.cancel-running", Category: "tasks", Section: "§7.4", Level: Must,
			Title:          "tasks/cancel of a running task returns it canceled",
			Requirement:    "Agents MUST implement tasks/cancel (§11.1.2); it returns the Task after the attempt (§7.4): canceled, or -32002 if it cannot be canceled.",
			Recommendation: "Stop the task's work and answer with the Task in state canceled.",
			Run:            checkTasksCancelRunning},
		&Check{ID: "tasks.cancel-state", Category: "tasks", Section: "§6.1", Level: Must,
			Title:          "A canceled task stays canceled and can be read",
			Requirement:    "canceled is a terminal state: the task can't be restarted (§6.1) and tasks/get returns it (§7.3).",
			Recommendation: "Keep canceled tasks (tasks/get answers them as canceled) and stop their work so that no later update changes the state.",
			Run:            checkTasksCancelState},
		&Check{ID: "tasks.cancel-unknown", Category: "tasks", Section: "§8.2", Level: Should,
			Title:          "tasks/cancel of an unknown id is answered -32001",
			Requirement:    "An id that does not correspond to an existing task is answered -32001 TaskNotFoundError (§8.2).",
			Recommendation: "Answer -32001 for unknown task ids.",
			Run: func(ctx context.Context, p *Probe) Result {
				if r := p.needEndpoint(); r != nil {
					return *r
				}
				return expectCode(p.call(ctx, "tasks/cancel", map[string]any{"id": "a2a-check-unknown-" + newUUID()}), "tasks/cancel of an unknown id", -32001)
			}},
		&Check{ID: "tasks.cancel-terminal", Category: "tasks", Section: "§8.2", Level: Should,
			Title:          "tasks/cancel of a terminal task is answered -32002",
			Requirement:    "Canceling a task that is not in a cancelable state (it has already reached a terminal state like completed, failed or canceled) is answered -32002 TaskNotCancelableError (§8.2, §7.4).",
			Recommendation: "Answer -32002 when the task is already completed, failed, rejected or canceled, and leave it unchanged.",
			Run:            checkTasksCancelTerminal},

		&Check{ID: "state.terminal-immutable", Category: "state", Section: "§6.1", Level: Must,
			Title:          "No transition out of a terminal state",
			Requirement:    "A task which has reached a terminal state (completed, canceled, rejected or failed) can't be restarted (§6.1, §7.1): neither a message nor a cancel changes it.",
			Recommendation: "Reject messages and cancels of terminal tasks and never change their state.",
			Run:            checkStateTerminalImmutable},
		&Check{ID: "state.timestamps", Category: "state", Section: "§6.2", Level: Must, Final: true,
			Title:          "Status timestamps are ISO 8601",
			Requirement:    "TaskStatus.timestamp is an ISO 8601 datetime string (§6.2), e.g. 2023-10-27T10:00:00Z.",
			Recommendation: "Write timestamps as RFC 3339 / ISO 8601 in UTC, e.g. 2025-04-02T16:59:25.331Z.",
			Run:            checkStateTimestamps},
	)
}

func checkTasksGet(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	t, res := p.terminalTask(ctx, false)
	if res != nil {
		return *res
	}
	r := p.getTask(ctx, t.ID, nil)
	g, ok := asTask(r)
	switch {
	case !ok:
		return fail("tasks/get of task %s (%s) answered %s", t.ID, t.State, r.describe()).with(r.ex)
	case g.ID != t.ID:
		return fail("tasks/get of task %s returned task %s", t.ID, g.ID).with(r.ex)
	case g.ContextID != t.ContextID:
		return fail("tasks/get returned contextId %q; the task's is %q", g.ContextID, t.ContextID).with(t.Resp.ex, r.ex)
	case g.State != t.State:
		return fail("tasks/get returned the %s task as %s", t.State, g.State).with(t.Resp.ex, r.ex)
	}
	return pass("tasks/get returned the task (%s)", g.State).with(r.ex)
}

func checkTasksHistoryLength(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	t, res := p.terminalTask(ctx, false)
	if res != nil {
		return *res
	}
	one, zero := 1, 0
	r1 := p.getTask(ctx, t.ID, &one)
	r0 := p.getTask(ctx, t.ID, &zero)
	m1, m0 := r1.resultObj(), r0.resultObj()
	var problems []string
	switch {
	case m1 == nil:
		problems = append(problems, "historyLength 1: "+r1.describe())
	case historyLen(m1) > 1:
		problems = append(problems, fmt.Sprintf("historyLength 1 returned %d messages", historyLen(m1)))
	}
	switch {
	case m0 == nil:
		problems = append(problems, "historyLength 0: "+r0.describe())
	case historyLen(m0) > 0:
		problems = append(problems, fmt.Sprintf("historyLength 0 returned %d message(s)", historyLen(m0)))
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; ")).with(r1.ex, r0.ex)
	}
	return pass("historyLength 1 returned %d message(s), historyLength 0 none", historyLen(m1)).with(r1.ex, r0.ex)
}

// canceledTask starts a running task and cancels it (cached: the result
// serves tasks.cancel-running and tasks.cancel-state).
type canceled struct {
	task   taskRef
	cancel *rpcResp
}

func (p *Probe) canceledTask(ctx context.Context) (canceled, *Result) {
	return cached(p, "canceled", func() (canceled, *Result) {
		t, res := p.runningTask(ctx)
		if res != nil {
			return canceled{}, res
		}
		r := p.call(ctx, "tasks/cancel", map[string]any{"id": t.ID})
		return canceled{task: t, cancel: r}, nil
	})
}

func checkTasksCancelRunning(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	c, res := p.canceledTask(ctx)
	if res != nil {
		return *res
	}
	r := c.cancel
	ct, ok := asTask(r)
	switch {
	case r.code() == -32002:
		// A race: the task may have finished just before the cancel.
		g, _ := asTask(p.getTask(ctx, c.task.ID, nil))
		if terminal(g.State) && g.State != "canceled" {
			return skip("could not obtain a running task: the task finished (%s) before the cancel arrived", g.State)
		}
		return pass("the server declined to cancel the %s task: %s (allowed by §7.4)", c.task.State, r.describe()).with(c.task.Resp.ex, r.ex)
	case !ok:
		return fail("tasks/cancel of the %s task %s answered %s", c.task.State, c.task.ID, r.describe()).with(c.task.Resp.ex, r.ex)
	case ct.ID != c.task.ID:
		return fail("tasks/cancel of task %s returned task %s", c.task.ID, ct.ID).with(r.ex)
	case ct.State == "canceled":
		return pass("the %s task was canceled", c.task.State).with(c.task.Resp.ex, r.ex)
	case terminal(ct.State):
		return skip("could not obtain a running task: the task finished (%s) before the cancel arrived", ct.State)
	}
	return fail("tasks/cancel returned the task in state %s, not canceled", ct.State).with(c.task.Resp.ex, r.ex)
}

func checkTasksCancelState(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	c, res := p.canceledTask(ctx)
	if res != nil {
		return *res
	}
	if ct, ok := asTask(c.cancel); !ok || ct.State != "canceled" {
		return skip("the cancel did not succeed (%s), see tasks.cancel-running", c.cancel.describe())
	}
	r1 := p.getTask(ctx, c.task.ID, nil)
	g1, ok := asTask(r1)
	if !ok {
		return fail("after a successful cancel, tasks/get of task %s answered %s", c.task.ID, r1.describe()).with(c.cancel.ex, r1.ex)
	}
	if g1.State != "canceled" {
		return fail("after a successful cancel, tasks/get returns the task as %s", g1.State).with(c.cancel.ex, r1.ex)
	}
	// Give the agent time to produce another update if it did not stop.
	sleep(ctx, 1200*time.Millisecond)
	r2 := p.getTask(ctx, c.task.ID, nil)
	g2, ok := asTask(r2)
	if !ok || g2.State != "canceled" {
		return fail("1.2 s after the cancel, tasks/get answers %s", r2.describe()).with(c.cancel.ex, r1.ex, r2.ex)
	}
	return pass("tasks/get returns the task canceled, also 1.2 s later").with(r1.ex, r2.ex)
}

func checkTasksCancelTerminal(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	t, res := p.terminalTask(ctx, true)
	if res != nil {
		return *res
	}
	r := p.call(ctx, "tasks/cancel", map[string]any{"id": t.ID})
	out := expectCode(r, fmt.Sprintf("tasks/cancel of the %s task", t.State), -32002)
	if out.Status != Pass {
		return out
	}
	// And of a canceled task, when the cancel checks produced one.
	if c, res := p.canceledTask(ctx); res == nil {
		if ct, ok := asTask(c.cancel); ok && ct.State == "canceled" {
			r2 := p.call(ctx, "tasks/cancel", map[string]any{"id": c.task.ID})
			if r2.code() != -32002 {
				return fail("tasks/cancel of a completed task answered -32002, but of an already canceled task %s", r2.describe()).with(r.ex, r2.ex)
			}
			return pass("tasks/cancel of a %s task and of a canceled task answered -32002", t.State).with(r.ex, r2.ex)
		}
	}
	return out
}

func checkStateTerminalImmutable(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	t, res := p.terminalTask(ctx, true)
	if res != nil {
		return *res
	}
	send := p.call(ctx, "message/send", sendParams(message(t.ID, t.ContextID, textPart(p.opts.Text)), map[string]any{"blocking": true}))
	cancel := p.call(ctx, "tasks/cancel", map[string]any{"id": t.ID})
	get := p.getTask(ctx, t.ID, nil)
	var changes []string
	if st, ok := asTask(send); ok && st.ID == t.ID && st.State != t.State {
		changes = append(changes, "message/send returned it "+st.State)
	}
	if ct, ok := asTask(cancel); ok && ct.ID == t.ID && ct.State != t.State {
		changes = append(changes, "tasks/cancel returned it "+ct.State)
	}
	g, ok := asTask(get)
	switch {
	case !ok:
		changes = append(changes, "tasks/get then answered "+get.describe())
	case g.State != t.State:
		changes = append(changes, "tasks/get then returned it "+g.State)
	}
	if len(changes) > 0 {
		return fail("the task was %s; %s", t.State, strings.Join(changes, "; ")).with(send.ex, cancel.ex, get.ex)
	}
	return pass("the %s task stayed %s after a message and a cancel", t.State, t.State).with(send.ex, cancel.ex, get.ex)
}

// iso8601 accepts ISO 8601 extended date-times: date, T, hh:mm[:ss[.f]],
// optional Z or offset.
var iso8601 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}([.,]\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?$`)

// timestamps collects every status.timestamp in a result object.
func timestamps(m map[string]any) []string {
	var out []string
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(c, k)
			}
		case []any:
			for _, c := range x {
				walk(c, key)
			}
		case string:
			if key == "timestamp" {
				out = append(out, x)
			}
		case float64:
			if key == "timestamp" {
				out = append(out, fmt.Sprint(x))
			}
		}
	}
	walk(m, "")
	return out
}

func checkStateTimestamps(ctx context.Context, p *Probe) Result {
	if r := p.needEndpoint(); r != nil {
		return *r
	}
	ensureTraffic(ctx, p)
	n := 0
	for _, e := range p.exchanges() {
		if e.RPCMethod == "" || e.Check == "cleanup" {
			continue
		}
		bodies := [][]byte{e.RespBody}
		if e.Stream && len(e.Events) > 0 {
			bodies = bodies[:0]
			for _, ev := range e.Events {
				bodies = append(bodies, ev.Data)
			}
		}
		for _, b := range bodies {
			for _, ts := range timestamps(parseRPC(b).resultObj()) {
				n++
				if !iso8601.MatchString(ts) {
					return fail("%s #%d returned the timestamp %q, which is not ISO 8601", e.RPCMethod, e.Seq, ts).with(e)
				}
			}
		}
	}
	if n == 0 {
		return pass("no response carried a status timestamp (it is optional)")
	}
	return pass("all %d timestamps are ISO 8601", n)
}
