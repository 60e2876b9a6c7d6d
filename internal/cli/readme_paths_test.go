package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEExamplePaths: the files the commands of README.md and of the
// Markdown files under docs/ read exist: the FILE of every `a2abridge
// scenario encode FILE` and every examples/… path they name (relative to
// the repository's root, where their commands are run).
func TestREADMEExamplePaths(t *testing.T) {
	doc := readDocs(t)
	var paths []string
	for _, m := range regexp.MustCompile(`a2abridge scenario encode ([^\s)"']+)`).FindAllStringSubmatch(doc, -1) {
		paths = append(paths, m[1])
	}
	if len(paths) == 0 {
		t.Fatal("neither README.md nor docs/ has an `a2abridge scenario encode FILE`")
	}
	for _, m := range regexp.MustCompile(`(?:^|[\s(`+"`"+`])(examples/[A-Za-z0-9_./-]*[A-Za-z0-9_])`).FindAllStringSubmatch(doc, -1) {
		paths = append(paths, m[1])
	}
	for _, p := range paths {
		if strings.ContainsAny(p, "$*…") || p == strings.ToUpper(p) {
			continue // a placeholder ($NAME, …, or a usage line's FILE)
		}
		if _, err := os.Stat(filepath.Join("../..", filepath.FromSlash(p))); err != nil {
			t.Errorf("the docs name %s, which does not exist: %v", p, err)
		}
	}
}

// readDocs returns README.md and every Markdown file under docs/, one
// after the other.
func readDocs(t *testing.T) string {
	t.Helper()
	files := []string{"../../README.md"}
	err := filepath.WalkDir("../../docs", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range files {
		md, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(md)
		b.WriteByte('\n')
	}
	return b.String()
}
