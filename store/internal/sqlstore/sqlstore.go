// Package sqlstore holds what the SQL stores (store/sqlite and
// store/postgres) share beyond their SQL and their drivers: the error
// wrapping that keeps driver types out of their errors, the bounds and
// checkpoint rule of what they store, the conversion of the rows they
// read into the domain types (records, tasks folded from their
// checkpoint, agent specs, task counts, push configs, attachments), and
// the choice of what one DeleteFinished call deletes.
//
// It reads rows through Rows and Row, which database/sql's *sql.Rows and
// *sql.Row and pgx's pgx.Rows and pgx.Row all satisfy; the columns it
// scans are the same in both schemas, strings as []byte (the PostgreSQL
// schema keeps them as bytea, SQLite converts its TEXT).
package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/record"
)

// Rows is a result set as the readers here use it.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Row is one row of a result as the readers here use it: Scan returns
// an error that is sql.ErrNoRows (errors.Is) when there is no row, as
// both database/sql and pgx (whose ErrNoRows wraps it) do.
type Row interface {
	Scan(dest ...any) error
}

// Name is the package name of a SQL store ("sqlite", "postgres"), which
// prefixes its errors.
type Name string

// Wrap prefixes err with the store's name and op; nil stays nil. Context
// errors stay inspectable with errors.Is; driver errors are flattened to
// text so that no driver type escapes the store.
func (n Name) Wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %s: %w", n, op, err)
	}
	return fmt.Errorf("%s: %s: %v", n, op, err)
}

// Times are stored as int64 Unix nanoseconds, which covers the years
// between MinTime and MaxTime.
var (
	MinTime = time.Unix(0, -1<<63).Add(time.Second)
	MaxTime = time.Unix(0, 1<<63-1).Add(-time.Second)
)

// CheckRecordTime returns an error for the time t of record i of an
// append when it is outside [MinTime, MaxTime]; the zero time (the store
// sets it) passes.
func (n Name) CheckRecordTime(i int, t time.Time) error {
	if !t.IsZero() && (t.Before(MinTime) || t.After(MaxTime)) {
		return fmt.Errorf("%s: append: record %d time %v out of range", n, i, t)
	}
	return nil
}

// Checkpoints: a task's snapshot is written again once the encoded events
// after it weigh checkpointFactor times as much as it (and at least
// checkpointFactor × checkpointMin bytes). Reading a task then decodes at
// most its snapshot and checkpointFactor times that in events; writing it
// costs its events plus snapshots growing geometrically.
const (
	checkpointFactor = 4
	checkpointMin    = 16 << 10
)

// CheckpointDue reports whether a task whose events after its stored
// snapshot (of snapSize bytes; 0: none) weigh tail bytes gets a new one.
func CheckpointDue(tail, snapSize int64) bool {
	return tail >= checkpointFactor*max(snapSize, checkpointMin)
}

// Encode encodes e as a record after checking the invariants every
// reader relies on (record.CheckEvent), so that nothing unreadable is
// ever stored (a snapshot without ContextID, say, would otherwise break
// every later Unfinished).
func Encode(e a2a.Event) ([]byte, error) {
	if err := record.CheckEvent(e); err != nil {
		return nil, err
	}
	return record.MarshalEvent(e)
}
