package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/store"
)

// listBase is the status time of the tasks the ListTasks tests make.
var listBase = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// listed is what the ListTasks tests know of a task they made.
type listed struct {
	id, agent, owner, contextID string
	state                       a2a.TaskState
	at                          time.Time // status timestamp; zero: none
}

// createListed creates task l, as the engine would: a creation record
// (submitted), then, for another state, a status update to it; the
// snapshot's status timestamp is l.at.
func createListed(t *testing.T, s store.Store, l listed) {
	t.Helper()
	ctx := context.Background()
	created := a2a.Task{ID: l.id, ContextID: l.contextID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: l.at},
		History: []a2a.Message{*textMessage("m-"+l.id, l.id, "list me")}}
	created.History[0].ContextID = l.contextID
	task, _ := fold.Apply(a2a.Task{}, &created)
	c := created
	if err := s.Append(ctx, store.Append{Agent: l.agent, Owner: l.owner, TaskID: l.id, Records: []store.Record{{Event: &c}}, Snapshot: task}); err != nil {
		t.Fatalf("create %s: %v", l.id, err)
	}
	if l.state == a2a.TaskStateSubmitted {
		return
	}
	ev := &a2a.TaskStatusUpdateEvent{TaskID: l.id, ContextID: l.contextID, Final: l.state.Final(),
		Status: a2a.TaskStatus{State: l.state, Timestamp: l.at}}
	task, err := fold.Apply(task, ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, store.Append{TaskID: l.id, After: 1, Records: []store.Record{{Event: ev}}, Snapshot: task}); err != nil {
		t.Fatalf("status %s: %v", l.id, err)
	}
}

// listOrder sorts ls as ListTasks must: status time descending (none
// last), then id descending.
func listOrder(ls []listed) []string {
	ls = slices.Clone(ls)
	slices.SortFunc(ls, func(a, b listed) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.id
	}
	return ids
}

// listAll pages through q with page size limit and returns the ids in the
// order listed; every page must report the same total, and the last one
// (only) no cursor.
func listAll(t *testing.T, s store.Store, q store.TaskQuery, limit int) (ids []string, total int) {
	t.Helper()
	q.Limit, q.Cursor = limit, ""
	want := limit
	if limit <= 0 {
		want = store.DefaultTaskLimit
	}
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("ListTasks(%+v): more than 1000 pages", q)
		}
		page, err := s.ListTasks(context.Background(), q)
		if err != nil {
			t.Fatalf("ListTasks(%+v): %v", q, err)
		}
		if pages > 0 && page.Total != total {
			t.Errorf("ListTasks(%+v): Total %d on page %d, %d on the first", q, page.Total, pages, total)
		}
		total = page.Total
		if len(page.Tasks) > want {
			t.Errorf("ListTasks(%+v): %d tasks on a page of %d", q, len(page.Tasks), want)
		}
		for _, info := range page.Tasks {
			if info.Agent != q.Agent || !q.AllOwners && info.Owner != q.Owner {
				t.Errorf("ListTasks(%+v) listed %s of agent %q owner %q", q, info.Task.ID, info.Agent, info.Owner)
			}
			ids = append(ids, info.Task.ID)
		}
		if page.Next == "" {
			return ids, total
		}
		if len(page.Tasks) != want {
			t.Errorf("ListTasks(%+v): a page of %d tasks (not the last) holds %d", q, want, len(page.Tasks))
		}
		q.Cursor = page.Next
	}
}

// listFixture makes 40 tasks of agent "a", owner "o" in two contexts and
// every state, some with the same status time (ties go by id), one
// without a status time; and tasks of other agents and owners.
func listFixture(t *testing.T, s store.Store) []listed {
	states := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateCompleted,
		a2a.TaskStateCanceled, a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateAuthRequired}
	var mine []listed
	for i := range 40 {
		l := listed{id: fmt.Sprintf("t%02d", (i*17)%40), agent: "a", owner: "o", contextID: fmt.Sprintf("ctx-%d", i%2),
			state: states[i%len(states)], at: listBase.Add(time.Duration(i/3) * time.Second)}
		if i == 7 {
			l.at = time.Time{}
		}
		createListed(t, s, l)
		mine = append(mine, l)
	}
	for _, l := range []listed{
		{id: "other-agent", agent: "b", owner: "o", contextID: "ctx-0", state: a2a.TaskStateWorking, at: listBase.Add(time.Hour)},
		{id: "other-owner", agent: "a", owner: "o2", contextID: "ctx-0", state: a2a.TaskStateWorking, at: listBase.Add(time.Hour)},
		{id: "no-owner", agent: "a", owner: "", contextID: "ctx-0", state: a2a.TaskStateWorking, at: listBase.Add(time.Hour)},
	} {
		createListed(t, s, l)
	}
	return mine
}

