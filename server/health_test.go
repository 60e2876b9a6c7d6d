package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
)

// pingStore is a memory store whose Ping fails while down is set.
type pingStore struct {
	*memory.Store
	down atomic.Bool
}

func (s *pingStore) Ping(ctx context.Context) error {
	if s.down.Load() {
		return errors.New("dial tcp 10.0.0.5:5432: connection refused")
	}
	return nil
}

var _ store.Pinger = (*pingStore)(nil)

// TestHealthProbes (issue 16 §3): /healthz answers while the process
// serves; /readyz answers 200 while the engine takes messages and its
// store answers, 503 with a reason (not the store's error) when the store
// does not, and 503 "draining" once Shutdown began; HEAD gets no body.
func TestHealthProbes(t *testing.T) {
	st := &pingStore{Store: memory.New()}
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	host := server.NewHost(server.HostOptions{})
	health := server.HealthHandler(eng)
	host.Handle("GET /healthz", health)
	host.Handle("GET /readyz", health)
	srv := httptest.NewServer(host)
	defer srv.Close()
	probe := func(method, path string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b)), resp.Header
	}
	check := func(method, path string, wantCode int, wantBody string) {
		t.Helper()
		code, body, h := probe(method, path)
		if code != wantCode || body != wantBody || h.Get("Content-Type") != "application/json" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: %d %q (%s, %s), want %d %q", method, path, code, body, h.Get("Content-Type"), h.Get("Cache-Control"), wantCode, wantBody)
		}
	}
	check("GET", "/healthz", 200, `{"status":"ok"}`)
	check("GET", "/readyz", 200, `{"status":"ready"}`)
	check("HEAD", "/readyz", 200, "")
	st.down.Store(true)
	check("GET", "/readyz", 503, `{"status":"unavailable","reason":"store unreachable"}`)
	check("GET", "/healthz", 200, `{"status":"ok"}`)
	if err := eng.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Ready with the store down: %v", err)
	}
	st.down.Store(false)
	check("GET", "/readyz", 200, `{"status":"ready"}`)
	if code, _, _ := probe("POST", "/readyz"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /readyz: %d, want 405", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := eng.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	check("GET", "/readyz", 503, `{"status":"unavailable","reason":"draining"}`)
	if err := eng.Ready(context.Background()); !errors.Is(err, server.ErrDraining) {
		t.Errorf("Ready after Shutdown: %v, want ErrDraining", err)
	}
	check("GET", "/healthz", 200, `{"status":"ok"}`)
}
