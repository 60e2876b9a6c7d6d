package check

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

func init() {
	register10(
		check10{name: "list", section: "§3.1.4", level: Must,
			title:          "ListTasks returns a ListTasksResponse",
			requirement:    "ListTasks returns tasks, nextPageToken, pageSize and totalSize, all REQUIRED (§3.1.4, §5.7); nextPageToken MUST always be present, \"\" on the final page.",
			recommendation: "Answer ListTasks with {\"tasks\": […], \"nextPageToken\": \"…\" or \"\", \"pageSize\": N, \"totalSize\": N}.",
			run:            check10List},
		check10{name: "list-paging", section: "§3.1.4", level: Must,
			title:          "ListTasks pages with pageSize and nextPageToken",
			requirement:    "ListTasks MUST use cursor-based pagination: at most pageSize tasks per page, pageToken = the previous page's nextPageToken, and nextPageToken \"\" on the final page (§3.1.4).",
			recommendation: "Return at most pageSize tasks and a nextPageToken that yields the next page; \"\" when no more results remain.",
			run:            check10ListPaging},
		check10{name: "list-order", section: "§3.1.4", level: Must,
			title:          "ListTasks returns the newest tasks first",
			requirement:    "Tasks MUST be sorted by last update time (their status timestamp) in descending order, most recently updated first (§3.1.4).",
			recommendation: "Order ListTasks by status.timestamp, newest first, across pages.",
			run:            check10ListOrder},
		check10{name: "list-filter", section: "§3.1.4", level: Must,
			title:          "ListTasks filters by contextId and status",
			requirement:    "ListTasksRequest's contextId and status filter the tasks returned (§3.1.4; a2a.proto ListTasksRequest): only tasks of that context, only tasks in that state.",
			recommendation: "Apply the contextId and status filters before paging.",
			run:            check10ListFilter},
		check10{name: "list-page-size", section: "§3.1.4", level: Should,
			title:          "pageSize above 100 is rejected or clamped",
			requirement:    "pageSize has a minimum of 1 and a maximum of 100 (a2a.proto ListTasksRequest): a larger value is rejected with InvalidParams, or at most 100 tasks are returned.",
			recommendation: "Answer pageSize 101 with -32602 / HTTP 400, or clamp it to 100.",
			run:            check10ListPageSize},
		check10{name: "list-artifacts", section: "§3.1.4", level: Must,
			title:          "ListTasks omits artifacts unless includeArtifacts",
			requirement:    "When includeArtifacts is false (the default), the artifacts field MUST be omitted entirely from each Task (not an empty array or null); when true, it is included (§3.1.4).",
			recommendation: "Leave out artifacts in ListTasks results unless includeArtifacts is true.",
			run:            check10ListArtifacts},
	)
}

// listed is a ListTasks answer, decoded.
type listed struct {
	r   *reply10
	res a2a.ListTasksResponse
	raw map[string]any
	err string // why it is not a ListTasksResponse ("" if it is)
}

func (s *suite10) list(ctx context.Context, p a2a.ListTasksRequest) listed {
	l := listed{r: s.do(ctx, s.listTasks(p))}
	if !l.r.ok {
		l.err = "ListTasks answered " + l.r.describe()
		return l
	}
	res, err := v10.UnmarshalListTasksResponse(l.r.body)
	if err != nil {
		l.err = "not a valid ListTasksResponse: " + err.Error()
		return l
	}
	l.res = res
	l.raw, _ = decode(l.r.body).(map[string]any)
	return l
}

