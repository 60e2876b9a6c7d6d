package server_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

// countingStore counts the attachments put.
type countingStore struct {
	*memory.Store
	puts atomic.Int64
}

func (s *countingStore) PutAttachment(ctx context.Context, a store.Attachment) error {
	s.puts.Add(1)
	return s.Store.PutAttachment(ctx, a)
}

type attachFixture struct {
	ts   *httptest.Server
	st   *countingStore
	seen chan a2a.Message // what the agent received
}

func newAttachFixture(t *testing.T) *attachFixture {
	t.Helper()
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"alice": "alice-token", "bob": "bob-token"})
	if err != nil {
		t.Fatal(err)
	}
	f := &attachFixture{st: &countingStore{Store: memory.New()}, seen: make(chan a2a.Message, 16)}
	eng, err := server.NewEngine(context.Background(), f.st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		f.seen <- r.Message
		if len(r.Params.Message.Parts) != len(r.Message.Parts) {
			return fmt.Errorf("params and message differ")
		}
		return u.RequireInput(ctx, "more?")
	})
	host := servertest.Host("")
	h := server.NewHandler(eng, "files", agent, testutil.Card("files"), server.HandlerOptions{Auth: auth.Set{bearer},
		Attachments: &server.AttachmentOptions{MaxBytes: 16}})
	host.Add(h)
	host.Handle(server.AttachmentContentPattern, server.NewAttachmentHandler(f.st, host.Handler, testutil.Logger()))
	f.ts = httptest.NewServer(host)
	t.Cleanup(func() {
		f.ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		eng.Close(ctx)
	})
	return f
}

// rpc posts a JSON-RPC 0.3 request as token and decodes the answer.
func (f *attachFixture) rpc(t *testing.T, token, method string, params any) map[string]any {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	_, b := testutil.Post(t, f.ts.URL+"/a2a/files", string(body), "Authorization", "Bearer "+token)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *attachFixture) get(t *testing.T, token, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	if token != "" {
		hdr = append([]string{"Authorization", "Bearer " + token}, hdr...)
	}
	return testutil.Get(t, url, hdr...)
}

func fileMessage(id, taskID string, content []byte) map[string]any {
	m := map[string]any{"kind": "message", "role": "user", "messageId": id, "parts": []any{
		map[string]any{"kind": "text", "text": "see the file"},
		map[string]any{"kind": "file", "file": map[string]any{"name": "nötes \"1\".txt", "mimeType": "text/plain", "bytes": base64.StdEncoding.EncodeToString(content)}},
	}}
	if taskID != "" {
		m["taskId"] = taskID
	}
	return m
}

// fileURI returns the uri of the file part of a task's history entry i.
func fileURI(t *testing.T, task map[string]any, i int) string {
	t.Helper()
	hist, _ := task["history"].([]any)
	if len(hist) <= i {
		t.Fatalf("history %v has no entry %d", hist, i)
	}
	parts := hist[i].(map[string]any)["parts"].([]any)
	file := parts[1].(map[string]any)["file"].(map[string]any)
	if _, ok := file["bytes"]; ok {
		t.Fatalf("history keeps the bytes: %v", file)
	}
	if file["name"] != "nötes \"1\".txt" || file["mimeType"] != "text/plain" {
		t.Fatalf("name or mimeType lost: %v", file)
	}
	uri, _ := file["uri"].(string)
	return uri
}

