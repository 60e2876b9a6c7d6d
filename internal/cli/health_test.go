package cli

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeHealthProbes: serve answers GET /healthz and
// GET /readyz without authentication, beside agents that require it.
func TestServeHealthProbes(t *testing.T) {
	base := startServe(t, "--auth-token", "alice=s3cret")
	for path, want := range map[string]string{"/healthz": `{"status":"ok"}`, "/readyz": `{"status":"ready"}`} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != want {
			t.Errorf("GET %s: %d %q, want 200 %s", path, resp.StatusCode, b, want)
		}
	}
}
