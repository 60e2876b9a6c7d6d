package sqlite

import (
	"context"
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// msgFilter is a Bloom filter of the (agent, message id) keys of the
// messages table, so that MessageTask answers "no task" for a new message
// id, the usual case of every message/send, without a read. A key the
// filter may hold is looked up; a key it does not hold was never indexed
// by this Store, nor was it in the table when the Store was opened.
//
// The writer adds each key before it checks or inserts it (an insert that
// then fails or rolls back leaves a harmless false positive). The keys already in the
// table are added by a scan that runs in the background after Open; until
// it is done, every MessageTask reads. The filter is sized at Open for
// twice the table's rows, at least a million keys: with 16 bits per key and
// 4 probes about 0.24 % of new keys are looked up anyway; beyond that
// size, more are, until the next Open sizes it again. A key that another
// process sharing the database file indexed after Open is not in the
// filter until this Store tries to index it too: the table still refuses
// it then (ErrDuplicateMessage), and from then on MessageTask reads it.
type msgFilter struct {
	seed  maphash.Seed
	words []atomic.Uint64
	mask  uint64        // bits - 1 (a power of two)
	ready atomic.Bool   // the keys in the table at Open are in
	done  chan struct{} // closed when the scan has ended
}

const msgFilterProbes = 4

func newMsgFilter(rows int64) *msgFilter {
	n := max(2*rows, 1<<20) * 16                            // bits
	n = int64(1) << (64 - bits.LeadingZeros64(uint64(n-1))) // next power of two
	return &msgFilter{seed: maphash.MakeSeed(), words: make([]atomic.Uint64, n/64), mask: uint64(n - 1), done: make(chan struct{})}
}

func (f *msgFilter) hash(agent, id string) (h1, h2 uint64) {
	var h maphash.Hash
	h.SetSeed(f.seed)
	_, _ = h.WriteString(agent)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(id)
	h1 = h.Sum64()
	return h1, bits.RotateLeft64(h1, 32) | 1
}

// add records a key.
func (f *msgFilter) add(agent, id string) {
	h1, h2 := f.hash(agent, id)
	for i := range uint64(msgFilterProbes) {
		b := (h1 + i*h2) & f.mask
		f.words[b/64].Or(1 << (b % 64))
	}
}

// absent reports whether the key is certainly not indexed (false: it may be).
func (f *msgFilter) absent(agent, id string) bool {
	if !f.ready.Load() {
		return false
	}
	h1, h2 := f.hash(agent, id)
	for i := range uint64(msgFilterProbes) {
		b := (h1 + i*h2) & f.mask
		if f.words[b/64].Load()&(1<<(b%64)) == 0 {
			return true
		}
	}
	return false
}

// load adds the keys in the table (a read-only snapshot of it) and then
// marks the filter ready. A failed scan leaves it not ready: MessageTask
// then always reads.
func (f *msgFilter) load(ctx context.Context, s *Store) {
	defer close(f.done)
	rows, err := s.rdb.QueryContext(ctx, "SELECT agent, message_id FROM messages")
	if err != nil {
		return
	}
	defer rows.Close()
	var agent, id string
	for rows.Next() {
		if err := rows.Scan(&agent, &id); err != nil {
			return
		}
		f.add(agent, id)
	}
	if rows.Err() == nil {
		f.ready.Store(true)
	}
}
