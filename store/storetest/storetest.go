// Package storetest is a conformance suite for store.Store implementations.
// An implementation's tests call Run with a function that opens a fresh,
// empty store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return memory.New() })
//	}
//
// and its benchmarks call BenchmarkAppend.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/store"
)

// Run runs the conformance suite as subtests of t. open is called once per
// subtest and must return a new, empty store; Run closes it when the subtest
// ends (open may register its own cleanup as well, Close is then called
// twice). Subtests call t.Parallel.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"CreateAndRead", testCreateAndRead},
		{"AppendSequence", testAppendSequence},
		{"Conflict", testConflict},
		{"NotFound", testNotFound},
		{"EventsPaging", testEventsPaging},
		{"DuplicateMessage", testDuplicateMessage},
		{"MessageIndexAgent", testMessageIndexAgent},
		{"Malformed", testMalformed},
		{"RecordTime", testRecordTime},
		{"CanceledContext", testCanceledContext},
		{"Unfinished", testUnfinished},
		{"SnapshotRoundTrip", testSnapshotRoundTrip},
		{"SnapshotIsolation", testSnapshotIsolation},
		{"ConcurrentTasks", testConcurrentTasks},
		{"ConcurrentSameTask", testConcurrentSameTask},
		{"Owner", testOwner},
		{"PushConfigs", testPushConfigs},
		{"LongTask", testLongTask},
		{"DeleteFinished", testDeleteFinished},
		{"Numbers", testNumbers},
		{"DeleteFinishedLimit", testDeleteFinishedLimit},
		{"ListTasksPaging", testListTasksPaging},
		{"ListTasksFilters", testListTasksFilters},
		{"ListTasksScope", testListTasksScope},
		{"ListTasksAllOwners", testListTasksAllOwners},
		{"ListTasksCursor", testListTasksCursor},
		{"ListTasksMoving", testListTasksMoving},
		{"AgentRegistry", testAgentRegistry},
		{"Attachments", testAttachments},
		{"Trace", testTrace},
		{"CountTasks", testCountTasks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

// BenchmarkAppend measures Append throughput under parallel load: each
// goroutine of b.RunParallel creates its own task, then appends one
// message record (with its message id indexed) per iteration. It reports
// allocations.
func BenchmarkAppend(b *testing.B, s store.Store) {
	ctx := context.Background()
	var mu sync.Mutex
	worker := 0
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		worker++
		id := fmt.Sprintf("bench-%d-%d", b.N, worker)
		mu.Unlock()
		snap := a2a.Task{ID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		if err := s.Append(ctx, store.Append{Agent: "bench", TaskID: id, Records: []store.Record{{Event: &snap}}, Snapshot: snap}); err != nil {
			b.Error(err)
			return
		}
		seq := int64(1)
		for i := 0; pb.Next(); i++ {
			m := a2a.Message{MessageID: fmt.Sprintf("%s-m%d", id, i), Role: a2a.RoleUser, TaskID: id, ContextID: "ctx",
				Parts: []a2a.Part{a2a.NewTextPart("hello, benchmark")}}
			err := s.Append(ctx, store.Append{TaskID: id, After: seq, Records: []store.Record{{Event: &m}},
				Snapshot: snap, MessageIDs: []string{m.MessageID}})
			if err != nil {
				b.Error(err)
				return
			}
			seq++
		}
	})
}

// CmpOpts compares domain values the way a store must preserve them: times
// by instant, nil and empty slices and maps alike (cmp.Diff's options for
// a store's tests too).
var CmpOpts = cmp.Options{
	cmpopts.EquateEmpty(),
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
}

func newTask(id string, state a2a.TaskState) a2a.Task {
	return a2a.Task{ID: id, ContextID: "ctx-" + id, Status: a2a.TaskStatus{State: state}}
}

func textMessage(id, taskID, text string) *a2a.Message {
	return &a2a.Message{MessageID: id, Role: a2a.RoleUser, TaskID: taskID, ContextID: "ctx-" + taskID,
		Parts: []a2a.Part{a2a.NewTextPart(text)}}
}

func statusEvent(taskID string, state a2a.TaskState) *a2a.TaskStatusUpdateEvent {
	return &a2a.TaskStatusUpdateEvent{TaskID: taskID, ContextID: "ctx-" + taskID, Status: a2a.TaskStatus{State: state}, Final: state.Final()}
}

// create creates task id owned by agent with one creation record.
func create(t *testing.T, s store.Store, agent, id string, state a2a.TaskState, msgIDs ...string) a2a.Task {
	t.Helper()
	snap := newTask(id, state)
	c := snap
	if err := s.Append(context.Background(), store.Append{Agent: agent, TaskID: id, Records: []store.Record{{Event: &c}},
		Snapshot: snap, MessageIDs: msgIDs}); err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
	return snap
}

// appendStatus appends n status records to task id after seq after and
// makes state the snapshot's state.
func appendStatus(t *testing.T, s store.Store, id string, after int64, n int, state a2a.TaskState) {
	t.Helper()
	recs := make([]store.Record, n)
	for i := range recs {
		recs[i].Event = statusEvent(id, state)
	}
	if err := s.Append(context.Background(), store.Append{TaskID: id, After: after, Records: recs, Snapshot: newTask(id, state)}); err != nil {
		t.Fatalf("append %s after %d: %v", id, after, err)
	}
}

func mustTask(t *testing.T, s store.Store, id string) store.TaskInfo {
	t.Helper()
	info, err := s.Task(context.Background(), id)
	if err != nil {
		t.Fatalf("Task(%s): %v", id, err)
	}
	return info
}

func mustEvents(t *testing.T, s store.Store, id string, after int64, limit int) []store.Record {
	t.Helper()
	recs, err := s.Events(context.Background(), id, after, limit)
	if err != nil {
		t.Fatalf("Events(%s, %d, %d): %v", id, after, limit, err)
	}
	return recs
}

