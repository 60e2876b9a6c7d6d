package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/gateway"
)

// TestREADMEConfigReference: every key of the serve config file is in the
// configuration reference, docs/reference/configuration.md (a table row
// starting with the key), and every key there exists.
func TestREADMEConfigReference(t *testing.T) {
	md, err := os.ReadFile("../../docs/reference/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(md)
	i := strings.Index(doc, "# Configuration reference")
	if i < 0 {
		t.Fatal("docs/reference/configuration.md has no configuration reference section")
	}
	section := doc[i+1:]
	if j := strings.Index(section, "\n#"); j >= 0 {
		section = section[:j]
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if k, ok := strings.CutPrefix(line, "| `"); ok {
			if k, _, ok := strings.Cut(k, "`"); ok {
				documented[k] = true
			}
		}
	}
	keys := gateway.ConfigKeys()
	if len(keys) < 20 {
		t.Fatalf("found only %d config keys: %v", len(keys), keys)
	}
	for _, k := range keys {
		// A block whose keys are listed needs no row of its own.
		if !documented[k] && !hasChildren(keys, k) {
			t.Errorf("config key %q is missing from the configuration reference (docs/reference/configuration.md)", k)
		}
		delete(documented, k)
	}
	for k := range documented {
		if k != "key" {
			t.Errorf("the configuration reference (docs/reference/configuration.md) lists %q, which is not a config key", k)
		}
	}
}

// hasChildren reports whether some key is below k.
func hasChildren(keys []string, k string) bool {
	return slices.ContainsFunc(keys, func(o string) bool {
		return strings.HasPrefix(o, k+".") || strings.HasPrefix(o, k+"[]")
	})
}

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
