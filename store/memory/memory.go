// Package memory is an in-memory implementation of store.Store, for tests
// and for running a2abridge without persistence (--memory). Nothing
// survives the process; Append is "durable" as soon as it returns. A
// Store's Replicas are handles on its data as the processes of replicated
// servers see a shared store (store.Watcher, store.Leaser,
// store.PushClaimer, in process): several engines on one Store.
package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/internal/listing"
)

// Store is an in-memory store.Store. The zero value is not usable; call New.
// All methods are safe for concurrent use.
//
// Values are shared between the store and its callers rather than deeply
// copied. Events returns a fresh slice, but the Events in it are the ones
// passed to Append and must not be modified (except for a finished task,
// which is kept encoded and decoded for each read: see pack.go). A Task
// returned by Task or Unfinished has its own History and Artifacts arrays
// (their elements may be replaced, modified or appended to); everything
// below them (Parts, maps, the Status.Message pointer) is shared and must
// not be modified in place, although appending to a Parts slice is safe
// because those copies keep them at len == cap. Append keeps the snapshot
// and records it is given without copying them (store.Append: the caller
// gives them up).
type Store struct {
	seed   maphash.Seed
	shards [nShards]shard // tasks, spread by id: appends to different tasks rarely contend

	// msgMu guards messages; it is taken after a shard's lock, never before.
	msgMu    sync.RWMutex
	messages map[string]string // agent + "\x00" + messageID → task id

	// finMu guards fin (retention.go); it is taken after a shard's lock
	// (and msgMu), never before either.
	finMu       sync.Mutex
	fin         finished
	maxFinished int64 // Options.MaxFinishedBytes resolved; < 0: no cap

	agentMu sync.Mutex
	agents  map[string]store.AgentSpec // the agent registry (registry.go)

	// attMu guards the attachments (attachments.go); it is taken after a
	// shard's lock, never before.
	attMu           sync.Mutex
	attachments     map[string]store.Attachment // by id
	taskAttachments map[string][]string         // task id → attachment ids

	// rep is what the Store's Replicas share (replica.go).
	rep replicas
}

const nShards = 32

type shard struct {
	mu         sync.RWMutex
	tasks      map[string]*task
	unfinished map[string]struct{} // ids of tasks whose state is submitted, working or unknown
}

func (s *Store) shard(taskID string) *shard {
	return &s.shards[maphash.String(s.seed, taskID)%nShards]
}

type task struct {
	info    store.TaskInfo // info.Task is zero while packed
	records []store.Record // records[i].Seq == i+1; nil while packed
	packed  []byte         // a finished task's snapshot and records (pack.go), or nil
	push    []store.PushConfig
	msgKeys []string // the message index keys of the task (deleted with it)
	runner  string   // Append.Runner of the last append that named one (replica.go)
	// watchers are the runners that follow the task (Replica.WatchTask).
	watchers []string
	// What ListTasks filters and orders by, from the latest snapshot
	// (kept apart from info.Task, which is zero while packed).
	contextID string
	state     a2a.TaskState
	status    int64 // listing.StatusKey of the snapshot's status timestamp
	// finished is set once the task is in Store.fin, holding size bytes
	// (guarded by finMu).
	finished bool
	size     int64
}

// own returns info with History and Artifacts arrays of the caller's own,
// whose Parts slices are clipped so that appending to them copies.
func own(info store.TaskInfo) store.TaskInfo {
	info.Task.History = slices.Clone(info.Task.History)
	for i := range info.Task.History {
		info.Task.History[i].Parts = slices.Clip(info.Task.History[i].Parts)
	}
	info.Task.Artifacts = slices.Clone(info.Task.Artifacts)
	for i := range info.Task.Artifacts {
		info.Task.Artifacts[i].Parts = slices.Clip(info.Task.Artifacts[i].Parts)
	}
	return info
}

// New returns an empty Store with the default Options.
func New() *Store { return NewWithOptions(Options{}) }

// NewWithOptions returns an empty Store tuned by o.
func NewWithOptions(o Options) *Store {
	s := &Store{seed: maphash.MakeSeed(), messages: make(map[string]string), maxFinished: o.MaxFinishedBytes}
	if s.maxFinished == 0 {
		s.maxFinished = DefaultMaxFinishedBytes
	}
	for i := range s.shards {
		s.shards[i] = shard{tasks: make(map[string]*task), unfinished: make(map[string]struct{})}
	}
	return s
}

var _ store.Store = (*Store)(nil)