func seqs(recs []store.Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

func span(from, to int64) []int64 {
	out := []int64{}
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// assertUnchanged checks that task id still has seq and the events 1..seq.
func assertUnchanged(t *testing.T, s store.Store, id string, seq int64, want a2a.Task) {
	t.Helper()
	info := mustTask(t, s, id)
	if info.Seq != seq {
		t.Errorf("Task(%s).Seq = %d, want %d", id, info.Seq, seq)
	}
	if diff := cmp.Diff(want, info.Task, CmpOpts); diff != "" {
		t.Errorf("Task(%s) snapshot changed (-want +got):\n%s", id, diff)
	}
	if got := seqs(mustEvents(t, s, id, 0, 0)); !slices.Equal(got, span(1, seq)) {
		t.Errorf("Events(%s) seqs = %v, want %v", id, got, span(1, seq))
	}
}

func testCreateAndRead(t *testing.T, s store.Store) {
	ctx := context.Background()
	before := time.Now()
	snap := newTask("t1", a2a.TaskStateSubmitted)
	snap.History = []a2a.Message{*textMessage("m1", "t1", "hi")}
	first := snap
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	err := s.Append(ctx, store.Append{Agent: "echo", TaskID: "t1", Records: []store.Record{{Seq: 1, Time: at, Event: &first}},
		Snapshot: snap, MessageIDs: []string{"m1"}})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	info := mustTask(t, s, "t1")
	if info.Agent != "echo" || info.Seq != 1 {
		t.Errorf("Task: Agent %q Seq %d, want echo 1", info.Agent, info.Seq)
	}
	if diff := cmp.Diff(snap, info.Task, CmpOpts); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if info.Created.Before(before.Add(-time.Second)) || info.Created.After(time.Now().Add(time.Second)) {
		t.Errorf("Created = %v, want about now", info.Created)
	}
	if !info.Updated.Equal(info.Created) {
		t.Errorf("Updated = %v, want Created %v", info.Updated, info.Created)
	}
	recs := mustEvents(t, s, "t1", 0, 0)
	want := []store.Record{{Seq: 1, Time: at, Event: &snap}}
	if diff := cmp.Diff(want, recs, CmpOpts); diff != "" {
		t.Errorf("Events (-want +got):\n%s", diff)
	}
	if id, err := s.MessageTask(ctx, "echo", "m1"); err != nil || id != "t1" {
		t.Errorf("MessageTask(echo, m1) = %q, %v; want t1", id, err)
	}
	if id, err := s.MessageTask(ctx, "other", "m1"); err != nil || id != "" {
		t.Errorf("MessageTask(other, m1) = %q, %v; want \"\"", id, err)
	}
}

func testAppendSequence(t *testing.T, s store.Store) {
	ctx := context.Background()
	create(t, s, "a", "t", a2a.TaskStateSubmitted)
	created := mustTask(t, s, "t").Created
	time.Sleep(2 * time.Millisecond)
	// Seq 0: numbered by the store.
	appendStatus(t, s, "t", 1, 2, a2a.TaskStateWorking)
	// Explicit, correct Seq values are accepted too.
	snap := newTask("t", a2a.TaskStateCompleted)
	err := s.Append(ctx, store.Append{TaskID: "t", After: 3, Snapshot: snap, Records: []store.Record{
		{Seq: 4, Event: textMessage("m4", "t", "four")},
		{Seq: 5, Event: statusEvent("t", a2a.TaskStateCompleted)},
	}})
	if err != nil {
		t.Fatalf("append explicit seqs: %v", err)
	}
	info := mustTask(t, s, "t")
	if info.Seq != 5 || info.Task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("Task: Seq %d state %q, want 5 completed", info.Seq, info.Task.Status.State)
	}
	if !info.Created.Equal(created) {
		t.Errorf("Created changed: %v, was %v", info.Created, created)
	}
	if !info.Updated.After(info.Created) {
		t.Errorf("Updated %v not after Created %v", info.Updated, info.Created)
	}
	recs := mustEvents(t, s, "t", 0, 0)
	if got := seqs(recs); !slices.Equal(got, span(1, 5)) {
		t.Fatalf("seqs = %v, want 1..5", got)
	}
	if _, ok := recs[0].Event.(*a2a.Task); !ok {
		t.Errorf("record 1 is %T, want *a2a.Task", recs[0].Event)
	}
	if m, ok := recs[3].Event.(*a2a.Message); !ok || m.MessageID != "m4" {
		t.Errorf("record 4 = %#v, want message m4", recs[3].Event)
	}
	// Events returns the caller's own slice.
	recs[0] = store.Record{}
	if again := mustEvents(t, s, "t", 0, 1); len(again) != 1 || again[0].Seq != 1 {
		t.Errorf("Events after modifying a returned slice: %v", again)
	}
}

func testConflict(t *testing.T, s store.Store) {
	ctx := context.Background()
	snap := create(t, s, "a", "t", a2a.TaskStateSubmitted)
	appendStatus(t, s, "t", 1, 2, a2a.TaskStateSubmitted)
	snap.Status.State = a2a.TaskStateSubmitted
	for _, after := range []int64{0, 1, 2, 4, 100} {
		c := newTask("t", a2a.TaskStateWorking)
		err := s.Append(ctx, store.Append{Agent: "a", TaskID: "t", After: after,
			Records: []store.Record{{Event: &c}}, Snapshot: c, MessageIDs: []string{fmt.Sprint("m", after)}})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("Append after %d on seq 3: %v, want ErrConflict", after, err)
		}
		if id, _ := s.MessageTask(ctx, "a", fmt.Sprint("m", after)); id != "" {
			t.Errorf("conflicting append indexed its message id under %q", id)
		}
	}
	assertUnchanged(t, s, "t", 3, snap)
}

func testNotFound(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Task(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Task: %v, want ErrNotFound", err)
	}
	if _, err := s.Events(ctx, "nope", 0, 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Events: %v, want ErrNotFound", err)
	}
	if _, err := s.Events(ctx, "nope", 5, 10); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Events after 5: %v, want ErrNotFound", err)
	}
	snap := newTask("nope", a2a.TaskStateWorking)
	err := s.Append(ctx, store.Append{Agent: "a", TaskID: "nope", After: 1, Records: []store.Record{{Event: statusEvent("nope", a2a.TaskStateWorking)}},
		Snapshot: snap, MessageIDs: []string{"m"}})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Append after 1 to a missing task: %v, want ErrNotFound", err)
	}
	if _, err := s.Task(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Task after failed append: %v, want ErrNotFound", err)
	}
	if id, err := s.MessageTask(ctx, "a", "m"); id != "" || err != nil {
		t.Errorf("MessageTask = %q, %v; want \"\", nil", id, err)
	}
}

func testEventsPaging(t *testing.T, s store.Store) {
	create(t, s, "a", "t", a2a.TaskStateWorking)
	appendStatus(t, s, "t", 1, 9, a2a.TaskStateWorking)
	for _, tc := range []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 0, span(1, 10)},
		{0, -1, span(1, 10)},
		{-5, 0, span(1, 10)},
		{0, 1, span(1, 1)},
		{3, 4, span(4, 7)},
		{8, 5, span(9, 10)},
		{9, 0, span(10, 10)},
		{10, 0, span(1, 0)},
		{20, 3, span(1, 0)},
		{0, 100, span(1, 10)},
	} {
		if got := seqs(mustEvents(t, s, "t", tc.after, tc.limit)); !slices.Equal(got, tc.want) {
			t.Errorf("Events(after %d, limit %d) = %v, want %v", tc.after, tc.limit, got, tc.want)
		}
	}
}

