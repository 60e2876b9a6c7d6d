package schematest

import (
	"testing"

	"github.com/a2abridge/a2abridge/internal/schema"
)

// Validate10 checks that doc is a valid instance of the definition named
// definition of the A2A 1.0.1 JSON Schema bundle (the one embedded in
// internal/schema, kept identical to testdata/schema/a2a-v1.0.1.json by its
// tests). A definition is named by its title ("Stream Response") or its
// proto message name ("StreamResponse"). On failure it reports every
// violation and the document with t.Errorf.
func Validate10(t testing.TB, definition string, doc []byte) {
	t.Helper()
	if err := Check10(definition, doc); err != nil {
		t.Errorf("schematest: document is not a valid A2A 1.0 %s:\n%v\ndocument:\n%s", definition, err, doc)
	}
}

// Check10 is the non-test variant of [Validate10]: nil if doc is valid,
// else an error describing every violation (the full jsonschema error
// tree), or why the document or definition could not be processed.
func Check10(definition string, doc []byte) error {
	return fullTree(schema.Validate10(definition, doc))
}
