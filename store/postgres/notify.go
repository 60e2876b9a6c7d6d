package postgres

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/a2abridge/a2abridge/store"
)

// Notifications between the processes that share a schema (Options.Notify,
// store.Watcher), with LISTEN/NOTIFY: PostgreSQL is already the one
// dependency of a replicated server, and a notification needs no table,
// no polling and no cleanup.
//
// A notification is sent after the append's commit, on a connection of
// the pool, not in the append's own transaction: PostgreSQL serialises
// the commits of transactions that NOTIFY (they take a database-wide lock
// until their commit is flushed), which would cap durable appends at one
// disk flush each. One goroutine sends what has accumulated meanwhile in
// one pg_notify, at most one every notifyGather, so under load many
// appends share one notification; a
// send that fails is retried (100 ms, doubling up to 5 s) with what
// accumulates meanwhile. The price: a process that dies between an
// append's commit and its notification leaves the others to learn of that
// append from their next read of the task's log: at the task's next
// append, at a resync, or at a stream's periodic re-read (the engine's
// safety net); an execution that died with it is failed by another
// process when its lease expires (store.Leaser), and that is notified.
//
// The payload is text, at most maxPayload bytes: the sending store's
// instance id on the first line, then one line per task, "SEQ TASKID"
// (the task's last sequence number when the notification was sent; 0 when
// the task changed without an append: its push configs), or
// "R" for tasks whose id a payload cannot carry (not UTF-8, a line break
// or NUL in it, or too long): a resync for every listener.

// Which appends are notified: a process needs to hear of another's
// append to a task only when it runs the task (it must stop when the task
// is ended or continued elsewhere) or follows it (streams). So an append
// is notified when the process that makes it was not the task's runner
// before it (tasks.moved: a cancel, a continuation or an orphan's sweep
// by another process, or an append naming no runner), or when a process
// other than its maker watches the task (tasks.watchers, WatchTask); a
// task's create is not (no process can follow a task before it exists).
// The appends of a task's own execution, nearly all of them, go
// unnotified unless another process follows the task: the cost of
// notifications no longer grows with the number of processes. Both
// columns are read from the row the append updates, under its row lock,
// so a WatchTask and an append are ordered: an append that commits
// before the watch is in the log that the watcher reads once WatchTask
// returns, and one after it sees the watcher.

// notifyGather is the least time between two notifications of a Store:
// a notification sent at most this long after the previous one waits for
// the rest of it, gathering what is appended meanwhile. An append after a
// quiet moment is notified at once; under load, the other processes
// learn of appends within notifyGather plus the delivery.
const notifyGather = 2 * time.Millisecond

// maxPayload bounds a notification's payload (PostgreSQL's limit is 8000
// bytes by default).
const maxPayload = 7900

// notifier sends the notifications of one Store's appends.
type notifier struct {
	channel  string // the schema's channel (channelFor)
	instance string // this Store's id: its own notifications are ignored

	mu      sync.Mutex
	pending map[string]int64 // task id → last sequence number appended
	kick    chan struct{}    // cap 1: pending has something
	stop    chan struct{}    // closed by Close
	done    chan struct{}    // closed when the sender has ended
}

// channelFor is the notification channel of a schema: channels are per
// database, so each schema has its own name (an identifier of at most 63
// bytes, whatever the schema's name).
func channelFor(schema string) string {
	h := sha256.Sum256([]byte(schema))
	return "a2abridge_" + hex.EncodeToString(h[:12])
}

