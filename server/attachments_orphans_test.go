package server_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

// gate holds one PutAttachment call (the block-th, counting from 1)
// until release is closed, after closing blocked; it records the ids of
// every attachment put.
type gate struct {
	calls    atomic.Int32
	block    int32
	blocked  chan struct{}
	release  chan struct{}
	failNext atomic.Bool // the next Append fails (memory only)
	mu       sync.Mutex
	ids      []string
}

func newGate(block int32) *gate {
	return &gate{block: block, blocked: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) put(ctx context.Context, as store.AttachmentStore, a store.Attachment) error {
	if g.calls.Add(1) == g.block {
		close(g.blocked)
		<-g.release
	}
	g.mu.Lock()
	g.ids = append(g.ids, a.ID)
	g.mu.Unlock()
	return as.PutAttachment(ctx, a)
}

type gateMemory struct {
	*memory.Store
	*gate
}

func (s gateMemory) PutAttachment(ctx context.Context, a store.Attachment) error {
	return s.put(ctx, s.Store, a)
}

func (s gateMemory) Append(ctx context.Context, a store.Append) error {
	if s.failNext.CompareAndSwap(true, false) {
		return errors.New("disk full")
	}
	return s.Store.Append(ctx, a)
}

// gateSQLite keeps SQLite's AppendAsync: the engine's queued create.
type gateSQLite struct {
	*sqlite.Store
	*gate
}

func (s gateSQLite) PutAttachment(ctx context.Context, a store.Attachment) error {
	return s.put(ctx, s.Store, a)
}

// attachStore is what the tests read back through.
type attachStore interface {
	store.Store
	store.AttachmentStore
}

// orphanServer serves agent "files" (attachments on) on st.
func orphanServer(t *testing.T, st store.Store, agent server.Agent) func(m map[string]any) map[string]any {
	t.Helper()
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	host := servertest.Host("",
		server.NewHandler(eng, "files", agent, testutil.Card("files"), server.HandlerOptions{Attachments: &server.AttachmentOptions{}}))
	ts := testutil.ServeDrained(t, host, eng.Close)
	return func(m map[string]any) map[string]any {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": map[string]any{"message": m}})
		resp, err := http.Post(ts.URL+"/a2a/files", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Error(err)
			return nil
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.UnmarshalRead(resp.Body, &out); err != nil {
			t.Error(err)
		}
		return out
	}
}

// kept returns the attachments of g still stored, checking that each
// belongs to a task that exists.
func kept(t *testing.T, st attachStore, g *gate) []store.Attachment {
	t.Helper()
	ctx := context.Background()
	var out []store.Attachment
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, id := range g.ids {
		a, err := st.Attachment(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Task(ctx, a.TaskID); err != nil {
			t.Errorf("attachment %s names task %s, which is not stored (%v): retention never deletes it", id, a.TaskID, err)
		}
		out = append(out, a)
	}
	return out
}

func taskIDOf(t *testing.T, out map[string]any) string {
	t.Helper()
	r, ok := out["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", out)
	}
	id, _ := r["id"].(string)
	return id
}

func requireInput(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	return u.RequireInput(ctx, "more?")
}

// TestAttachmentsRetryOfNewTask: two sends of one new
// message with a file race: the first stores its file, then the second
// creates the task; the first's create is refused as a duplicate and
// answered with the task, and the file it stored (for a task id that
// will never exist) is deleted: one attachment is left, the task's.
// With the synchronous create (memory) and the queued one (SQLite).
func TestAttachmentsRetryOfNewTask(t *testing.T) {
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			g := newGate(1)
			var st attachStore = gateMemory{memory.New(), g}
			if name == "sqlite" {
				s := sqliteStore(t).(*sqlite.Store)
				st = gateSQLite{s, g}
			}
			send := orphanServer(t, st, server.AgentFunc(requireInput))
			first := make(chan map[string]any, 1)
			go func() { first <- send(fileMessage("m1", "", []byte("hello"))) }()
			<-g.blocked
			id := taskIDOf(t, send(fileMessage("m1", "", []byte("hello"))))
			close(g.release)
			if got := taskIDOf(t, <-first); got != id {
				t.Fatalf("the retry went to task %q, want %q", got, id)
			}
			if k := kept(t, st, g); len(k) != 1 || k[0].TaskID != id {
				t.Fatalf("attachments kept: %+v, want one of task %s (of %d stored)", k, id, len(g.ids))
			}
		})
	}
}

