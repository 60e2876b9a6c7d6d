package readme

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// snippet is one ```go block of a Markdown document and the line it starts on.
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

// docFiles returns README.md and every Markdown file under docs/, as
// paths relative to root (slash-separated), sorted.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files[1:])
	return files
}

// TestREADMESnippetsCompile builds every Go snippet of README.md and of
// the Markdown files under docs/ as a package of this module (through a
// build overlay: nothing is written into the tree). A snippet that is not
// a complete file fails.
func TestREADMESnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs []string
	total := 0
	perFile := map[string]int{}
	for _, file := range docFiles(t, root) {
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		snips := goSnippets(md)
		total += len(snips)
		perFile[file] = len(snips)
		for _, s := range snips {
			if !strings.HasPrefix(s.code, "package ") {
				t.Errorf("%s:%d: a Go snippet must be a complete file (package clause, imports), so that it compiles as printed", file, s.line)
				continue
			}
			// The snippet's file and line are in its directory name, so an
			// error names it.
			name := "snippet_" + snippetDirName(file) + "_line" + strconv.Itoa(s.line)
			dir := filepath.Join(root, "internal", "readme", name)
			src := filepath.Join(tmp, strconv.Itoa(len(pkgs))+".go")
			if err := os.WriteFile(src, []byte(s.code), 0o600); err != nil {
				t.Fatal(err)
			}
			overlay[filepath.Join(dir, "main.go")] = src
			pkgs = append(pkgs, "./internal/readme/"+name)
		}
	}
	// The guides whose Go code must be read here: a snippet lost (or a
	// file no longer scanned) fails.
	for _, f := range []string{"docs/guides/writing-an-agent-in-go.md", "docs/guides/calling-agents.md", "docs/guides/embedding-the-gateway.md"} {
		if perFile[f] == 0 {
			t.Errorf("%s has no Go snippet compiled here (%d in all)", f, total)
		}
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
		t.Fatalf("Go snippets of the docs do not compile (a directory snippet_FILE_lineN is the snippet starting at line N of FILE, its path with _ for /, . and -):\n%s", out)
	}
}

// snippetDirName turns a doc's path into a piece of a directory name:
// "docs/guides/x-y.md" → "docs_guides_x_y".
func snippetDirName(file string) string {
	return strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(strings.TrimSuffix(file, ".md"))
}
