package jsonrpc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
)

// A batch over the limit is one -32600 item with a null id that names the
// count and the limit; at the limit, every member is parsed.
func TestParseBodyBatchLimit(t *testing.T) {
	member := `{"jsonrpc":"2.0","id":1,"method":"m"}`
	batchOf := func(n int, m string) []byte {
		return []byte("[" + strings.TrimSuffix(strings.Repeat(m+",", n), ",") + "]")
	}
	items, batch := ParseBody(batchOf(3, member), 3)
	if !batch || len(items) != 3 || items[2].Err != nil {
		t.Fatalf("batch at the limit: batch %v, %d items, %+v", batch, len(items), items)
	}
	for _, c := range []struct {
		body       []byte
		max        int
		count, lim string
	}{
		{batchOf(4, member), 3, "4", "3"},
		{batchOf(1000000, "{}"), 100, "1000000", "100"},
		{[]byte(" [ 1 , \"a]\" , [ [ ] ] , { \"x\" : [ ] } , null ]\n"), 4, "5", "4"},
	} {
		items, batch := ParseBody(c.body, c.max)
		if batch || len(items) != 1 {
			t.Fatalf("%.40q: batch %v, %d items, want one error item", c.body, batch, len(items))
		}
		e := items[0].Err
		if e == nil || e.Code != a2a.CodeInvalidRequest || string(appendID(nil, items[0].ID)) != "null" ||
			!strings.Contains(e.Message, c.count) || !strings.Contains(e.Message, "limit of "+c.lim) {
			t.Fatalf("%.40q: %+v, want -32600 naming %s and the limit %s", c.body, e, c.count, c.lim)
		}
	}
	// Invalid JSON stays -32700 whatever its length.
	if items, _ := ParseBody(append(batchOf(10, "{}"), 'x'), 3); items[0].Err.Code != a2a.CodeParseError {
		t.Fatalf("invalid oversized batch: %+v", items[0].Err)
	}
}

// An oversized batch is counted, not parsed: its cost does not grow with
// its members (the old path built one Item, one error and one answer per
// member: about 1 KiB for each `{}`).
func TestParseBodyOversizedBatchAllocatesLittle(t *testing.T) {
	body := []byte("[" + strings.TrimSuffix(strings.Repeat("{},", 100000), ",") + "]")
	allocs := testing.AllocsPerRun(3, func() { ParseBody(body, 100) })
	if allocs > 200 {
		t.Fatalf("%.0f allocations for an oversized batch of 100000 members", allocs)
	}
}

// batchMembers splits a batch exactly as json.Unmarshal into
// []jsontext.Value does.
func FuzzBatchMembers(f *testing.F) {
	for _, s := range []string{`[]`, `[1]`, ` [ 1 , "a" ,{"b":[1,{}]}, [] ,null,true, -1.5e3 ] `, `["\"]", "\\"]`, "[\n\t{}\r]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v := jsontext.Value(bytes.TrimSpace(body))
		if len(v) == 0 || v[0] != '[' || !v.IsValid(jsontext.AllowDuplicateNames(true)) {
			return
		}
		var want []jsontext.Value
		if err := json.Unmarshal(v, &want, jsontext.AllowDuplicateNames(true)); err != nil {
			t.Fatal(err)
		}
		got, n := batchMembers(v, 0)
		if n != len(want) || len(got) != len(want) {
			t.Fatalf("%q: %d members (%d kept), want %d", body, n, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%q member %d: %q, want %q", body, i, got[i], want[i])
			}
		}
		if kept, n2 := batchMembers(v, 2); n2 != n || len(kept) != min(n, 2) {
			t.Fatalf("%q with max 2: %d kept of %d", body, len(kept), n2)
		}
	})
}
