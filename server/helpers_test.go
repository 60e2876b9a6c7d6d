package server_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/internal/schematest"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/postgres"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

type testServerOptions struct {
	store     store.Store
	transport server.TransportOptions
	// more are agents hosted after the standard ones, by name.
	more map[string]server.Agent
}

type testServer struct {
	*httptest.Server
	engine *server.Engine
	store  store.Store
	cancel chan string // task ids whose cancel hook ran (wait agent)
}

// waitAgent emits nothing and waits until its task is canceled.
type waitAgent struct{ canceled chan string }

func (waitAgent) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	<-ctx.Done()
	return ctx.Err()
}

func (w waitAgent) Cancel(ctx context.Context, task a2a.Task) error {
	select {
	case w.canceled <- task.ID:
	default:
	}
	return nil
}

// card is a bare streaming Agent Card for handlers whose card no test reads.
func card() a2a.AgentCard {
	return a2a.AgentCard{Name: "x", Description: "x", Version: "1", Capabilities: a2a.AgentCapabilities{Streaming: true}}
}

// newTestServer starts a Host on an httptest server with the built-in
// agents (echo is the default) and test agents: wait (blocks until
// canceled), bad (emits an invalid transition), panic, fail (returns an
// error), other (emits an event for another task), nostream (no streaming).
func newTestServer(t testing.TB, o testServerOptions) *testServer {
	t.Helper()
	st := o.store
	if st == nil {
		st = envStore(t)
	}
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	o.transport.Logger = testutil.Logger()
	host := server.NewHost(server.HostOptions{Default: "echo", Transport: o.transport})
	ts := &testServer{engine: eng, store: st, cancel: make(chan string, 16)}
	add := func(name string, a server.Agent, c a2a.AgentCard) {
		host.Add(server.NewHandler(eng, name, a, c, server.HandlerOptions{}))
	}
	add("echo", agents.Echo{}, agents.Echo{}.Card())
	add("chat", agents.Chat{}, agents.Chat{}.Card())
	add("slow", agents.Slow{Seconds: 1, Step: 20 * time.Millisecond}, agents.Slow{}.Card())
	add("wait", waitAgent{canceled: ts.cancel}, testutil.Card("wait"))
	add("bad", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		if err := u.Working(ctx, "working"); err != nil {
			return err
		}
		return u.SetStatus(ctx, a2a.TaskStateSubmitted, nil)
	}), testutil.Card("bad"))
	add("panic", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		panic("boom")
	}), testutil.Card("panic"))
	add("fail", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		return errors.New("secret internal detail")
	}), testutil.Card("fail"))
	add("other", server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		return u.Emit(ctx, &a2a.TaskStatusUpdateEvent{TaskID: "someone-else", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}})
	}), testutil.Card("other"))
	nc := testutil.Card("nostream")
	nc.Capabilities.Streaming = false
	add("nostream", agents.Echo{}, nc)
	for name, a := range o.more {
		add(name, a, testutil.Card(name))
	}
	ts.Server = testutil.Serve(t, host, eng.Close)
	return ts
}

// validateEvent validates a bare event document by its kind.
func validateEvent(t *testing.T, doc []byte) {
	t.Helper()
	var k struct {
		Kind string `json:"kind"`
	}
	_ = json.Unmarshal(doc, &k)
	def := map[string]string{"task": "Task", "message": "Message", "status-update": "TaskStatusUpdateEvent", "artifact-update": "TaskArtifactUpdateEvent"}[k.Kind]
	if def == "" {
		def = "JSONRPCError"
	}
	schematest.Validate(t, def, doc)
}

func validateBatch(t *testing.T, doc []byte) {
	t.Helper()
	var members []jsontext.Value
	if err := json.Unmarshal(doc, &members); err != nil {
		t.Fatalf("batch response is not an array: %v", err)
	}
	for _, m := range members {
		if strings.Contains(string(m), `"error":`) {
			schematest.Validate(t, "JSONRPCErrorResponse", m)
		} else {
			schematest.Validate(t, "JSONRPCSuccessResponse", m)
		}
	}
}

// envStore is the store the variable A2ABRIDGE_TEST_STORE names: "sqlite"
// (sqliteStore), "postgres" (pgtest's, opened as serve without --replica
// opens it: the engine queues its appends, group commit; the replica tests
// cover the shared store), or else a memory store.
func envStore(t testing.TB) store.Store {
	t.Helper()
	switch os.Getenv("A2ABRIDGE_TEST_STORE") {
	case "sqlite":
		return sqliteStore(t)
	case "postgres":
		return pgtest.OpenWith(t, postgres.Options{Exclusive: true})
	}
	return memory.New()
}

// namedStore is a memory store for "memory", sqliteStore's for "sqlite",
// for the tests that run on both.
func namedStore(t testing.TB, name string) store.Store {
	t.Helper()
	if name == "sqlite" {
		return sqliteStore(t)
	}
	return memory.New()
}

// sqliteStore opens a SQLite store in a temporary directory.
func sqliteStore(t testing.TB) store.Store {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "test.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