func TestAttachments(t *testing.T) {
	f := newAttachFixture(t)
	res := f.rpc(t, "alice-token", "message/send", map[string]any{"message": fileMessage("m1", "", []byte("hello, file"))})
	task, ok := res["result"].(map[string]any)
	if !ok {
		t.Fatalf("message/send: %v", res)
	}
	uri := fileURI(t, task, 0)
	if !strings.HasPrefix(uri, f.ts.URL+server.AttachmentsPath+"/") || !strings.HasSuffix(uri, "/content") {
		t.Fatalf("uri %q: want %s%s/{id}/content", uri, f.ts.URL, server.AttachmentsPath)
	}
	if id := strings.TrimSuffix(strings.TrimPrefix(uri, f.ts.URL+server.AttachmentsPath+"/"), "/content"); len(id) != 22 {
		t.Fatalf("id %q is not 128 bits of base64url", id)
	}
	got := <-f.seen
	if fp := got.Parts[1]; fp.URL() != uri || fp.Filename != "nötes \"1\".txt" {
		t.Fatalf("the agent got %+v, want the file by URL %s", got.Parts[1], uri)
	}

	// The owner reads the bytes.
	resp, body := f.get(t, "alice-token", uri)
	if resp.StatusCode != 200 || string(body) != "hello, file" {
		t.Fatalf("GET: %d %q", resp.StatusCode, body)
	}
	h := resp.Header
	if h.Get("Content-Type") != "text/plain" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("ETag") == "" ||
		h.Get("Content-Disposition") != `attachment; filename*=utf-8''n%C3%B6tes%20%221%22.txt` {
		t.Fatalf("headers: %v", h)
	}
	if resp, _ := f.get(t, "alice-token", uri, "If-None-Match", h.Get("ETag")); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d, want 304", resp.StatusCode)
	}
	// Another principal, no credentials, an unknown id.
	if resp, body := f.get(t, "bob-token", uri); resp.StatusCode != 404 || strings.Contains(string(body), "hello") {
		t.Fatalf("another owner: %d %s, want 404", resp.StatusCode, body)
	}
	if resp, _ := f.get(t, "", uri); resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no credentials: %d, want 401 with a challenge", resp.StatusCode)
	}
	for _, u := range []string{f.ts.URL + server.AttachmentsPath + "/AAAAAAAAAAAAAAAAAAAAAA/content", f.ts.URL + server.AttachmentsPath + "/a.b/content"} {
		if resp, _ := f.get(t, "alice-token", u); resp.StatusCode != 404 {
			t.Fatalf("%s: %d, want 404", u, resp.StatusCode)
		}
	}

	// A retry of the same message is answered from its task, and stores
	// nothing again.
	puts := f.st.puts.Load()
	res = f.rpc(t, "alice-token", "message/send", map[string]any{"message": fileMessage("m1", "", []byte("hello, file"))})
	if r, ok := res["result"].(map[string]any); !ok || r["id"] != task["id"] {
		t.Fatalf("retry: %v", res)
	}
	// Reusing the id for other bytes is refused.
	res = f.rpc(t, "alice-token", "message/send", map[string]any{"message": fileMessage("m1", "", []byte("other"))})
	if e, _ := res["error"].(map[string]any); e == nil || e["code"] != -32602.0 {
		t.Fatalf("reused messageId: %v", res)
	}
	if n := f.st.puts.Load(); n != puts {
		t.Fatalf("retries stored %d attachments", n-puts)
	}

	// Over the limit: -32602 naming the part, nothing stored, no task.
	res = f.rpc(t, "alice-token", "message/send", map[string]any{"message": fileMessage("m2", "", []byte("seventeen bytes!!"))})
	e, _ := res["error"].(map[string]any)
	if e == nil || e["code"] != -32602.0 || !strings.Contains(fmt.Sprint(e), "parts/1") {
		t.Fatalf("over the limit: %v", res)
	}
	if n := f.st.puts.Load(); n != puts {
		t.Fatal("a refused message stored an attachment")
	}

	// A continuation: its file is stored too; tasks/get has both URLs.
	res = f.rpc(t, "alice-token", "message/send", map[string]any{"message": fileMessage("m3", task["id"].(string), []byte("second"))})
	if _, ok := res["result"].(map[string]any); !ok {
		t.Fatalf("continuation: %v", res)
	}
	<-f.seen
	res = f.rpc(t, "alice-token", "tasks/get", map[string]any{"id": task["id"]})
	full := res["result"].(map[string]any)
	if u0, u2 := fileURI(t, full, 0), fileURI(t, full, 2); u0 != uri || u2 == uri {
		t.Fatalf("history URLs %s, %s", u0, u2)
	} else if resp, body := f.get(t, "alice-token", u2); resp.StatusCode != 200 || string(body) != "second" {
		t.Fatalf("second file: %d %q", resp.StatusCode, body)
	}
}

// A message to a task that takes none stores no file.
func TestAttachmentsRefusedContinuation(t *testing.T) {
	f := newAttachFixture(t)
	res := f.rpc(t, "alice-token", "message/send", map[string]any{"message": fileMessage("m1", "", []byte("x"))})
	id := res["result"].(map[string]any)["id"].(string)
	<-f.seen
	f.rpc(t, "alice-token", "tasks/cancel", map[string]any{"id": id})
	puts := f.st.puts.Load()
	res = f.rpc(t, "alice-token", "message/send", map[string]any{"message": fileMessage("m2", id, []byte("y"))})
	if _, ok := res["error"]; !ok {
		t.Fatalf("message to a canceled task: %v", res)
	}
	if f.st.puts.Load() != puts {
		t.Fatal("a refused continuation stored an attachment")
	}
	// And another principal's task id is not found, nothing stored.
	res = f.rpc(t, "bob-token", "message/send", map[string]any{"message": fileMessage("m3", id, []byte("z"))})
	if e, _ := res["error"].(map[string]any); e == nil || e["code"] != -32001.0 || f.st.puts.Load() != puts {
		t.Fatalf("bob continuing alice's task: %v", res)
	}
}

func TestNewHandlerAttachmentsNeedStore(t *testing.T) {
	eng, err := server.NewEngine(context.Background(), plainStore{memory.New()}, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	defer func() {
		if recover() == nil {
			t.Fatal("NewHandler accepted Attachments on a store without attachments")
		}
	}()
	server.NewHandler(eng, "x", whoAmI, testutil.Card("x"), server.HandlerOptions{Attachments: &server.AttachmentOptions{}})
}

// plainStore hides every optional interface of the store it wraps.
type plainStore struct{ store.Store }

// Over HTTP+JSON (A2A 1.0), a raw part becomes a url part too.
func TestAttachmentsREST10(t *testing.T) {
	f := newAttachFixture(t)
	body := `{"message":{"messageId":"r1","role":"ROLE_USER","parts":[{"raw":"aGk=","mediaType":"text/plain","filename":"x.txt"}]}}`
	resp, b := testutil.Post(t, f.ts.URL+"/a2a/files/message:send", body, "A2A-Version", "1.0", "Authorization", "Bearer alice-token")
	want := `"url":"` + f.ts.URL + `/api/attachments/`
	if resp.StatusCode != 200 || !strings.Contains(string(b), want) || strings.Contains(string(b), `"raw"`) {
		t.Fatalf("%d %s: want a part with %s…", resp.StatusCode, b, want)
	}
	<-f.seen
}
