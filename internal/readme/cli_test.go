package readme

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCLIReference: docs/reference/cli.md is what docs/reference/gen-cli.sh
// makes of the help of every a2abridge command today, so that the CLI
// reference cannot drift from the binary. After changing a command or a
// flag, run: bash docs/reference/gen-cli.sh
func TestCLIReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "docs", "reference", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "cli.md")
	cmd := exec.Command("bash", filepath.Join(root, "docs", "reference", "gen-cli.sh"), out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-cli.sh: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range max(len(gl), len(wl)) {
			var g, w []byte
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if !bytes.Equal(g, w) {
				t.Fatalf("docs/reference/cli.md is not the help of the commands today (run bash docs/reference/gen-cli.sh); first difference at line %d:\n  cli.md: %s\n  help:   %s", i+1, w, g)
			}
		}
	}
}
