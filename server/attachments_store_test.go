package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// TestStoreFilesOutbound: an agent with attachments passes the files it
// produces through TaskUpdater.StoreFiles: its artifact and its history
// carry URLs below the base the client reached (also for an agent
// mounted at a prefix of its own, Host.Mount), the URL serves the bytes
// to the task's owner, a file over MaxBytes is refused with
// ErrAttachmentTooLarge, and an agent without attachments keeps its
// files inline.
func TestStoreFilesOutbound(t *testing.T) {
	st := memory.New()
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	tooLarge := make(chan error, 4)
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		in := []a2a.Part{a2a.NewTextPart("here"), a2a.Part{Content: a2a.Raw([]byte("produced")), MediaType: "text/plain", Filename: "out.txt"}}
		parts, err := u.StoreFiles(ctx, in)
		if err != nil {
			return err
		}
		if in[1].URL() != "" {
			return errors.New("StoreFiles modified its argument")
		}
		_, err = u.StoreFiles(ctx, []a2a.Part{a2a.NewRawPart(bytes.Repeat([]byte("x"), 65))})
		tooLarge <- err
		if err := u.AddArtifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: parts}, false, true); err != nil {
			return err
		}
		return u.SetStatus(ctx, a2a.TaskStateCompleted, u.Message(parts...))
	})
	host := servertest.Host("")
	with := server.NewHandler(eng, "with", agent, testutil.Card("with"), server.HandlerOptions{Attachments: &server.AttachmentOptions{MaxBytes: 64}})
	without := server.NewHandler(eng, "without", agent, testutil.Card("without"), server.HandlerOptions{})
	mounted := host.Mount(with, "/api/bridge/xyz/a2a")
	host.Handle("/api/bridge/xyz/a2a", mounted)
	host.Add(without)
	lookup := func(name string) (*server.AgentHandler, bool) {
		if name == "with" {
			return with, true
		}
		return host.Handler(name)
	}
	host.Handle(server.AttachmentContentPattern, server.NewAttachmentHandler(st, lookup, testutil.Logger()))
	ts := testutil.ServeDrained(t, host, eng.Close)
	send := func(path string) (art, hist map[string]any) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": map[string]any{
			"message": map[string]any{"kind": "message", "role": "user", "messageId": a2a.NewID(), "parts": []any{map[string]any{"kind": "text", "text": "go"}}}}})
		resp, err := http.Post(ts.URL+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out struct {
			Result struct {
				Status struct {
					State string `json:"state"`
				} `json:"status"`
				History []struct {
					Parts []map[string]any `json:"parts"`
				} `json:"history"`
				Artifacts []struct {
					Parts []map[string]any `json:"parts"`
				} `json:"artifacts"`
			} `json:"result"`
			Error any `json:"error"`
		}
		if err := json.Unmarshal(raw, &out, json.RejectUnknownMembers(false)); err != nil || out.Error != nil {
			t.Fatalf("message/send: %v %v", err, out.Error)
		}
		r := out.Result
		if r.Status.State != "completed" || len(r.Artifacts) != 1 || len(r.Artifacts[0].Parts) != 2 || len(r.History) < 2 {
			t.Fatalf("task: %+v", r)
		}
		hp := r.History[len(r.History)-1].Parts
		if len(hp) != 2 {
			t.Fatalf("history: %+v", r.History)
		}
		return r.Artifacts[0].Parts[1]["file"].(map[string]any), hp[1]["file"].(map[string]any)
	}
	art, hist := send("/api/bridge/xyz/a2a")
	if err := <-tooLarge; !errors.Is(err, server.ErrAttachmentTooLarge) || !strings.Contains(err.Error(), "65 bytes") {
		t.Fatalf("too large: %v", err)
	}
	uri, _ := art["uri"].(string)
	if art["bytes"] != nil || !strings.HasPrefix(uri, ts.URL+server.AttachmentsPath+"/") || art["name"] != "out.txt" || art["mimeType"] != "text/plain" {
		t.Fatalf("artifact file part: %+v", art)
	}
	if hist["uri"] != uri {
		t.Fatalf("history file part: %+v", hist)
	}
	resp, err := http.Get(uri)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || b.String() != "produced" || resp.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("GET %s: %d %q %q", uri, resp.StatusCode, b.String(), resp.Header.Get("Content-Type"))
	}

	art, _ = send("/a2a/without")
	if art["bytes"] != base64.StdEncoding.EncodeToString([]byte("produced")) || art["uri"] != nil {
		t.Fatalf("without attachments: %+v", art)
	}
	if err := <-tooLarge; err != nil {
		t.Fatalf("without attachments, StoreFiles: %v", err)
	}
}
