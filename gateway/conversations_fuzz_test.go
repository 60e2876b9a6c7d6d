package gateway

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzRequestID: the id read from a refused JSON-RPC request's body is
// nil or a valid JSON string or number, whatever the body; no panic.
func FuzzRequestID(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"message/send"}`, `{"id":"x"}`, `{"id":null}`, `{"id":{"a":1}}`, `[1]`, `{"id":1e400}`, ``, `{"id":"\ud800"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/api/bridge/x/a2a", strings.NewReader(body))
		id := requestID(r)
		if id == nil {
			return
		}
		if !jsontext.Value(id).IsValid() || (id.Kind() != '"' && id.Kind() != '0') {
			t.Fatalf("requestID(%q) = %s", body, id)
		}
	})
}
