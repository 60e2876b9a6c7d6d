package postgres

import (
	"context"
	"errors"
	"hash/maphash"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/a2abridge/a2abridge/store"
)

// Group commit. Appends are queued (AppendAsync; Append waits for its
// own) and applied by a few writer goroutines, each taking what has
// queued for it while its previous batch committed and sending it as one
// pgx batch: every append's statement, then one Sync, so one round trip
// and one implicit transaction (PostgreSQL runs the statements between
// two Syncs as one transaction), and one commit, one WAL flush, for all
// of them. A task's appends always go to the same writer, in the order
// they were queued, so an append queued right after another of its task
// (After = n, then After = n+k) applies on top of it in the same
// transaction, or in a later one.
//
// An append that cannot apply (a conflict, an unknown task) is not an
// error in SQL: its statement writes nothing and returns no row, and the
// other appends of the batch commit. One that fails in SQL (a message id
// indexed by another append meanwhile, a deadlock with another replica's
// batch) aborts the transaction: nothing of the batch is committed, and
// the writer applies each of its appends alone, in order, so that each
// caller gets its own outcome. When the batch's outcome is unknown (the
// connection failed before the answer), every caller gets that error.

const (
	// writers is the number of writer goroutines of a Store: two keep a
	// batch filling while another commits.
	writers = 2
	// maxBatch bounds the appends of one batch, and maxBatchBytes their
	// records' bytes (checked before each append is added: one append
	// of any size always goes).
	maxBatch      = 128
	maxBatchBytes = 4 << 20
	// batchTimeout bounds a batch's round trip: past it the batch's
	// outcome is unknown, and its callers get the error.
	batchTimeout = time.Minute
)

// writer applies the appends queued for the tasks hashed to it.
type writer struct {
	// paused, held by a test (PauseWriters), keeps the writer from
	// taking its next batch.
	paused sync.Mutex
	mu     sync.Mutex
	queue  []*request
	closed bool          // set by Close: nothing more is queued
	kick   chan struct{} // cap 1: the queue has something, or closed
	done   chan struct{} // closed when the writer has ended
}

func newWriter() *writer {
	return &writer{kick: make(chan struct{}, 1), done: make(chan struct{})}
}

// startWriters starts the Store's writers; Close stops them.
func (s *Store) startWriters() {
	s.seed = maphash.MakeSeed()
	s.writers = make([]*writer, writers)
	for i := range s.writers {
		s.writers[i] = newWriter()
		go s.write(s.writers[i])
	}
}

// stopWriters stops the writers once they have applied what is queued.
func (s *Store) stopWriters() {
	for _, w := range s.writers {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		w.wake()
	}
	for _, w := range s.writers {
		<-w.done
	}
}

func (w *writer) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// AppendAsync implements store.GroupCommitter: Append without waiting. It
// validates a, queues it for the group commit and returns at once a
// channel (buffered) that receives the outcome, with Append's errors, once
// the append is committed or has failed. Appends queued for one task are applied in the order they were
// queued; a failed one makes the later ones that build on it fail (with
// store.ErrConflict, as they expect a sequence number the log never
// reached, or with its own error when one statement applied them
// together), never apply out of order. The server's engine uses it for
// an agent's events (the agent goes on while they commit; they are
// published once they have), and, with a Store opened Exclusive (see
// Exclusive), for creates too.
func (s *Store) AppendAsync(ctx context.Context, a store.Append) <-chan error {
	if err := ctx.Err(); err != nil {
		return answered(err)
	}
	if s.isShut.Load() {
		return answered(ErrClosed)
	}
	r, err := prepare(a)
	if err != nil {
		return answered(err)
	}
	r.ctx = ctx
	if s.msgs != nil && len(a.MessageIDs) > 0 {
		// Added before the append is sent (MessageTask may then read a
		// key that is not indexed, never miss one that is).
		if a.Agent == "" && a.After > 0 {
			s.msgs.Disable() // indexed under the task's agent, unknown here
		}
		for _, id := range a.MessageIDs {
			s.msgs.Add(a.Agent, id)
		}
	}
	w := s.writers[maphash.String(s.seed, a.TaskID)%uint64(len(s.writers))]
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return answered(ErrClosed)
	}
	w.queue = append(w.queue, r)
	w.mu.Unlock()
	w.wake()
	return r.res
}

func answered(err error) <-chan error {
	c := make(chan error, 1)
	c <- err
	return c
}

// write is a writer's goroutine: it applies batches of what is queued
// until Close, and then what is left.
func (s *Store) write(w *writer) {
	defer close(w.done)
	var batch []*request
	for {
		w.mu.Lock()
		for len(w.queue) == 0 {
			if w.closed {
				w.mu.Unlock()
				return
			}
			w.mu.Unlock()
			<-w.kick
			// Let the goroutines that are ready to run go first: under
			// load some are about to queue an append (an agent's event
			// right after its task's create), which then shares this
			// batch. Alone, this returns at once.
			runtime.Gosched()
			w.mu.Lock()
		}
		w.mu.Unlock()
		w.paused.Lock() // a test's pause
		w.paused.Unlock()
		w.mu.Lock()
		n, size := 0, int64(0)
		for n < len(w.queue) && n < maxBatch && (n == 0 || size < maxBatchBytes) {
			size += w.queue[n].size
			n++
		}
		batch = append(batch[:0], w.queue[:n]...)
		clear(w.queue[:n])
		w.queue = w.queue[n:]
		if len(w.queue) == 0 {
			w.queue = nil // let the backing array go
		}
		w.mu.Unlock()
		s.commit(batch)
		clear(batch)
	}
}

