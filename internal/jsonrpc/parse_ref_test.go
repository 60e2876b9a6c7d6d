package jsonrpc

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// refParseBody is ParseBody without parseValid: every object goes through
// parseOne (json.Unmarshal of the envelope), as before parseValid existed.
// ParseBody must answer every body exactly as it does.
func refParseBody(body []byte) (items []Item, batch bool) {
	return parseGeneral(jsontext.Value(bytes.TrimSpace(body)), 0)
}

func sameItems(t *testing.T, body []byte) {
	t.Helper()
	got, gb := ParseBody(body, 0)
	want, wb := refParseBody(body)
	if gb != wb || len(got) != len(want) {
		t.Fatalf("%q: batch %v, %d items; reference %v, %d", body, gb, len(got), wb, len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !bytes.Equal(g.ID, w.ID) || g.Method != w.Method || !bytes.Equal(g.Params, w.Params) || (g.Params == nil) != (w.Params == nil) {
			t.Fatalf("%q item %d: id %q method %q params %q (nil %v); reference id %q method %q params %q (nil %v)",
				body, i, g.ID, g.Method, g.Params, g.Params == nil, w.ID, w.Method, w.Params, w.Params == nil)
		}
		if (g.Err == nil) != (w.Err == nil) || g.Err != nil && (g.Err.Code != w.Err.Code || g.Err.Message != w.Err.Message || !bytes.Equal(AppendError(nil, nil, g.Err), AppendError(nil, nil, w.Err))) {
			t.Fatalf("%q item %d: error %v; reference %v", body, i, g.Err, w.Err)
		}
	}
}

var envelopeCases = []string{
	`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"parts":[{"kind":"text","text":"} ] \" \\ {"}]}}}`,
	` { "jsonrpc" : "2.0" , "id" : "a b" , "method" : "tasks/get" , "params" : { } } `,
	"\t{\n\"jsonrpc\":\r\"2.0\",\"method\":\"m\"}\n",
	`{"\u006aSONRPC":"2.0","id":1,"method":"m"}`, `{"\u006asonrpc":"2.0","\u0069d":7,"m\u0065thod":"x\/y"}`,
	`{"jsonrpc":"2\u002e0","id":1,"method":"m"}`, `{"jsonrpc":"2.0 ","id":1,"method":"m"}`, `{"jsonrpc":2.0,"id":1,"method":"m"}`,
	`{"jsonrpc":"2.0","id":null,"method":"m","params":null}`, `{"jsonrpc":null,"id":1,"method":"m"}`, `{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`, `{"jsonrpc":"2.0","id":1,"method":"\u0000"}`, `{"jsonrpc":"2.0","id":-0,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1e2,"method":"m"}`, `{"jsonrpc":"2.0","id":1.5,"method":"m"}`, `{"jsonrpc":"2.0","id":1e400,"method":"m"}`,
	`{"jsonrpc":"2.0","id":true,"method":"m"}`, `{"jsonrpc":"2.0","id":{"a":1},"method":"m"}`, `{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":[1,{"a":[]}]}`, `{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":false}`, `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":2}}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`, `{"jsonrpc":"2.0","x":{"y":[{"z":"}"}]},"method":"m","id":3}`,
	`{}`, `{"jsonrpc":"2.0"}`, `{"method":"m"}`, `[{"jsonrpc":"2.0","id":1,"method":"m"},{"jsonrpc":"2.0","id":2,"method":"n","params":{}}]`,
	`"str"`, `12`, `{"a":1}x`, `{"jsonrpc":"2.0","id":1,"method":"m"}` + "\u00a0", `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/delete"}`,
}

func TestParseBodyMatchesReference(t *testing.T) {
	for _, c := range envelopeCases {
		sameItems(t, []byte(c))
	}
}

// FuzzParseBodyReference compares ParseBody with the reference on any input.
func FuzzParseBodyReference(f *testing.F) {
	for _, c := range envelopeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, body []byte) { sameItems(t, body) })
}

func BenchmarkParseBody(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":17,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"bench-0a1b2c3d-17","parts":[{"kind":"text","text":"0123456789abcdef"}]}}}`)
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			refParseBody(body)
		}
	})
	b.Run("ParseBody", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ParseBody(body, 0)
		}
	})
}
