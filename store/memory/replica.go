package memory

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

// Replicas in one process: a Replica is a handle on a
// Store's data as one process of a replicated server sees a shared store,
// so that several engines on one memory Store behave as replicas on one
// PostgreSQL schema do: the same engine code, without a database. Each
// Replica reports to its own Watch the appends and push config changes
// made through the Store and its other Replicas (in process, at once),
// holds leases for its runners (store.Leaser) and claims push deliveries
// (store.PushClaimer), all kept in the Store. Which appends are reported
// follows store.Watcher's rule, as PostgreSQL's notifications do, so
// that a process which forgets to watch a task it follows fails here as
// it would there: an append by a runner other than the task's last one
// (or naming none), or one to a task that another runner watches; never
// a create.

// replicas is the state that a Store's Replicas share; mu is taken after
// a shard's lock, never before.
type replicas struct {
	watching atomic.Bool // a Watch runs: appends are reported
	next     atomic.Int64

	mu      sync.Mutex
	leases  map[string]time.Time // runner → until
	claims  map[string]string    // task id + "\x00" + config id → claiming runner
	watches map[*watch]struct{}
}

// watch is one running Watch: what it has not reported yet.
type watch struct {
	self    int64 // the Replica watching: its own changes are not reported
	mu      sync.Mutex
	pending map[string]int64 // task id → the highest sequence number reported (0: push configs)
	kick    chan struct{}    // cap 1
}

// Replica is a handle on a Store's data as one process of replicated
// servers sees a shared store (what postgres.Options.Shared gives a
// process): it implements store.Watcher, store.Leaser and
// store.PushClaimer besides store.Store, whose methods it shares with
// the Store. An engine per Replica makes replicas in one process (tests,
// demonstrations); the Store itself stays a store one process owns.
type Replica struct {
	*Store
	id       int64
	closed   chan struct{} // closed by Close
	closeOne sync.Once
}

var (
	_ store.Watcher     = (*Replica)(nil)
	_ store.Leaser      = (*Replica)(nil)
	_ store.PushClaimer = (*Replica)(nil)
)

// Replica returns a new handle on s's data (see Replica).
func (s *Store) Replica() *Replica {
	return &Replica{Store: s, id: s.rep.next.Add(1), closed: make(chan struct{})}
}

// Close ends the handle, as a process's end ends its connections to a
// shared database: its Watch returns, and its appends, push config
// changes and delivery cursors, leases and claims fail with
// store.ErrClosed from then on (its lease expires; the Store and its
// other handles go on). Reads, attachments and the agent registry still
// work. It returns nil.
func (r *Replica) Close() error {
	r.closeOne.Do(func() { close(r.closed) })
	return nil
}

// isClosed reports whether Close was called.
func (r *Replica) isClosed() bool {
	select {
	case <-r.closed:
		return true
	default:
		return false
	}
}

// Append implements store.Store (as Store.Append), reporting the append
// to the Watch of every other handle.
func (r *Replica) Append(ctx context.Context, a store.Append) error {
	if r.isClosed() {
		return store.ErrClosed
	}
	return r.appendFrom(ctx, r.id, a)
}

// SetPushConfig implements store.Store (as Store.SetPushConfig), reporting
// the change to the Watch of every other handle.
func (r *Replica) SetPushConfig(ctx context.Context, taskID string, c a2a.PushNotificationConfig, cursor int64) error {
	if r.isClosed() {
		return store.ErrClosed
	}
	return r.setPushConfigFrom(r.id, taskID, c, cursor)
}

// DeletePushConfig implements store.Store (as Store.DeletePushConfig),
// reporting the change to the Watch of every other handle.
func (r *Replica) DeletePushConfig(ctx context.Context, taskID, configID string) error {
	if r.isClosed() {
		return store.ErrClosed
	}
	return r.deletePushConfigFrom(r.id, taskID, configID)
}

