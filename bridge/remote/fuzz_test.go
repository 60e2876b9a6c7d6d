package remote_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/remote"
)

// FuzzRefOf: any task metadata (as JSON decodes it) is read without
// panicking; a reference it yields has a task id and survives a JSON
// round trip of the metadata.
func FuzzRefOf(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a2abridge/remote":null}`, `{"a2abridge/remote":"t"}`, `{"a2abridge/remote":[]}`,
		`{"a2abridge/remote":{"taskId":"t","contextId":"c","url":"http://x"}}`,
		`{"a2abridge/remote":{"taskId":1,"contextId":{"x":1}}}`, `{"a2abridge/remote":{"taskId":""}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var md map[string]any
		if json.Unmarshal(b, &md) != nil {
			return
		}
		ref, ok := remote.RefOf(a2a.Task{Metadata: md})
		if !ok {
			if ref != (remote.Ref{}) {
				t.Fatalf("not ok but %+v", ref)
			}
			return
		}
		if ref.TaskID == "" {
			t.Fatal("ok without a task id")
		}
		rt, err := json.Marshal(md)
		if err != nil {
			return
		}
		var md2 map[string]any
		if err := json.Unmarshal(rt, &md2); err != nil {
			t.Fatal(err)
		}
		if ref2, ok2 := remote.RefOf(a2a.Task{Metadata: md2}); !ok2 || ref2 != ref {
			t.Fatalf("round trip: %+v %v, want %+v", ref2, ok2, ref)
		}
	})
}

// FuzzValidate: any configuration is validated without panicking; New
// accepts exactly what Validate accepts; a refused secret is not quoted.
func FuzzValidate(f *testing.F) {
	f.Add("http://127.0.0.1:8080/a2a/echo", "", "", "tok", "", "", int64(0))
	f.Add("https://x/.well-known/agent-card.json", "0.3", "rest", "", "key", "X-K", int64(1))
	f.Add("http://u:p@x/", "1.0", "JSONRPC", "a\nb", "k ", "Bad Header", int64(-1))
	f.Add("ftp://x", "2", "grpc", "", "", "X-K", int64(5))
	f.Fuzz(func(t *testing.T, u, protocol, binding, token, key, header string, timeout int64) {
		c := remote.Config{URL: u, Protocol: protocol, Binding: binding, Timeout: time.Duration(timeout),
			Credentials: remote.Credentials{BearerToken: token, APIKey: key, APIKeyHeader: header}}
		err := c.Validate()
		ag, nerr := remote.New(c)
		if (err == nil) != (nerr == nil) {
			t.Fatalf("Validate: %v; New: %v", err, nerr)
		}
		if err != nil {
			for _, secret := range []string{token, key} {
				quoted := strings.Contains(u+protocol+binding+header, secret) // other values are quoted
				if len(secret) >= 8 && !quoted && strings.Contains(err.Error(), secret) {
					t.Fatalf("the error %q quotes a secret", err)
				}
			}
			return
		}
		ag.Close()
	})
}