func testDuplicateMessage(t *testing.T, s store.Store) {
	ctx := context.Background()
	snap := create(t, s, "a", "t1", a2a.TaskStateWorking, "m1")

	// Appending a message id already indexed for the agent: nothing written.
	err := s.Append(ctx, store.Append{Agent: "a", TaskID: "t1", After: 1, Records: []store.Record{{Event: textMessage("m1", "t1", "again")}},
		Snapshot: newTask("t1", a2a.TaskStateCompleted), MessageIDs: []string{"m2", "m1"}})
	if !errors.Is(err, store.ErrDuplicateMessage) {
		t.Fatalf("Append with an indexed id: %v, want ErrDuplicateMessage", err)
	}
	assertUnchanged(t, s, "t1", 1, snap)
	if id, _ := s.MessageTask(ctx, "a", "m2"); id != "" {
		t.Errorf("m2 of the failed append is indexed under %q", id)
	}

	// Creating a task with an indexed id: no task.
	c := newTask("t2", a2a.TaskStateSubmitted)
	err = s.Append(ctx, store.Append{Agent: "a", TaskID: "t2", Records: []store.Record{{Event: &c}}, Snapshot: c, MessageIDs: []string{"m1"}})
	if !errors.Is(err, store.ErrDuplicateMessage) {
		t.Fatalf("create with an indexed id: %v, want ErrDuplicateMessage", err)
	}
	if _, err := s.Task(ctx, "t2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Task(t2) after failed create: %v, want ErrNotFound", err)
	}

	// The same id twice in one append.
	err = s.Append(ctx, store.Append{Agent: "a", TaskID: "t3", Records: []store.Record{{Event: &c}}, Snapshot: newTask("t3", a2a.TaskStateSubmitted),
		MessageIDs: []string{"m3", "m3"}})
	if !errors.Is(err, store.ErrDuplicateMessage) {
		t.Fatalf("create with a repeated id: %v, want ErrDuplicateMessage", err)
	}
	if _, err := s.Task(ctx, "t3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Task(t3) after failed create: %v, want ErrNotFound", err)
	}
	if id, _ := s.MessageTask(ctx, "a", "m3"); id != "" {
		t.Errorf("m3 of the failed create is indexed under %q", id)
	}

	// The same id under another agent is a different key.
	create(t, s, "b", "t4", a2a.TaskStateSubmitted, "m1")
	for agent, want := range map[string]string{"a": "t1", "b": "t4"} {
		if id, err := s.MessageTask(ctx, agent, "m1"); err != nil || id != want {
			t.Errorf("MessageTask(%s, m1) = %q, %v; want %s", agent, id, err, want)
		}
	}

	// The store still works for t1 afterwards.
	appendStatus(t, s, "t1", 1, 1, a2a.TaskStateCompleted)
}

func testMessageIndexAgent(t *testing.T, s store.Store) {
	ctx := context.Background()
	create(t, s, "a", "t", a2a.TaskStateWorking)
	// Agent left empty after creation: ids are indexed under the task's agent.
	err := s.Append(ctx, store.Append{TaskID: "t", After: 1, Records: []store.Record{{Event: textMessage("m", "t", "x")}},
		Snapshot: newTask("t", a2a.TaskStateWorking), MessageIDs: []string{"m"}})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := s.MessageTask(ctx, "a", "m"); err != nil || id != "t" {
		t.Errorf("MessageTask(a, m) = %q, %v; want t", id, err)
	}
	if id, err := s.MessageTask(ctx, "", "m"); err != nil || id != "" {
		t.Errorf("MessageTask(\"\", m) = %q, %v; want \"\"", id, err)
	}
	// The same id again with the agent spelled out is a duplicate.
	err = s.Append(ctx, store.Append{Agent: "a", TaskID: "t", After: 2, Records: []store.Record{{Event: textMessage("m", "t", "x")}},
		Snapshot: newTask("t", a2a.TaskStateWorking), MessageIDs: []string{"m"}})
	if !errors.Is(err, store.ErrDuplicateMessage) {
		t.Errorf("duplicate: %v, want ErrDuplicateMessage", err)
	}
}

func testMalformed(t *testing.T, s store.Store) {
	ctx := context.Background()
	snap := create(t, s, "a", "t", a2a.TaskStateWorking)
	rec := func() []store.Record { return []store.Record{{Event: statusEvent("t", a2a.TaskStateWorking)}} }
	for name, a := range map[string]store.Append{
		"no task id":        {Agent: "a", Records: rec(), Snapshot: newTask("", a2a.TaskStateWorking)},
		"create no agent":   {TaskID: "n1", Records: rec(), Snapshot: newTask("n1", a2a.TaskStateWorking)},
		"negative after":    {Agent: "a", TaskID: "t", After: -1, Records: rec(), Snapshot: snap},
		"no records":        {Agent: "a", TaskID: "t", After: 1, Snapshot: snap},
		"nil event":         {Agent: "a", TaskID: "t", After: 1, Records: []store.Record{{}}, Snapshot: snap},
		"wrong seq":         {Agent: "a", TaskID: "t", After: 1, Records: []store.Record{{Seq: 3, Event: statusEvent("t", a2a.TaskStateWorking)}}, Snapshot: snap},
		"snapshot id":       {Agent: "a", TaskID: "t", After: 1, Records: rec(), Snapshot: newTask("u", a2a.TaskStateWorking)},
		"empty message id":  {Agent: "a", TaskID: "t", After: 1, Records: rec(), Snapshot: snap, MessageIDs: []string{""}},
		"other agent":       {Agent: "b", TaskID: "t", After: 1, Records: rec(), Snapshot: snap},
		"create other seq":  {Agent: "a", TaskID: "n2", Records: []store.Record{{Seq: 2, Event: statusEvent("n2", a2a.TaskStateWorking)}}, Snapshot: newTask("n2", a2a.TaskStateWorking)},
		"create no records": {Agent: "a", TaskID: "n3", Snapshot: newTask("n3", a2a.TaskStateWorking)},
	} {
		err := s.Append(ctx, a)
		if err == nil {
			t.Errorf("%s: Append succeeded, want an error", name)
			continue
		}
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: %v, want an error other than ErrNotFound/ErrConflict", name, err)
		}
	}
	assertUnchanged(t, s, "t", 1, snap)
	for _, id := range []string{"n1", "n2", "n3"} {
		if _, err := s.Task(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Task(%s): %v, want ErrNotFound", id, err)
		}
	}
}

