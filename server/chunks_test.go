package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/postgres"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

// streamerAgent answers as the exec and openai bridges do: the artifact
// "answer" in text chunks ("Hello", " from", " a2a\n", then an empty last
// chunk), an artifact "tagged" whose chunks carry metadata, and then
// input-required (a task that can still be subscribed to).
var streamerAgent = server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
	for i, text := range []string{"Hello", " from", " a2a\n", ""} {
		art := a2a.Artifact{ArtifactID: "answer", Name: "answer", Parts: []a2a.Part{a2a.NewTextPart(text)}}
		if err := u.AddArtifact(ctx, art, i > 0, text == ""); err != nil {
			return err
		}
	}
	for i, text := range []string{"one", "two"} {
		art := a2a.Artifact{ArtifactID: "tagged", Parts: []a2a.Part{a2a.Part{Content: a2a.Text(text), Metadata: map[string]any{"n": fmt.Sprint(i)}}}}
		if err := u.AddArtifact(ctx, art, i > 0, i == 1); err != nil {
			return err
		}
	}
	return u.RequireInput(ctx, "more?")
})

// joinedArtifacts is what the task's artifacts hold, in A2A 1.0 ProtoJSON.
const joinedArtifacts = `[{"artifactId":"answer","name":"answer","parts":[{"text":"Hello from a2a\n"}]},` +
	`{"artifactId":"tagged","parts":[{"text":"one","metadata":{"n":"0"}},{"text":"two","metadata":{"n":"1"}}]}]`

