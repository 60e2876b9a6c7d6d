package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestListTasksPlans: every ListTasks page is read from an index in
// order, from the first row after the cursor (no sort of all the matching
// tasks, no scan of the tasks before the cursor), and every count from an
// index alone. A query of every owner (AllOwners, the server's
// housekeeping) searches the agent's tasks by index, and sorts them.
func TestListTasksPlans(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "a2a.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for key := range paged << 1 {
		for _, count := range []bool{false, true} {
			if count && key&paged != 0 {
				continue
			}
			q := listSQL(key, count)
			args := []any{"a", "o"}
			if key&allOwners != 0 {
				args = args[:1]
			}
			for _, bit := range []int{byContext, byState, byTime} {
				if key&bit != 0 {
					args = append(args, "x")
				}
			}
			if key&paged != 0 {
				args = append(args, 1, "id")
			}
			if !count {
				args = append(args, 10)
			}
			rows, err := s.rdb.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			all := strings.Join(plan, "; ")
			if key&allOwners != 0 {
				if !strings.Contains(all, "SEARCH t USING ") || !strings.Contains(all, "INDEX tasks_list_") || !strings.Contains(all, "(agent=?") {
					t.Errorf("key %d count %v: plan %q", key, count, all)
				}
				continue
			}
			if strings.Contains(all, "TEMP B-TREE") || !strings.Contains(all, "USING ") || strings.Contains(all, "SCAN t") {
				t.Errorf("key %d count %v: plan %q", key, count, all)
			}
			if key&paged != 0 && !strings.Contains(all, "(status_ts,id)<(?,?)") && !strings.Contains(all, "status_ts<") {
				t.Errorf("key %d: the cursor does not bound the index search: %q", key, all)
			}
			t.Logf("key %d count %v: %s", key, count, all)
		}
	}
}

// TestStatementJournalsInMemory: the writer keeps the statement journals
// of its savepoints (one per append of a group commit) in memory; in
// temporary files they added about 0.9× the appended bytes to the disk
// writes of a large streamed artifact (docs/design/event-log.md).
func TestStatementJournalsInMemory(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "a2a.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode int
	if err := s.wconn.QueryRowContext(context.Background(), "PRAGMA temp_store").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != 2 {
		t.Fatalf("the writer's temp_store is %d, want 2 (MEMORY)", mode)
	}
}
