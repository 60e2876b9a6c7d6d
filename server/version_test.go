package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/schematest"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// versionAnswer is the error member of a JSON-RPC response.
type versionAnswer struct {
	ID    any `json:"id"`
	Error *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    jsontext.Value `json:"data"`
	} `json:"error"`
}

// TestA2AVersion: A2A 1.0 §3.6.2 on the JSON-RPC transport. No version,
// an empty one, 0.3 and 0.3.0 are served (as header or query parameter);
// any other version gets VersionNotSupportedError (-32009) naming it and
// what is served, with the request's id, and nothing runs.
func TestA2AVersion(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	send := func(id string) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","method":"message/send","params":` + testutil.SendParams03("v", id, "") + `}`
	}
	for _, c := range []struct {
		name, query string
		hdr         []string
		served      bool
	}{
		{"none", "", nil, true},
		{"empty", "", []string{"A2A-Version", ""}, true},
		{"0.3", "", []string{"A2A-Version", "0.3"}, true},
		{"0.3.0", "", []string{"A2A-Version", " 0.3.0 "}, true},
		{"query 0.3", "?A2A-Version=0.3", nil, true},
		{"1.0 with a 0.3 method", "", []string{"A2A-Version", "1.0"}, false},
		{"0.5", "", []string{"A2A-Version", "0.5"}, false},
		{"query 1.0 with a 0.3 method", "?A2A-Version=1.0", nil, false},
		{"2.0", "", []string{"A2A-Version", "2.0"}, false},
		{"garbage", "", []string{"A2A-Version", "0.3x"}, false},
		{"too many parts", "", []string{"A2A-Version", "0.3.0.1"}, false},
		{"header wins", "?A2A-Version=0.3", []string{"A2A-Version", "2.0"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := "ver-" + strings.ReplaceAll(c.name, " ", "-")
			_, b := testutil.Post(t, ts.URL+"/a2a/echo"+c.query, send(id), c.hdr...)
			var r versionAnswer
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("%v: %s", err, b)
			}
			if c.served {
				if r.Error != nil {
					t.Fatalf("served version refused: %s", b)
				}
				return
			}
			if r.Error == nil || r.Error.Code != a2a.CodeVersionNotSupported || r.ID != id ||
				!strings.Contains(r.Error.Message, "0.3") || !strings.Contains(string(r.Error.Data), "supportedVersions") {
				t.Fatalf("want -32009 with the id and the served versions: %s", b)
			}
			schematest.Validate(t, "JSONRPCErrorResponse", b)
			// Nothing ran: the same messageId without a version creates the task now.
			if res := testutil.CallRPC(t, ts.URL+"/a2a/echo", "message/send", testutil.SendParams03("v", id, "")); res.Result.Status.State != "completed" || len(res.Result.History) != 1 {
				t.Fatalf("the refused message left something behind: %+v", res.Result)
			}
		})
	}
	// A batch: every member gets the error.
	_, b := testutil.Post(t, ts.URL+"/a2a/echo", "["+send("b1")+","+send("b2")+"]", "A2A-Version", "1.0")
	var rs []versionAnswer
	if err := json.Unmarshal(b, &rs); err != nil || len(rs) != 2 || rs[0].Error == nil || rs[1].Error == nil ||
		rs[0].Error.Code != a2a.CodeVersionNotSupported || rs[1].ID != "b2" {
		t.Fatalf("batch with an unserved version: %s", b)
	}
}

// TestStreamingErrorsAsSSE: a client that accepts only text/event-stream
// (the official 1.x SDKs' streaming calls) gets an error as the one event
// of an SSE stream, for an unserved version and an unknown method too; a
// client that accepts JSON gets plain JSON.
func TestStreamingErrorsAsSSE(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	sseError := func(body string, hdr ...string) (string, versionAnswer) {
		t.Helper()
		resp := testutil.Open(t, testutil.NewRequest(t, context.Background(), http.MethodPost, ts.URL+"/a2a/echo", body, hdr...))
		defer resp.Body.Close()
		ct := resp.Header.Get("Content-Type")
		var r versionAnswer
		if ct != "text/event-stream" {
			b, _ := io.ReadAll(resp.Body)
			_ = json.Unmarshal(b, &r)
			return ct, r
		}
		ev, err := sse.NewReader(resp.Body).Next()
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(ev.Data, &r); err != nil {
			t.Fatalf("%v: %s", err, ev.Data)
		}
		return ct, r
	}
	stream := `{"jsonrpc":"2.0","id":7,"method":"message/stream","params":` + testutil.SendParams03("x", "sse-1", "") + `}`
	stream10 := `{"jsonrpc":"2.0","id":8,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}}`
	unknown := `{"jsonrpc":"2.0","id":8,"method":"tasks/frobnicate","params":{}}`
	for _, c := range []struct {
		name, body string
		hdr        []string
		ct         string
		code       int
	}{
		{"stream, unserved version", stream, []string{"Accept", "text/event-stream", "A2A-Version", "1.0"}, "text/event-stream", a2a.CodeVersionNotSupported},
		{"1.0 method without a version", stream10, []string{"Accept", "text/event-stream"}, "text/event-stream", a2a.CodeVersionNotSupported},
		{"1.0 method, version 0.3", stream10, []string{"Accept", "text/event-stream", "A2A-Version", "0.3"}, "text/event-stream", a2a.CodeVersionNotSupported},
		{"unknown method", unknown, []string{"Accept", "text/event-stream"}, "text/event-stream", a2a.CodeMethodNotFound},
		{"unknown method, JSON accepted", unknown, []string{"Accept", "application/json, text/event-stream"}, "application/json", a2a.CodeMethodNotFound},
		{"stream, unserved version, JSON client", stream, []string{"A2A-Version", "1.0"}, "application/json", a2a.CodeVersionNotSupported},
	} {
		ct, r := sseError(c.body, c.hdr...)
		if ct != c.ct || r.Error == nil || r.Error.Code != c.code || r.ID == nil {
			t.Errorf("%s: %s %+v, want %s with %d", c.name, ct, r.Error, c.ct, c.code)
		}
	}
}
