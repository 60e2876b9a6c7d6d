package cli

import (
	"net/http"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/internal/testutil"
)

// TestServeHealthProbes: serve answers GET /healthz and
// GET /readyz without authentication, beside agents that require it.
func TestServeHealthProbes(t *testing.T) {
	base := startServe(t, "--auth-token", "alice=s3cret")
	for path, want := range map[string]string{"/healthz": `{"status":"ok"}`, "/readyz": `{"status":"ready"}`} {
		resp, b := testutil.Get(t, base+path)
		if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != want {
			t.Errorf("GET %s: %d %q, want 200 %s", path, resp.StatusCode, b, want)
		}
	}
}