// TestJoinedChunks: a streamed artifact's text chunks are one text part in
// the task (SendMessage's result, GetTask, ListTasks, a subscription's
// snapshot) over A2A 1.0 JSON-RPC and HTTP+JSON and 0.3 JSON-RPC, with no
// empty part for the empty last chunk; chunks with metadata stay apart;
// streams deliver every chunk as sent; and a task read back from the
// store after a restart (its snapshot and log) is the same.
func TestJoinedChunks(t *testing.T) {
	t.Parallel()
	stores := []string{"memory", "sqlite"}
	if os.Getenv("A2ABRIDGE_TEST_POSTGRES") != "" {
		stores = append(stores, "postgres")
	}
	for _, name := range stores {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var open func() store.Store
			switch name {
			case "memory":
				st := memory.New()
				open = func() store.Store { return st }
			case "sqlite":
				path := filepath.Join(t.TempDir(), "joined.db")
				open = func() store.Store {
					s, err := sqlite.Open(path, sqlite.Options{})
					if err != nil {
						t.Fatal(err)
					}
					return s
				}
			case "postgres":
				dsn := pgtest.DSN(t)
				open = func() store.Store {
					s, err := postgres.Open(ctx, dsn, postgres.Options{Exclusive: true})
					if err != nil {
						t.Fatal(err)
					}
					return s
				}
			}
			start := func() (string, func()) {
				st := open()
				eng, err := server.NewEngine(ctx, st, server.EngineOptions{Logger: testutil.Logger()})
				if err != nil {
					t.Fatal(err)
				}
				host := servertest.Host("", server.NewHandler(eng, "streamer", streamerAgent, testutil.Card("streamer"), server.HandlerOptions{}))
				srv := httptest.NewServer(host)
				return srv.URL + "/a2a/streamer", func() {
					srv.CloseClientConnections()
					srv.Close()
					_ = eng.Close(ctx)
					if name != "memory" {
						st.Close()
					}
				}
			}
			url, stop := start()
			defer func() { stop() }()
			artifactsOf := func(where string, task jsontext.Value) string {
				t.Helper()
				var v struct {
					Artifacts jsontext.Value `json:"artifacts"`
				}
				if err := json.Unmarshal(task, &v); err != nil {
					t.Fatalf("%s: %v: %s", where, err, task)
				}
				return string(v.Artifacts)
			}
			check := func(where string, task jsontext.Value) {
				t.Helper()
				if got := artifactsOf(where, task); got != joinedArtifacts {
					t.Errorf("%s: artifacts\n%s\nwant\n%s", where, got, joinedArtifacts)
				}
			}

			// A2A 1.0 JSON-RPC: SendMessage, GetTask, ListTasks.
			r := rpc10(t, url, "SendMessage", v10SendParams("hi", "join-1", ""))
			var sent struct {
				Task jsontext.Value `json:"task"`
			}
			if r.Error != nil || json.Unmarshal(r.Result, &sent) != nil {
				t.Fatalf("SendMessage: %+v %s", r.Error, r.Result)
			}
			check("SendMessage", sent.Task)
			var id struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(sent.Task, &id)
			r = rpc10(t, url, "GetTask", fmt.Sprintf(`{"id":%q}`, id.ID))
			check("GetTask", r.Result)
			r = rpc10(t, url, "ListTasks", `{"includeArtifacts":true}`)
			var list struct {
				Tasks []jsontext.Value `json:"tasks"`
			}
			if r.Error != nil || json.Unmarshal(r.Result, &list) != nil || len(list.Tasks) != 1 {
				t.Fatalf("ListTasks: %+v %s", r.Error, r.Result)
			}
			check("ListTasks", list.Tasks[0])

			// The snapshot a subscription starts with (the subscription
			// then stays open: the task waits for input).
			snap := firstFrame(t, ctx, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"SubscribeToTask","params":{"id":%q}}`, id.ID))
			var first struct {
				Result struct {
					Task jsontext.Value `json:"task"`
				} `json:"result"`
			}
			if json.Unmarshal([]byte(snap), &first) != nil || first.Result.Task == nil {
				t.Fatalf("SubscribeToTask: %s", snap)
			}
			check("SubscribeToTask", first.Result.Task)

			// A2A 1.0 HTTP+JSON.
			code, b := restDo(t, http.MethodPost, url+"/message:send", v10SendParams("hi", "join-2", ""))
			if code != 200 || json.Unmarshal(b, &sent) != nil {
				t.Fatalf("message:send: %d %s", code, b)
			}
			check("message:send", sent.Task)

			// A2A 0.3 JSON-RPC.
			_, b = testutil.Post(t, url, `{"jsonrpc":"2.0","id":3,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"join-3","parts":[{"kind":"text","text":"hi"}]}}}`)
			var r03 struct {
				Result jsontext.Value `json:"result"`
			}
			if json.Unmarshal(b, &r03) != nil {
				t.Fatalf("message/send: %s", b)
			}
			want03 := `[{"artifactId":"answer","name":"answer","parts":[{"kind":"text","text":"Hello from a2a\n"}]},` +
				`{"artifactId":"tagged","parts":[{"kind":"text","text":"one","metadata":{"n":"0"}},{"kind":"text","text":"two","metadata":{"n":"1"}}]}]`
			if got := artifactsOf("message/send", r03.Result); got != want03 {
				t.Errorf("message/send: artifacts\n%s\nwant\n%s", got, want03)
			}

			// A stream delivers every chunk as the agent sent it.
			frames := streamRaw(t, ctx, url, `{"jsonrpc":"2.0","id":4,"method":"SendStreamingMessage","params":`+v10SendParams("hi", "join-4", "")+`}`,
				"A2A-Version", "1.0", "Accept", "text/event-stream")
			var chunks []string
			for _, f := range frames {
				var fr struct {
					Result struct {
						ArtifactUpdate *struct {
							Artifact struct {
								ArtifactID string           `json:"artifactId"`
								Parts      []map[string]any `json:"parts"`
							} `json:"artifact"`
						} `json:"artifactUpdate"`
					} `json:"result"`
				}
				if err := json.Unmarshal([]byte(f.data), &fr); err != nil {
					t.Fatalf("frame: %v: %s", err, f.data)
				}
				if u := fr.Result.ArtifactUpdate; u != nil && u.Artifact.ArtifactID == "answer" {
					text, _ := u.Artifact.Parts[0]["text"].(string)
					chunks = append(chunks, text)
				}
			}
			if got := strings.Join(chunks, "|"); got != "Hello| from| a2a\n|" {
				t.Errorf("streamed chunks %q", got)
			}

			if name == "memory" {
				return
			}
			// Read back from the store by a new process: the same.
			stop()
			url, stop = start()
			r = rpc10(t, url, "GetTask", fmt.Sprintf(`{"id":%q}`, id.ID))
			check("GetTask after a restart", r.Result)
		})
	}
}

// firstFrame sends an A2A 1.0 JSON-RPC streaming request and returns the
// data of the stream's first event, then closes the stream.
func firstFrame(t *testing.T, ctx context.Context, url, body string) string {
	t.Helper()
	resp := testutil.Open(t, testutil.NewRequest(t, ctx, http.MethodPost, url, body, "Content-Type", "application/json", "A2A-Version", "1.0", "Accept", "text/event-stream"))
	defer resp.Body.Close()
	ev, err := sse.NewReader(resp.Body).Next()
	if err != nil {
		t.Fatalf("%s: no event: %v", body, err)
	}
	return string(ev.Data)
}

// TestEchoKeepsParts: echo streams a long text part in chunks, and the
// task's artifact holds the message's parts as they were sent (a text
// part after another is not joined to it), over A2A 1.0 JSON-RPC and
// HTTP+JSON and 0.3 JSON-RPC.
func TestEchoKeepsParts(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, testServerOptions{})
	long := strings.Repeat("0123456789", 20)
	parts10 := fmt.Sprintf(`[{"text":%q},{"text":"b"},{"data":{"n":"1"}},{"text":"c"},{"text":"d","mediaType":"text/markdown"}]`, long)
	send10 := `{"message":{"role":"ROLE_USER","messageId":"%s","parts":` + parts10 + `}}`
	r := rpc10(t, ts.URL+"/a2a/echo", "SendMessage", fmt.Sprintf(send10, "echo-parts-1"))
	code, rest := restDo(t, http.MethodPost, ts.URL+"/a2a/echo/message:send", fmt.Sprintf(send10, "echo-parts-2"))
	for i, b := range [][]byte{r.Result, rest} {
		var sent struct {
			Task struct {
				Artifacts []struct {
					Parts jsontext.Value `json:"parts"`
				} `json:"artifacts"`
			} `json:"task"`
		}
		if err := json.Unmarshal(b, &sent); err != nil || len(sent.Task.Artifacts) != 1 || string(sent.Task.Artifacts[0].Parts) != parts10 {
			t.Errorf("1.0 answer %d (%d): %s\nwant parts %s", i, code, b, parts10)
		}
	}
	parts03 := fmt.Sprintf(`[{"kind":"text","text":%q},{"kind":"text","text":"b"},{"kind":"data","data":{"n":"1"}},{"kind":"text","text":"c"}]`, long)
	_, b := testutil.Post(t, ts.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"echo-parts-3","parts":`+parts03+`}}}`)
	var r03 struct {
		Result struct {
			Artifacts []struct {
				Parts jsontext.Value `json:"parts"`
			} `json:"artifacts"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &r03); err != nil || len(r03.Result.Artifacts) != 1 || string(r03.Result.Artifacts[0].Parts) != parts03 {
		t.Errorf("0.3 answer: %s\nwant parts %s", b, parts03)
	}
	// The stream shows the long text in chunks.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	frames := streamRaw(t, ctx, ts.URL+"/a2a/echo", `{"jsonrpc":"2.0","id":2,"method":"SendStreamingMessage","params":`+fmt.Sprintf(send10, "echo-parts-4")+`}`,
		"A2A-Version", "1.0", "Accept", "text/event-stream")
	updates := 0
	for _, f := range frames {
		if strings.Contains(f.data, `"artifactUpdate"`) {
			updates++
		}
	}
	if updates < 5 {
		t.Errorf("%d artifact updates, want the long text in 4 chunks and the rest", updates)
	}
}

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
	get := testutil.CallRPC(t, ts.URL+"/a2a/echo", "tasks/get", `{"id":"`+id+`","historyLength":0}`)
	if len(get.Result.Artifacts) != 1 || get.Result.Status.State != "completed" {
		t.Fatalf("tasks/get: %+v", get)
	}
	return get.Result.Artifacts[0].Text(), events
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
