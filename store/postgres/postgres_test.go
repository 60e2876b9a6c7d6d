package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store/postgres"

	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return pgtest.Open(t) })
}

func open(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	return pgtest.OpenDSN(t, dsn, postgres.Options{})
}

func task(id string, state a2a.TaskState) a2a.Task {
	return a2a.Task{ID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: state}}
}

func create(t *testing.T, s store.Store, id string, msgs ...string) {
	t.Helper()
	snap := task(id, a2a.TaskStateWorking)
	c := snap
	if err := s.Append(context.Background(), store.Append{Agent: "a", TaskID: id, Records: []store.Record{{Event: &c}}, Snapshot: snap, MessageIDs: msgs}); err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
}

// TestMigrateEmptyAndReopen: Open creates the schema in an empty
// search_path schema, a second Open finds it current and keeps the data,
// and a schema of a newer version is refused.
func TestMigrateEmptyAndReopen(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := open(t, dsn)
	create(t, s, "kept", "m1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Task(context.Background(), "kept"); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Task after Close: %v, want ErrClosed", err)
	}
	s = open(t, dsn)
	if info, err := s.Task(context.Background(), "kept"); err != nil || info.Seq != 1 || info.Agent != "a" {
		t.Fatalf("after reopen: %+v, %v", info, err)
	}
	if id, err := s.MessageTask(context.Background(), "a", "m1"); id != "kept" || err != nil {
		t.Fatalf("MessageTask after reopen = %q, %v", id, err)
	}
	conn := admin(t, dsn)
	var v int
	if err := conn.QueryRow(context.Background(), "SELECT version FROM a2abridge_schema").Scan(&v); err != nil || v != postgres.SchemaVersion {
		t.Fatalf("schema version %d, %v; want %d", v, err, postgres.SchemaVersion)
	}
	if _, err := conn.Exec(context.Background(), "UPDATE a2abridge_schema SET version = $1", postgres.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

func admin(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// TestConcurrentOpen: processes starting at once on one empty schema
// migrate it once (the advisory lock); all of them then work.
func TestConcurrentOpen(t *testing.T) {
	dsn := pgtest.DSN(t)
	const n = 6
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = postgres.Open(context.Background(), dsn, postgres.Options{}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	for i, s := range stores {
		create(t, s, fmt.Sprint("t", i))
	}
	var rows int
	if err := admin(t, dsn).QueryRow(context.Background(), "SELECT count(*) FROM a2abridge_schema").Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("a2abridge_schema has %d rows, %v", rows, err)
	}
}

// TestConcurrentAppendersAcrossPools: appenders on several Stores (each
// its own pool, as replicas would be) race on one task and on one
// message id: every append that returned nil is in the log exactly once,
// at the position it asked for, every other one failed with ErrConflict
// (or ErrDuplicateMessage for the shared message id), and the log has no
// gaps.
func TestConcurrentAppendersAcrossPools(t *testing.T) {
	dsn := pgtest.DSN(t)
	stores := []*postgres.Store{open(t, dsn), open(t, dsn), open(t, dsn)}
	ctx := context.Background()
	create(t, stores[0], "hot")
	const workers, tries = 9, 40
	var (
		mu     sync.Mutex
		won    = map[int64]string{} // seq → message id
		dupWon int
		wg     sync.WaitGroup
	)
	for w := range workers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for i := range tries {
				info, err := s.Task(ctx, "hot")
				if err != nil {
					t.Error(err)
					return
				}
				mid := fmt.Sprintf("w%d-%d", w, i)
				ids := []string{mid}
				if i == tries/2 {
					ids = append(ids, "shared") // claimed by one appender only
				}
				m := &a2a.Message{MessageID: mid, Role: a2a.RoleUser, TaskID: "hot", ContextID: "ctx", Parts: []a2a.Part{a2a.NewTextPart(mid)}}
				err = s.Append(ctx, store.Append{TaskID: "hot", After: info.Seq, Records: []store.Record{{Event: m}},
					Snapshot: task("hot", a2a.TaskStateWorking), MessageIDs: ids})
				switch {
				case err == nil:
					mu.Lock()
					if prev, ok := won[info.Seq+1]; ok {
						t.Errorf("seq %d acknowledged twice: %s and %s", info.Seq+1, prev, mid)
					}
					won[info.Seq+1] = mid
					if len(ids) == 2 {
						dupWon++
					}
					mu.Unlock()
				case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrDuplicateMessage):
				default:
					t.Errorf("append %s: %v", mid, err)
					return
				}
			}
		})
	}
	wg.Wait()
	recs, err := stores[1].Events(ctx, "hot", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(recs)) != int64(len(won))+1 {
		t.Fatalf("%d records, %d acknowledged appends (+1 create)", len(recs), len(won))
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
		if i == 0 {
			continue
		}
		if m := r.Event.(*a2a.Message); m.MessageID != won[r.Seq] {
			t.Errorf("seq %d holds %s, acknowledged %s", r.Seq, m.MessageID, won[r.Seq])
		}
	}
	if len(won) < workers {
		t.Errorf("only %d appends won", len(won))
	}
	if dupWon > 1 {
		t.Errorf("message id shared indexed by %d appends", dupWon)
	}
	if id, _ := stores[2].MessageTask(ctx, "a", "shared"); (id == "hot") != (dupWon == 1) {
		t.Errorf("MessageTask(shared) = %q with %d winners", id, dupWon)
	}
}

