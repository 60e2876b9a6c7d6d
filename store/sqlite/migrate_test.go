package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

// fixtureTask is what testdata/v3.json holds of each task of
// testdata/v3.db: both were made by the release with schema version 3
// (commit fb0795f: `a2abridge serve` with push and bearer tokens, tasks of
// echo, chat and slow sent by its client, then kill -9 with a slow task
// running), the JSON dumped by that release's store.
type fixtureTask struct {
	ID      string          `json:"id"`
	Agent   string          `json:"agent"`
	Owner   string          `json:"owner"`
	Seq     int64           `json:"seq"`
	Created int64           `json:"created"`
	Updated int64           `json:"updated"`
	Task    json.RawMessage `json:"task"`
	Events  []fixtureEvent  `json:"events"`
	Push    []struct {
		Config struct {
			ID    string `json:"id"`
			URL   string `json:"url"`
			Token string `json:"token"`
		} `json:"config"`
		Delivered int64 `json:"delivered"`
		Created   int64 `json:"created"`
	} `json:"push"`
	Messages []string `json:"messages"` // agent + "\x00" + message key
}

type fixtureEvent struct {
	Seq   int64           `json:"seq"`
	Time  int64           `json:"time"`
	Event json.RawMessage `json:"event"`
}

// sameJSON compares two JSON documents as values (numbers by their text).
// withStatusMetadata returns the task JSON with the metadata of the
// status-update events set in its metadata, key by key in log order: a
// task's metadata is now the fold of its status updates' metadata too
// (the releases that wrote the fixtures did not fold it).
func withStatusMetadata(t *testing.T, task json.RawMessage, events []fixtureEvent) []byte {
	t.Helper()
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(task))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		var ev struct {
			Kind     string         `json:"kind"`
			Metadata map[string]any `json:"metadata"`
		}
		d := json.NewDecoder(bytes.NewReader(e.Event))
		d.UseNumber()
		if err := d.Decode(&ev); err != nil {
			t.Fatal(err)
		}
		if ev.Kind != "status-update" || len(ev.Metadata) == 0 {
			continue
		}
		m, _ := doc["metadata"].(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		for k, v := range ev.Metadata {
			m[k] = v
		}
		doc["metadata"] = m
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withJoinedArtifacts returns the task JSON with the artifacts of the fold
// of its log: a streamed artifact's text chunks are now joined into one
// part (internal/fold; the releases that wrote the fixtures kept each
// chunk a part), and a migrated task is read as the fold of its log.
func withJoinedArtifacts(t *testing.T, task []byte, events []fixtureEvent) []byte {
	t.Helper()
	var folded a2a.Task
	for _, e := range events {
		ev, err := v03.UnmarshalEvent(e.Event)
		if err != nil {
			t.Fatal(err)
		}
		if folded, err = fold.Replay(folded, ev); err != nil {
			t.Fatal(err)
		}
	}
	b, err := v03.MarshalEvent(&folded)
	if err != nil {
		t.Fatal(err)
	}
	var doc, arts map[string]any
	for _, x := range []struct {
		b []byte
		m *map[string]any
	}{{task, &doc}, {b, &arts}} {
		d := json.NewDecoder(bytes.NewReader(x.b))
		d.UseNumber()
		if err := d.Decode(x.m); err != nil {
			t.Fatal(err)
		}
	}
	if a, ok := arts["artifacts"]; ok {
		doc["artifacts"] = a
	} else {
		delete(doc, "artifacts")
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	for _, x := range []struct {
		in  []byte
		out *any
	}{{a, &va}, {b, &vb}} {
		d := json.NewDecoder(bytes.NewReader(x.in))
		d.UseNumber()
		if err := d.Decode(x.out); err != nil {
			t.Fatalf("decode %s: %v", x.in, err)
		}
	}
	return reflect.DeepEqual(va, vb)
}

// checkMigratedTask checks that s holds the fixture's task w as the
// release that wrote the fixture read it: its row, its snapshot and its
// records. It reports false when the task or its records could not be
// read (the rest of w cannot be compared).
func checkMigratedTask(t *testing.T, ctx context.Context, s *sqlite.Store, w fixtureTask) bool {
	t.Helper()
	info, err := s.Task(ctx, w.ID)
	if err != nil {
		t.Errorf("Task(%s): %v", w.ID, err)
		return false
	}
	if info.Agent != w.Agent || info.Owner != w.Owner || info.Seq != w.Seq ||
		info.Created.UnixNano() != w.Created || info.Updated.UnixNano() != w.Updated {
		t.Errorf("Task(%s) = agent %q owner %q seq %d created %d updated %d, want %q %q %d %d %d", w.ID,
			info.Agent, info.Owner, info.Seq, info.Created.UnixNano(), info.Updated.UnixNano(), w.Agent, w.Owner, w.Seq, w.Created, w.Updated)
	}
	if got, err := v03.MarshalEvent(&info.Task); err != nil || !sameJSON(t, got, withJoinedArtifacts(t, withStatusMetadata(t, w.Task, w.Events), w.Events)) {
		t.Errorf("Task(%s) snapshot = %s (%v), want %s", w.ID, got, err, w.Task)
	}
	recs, err := s.Events(ctx, w.ID, 0, 0)
	if err != nil || len(recs) != len(w.Events) {
		t.Errorf("Events(%s): %d records, %v; want %d", w.ID, len(recs), err, len(w.Events))
		return false
	}
	for i, r := range recs {
		we := w.Events[i]
		got, err := v03.MarshalEvent(r.Event)
		if r.Seq != we.Seq || r.Time.UnixNano() != we.Time || err != nil || !sameJSON(t, got, we.Event) {
			t.Errorf("Events(%s)[%d] = %d %d %s (%v), want %d %d %s", w.ID, i, r.Seq, r.Time.UnixNano(), got, err, we.Seq, we.Time, we.Event)
		}
	}
	return true
}

// TestMigrateFromV3 opens a database written by the previous release
// (schema 3: every task's snapshot in its row): every task, record, push
// config and message id is there after the upgrade, appends and reads
// work, and it survives a reopen.
func TestMigrateFromV3(t *testing.T) {
	raw, err := os.ReadFile("testdata/v3.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a2abridge.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var want []fixtureTask
	if b, err := os.ReadFile("testdata/v3.json"); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != 8 {
		t.Fatalf("fixture holds %d tasks, want 8", len(want))
	}
	ctx := context.Background()
	check := func(s *sqlite.Store) {
		t.Helper()
		for _, w := range want {
			if !checkMigratedTask(t, ctx, s, w) {
				continue
			}
			pcs, err := s.PushConfigs(ctx, w.ID)
			if err != nil || len(pcs) != len(w.Push) {
				t.Errorf("PushConfigs(%s) = %+v, %v; want %d", w.ID, pcs, err, len(w.Push))
				continue
			}
			for i, p := range pcs {
				wp := w.Push[i]
				if p.Config.ID != wp.Config.ID || p.Config.URL != wp.Config.URL || p.Config.Token != wp.Config.Token ||
					p.Delivered != wp.Delivered || p.Created.UnixNano() != wp.Created {
					t.Errorf("PushConfigs(%s)[%d] = %+v, want %+v", w.ID, i, p, wp)
				}
			}
			for _, k := range w.Messages {
				agent, key, _ := strings.Cut(k, "\x00")
				if id, err := s.MessageTask(ctx, agent, key); err != nil || id != w.ID {
					t.Errorf("MessageTask(%q, %q) = %q, %v; want %s", agent, key, id, err, w.ID)
				}
			}
		}
	}

	s := open(t, path, sqlite.Options{})
	check(s)
	// The slow task that was running at the kill is unfinished; failing
	// it (as the engine's recovery does) appends to the migrated log.
	u, err := s.Unfinished(ctx)
	if err != nil || len(u) != 1 || u[0].Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("Unfinished = %+v, %v; want the one working task", u, err)
	}
	running := u[0]
	failed := running.Task
	failed.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Timestamp: time.Now().UTC().Truncate(time.Millisecond)}
	ev := &a2a.TaskStatusUpdateEvent{TaskID: failed.ID, ContextID: failed.ContextID, Status: failed.Status, Final: true}
	if err := s.Append(ctx, store.Append{TaskID: failed.ID, After: running.Seq, Records: []store.Record{{Event: ev}}, Snapshot: failed}); err != nil {
		t.Fatalf("append to a migrated task: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path, sqlite.Options{})
	defer s.Close()
	for i := range want {
		if want[i].ID == failed.ID {
			want[i].Seq++
			want[i].Task, _ = v03.MarshalEvent(&failed)
			b, _ := v03.MarshalEvent(ev)
			want[i].Events = append(want[i].Events, want[i].Events[0])
			last := &want[i].Events[len(want[i].Events)-1]
			last.Seq, last.Event = want[i].Seq, b
			info, _ := s.Task(ctx, failed.ID)
			last.Time, want[i].Updated = info.Updated.UnixNano(), info.Updated.UnixNano()
		}
	}
	check(s)
	if u, err := s.Unfinished(ctx); err != nil || len(u) != 0 {
		t.Errorf("Unfinished after failing the task = %d, %v", len(u), err)
	}
}

// v4Fixture is testdata/v4.json: what the release at commit 23412c0
// (schema version 4, records as A2A 0.3.0 JSON) read back from
// testdata/v4.db, which it wrote. Both were made by
// testdata/gen_v4/main.go at that commit (its doc says how).
type v4Fixture struct {
	SchemaVersion int `json:"schemaVersion"`
	Tasks         []struct {
		fixtureTask
		SnapshotSeq int64         `json:"snapshotSeq"`
		Push        []fixturePush `json:"push"`
	} `json:"tasks"`
	PendingPush []fixturePush `json:"pendingPush"`
	Unfinished  []string      `json:"unfinished"`
}

type fixturePush struct {
	TaskID    string          `json:"taskId"`
	Config    json.RawMessage `json:"config"` // A2A 0.3.0 TaskPushNotificationConfig
	Delivered int64           `json:"delivered"`
	Created   int64           `json:"created"`
}

// copyFixture copies testdata/name into a new directory and returns its path.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a2abridge.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func loadV4(t *testing.T) v4Fixture {
	t.Helper()
	var f v4Fixture
	if b, err := os.ReadFile("testdata/v4.json"); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.SchemaVersion != 4 || len(f.Tasks) != 15 {
		t.Fatalf("fixture of schema %d holds %d tasks, want 4 and 15", f.SchemaVersion, len(f.Tasks))
	}
	return f
}

// checkPush compares push configs read now with the fixture's.
func checkPush(t *testing.T, what string, got []store.PushConfig, want []fixturePush) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d configs, want %d", what, len(got), len(want))
		return
	}
	for i, p := range got {
		w := want[i]
		b, err := v03.MarshalTaskPushNotificationConfig(&a2a.TaskPushNotificationConfig{TaskID: p.TaskID, PushNotificationConfig: p.Config})
		if err != nil || p.TaskID != w.TaskID || !sameJSON(t, b, w.Config) || p.Delivered != w.Delivered || p.Created.UnixNano() != w.Created {
			t.Errorf("%s[%d] = %s %s delivered %d created %d (%v), want %s %s %d %d", what, i, p.TaskID, b, p.Delivered, p.Created.UnixNano(), err,
				w.TaskID, w.Config, w.Delivered, w.Created)
		}
	}
}