func testRecordTime(t *testing.T, s store.Store) {
	before := time.Now()
	create(t, s, "a", "t", a2a.TaskStateWorking)
	after := time.Now()
	recs := mustEvents(t, s, "t", 0, 0)
	if got := recs[0].Time; got.Before(before.Add(-time.Second)) || got.After(after.Add(time.Second)) {
		t.Errorf("zero record Time became %v, want about %v", got, before)
	}
	loc := time.FixedZone("X", 5*3600)
	at := time.Date(2031, 12, 31, 23, 59, 59, 999999999, loc)
	err := s.Append(context.Background(), store.Append{TaskID: "t", After: 1, Snapshot: newTask("t", a2a.TaskStateWorking),
		Records: []store.Record{{Time: at, Event: statusEvent("t", a2a.TaskStateWorking)}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustEvents(t, s, "t", 1, 0)[0].Time; !got.Equal(at) {
		t.Errorf("record Time = %v, want %v", got, at)
	}
}

func testCanceledContext(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := newTask("t", a2a.TaskStateWorking)
	err := s.Append(ctx, store.Append{Agent: "a", TaskID: "t", Records: []store.Record{{Event: &c}}, Snapshot: c})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Append with a canceled context: %v, want context.Canceled", err)
	}
	if _, err := s.Task(context.Background(), "t"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Task after canceled create: %v, want ErrNotFound", err)
	}
}

func testUnfinished(t *testing.T, s store.Store) {
	ctx := context.Background()
	got, err := s.Unfinished(ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("Unfinished on an empty store = %v, %v", got, err)
	}
	states := []a2a.TaskState{
		a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateCompleted,
		a2a.TaskStateCanceled, a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateAuthRequired, a2a.TaskStateUnspecified,
	}
	want := map[string]a2a.TaskState{}
	for _, st := range states {
		id := "t-" + st.String()
		create(t, s, "a", id, st)
		if st == a2a.TaskStateSubmitted || st == a2a.TaskStateWorking || st == a2a.TaskStateUnspecified {
			want[id] = st
		}
	}
	check := func() {
		t.Helper()
		infos, err := s.Unfinished(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]a2a.TaskState{}
		for _, info := range infos {
			got[info.Task.ID] = info.Task.Status.State
			if info.Agent != "a" || info.Seq < 1 {
				t.Errorf("Unfinished: %s has Agent %q Seq %d", info.Task.ID, info.Agent, info.Seq)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Unfinished (-want +got):\n%s", diff)
		}
	}
	check()
	// working → completed leaves the set; input-required → working joins it.
	appendStatus(t, s, "t-working", 1, 1, a2a.TaskStateCompleted)
	delete(want, "t-working")
	appendStatus(t, s, "t-input-required", 1, 1, a2a.TaskStateWorking)
	want["t-input-required"] = a2a.TaskStateWorking
	check()
}

// richTask is a snapshot using every kind of part and event field.
func richTask(id string) a2a.Task {
	ts := time.Date(2025, 6, 7, 8, 9, 10, 123000000, time.UTC)
	meta := map[string]any{"s": "x", "n": json.Number("1.5"), "b": true, "nil": nil, "list": []any{"a", json.Number("2"), map[string]any{"k": "v"}},
		"obj": map[string]any{"deep": map[string]any{"er": []any{}}}}
	user := a2a.Message{
		MessageID: "m-user", Role: a2a.RoleUser, ContextID: "ctx", TaskID: id,
		ReferenceTaskIDs: []string{"other"}, Extensions: []string{"https://example.com/ext"}, Metadata: meta,
		Parts: []a2a.Part{
			a2a.Part{Content: a2a.Text("hello ✓ \"quoted\"\n"), Metadata: map[string]any{"lang": "en"}},
			a2a.Part{Content: a2a.Text("# 1.0 fields"), MediaType: "text/markdown", Filename: "notes.md"},
			a2a.Part{Content: a2a.Raw([]byte{0, 1, 2, 255}), MediaType: "application/octet-stream", Filename: "a.bin"},
			a2a.Part{Content: a2a.URL("https://example.com/b.txt"), MediaType: "text/plain", Filename: "b.txt"},
			a2a.Part{Content: a2a.Data{Value: map[string]any{"answer": json.Number("42"), "nested": []any{true, nil}}}, Metadata: map[string]any{"m": "d"}},
			a2a.Part{Content: a2a.Data{Value: []any{json.Number("123456789012345678901234567890"), "x"}}, MediaType: "application/json", Filename: "list.json"},
			a2a.NewDataPart("a string"),
			a2a.NewDataPart(nil),
		},
	}
	agent := a2a.Message{MessageID: "m-agent", Role: a2a.RoleAgent, ContextID: "ctx", TaskID: id,
		Parts: []a2a.Part{a2a.NewTextPart("working on it")}}
	return a2a.Task{
		ID: id, ContextID: "ctx",
		Status:  a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: &agent, Timestamp: ts},
		History: []a2a.Message{user, agent},
		Artifacts: []a2a.Artifact{{
			ArtifactID: "art-1", Name: "result", Description: "the result", Extensions: []string{"e"},
			Metadata: map[string]any{"k": "v"},
			Parts:    []a2a.Part{a2a.NewTextPart("chunk"), a2a.NewDataPart(map[string]any{"x": "y"})},
		}},
		Metadata: meta,
	}
}

func testSnapshotRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	task := richTask("rt")
	created := richTask("rt")
	created.Status = a2a.TaskStatus{State: a2a.TaskStateSubmitted}
	created.History, created.Artifacts = nil, nil
	events := []a2a.Event{
		&created,
		&task.History[0],
		&a2a.TaskStatusUpdateEvent{TaskID: "rt", ContextID: "ctx", Status: task.Status, Metadata: map[string]any{"why": "because"}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "rt", ContextID: "ctx", Artifact: task.Artifacts[0], Append: true, LastChunk: true,
			Metadata: map[string]any{"n": json.Number("3.0")}},
		&a2a.TaskStatusUpdateEvent{TaskID: "rt", ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, Final: true},
	}
	recs := make([]store.Record, len(events))
	for i, e := range events {
		recs[i] = store.Record{Time: time.Date(2025, 6, 7, 8, 9, 10, i, time.UTC), Event: e}
	}
	afterTwo := created
	afterTwo.History = []a2a.Message{task.History[0]}
	err := s.Append(ctx, store.Append{Agent: "a", TaskID: "rt", Records: recs[:2], Snapshot: afterTwo,
		MessageIDs: []string{"m-user"}})
	if err != nil {
		t.Fatal(err)
	}
	task.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
	// A status update's metadata keys are set in the task's metadata.
	task.Metadata = maps.Clone(task.Metadata)
	task.Metadata["why"] = "because"
	if err := s.Append(ctx, store.Append{TaskID: "rt", After: 2, Records: recs[2:], Snapshot: task}); err != nil {
		t.Fatal(err)
	}

	info := mustTask(t, s, "rt")
	// The snapshot appended last is the fold of the records: the rich
	// task, completed by the last record.
	if diff := cmp.Diff(task, info.Task, CmpOpts); diff != "" {
		t.Errorf("snapshot round trip (-want +got):\n%s", diff)
	}
	got := mustEvents(t, s, "rt", 0, 0)
	for i := range recs {
		recs[i].Seq = int64(i + 1)
	}
	if diff := cmp.Diff(recs, got, CmpOpts); diff != "" {
		t.Errorf("events round trip (-want +got):\n%s", diff)
	}
	// File bytes stay bytes (not a URI), URIs stay URIs.
	parts := info.Task.History[0].Parts
	if _, ok := parts[2].Content.(a2a.Raw); !ok {
		t.Errorf("file part by value came back as %#v", parts[2])
	}
	if u, ok := parts[3].Content.(a2a.URL); !ok || u == "" {
		t.Errorf("file part by reference came back as %#v", parts[3])
	}
}

// testSnapshotIsolation: the caller may change the arrays of a snapshot it
// read (the usual fold: replace or modify a History or Artifacts element,
// append to them or to an artifact's Parts) without changing what the
// store holds. (A snapshot it appended is the store's: store.Append.)
func testSnapshotIsolation(t *testing.T, s store.Store) {
	ctx := context.Background()
	snap := richTask("iso")
	c := richTask("iso")
	if err := s.Append(ctx, store.Append{Agent: "a", TaskID: "iso", Records: []store.Record{{Event: &c}}, Snapshot: snap}); err != nil {
		t.Fatal(err)
	}

	for range 2 {
		info := mustTask(t, s, "iso")
		if diff := cmp.Diff(richTask("iso"), info.Task, CmpOpts); diff != "" {
			t.Fatalf("stored snapshot changed (-want +got):\n%s", diff)
		}
		got := info.Task
		got.History[0].MessageID = "changed"
		got.History = append(got.History, *textMessage("more", "iso", "more"))
		got.Artifacts[0].Description = "changed"
		got.Artifacts[0].Parts = append(got.Artifacts[0].Parts, a2a.NewTextPart("more"))
		got.History[1].Parts = append(got.History[1].Parts, a2a.NewTextPart("more"))
		got.Artifacts = append(got.Artifacts, a2a.Artifact{ArtifactID: "new"})
	}
}

// testConcurrentTasks appends to many tasks from many goroutines.
func testConcurrentTasks(t *testing.T, s store.Store) {
	const workers, tasks, appends = 8, 4, 10
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for k := range tasks {
				id := fmt.Sprintf("w%d-t%d", w, k)
				c := newTask(id, a2a.TaskStateWorking)
				if err := s.Append(ctx, store.Append{Agent: "a", TaskID: id, Records: []store.Record{{Event: &c}}, Snapshot: c}); err != nil {
					t.Errorf("create %s: %v", id, err)
					return
				}
			}
			for i := range appends {
				for k := range tasks {
					id := fmt.Sprintf("w%d-t%d", w, k)
					mid := fmt.Sprintf("%s-m%d", id, i)
					snap := newTask(id, a2a.TaskStateWorking)
					var ev a2a.Event = textMessage(mid, id, mid)
					if i == appends-1 {
						// The last message completes the task.
						snap.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: textMessage(mid, id, mid)}
						ev = &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "ctx-" + id, Status: snap.Status, Final: true}
					}
					for j := range i + 1 {
						snap.History = append(snap.History, *textMessage(fmt.Sprintf("%s-m%d", id, j), id, fmt.Sprintf("%s-m%d", id, j)))
					}
					err := s.Append(ctx, store.Append{TaskID: id, After: int64(1 + i), Snapshot: snap,
						Records: []store.Record{{Event: ev}}, MessageIDs: []string{mid}})
					if err != nil {
						t.Errorf("append %s: %v", mid, err)
						return
					}
					// Readers running alongside writers see whole appends.
					if info, err := s.Task(ctx, id); err != nil || info.Seq != int64(2+i) {
						t.Errorf("Task(%s) after append %d: seq %d, %v", id, i, info.Seq, err)
					}
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for w := range workers {
		for k := range tasks {
			id := fmt.Sprintf("w%d-t%d", w, k)
			info := mustTask(t, s, id)
			if info.Seq != appends+1 || info.Task.Status.State != a2a.TaskStateCompleted {
				t.Errorf("%s: seq %d state %s", id, info.Seq, info.Task.Status.State)
			}
			recs := mustEvents(t, s, id, 0, 0)
			if !slices.Equal(seqs(recs), span(1, appends+1)) {
				t.Errorf("%s: seqs %v", id, seqs(recs))
			}
			for i, r := range recs[1:] {
				mid := fmt.Sprintf("%s-m%d", id, i)
				m, ok := r.Event.(*a2a.Message)
				if su, isStatus := r.Event.(*a2a.TaskStatusUpdateEvent); isStatus && su.Status.Message != nil {
					m, ok = su.Status.Message, true
				}
				if !ok || m.MessageID != mid {
					t.Errorf("%s: record %d = %#v, want message %s", id, r.Seq, r.Event, mid)
				}
				if got, _ := s.MessageTask(ctx, "a", mid); got != id {
					t.Errorf("MessageTask(%s) = %q, want %s", mid, got, id)
				}
			}
		}
	}
	if u, err := s.Unfinished(ctx); err != nil || len(u) != 0 {
		t.Errorf("Unfinished = %d tasks, %v; want none", len(u), err)
	}
}

// testConcurrentSameTask has many goroutines race to append to one task,
// re-reading the sequence after each conflict: every append lands exactly once.
func testConcurrentSameTask(t *testing.T, s store.Store) {
	const workers, appends = 8, 8
	ctx := context.Background()
	create(t, s, "a", "hot", a2a.TaskStateWorking)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; i < appends; {
				info, err := s.Task(ctx, "hot")
				if err != nil {
					t.Error(err)
					return
				}
				mid := fmt.Sprintf("w%d-m%d", w, i)
				err = s.Append(ctx, store.Append{TaskID: "hot", After: info.Seq, Snapshot: newTask("hot", a2a.TaskStateWorking),
					Records: []store.Record{{Event: textMessage(mid, "hot", mid)}}, MessageIDs: []string{mid}})
				switch {
				case err == nil:
					i++
				case errors.Is(err, store.ErrConflict):
				default:
					t.Errorf("append %s: %v", mid, err)
					return
				}
			}
		})
	}
	wg.Wait()
	recs := mustEvents(t, s, "hot", 0, 0)
	if !slices.Equal(seqs(recs), span(1, workers*appends+1)) {
		t.Fatalf("seqs = %v, want 1..%d", seqs(recs), workers*appends+1)
	}
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		m := r.Event.(*a2a.Message)
		if seen[m.MessageID] {
			t.Errorf("message %s appended twice", m.MessageID)
		}
		seen[m.MessageID] = true
	}
	if len(seen) != workers*appends {
		t.Errorf("%d distinct messages, want %d", len(seen), workers*appends)
	}
}