// TestConcurrentCreates: creates of one task id, and of tasks sharing a
// message id, from several pools: one wins each.
func TestConcurrentCreates(t *testing.T) {
	dsn := pgtest.DSN(t)
	stores := []*postgres.Store{open(t, dsn), open(t, dsn)}
	ctx := context.Background()
	for round := range 20 {
		var wins, conflicts, dups atomic.Int32
		var wg sync.WaitGroup
		for w := range 6 {
			s := stores[w%2]
			wg.Go(func() {
				id := fmt.Sprintf("same-%d", round)
				ids := []string{fmt.Sprintf("m-%d-b", round), fmt.Sprintf("m-%d-a", round)}
				if w%2 == 1 {
					id = fmt.Sprintf("other-%d-%d", round, w) // distinct ids, same message ids (reversed)
					ids[0], ids[1] = ids[1], ids[0]
				}
				snap := task(id, a2a.TaskStateSubmitted)
				c := snap
				switch err := s.Append(ctx, store.Append{Agent: "a", TaskID: id, Records: []store.Record{{Event: &c}}, Snapshot: snap, MessageIDs: ids}); {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, store.ErrConflict):
					conflicts.Add(1)
				case errors.Is(err, store.ErrDuplicateMessage):
					dups.Add(1)
				default:
					t.Errorf("create: %v", err)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 || conflicts.Load()+dups.Load() != 5 {
			t.Fatalf("round %d: %d wins, %d conflicts, %d duplicates", round, wins.Load(), conflicts.Load(), dups.Load())
		}
	}
}

// TestBadDSN: a DSN that does not parse, and a database that cannot be
// reached, fail Open with an error that does not show the password.
func TestBadDSN(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{
		"postgres://alice:s3cretpw@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"host=127.0.0.1 port=1 user=alice password=s3cretpw dbname=db sslmode=disable connect_timeout=2",
		"postgres://alice:s3cretpw@127.0.0.1:notaport/db",
		"host=127.0.0.1 password='s3cretpw port=1",
		"postgres://alice:s3cretpw@127.0.0.1/db?pool_max_conns=zero",
	} {
		_, err := postgres.Open(ctx, dsn, postgres.Options{ConnectTimeout: 2 * time.Second})
		if err == nil {
			t.Errorf("Open(%s) succeeded", postgres.RedactDSN(dsn))
			continue
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("error shows the password: %v", err)
		}
	}
}

func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://alice:s3cret@db.example.com:5432/a2a?sslmode=require":      "postgres://alice:xxxxx@db.example.com:5432/a2a?sslmode=require",
		"postgresql://alice@db/a2a":                                            "postgresql://alice@db/a2a",
		"postgres://db/a2a?user=alice&password=s3cret&sslmode=disable":         "postgres://db/a2a?user=alice&password=xxxxx&sslmode=disable",
		"postgres://alice:p%40ss@db/a2a":                                       "postgres://alice:xxxxx@db/a2a",
		"postgres://alice:pa ss@db:bad/a2a?password=x":                         "postgres://alice:xxxxx@db:bad/a2a?password=xxxxx",
		"host=db user=alice password=s3cret dbname=a2a":                        "host=db user=alice password=xxxxx dbname=a2a",
		"host=db password = 's3 cr\\'et' dbname=a2a":                           "host=db password = xxxxx dbname=a2a",
		"host=db PASSWORD=s3cret":                                              "host=db PASSWORD=xxxxx",
		"":                                                                     "",
		"postgres://alice:s3cret@/a2a?host=/var/run/postgresql":                "postgres://alice:xxxxx@/a2a?host=/var/run/postgresql",
		"postgres://alice:s3cret@h1:5432,h2:5432/a2a?target_session_attrs=any": "postgres://alice:xxxxx@h1:5432,h2:5432/a2a?target_session_attrs=any",
		"postgres:///a2a?application_name=a@b&password=s3cret":                 "postgres:///a2a?application_name=a@b&password=xxxxx",
	} {
		if got := postgres.RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzRedactDSN: whatever the input, a password that pgx finds in it
// (when it parses) does not survive RedactDSN.
func FuzzRedactDSN(f *testing.F) {
	for _, s := range []string{
		"postgres://alice:s3cretpw@db.example.com:5432/a2a?sslmode=require",
		"postgres://db/a2a?user=alice&password=s3cretpw",
		"host=db user=alice password=s3cretpw dbname=a2a",
		"host=db password='s3 cret\\'pw' dbname=a2a",
		"postgres://al:ice:pw@@db/x",
		"password=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		out := postgres.RedactDSN(dsn)
		if len(dsn) <= 8<<10 && len(out) > 2*len(dsn)+64 {
			t.Fatalf("RedactDSN grew %d bytes to %d", len(dsn), len(out))
		}
		cfg, err := pgconn.ParseConfig(dsn)
		if err != nil || len(cfg.Password) < 6 || strings.Contains("xxxxx", cfg.Password) {
			return
		}
		if strings.Count(dsn, cfg.Password) != 1 {
			return // also elsewhere (a user or host name holding it)
		}
		if strings.Contains(out, cfg.Password) {
			t.Fatalf("RedactDSN(%q) = %q shows the password %q", dsn, out, cfg.Password)
		}
	})
}

// TestAnyBytes: ids, agents, owners, context ids and message ids are Go
// strings, which may hold NUL bytes and bytes that are not UTF-8 (the
// engine's message index keys have NUL bytes): they round-trip, and
// ListTasks orders ids bytewise.
func TestAnyBytes(t *testing.T) {
	s := pgtest.Open(t)
	ctx := context.Background()
	agent, owner, ctxID := "a\x00gent", "t\"x\"/\x00\xff", "c\x00"
	ids := []string{"t\x00b", "t\x00", "t\xc3\xa9", "tz", "t\x7f"}
	for i, id := range ids {
		snap := a2a.Task{ID: id, ContextID: ctxID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Unix(100, 0)}}
		c := snap
		if err := s.Append(ctx, store.Append{Agent: agent, Owner: owner, TaskID: id, Records: []store.Record{{Event: &c}}, Snapshot: snap,
			MessageIDs: []string{fmt.Sprint("m\x00\xff", i)}}); err != nil {
			t.Fatalf("create %q: %v", id, err)
		}
		info, err := s.Task(ctx, id)
		if err != nil || info.Agent != agent || info.Owner != owner || info.Task.ContextID != ctxID || info.Task.ID != id {
			t.Fatalf("Task(%q) = %+v, %v", id, info, err)
		}
		if got, err := s.MessageTask(ctx, agent, fmt.Sprint("m\x00\xff", i)); got != id || err != nil {
			t.Errorf("MessageTask = %q, %v; want %q", got, err, id)
		}
	}
	page, err := s.ListTasks(ctx, store.TaskQuery{Agent: agent, Owner: owner, ContextID: ctxID, Limit: 2})
	if err != nil || page.Total != len(ids) {
		t.Fatalf("ListTasks: %+v, %v", page, err)
	}
	var got []string
	for {
		for _, ti := range page.Tasks {
			got = append(got, ti.Task.ID)
		}
		if page.Next == "" {
			break
		}
		if page, err = s.ListTasks(ctx, store.TaskQuery{Agent: agent, Owner: owner, ContextID: ctxID, Limit: 2, Cursor: page.Next}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"t\xc3\xa9", "t\x7f", "tz", "t\x00b", "t\x00"} // descending bytewise
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("ListTasks order %q, want %q", got, want)
	}
}

// TestExclusive: a second exclusive Store on one schema is refused with
// ErrLocked until the first closes; other schemas and non-exclusive
// Stores are not affected.
func TestExclusive(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	first, err := postgres.Open(ctx, dsn, postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if _, err := postgres.Open(ctx, dsn, postgres.Options{Exclusive: true}); !errors.Is(err, postgres.ErrLocked) {
		t.Fatalf("second exclusive Open: %v, want ErrLocked", err)
	}
	open(t, dsn) // a non-exclusive one (tools, tests) is fine
	other, err := postgres.Open(ctx, pgtest.DSN(t), postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatalf("exclusive Open of another schema: %v", err)
	}
	other.Close()
	first.Close()
	again, err := postgres.Open(ctx, dsn, postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatalf("exclusive Open after Close: %v", err)
	}
	again.Close()
}

// TestSharedAndExclusive: shared Stores (replicas) share a schema; an
// exclusive one is refused while any shared one lives, and a shared one
// while an exclusive one does.
func TestSharedAndExclusive(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	r1, err := postgres.Open(ctx, dsn, postgres.Options{Shared: true, Notify: true})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := postgres.Open(ctx, dsn, postgres.Options{Shared: true, Notify: true})
	if err != nil {
		t.Fatalf("second shared Open: %v", err)
	}
	if _, err := postgres.Open(ctx, dsn, postgres.Options{Exclusive: true}); !errors.Is(err, postgres.ErrLocked) {
		t.Fatalf("exclusive Open beside replicas: %v, want ErrLocked", err)
	}
	r1.Close()
	if _, err := postgres.Open(ctx, dsn, postgres.Options{Exclusive: true}); !errors.Is(err, postgres.ErrLocked) {
		t.Fatalf("exclusive Open beside one replica: %v, want ErrLocked", err)
	}
	r2.Close()
	x, err := postgres.Open(ctx, dsn, postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatalf("exclusive Open once the replicas closed: %v", err)
	}
	defer x.Close()
	if _, err := postgres.Open(ctx, dsn, postgres.Options{Shared: true}); !errors.Is(err, postgres.ErrLocked) {
		t.Fatalf("shared Open beside an exclusive store: %v, want ErrLocked", err)
	}
}

// TestPing: Ping answers nil while the database does, and
// ErrClosed after Close.
func TestPing(t *testing.T) {
	storetest.Ping(t, pgtest.Open(t))
}
