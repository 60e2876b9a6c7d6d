package schematest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validate10 checks that doc is a valid instance of the definition named
// definition of the A2A 1.0.1 JSON Schema bundle
// (testdata/schema/a2a-v1.0.1.json, read from the source tree). A
// definition is named by its title ("Stream Response") or its proto
// message name ("StreamResponse"). On failure it reports every violation
// and the document with t.Errorf.
func Validate10(t testing.TB, definition string, doc []byte) {
	t.Helper()
	if err := Check10(definition, doc); err != nil {
		t.Errorf("schematest: document is not a valid A2A 1.0 %s:\n%v\ndocument:\n%s", definition, err, doc)
	}
}

// Check10 is the non-test variant of [Validate10]: nil if doc is valid,
// else an error describing every violation, or why the document or
// definition could not be processed.
func Check10(definition string, doc []byte) error {
	sch, err := compile10(strings.ReplaceAll(definition, " ", ""))
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
			return &validationError{ve: ve}
		}
		return err
	}
	return nil
}

// The bundle's definitions refer to each other by file name: each is
// registered as a resource under base10 + that name.
const base10 = "https://a2a.invalid/schema/v1/"

var (
	load10Once sync.Once
	load10Err  error
	mu10       sync.Mutex
	compiler10 *jsonschema.Compiler
	names10    map[string]string // message name → resource URL
	compiled10 = map[string]*jsonschema.Schema{}
)

func compile10(name string) (*jsonschema.Schema, error) {
	load10Once.Do(load10)
	if load10Err != nil {
		return nil, load10Err
	}
	url, ok := names10[name]
	if !ok {
		return nil, fmt.Errorf("schematest: no definition %q in the A2A 1.0 schema", name)
	}
	mu10.Lock()
	defer mu10.Unlock()
	if s, ok := compiled10[name]; ok {
		return s, nil
	}
	s, err := compiler10.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schematest: compiling %q: %w", name, err)
	}
	compiled10[name] = s
	return s, nil
}

func load10() {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "schema", "a2a-v1.0.1.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		load10Err = fmt.Errorf("schematest: %w", err)
		return
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		load10Err = fmt.Errorf("schematest: parsing %s: %w", path, err)
		return
	}
	defs, _ := doc.(map[string]any)["definitions"].(map[string]any)
	if len(defs) == 0 {
		load10Err = errors.New("schematest: the A2A 1.0 schema has no definitions")
		return
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	names10 = map[string]string{}
	for title, def := range defs {
		name := strings.ReplaceAll(title, " ", "")
		pkg := "lf.a2a.v1."
		if name == "Struct" || name == "Timestamp" || name == "Value" {
			pkg = "google.protobuf."
		}
		url := base10 + pkg + name + ".jsonschema.json"
		if err := c.AddResource(url, def); err != nil {
			load10Err = fmt.Errorf("schematest: %s: %w", title, err)
			return
		}
		names10[name] = url
	}
	compiler10 = c
}
