// Command gen_v4 writes testdata/v4.db and testdata/v4.json, the fixture of
// TestMigrateFromV4: a database as the release at commit 23412c0 writes it
// (schema version 4, events, checkpoints and push configs in A2A 0.3.0
// JSON), and what that release's store reads back from it.
//
// It is written against the API of that commit (a2a.DataPart.Data is a
// map[string]any there, a2a.TextPart has no MediaType) and does not build
// at later ones; it lives under testdata so that ./... skips it. To make
// the fixture again, from the repository root:
//
//	git worktree add --detach /tmp/rel 23412c0
//	mkdir -p /tmp/rel/store/sqlite/testdata/gen_v4
//	cp store/sqlite/testdata/gen_v4/main.go /tmp/rel/store/sqlite/testdata/gen_v4/
//	(cd /tmp/rel && go run ./store/sqlite/testdata/gen_v4 -out "$OLDPWD/store/sqlite/testdata")
//	git worktree remove --force /tmp/rel
//
// The database is made through the store's own API (sqlite.Open, Append
// with snapshots folded by internal/fold as the engine folds them,
// SetPushConfig, MarkPushDelivered, DeletePushConfig), so that rows,
// checkpoints and message index entries are exactly what that release
// writes. The JSON is then read back through the same store after a
// reopen (Task, Events, PushConfigs, PendingPush, Unfinished,
// MessageTask), with the message index listed from the messages table.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

// Owners as the server writes them: "scheme"/"issuer"/"subject".
const (
	alice = `"bearer"/""/"alice"`
	bob   = `"bearer"/""/"bob"`
)

var ctx = context.Background()

// clock hands out status timestamps one second apart, in
// milliseconds (what A2A 0.3.0 JSON keeps), so that every task has its
// own status time.
var clock = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func tick() time.Time {
	clock = clock.Add(time.Second + 7*time.Millisecond)
	return clock
}

type gen struct {
	s    *sqlite.Store
	task a2a.Task
	id   string
	seq  int64
}

// create creates a task with its first message (whose id is indexed as
// the server indexes it, owner + "\x00" + messageId).
func create(s *sqlite.Store, agent, owner, id, contextID string, msg a2a.Message, meta map[string]any) *gen {
	msg.TaskID, msg.ContextID = id, contextID
	created := a2a.Task{ID: id, ContextID: contextID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: tick()},
		History: []a2a.Message{msg}, Metadata: meta}
	task, err := fold.Apply(a2a.Task{}, &created)
	must(err)
	c := created
	must(s.Append(ctx, store.Append{Agent: agent, Owner: owner, TaskID: id, Records: []store.Record{{Event: &c}}, Snapshot: task,
		MessageIDs: []string{owner + "\x00" + msg.MessageID}}))
	return &gen{s: s, task: task, id: id, seq: 1}
}

// add appends events in one Append, with the message ids given.
func (g *gen) add(msgIDs []string, evs ...a2a.Event) {
	recs := make([]store.Record, len(evs))
	for i, ev := range evs {
		var err error
		g.task, err = fold.Apply(g.task, ev)
		must(err)
		recs[i] = store.Record{Event: ev}
	}
	must(g.s.Append(ctx, store.Append{TaskID: g.id, After: g.seq, Records: recs, Snapshot: g.task, MessageIDs: msgIDs}))
	g.seq += int64(len(evs))
}

func (g *gen) status(state a2a.TaskState, msg *a2a.Message, meta map[string]any) {
	if msg != nil {
		msg.TaskID, msg.ContextID = g.id, g.task.ContextID
	}
	g.add(nil, &a2a.TaskStatusUpdateEvent{TaskID: g.id, ContextID: g.task.ContextID, Final: state.Final(), Metadata: meta,
		Status: a2a.TaskStatus{State: state, Message: msg, Timestamp: tick()}})
}

func (g *gen) artifact(a a2a.Artifact, appendTo, last bool, meta map[string]any) {
	g.add(nil, &a2a.TaskArtifactUpdateEvent{TaskID: g.id, ContextID: g.task.ContextID, Artifact: a, Append: appendTo, LastChunk: last, Metadata: meta})
}

// message appends a client's message continuing the task, indexed for owner.
func (g *gen) message(owner string, m a2a.Message) {
	m.TaskID, m.ContextID = g.id, g.task.ContextID
	g.add([]string{owner + "\x00" + m.MessageID}, &m)
}

func text(s string) a2a.TextPart { return a2a.TextPart{Text: s} }

func user(id string, parts ...a2a.Part) a2a.Message {
	return a2a.Message{MessageID: id, Role: a2a.RoleUser, Parts: parts}
}