func msgKey(agent, messageID string) string { return agent + "\x00" + messageID }

func unfinished(s a2a.TaskState) bool {
	return s == a2a.TaskStateSubmitted || s == a2a.TaskStateWorking || s == a2a.TaskStateUnspecified
}

// Append implements store.Store. It returns store.ErrConflict,
// store.ErrNotFound or store.ErrDuplicateMessage as documented there, and a
// plain error for a malformed append: empty TaskID, negative After, no
// Agent on create, no Records, a Record without Event or whose non-zero
// Seq is not its position (After+1, After+2, …), Snapshot.ID different
// from TaskID, an empty message id, or an Agent that is not the task's.
// Records with Seq 0 are numbered by the store; records with a zero Time
// get the time of the append. On any error nothing changes. ctx is only
// checked before the append starts.
func (s *Store) Append(ctx context.Context, a store.Append) error {
	return s.appendFrom(ctx, 0, a)
}

// appendFrom is Append through handle from (0: the Store, else a
// Replica's id), which a Watch of another handle reports.
func (s *Store) appendFrom(ctx context.Context, from int64, a store.Append) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := a.Validate(); err != nil {
		return err
	}
	fin, finished, notify, err := s.append(&a)
	if finished {
		s.finish(fin)
	}
	if notify {
		s.report(from, a.TaskID, a.After+int64(len(a.Records)))
	}
	return err
}

// append is Append under the task's shard lock; it returns the entry of
// Store.fin to queue when the task just finished, and whether the append
// is to be reported to the Watches of other handles (replica.go).
func (s *Store) append(a *store.Append) (fin finishedTask, finished, notify bool, err error) {
	now := time.Now()
	sh := s.shard(a.TaskID)
	sh.mu.Lock()
	defer sh.mu.Unlock()

	t := sh.tasks[a.TaskID]
	agent := a.Agent
	switch {
	case a.After == 0 && t != nil:
		return fin, false, false, store.ErrConflict
	case a.After > 0 && t == nil:
		return fin, false, false, store.ErrNotFound
	case t != nil && t.info.Seq != a.After:
		return fin, false, false, store.ErrConflict
	case t != nil && agent != "" && agent != t.info.Agent:
		return fin, false, false, fmt.Errorf("memory: append: task %q belongs to agent %q, not %q", a.TaskID, t.info.Agent, agent)
	case t != nil:
		agent = t.info.Agent
	}
	if len(a.MessageIDs) > 0 {
		s.msgMu.Lock()
		defer s.msgMu.Unlock()
	}
	var keys []string
	for _, id := range a.MessageIDs {
		k := msgKey(agent, id)
		if _, ok := s.messages[k]; ok {
			return fin, false, false, store.ErrDuplicateMessage
		}
		keys = append(keys, k)
	}

	if t != nil && t.packed != nil {
		if err := t.unpack(); err != nil {
			return fin, false, false, err
		}
	}

	// From here on nothing can fail.
	notify = t != nil && s.rep.watching.Load() && t.notifiedLocked(a.Runner)
	if t == nil {
		// Room for a short task's whole log (a create, an artifact, a
		// final status) in one allocation.
		t = &task{info: store.TaskInfo{Agent: agent, Owner: a.Owner, Created: now}, records: make([]store.Record, 0, max(4, len(a.Records)))}
		sh.tasks[a.TaskID] = t
	}
	for i, r := range a.Records {
		r.Seq = a.After + 1 + int64(i)
		if r.Time.IsZero() {
			r.Time = now
		}
		t.records = append(t.records, r)
	}
	snap := a.Snapshot
	t.info.Task = snap
	t.contextID, t.state, t.status = snap.ContextID, snap.Status.State, listing.StatusKey(snap.Status.Timestamp)
	t.info.Seq = a.After + int64(len(a.Records))
	t.info.Updated = now
	if unfinished(snap.Status.State) {
		sh.unfinished[a.TaskID] = struct{}{}
	} else {
		delete(sh.unfinished, a.TaskID)
	}
	for _, k := range keys {
		s.messages[k] = a.TaskID
	}
	t.msgKeys = append(t.msgKeys, keys...)
	if a.Runner != "" {
		t.runner = a.Runner
	}
	if a.Trace != "" {
		t.info.Trace = a.Trace
	}
	if snap.Status.State.Terminal() {
		if b, ok := pack(&t.info.Task, t.records); ok {
			t.info.Task, t.records, t.packed = a2a.Task{}, nil, b
		}
		fin, finished = s.finishedLocked(a.TaskID, t, now)
	} else if t.finished {
		// Appended to out of a terminal state (the store does not check
		// transitions): no longer finished, its queue entry is dropped.
		s.finMu.Lock()
		s.fin.bytes -= t.size
		s.finMu.Unlock()
		t.finished, t.size = false, 0
	}
	return fin, finished, notify, nil
}

