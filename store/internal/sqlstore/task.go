package sqlstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/internal/record"
	"github.com/a2abridge/a2abridge/store"
)

// TaskRow is a task's row with its checkpoint, as read.
type TaskRow struct {
	Info    store.TaskInfo // all but Task
	SnapSeq int64          // 0: no checkpoint
	Snap    []byte         // nil: none
}

// SetTimes sets Info.Created and Info.Updated, in UTC, from the stored
// Unix nanoseconds.
func (r *TaskRow) SetTimes(created, updated int64) {
	r.Info.Created = time.Unix(0, created).UTC()
	r.Info.Updated = time.Unix(0, updated).UTC()
}

// Fold builds task taskID of row: its checkpoint, if any, with the
// records after it up to the row's seq folded on (fold.Replay). records
// returns those records (n of them, from row.SnapSeq+1 on); it is called
// only when there are some. Records missing from what it returns, or its
// store.ErrNotFound, mean the task is being deleted (DeleteFinished):
// store.ErrNotFound; its other errors are returned as they are.
func (n Name) Fold(taskID string, row TaskRow, records func(n int64) ([]store.Record, error)) (store.TaskInfo, error) {
	info := row.Info
	if row.Snap != nil {
		t, err := record.UnmarshalTask(row.Snap)
		if err != nil {
			return info, fmt.Errorf("%s: task %s: decode snapshot: %w", n, taskID, err)
		}
		info.Task = t
	}
	if k := info.Seq - row.SnapSeq; k > 0 {
		recs, err := records(k)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (int64(len(recs)) != k || recs[0].Seq != row.SnapSeq+1)) {
			return store.TaskInfo{}, store.ErrNotFound
		}
		if err != nil {
			return store.TaskInfo{}, err
		}
		for _, r := range recs {
			if info.Task, err = fold.Replay(info.Task, r.Event); err != nil {
				return store.TaskInfo{}, fmt.Errorf("%s: task %s: fold record %d: %w", n, taskID, r.Seq, err)
			}
		}
	}
	return info, nil
}

// Record decodes the stored record seq (tm: Unix nanoseconds; body:
// internal/record), its Time in UTC. op names the read in the error
// ("events <task id>", "task <task id>").
func (n Name) Record(op string, seq, tm int64, body []byte) (store.Record, error) {
	ev, err := record.UnmarshalEvent(body)
	if err != nil {
		return store.Record{}, fmt.Errorf("%s: %s: decode record %d: %w", n, op, seq, err)
	}
	return store.Record{Seq: seq, Time: time.Unix(0, tm).UTC(), Event: ev}, nil
}

// Records reads rows of the columns seq, time, body (Record); op names
// the read in errors.
func (n Name) Records(rows Rows, op string) ([]store.Record, error) {
	var recs []store.Record
	for rows.Next() {
		var (
			seq, tm int64
			body    []byte
		)
		if err := rows.Scan(&seq, &tm, &body); err != nil {
			return nil, n.Wrap(op, err)
		}
		rec, err := n.Record(op, seq, tm, body)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, n.Wrap(op, err)
	}
	return recs, nil
}