func agentMsg(id string, parts ...a2a.Part) *a2a.Message {
	return &a2a.Message{MessageID: id, Role: a2a.RoleAgent, Parts: parts}
}

func num(s string) json.Number { return json.Number(s) }

// rich is a first message with every kind of part and field.
func rich(id string) a2a.Message {
	return a2a.Message{
		MessageID: id, Role: a2a.RoleUser,
		ReferenceTaskIDs: []string{"ref-task-1", "ref-task-2"}, Extensions: []string{"https://example.com/ext/v1"},
		Metadata: map[string]any{"client": "fixture", "attempt": num("1"), "trace": map[string]any{"span": "a1b2", "sampled": true, "tags": []any{"x", num("2.5"), nil}}},
		Parts: []a2a.Part{
			a2a.TextPart{Text: "hello ✓ \"quoted\" \\ back\nslash\ttab \u2028 😀", Metadata: map[string]any{"lang": "en"}},
			a2a.FilePart{File: a2a.File{Name: "photo.bin", MimeType: "application/octet-stream", Bytes: []byte{0, 1, 2, 0xfe, 0xff, '\n'}},
				Metadata: map[string]any{"size": num("6")}},
			a2a.FilePart{File: a2a.File{Name: "report.pdf", MimeType: "application/pdf", URI: "https://files.example.com/report.pdf?sig=a%20b"}},
			a2a.FilePart{File: a2a.File{Bytes: []byte{}}},
			a2a.FilePart{File: a2a.File{URI: "file:///tmp/x"}},
			a2a.DataPart{Data: map[string]any{
				"big":     num("123456789012345678901234567890"),
				"beyond":  num("9007199254740993"),
				"neg":     num("-0.000001234e-7"),
				"huge":    num("1E400"),
				"int":     num("42"),
				"float":   num("2.50"),
				"nested":  map[string]any{"a": []any{num("1"), num("2.5"), true, false, nil, "s", map[string]any{}, []any{}}, "deep": map[string]any{"deeper": map[string]any{"deepest": num("7")}}},
				"empty":   "",
				"unicode": "naïve ☃",
			}, Metadata: map[string]any{"schema": "https://example.com/schema.json", "n": num("123456789012345678901234567890")}},
		},
	}
}