func testOwner(t *testing.T, s store.Store) {
	ctx := context.Background()
	snap := newTask("own", a2a.TaskStateSubmitted)
	c := snap
	if err := s.Append(ctx, store.Append{Agent: "a", Owner: "alice", TaskID: "own", Records: []store.Record{{Event: &c}}, Snapshot: snap}); err != nil {
		t.Fatal(err)
	}
	appendStatus(t, s, "own", 1, 1, a2a.TaskStateWorking)
	if got := mustTask(t, s, "own").Owner; got != "alice" {
		t.Fatalf("owner %q, want alice (kept across appends)", got)
	}
	if got := create(t, s, "a", "anon", a2a.TaskStateSubmitted); mustTask(t, s, got.ID).Owner != "" {
		t.Fatal("a task created without owner has one")
	}
}

func testPushConfigs(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.SetPushConfig(ctx, "nope", a2a.PushNotificationConfig{ID: "c", URL: "http://x"}, 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("set on unknown task: %v", err)
	}
	create(t, s, "a", "p", a2a.TaskStateSubmitted)
	appendStatus(t, s, "p", 1, 2, a2a.TaskStateWorking) // seq 3
	auth := &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}}
	for _, c := range []a2a.PushNotificationConfig{
		{ID: "c1", URL: "http://one", Token: "t1", Authentication: auth},
		{ID: "c2", URL: "http://two"},
	} {
		if err := s.SetPushConfig(ctx, "p", c, 1); err != nil {
			t.Fatal(err)
		}
	}
	// Replacing keeps the cursor and the position.
	if err := s.MarkPushDelivered(ctx, "p", "c1", 2); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPushConfig(ctx, "p", a2a.PushNotificationConfig{ID: "c1", URL: "http://one-b", Authentication: auth}, 0); err != nil {
		t.Fatal(err)
	}
	got, err := s.PushConfigs(ctx, "p")
	if err != nil || len(got) != 2 {
		t.Fatalf("configs %+v %v", got, err)
	}
	if got[0].Config.ID != "c1" || got[0].Config.URL != "http://one-b" || got[0].Delivered != 2 || got[0].Config.Authentication == nil ||
		got[1].Config.ID != "c2" || got[1].Delivered != 1 || got[0].TaskID != "p" {
		t.Fatalf("configs %+v", got)
	}
	// The cursor never moves back.
	if err := s.MarkPushDelivered(ctx, "p", "c1", 1); err != nil {
		t.Fatal(err)
	}
	pend, err := s.PendingPush(ctx)
	if err != nil || len(pend) != 2 || pend[0].Delivered != 2 {
		t.Fatalf("pending %+v %v", pend, err)
	}
	for _, id := range []string{"c1", "c2"} {
		if err := s.MarkPushDelivered(ctx, "p", id, 3); err != nil {
			t.Fatal(err)
		}
	}
	if pend, _ := s.PendingPush(ctx); len(pend) != 0 {
		t.Fatalf("pending after delivery %+v", pend)
	}
	if err := s.DeletePushConfig(ctx, "p", "c1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePushConfig(ctx, "p", "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if err := s.MarkPushDelivered(ctx, "p", "c1", 9); err != nil {
		t.Fatalf("mark a deleted config: %v", err)
	}
	if got, _ := s.PushConfigs(ctx, "p"); len(got) != 1 || got[0].Config.ID != "c2" {
		t.Fatalf("after delete %+v", got)
	}
	if got, err := s.PushConfigs(ctx, "unknown"); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("unknown task: %+v %v", got, err)
	}
}

