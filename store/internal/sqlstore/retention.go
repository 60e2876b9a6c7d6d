package sqlstore

import "time"

// DeleteBudget bounds the log records one DeleteFinished call deletes, so
// that its transaction stays short (SQLite's holds the writer for
// milliseconds, not seconds).
const DeleteBudget = 4096

// Cutoff returns the stored form (Unix nanoseconds) of DeleteFinished's
// before, clamped to MaxTime; ok is false when before precedes MinTime,
// so that no stored task is old enough.
func Cutoff(before time.Time) (cut int64, ok bool) {
	switch {
	case before.Before(MinTime):
		return 0, false
	case before.After(MaxTime):
		return MaxTime.UnixNano(), true
	}
	return before.UnixNano(), true
}

// Candidate is a finished task that DeleteFinished may delete: its id
// (as the store scans it) and last sequence number.
type Candidate[ID any] struct {
	ID  ID
	Seq int64
}

// Candidates reads rows of the columns id, seq. Its errors are the
// driver's, unwrapped.
func Candidates[ID any](rows Rows) ([]Candidate[ID], error) {
	var cands []Candidate[ID]
	for rows.Next() {
		var k Candidate[ID]
		if err := rows.Scan(&k.ID, &k.Seq); err != nil {
			return nil, err
		}
		cands = append(cands, k)
	}
	return cands, rows.Err()
}

// Deletions chooses what one DeleteFinished call deletes from cands, the
// candidates in the order they go, read up to limit+1 of them: the ids of
// the first tasks, up to limit, whose records add up to DeleteBudget at
// most; more reports that tasks are left for another call. For a task of
// more records than the budget has left, lowest returns the lowest
// sequence number still in its log (ok false: none), as a large task
// loses its records over several calls. When such a task comes first and
// its records exceed the whole budget, its oldest records go alone: trim
// deletes those below seq, and Deletions returns no id. Errors are
// lowest's and trim's.
func Deletions[ID any](cands []Candidate[ID], limit int, lowest func(id ID) (seq int64, ok bool, err error), trim func(id ID, seq int64) error) (ids []ID, more bool, err error) {
	if len(cands) > limit {
		cands, more = cands[:limit], true
	}
	budget := int64(DeleteBudget)
	for _, k := range cands {
		records := k.Seq
		if records > budget {
			// Records may have gone already (a large task is trimmed
			// over several calls): count what remains.
			low, ok, err := lowest(k.ID)
			if err != nil {
				return nil, false, err
			}
			records = 0
			if ok {
				records = k.Seq - low + 1
			}
			if records > budget {
				more = true
				if len(ids) == 0 {
					// Alone in this call: its oldest records go.
					if err := trim(k.ID, low+budget); err != nil {
						return nil, false, err
					}
				}
				break
			}
		}
		ids = append(ids, k.ID)
		budget -= records
	}
	return ids, more, nil
}