func testListTasksPaging(t *testing.T, s store.Store) {
	mine := listFixture(t, s)
	want := listOrder(mine)
	for _, limit := range []int{1, 2, 3, 7, 13, 39, 40, 41, 0, 100, store.MaxTaskLimit + 1} {
		got, total := listAll(t, s, store.TaskQuery{Agent: "a", Owner: "o"}, limit)
		if total != len(mine) {
			t.Errorf("limit %d: Total %d, want %d", limit, total, len(mine))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("limit %d: ids (-want +got):\n%s", limit, diff)
		}
	}
	// The listed snapshots are the tasks' own.
	page, err := s.ListTasks(context.Background(), store.TaskQuery{Agent: "a", Owner: "o", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range page.Tasks {
		full := mustTask(t, s, info.Task.ID)
		if diff := cmp.Diff(full, info, CmpOpts); diff != "" {
			t.Errorf("listed %s differs from Task (-Task +listed):\n%s", info.Task.ID, diff)
		}
	}
}

func testListTasksFilters(t *testing.T, s store.Store) {
	mine := listFixture(t, s)
	check := func(q store.TaskQuery, keep func(listed) bool) {
		t.Helper()
		var sel []listed
		for _, l := range mine {
			if keep(l) {
				sel = append(sel, l)
			}
		}
		for _, limit := range []int{1, 4, 0} {
			got, total := listAll(t, s, q, limit)
			if total != len(sel) {
				t.Errorf("%+v: Total %d, want %d", q, total, len(sel))
			}
			if diff := cmp.Diff(listOrder(sel), got, CmpOpts); diff != "" {
				t.Errorf("%+v limit %d: ids (-want +got):\n%s", q, limit, diff)
			}
		}
	}
	q := store.TaskQuery{Agent: "a", Owner: "o"}
	for _, ctxID := range []string{"ctx-0", "ctx-1", "ctx-none"} {
		q := q
		q.ContextID = ctxID
		check(q, func(l listed) bool { return l.contextID == ctxID })
	}
	for _, st := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateAuthRequired, a2a.TaskStateRejected} {
		q := q
		q.State = st
		check(q, func(l listed) bool { return l.state == st })
		q.ContextID = "ctx-1"
		check(q, func(l listed) bool { return l.state == st && l.contextID == "ctx-1" })
	}
	// StatusAfter: at or after (the boundary is included); a task
	// without a status time never passes.
	for _, after := range []time.Time{listBase, listBase.Add(5 * time.Second), listBase.Add(5*time.Second + 1), listBase.Add(time.Hour), listBase.Add(-time.Hour)} {
		q := q
		q.StatusAfter = after
		check(q, func(l listed) bool { return !l.at.IsZero() && !l.at.Before(after) })
		q.State = a2a.TaskStateSubmitted
		check(q, func(l listed) bool { return !l.at.IsZero() && !l.at.Before(after) && l.state == a2a.TaskStateSubmitted })
	}
	// A time zone does not change the instant.
	q.StatusAfter = listBase.Add(5 * time.Second).In(time.FixedZone("X", -7*3600))
	check(q, func(l listed) bool { return !l.at.IsZero() && !l.at.Before(listBase.Add(5*time.Second)) })
}

func testListTasksScope(t *testing.T, s store.Store) {
	listFixture(t, s)
	for _, c := range []struct {
		q    store.TaskQuery
		want []string
	}{
		{store.TaskQuery{Agent: "b", Owner: "o"}, []string{"other-agent"}},
		{store.TaskQuery{Agent: "a", Owner: "o2"}, []string{"other-owner"}},
		{store.TaskQuery{Agent: "a", Owner: ""}, []string{"no-owner"}},
		{store.TaskQuery{Agent: "b", Owner: ""}, nil},
		{store.TaskQuery{Agent: "", Owner: "o"}, nil},
		{store.TaskQuery{Agent: "A", Owner: "o"}, nil},
		{store.TaskQuery{Agent: "a", Owner: "O"}, nil},
	} {
		got, total := listAll(t, s, c.q, 0)
		if total != len(c.want) || !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v (Total %d), want %v", c.q, got, total, c.want)
		}
	}
	page, err := s.ListTasks(context.Background(), store.TaskQuery{Agent: "nobody"})
	if err != nil || len(page.Tasks) != 0 || page.Next != "" || page.Total != 0 {
		t.Errorf("ListTasks of an agent without tasks = %+v, %v", page, err)
	}
}