// pipeline appends in order, each append waiting for none before it when
// the store queues appends (store.GroupCommitter), as the engine does with an
// agent's events; wait returns the first error.
type pipeline struct {
	s       store.Store
	pending []<-chan error
}

func (p *pipeline) append(ctx context.Context, a store.Append) error {
	if q, ok := p.s.(store.GroupCommitter); ok {
		p.pending = append(p.pending, q.AppendAsync(ctx, a))
		if len(p.pending) < 256 {
			return nil
		}
		return p.wait()
	}
	return p.s.Append(ctx, a)
}

func (p *pipeline) wait() error {
	var first error
	for _, c := range p.pending {
		if err := <-c; err != nil && first == nil {
			first = err
		}
	}
	p.pending = p.pending[:0]
	return first
}

// testLongTask appends thousands of events to one task (an artifact in
// small chunks, with messages and status updates among them), each with
// the snapshot folded as the engine folds it: the task read back is the
// fold of its log at every step (a store that keeps checkpoints folds the
// events after the last one), and so are its records. The chunks' text is
// joined into parts (fold.Joins), every tenth chunk, with metadata, stands
// apart, and so does every chunk once the artifact is past
// fold.MaxJoinParts parts: the stored snapshots and the fold of the events
// after them join alike.
func testLongTask(t *testing.T, s store.Store) {
	ctx := context.Background()
	p := &pipeline{s: s}
	created := a2a.Task{ID: "long", ContextID: "ctx-long", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted},
		History: []a2a.Message{*textMessage("m0", "long", "start")}}
	task, _ := fold.Apply(a2a.Task{}, &created)
	c := created
	if err := s.Append(ctx, store.Append{Agent: "a", TaskID: "long", Records: []store.Record{{Event: &c}}, Snapshot: task, MessageIDs: []string{"m0"}}); err != nil {
		t.Fatal(err)
	}
	seq := int64(1)
	const n = 3000
	var all strings.Builder // the chunks' text
	wantParts := 0
	lastMeta := true
	for i := 1; i <= n; i++ {
		var ev a2a.Event
		switch {
		case i == 1:
			ev = statusEvent("long", a2a.TaskStateWorking)
		case i%500 == 0:
			su := statusEvent("long", a2a.TaskStateWorking)
			su.Status.Message = &a2a.Message{MessageID: fmt.Sprint("progress-", i), Role: a2a.RoleAgent, TaskID: "long", ContextID: "ctx-long",
				Parts: []a2a.Part{a2a.NewTextPart(fmt.Sprint(i, " chunks"))}}
			ev = su
		case i%97 == 0:
			ev = &a2a.Message{MessageID: fmt.Sprint("note-", i), Role: a2a.RoleAgent, TaskID: "long", ContextID: "ctx-long",
				Parts: []a2a.Part{a2a.NewTextPart("note")}}
		default:
			part := a2a.NewTextPart(fmt.Sprintf("%04d:%s", i, strings.Repeat("x", 120)))
			if i%10 == 0 {
				part.Metadata = map[string]any{"chunk": fmt.Sprint(i)}
			}
			ev = &a2a.TaskArtifactUpdateEvent{TaskID: "long", ContextID: "ctx-long", Append: i > 2,
				Artifact: a2a.Artifact{ArtifactID: "out", Name: "out", Parts: []a2a.Part{part}}}
		}
		if i == n {
			ev = statusEvent("long", a2a.TaskStateCompleted)
		}
		if au, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			p := au.Artifact.Parts[0]
			all.WriteString(p.Text())
			// Joined into the last part unless either carries metadata or
			// the artifact is past fold.MaxJoinParts parts.
			if meta := p.Metadata != nil; meta || lastMeta || wantParts > fold.MaxJoinParts {
				wantParts++
				lastMeta = meta
			}
		}
		var err error
		if task, err = fold.Apply(task, ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if err := p.append(ctx, store.Append{TaskID: "long", After: seq, Records: []store.Record{{Event: ev}}, Snapshot: task}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		seq++
		if i%300 == 0 || i == n {
			if err := p.wait(); err != nil {
				t.Fatalf("append before %d: %v", i, err)
			}
			info := mustTask(t, s, "long")
			if info.Seq != seq {
				t.Fatalf("after %d events: Seq %d, want %d", i, info.Seq, seq)
			}
			if diff := cmp.Diff(task, info.Task, CmpOpts); diff != "" {
				t.Fatalf("after %d events, the task read back is not the fold of its log (-want +got):\n%s", i, diff)
			}
		}
	}
	recs := mustEvents(t, s, "long", 0, 0)
	if !slices.Equal(seqs(recs), span(1, seq)) {
		t.Fatalf("Events: %d records, want %d", len(recs), seq)
	}
	var again a2a.Task
	for _, r := range recs {
		var err error
		if again, err = fold.Apply(again, r.Event); err != nil {
			t.Fatalf("fold of record %d: %v", r.Seq, err)
		}
	}
	if diff := cmp.Diff(task, again, CmpOpts); diff != "" {
		t.Errorf("the fold of Events is not the task (-want +got):\n%s", diff)
	}
	var got strings.Builder
	for _, p := range again.Artifacts[0].Parts {
		got.WriteString(p.Text())
	}
	if parts := len(again.Artifacts[0].Parts); parts != wantParts || got.String() != all.String() {
		t.Errorf("artifact of %d parts, %d bytes; want %d parts, %d bytes", parts, got.Len(), wantParts, all.Len())
	}
}