func newNotifier(schema string) *notifier {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return &notifier{channel: channelFor(schema), instance: hex.EncodeToString(b[:]), pending: map[string]int64{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// appended records that the task's log now ends at seq; seq 0 that the
// task changed without an append (its push configs).
func (n *notifier) appended(taskID string, seq int64) {
	n.mu.Lock()
	if cur, ok := n.pending[taskID]; !ok || seq > cur {
		n.pending[taskID] = seq
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// run sends the pending notifications until stop, then sends what is
// left (one attempt, bounded by a few seconds) and closes done.
func (n *notifier) run(s *Store) {
	defer close(n.done)
	delay := 100 * time.Millisecond
	var retry <-chan time.Time
	var last time.Time // when the last flush began
	for {
		select {
		case <-n.kick:
		case <-retry:
		case <-n.stop:
			n.flush(s, 2*time.Second)
			return
		}
		if wait := notifyGather - time.Since(last); wait > 0 {
			// Busy: what is appended meanwhile goes in the same
			// notification (each one is a transaction that every
			// notifying commit of the database waits behind).
			select {
			case <-time.After(wait):
			case <-n.stop:
				n.flush(s, 2*time.Second)
				return
			}
		}
		last = time.Now()
		if n.flush(s, 5*time.Second) {
			delay, retry = 100*time.Millisecond, nil
			continue
		}
		retry = time.After(delay)
		delay = min(2*delay, 5*time.Second)
	}
}

// flush sends what is pending; it reports false when a send failed, and
// then keeps pending what it did not send (a later append of a task
// keeps the higher sequence number).
func (n *notifier) flush(s *Store, timeout time.Duration) bool {
	n.mu.Lock()
	if len(n.pending) == 0 {
		n.mu.Unlock()
		return true
	}
	pending := n.pending
	n.pending = make(map[string]int64, len(pending))
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ok := true
	for _, p := range n.payloads(pending) {
		if ok {
			if _, err := s.pool.Exec(ctx, "SELECT pg_notify($1, $2)", n.channel, p.text); err == nil {
				continue
			}
			ok = false
		}
		n.mu.Lock()
		for _, id := range p.ids {
			if cur, ok := n.pending[id]; !ok || pending[id] > cur {
				n.pending[id] = pending[id]
			}
		}
		n.mu.Unlock()
	}
	return ok
}

// payload is one notification: its text, and the tasks it tells of.
type payload struct {
	text string
	ids  []string
}

// sendable reports whether a payload line can carry id as it is: UTF-8
// (PostgreSQL refuses a payload that is not), without a line break or a
// NUL, and short enough.
func (n *notifier) sendable(id string) bool {
	return id != "" && utf8.ValidString(id) && !strings.ContainsAny(id, "\n\r\x00") &&
		len(n.instance)+1+20+1+len(id) <= maxPayload
}

// payloads packs pending into as few payloads as fit maxPayload; tasks
// whose id no line can carry are told by one "R" line (a resync).
func (n *notifier) payloads(pending map[string]int64) []payload {
	var out []payload
	var b strings.Builder
	var ids []string
	add := func(line, id string) {
		if b.Len() > 0 && b.Len()+1+len(line) > maxPayload {
			out = append(out, payload{b.String(), ids})
			b.Reset()
			ids = nil
		}
		if b.Len() == 0 {
			b.WriteString(n.instance)
		}
		b.WriteByte('\n')
		b.WriteString(line)
		ids = append(ids, id)
	}
	var unsendable []string
	for id, seq := range pending {
		if !n.sendable(id) {
			unsendable = append(unsendable, id)
			continue
		}
		add(strconv.FormatInt(seq, 10)+" "+id, id)
	}
	if len(unsendable) > 0 {
		add("R", unsendable[0])
		ids = append(ids, unsendable[1:]...)
	}
	if b.Len() > 0 {
		out = append(out, payload{b.String(), ids})
	}
	return out
}

// parsePayload calls fn for each task of a payload not sent by instance
// self; malformed lines are skipped.
func parsePayload(payload, self string, fn func(store.Change)) {
	from, rest, _ := strings.Cut(payload, "\n")
	if from == self {
		return
	}
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if line == "R" {
			fn(store.Change{Resync: true})
			continue
		}
		seqText, id, ok := strings.Cut(line, " ")
		seq, err := strconv.ParseInt(seqText, 10, 64)
		if !ok || err != nil || id == "" {
			continue
		}
		fn(store.Change{TaskID: id, Seq: seq})
	}
}

// WatchTask implements store.Watcher for a Store opened with
// Options.Notify (without it, nothing is notified and WatchTask does
// nothing): once it returns nil, the appends
// that processes other than runner commit to the task are notified to
// the Watch of every Store on the schema (runner's among them), until
// the task is deleted. It writes the task's row only when runner does
// not watch it yet and the task is not terminal (a terminal task gets no
// appends); an unknown task is no error (there is nothing to follow). A
// process watches a task for the rest of the task's life: stopping costs
// a write per follower, and notifications a process does not await cost
// only their delivery. Errors: ErrClosed after Close, the database's
// error (wrapped), or ctx's.
func (s *Store) WatchTask(ctx context.Context, runner, taskID string) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	if runner == "" {
		return errors.New("postgres: watch task: empty runner")
	}
	if s.notify == nil {
		return nil // nothing is notified (Watch returns at once)
	}
	_, err := s.pool.Exec(ctx, `UPDATE tasks SET watchers = array_append(watchers, $2)
	WHERE id = $1 AND NOT ($2 = ANY (watchers)) AND state NOT IN ('completed', 'canceled', 'failed', 'rejected')`,
		bs(taskID), bs(runner))
	return wrap("watch task", err)
}

// Watch implements store.Watcher for a Store opened with Options.Notify
// (without it, Watch returns at once: nothing is notified). It listens on
// a connection of its own (made like the pool's), and reconnects after
// losing it, waiting 100 ms, then twice as long each time up to 5 s; it
// calls fn with Resync after every (re)connection, once it listens. A
// connection quiet for 30 s is pinged, so one that died silently is
// replaced within about 35 s.
func (s *Store) Watch(ctx context.Context, fn func(store.Change)) {
	if s.notify == nil || s.isShut.Load() {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.notify.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	delay := 100 * time.Millisecond
	for ctx.Err() == nil && !s.isShut.Load() {
		if s.listen(ctx, fn) {
			delay = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
			delay = min(2*delay, 5*time.Second)
		}
	}
}

// listen connects, listens and passes notifications on until the
// connection fails or ctx ends; listened reports whether it got as far as
// listening.
func (s *Store) listen(ctx context.Context, fn func(store.Change)) (listened bool) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return false
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.notify.channel}.Sanitize()); err != nil {
		return false
	}
	fn(store.Change{Resync: true})
	for {
		wctx, cancel := context.WithTimeout(ctx, listenPing)
		nt, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			if nt.Channel == s.notify.channel {
				parsePayload(nt.Payload, s.notify.instance, fn)
			}
		case ctx.Err() != nil || conn.IsClosed() || !errors.Is(err, context.DeadlineExceeded):
			return true
		default:
			// Quiet for listenPing: a connection that died without a
			// word (a peer gone, a network cut) would otherwise be
			// waited on until TCP gives up, minutes later.
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return true
			}
		}
	}
}

// listenPing is how long Watch waits for a notification before it checks
// that its connection is alive.
var listenPing = 30 * time.Second
