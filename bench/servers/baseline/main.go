// Command baseline is the floor of the benchmark: a plain net/http handler
// with encoding/json and no A2A machinery. It decodes each request and
// answers with what an echo agent answers, built directly, in the shapes
// of the request's protocol version and binding:
//
//   - A2A 0.3 JSON-RPC, POST /a2a/echo: message/send answers a completed
//     Task whose history is the message and whose artifact "echo" repeats
//     its parts; message/stream answers SSE with the same three events
//     a2abridge's echo sends for a short text: the Task (submitted), an
//     artifact-update, and a final completed status-update.
//   - A2A 1.0 JSON-RPC, POST /a2a/echo: SendMessage and
//     SendStreamingMessage, the same in ProtoJSON shapes ({"task":…},
//     {"artifactUpdate":…}, {"statusUpdate":…}; TASK_STATE_COMPLETED).
//   - A2A 1.0 HTTP+JSON, POST /a2a/echo/message:send and
//     /a2a/echo/message:stream: the same without the JSON-RPC envelope.
//
// Nothing is stored: it measures HTTP, JSON and SSE, not task handling.
//
// Usage: baseline [--addr 127.0.0.1:0]. It prints `listening on http://ADDR`
// and serves POST /a2a/echo (and any other path) until SIGINT/SIGTERM.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2abridge/a2abridge/bench/servers/internal/peer"
)

// part and message decode both versions' shapes (0.3: "kind", role
// "user"; 1.0: no kind, role "ROLE_USER", raw/url parts) and echo them as
// they came.
type part struct {
	Kind      string          `json:"kind,omitempty"`
	Text      string          `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	File      json.RawMessage `json:"file,omitempty"`
	Raw       string          `json:"raw,omitempty"`
	URL       string          `json:"url,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

type message struct {
	Kind      string `json:"kind,omitempty"`
	Role      string `json:"role"`
	MessageID string `json:"messageId"`
	Parts     []part `json:"parts"`
	ContextID string `json:"contextId,omitempty"`
	TaskID    string `json:"taskId,omitempty"`
}

// sendParams is the params of every send method, and the body of the
// REST sends.
type sendParams struct {
	Message message `json:"message"`
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  sendParams      `json:"params"`
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
	Kind      string     `json:"kind,omitempty"`
	ID        string     `json:"id"`
	ContextID string     `json:"contextId"`
	Status    status     `json:"status"`
	History   []message  `json:"history,omitempty"`
	Artifacts []artifact `json:"artifacts,omitempty"`
}

// A2A 0.3 stream events.
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

// A2A 1.0 stream events (ProtoJSON: no kind, false omitted, no final).
type artifactUpdate10 struct {
	TaskID    string   `json:"taskId"`
	ContextID string   `json:"contextId"`
	Artifact  artifact `json:"artifact"`
	LastChunk bool     `json:"lastChunk,omitempty"`
}

type statusUpdate10 struct {
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId"`
	Status    status `json:"status"`
}

// streamResponse10 is an A2A 1.0 SendMessageResponse or StreamResponse:
// one member set.
type streamResponse10 struct {
	Task           *task             `json:"task,omitempty"`
	ArtifactUpdate *artifactUpdate10 `json:"artifactUpdate,omitempty"`
	StatusUpdate   *statusUpdate10   `json:"statusUpdate,omitempty"`
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

// call is one request: its method, and how answers are framed.
type call struct {
	id     json.RawMessage
	rest   bool // HTTP+JSON: answers without the JSON-RPC envelope
	v10    bool
	stream bool
}

// reply frames result as the call's binding does.
func (c call) reply(result any) any {
	if c.rest {
		return result
	}
	return response{JSONRPC: "2.0", ID: c.id, Result: result}
}

// state is the name of a task state in the call's version.
func (c call) state(v03, v10 string) string {
	if c.v10 {
		return v10
	}
	return v03
}

// methods maps the send methods to their version and whether they stream.
var methods = map[string]call{
	"message/send": {}, "message/stream": {stream: true},
	"SendMessage": {v10: true}, "SendStreamingMessage": {v10: true, stream: true},
}

func handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var c call
	var p sendParams
	switch {
	case strings.HasSuffix(r.URL.Path, "/message:send"), strings.HasSuffix(r.URL.Path, "/message:stream"):
		c = call{rest: true, v10: true, stream: strings.HasSuffix(r.URL.Path, ":stream")}
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": 400, "status": "INVALID_ARGUMENT", "message": err.Error()}})
			return
		}
	default:
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeJSON(w, response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: map[string]any{"code": -32700, "message": "Parse error"}})
			return
		}
		var ok bool
		if c, ok = methods[req.Method]; !ok {
			writeJSON(w, response{JSONRPC: "2.0", ID: req.ID, Error: map[string]any{"code": -32601, "message": "Method not found"}})
			return
		}
		c.id, p = req.ID, req.Params
	}
	echo(w, c, p.Message)
}

// echo answers m as an echo agent would: a completed Task echoing its
// parts, or a stream of the submitted Task, the artifact and the
// completed status.
func echo(w http.ResponseWriter, c call, m message) {
	t := task{ID: newID(), ContextID: m.ContextID, Status: status{State: c.state("submitted", "TASK_STATE_SUBMITTED"), Timestamp: now()}}
	if !c.v10 {
		t.Kind = "task"
	}
	if t.ContextID == "" {
		t.ContextID = newID()
	}
	m.TaskID, m.ContextID = t.ID, t.ContextID
	t.History = []message{m}
	art := artifact{ArtifactID: newID(), Name: "echo", Parts: m.Parts}
	done := status{State: c.state("completed", "TASK_STATE_COMPLETED"), Timestamp: now()}
	if !c.stream {
		t.Status, t.Artifacts = done, []artifact{art}
		if c.v10 {
			writeJSON(w, c.reply(streamResponse10{Task: &t}))
		} else {
			writeJSON(w, c.reply(t))
		}
		return
	}
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
		statusUpdate{Kind: "status-update", TaskID: t.ID, ContextID: t.ContextID, Status: done, Final: true},
	}
	if c.v10 {
		events = []any{
			streamResponse10{Task: &t},
			streamResponse10{ArtifactUpdate: &artifactUpdate10{TaskID: t.ID, ContextID: t.ContextID, Artifact: art, LastChunk: true}},
			streamResponse10{StatusUpdate: &statusUpdate10{TaskID: t.ID, ContextID: t.ContextID, Status: done}},
		}
	}
	for i, ev := range events {
		b, err := json.Marshal(c.reply(ev))
		if err != nil {
			return
		}
		fmt.Fprintf(w, "id: %d\ndata: %s\n\n", i+1, b)
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func main() {
	ln, _ := peer.Listen("baseline")
	peer.Serve("baseline", ln, &http.Server{Handler: http.HandlerFunc(handle)})
}
