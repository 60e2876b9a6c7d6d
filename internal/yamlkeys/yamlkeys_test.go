package yamlkeys

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// custom decodes itself: CheckKeys does not enter it.
type custom struct{ node yaml.Node }

func (c *custom) UnmarshalYAML(n *yaml.Node) error { c.node = *n; return nil }

// CheckKeys follows the types: tags, lowercased untagged names, inline
// structs, maps, slices, pointers, and stops at custom unmarshalers.
func TestCheckKeysReflection(t *testing.T) {
	type inner struct {
		Name string `yaml:"name"`
	}
	type embedded struct {
		Extra string `yaml:"extra"`
	}
	type doc struct {
		Plain    string
		Tagged   int `yaml:"tagged,omitempty"`
		Skip     int `yaml:"-"`
		embedded `yaml:",inline"`
		Ptr      *inner           `yaml:"ptr"`
		Map      map[string]inner `yaml:"map"`
		List     []inner          `yaml:"list"`
		Dur      custom           `yaml:"dur"`
	}
	for body, want := range map[string]string{
		"plain: a\ntagged: 1\nextra: x\nptr: {name: n}\nmap: {k: {name: n}}\nlist: [{name: n}]\ndur: {anything: 1}\n": "",
		"skip: 1\n":                    `1: unknown key "skip"`,
		"ptr:\n  nme: x\n":             `2: unknown key "nme" in ptr: did you mean "name"?`,
		"map:\n  k:\n    nam: x\n":     `3: unknown key "nam" in map.k: did you mean "name"?`,
		"list:\n  - name: a\n  - x: 1": `3: unknown key "x" in list[1] (valid keys: name)`,
		"a: &x {name: 1}\nptr: *x\n":   `1: unknown key "a"`,
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(body), &n); err != nil {
			t.Fatal(err)
		}
		err := CheckKeys(&n, reflect.TypeFor[doc](), "")
		if (want == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}
