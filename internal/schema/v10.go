package schema

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed a2a-v1.0.1.json
var raw10 []byte

// The 1.0.1 bundle's definitions refer to each other by file name
// ("lf.a2a.v1.Task.jsonschema.json"): each is registered as a resource
// under base10 + that name.
const base10 = "https://a2a.invalid/schema/v1/"

var (
	load10Once sync.Once
	load10Err  error
	names10    map[string]string // definition name → resource URL

	mu10       sync.Mutex // guards compiler10 and compiled10
	compiler10 *jsonschema.Compiler
	compiled10 = map[string]*jsonschema.Schema{}
)

// JSON10 returns the embedded A2A 1.0.1 schema bundle.
func JSON10() []byte { return bytes.Clone(raw10) }

// Definitions10 returns the names of the A2A 1.0.1 definitions (proto
// message names, "StreamResponse"), sorted.
func Definitions10() []string {
	load10Once.Do(load10)
	names := make([]string, 0, len(names10))
	for k := range names10 {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

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
	name := strings.ReplaceAll(definition, " ", "")
	sch, err := compile10(name)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if err := sch.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return &Error{Version: Version10, Definition: name, Violations: summarize(ve), ve: ve}
		}
		return err
	}
	return nil
}

func compile10(name string) (*jsonschema.Schema, error) {
	load10Once.Do(load10)
	if load10Err != nil {
		return nil, load10Err
	}
	url, ok := names10[name]
	if !ok {
		return nil, fmt.Errorf("schema: no definition %q in the A2A %s schema", name, Version10)
	}
	mu10.Lock()
	defer mu10.Unlock()
	if s, ok := compiled10[name]; ok {
		return s, nil
	}
	s, err := compiler10.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema: compiling definition %q: %w", name, err)
	}
	compiled10[name] = s
	return s, nil
}

func load10() {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw10))
	if err != nil {
		load10Err = fmt.Errorf("schema: parsing the embedded A2A %s schema: %w", Version10, err)
		return
	}
	obj, _ := doc.(map[string]any)
	defs, _ := obj["definitions"].(map[string]any)
	if len(defs) == 0 {
		load10Err = fmt.Errorf("schema: the embedded A2A %s schema has no definitions", Version10)
		return
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
			load10Err = fmt.Errorf("schema: %s: %w", title, err)
			return
		}
		names[name] = url
	}
	compiler10, names10 = c, names
}
