package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/postgres"
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

// TestHealthProbes: /healthz answers while the process
// serves; /readyz answers 200 while the engine takes messages and its
// store answers, 503 with a reason (not the store's error) when the store
// does not, and 503 "draining" once Shutdown began; HEAD gets no body.
func TestHealthProbes(t *testing.T) {
	st := &pingStore{Store: memory.New()}
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
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
		resp, b := testutil.Do(t, testutil.NewRequest(t, context.Background(), method, srv.URL+path, ""))
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

// TestReadyzPostgresUnreachable (with a real PostgreSQL): a
// server whose database becomes unreachable (its connections cut) is
// not ready, and is ready again once the database is back; liveness
// stays.
func TestReadyzPostgresUnreachable(t *testing.T) {
	dsn := pgtest.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// The schema is made first, directly: through the proxy, Open has
	// twice the short connect_timeout below for everything it does.
	direct, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	direct.Close()
	proxy := testutil.StartProxy(t, u.Host)
	u.Host = proxy.Addr()
	q := u.Query()
	q.Set("connect_timeout", "1")
	u.RawQuery = q.Encode()
	st, err := postgres.Open(context.Background(), u.String(), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng, err := server.NewEngine(context.Background(), st, server.EngineOptions{Logger: testutil.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	srv := httptest.NewServer(server.HealthHandler(eng))
	defer srv.Close()
	code := func(path string) int {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := code("/readyz"); c != 200 {
		t.Fatalf("readyz with the database up: %d", c)
	}
	proxy.Refuse(true)
	if c := code("/readyz"); c != 503 {
		t.Fatalf("readyz with the database cut off: %d, want 503", c)
	}
	if c := code("/healthz"); c != 200 {
		t.Fatalf("healthz with the database cut off: %d, want 200", c)
	}
	proxy.Refuse(false)
	testutil.Eventually(t, 10*time.Second, "readyz 200 once the database is back", func() bool { return code("/readyz") == 200 })
}
