package msgfilter

import (
	"strconv"
	"testing"
)

func TestMsgFilter(t *testing.T) {
	f := New(0)
	if f.Absent("a", "x") {
		t.Fatal("a filter not loaded answered without a read")
	}
	f.ready.Store(true)
	const n = 100_000
	for i := range n {
		f.Add("agent", "m-"+strconv.Itoa(i))
	}
	for i := range n {
		if f.Absent("agent", "m-"+strconv.Itoa(i)) {
			t.Fatalf("key %d added but reported absent", i)
		}
	}
	if !f.Absent("other", "m-1") && !f.Absent("agent\x00m", "-1") {
		t.Error("keys of other agents look present")
	}
	fp := 0
	for i := range n {
		if !f.Absent("agent", "new-"+strconv.Itoa(i)) {
			fp++
		}
	}
	// 16 bits per key at a million keys, far fewer here: almost none.
	if fp > n/1000 {
		t.Errorf("%d of %d new keys not answered without a read", fp, n)
	}
}
