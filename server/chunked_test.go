package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/store"
)

var chunkedSends atomic.Int64

// sendEcho sends text to the echo agent (a non-blocking message/send),
// follows the task with a tasks/resubscribe stream from its first event to
// its end, reads it with tasks/get, and returns the echoed artifact's text
// and the number of events the stream saw.
func sendEcho(t testing.TB, ts *testServer, text string) (string, int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": map[string]any{
		"message": map[string]any{"kind": "message", "role": "user", "messageId": fmt.Sprint("chunked-", chunkedSends.Add(1)),
			"parts": []any{map[string]any{"kind": "text", "text": text}}},
		"configuration": map[string]any{"blocking": false},
	}})
	resp, err := http.Post(ts.URL+"/a2a/echo", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var started struct {
		Result struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(b, &started); err != nil || started.Result.ID == "" {
		t.Fatalf("message/send: %v: %.300s", err, b)
	}
	id := started.Result.ID
	var wg sync.WaitGroup
	events := 0
	wg.Go(func() {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/a2a/echo", strings.NewReader(
			`{"jsonrpc":"2.0","id":2,"method":"tasks/resubscribe","params":{"id":"`+id+`"}}`))
		req.Header.Set("Last-Event-ID", "0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		rd := sse.NewReader(resp.Body)
		for {
			if _, err := rd.Next(); err != nil {
				return
			}
			events++
		}
	})
	wg.Wait()
	get := rpcCall(t, ts.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"`+id+`","historyLength":0}}`)
	var task struct {
		Result struct {
			Status struct {
				State string `json:"state"`
			} `json:"status"`
			Artifacts []struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"artifacts"`
		} `json:"result"`
	}
	if err := json.Unmarshal(get, &task); err != nil || len(task.Result.Artifacts) != 1 || task.Result.Status.State != "completed" {
		t.Fatalf("tasks/get: %v: %.300s", err, get)
	}
	var out strings.Builder
	for _, p := range task.Result.Artifacts[0].Parts {
		out.WriteString(p.Text)
	}
	return out.String(), events
}

func rpcCall(t testing.TB, url, body string) []byte {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}

// TestChunkedArtifactLinear sends 1 MiB and 4 MiB texts to echo, which
// streams them back in 64-byte chunks (16,384 and 65,536 artifact
// updates of one artifact), on each store, with a stream following the
// task: the artifact comes back whole, and the bytes allocated meanwhile
// (server and client, in this process) grow in proportion to the text —
// four times the text, about four times the bytes, where copying the
// artifact so far with every chunk made it sixteen.
func TestChunkedArtifactLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 5 MiB in 81,920 chunks per store")
	}
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			var st store.Store
			if name == "sqlite" {
				st = sqliteStore(t)
			}
			ts := newTestServer(t, testServerOptions{store: st})
			measure := func(size int) uint64 {
				text := strings.Repeat("0123456789abcdef", size/16)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				got, events := sendEcho(t, ts, text)
				runtime.ReadMemStats(&after)
				if got != text {
					t.Fatalf("echoed %d bytes, want %d", len(got), len(text))
				}
				if want := size/64 + 2; events < want {
					t.Errorf("the stream saw %d events, want at least %d", events, want)
				}
				return after.TotalAlloc - before.TotalAlloc
			}
			measure(64 << 10) // warm up
			small, large := measure(1<<20), measure(4<<20)
			t.Logf("allocated %d MiB for 1 MiB, %d MiB for 4 MiB (%.1f×)", small>>20, large>>20, float64(large)/float64(small))
			if large > 8*small {
				t.Errorf("4 MiB allocated %.1f times what 1 MiB did: not linear", float64(large)/float64(small))
			}
		})
	}
}

// BenchmarkChunkedArtifact: a text echoed back in 64-byte chunks, with a
// stream following the task (bytes/s of text).
func BenchmarkChunkedArtifact(b *testing.B) {
	for _, name := range []string{"memory", "sqlite"} {
		for _, size := range []int{1 << 20, 4 << 20} {
			b.Run(fmt.Sprintf("%s/%dMiB", name, size>>20), func(b *testing.B) {
				var st store.Store
				if name == "sqlite" {
					st = sqliteStore(b)
				}
				ts := newTestServer(b, testServerOptions{store: st})
				text := strings.Repeat("0123456789abcdef", size/16)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if got, _ := sendEcho(b, ts, text+fmt.Sprint(i)); len(got) != size+len(fmt.Sprint(i)) {
						b.Fatalf("echoed %d bytes", len(got))
					}
				}
			})
		}
	}
}
