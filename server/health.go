package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2abridge/a2abridge/store"
)

// ErrDraining is what Engine.Ready returns once Shutdown or Close began:
// the engine refuses new messages.
var ErrDraining = errors.New("server: the engine is shutting down")

// Ready reports whether the engine takes new messages: nil
// while it serves and its store answers; ErrDraining once Shutdown or
// Close began; the store's error (wrapped, "store: …") when the store is
// a store.Pinger whose Ping fails within ctx. The store's schema was
// created or upgraded when it was opened, before the engine existed.
func (e *Engine) Ready(ctx context.Context) error {
	if e.e.Draining() {
		return ErrDraining
	}
	if p, ok := e.e.Store().(store.Pinger); ok {
		if err := p.Ping(ctx); err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	return nil
}

// readyTimeout bounds the store's Ping of one readiness probe.
const readyTimeout = 2 * time.Second

// HealthHandler answers the probes of a load balancer or of Kubernetes,
// mounted at GET /healthz and GET /readyz (serve does; a Host's Handle
// mounts it in a program of one's own):
//
//   - a path ending in /readyz is the readiness probe: HTTP 200
//     {"status":"ready"} while e.Ready is nil (it takes new messages and
//     its store answers within 2 s), else HTTP 503
//     {"status":"unavailable","reason":"draining"} or
//     {"status":"unavailable","reason":"store unreachable"}; the store's
//     error is logged (at warn, when readiness is lost; not in the body,
//     which a probe may show to anyone);
//   - any other path is the liveness probe: HTTP 200 {"status":"ok"}
//     while the process serves HTTP at all.
//
// Answers are JSON (Content-Type: application/json) and not to be cached
// (Cache-Control: no-store); a HEAD request gets the status and headers
// only. No authentication is asked: the probes tell nothing of the
// agents or their tasks.
func HealthHandler(e *Engine) http.Handler {
	var lost atomic.Bool // readiness was lost: logged once until it is back
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, body := http.StatusOK, `{"status":"ok"}`
		if strings.HasSuffix(r.URL.Path, "/readyz") {
			ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
			err := e.Ready(ctx)
			cancel()
			switch {
			case err == nil:
				body = `{"status":"ready"}`
				if lost.Swap(false) {
					e.e.Log().Info("ready again: the store answers")
				}
			case errors.Is(err, ErrDraining):
				status, body = http.StatusServiceUnavailable, `{"status":"unavailable","reason":"draining"}`
			default:
				status, body = http.StatusServiceUnavailable, `{"status":"unavailable","reason":"store unreachable"}`
				if !lost.Swap(true) {
					e.e.Log().Warn("not ready: the store does not answer", "err", err)
				}
			}
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte(body + "\n"))
		}
	})
}
