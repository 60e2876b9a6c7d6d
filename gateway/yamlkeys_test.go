package gateway

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/internal/yamlkeys"
	"go.yaml.in/yaml/v3"
)

// yamlkeys.CheckKeys follows the types: tags, lowercased untagged names, inline
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
		Dur      Duration         `yaml:"dur"`
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
		err := yamlkeys.CheckKeys(&n, reflect.TypeFor[doc](), "")
		if (want == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

// FuzzServeConfigKeys: yamlkeys.CheckKeys never panics, and a key it reports is one
// yaml.v3's own strict decoder refuses too.
func FuzzServeConfigKeys(f *testing.F) {
	for _, s := range []string{
		"addr: x\npush:\n  enabled: true\n  allow: [a]\n",
		"agents:\n  echo:\n    extended_card:\n      skills:\n        - id: x\n          nmae: y\n",
		"pusj: 1", "auth: {jwt: {jwks: x}}", "<<: {addr: x}", "a: &a {b: *a}", "[1, 2]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var n yaml.Node
		if yaml.Unmarshal(raw, &n) != nil {
			return
		}
		ke := yamlkeys.CheckKeys(&n, reflect.TypeFor[Config](), "")
		if ke == nil {
			return
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		dec.KnownFields(true)
		var sf Config
		if err := dec.Decode(&sf); err == nil {
			t.Fatalf("yamlkeys.CheckKeys reported %v; the strict decoder accepted %q", ke, raw)
		}
	})
}
