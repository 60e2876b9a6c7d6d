package readme

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// snippet is one ```go block of the README and the line it starts on.
type snippet struct {
	line int
	code string
}

// goSnippets returns the ```go blocks of a Markdown document.
func goSnippets(md []byte) []snippet {
	var out []snippet
	var cur *snippet
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &snippet{line: n + 1}
			b.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.code = b.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return out
}

func TestGoSnippets(t *testing.T) {
	got := goSnippets([]byte("text\n```go\npackage a\n```\n```sh\nls\n```\n  ```go\npackage b\n\nfunc f() {}\n  ```\n"))
	if len(got) != 2 || got[0].line != 3 || got[0].code != "package a\n" || got[1].code != "package b\n\nfunc f() {}\n" {
		t.Fatalf("goSnippets: %+v", got)
	}
}

// TestREADMESnippetsCompile builds every Go snippet of README.md as a
// package of this module (through a build overlay: nothing is written
// into the tree). A snippet that is not a complete file fails.
func TestREADMESnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	snips := goSnippets(md)
	if len(snips) < 2 {
		t.Fatalf("README.md has %d Go snippets; the test expects the client and the agent ones at least", len(snips))
	}
	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs []string
	for i, s := range snips {
		if !strings.HasPrefix(s.code, "package ") {
			t.Errorf("README.md:%d: a Go snippet must be a complete file (package clause, imports), so that it compiles as printed", s.line)
			continue
		}
		// The snippet's line is in its directory name, so an error names it.
		dir := filepath.Join(root, "internal", "readme", "snippet_line"+strconv.Itoa(s.line))
		src := filepath.Join(tmp, strconv.Itoa(i)+".go")
		if err := os.WriteFile(src, []byte(s.code), 0o600); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(dir, "main.go")] = src
		pkgs = append(pkgs, "./internal/readme/snippet_line"+strconv.Itoa(s.line))
	}
	if len(pkgs) == 0 {
		return
	}
	ov, _ := json.Marshal(map[string]any{"Replace": overlay})
	ovPath := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"build", "-overlay", ovPath}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("README Go snippets do not compile (a directory snippet_lineN is the snippet starting at README.md line N):\n%s", out)
	}
}