// testDeleteFinished: retention deletes the tasks that finished before the
// cut-off, with their records, message ids and push configs, and keeps
// running tasks, newer ones and those owed push notifications until they
// are delivered.
func testDeleteFinished(t *testing.T, s store.Store) {
	ctx := context.Background()
	if n, more, err := s.DeleteFinished(ctx, time.Now(), 0); n != 0 || more || err != nil {
		t.Fatalf("DeleteFinished on an empty store = %d, %v, %v", n, more, err)
	}
	create(t, s, "a", "done", a2a.TaskStateWorking, "m-done")
	appendStatus(t, s, "done", 1, 1, a2a.TaskStateCompleted)
	if err := s.SetPushConfig(ctx, "done", a2a.PushNotificationConfig{ID: "c", URL: "http://x"}, 2); err != nil {
		t.Fatal(err)
	}
	create(t, s, "failed", "failed", a2a.TaskStateFailed, "m-failed")
	create(t, s, "a", "running", a2a.TaskStateWorking, "m-running")
	create(t, s, "a", "waiting", a2a.TaskStateInputRequired)
	create(t, s, "a", "owed", a2a.TaskStateSubmitted)
	if err := s.SetPushConfig(ctx, "owed", a2a.PushNotificationConfig{ID: "c", URL: "http://x"}, 0); err != nil {
		t.Fatal(err)
	}
	appendStatus(t, s, "owed", 1, 1, a2a.TaskStateCanceled)
	time.Sleep(5 * time.Millisecond)
	cut := time.Now()
	time.Sleep(5 * time.Millisecond)
	create(t, s, "a", "new", a2a.TaskStateRejected, "m-new")

	n, more, err := s.DeleteFinished(ctx, cut, 0)
	if n != 2 || more || err != nil {
		t.Fatalf("DeleteFinished = %d, %v, %v; want 2 deleted, no more", n, more, err)
	}
	for _, id := range []string{"done", "failed"} {
		if _, err := s.Task(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Task(%s) after deletion: %v, want ErrNotFound", id, err)
		}
		if _, err := s.Events(ctx, id, 0, 0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Events(%s) after deletion: %v, want ErrNotFound", id, err)
		}
		if got, err := s.PushConfigs(ctx, id); err != nil || len(got) != 0 {
			t.Errorf("PushConfigs(%s) after deletion = %v, %v", id, got, err)
		}
	}
	for agent, key := range map[string]string{"a": "m-done", "failed": "m-failed"} {
		if id, err := s.MessageTask(ctx, agent, key); id != "" || err != nil {
			t.Errorf("MessageTask(%s) after deletion = %q, %v", key, id, err)
		}
	}
	if err := s.SetPushConfig(ctx, "done", a2a.PushNotificationConfig{ID: "c", URL: "http://x"}, 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetPushConfig on a deleted task: %v, want ErrNotFound", err)
	}
	for _, id := range []string{"running", "waiting", "owed", "new"} {
		mustTask(t, s, id)
	}
	if id, _ := s.MessageTask(ctx, "a", "m-running"); id != "running" {
		t.Errorf("MessageTask(m-running) = %q", id)
	}
	// Delivered: the owed task goes at the next call.
	if err := s.MarkPushDelivered(ctx, "owed", "c", 2); err != nil {
		t.Fatal(err)
	}
	if n, _, err := s.DeleteFinished(ctx, cut, 0); n != 1 || err != nil {
		t.Fatalf("DeleteFinished after delivery = %d, %v; want 1", n, err)
	}
	if _, err := s.Task(ctx, "owed"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Task(owed): %v, want ErrNotFound", err)
	}
	// A message id freed by a deletion can be used again.
	create(t, s, "a", "again", a2a.TaskStateWorking, "m-done")
	if n, _, err := s.DeleteFinished(ctx, time.Now(), 0); n != 1 || err != nil {
		t.Fatalf("DeleteFinished of the rest = %d, %v; want 1 (new)", n, err)
	}
	for _, id := range []string{"running", "waiting", "again"} {
		mustTask(t, s, id)
	}
}

// testDeleteFinishedLimit: a call deletes at most limit tasks, oldest
// first, and says whether more remain.
func testDeleteFinishedLimit(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := range 5 {
		create(t, s, "a", fmt.Sprint("t", i), a2a.TaskStateCompleted)
		time.Sleep(time.Millisecond)
	}
	cut := time.Now()
	var got []int
	for range 4 {
		n, more, err := s.DeleteFinished(ctx, cut, 2)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
		if !more {
			break
		}
	}
	if !slices.Equal(got, []int{2, 2, 1}) {
		t.Errorf("deleted per call: %v, want [2 2 1]", got)
	}
	for i := range 5 {
		if _, err := s.Task(ctx, fmt.Sprint("t", i)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("t%d: %v", i, err)
		}
	}
}

// bigNumbers are numbers that a float64 would change, as JSON text.
var bigNumbers = map[string]any{
	"big":     json.Number("123456789012345678901234567890"),
	"exact":   json.Number("9007199254740993"),
	"huge":    json.Number("1e400"),
	"precise": json.Number("0.1000000000000000055511151231257827"),
	"zeros":   []any{json.Number("-0"), json.Number("0.10"), json.Number("1E+2")},
	"nested":  map[string]any{"n": json.Number("-12345678901234567890.5")},
}

