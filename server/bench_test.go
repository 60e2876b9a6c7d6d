package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

// BenchmarkSendMessage measures full message/send HTTP round trips
// (client → JSON-RPC → engine → echo agent → durable log → response) with
// the in-memory and the SQLite store, sequentially and with parallel
// clients. Compare the variants side by side in one run:
//
//	go test -run '^$' -bench SendMessage -benchmem ./server
func BenchmarkSendMessage(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"memory", func(b *testing.B) store.Store { return memory.New() }},
		{"sqlite", func(b *testing.B) store.Store {
			s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
	}
	for _, st := range stores {
		for _, parallel := range []bool{false, true} {
			name := st.name + "/serial"
			if parallel {
				name = st.name + "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				ts := newTestServer(b, testServerOptions{store: st.open(b)})
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
				var n atomic.Int64
				do := func() {
					i := n.Add(1)
					body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"b-%d","parts":[{"kind":"text","text":"hello"}]}}}`, i, i)
					resp, err := client.Post(ts.URL+"/", "application/json", bytes.NewReader([]byte(body)))
					if err != nil {
						b.Fatal(err)
					}
					out, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if !bytes.Contains(out, []byte(`"state":"completed"`)) {
						b.Fatalf("unexpected response %s", out)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				if parallel {
					b.SetParallelism(16)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							do()
						}
					})
				} else {
					for b.Loop() {
						do()
					}
				}
			})
		}
	}
}

// BenchmarkStreamMessage measures full message/stream round trips (all
// SSE frames read) with the in-memory store.
func BenchmarkStreamMessage(b *testing.B) {
	ts := newTestServer(b, testServerOptions{})
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"message/stream","params":{"message":{"kind":"message","role":"user","messageId":"s-%d","parts":[{"kind":"text","text":"hello"}]}}}`, i, i)
			resp, err := http.Post(ts.URL+"/", "application/json", bytes.NewReader([]byte(body)))
			if err != nil {
				b.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Contains(out, []byte(`"final":true`)) {
				b.Fatalf("unexpected stream %s", out)
			}
		}
	})
}