// report tells every Watch but from's that the task's log ends at seq (0:
// its push configs changed).
func (s *Store) report(from int64, taskID string, seq int64) {
	s.rep.mu.Lock()
	defer s.rep.mu.Unlock()
	for w := range s.rep.watches {
		if w.self == from {
			continue
		}
		w.mu.Lock()
		if cur, ok := w.pending[taskID]; !ok || seq > cur {
			w.pending[taskID] = seq
		}
		w.mu.Unlock()
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// Watch implements store.Watcher: it calls fn with a Resync first, then
// for each task that another handle appended to (an append the rule of
// store.Watcher reports) or whose push configs it changed (several
// changes of one task reported meanwhile are one Change, with the highest
// sequence number), until ctx ends or the Replica is closed. Nothing is lost:
// what is reported waits for fn, whose calls come from this goroutine.
func (r *Replica) Watch(ctx context.Context, fn func(store.Change)) {
	w := &watch{self: r.id, pending: map[string]int64{}, kick: make(chan struct{}, 1)}
	r.rep.mu.Lock()
	if r.rep.watches == nil {
		r.rep.watches = map[*watch]struct{}{}
	}
	r.rep.watches[w] = struct{}{}
	r.rep.watching.Store(true)
	r.rep.mu.Unlock()
	defer func() {
		r.rep.mu.Lock()
		delete(r.rep.watches, w)
		r.rep.watching.Store(len(r.rep.watches) > 0)
		r.rep.mu.Unlock()
	}()
	fn(store.Change{Resync: true})
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.closed:
			return
		case <-w.kick:
		}
		w.mu.Lock()
		pending := w.pending
		w.pending = make(map[string]int64, len(pending))
		w.mu.Unlock()
		for id, seq := range pending {
			if ctx.Err() != nil {
				return
			}
			fn(store.Change{TaskID: id, Seq: seq})
		}
	}
}

// WatchTask implements store.Watcher: the task's appends by runners
// other than runner are reported from now on (until the task is
// terminal). An unknown task is no error; store.ErrClosed after Close.
func (r *Replica) WatchTask(ctx context.Context, runner, taskID string) error {
	if r.isClosed() {
		return store.ErrClosed
	}
	if runner == "" {
		return errors.New("memory: watch task: empty runner")
	}
	sh := r.shard(taskID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if t := sh.tasks[taskID]; t != nil && !t.terminalLocked() && !slices.Contains(t.watchers, runner) {
		t.watchers = append(t.watchers, runner)
	}
	return nil
}

// notifiedLocked reports whether an append by runner to the task is
// reported (store.Watcher): runner was not the task's runner, names none,
// or another runner watches the task. The caller holds the shard's lock.
func (t *task) notifiedLocked(runner string) bool {
	return runner == "" || t.runner != runner || slices.ContainsFunc(t.watchers, func(w string) bool { return w != runner })
}

// terminalLocked reports whether the task is in a terminal state; the
// caller holds the shard's lock.
func (t *task) terminalLocked() bool { return t.state.Terminal() }

// Renew implements store.Leaser, by this process's clock (the only one).
func (r *Replica) Renew(ctx context.Context, runner string, ttl time.Duration) error {
	if r.isClosed() {
		return store.ErrClosed
	}
	if runner == "" {
		return errors.New("memory: renew: empty runner")
	}
	r.rep.mu.Lock()
	defer r.rep.mu.Unlock()
	if r.rep.leases == nil {
		r.rep.leases = map[string]time.Time{}
	}
	r.rep.leases[runner] = time.Now().Add(max(ttl, time.Microsecond))
	return nil
}

// Release implements store.Leaser.
func (r *Replica) Release(ctx context.Context, runner string) error {
	if r.isClosed() {
		return store.ErrClosed
	}
	r.rep.mu.Lock()
	defer r.rep.mu.Unlock()
	delete(r.rep.leases, runner)
	return nil
}

// liveLocked reports whether runner holds a lease that has not expired;
// the caller holds rep.mu.
func (s *Store) liveLocked(runner string, now time.Time) bool {
	until, ok := s.rep.leases[runner]
	return runner != "" && ok && until.After(now)
}

// Orphans implements store.Leaser (store.ErrClosed after Close): the unfinished tasks whose runner
// (Append.Runner of the last append that named one) holds no live lease,
// oldest first, up to limit (<= 0: 256). It never fails.
func (r *Replica) Orphans(ctx context.Context, limit int) ([]store.TaskInfo, error) {
	if r.isClosed() {
		return nil, store.ErrClosed
	}
	if limit <= 0 {
		limit = 256
	}
	now := time.Now()
	out := []store.TaskInfo{}
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.RLock()
		r.rep.mu.Lock()
		for id := range sh.unfinished {
			if t := sh.tasks[id]; !r.liveLocked(t.runner, now) {
				out = append(out, own(t.info))
			}
		}
		r.rep.mu.Unlock()
		sh.mu.RUnlock()
	}
	slices.SortFunc(out, func(a, b store.TaskInfo) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return cmp.Compare(a.Task.ID, b.Task.ID)
	})
	return out[:min(limit, len(out))], nil
}