// testNumbers: numbers in data parts and metadata, in history and in
// artifacts, read back with their exact text (json.Number), whether the
// store keeps values or JSON, before and after the task finished.
func testNumbers(t *testing.T, s store.Store) {
	ctx := context.Background()
	msg := a2a.Message{MessageID: "m", Role: a2a.RoleUser, TaskID: "num", ContextID: "ctx-num", Metadata: bigNumbers,
		Parts: []a2a.Part{a2a.Part{Content: a2a.Data{Value: bigNumbers}, Metadata: bigNumbers}}}
	created := a2a.Task{ID: "num", ContextID: "ctx-num", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted},
		History: []a2a.Message{msg}, Metadata: bigNumbers}
	task, _ := fold.Apply(a2a.Task{}, &created)
	c := created
	if err := s.Append(ctx, store.Append{Agent: "a", TaskID: "num", Records: []store.Record{{Event: &c}}, Snapshot: task}); err != nil {
		t.Fatal(err)
	}
	art := &a2a.TaskArtifactUpdateEvent{TaskID: "num", ContextID: "ctx-num", Metadata: bigNumbers,
		Artifact: a2a.Artifact{ArtifactID: "a", Metadata: bigNumbers, Parts: []a2a.Part{a2a.NewDataPart(bigNumbers)}}}
	done := &a2a.TaskStatusUpdateEvent{TaskID: "num", ContextID: "ctx-num", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, Final: true, Metadata: bigNumbers}
	seq := int64(1)
	for _, ev := range []a2a.Event{art, done} {
		task, _ = fold.Apply(task, ev)
		if err := s.Append(ctx, store.Append{TaskID: "num", After: seq, Records: []store.Record{{Event: ev}}, Snapshot: task}); err != nil {
			t.Fatal(err)
		}
		seq++
		info := mustTask(t, s, "num")
		if diff := cmp.Diff(task, info.Task, CmpOpts); diff != "" {
			t.Fatalf("task after %T (-want +got):\n%s", ev, diff)
		}
	}
	recs := mustEvents(t, s, "num", 0, 0)
	want := []a2a.Event{&created, art, done}
	for i, r := range recs {
		if diff := cmp.Diff(want[i], r.Event, CmpOpts); diff != "" {
			t.Errorf("record %d (-want +got):\n%s", r.Seq, diff)
		}
	}
}

// testTrace: an append's Trace becomes the task's (Task, Unfinished), one
// without keeps it, a later one replaces it (also within appends queued
// back to back, which a store may write as one), and one longer than
// store.MaxTraceLen is refused with nothing written.
func testTrace(t *testing.T, s store.Store) {
	ctx := context.Background()
	tp := func(n int) string { return fmt.Sprintf("00-%032x-%016x-01", n, n) }
	snap := newTask("tr", a2a.TaskStateSubmitted)
	c := snap
	if err := s.Append(ctx, store.Append{Agent: "a", TaskID: "tr", Records: []store.Record{{Event: &c}}, Snapshot: snap,
		MessageIDs: []string{"m1"}, Trace: tp(1)}); err != nil {
		t.Fatal(err)
	}
	if got := mustTask(t, s, "tr").Trace; got != tp(1) {
		t.Fatalf("Trace after the create %q, want %q", got, tp(1))
	}
	appendStatus(t, s, "tr", 1, 1, a2a.TaskStateInputRequired)
	if got := mustTask(t, s, "tr").Trace; got != tp(1) {
		t.Fatalf("Trace after an append without one %q, want %q (kept)", got, tp(1))
	}
	task := newTask("tr", a2a.TaskStateWorking)
	if err := s.Append(ctx, store.Append{TaskID: "tr", After: 2, Records: []store.Record{{Event: textMessage("m2", "tr", "again")},
		{Event: statusEvent("tr", a2a.TaskStateWorking)}}, Snapshot: task, MessageIDs: []string{"m2"}, Trace: tp(2)}); err != nil {
		t.Fatal(err)
	}
	if got := mustTask(t, s, "tr").Trace; got != tp(2) {
		t.Fatalf("Trace after a continuation %q, want %q", got, tp(2))
	}
	infos, err := s.Unfinished(ctx)
	if err != nil || len(infos) != 1 || infos[0].Trace != tp(2) {
		t.Fatalf("Unfinished %+v, %v: want tr with Trace %q", infos, err, tp(2))
	}
	long := strings.Repeat("x", store.MaxTraceLen+1)
	if err := s.Append(ctx, store.Append{TaskID: "tr", After: 4, Records: []store.Record{{Event: statusEvent("tr", a2a.TaskStateWorking)}},
		Snapshot: task, Trace: long}); err == nil {
		t.Fatal("an append with a trace context longer than MaxTraceLen was accepted")
	}
	if info := mustTask(t, s, "tr"); info.Seq != 4 || info.Trace != tp(2) {
		t.Fatalf("after a refused append: seq %d trace %q", info.Seq, info.Trace)
	}

	// Queued back to back: the last Trace set wins.
	p := pipeline{s: s}
	snap = newTask("tq", a2a.TaskStateWorking)
	c = snap
	if err := p.append(ctx, store.Append{Agent: "a", TaskID: "tq", Records: []store.Record{{Event: &c}}, Snapshot: snap, Trace: tp(3)}); err != nil {
		t.Fatal(err)
	}
	for i, tr := range []string{"", tp(4), ""} {
		if err := p.append(ctx, store.Append{TaskID: "tq", After: int64(i + 1), Records: []store.Record{{Event: statusEvent("tq", a2a.TaskStateWorking)}},
			Snapshot: snap, Trace: tr}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.wait(); err != nil {
		t.Fatal(err)
	}
	if info := mustTask(t, s, "tq"); info.Seq != 4 || info.Trace != tp(4) {
		t.Fatalf("queued appends: seq %d trace %q, want 4 and %q", info.Seq, info.Trace, tp(4))
	}
	create(t, s, "a", "none", a2a.TaskStateWorking)
	if got := mustTask(t, s, "none").Trace; got != "" {
		t.Fatalf("a task created without a trace context has %q", got)
	}
}

// testCountTasks: a store.TaskCounter counts the tasks of each agent in
// each state, following their changes and deletions.
func testCountTasks(t *testing.T, s store.Store) {
	tc, ok := s.(store.TaskCounter)
	if !ok {
		t.Skip("not a store.TaskCounter")
	}
	ctx := context.Background()
	count := func() map[string]int64 {
		t.Helper()
		got, err := tc.CountTasks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int64{}
		for _, c := range got {
			k := c.Agent + "/" + c.State.String()
			if _, dup := m[k]; dup || c.Tasks <= 0 {
				t.Fatalf("CountTasks %+v: %s repeated or not positive", got, k)
			}
			m[k] = c.Tasks
		}
		return m
	}
	if got := count(); len(got) != 0 {
		t.Fatalf("an empty store counts %v", got)
	}
	create(t, s, "a", "c1", a2a.TaskStateWorking)
	create(t, s, "a", "c2", a2a.TaskStateWorking)
	create(t, s, "a", "c3", a2a.TaskStateInputRequired)
	create(t, s, "b", "c4", a2a.TaskStateWorking)
	appendStatus(t, s, "c2", 1, 1, a2a.TaskStateCompleted)
	want := map[string]int64{"a/working": 1, "a/completed": 1, "a/input-required": 1, "b/working": 1}
	if diff := cmp.Diff(want, count()); diff != "" {
		t.Fatalf("CountTasks (-want +got):\n%s", diff)
	}
	if _, _, err := s.DeleteFinished(ctx, time.Now().Add(time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	delete(want, "a/completed")
	if diff := cmp.Diff(want, count()); diff != "" {
		t.Fatalf("CountTasks after retention (-want +got):\n%s", diff)
	}
}
