package sqlite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
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
	Events  []struct {
		Seq   int64           `json:"seq"`
		Time  int64           `json:"time"`
		Event json.RawMessage `json:"event"`
	} `json:"events"`
	Push []struct {
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

// sameJSON compares two JSON documents as values (numbers by their text).
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
			info, err := s.Task(ctx, w.ID)
			if err != nil {
				t.Errorf("Task(%s): %v", w.ID, err)
				continue
			}
			if info.Agent != w.Agent || info.Owner != w.Owner || info.Seq != w.Seq ||
				info.Created.UnixNano() != w.Created || info.Updated.UnixNano() != w.Updated {
				t.Errorf("Task(%s) = agent %q owner %q seq %d created %d updated %d, want %q %q %d %d %d", w.ID,
					info.Agent, info.Owner, info.Seq, info.Created.UnixNano(), info.Updated.UnixNano(), w.Agent, w.Owner, w.Seq, w.Created, w.Updated)
			}
			if got, err := v03.MarshalEvent(&info.Task); err != nil || !sameJSON(t, got, w.Task) {
				t.Errorf("Task(%s) snapshot = %s (%v), want %s", w.ID, got, err, w.Task)
			}
			recs, err := s.Events(ctx, w.ID, 0, 0)
			if err != nil || len(recs) != len(w.Events) {
				t.Errorf("Events(%s): %d records, %v; want %d", w.ID, len(recs), err, len(w.Events))
				continue
			}
			for i, r := range recs {
				we := w.Events[i]
				got, err := v03.MarshalEvent(r.Event)
				if r.Seq != we.Seq || r.Time.UnixNano() != we.Time || err != nil || !sameJSON(t, got, we.Event) {
					t.Errorf("Events(%s)[%d] = %d %d %s (%v), want %d %d %s", w.ID, i, r.Seq, r.Time.UnixNano(), got, err, we.Seq, we.Time, we.Event)
				}
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