// Task implements store.Store: it returns the task's snapshot, or
// store.ErrNotFound. What the returned Task shares with the store is
// described at Store.
func (s *Store) Task(ctx context.Context, taskID string) (store.TaskInfo, error) {
	sh := s.shard(taskID)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	t := sh.tasks[taskID]
	if t == nil {
		return store.TaskInfo{}, store.ErrNotFound
	}
	return t.snapshot()
}

// Events implements store.Store: up to limit records with Seq > after, in
// order (limit <= 0: all of them), or store.ErrNotFound. The slice is the
// caller's; the records' Events are shared and must not be modified.
func (s *Store) Events(ctx context.Context, taskID string, after int64, limit int) ([]store.Record, error) {
	sh := s.shard(taskID)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	t := sh.tasks[taskID]
	if t == nil {
		return nil, store.ErrNotFound
	}
	if t.packed != nil {
		return unpackRecords(t.packed, max(after, 0), limit, 0)
	}
	n := int64(len(t.records))
	after = min(max(after, 0), n)
	end := n
	if limit > 0 && int64(limit) < n-after {
		end = after + int64(limit)
	}
	return slices.Clone(t.records[after:end]), nil
}

// MessageTask implements store.Store: the id of the task that indexed
// (agent, messageID), or "" when there is none. It never fails.
func (s *Store) MessageTask(ctx context.Context, agent, messageID string) (string, error) {
	s.msgMu.RLock()
	defer s.msgMu.RUnlock()
	return s.messages[msgKey(agent, messageID)], nil
}

// Unfinished implements store.Store: every task whose snapshot state is
// submitted, working or unknown, ordered by creation time then id. It never
// fails.
func (s *Store) Unfinished(ctx context.Context) ([]store.TaskInfo, error) {
	out := []store.TaskInfo{}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for id := range sh.unfinished {
			out = append(out, own(sh.tasks[id].info))
		}
		sh.mu.RUnlock()
	}
	slices.SortFunc(out, func(a, b store.TaskInfo) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return cmp.Compare(a.Task.ID, b.Task.ID)
	})
	return out, nil
}

// ListTasks implements store.Store. It looks at every task (this store
// keeps no index), in O(tasks × log page size) time, and copies only the
// page's snapshots, as Task does. It returns store.ErrInvalidCursor as
// documented there, and no other error.
func (s *Store) ListTasks(ctx context.Context, q store.TaskQuery) (store.TaskPage, error) {
	after, paged, err := listing.After(&q)
	if err != nil {
		return store.TaskPage{}, err
	}
	limit := q.PageLimit()
	type hit struct {
		key listing.Key
		t   *task
	}
	order := func(a, b hit) int {
		if a.key.Before(b.key) {
			return -1
		}
		if b.key.Before(a.key) {
			return 1
		}
		return 0
	}
	// hits keeps the first tasks in order after the cursor: at most
	// 2×limit, cut back to limit+1 whenever it fills up.
	var hits []hit
	total := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for id, t := range sh.tasks {
			if t.info.Agent != q.Agent || !q.AllOwners && t.info.Owner != q.Owner || !listing.Match(&q, t.contextID, t.state, t.status) {
				continue
			}
			total++
			k := listing.Key{Status: t.status, ID: id}
			if paged && !after.Before(k) {
				continue
			}
			hits = append(hits, hit{k, t})
			if len(hits) >= 2*(limit+1) {
				slices.SortFunc(hits, order)
				clear(hits[limit+1:])
				hits = hits[:limit+1]
			}
		}
		sh.mu.RUnlock()
	}
	slices.SortFunc(hits, order)
	page := store.TaskPage{Total: total, Tasks: make([]store.TaskInfo, 0, min(limit, len(hits)))}
	for i, h := range hits {
		if i == limit {
			page.Next = listing.Cursor(&q, hits[i-1].key)
			break
		}
		sh := s.shard(h.key.ID)
		sh.mu.RLock()
		var info store.TaskInfo
		if sh.tasks[h.key.ID] == h.t { // not deleted meanwhile
			info, err = h.t.snapshot()
		}
		sh.mu.RUnlock()
		if err != nil {
			return store.TaskPage{}, err
		}
		if info.Task.ID != "" {
			page.Tasks = append(page.Tasks, info)
		}
	}
	return page, nil
}

