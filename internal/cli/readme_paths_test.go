package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEExamplePaths: the files the README's commands read exist: the
// FILE of every `a2abridge scenario encode FILE` and every examples/…
// path it names (relative to the repository's root, where the README's
// commands are run).
func TestREADMEExamplePaths(t *testing.T) {
	md, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(md)
	var paths []string
	for _, m := range regexp.MustCompile(`a2abridge scenario encode ([^\s)"']+)`).FindAllStringSubmatch(doc, -1) {
		paths = append(paths, m[1])
	}
	if len(paths) == 0 {
		t.Fatal("the README has no `a2abridge scenario encode FILE`")
	}
	for _, m := range regexp.MustCompile(`(?:^|[\s(`+"`"+`])(examples/[A-Za-z0-9_./-]*[A-Za-z0-9_])`).FindAllStringSubmatch(doc, -1) {
		paths = append(paths, m[1])
	}
	for _, p := range paths {
		if strings.ContainsAny(p, "$*…") {
			continue // a placeholder
		}
		if _, err := os.Stat(filepath.Join("../..", filepath.FromSlash(p))); err != nil {
			t.Errorf("the README names %s, which does not exist: %v", p, err)
		}
	}
}
