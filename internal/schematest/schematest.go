// Package schematest validates JSON documents against the A2A protocol
// JSON Schemas (0.3.0 and 1.0.1), for other packages' tests:
//
//	schematest.Validate(t, "Task", b)
//
// checks that b is a valid #/definitions/Task. It is a test-friendly face
// of internal/schema (the schema embedded in the binary, a copy of
// testdata/schema/a2a-v0.3.0.json, checked byte for byte by that package's
// tests). Validate10 does the same against the A2A 1.0.1 schema bundle,
// testdata/schema/a2a-v1.0.1.json:
//
//	schematest.Validate10(t, "StreamResponse", b)
package schematest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/a2abridge/a2abridge/internal/schema"
)

// Validate checks that doc is a valid instance of #/definitions/<definition>
// of the A2A 0.3.0 schema. On failure it reports every violation and the
// document with t.Errorf, so the test is marked failed and continues.
func Validate(t testing.TB, definition string, doc []byte) {
	t.Helper()
	if err := Check(definition, doc); err != nil {
		t.Errorf("schematest: document is not a valid A2A %s:\n%v\ndocument:\n%s", definition, err, doc)
	}
}

// Check is the non-test variant of [Validate]: nil if doc is valid, else an
// error describing every violation (the full jsonschema error tree), or why
// the document or definition could not be processed.
func Check(definition string, doc []byte) error {
	return fullTree(schema.Validate(definition, doc))
}

// fullTree is err, a validation failure as the full jsonschema error tree.
func fullTree(err error) error {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return &validationError{ve: ve}
	}
	return err
}

// validationError prints the full error tree of a jsonschema error.
type validationError struct{ ve *jsonschema.ValidationError }

func (e *validationError) Error() string { return fmt.Sprintf("%#v", e.ve) }
func (e *validationError) Unwrap() error { return e.ve }
