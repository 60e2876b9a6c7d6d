package sqlstore

import (
	"slices"
	"testing"
	"time"
)

func TestCutoff(t *testing.T) {
	at := time.Unix(5, 6)
	if cut, ok := Cutoff(at); !ok || cut != at.UnixNano() {
		t.Errorf("Cutoff(%v) = %d, %v", at, cut, ok)
	}
	if _, ok := Cutoff(time.Time{}); ok {
		t.Error("Cutoff(zero time) is ok")
	}
	if cut, ok := Cutoff(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)); !ok || cut != MaxTime.UnixNano() {
		t.Errorf("Cutoff(year 3000) = %d, %v", cut, ok)
	}
}

func TestDeletions(t *testing.T) {
	low := map[string]int64{"big": 10, "b": 1}
	lowest := func(id string) (int64, bool, error) {
		l, ok := low[id]
		return l, ok, nil
	}
	for _, c := range []struct {
		name    string
		cands   []Candidate[string]
		limit   int
		ids     []string
		more    bool
		trimmed string
	}{
		{"all", []Candidate[string]{{"a", 3}, {"b", 4}}, 2, []string{"a", "b"}, false, ""},
		{"limit", []Candidate[string]{{"a", 3}, {"b", 4}, {"c", 1}}, 2, []string{"a", "b"}, true, ""},
		{"budget", []Candidate[string]{{"a", DeleteBudget - 1}, {"b", 2}}, 5, []string{"a"}, true, ""},
		{"trimmed before", []Candidate[string]{{"big", DeleteBudget + 9}, {"b", 2}}, 5, []string{"big"}, true, ""},
		{"trim", []Candidate[string]{{"big", 2*DeleteBudget + 20}, {"b", 2}}, 5, nil, true, "big"},
		{"none left", []Candidate[string]{{"gone", DeleteBudget + 1}}, 5, []string{"gone"}, false, ""},
	} {
		trimmed := ""
		trim := func(id string, seq int64) error {
			if seq != low[id]+DeleteBudget {
				t.Errorf("%s: trim(%s, %d)", c.name, id, seq)
			}
			trimmed = id
			return nil
		}
		ids, more, err := Deletions(c.cands, c.limit, lowest, trim)
		if err != nil || !slices.Equal(ids, c.ids) || more != c.more || trimmed != c.trimmed {
			t.Errorf("%s: Deletions = %v, %v, %v (trimmed %q), want %v, %v (trimmed %q)", c.name, ids, more, err, trimmed, c.ids, c.more, c.trimmed)
		}
	}
}