// commit applies batch and answers each of its requests.
func (s *Store) commit(batch []*request) {
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.res <- err
			continue
		}
		live = append(live, r)
	}
	if obs := s.observer.Load(); obs != nil && len(live) > 0 {
		start, n := time.Now(), len(live)
		defer func() { (*obs)(n, time.Since(start)) }()
	}
	switch len(live) {
	case 0:
		return
	case 1:
		live[0].res <- s.applyOne(live[0])
		return
	}
	stmts := chain(live)
	// In task id order (a task's own statements keep theirs): two
	// replicas' batches that write the same tasks' rows then lock them
	// in the same order instead of deadlocking.
	slices.SortStableFunc(stmts, func(a, b stmt) int { return strings.Compare(a.first.a.TaskID, b.first.a.TaskID) })
	s.statements.Add(int64(len(stmts)))
	s.batches.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	outs := make([]outcome, len(stmts))
	var failed *outcome
	if len(stmts) == 1 {
		sql, args := statement(stmts[0].first, stmts[0].chained)
		outs[0] = scanAppend(s.pool.QueryRow(ctx, sql, args...), stmts[0].records())
		if outs[0].err != nil {
			failed = &outs[0]
		}
	} else {
		b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(stmts))}
		for _, st := range stmts {
			sql, args := statement(st.first, st.chained)
			b.Queue(sql, args...)
		}
		br := s.pool.SendBatch(ctx, b)
		for i, st := range stmts {
			outs[i] = scanAppend(br.QueryRow(), st.records())
			if outs[i].err != nil && failed == nil {
				failed = &outs[i]
			}
		}
		if err := br.Close(); err != nil && failed == nil {
			// An error at the commit (a serialization failure, a
			// deferred constraint) is reported at the Sync: the
			// transaction rolled back as for a statement's error.
			var pe *pgconn.PgError
			failed = &outcome{err: wrap("append", err), byServer: errors.As(err, &pe)}
		}
	}
	switch {
	case failed == nil:
		for i, st := range stmts {
			if outs[i].applied {
				st.answer(nil)
			}
		}
		for i, st := range stmts {
			if outs[i].applied {
				s.committed(st.end(), outs[i])
			}
		}
		for i, st := range stmts {
			if !outs[i].applied {
				// The chained appends build on the first: they fail
				// with it.
				st.answer(s.notApplied(st.first))
			}
		}
	case failed.byServer:
		// Rolled back: each append alone, in order.
		for _, r := range live {
			r.res <- s.applyOne(r)
		}
	default:
		for _, r := range live {
			r.res <- failed.err
		}
	}
}

// stmt is the appends that one statement of a batch applies: first, and
// the continuations chained to it.
type stmt struct {
	first   *request
	chained []*request
}

func (st stmt) end() *request {
	if len(st.chained) > 0 {
		return st.chained[len(st.chained)-1]
	}
	return st.first
}

func (st stmt) records() int {
	n := len(st.first.a.Records)
	for _, q := range st.chained {
		n += len(q.a.Records)
	}
	return n
}

func (st stmt) answer(err error) {
	st.first.res <- err
	for _, q := range st.chained {
		q.res <- err
	}
}

// chain groups reqs (a batch, in queue order) into statements: a create,
// or an append without message ids, takes along the later appends of its
// task that continue its log where the one before ends, without message
// ids, for the same agent and from the same runner (a task's create and
// its agent's first events, or an agent's events queued back to back), up
// to the first of that task that does not. The task's row is then written once instead
// of once per append (each write of it updates its six indexes). The
// statements keep the order of each task's appends.
func chain(reqs []*request) []stmt {
	stmts := make([]stmt, 0, len(reqs))
	var merged []bool
	for i, r := range reqs {
		if merged != nil && merged[i] {
			continue
		}
		st := stmt{first: r}
		if r.a.After == 0 || len(r.msgs) == 0 {
			last := r.last
			for j := i + 1; j < len(reqs); j++ {
				q := reqs[j]
				if q.a.TaskID != r.a.TaskID {
					continue
				}
				// Appends of one runner only: the statement tells
				// whether the runner changed (notify.go) once, for
				// the chain's last one.
				if q.a.After != last || len(q.msgs) > 0 || (q.a.Agent != "" && q.a.Agent != r.a.Agent) || q.a.Runner != r.a.Runner {
					break
				}
				if merged == nil {
					merged = make([]bool, len(reqs))
				}
				merged[j] = true
				st.chained = append(st.chained, q)
				last = q.last
			}
		}
		stmts = append(stmts, st)
	}
	return stmts
}

// ObserveCommits implements store.CommitObserver: f is called after each
// transaction of appends (group commit) with their number and the
// transaction's duration; nil removes it.
func (s *Store) ObserveCommits(f func(appends int, d time.Duration)) {
	if f == nil {
		s.observer.Store(nil)
		return
	}
	s.observer.Store(&f)
}
