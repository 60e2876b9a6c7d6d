// Command baseline is the floor of the benchmark: a plain net/http handler
// with encoding/json and no A2A machinery. It decodes each JSON-RPC request
// and answers with what an echo agent answers, built directly:
//
//   - message/send: a completed Task whose history is the message and whose
//     artifact "echo" repeats its parts;
//   - message/stream: SSE with the same three events a2abridge's echo sends
//     for a short text: the Task (submitted), an artifact-update, and a final
//     completed status-update.
//
// Nothing is stored: it measures HTTP, JSON and SSE, not task handling.
//
// Usage: baseline [--addr 127.0.0.1:0]. It prints `listening on http://ADDR`
// and serves POST /a2a/echo (and any other path) until SIGINT/SIGTERM.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

type part struct {
	Kind     string          `json:"kind"`
	Text     string          `json:"text,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	File     json.RawMessage `json:"file,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

type message struct {
	Kind      string `json:"kind"`
	Role      string `json:"role"`
	MessageID string `json:"messageId"`
	Parts     []part `json:"parts"`
	ContextID string `json:"contextId,omitempty"`
	TaskID    string `json:"taskId,omitempty"`
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Message message `json:"message"`
	} `json:"params"`
}

type status struct {
	State     string `json:"state"`
	Timestamp string `json:"timestamp"`
}

type artifact struct {
	ArtifactID string `json:"artifactId"`
	Name       string `json:"name"`
	Parts      []part `json:"parts"`
}

type task struct {
	Kind      string     `json:"kind"`
	ID        string     `json:"id"`
	ContextID string     `json:"contextId"`
	Status    status     `json:"status"`
	History   []message  `json:"history,omitempty"`
	Artifacts []artifact `json:"artifacts,omitempty"`
}

type artifactUpdate struct {
	Kind      string   `json:"kind"`
	TaskID    string   `json:"taskId"`
	ContextID string   `json:"contextId"`
	Artifact  artifact `json:"artifact"`
	Append    bool     `json:"append"`
	LastChunk bool     `json:"lastChunk"`
}

type statusUpdate struct {
	Kind      string `json:"kind"`
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId"`
	Status    status `json:"status"`
	Final     bool   `json:"final"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   any             `json:"error,omitempty"`
}

// ids are unique per process: a random prefix and a counter, in UUID form.
var (
	idPrefix = func() string {
		var b [8]byte
		_, _ = rand.Read(b[:])
		h := hex.EncodeToString(b[:])
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-"
	}()
	idSeq atomic.Uint64
)

func newID() string {
	n := idSeq.Add(1)
	s := strconv.FormatUint(n, 16)
	for len(s) < 16 {
		s = "0" + s
	}
	return idPrefix + s[:4] + "-" + s[4:]
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: map[string]any{"code": -32700, "message": "Parse error"}})
		return
	}
	m := req.Params.Message
	t := task{Kind: "task", ID: newID(), ContextID: m.ContextID, Status: status{State: "submitted", Timestamp: now()}}
	if t.ContextID == "" {
		t.ContextID = newID()
	}
	m.TaskID, m.ContextID = t.ID, t.ContextID
	t.History = []message{m}
	art := artifact{ArtifactID: newID(), Name: "echo", Parts: m.Parts}
	switch req.Method {
	case "message/send":
		t.Status = status{State: "completed", Timestamp: now()}
		t.Artifacts = []artifact{art}
		writeJSON(w, response{JSONRPC: "2.0", ID: req.ID, Result: t})
	case "message/stream":
		f, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "no streaming", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		events := []any{
			t,
			artifactUpdate{Kind: "artifact-update", TaskID: t.ID, ContextID: t.ContextID, Artifact: art, LastChunk: true},
			statusUpdate{Kind: "status-update", TaskID: t.ID, ContextID: t.ContextID, Status: status{State: "completed", Timestamp: now()}, Final: true},
		}
		for i, ev := range events {
			b, err := json.Marshal(response{JSONRPC: "2.0", ID: req.ID, Result: ev})
			if err != nil {
				return
			}
			fmt.Fprintf(w, "id: %d\ndata: %s\n\n", i+1, b)
			f.Flush()
		}
	default:
		writeJSON(w, response{JSONRPC: "2.0", ID: req.ID, Error: map[string]any{"code": -32601, "message": "Method not found"}})
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: http.HandlerFunc(handle), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Printf("listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}
