package schema

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed a2a-v1.0.1.json
var raw10 []byte

// The 1.0.1 bundle's definitions refer to each other by file name
// ("lf.a2a.v1.Task.jsonschema.json"): each is registered as a resource
// under base10 + that name.
const base10 = "https://a2a.invalid/schema/v1/"

var bundle10 = &bundle{version: Version10, load: load10}

// JSON10 returns the embedded A2A 1.0.1 schema bundle.
func JSON10() []byte { return bytes.Clone(raw10) }

// Definitions10 returns the names of the A2A 1.0.1 definitions (proto
// message names, "StreamResponse"), sorted.
func Definitions10() []string { return bundle10.definitions() }

// Validate10 reports whether doc is a valid instance of the A2A 1.0.1
// definition named definition, by its proto message name ("Task",
// "SendMessageResponse", "StreamResponse", "AgentCard") or its title
// ("Stream Response"). The bundle is ProtoJSON's (A2A 1.0 §5.5): members
// by JSON or proto name, none required (A2A 1.0 §5.7 requires those a2a.proto
// marks REQUIRED; the schema does not say which), unknown members
// rejected, timestamps in RFC 3339. It returns nil if doc is valid, an
// *Error listing the violations if it is not, and another error if doc is
// not JSON or the definition does not exist.
func Validate10(definition string, doc []byte) error {
	return bundle10.validate(strings.ReplaceAll(definition, " ", ""), doc)
}

// load10 compiles the 1.0.1 bundle (draft 2020-12, formats asserted): each
// definition is a resource of its own under base10.
func load10() (*jsonschema.Compiler, map[string]string, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw10))
	if err != nil {
		return nil, nil, fmt.Errorf("schema: parsing the embedded A2A %s schema: %w", Version10, err)
	}
	obj, _ := doc.(map[string]any)
	defs, _ := obj["definitions"].(map[string]any)
	if len(defs) == 0 {
		return nil, nil, fmt.Errorf("schema: the embedded A2A %s schema has no definitions", Version10)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	names := map[string]string{}
	for title, def := range defs {
		name := strings.ReplaceAll(title, " ", "")
		pkg := "lf.a2a.v1."
		if name == "Struct" || name == "Timestamp" || name == "Value" {
			pkg = "google.protobuf."
		}
		url := base10 + pkg + name + ".jsonschema.json"
		if err := c.AddResource(url, def); err != nil {
			return nil, nil, fmt.Errorf("schema: %s: %w", title, err)
		}
		names[name] = url
	}
	return c, names, nil
}
