package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
)

// cardWaits are the agents served under a stand-in card because their
// remote's Agent Card could not be had yet (Built.LateCard): /readyz
// lists them.
type cardWaits struct {
	mu    sync.Mutex
	names map[string]bool
}

func newCardWaits() *cardWaits { return &cardWaits{names: map[string]bool{}} }

// add marks name as waiting for its card.
func (w *cardWaits) add(name string) {
	w.mu.Lock()
	w.names[name] = true
	w.mu.Unlock()
}

// done marks name as served under its card (or no longer hosted).
func (w *cardWaits) done(name string) {
	w.mu.Lock()
	delete(w.names, name)
	w.mu.Unlock()
}

// list returns the waiting agents' names, sorted.
func (w *cardWaits) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.names))
	for n := range w.names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// readiness wraps the readiness probe (server.HealthHandler): a ready
// answer also lists, under "unavailable", the agents waiting for their
// remote's card, which answer with a stand-in card meanwhile. The gateway
// stays ready (HTTP 200): one remote that does not answer must not take
// every other agent out of a load balancer. Only names are given (the
// reasons are logged): the probe is not authenticated.
func readiness(probe http.Handler, waits *cardWaits) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		names := waits.list()
		if len(names) == 0 {
			probe.ServeHTTP(w, r)
			return
		}
		rec := &probeRecorder{header: http.Header{}, code: http.StatusOK}
		probe.ServeHTTP(rec, r)
		body := rec.body.Bytes()
		if rec.code == http.StatusOK {
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				m["unavailable"] = names
				if b, err := json.Marshal(m); err == nil {
					body = append(b, '\n')
				}
			}
		}
		for k, v := range rec.header {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.code)
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	})
}

// probeRecorder keeps a probe's answer (small) to be rewritten.
type probeRecorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (p *probeRecorder) Header() http.Header         { return p.header }
func (p *probeRecorder) WriteHeader(code int)        { p.code = code }
func (p *probeRecorder) Write(b []byte) (int, error) { return p.body.Write(b) }