// TestMigrateFromV4 opens a database written by the release before
// records (schema 4): after the upgrade every task snapshot, every record
// (seq, time, event), every push config with its cursor, every message
// index entry, the pending pushes and the unfinished tasks read as that
// release read them; the rows are records, with tails and checkpoint
// sizes that fit them; ListTasks orders the migrated tasks by their
// status times; and the tasks go on (appends of 1.0 fields, a reopen).
func TestMigrateFromV4(t *testing.T) {
	f := loadV4(t)
	path := copyFixture(t, "v4.db")
	ctx := context.Background()
	s := open(t, path, sqlite.Options{})
	check := func(s *sqlite.Store) {
		t.Helper()
		for _, w := range f.Tasks {
			if !checkMigratedTask(t, ctx, s, w.fixtureTask) {
				continue
			}
			pcs, err := s.PushConfigs(ctx, w.ID)
			if err != nil {
				t.Errorf("PushConfigs(%s): %v", w.ID, err)
			}
			checkPush(t, "PushConfigs("+w.ID+")", pcs, w.Push)
			for _, k := range w.Messages {
				agent, key, _ := strings.Cut(k, "\x00")
				if id, err := s.MessageTask(ctx, agent, key); err != nil || id != w.ID {
					t.Errorf("MessageTask(%q, %q) = %q, %v; want %s", agent, key, id, err, w.ID)
				}
			}
		}
	}
	check(s)
	pending, err := s.PendingPush(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkPush(t, "PendingPush", pending, f.PendingPush)
	u, err := s.Unfinished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var unfinished []string
	for _, info := range u {
		unfinished = append(unfinished, info.Task.ID)
	}
	if !slices.Equal(unfinished, f.Unfinished) {
		t.Errorf("Unfinished = %v, want %v", unfinished, f.Unfinished)
	}

	// ListTasks: each agent and owner's tasks, newest status first, as
	// the fixture's snapshots date them; filtered by context and state.
	type group struct{ agent, owner string }
	want := map[group][]listedTask{}
	for _, w := range f.Tasks {
		var snap struct {
			ContextID string `json:"contextId"`
			Status    struct {
				State     a2a.TaskState `json:"state"`
				Timestamp time.Time     `json:"timestamp"`
			} `json:"status"`
		}
		if err := json.Unmarshal(w.Task, &snap); err != nil {
			t.Fatal(err)
		}
		g := group{w.Agent, w.Owner}
		want[g] = append(want[g], listedTask{w.ID, snap.ContextID, snap.Status.State, snap.Status.Timestamp})
	}
	if len(want) != 4 {
		t.Fatalf("fixture has %d agent/owner groups, want 4", len(want))
	}
	for g, tasks := range want {
		slices.SortFunc(tasks, func(a, b listedTask) int {
			if c := b.at.Compare(a.at); c != 0 {
				return c
			}
			return strings.Compare(b.id, a.id)
		})
		for _, q := range []store.TaskQuery{
			{Agent: g.agent, Owner: g.owner},
			{Agent: g.agent, Owner: g.owner, ContextID: tasks[0].contextID},
			{Agent: g.agent, Owner: g.owner, State: tasks[len(tasks)-1].state},
			{Agent: g.agent, Owner: g.owner, StatusAfter: tasks[len(tasks)/2].at},
		} {
			var ids []string
			for _, l := range tasks {
				if (q.ContextID == "" || l.contextID == q.ContextID) && (q.State == a2a.TaskStateUnspecified || l.state == q.State) && !l.at.Before(q.StatusAfter) {
					ids = append(ids, l.id)
				}
			}
			var got []string
			for q.Limit = 2; ; {
				page, err := s.ListTasks(ctx, q)
				if err != nil {
					t.Fatalf("ListTasks(%+v): %v", q, err)
				}
				if page.Total != len(ids) {
					t.Errorf("ListTasks(%+v).Total = %d, want %d", q, page.Total, len(ids))
				}
				for _, info := range page.Tasks {
					got = append(got, info.Task.ID)
				}
				if q.Cursor = page.Next; q.Cursor == "" {
					break
				}
			}
			if !slices.Equal(got, ids) {
				t.Errorf("ListTasks(%+v) = %v, want %v", q, got, ids)
			}
		}
	}

	// The rows are records now, with tails and checkpoint sizes that fit
	// them; the checkpoints are gone (they were folded without joining
	// text chunks): each task is read as the fold of its whole log.
	db, err := sql.Open("sqlite", path+"?_query_only=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"SELECT count(*) FROM events WHERE substr(body, 1, 1) != x'01'",
		"SELECT count(*) FROM snapshots",
		"SELECT count(*) FROM push_configs WHERE substr(body, 1, 2) != x'0105'",
		`SELECT count(*) FROM tasks t WHERE t.tail != coalesce((SELECT sum(length(e.body)) FROM events e WHERE e.task_id = t.id
			AND e.seq > coalesce((SELECT seq FROM snapshots s WHERE s.task_id = t.id), 0)), 0)
			OR t.snap_size != coalesce((SELECT length(body) FROM snapshots s WHERE s.task_id = t.id), 0)`,
		"SELECT count(*) FROM tasks WHERE status_ts = -9223372036854775808",
	} {
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d, %v; want 0", q, n, err)
		}
	}
	var rows, v int
	if err := db.QueryRow("SELECT count(*) FROM tasks").Scan(&rows); err != nil || rows != len(f.Tasks) {
		t.Errorf("%d tasks, %v; want %d", rows, err, len(f.Tasks))
	}
	var msgs, checkpoints int
	for _, w := range f.Tasks {
		msgs += len(w.Messages)
		if w.SnapshotSeq > 0 {
			checkpoints++
		}
	}
	if checkpoints == 0 {
		t.Error("the fixture has no checkpoint to drop")
	}
	if err := db.QueryRow("SELECT count(*) FROM messages").Scan(&rows); err != nil || rows != msgs {
		t.Errorf("%d message index entries, %v; want %d", rows, err, msgs)
	}
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Errorf("user_version %d, %v", v, err)
	}

	// The tasks go on: the working one streams a chunk with a 1.0 media
	// type and completes; the big one is read from its log.
	info, err := s.Task(ctx, "chat-alice-3")
	if err != nil {
		t.Fatal(err)
	}
	task := info.Task
	chunk := &a2a.TaskArtifactUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Append: true, LastChunk: true,
		Artifact: a2a.Artifact{ArtifactID: "count", Parts: []a2a.Part{a2a.Part{Content: a2a.Text("| n |"), MediaType: "text/markdown", Filename: "n.md"}, a2a.NewDataPart([]any{json.Number("5")})}}}
	done := &a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Final: true,
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: time.Date(2026, 12, 1, 0, 0, 0, 123456789, time.UTC)}}
	for _, ev := range []a2a.Event{chunk, done} {
		if task, err = fold.Apply(task, ev); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, store.Append{TaskID: task.ID, After: info.Seq, Records: []store.Record{{Event: ev}}, Snapshot: task}); err != nil {
			t.Fatal(err)
		}
		info.Seq++
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, sqlite.Options{})
	defer s.Close()
	got, err := s.Task(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(task, got.Task, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("migrated task after appends and a reopen (-want +got):\n%s", diff)
	}
	page, err := s.ListTasks(ctx, store.TaskQuery{Agent: "chat", Owner: info.Owner, Limit: 1})
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].Task.ID != task.ID {
		t.Errorf("ListTasks after the status update: %+v, %v; want %s first", page, err, task.ID)
	}
	for i := range f.Tasks {
		if f.Tasks[i].ID == task.ID {
			f.Tasks[i].Seq, f.Tasks[i].Updated = got.Seq, got.Updated.UnixNano()
			f.Tasks[i].Task, _ = v03.MarshalEvent(&got.Task)
			recs, _ := s.Events(ctx, task.ID, 0, 0)
			for _, r := range recs[len(f.Tasks[i].Events):] {
				b, _ := v03.MarshalEvent(r.Event)
				f.Tasks[i].Events = append(f.Tasks[i].Events, fixtureEvent{Seq: r.Seq, Time: r.Time.UnixNano(), Event: b})
			}
		}
	}
	check(s)
}