// TestAttachmentsCreateFails: when the store refuses
// the create of a new task, the files stored for its message are
// deleted.
func TestAttachmentsCreateFails(t *testing.T) {
	g := newGate(0)
	st := gateMemory{memory.New(), g}
	send := orphanServer(t, st, server.AgentFunc(requireInput))
	st.failNext.Store(true)
	out := send(fileMessage("m1", "", []byte("hello")))
	if _, ok := out["error"]; !ok {
		t.Fatalf("create with a failing store: %v, want an error", out)
	}
	if len(g.ids) != 1 {
		t.Fatalf("%d attachments put, want 1", len(g.ids))
	}
	if k := kept(t, st, g); len(k) != 0 {
		t.Fatalf("attachments kept after a failed create: %+v", k)
	}
}

// TestAttachmentsRetryOfContinuation: two sends of
// one continuation message with a file race: the first stores its file,
// then the second is accepted; the first, under the task's lock, is a
// retry of the same message (compared as sent, not with its file
// replaced by a URL) and is answered with the task, and its file is
// deleted: the task keeps one attachment per message.
func TestAttachmentsRetryOfContinuation(t *testing.T) {
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			g := newGate(2) // the continuation's first PutAttachment
			var st attachStore = gateMemory{memory.New(), g}
			if name == "sqlite" {
				s := sqliteStore(t).(*sqlite.Store)
				st = gateSQLite{s, g}
			}
			send := orphanServer(t, st, server.AgentFunc(requireInput))
			id := taskIDOf(t, send(fileMessage("m1", "", []byte("one"))))
			first := make(chan map[string]any, 1)
			go func() { first <- send(fileMessage("m2", id, []byte("two"))) }()
			<-g.blocked
			if out := send(fileMessage("m2", id, []byte("two"))); taskIDOf(t, out) != id {
				t.Fatalf("continuation: %v", out)
			}
			close(g.release)
			out := <-first
			if e, ok := out["error"]; ok {
				t.Fatalf("a retry of the continuation was refused: %v", e)
			}
			if got := taskIDOf(t, out); got != id {
				t.Fatalf("the retry went to task %q, want %q", got, id)
			}
			if k := kept(t, st, g); len(k) != 2 {
				t.Fatalf("attachments kept: %+v, want 2 (one per message; %d stored)", k, len(g.ids))
			}
		})
	}
}

// TestAttachmentsContinuationRefused: a continuation
// whose file was stored while the task took input, but that finds the
// task working once it holds the task's lock (another message came
// first), is refused, and its file is deleted.
func TestAttachmentsContinuationRefused(t *testing.T) {
	g := newGate(2)
	st := gateMemory{memory.New(), g}
	hold := make(chan struct{})
	var n atomic.Int32
	working := make(chan struct{})
	send := orphanServer(t, st, server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if n.Add(1) == 1 {
			return u.RequireInput(ctx, "more?")
		}
		close(working)
		select { // the task stays working
		case <-hold:
		case <-ctx.Done():
		}
		return u.Complete(context.WithoutCancel(ctx), "done")
	}))
	t.Cleanup(func() { close(hold) }) // before the server closes
	id := taskIDOf(t, send(fileMessage("m1", "", []byte("one"))))
	first := make(chan map[string]any, 1)
	go func() { first <- send(fileMessage("m2", id, []byte("two"))) }()
	<-g.blocked
	other := map[string]any{"kind": "message", "role": "user", "messageId": "m3", "taskId": id,
		"parts": []any{map[string]any{"kind": "text", "text": "go on"}}}
	go send(other) // answered when the agent ends: not waited for
	<-working      // the other message was accepted: the task is working
	close(g.release)
	out := <-first
	e, ok := out["error"].(map[string]any)
	if !ok || e["code"] != float64(-32004) {
		t.Fatalf("continuation of a working task: %v, want -32004", out)
	}
	if k := kept(t, st, g); len(k) != 1 {
		t.Fatalf("attachments kept: %+v, want 1 (the first message's)", k)
	}
}