// testListTasksAllOwners lists an agent's tasks of every owner, paged and
// filtered; a cursor of such a query is not one of a query of one owner.
func testListTasksAllOwners(t *testing.T, s store.Store) {
	mine := listFixture(t, s)
	others := []listed{
		{id: "other-owner", agent: "a", owner: "o2", contextID: "ctx-0", state: a2a.TaskStateWorking, at: listBase.Add(time.Hour)},
		{id: "no-owner", agent: "a", owner: "", contextID: "ctx-0", state: a2a.TaskStateWorking, at: listBase.Add(time.Hour)},
	}
	all := append(slices.Clone(mine), others...)
	for _, limit := range []int{0, 1, 7} {
		got, total := listAll(t, s, store.TaskQuery{Agent: "a", AllOwners: true}, limit)
		if want := listOrder(all); total != len(want) || !slices.Equal(got, want) {
			t.Errorf("every owner, limit %d: %v (Total %d), want %v", limit, got, total, want)
		}
	}
	working := slices.DeleteFunc(slices.Clone(all), func(l listed) bool { return l.state != a2a.TaskStateWorking })
	got, total := listAll(t, s, store.TaskQuery{Agent: "a", AllOwners: true, State: a2a.TaskStateWorking}, 2)
	if want := listOrder(working); total != len(want) || !slices.Equal(got, want) {
		t.Errorf("every owner, working: %v (Total %d), want %v", got, total, want)
	}
	// Owner is ignored; another agent's tasks are not listed.
	got, _ = listAll(t, s, store.TaskQuery{Agent: "b", Owner: "nobody", AllOwners: true}, 0)
	if !slices.Equal(got, []string{"other-agent"}) {
		t.Errorf("agent b, every owner: %v", got)
	}
	ctx := context.Background()
	page, err := s.ListTasks(ctx, store.TaskQuery{Agent: "a", AllOwners: true, Limit: 2})
	if err != nil || page.Next == "" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	if _, err := s.ListTasks(ctx, store.TaskQuery{Agent: "a", Owner: "o", Cursor: page.Next}); !errors.Is(err, store.ErrInvalidCursor) {
		t.Errorf("an every-owner cursor with one owner: %v, want ErrInvalidCursor", err)
	}
}