func claimKey(taskID, configID string) string { return taskID + "\x00" + configID }

// unclaimLocked drops the claim of a config that is deleted; the caller
// holds the task's shard lock.
func (s *Store) unclaimLocked(taskID, configID string) {
	s.rep.mu.Lock()
	if s.rep.claims != nil {
		delete(s.rep.claims, claimKey(taskID, configID))
	}
	s.rep.mu.Unlock()
}

// ClaimPush implements store.PushClaimer.
func (r *Replica) ClaimPush(ctx context.Context, runner, taskID, configID string) (bool, error) {
	if r.isClosed() {
		return false, store.ErrClosed
	}
	if runner == "" {
		return false, errors.New("memory: claim push: empty runner")
	}
	sh := r.shard(taskID)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	t := sh.tasks[taskID]
	if t == nil || !slices.ContainsFunc(t.push, func(p store.PushConfig) bool { return p.Config.ID == configID }) {
		return false, nil
	}
	r.rep.mu.Lock()
	defer r.rep.mu.Unlock()
	k := claimKey(taskID, configID)
	if by := r.rep.claims[k]; by != "" && by != runner && r.liveLocked(by, time.Now()) {
		return false, nil
	}
	if r.rep.claims == nil {
		r.rep.claims = map[string]string{}
	}
	r.rep.claims[k] = runner
	return true, nil
}

// MarkPushDelivered implements store.Store (as Store.MarkPushDelivered;
// store.ErrClosed after Close).
func (r *Replica) MarkPushDelivered(ctx context.Context, taskID, configID string, seq int64) error {
	if r.isClosed() {
		return store.ErrClosed
	}
	return r.Store.MarkPushDelivered(ctx, taskID, configID, seq)
}

// ReleasePush implements store.PushClaimer.
func (r *Replica) ReleasePush(ctx context.Context, runner, taskID, configID string) (bool, error) {
	if r.isClosed() {
		return false, store.ErrClosed
	}
	sh := r.shard(taskID)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	r.rep.mu.Lock()
	k := claimKey(taskID, configID)
	if r.rep.claims[k] == runner {
		delete(r.rep.claims, k)
	}
	r.rep.mu.Unlock()
	t := sh.tasks[taskID]
	if t == nil {
		return false, nil
	}
	for _, p := range t.push {
		if p.Config.ID == configID {
			return p.Delivered < t.info.Seq, nil
		}
	}
	return false, nil
}

// UnclaimedPush implements store.PushClaimer. It never fails.
func (r *Replica) UnclaimedPush(ctx context.Context, runner string, limit int) ([]store.PushConfig, error) {
	if r.isClosed() {
		return nil, store.ErrClosed
	}
	if limit <= 0 {
		limit = 256
	}
	now := time.Now()
	out := []store.PushConfig{}
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.RLock()
		r.rep.mu.Lock()
		for id, t := range sh.tasks {
			for _, p := range t.push {
				if p.Delivered >= t.info.Seq {
					continue
				}
				if by := r.rep.claims[claimKey(id, p.Config.ID)]; by == "" || by == runner || !r.liveLocked(by, now) {
					out = append(out, p)
				}
			}
		}
		r.rep.mu.Unlock()
		sh.mu.RUnlock()
	}
	slices.SortFunc(out, func(a, b store.PushConfig) int { return a.Created.Compare(b.Created) })
	return out[:min(limit, len(out))], nil
}