func ids(ts []a2a.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func check10List(ctx context.Context, s *suite10) Result {
	if _, res := s.finishedTask(ctx, false); res != nil && res.Status != Skip {
		return *res
	}
	size := 5
	l := s.list(ctx, a2a.ListTasksRequest{PageSize: &size})
	if l.err != "" {
		return fail("%s", l.err).with(l.r.ex)
	}
	var missing []string
	for _, f := range []string{"tasks", "nextPageToken", "pageSize", "totalSize"} {
		if _, ok := l.raw[f]; !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fail("the ListTasksResponse lacks %s", strings.Join(missing, ", ")).with(l.r.ex)
	}
	return pass("ListTasks returned %d task(s) of %d, pageSize %d, nextPageToken %q", len(l.res.Tasks), l.res.TotalSize, l.res.PageSize, l.res.NextPageToken).with(l.r.ex)
}

// context3 is a context with three finished tasks, made by the suite.
type context3 struct {
	id    string
	tasks []string // in creation order
	sent  []*Exchange
}

// threeTasks creates three tasks in one new context (cached): a message
// without contextId, then two more with the contextId the agent gave.
func (s *suite10) threeTasks(ctx context.Context) (context3, *Result) {
	return cached(s.p, s.key+"/context3", func() (context3, *Result) {
		var c context3
		for i := range 3 {
			if i > 0 {
				sleep(ctx, 20*time.Millisecond) // distinct status timestamps
			}
			r := s.do(ctx, s.send(userMessage("", c.id, s.p.opts.Text), false))
			c.sent = append(c.sent, r.ex)
			t, ok := taskOf(r)
			if !ok {
				res := skip("could not create three tasks in one context: SendMessage answered %s", r.describe())
				return c, &res
			}
			if c.id == "" {
				c.id = t.ContextID
			} else if t.ContextID != c.id {
				res := fail("a message with contextId %s started a task in context %s", c.id, t.ContextID).with(r.ex)
				return c, &res
			}
			c.tasks = append(c.tasks, t.ID)
		}
		return c, nil
	})
}

func check10ListPaging(ctx context.Context, s *suite10) Result {
	c, res := s.threeTasks(ctx)
	if res != nil {
		return *res
	}
	two := 2
	p1 := s.list(ctx, a2a.ListTasksRequest{ContextID: c.id, PageSize: &two})
	if p1.err != "" {
		return fail("page 1: %s", p1.err).with(p1.r.ex)
	}
	if n := len(p1.res.Tasks); n != 2 || p1.res.NextPageToken == "" {
		return fail("pageSize 2 over the 3 tasks of context %s returned %d task(s) and nextPageToken %q; want 2 and a token", c.id, n, p1.res.NextPageToken).with(p1.r.ex)
	}
	p2 := s.list(ctx, a2a.ListTasksRequest{ContextID: c.id, PageSize: &two, PageToken: p1.res.NextPageToken})
	if p2.err != "" {
		return fail("page 2: %s", p2.err).with(p1.r.ex, p2.r.ex)
	}
	if n := len(p2.res.Tasks); n != 1 || p2.res.NextPageToken != "" {
		return fail("the second page returned %d task(s) and nextPageToken %q; want 1 and \"\" (the final page)", n, p2.res.NextPageToken).with(p1.r.ex, p2.r.ex)
	}
	got := append(ids(p1.res.Tasks), ids(p2.res.Tasks)...)
	for _, id := range c.tasks {
		if !slices.Contains(got, id) {
			return fail("the two pages hold %v, not task %s", got, id).with(p1.r.ex, p2.r.ex)
		}
	}
	return pass("pages of 2 and 1 held the 3 tasks; the final nextPageToken is \"\"").with(p1.r.ex, p2.r.ex)
}

func check10ListOrder(ctx context.Context, s *suite10) Result {
	c, res := s.threeTasks(ctx)
	if res != nil {
		return *res
	}
	l := s.list(ctx, a2a.ListTasksRequest{ContextID: c.id})
	if l.err != "" {
		return fail("%s", l.err).with(l.r.ex)
	}
	var last time.Time
	for i, t := range l.res.Tasks {
		ts := t.Status.Timestamp
		if ts.IsZero() {
			return skip("task %s has no status timestamp, so the order cannot be judged", t.ID)
		}
		if i > 0 && ts.After(last) {
			return fail("task %d (%s, %s) is newer than task %d before it (%s)", i+1, t.ID, ts.Format(time.RFC3339Nano), i, last.Format(time.RFC3339Nano)).with(l.r.ex)
		}
		last = ts
	}
	got := ids(l.res.Tasks)
	if len(got) == 3 && got[0] != c.tasks[2] && l.res.Tasks[0].Status.Timestamp.Equal(l.res.Tasks[1].Status.Timestamp) {
		return pass("%d tasks, status timestamps non-increasing (the newest two share one)", len(got)).with(l.r.ex)
	}
	if len(got) == 3 && got[0] != c.tasks[2] {
		return fail("the task created last, %s, is not first: %v", c.tasks[2], got).with(l.r.ex)
	}
	return pass("%d tasks, newest first", len(got)).with(l.r.ex)
}

func check10ListFilter(ctx context.Context, s *suite10) Result {
	c, res := s.threeTasks(ctx)
	if res != nil {
		return *res
	}
	byCtx := s.list(ctx, a2a.ListTasksRequest{ContextID: c.id})
	if byCtx.err != "" {
		return fail("contextId filter: %s", byCtx.err).with(byCtx.r.ex)
	}
	for _, t := range byCtx.res.Tasks {
		if t.ContextID != c.id {
			return fail("ListTasks with contextId %s returned task %s of context %s", c.id, t.ID, t.ContextID).with(byCtx.r.ex)
		}
	}
	if len(byCtx.res.Tasks) != len(c.tasks) {
		return fail("ListTasks with contextId %s returned %d task(s); the context has %d", c.id, len(byCtx.res.Tasks), len(c.tasks)).with(byCtx.r.ex)
	}
	g, err := v10.UnmarshalTask(s.do(ctx, s.getTask(c.tasks[0], nil)).body)
	if err != nil {
		return skip("could not read the state of task %s", c.tasks[0])
	}
	byState := s.list(ctx, a2a.ListTasksRequest{ContextID: c.id, Status: g.Status.State})
	if byState.err != "" {
		return fail("status filter: %s", byState.err).with(byState.r.ex)
	}
	for _, t := range byState.res.Tasks {
		if t.Status.State != g.Status.State {
			return fail("ListTasks with status %s returned task %s in state %s", stateName(g.Status.State), t.ID, stateName(t.Status.State)).with(byState.r.ex)
		}
	}
	if !slices.Contains(ids(byState.res.Tasks), c.tasks[0]) {
		return fail("ListTasks with status %s does not return task %s, which is in that state", stateName(g.Status.State), c.tasks[0]).with(byState.r.ex)
	}
	other := a2a.TaskStateRejected
	if g.Status.State == other {
		other = a2a.TaskStateCompleted
	}
	none := s.list(ctx, a2a.ListTasksRequest{ContextID: c.id, Status: other})
	for _, t := range none.res.Tasks {
		if t.Status.State != other {
			return fail("ListTasks with status %s returned task %s in state %s", stateName(other), t.ID, stateName(t.Status.State)).with(none.r.ex)
		}
	}
	return pass("contextId and status filters returned only matching tasks").with(byCtx.r.ex, byState.r.ex)
}

func check10ListPageSize(ctx context.Context, s *suite10) Result {
	big := a2a.ListTasksMaxPageSize + 1
	r := s.listTasks(a2a.ListTasksRequest{PageSize: &big})
	r.invalid = true
	rep := s.do(ctx, r)
	switch {
	case rep.err != nil && (rep.err.Code == a2a.CodeInvalidParams || rep.err.Code == a2a.CodeInvalidRequest):
		return pass("pageSize %d was rejected: %s", big, rep.describe()).with(rep.ex)
	case rep.err != nil || !rep.ok:
		return fail("pageSize %d was answered %s, neither InvalidParams nor a page", big, rep.describe()).with(rep.ex)
	}
	res, err := v10.UnmarshalListTasksResponse(rep.body)
	switch {
	case err != nil:
		return fail("pageSize %d: not a valid ListTasksResponse: %v", big, err).with(rep.ex)
	case len(res.Tasks) > a2a.ListTasksMaxPageSize || res.PageSize > a2a.ListTasksMaxPageSize:
		return fail("pageSize %d was accepted: pageSize %d, %d task(s)", big, res.PageSize, len(res.Tasks)).with(rep.ex)
	}
	return pass("pageSize %d was clamped to %d", big, res.PageSize).with(rep.ex)
}

func check10ListArtifacts(ctx context.Context, s *suite10) Result {
	t, res := s.finishedTask(ctx, false)
	if res != nil {
		return *res
	}
	g, err := v10.UnmarshalTask(s.do(ctx, s.getTask(t.ID, nil)).body)
	if err != nil || len(g.Artifacts) == 0 {
		return skip("the agent's task %s has no artifacts, so includeArtifacts cannot be judged", t.ID)
	}
	one := 10
	without := s.list(ctx, a2a.ListTasksRequest{ContextID: t.ContextID, PageSize: &one})
	with := s.list(ctx, a2a.ListTasksRequest{ContextID: t.ContextID, PageSize: &one, IncludeArtifacts: true})
	for _, l := range []listed{without, with} {
		if l.err != "" {
			return fail("%s", l.err).with(l.r.ex)
		}
	}
	tasks, _ := without.raw["tasks"].([]any)
	for _, x := range tasks {
		if m, _ := x.(map[string]any); m != nil {
			if _, ok := m["artifacts"]; ok {
				return fail("without includeArtifacts, task %s has an artifacts member", str(m, "id")).with(without.r.ex)
			}
		}
	}
	for _, x := range with.res.Tasks {
		if x.ID == t.ID && len(x.Artifacts) == 0 {
			return fail("with includeArtifacts, task %s has no artifacts; it has %d", t.ID, len(g.Artifacts)).with(with.r.ex)
		}
	}
	return pass("artifacts omitted by default and included with includeArtifacts").with(without.r.ex, with.r.ex)
}
