package cli

import (
	"os"
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
