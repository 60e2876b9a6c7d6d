package server_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkSendByVersion measures the server's side of one blocking send
// to the echo agent, in process (the host's ServeHTTP into a recorder: no
// network, no client), with the in-memory store and parallel callers, over
// each protocol version and binding: A2A 0.3 message/send, A2A 1.0
// SendMessage (JSON-RPC) and A2A 1.0 POST /message:send (REST). Compare
// them within one run:
//
//	go test -run '^$' -bench SendByVersion -benchmem -count 10 ./server > send.txt
//	benchstat -col /proto send.txt
func BenchmarkSendByVersion(b *testing.B) {
	for _, v := range []struct {
		proto, path, version, want string
		body                       func(dst []byte, id int64) []byte
	}{
		{"0.3", "/a2a/echo", "", `"state":"completed"`, func(dst []byte, id int64) []byte {
			dst = append(dst, `{"jsonrpc":"2.0","id":`...)
			dst = strconv.AppendInt(dst, id, 10)
			dst = append(dst, `,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"b-`...)
			dst = strconv.AppendInt(dst, id, 10)
			return append(dst, `","parts":[{"kind":"text","text":"abcdefghijklmnop"}]}}}`...)
		}},
		{"1.0-jsonrpc", "/a2a/echo", "1.0", `"state":"TASK_STATE_COMPLETED"`, func(dst []byte, id int64) []byte {
			dst = append(dst, `{"jsonrpc":"2.0","id":`...)
			dst = strconv.AppendInt(dst, id, 10)
			dst = append(dst, `,"method":"SendMessage","params":{"message":{"messageId":"b-`...)
			dst = strconv.AppendInt(dst, id, 10)
			return append(dst, `","role":"ROLE_USER","parts":[{"text":"abcdefghijklmnop"}]}}}`...)
		}},
		{"1.0-rest", "/a2a/echo/message:send", "1.0", `"state":"TASK_STATE_COMPLETED"`, func(dst []byte, id int64) []byte {
			dst = append(dst, `{"message":{"messageId":"b-`...)
			dst = strconv.AppendInt(dst, id, 10)
			return append(dst, `","role":"ROLE_USER","parts":[{"text":"abcdefghijklmnop"}]}}`...)
		}},
	} {
		b.Run("proto="+v.proto, func(b *testing.B) {
			h := newTestServer(b, testServerOptions{}).Config.Handler
			hdr := http.Header{"Content-Type": {"application/json"}}
			if v.version != "" {
				hdr.Set("A2A-Version", v.version)
			}
			var n atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var body []byte
				for pb.Next() {
					body = v.body(body[:0], n.Add(1))
					req := httptest.NewRequest(http.MethodPost, v.path, bytes.NewReader(body))
					req.Header = hdr.Clone()
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(v.want)) {
						b.Fatalf("%s: HTTP %d %s", v.proto, rec.Code, rec.Body.Bytes())
					}
				}
			})
		})
	}
}
