// Command otlpsink is the OTLP receiver of the benchmark's telemetry
// target: an OTLP/HTTP endpoint (POST /v1/traces, /v1/metrics, /v1/logs)
// that reads each export request to its end and answers 200 with an empty
// protobuf body (an export response with nothing rejected), written with
// net/http only. It does not decode what it gets: it stands for a
// collector that accepts everything, so what is measured is the cost of
// exporting in the server, not of receiving.
//
// Usage: otlpsink [--addr 127.0.0.1:0]. It prints `listening on
// http://ADDR` and serves until SIGINT/SIGTERM.
package main

import (
	"io"
	"net/http"

	"github.com/a2abridge/a2abridge/bench/servers/internal/peer"
)

func handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case "/v1/traces", "/v1/metrics", "/v1/logs":
	default:
		http.NotFound(w, r)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func main() {
	ln, _ := peer.Listen("otlpsink")
	peer.Serve("otlpsink", ln, &http.Server{Handler: http.HandlerFunc(handle)})
}