type listedTask struct {
	id, contextID string
	state         a2a.TaskState
	at            time.Time
}

// TestMigrateFromV4Fails: a database whose rows do not decode is not
// migrated: Open fails naming the row, and the file is as it was (still
// schema 4, every row unchanged), however often it is tried.
func TestMigrateFromV4Fails(t *testing.T) {
	for name, corrupt := range map[string]string{
		"event":       `UPDATE events SET body = '{"kind":"bogus"}' WHERE task_id = 'echo-completed' AND seq = 5`,
		"snapshot":    `UPDATE snapshots SET body = '{"kind":"message"' WHERE task_id = 'chat-alice-big'`,
		"push config": `UPDATE push_configs SET body = '{"taskId":"x","pushNotificationConfig":{"url":""}}' WHERE config_id = 'bob-hook'`,
	} {
		t.Run(name, func(t *testing.T) {
			path := copyFixture(t, "v4.db")
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(corrupt); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				s, err := sqlite.Open(path, sqlite.Options{})
				if err == nil {
					s.Close()
					t.Fatal("Open migrated a database with a row that does not decode")
				}
				if !strings.Contains(err.Error(), "migrate schema 4→5") {
					t.Errorf("Open: %v", err)
				}
				t.Log(err)
				after, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(before, after) {
					t.Fatal("the failed migration changed the database file")
				}
			}
			for _, suffix := range []string{"-wal", "-journal"} {
				if st, err := os.Stat(path + suffix); err == nil && st.Size() > 0 {
					t.Errorf("%s%s left behind (%d bytes)", path, suffix, st.Size())
				}
			}
		})
	}
}
