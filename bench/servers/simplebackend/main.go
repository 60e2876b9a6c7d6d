// Command simplebackend is the backend of the benchmark's bridge-http
// target: a minimal HTTP service in the simple dialect (what an `http`
// agent of `a2abridge serve --config` calls), written with net/http and
// encoding/json only. Every POST, whatever its path,
//
//	{"task_id": "…", "input": …}
//
// is answered 200
//
//	{"task_id": "…", "status": "success", "output": …, "error": null}
//
// with the input echoed as the output, byte for byte (an `http` agent
// sends a text message as {"text": "…"} and maps that output back to a
// TextPart, so the bridged agent answers like an echo agent). A body that
// is not such a request is answered 400; other methods 405.
//
// Usage: simplebackend [--addr 127.0.0.1:0]. It prints `listening on
// http://ADDR` and serves until SIGINT/SIGTERM.
package main

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/a2abridge/a2abridge/bench/servers/internal/peer"
)

// request is the simple dialect's request; input is kept as it came.
type request struct {
	TaskID string          `json:"task_id"`
	Input  json.RawMessage `json:"input"`
}

// response is the simple dialect's answer.
type response struct {
	TaskID string          `json:"task_id"`
	Status string          `json:"status"`
	Output json.RawMessage `json:"output"`
	Error  *string         `json:"error"`
}

func handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil || req.TaskID == "" {
		http.Error(w, `want {"task_id": "…", "input": …}`, http.StatusBadRequest)
		return
	}
	out := req.Input
	if len(out) == 0 {
		out = json.RawMessage("null")
	}
	b, err := json.Marshal(response{TaskID: req.TaskID, Status: "success", Output: out})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func main() {
	ln, _ := peer.Listen("simplebackend")
	peer.Serve("simplebackend", ln, &http.Server{Handler: http.HandlerFunc(handle)})
}