func testListTasksCursor(t *testing.T, s store.Store) {
	ctx := context.Background()
	listFixture(t, s)
	q := store.TaskQuery{Agent: "a", Owner: "o", Limit: 3}
	page, err := s.ListTasks(ctx, q)
	if err != nil || page.Next == "" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	next := page.Next
	// The cursor works again (it is not consumed) ...
	q.Cursor = next
	p1, err1 := s.ListTasks(ctx, q)
	p2, err2 := s.ListTasks(ctx, q)
	if err1 != nil || err2 != nil || !cmp.Equal(p1, p2, CmpOpts) {
		t.Errorf("the same cursor twice: %v, %v, or different pages", err1, err2)
	}
	// ... with another page size ...
	q.Limit = 10
	if _, err := s.ListTasks(ctx, q); err != nil {
		t.Errorf("cursor with another limit: %v", err)
	}
	// ... but not with other filters, nor when made up or damaged.
	for name, bad := range map[string]store.TaskQuery{
		"other owner":   {Agent: "a", Owner: "o2", Cursor: next},
		"no owner":      {Agent: "a", Cursor: next},
		"other agent":   {Agent: "b", Owner: "o", Cursor: next},
		"context":       {Agent: "a", Owner: "o", ContextID: "ctx-0", Cursor: next},
		"state":         {Agent: "a", Owner: "o", State: a2a.TaskStateWorking, Cursor: next},
		"status after":  {Agent: "a", Owner: "o", StatusAfter: listBase, Cursor: next},
		"garbage":       {Agent: "a", Owner: "o", Cursor: "garbage!"},
		"not base64url": {Agent: "a", Owner: "o", Cursor: "////"},
		"short":         {Agent: "a", Owner: "o", Cursor: "AQ"},
		"truncated":     {Agent: "a", Owner: "o", Cursor: next[:len(next)/2]},
		"padded":        {Agent: "a", Owner: "o", Cursor: next + "=="},
		"longer":        {Agent: "a", Owner: "o", Cursor: next + "A"},
		"changed":       {Agent: "a", Owner: "o", Cursor: flip(next)},
		"huge":          {Agent: "a", Owner: "o", Cursor: strings.Repeat("A", 1<<16)},
	} {
		if _, err := s.ListTasks(ctx, bad); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("%s: %v, want ErrInvalidCursor", name, err)
		}
	}
}

// flip changes the first character of a cursor.
func flip(c string) string {
	b := []byte(c)
	if b[0] == 'A' {
		b[0] = 'B'
	} else {
		b[0] = 'A'
	}
	return string(b)
}

// testListTasksMoving: tasks created while a client pages through come
// first and do not disturb the later pages; a status update moves a task
// to the front; a deleted task is no longer listed.
func testListTasksMoving(t *testing.T, s store.Store) {
	ctx := context.Background()
	mine := listFixture(t, s)
	want := listOrder(mine)
	q := store.TaskQuery{Agent: "a", Owner: "o", Limit: 6}
	var got []string
	for i := 0; ; i++ {
		page, err := s.ListTasks(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range page.Tasks {
			got = append(got, info.Task.ID)
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
		// Newer tasks arrive between pages.
		createListed(t, s, listed{id: fmt.Sprintf("new%d", i), agent: "a", owner: "o", contextID: "ctx-0", state: a2a.TaskStateWorking,
			at: listBase.Add(time.Hour + time.Duration(i)*time.Second)})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paging while tasks are created (-want +got):\n%s", diff)
	}

	// The oldest task with a status time gets a status update: it comes
	// first now.
	oldest := want[len(want)-2] // the last one has no status time
	info := mustTask(t, s, oldest)
	ev := &a2a.TaskStatusUpdateEvent{TaskID: oldest, ContextID: info.Task.ContextID,
		Status: a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: listBase.Add(2 * time.Hour)}, Final: true}
	task, err := fold.Replay(info.Task, ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, store.Append{TaskID: oldest, After: info.Seq, Records: []store.Record{{Event: ev}}, Snapshot: task}); err != nil {
		t.Fatal(err)
	}
	page, err := s.ListTasks(ctx, store.TaskQuery{Agent: "a", Owner: "o", Limit: 1})
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].Task.ID != oldest || page.Tasks[0].Task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("after a status update: %+v, %v; want %s first, canceled", page, err, oldest)
	}
	page, err = s.ListTasks(ctx, store.TaskQuery{Agent: "a", Owner: "o", State: a2a.TaskStateCanceled, StatusAfter: listBase.Add(2 * time.Hour)})
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].Task.ID != oldest {
		t.Errorf("filtered on its new state and time: %+v, %v", page, err)
	}

	// Retention deletes the finished tasks: they are no longer listed.
	for more := true; more; {
		if _, more, err = s.DeleteFinished(ctx, time.Now().Add(time.Hour), 0); err != nil {
			t.Fatal(err)
		}
	}
	ids, total := listAll(t, s, store.TaskQuery{Agent: "a", Owner: "o"}, 4)
	for _, id := range ids {
		if st := mustTask(t, s, id).Task.Status.State; st.Terminal() {
			t.Errorf("%s (%s) listed after retention", id, st)
		}
	}
	if total != len(ids) {
		t.Errorf("Total %d after retention, %d listed", total, len(ids))
	}
}
