package cli

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestClosestKey(t *testing.T) {
	keys := []string{"addr", "public_url", "data", "memory", "default", "push", "auth", "agents"}
	for key, want := range map[string]string{
		"pusj": "push", "Push": "push", "memroy": "memory", "public-url": "public_url", "publicurl": "public_url",
		"adress": "", "x": "", "agent": "agents", "defualt": "default", "authx": "auth", "ath": "auth", "zzzz": "",
	} {
		if got := closest(key, keys); got != want {
			t.Errorf("closest(%q) = %q, want %q", key, got, want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"ab", "ba", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3}, {"héllo", "hello", 1}} {
		if got := editDistance(c.a, c.b); got != c.d || editDistance(c.b, c.a) != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

// checkKeys follows the types: tags, lowercased untagged names, inline
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
		Dur      duration         `yaml:"dur"`
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
		err := checkKeys(&n, reflect.TypeFor[doc](), "")
		if (want == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

// FuzzServeConfigKeys: checkKeys never panics, and a key it reports is one
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
		ke := checkKeys(&n, reflect.TypeFor[serveFile](), "")
		if ke == nil {
			return
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		dec.KnownFields(true)
		var sf serveFile
		if err := dec.Decode(&sf); err == nil {
			t.Fatalf("checkKeys reported %v; the strict decoder accepted %q", ke, raw)
		}
	})
}
