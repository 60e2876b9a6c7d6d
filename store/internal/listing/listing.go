// Package listing holds what the stores share to implement
// store.Store.ListTasks: the sort key of a task's status timestamp and the
// keyset cursor, so that every store orders, filters and pages alike.
package listing

import (
	"encoding/base64"
	"encoding/binary"
	"hash/fnv"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/record"
	"github.com/a2abridge/a2abridge/store"
)

// NoStatusTime is the StatusKey of a task without a status timestamp: it
// sorts after every other (ListTasks orders newest first) and passes no
// StatusAfter filter.
const NoStatusTime = math.MinInt64

// StatusKey is the sort key of a status timestamp: its Unix nanoseconds,
// clamped to [NoStatusTime+1, MaxInt64] for times outside what int64
// nanoseconds hold (years 1678 to 2262); NoStatusTime for the zero time.
func StatusKey(t time.Time) int64 {
	if t.IsZero() {
		return NoStatusTime
	}
	switch sec := t.Unix(); {
	case sec < math.MinInt64/1_000_000_000:
		return NoStatusTime + 1
	case sec > math.MaxInt64/1_000_000_000-1:
		return math.MaxInt64
	}
	return max(t.UnixNano(), NoStatusTime+1)
}

// Key is a task's position in ListTasks order: StatusKey descending, then
// ID descending.
type Key struct {
	Status int64
	ID     string
}

// Before reports whether k comes before o in ListTasks order.
func (k Key) Before(o Key) bool {
	if k.Status != o.Status {
		return k.Status > o.Status
	}
	return k.ID > o.ID
}

// Match reports whether a task of the query's agent and owner (or any
// owner, q.AllOwners), in context
// contextID and state state with status key status, passes q's other
// filters (ContextID, State, StatusAfter).
func Match(q *store.TaskQuery, contextID string, state a2a.TaskState, status int64) bool {
	return (q.ContextID == "" || contextID == q.ContextID) &&
		(q.State == a2a.TaskStateUnspecified || state == q.State) &&
		(q.StatusAfter.IsZero() || status >= StatusKey(q.StatusAfter))
}

// Cursor format: base64url (no padding) of a version byte (1), the
// 8-byte FNV-1a hash of the query's filters, the status key as a zig-zag
// varint, and the task id.
const cursorVersion = 1

// filters hashes what a cursor must be used with.
func filters(q *store.TaskQuery) uint64 {
	h := fnv.New64a()
	var b [8]byte
	state := ""
	if q.State != a2a.TaskStateUnspecified {
		state = record.StateName(q.State)
	}
	for _, s := range []string{q.Agent, q.Owner, q.ContextID, state} {
		binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
		h.Write(b[:])
		h.Write([]byte(s))
	}
	after := int64(0)
	if !q.StatusAfter.IsZero() {
		after = StatusKey(q.StatusAfter)
	}
	binary.LittleEndian.PutUint64(b[:], uint64(after))
	h.Write(b[:])
	if q.AllOwners {
		h.Write([]byte{1})
	}
	return h.Sum64()
}

// Cursor returns the cursor of the page of q that starts after k.
func Cursor(q *store.TaskQuery, k Key) string {
	b := make([]byte, 0, 1+8+binary.MaxVarintLen64+len(k.ID))
	b = append(b, cursorVersion)
	b = binary.LittleEndian.AppendUint64(b, filters(q))
	b = binary.AppendVarint(b, k.Status)
	b = append(b, k.ID...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// After decodes q.Cursor: the key the page starts after, and true; or
// false when q.Cursor is "" (the first page). It returns
// store.ErrInvalidCursor for a cursor that Cursor did not make for a query
// with q's filters.
func After(q *store.TaskQuery) (Key, bool, error) {
	if q.Cursor == "" {
		return Key{}, false, nil
	}
	if len(q.Cursor) > 4096 || strings.ContainsAny(q.Cursor, "=") {
		return Key{}, false, store.ErrInvalidCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
	if err != nil || len(b) < 10 || b[0] != cursorVersion || binary.LittleEndian.Uint64(b[1:]) != filters(q) {
		return Key{}, false, store.ErrInvalidCursor
	}
	status, n := binary.Varint(b[9:])
	if n <= 0 {
		return Key{}, false, store.ErrInvalidCursor
	}
	id := string(b[9+n:])
	if !utf8.ValidString(id) || Cursor(q, Key{status, id}) != q.Cursor {
		return Key{}, false, store.ErrInvalidCursor
	}
	return Key{status, id}, true, nil
}
