// Package msgfilter is the Bloom filter of indexed message ids that the
// stores one process owns (SQLite; PostgreSQL opened Exclusive) consult
// before they read the messages table.
package msgfilter

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// Filter is a Bloom filter of the (agent, message id) keys of a store's
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
type Filter struct {
	seed     maphash.Seed
	words    []atomic.Uint64
	mask     uint64        // bits - 1 (a power of two)
	ready    atomic.Bool   // the keys in the table at Open are in
	disabled atomic.Bool   // Disable: never ready again
	done     chan struct{} // closed when the scan has ended
}

const probes = 4

// New returns a filter sized for a table of rows keys, not ready: Absent
// answers false (look it up) until Load has added the table's keys.
func New(rows int64) *Filter {
	n := max(2*rows, 1<<20) * 16                            // bits
	n = int64(1) << (64 - bits.LeadingZeros64(uint64(n-1))) // next power of two
	return &Filter{seed: maphash.MakeSeed(), words: make([]atomic.Uint64, n/64), mask: uint64(n - 1), done: make(chan struct{})}
}

func (f *Filter) hash(agent, id string) (h1, h2 uint64) {
	var h maphash.Hash
	h.SetSeed(f.seed)
	_, _ = h.WriteString(agent)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(id)
	h1 = h.Sum64()
	return h1, bits.RotateLeft64(h1, 32) | 1
}

// Add records a key; safe for concurrent use.
func (f *Filter) Add(agent, id string) {
	h1, h2 := f.hash(agent, id)
	for i := range uint64(probes) {
		b := (h1 + i*h2) & f.mask
		f.words[b/64].Or(1 << (b % 64))
	}
}

// Absent reports whether the key is certainly not indexed (false: it may
// be); safe for concurrent use.
func (f *Filter) Absent(agent, id string) bool {
	if !f.Ready() {
		return false
	}
	h1, h2 := f.hash(agent, id)
	for i := range uint64(probes) {
		b := (h1 + i*h2) & f.mask
		if f.words[b/64].Load()&(1<<(b%64)) == 0 {
			return true
		}
	}
	return false
}

// Load adds the keys that scan yields (the table's, from a read-only
// snapshot of it) and then marks the filter ready, unless scan returns an
// error: the filter then stays not ready (every key is looked up). Done
// is closed when Load returns.
func (f *Filter) Load(scan func(add func(agent, id string)) error) {
	defer close(f.done)
	if scan(f.Add) == nil {
		f.ready.Store(true)
	}
}

// Disable makes the filter not ready for good: every key is looked up
// (a store that indexed a key it could not add).
func (f *Filter) Disable() { f.ready.Store(false); f.disabled.Store(true) }

// Ready reports whether Absent can answer without a read.
func (f *Filter) Ready() bool { return f.ready.Load() && !f.disabled.Load() }

// Done is closed once Load has returned.
func (f *Filter) Done() <-chan struct{} { return f.done }