// SetPushConfig implements store.Store.
func (s *Store) SetPushConfig(ctx context.Context, taskID string, c a2a.PushNotificationConfig, cursor int64) error {
	return s.setPushConfigFrom(0, taskID, c, cursor)
}

func (s *Store) setPushConfigFrom(from int64, taskID string, c a2a.PushNotificationConfig, cursor int64) error {
	if c.ID == "" {
		return errors.New("memory: push config without id")
	}
	return s.changePush(from, taskID, func(t *task) error {
		for i := range t.push {
			if t.push[i].Config.ID == c.ID {
				t.push[i].Config = c
				return nil
			}
		}
		t.push = append(t.push, store.PushConfig{TaskID: taskID, Config: c, Delivered: cursor, Created: time.Now()})
		return nil
	})
}

// changePush runs change on task taskID under its shard's lock
// (store.ErrNotFound for an unknown task) and, when change succeeds,
// reports that the task's push configs changed to every Watch but from's
// (report; from is 0 for this Store's own callers).
func (s *Store) changePush(from int64, taskID string, change func(t *task) error) error {
	err := func() error {
		sh := s.shard(taskID)
		sh.mu.Lock()
		defer sh.mu.Unlock()
		t := sh.tasks[taskID]
		if t == nil {
			return store.ErrNotFound
		}
		return change(t)
	}()
	if err == nil && s.rep.watching.Load() {
		s.report(from, taskID, 0)
	}
	return err
}

// PushConfigs implements store.Store.
func (s *Store) PushConfigs(ctx context.Context, taskID string) ([]store.PushConfig, error) {
	sh := s.shard(taskID)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if t := sh.tasks[taskID]; t != nil {
		return slices.Clone(t.push), nil
	}
	return []store.PushConfig{}, nil
}

// DeletePushConfig implements store.Store.
func (s *Store) DeletePushConfig(ctx context.Context, taskID, configID string) error {
	return s.deletePushConfigFrom(0, taskID, configID)
}

func (s *Store) deletePushConfigFrom(from int64, taskID, configID string) error {
	return s.changePush(from, taskID, func(t *task) error {
		for i := range t.push {
			if t.push[i].Config.ID == configID {
				t.push = slices.Delete(t.push, i, i+1)
				s.unclaimLocked(taskID, configID)
				return nil
			}
		}
		return store.ErrNotFound
	})
}

// MarkPushDelivered implements store.Store.
func (s *Store) MarkPushDelivered(ctx context.Context, taskID, configID string, seq int64) error {
	sh := s.shard(taskID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if t := sh.tasks[taskID]; t != nil {
		for i := range t.push {
			if t.push[i].Config.ID == configID && t.push[i].Delivered < seq {
				t.push[i].Delivered = seq
			}
		}
	}
	return nil
}

// PendingPush implements store.Store.
func (s *Store) PendingPush(ctx context.Context) ([]store.PushConfig, error) {
	var out []store.PushConfig
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for _, t := range sh.tasks {
			for _, p := range t.push {
				if p.Delivered < t.info.Seq {
					out = append(out, p)
				}
			}
		}
		sh.mu.RUnlock()
	}
	slices.SortFunc(out, func(a, b store.PushConfig) int { return a.Created.Compare(b.Created) })
	return out, nil
}

// Close implements store.Store. It does nothing: the store stays usable and
// its contents are dropped when it is no longer referenced.
func (s *Store) Close() error { return nil }

// CountTasks implements store.TaskCounter: the tasks of each agent in
// each state, counted over every task (O(tasks), under each shard's read
// lock in turn). It never fails.
func (s *Store) CountTasks(ctx context.Context) ([]store.TaskCount, error) {
	type key struct {
		agent string
		state a2a.TaskState
	}
	n := map[key]int64{}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for _, t := range sh.tasks {
			n[key{t.info.Agent, t.state}]++
		}
		sh.mu.RUnlock()
	}
	out := make([]store.TaskCount, 0, len(n))
	for k, v := range n {
		out = append(out, store.TaskCount{Agent: k.agent, State: k.state, Tasks: v})
	}
	return out, nil
}

var _ store.TaskCounter = (*Store)(nil)
