package gateway

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/testutil"
)

// TestExampleConfigs loads every config file under examples/ (with the
// environment variables they reference set) and builds each of their
// agents, so that the examples the docs point to stay valid: every key
// known, every kind's configuration accepted.
func TestExampleConfigs(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.yaml")
	more, _ := filepath.Glob("../examples/*/*.yaml")
	files = append(files, more...)
	if len(files) < 6 {
		t.Fatalf("found only %d example configs: %v", len(files), files)
	}
	ref := regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	log := testutil.Logger()
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ref.FindAllStringSubmatch(string(raw), -1) {
				t.Setenv(m[1], "example-value")
			}
			file, err := LoadConfig(f)
			if err != nil {
				t.Fatal(err)
			}
			for name, af := range file.Agents {
				// A remote agent's card is fetched at build time: not here.
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				b, err := buildAgent(ctx, log, name, &af, file.agentNodes[name])
				cancel()
				if err != nil {
					t.Fatalf("agent %s: %v", name, err)
				}
				if b.Close != nil {
					b.Close()
				}
			}
		})
	}
}
