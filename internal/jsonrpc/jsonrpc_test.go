package jsonrpc

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
)

func TestParseBody(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		batch bool
		codes []int    // 0 = parsed without error
		ids   []string // raw ids
	}{
		{"string id", `{"jsonrpc":"2.0","id":"x","method":"m"}`, false, []int{0}, []string{`"x"`}},
		{"number id kept raw", `{"jsonrpc":"2.0","id":10,"method":"m"}`, false, []int{0}, []string{`10`}},
		{"no id", `{"jsonrpc":"2.0","method":"m"}`, false, []int{0}, []string{`null`}},
		{"bad json", `{`, false, []int{a2a.CodeParseError}, []string{`null`}},
		{"empty", ``, false, []int{a2a.CodeParseError}, []string{`null`}},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"m"}`, false, []int{a2a.CodeInvalidRequest}, []string{`1`}},
		{"method not string", `{"jsonrpc":"2.0","id":1,"method":5}`, false, []int{a2a.CodeInvalidRequest}, []string{`1`}},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"m"}`, false, []int{a2a.CodeInvalidRequest}, []string{`null`}},
		{"duplicate names", `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, false, []int{a2a.CodeInvalidRequest}, []string{`null`}},
		{"case-sensitive names", `{"JSONRPC":"2.0","id":1,"method":"m"}`, false, []int{a2a.CodeInvalidRequest}, []string{`1`}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"m"}, 3]`, true, []int{0, a2a.CodeInvalidRequest}, []string{`1`, `null`}},
		{"empty batch", `[]`, false, []int{a2a.CodeInvalidRequest}, []string{`null`}},
		{"params scalar", `{"jsonrpc":"2.0","id":1,"method":"m","params":3}`, false, []int{a2a.CodeInvalidParams}, []string{`1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, batch := ParseBody([]byte(tt.body), 0)
			if batch != tt.batch || len(items) != len(tt.codes) {
				t.Fatalf("batch=%v items=%d, want %v %d", batch, len(items), tt.batch, len(tt.codes))
			}
			for i, it := range items {
				code := 0
				if it.Err != nil {
					code = it.Err.Code
				}
				if code != tt.codes[i] || string(appendID(nil, it.ID)) != tt.ids[i] {
					t.Errorf("item %d: code %d id %s, want %d %s", i, code, appendID(nil, it.ID), tt.codes[i], tt.ids[i])
				}
			}
		})
	}
}

func TestResponsesRoundTrip(t *testing.T) {
	e := a2a.InvalidParams("/params/id", "required field missing")
	for _, id := range []string{`"abc"`, `42`, `null`} {
		b := AppendError(nil, jsontext.Value(id), e)
		r, err := ParseResponse(b)
		if err != nil {
			t.Fatal(err)
		}
		if !SameID(r.ID, jsontext.Value(id)) || r.Err == nil || r.Err.Code != e.Code {
			t.Fatalf("round trip of %s: %+v", b, r)
		}
		b = AppendResult(nil, jsontext.Value(id), []byte(`{"ok":true}`))
		if r, err = ParseResponse(b); err != nil || r.Err != nil || string(r.Result) != `{"ok":true}` {
			t.Fatalf("result round trip %s: %+v %v", b, r, err)
		}
	}
	if SameID(jsontext.Value(`1`), jsontext.Value(`"1"`)) {
		t.Fatal("a number id must not equal a string id")
	}
	if !SameID(jsontext.Value(`"a"`), jsontext.Value(`"\u0061"`)) {
		t.Fatal("equal strings in different escapes must match")
	}
	for _, bad := range []string{`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}`, `{"id":1,"result":1}`, `nope`, `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`} {
		_, err := ParseResponse([]byte(bad))
		if err == nil {
			t.Errorf("ParseResponse(%s) accepted", bad)
		}
		var ae *a2a.Error
		if errors.As(err, &ae) {
			t.Errorf("ParseResponse(%s): a malformed answer must not look like a JSON-RPC error", bad)
		}
	}
	if r, err := ParseResponse([]byte(`{"jsonrpc":"2.0","id":1}`)); err != nil || r.Result != nil || r.Err != nil {
		t.Errorf("neither result nor error: %+v %v", r, err)
	}
}

// FuzzParseBody: any input yields at least one item, never panics, and every
// answer written for it is valid JSON echoing a string, number or null id.
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`,
		`[{"jsonrpc":"2.0","id":"a","method":"tasks/get"},{}]`,
		`{"jsonrpc":"2.0","id":1.0e2,"method":"x"}`, `[]`, `{`, `null`, "\"\xff\"",
		`{"jsonrpc":"2.0","id":"\ud800","method":"m"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		items, _ := ParseBody(body, 0)
		if len(items) == 0 {
			t.Fatal("no items")
		}
		for _, it := range items {
			var out []byte
			if it.Err != nil {
				out = AppendError(nil, it.ID, it.Err)
			} else {
				out = AppendResult(nil, it.ID, []byte(`null`))
				if it.Method == "" {
					t.Fatal("parsed request without method")
				}
			}
			if !jsontext.Value(out).IsValid() {
				t.Fatalf("invalid response JSON %q for body %q", out, body)
			}
			var r struct {
				ID jsontext.Value `json:"id"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatal(err)
			}
			if k := r.ID.Kind(); k != '"' && k != '0' && k != 'n' {
				t.Fatalf("id of kind %v echoed", k)
			}
			if strings.Contains(string(out), "\n") {
				t.Fatal("response spans lines (would break SSE data)")
			}
		}
	})
}

// FuzzParseResponse: the client's response parser never panics, never
// reports a malformed answer as a JSON-RPC error, and what it accepts has
// at most one of result and error.
func FuzzParseResponse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"kind":"task"}}`,
		`{"jsonrpc":"2.0","id":"a","error":{"code":-32001,"message":"x","data":{"k":[1]}}}`,
		`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"result":null}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseResponse(b)
		if err != nil {
			var ae *a2a.Error
			if errors.As(err, &ae) {
				t.Fatalf("malformed answer reported as JSON-RPC error %v", ae)
			}
			return
		}
		if r.Result != nil && r.Err != nil {
			t.Fatal("both result and error")
		}
	})
}
