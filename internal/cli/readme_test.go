package cli

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// configKeys lists the dotted paths of every key of the serve config file
// type t: a map level is NAME, a list of mappings is [], and an agent's auth
// block (the same keys as the top-level one) is not descended into.
func configKeys(t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for key, ft := range yamlFields(t) {
		p := joinPath(path, key)
		out = append(out, p)
		if p == "agents.NAME.auth" {
			continue
		}
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			out = append(out, configKeys(ft, p)...)
		case ft.Kind() == reflect.Map && ft.Elem() == reflect.TypeFor[agentFile]():
			// An agent's keys: the common ones and every kind's.
			out = append(out, configKeys(reflect.TypeFor[agentCommonKeys](), p+".NAME")...)
			for _, k := range kinds {
				if k.config != nil {
					out = append(out, configKeys(k.config, p+".NAME")...)
				}
			}
			out = slices.Compact(slices.Sorted(slices.Values(out)))
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			out = append(out, configKeys(ft.Elem(), p+".NAME")...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, configKeys(ft.Elem(), p+"[]")...)
		}
	}
	slices.Sort(out)
	return out
}

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
	keys := configKeys(reflect.TypeFor[serveFile](), "")
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
