package postgres

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"

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
// one pg_notify, so under load many appends share one notification. The
// price: a process that dies between an append's commit and its
// notification leaves the other processes to learn of that append later
// (at the next append to the task, or their next resync); its running
// tasks are failed by another process anyway (issue 15 §3), and that
// append is notified.
//
// The payload is text, at most maxPayload bytes: the sending store's
// instance id on the first line, then one line per task, "SEQ TASKID"
// (the task's last sequence number when the notification was sent).

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

// appended records that the task's log now ends at seq.
func (n *notifier) appended(taskID string, seq int64) {
	n.mu.Lock()
	if seq > n.pending[taskID] {
		n.pending[taskID] = seq
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// run sends the pending notifications until stop, then sends what is
// left (bounded by a few seconds) and closes done.
func (n *notifier) run(s *Store) {
	defer close(n.done)
	for {
		select {
		case <-n.kick:
			n.flush(s, 5*time.Second)
		case <-n.stop:
			n.flush(s, 2*time.Second)
			return
		}
	}
}

// flush sends what is pending. A failed send is dropped: a listener that
// missed it learns of the task's appends at the next notification or
// resync (store.Watcher documents at-most-once delivery).
func (n *notifier) flush(s *Store, timeout time.Duration) {
	n.mu.Lock()
	if len(n.pending) == 0 {
		n.mu.Unlock()
		return
	}
	pending := n.pending
	n.pending = make(map[string]int64, len(pending))
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, p := range n.payloads(pending) {
		if _, err := s.pool.Exec(ctx, "SELECT pg_notify($1, $2)", n.channel, p); err != nil {
			return
		}
	}
}

// payloads packs pending into as few payloads as fit maxPayload.
func (n *notifier) payloads(pending map[string]int64) []string {
	var out []string
	var b strings.Builder
	for id, seq := range pending {
		line := strconv.FormatInt(seq, 10) + " " + id
		if len(n.instance)+1+len(line) > maxPayload {
			continue // an id no store accepts (ids are bounded far below)
		}
		if b.Len() > 0 && b.Len()+1+len(line) > maxPayload {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() == 0 {
			b.WriteString(n.instance)
		}
		b.WriteByte('\n')
		b.WriteString(line)
	}
	if b.Len() > 0 {
		out = append(out, b.String())
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
		seqText, id, ok := strings.Cut(line, " ")
		seq, err := strconv.ParseInt(seqText, 10, 64)
		if !ok || err != nil || id == "" {
			continue
		}
		fn(store.Change{TaskID: id, Seq: seq})
	}
}

// Watch implements store.Watcher for a Store opened with Options.Notify
// (without it, Watch returns at once: nothing is notified). It listens on
// a connection of its own (made like the pool's), and reconnects after
// losing it, waiting 100 ms, then twice as long each time up to 5 s; it
// calls fn with Resync after every (re)connection, once it listens.
func (s *Store) Watch(ctx context.Context, fn func(store.Change)) {
	if s.notify == nil {
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
	for ctx.Err() == nil {
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
		nt, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		if nt.Channel == s.notify.channel {
			parsePayload(nt.Payload, s.notify.instance, fn)
		}
	}
}
