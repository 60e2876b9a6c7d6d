package gateway

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/a2abridge/a2abridge/internal/yamlkeys"
	"go.yaml.in/yaml/v3"
)

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