func main() {
	out := flag.String("out", "", "directory to write v4.db and v4.json into")
	flag.Parse()
	if *out == "" {
		log.Fatal("-out is required")
	}
	dir, err := os.MkdirTemp("", "gen_v4")
	must(err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "v4.db")
	s, err := sqlite.Open(path, sqlite.Options{})
	must(err)
	if sqlite.SchemaVersion != 4 {
		log.Fatalf("schema version %d: run this at commit 23412c0", sqlite.SchemaVersion)
	}

	// echo, no authentication (owner ""): one task per state.
	sub := create(s, "echo", "", "echo-submitted", "ctx-echo-1", rich("m-echo-submitted"), map[string]any{"priority": num("3")})
	_ = sub

	w := create(s, "echo", "", "echo-working", "ctx-echo-1", user("m-echo-working", text("work please")), nil)
	w.status(a2a.TaskStateWorking, agentMsg("m-echo-working-s1", text("on it")), map[string]any{"progress": num("0.5")})
	w.artifact(a2a.Artifact{ArtifactID: "art-w", Name: "partial", Description: "first half", Extensions: []string{"https://example.com/ext/v1"},
		Metadata: map[string]any{"k": "v"}, Parts: []a2a.Part{text("half"), a2a.DataPart{Data: map[string]any{"done": false, "pct": num("50")}}}}, false, false, map[string]any{"chunk": num("1")})

	ir := create(s, "echo", "", "echo-input-required", "ctx-echo-2", user("m-echo-ir", text("book a table")), nil)
	ir.status(a2a.TaskStateWorking, nil, nil)
	ir.status(a2a.TaskStateInputRequired, agentMsg("m-echo-ir-q", text("for how many people?")), nil)
	ir.message("", user("m-echo-ir-a", text("four"), a2a.DataPart{Data: map[string]any{"people": num("4")}}))
	ir.status(a2a.TaskStateWorking, nil, nil)
	ir.status(a2a.TaskStateInputRequired, agentMsg("m-echo-ir-q2", text("what time?")), map[string]any{"turn": num("2")})

	done := create(s, "echo", "", "echo-completed", "ctx-echo-2", user("m-echo-completed", text("stream me a poem")), nil)
	done.status(a2a.TaskStateWorking, nil, nil)
	for i, line := range []string{"Roses are red,\n", "violets are blue,\n", "this fixture is old,\n", "its records are true.\n"} {
		done.artifact(a2a.Artifact{ArtifactID: "poem", Name: "poem.txt", Description: "a poem in chunks",
			Parts: []a2a.Part{a2a.TextPart{Text: line, Metadata: map[string]any{"line": num(fmt.Sprint(i + 1))}}}}, i > 0, i == 3, nil)
	}
	done.artifact(a2a.Artifact{ArtifactID: "summary", Parts: []a2a.Part{a2a.DataPart{Data: map[string]any{"lines": num("4"), "big": num("123456789012345678901234567890")}}}}, false, true, nil)
	done.status(a2a.TaskStateCompleted, agentMsg("m-echo-completed-s", text("done")), nil)

	cn := create(s, "echo", "", "echo-canceled", "ctx-echo-3", user("m-echo-canceled", text("long job")), nil)
	cn.status(a2a.TaskStateWorking, nil, nil)
	cn.status(a2a.TaskStateCanceled, agentMsg("m-echo-canceled-s", text("canceled by the client")), map[string]any{"reason": "tasks/cancel"})

	fl := create(s, "echo", "", "echo-failed", "ctx-echo-3", user("m-echo-failed", text("divide by zero")), nil)
	fl.status(a2a.TaskStateWorking, nil, nil)
	fl.status(a2a.TaskStateFailed, agentMsg("m-echo-failed-s", text("agent error: division by zero"), a2a.DataPart{Data: map[string]any{"code": num("-32603")}}), nil)

	rj := create(s, "echo", "", "echo-rejected", "ctx-echo-4", user("m-echo-rejected", text("something forbidden")), nil)
	rj.status(a2a.TaskStateRejected, agentMsg("m-echo-rejected-s", text("I will not do that")), nil)

	ar := create(s, "echo", "", "echo-auth-required", "ctx-echo-4", user("m-echo-auth", text("read my mail")), nil)
	ar.status(a2a.TaskStateWorking, nil, nil)
	ar.status(a2a.TaskStateAuthRequired, agentMsg("m-echo-auth-s", text("sign in at https://auth.example.com")), nil)

	// chat, owned by alice: a conversation of three tasks in one context,
	// and a large chunked artifact whose task gets checkpoints.
	a1 := create(s, "chat", alice, "chat-alice-1", "ctx-alice", user("m-alice-1", text("hi")), nil)
	a1.status(a2a.TaskStateWorking, nil, nil)
	a1.artifact(a2a.Artifact{ArtifactID: "reply", Parts: []a2a.Part{text("hello alice")}}, false, true, nil)
	a1.status(a2a.TaskStateCompleted, nil, nil)

	a2 := create(s, "chat", alice, "chat-alice-2", "ctx-alice", rich("m-alice-2"), nil)
	a2.status(a2a.TaskStateWorking, agentMsg("m-alice-2-s", text("thinking")), nil)
	a2.status(a2a.TaskStateInputRequired, agentMsg("m-alice-2-q", text("which one?")), nil)
	a2.message(alice, user("m-alice-2-a", text("the second")))
	a2.status(a2a.TaskStateWorking, nil, nil)

	big := create(s, "chat", alice, "chat-alice-big", "ctx-alice", user("m-alice-big", text("write me a long story")), nil)
	big.status(a2a.TaskStateWorking, nil, nil)
	chunk := strings.Repeat("Once upon a time, in a database far away. ", 8) // 336 bytes
	const chunks = 320                                                       // about 110 KB of events: one checkpoint, then more events
	for i := range chunks {
		big.artifact(a2a.Artifact{ArtifactID: "story", Name: "story.txt", Parts: []a2a.Part{text(fmt.Sprintf("%04d %s", i, chunk))}}, i > 0, i == chunks-1, nil)
		if i == chunks/2 {
			big.status(a2a.TaskStateWorking, agentMsg("m-alice-big-progress", text("halfway")), map[string]any{"progress": num("0.5")})
		}
	}
	big.status(a2a.TaskStateCompleted, agentMsg("m-alice-big-done", text("the end")), nil)

	// A second, smaller chunked artifact on a task still working.
	a3 := create(s, "chat", alice, "chat-alice-3", "ctx-alice-2", user("m-alice-3", text("count")), nil)
	a3.status(a2a.TaskStateWorking, nil, nil)
	for i := range 5 {
		a3.artifact(a2a.Artifact{ArtifactID: "count", Parts: []a2a.Part{a2a.DataPart{Data: map[string]any{"n": num(fmt.Sprint(i))}}}}, i > 0, false, nil)
	}

	// chat, owned by bob: the same message id as alice's first (keys are
	// per owner), and an auth-required and a rejected task.
	b1 := create(s, "chat", bob, "chat-bob-1", "ctx-bob", user("m-alice-1", text("hi from bob")), nil)
	b1.status(a2a.TaskStateAuthRequired, agentMsg("m-bob-1-s", text("sign in")), nil)
	b2 := create(s, "chat", bob, "chat-bob-2", "ctx-bob", user("m-bob-2", text("nope")), nil)
	b2.status(a2a.TaskStateRejected, nil, nil)

	// echo also serves alice: the same message id under another agent.
	e1 := create(s, "echo", alice, "echo-alice-1", "ctx-echo-alice", user("m-alice-1", text("echo this")), nil)
	e1.artifact(a2a.Artifact{ArtifactID: "echo", Name: "echo", Parts: []a2a.Part{text("echo this")}}, false, true, nil)
	e1.status(a2a.TaskStateCompleted, nil, nil)

	// Push configs: delivered, pending, replaced, deleted; with and
	// without tokens and authentication.
	auth := &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}, Credentials: "s3cr3t-credentials"}
	push := func(g *gen, c a2a.PushNotificationConfig, cursor int64) { must(s.SetPushConfig(ctx, g.id, c, cursor)) }
	push(done, a2a.PushNotificationConfig{ID: "hook-1", URL: "https://hooks.example.com/a2a", Token: "tok-1", Authentication: auth}, 1)
	must(s.MarkPushDelivered(ctx, done.id, "hook-1", done.seq)) // all delivered
	push(done, a2a.PushNotificationConfig{ID: "hook-2", URL: "https://hooks.example.com/other"}, 1)
	must(s.MarkPushDelivered(ctx, done.id, "hook-2", 3)) // pending
	push(w, a2a.PushNotificationConfig{ID: "w-hook", URL: "https://hooks.example.com/w", Token: "tok-w",
		Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Basic", "Bearer"}}}, 0) // pending from the start
	push(ir, a2a.PushNotificationConfig{ID: "ir-hook", URL: "https://hooks.example.com/ir", Token: "old"}, 2)
	push(ir, a2a.PushNotificationConfig{ID: "ir-hook", URL: "https://hooks.example.com/ir2", Token: "new", Authentication: &a2a.AuthenticationInfo{}}, 0) // replaced, cursor kept
	push(ir, a2a.PushNotificationConfig{ID: "ir-gone", URL: "https://hooks.example.com/gone"}, 0)
	must(s.DeletePushConfig(ctx, ir.id, "ir-gone"))
	push(big, a2a.PushNotificationConfig{ID: "story-hook", URL: "https://hooks.example.com/story", Token: "tok-story"}, 1)
	must(s.MarkPushDelivered(ctx, big.id, "story-hook", big.seq))
	push(a2, a2a.PushNotificationConfig{ID: "alice-hook", URL: "https://alice.example.com/hook", Authentication: auth}, a2.seq)
	push(b1, a2a.PushNotificationConfig{ID: "bob-hook", URL: "https://bob.example.com/hook", Token: "tok-bob"}, 1)

	must(s.Close())

	// Read everything back with this release's store, after a reopen.
	s, err = sqlite.Open(path, sqlite.Options{})
	must(err)
	ids := []string{sub.id, w.id, ir.id, done.id, cn.id, fl.id, rj.id, ar.id, a1.id, a2.id, big.id, a3.id, b1.id, b2.id, e1.id}
	msgs := messageIndex(path)
	f := fixture{SchemaVersion: sqlite.SchemaVersion, Commit: "23412c0"}
	for _, id := range ids {
		info, err := s.Task(ctx, id)
		must(err)
		task, err := v03.MarshalEvent(&info.Task)
		must(err)
		ft := fixtureTask{ID: id, Agent: info.Agent, Owner: info.Owner, Seq: info.Seq, Created: info.Created.UnixNano(), Updated: info.Updated.UnixNano(), Task: task,
			Messages: msgs[id], SnapshotSeq: snapshotSeq(path, id)}
		recs, err := s.Events(ctx, id, 0, 0)
		must(err)
		for _, r := range recs {
			b, err := v03.MarshalEvent(r.Event)
			must(err)
			ft.Events = append(ft.Events, fixtureEvent{Seq: r.Seq, Time: r.Time.UnixNano(), Event: b})
		}
		pcs, err := s.PushConfigs(ctx, id)
		must(err)
		for _, p := range pcs {
			ft.Push = append(ft.Push, pushJSON(p))
		}
		f.Tasks = append(f.Tasks, ft)
	}
	pending, err := s.PendingPush(ctx)
	must(err)
	for _, p := range pending {
		f.PendingPush = append(f.PendingPush, pushJSON(p))
	}
	unfinished, err := s.Unfinished(ctx)
	must(err)
	for _, u := range unfinished {
		f.Unfinished = append(f.Unfinished, u.Task.ID)
	}
	for id, keys := range msgs {
		for _, k := range keys {
			agent, key, _ := strings.Cut(k, "\x00")
			got, err := s.MessageTask(ctx, agent, key)
			must(err)
			if got != id {
				log.Fatalf("MessageTask(%q, %q) = %q, want %q", agent, key, got, id)
			}
		}
	}
	must(s.Close())
	// The store's read connections are query-only and close last, so
	// the last close does not checkpoint the WAL into the file: do it
	// here, so that the file alone holds everything.
	checkpoint(path)

	js, err := json.MarshalIndent(f, "", " ")
	must(err)
	db, err := os.ReadFile(path)
	must(err)
	must(os.WriteFile(filepath.Join(*out, "v4.db"), db, 0o644))
	must(os.WriteFile(filepath.Join(*out, "v4.json"), append(js, '\n'), 0o644))
	log.Printf("wrote %s/v4.db (%d bytes) and v4.json (%d bytes): %d tasks", *out, len(db), len(js), len(f.Tasks))
}

// fixture is v4.json.
type fixture struct {
	SchemaVersion int           `json:"schemaVersion"`
	Commit        string        `json:"commit"`
	Tasks         []fixtureTask `json:"tasks"`
	PendingPush   []fixturePush `json:"pendingPush"`
	Unfinished    []string      `json:"unfinished"`
}

type fixtureTask struct {
	ID          string          `json:"id"`
	Agent       string          `json:"agent"`
	Owner       string          `json:"owner"`
	Seq         int64           `json:"seq"`
	Created     int64           `json:"created"`
	Updated     int64           `json:"updated"`
	SnapshotSeq int64           `json:"snapshotSeq"` // the stored checkpoint's seq (0: none)
	Task        json.RawMessage `json:"task"`
	Events      []fixtureEvent  `json:"events"`
	Push        []fixturePush   `json:"push"`
	Messages    []string        `json:"messages"` // agent + "\x00" + message key
}

type fixtureEvent struct {
	Seq   int64           `json:"seq"`
	Time  int64           `json:"time"`
	Event json.RawMessage `json:"event"`
}

type fixturePush struct {
	TaskID    string          `json:"taskId"`
	Config    json.RawMessage `json:"config"` // A2A 0.3.0 TaskPushNotificationConfig
	Delivered int64           `json:"delivered"`
	Created   int64           `json:"created"`
}

func pushJSON(p store.PushConfig) fixturePush {
	b, err := v03.MarshalTaskPushNotificationConfig(&a2a.TaskPushNotificationConfig{TaskID: p.TaskID, PushNotificationConfig: p.Config})
	must(err)
	return fixturePush{TaskID: p.TaskID, Config: b, Delivered: p.Delivered, Created: p.Created.UnixNano()}
}

// messageIndex lists the messages table: task id → agent + "\x00" + key.
func messageIndex(path string) map[string][]string {
	db, err := sql.Open("sqlite", path+"?_query_only=1")
	must(err)
	defer db.Close()
	rows, err := db.Query("SELECT agent, message_id, task_id FROM messages ORDER BY task_id, agent, message_id")
	must(err)
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var agent, key, id string
		must(rows.Scan(&agent, &key, &id))
		out[id] = append(out[id], agent+"\x00"+key)
	}
	must(rows.Err())
	return out
}

func snapshotSeq(path, id string) int64 {
	db, err := sql.Open("sqlite", path+"?_query_only=1")
	must(err)
	defer db.Close()
	var seq int64
	if err := db.QueryRow("SELECT seq FROM snapshots WHERE task_id = ?", id).Scan(&seq); err != nil && err != sql.ErrNoRows {
		must(err)
	}
	return seq
}

// checkpoint merges the WAL of the database at path into it and checks
// that none is left.
func checkpoint(path string) {
	db, err := sql.Open("sqlite", path)
	must(err)
	var busy, frames, done int
	must(db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &done))
	must(db.Close())
	if busy != 0 || frames != done {
		log.Fatalf("checkpoint: busy %d, %d of %d frames", busy, done, frames)
	}
	if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > 0 {
		log.Fatalf("%s-wal holds %d bytes after the checkpoint", path, st.Size())
	}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
