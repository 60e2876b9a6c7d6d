package memory

import (
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/record"
	"github.com/a2abridge/a2abridge/store"
)

// A task that reached a terminal state is packed: its snapshot and records
// are kept as one byte slice of their records (internal/record, the
// format the SQLite store persists) instead of as Go values. A finished
// task changes rarely and is read rarely, while a server keeps many of
// them: packed, it holds no pointers, so the garbage collector does not
// scan it. (Measured with 100,000 echo tasks sent to `a2abridge serve
// --memory` when tasks were packed as A2A 0.3 JSON: GC CPU 1.8 s
// unpacked, 0.58 s packed; about the same memory, 1.5 KB of JSON per task
// against as much in Go values. Records are smaller than that JSON.)
// Reading a packed task decodes it, as the SQLite store does on every
// read; like there, what comes back is the record round trip of what was
// appended (values in the JSON data model, numbers as json.Number with
// their text, parts as values, times in UTC).
//
// Layout: the snapshot as a little-endian uint32 length and its record;
// then, for each record in order (its Seq is its position), its Time as a
// little-endian int64 of Unix nanoseconds, and its event as a length and
// record like the snapshot.

var packBuf = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// maxPacked is the largest packed task. A task with more (file parts,
// long texts) stays as Go values: its bulk is byte slices and strings,
// which the collector does not scan anyway, and which the values share
// between the snapshot and the records where the packed form would hold
// them twice.
const maxPacked = 16 << 10

// pack encodes a finished task, or reports false when one of its events
// breaks the invariants readers rely on (record.CheckEvent) or cannot be
// encoded (a string that is not UTF-8, a value that is not JSON), or when
// it would take more than maxPacked bytes: such a task stays unpacked.
func pack(snap *a2a.Task, records []store.Record) ([]byte, bool) {
	if record.CheckEvent(snap) != nil {
		return nil, false
	}
	for _, r := range records {
		if record.CheckEvent(r.Event) != nil {
			return nil, false
		}
	}
	bp := packBuf.Get().(*[]byte)
	defer packBuf.Put(bp)
	b, ok := appendRecord((*bp)[:0], snap)
	for _, r := range records {
		if !ok || len(b) > maxPacked {
			ok = false
			break
		}
		b = binary.LittleEndian.AppendUint64(b, uint64(r.Time.UnixNano()))
		b, ok = appendRecord(b, r.Event)
	}
	if cap(b) <= 64<<10 {
		*bp = b
	}
	if !ok || len(b) > maxPacked {
		return nil, false
	}
	return slices.Clone(b), true
}

// appendRecord appends e's length-prefixed record.
func appendRecord(b []byte, e a2a.Event) ([]byte, bool) {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	b, err := record.AppendEvent(b, e)
	if err != nil || len(b)-at-4 > 1<<31 {
		return b[:at], false
	}
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b, true
}

var errCorrupt = errors.New("memory: packed task does not decode")

// next splits the length-prefixed record at the start of b from the rest.
func next(b []byte) (js, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, errCorrupt
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(len(b)-4) < uint64(n) {
		return nil, nil, errCorrupt
	}
	return b[4 : 4+n], b[4+n:], nil
}

// unpackTask decodes the snapshot of a packed task.
func unpackTask(b []byte) (a2a.Task, error) {
	rec, _, err := next(b)
	if err != nil {
		return a2a.Task{}, err
	}
	t, err := record.UnmarshalTask(rec)
	if err != nil {
		return a2a.Task{}, errCorrupt
	}
	return t, nil
}

// unpackRecords decodes the records of a packed task with Seq > after, at
// most limit of them (limit <= 0: all), into a slice with room for extra
// more.
func unpackRecords(b []byte, after int64, limit, extra int) ([]store.Record, error) {
	_, b, err := next(b)
	if err != nil {
		return nil, err
	}
	var out []store.Record
	for seq := int64(1); len(b) > 0 && (limit <= 0 || len(out) < limit); seq++ {
		if len(b) < 8 {
			return nil, errCorrupt
		}
		at := time.Unix(0, int64(binary.LittleEndian.Uint64(b))).UTC()
		rec, rest, err := next(b[8:])
		if err != nil {
			return nil, err
		}
		b = rest
		if seq <= after {
			continue
		}
		e, err := record.UnmarshalEvent(rec)
		if err != nil {
			return nil, errCorrupt
		}
		if out == nil {
			out = make([]store.Record, 0, 4+extra)
		}
		out = append(out, store.Record{Seq: seq, Time: at, Event: e})
	}
	if out == nil {
		out = []store.Record{}
	}
	return out, nil
}

// unpack turns a packed task back into values, before an append changes it.
func (t *task) unpack() error {
	snap, err := unpackTask(t.packed)
	if err != nil {
		return err
	}
	recs, err := unpackRecords(t.packed, 0, 0, 1)
	if err != nil {
		return err
	}
	t.info.Task, t.records, t.packed = snap, recs, nil
	return nil
}

// snapshot returns the task's info with a snapshot of the caller's own.
func (t *task) snapshot() (store.TaskInfo, error) {
	if t.packed == nil {
		return own(t.info), nil
	}
	info := t.info
	var err error
	info.Task, err = unpackTask(t.packed)
	return info, err
}
