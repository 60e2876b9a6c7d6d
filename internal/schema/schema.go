// Package schema validates JSON documents against the A2A protocol JSON
// Schemas, which are embedded in the binary: 0.3.0 (a2a-v0.3.0.json, a
// copy of testdata/schema/a2a-v0.3.0.json, the A2A project's
// specification/json/a2a.json at tag v0.3.0), with [Validate], and 1.0.1
// (a2a-v1.0.1.json, a copy of testdata/schema/a2a-v1.0.1.json, the JSON
// Schema bundle of release v1.0.1), with [Validate10].
//
// Unlike internal/schematest, which reads the schema from the source tree
// for tests, this package works in a shipped binary:
//
//	if err := schema.Validate("Task", b); err != nil { … }
//
// The schema (draft-07) is compiled on first use; compiled definitions are
// cached and safe for concurrent use.
package schema

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Versions of the embedded schemas.
const (
	Version   = "0.3.0" // of Validate's schema
	Version10 = "1.0.1" // of Validate10's schema
)

//go:embed a2a-v0.3.0.json
var raw []byte

// schemaURL is the (fictitious) location the schema is registered under;
// it only serves as the base for resolving "#/definitions/..." references.
const schemaURL = "https://a2a.invalid/schema/a2a-v0.3.0.json"

var bundle03 = &bundle{version: Version, load: load}

// JSON returns the embedded schema document.
func JSON() []byte { return slices.Clone(raw) }

// Definitions returns the names of the schema's definitions, sorted.
func Definitions() []string { return bundle03.definitions() }

// Validate reports whether doc is a valid instance of
// #/definitions/<definition>. It returns nil if it is, an *Error listing
// the violations if it is not, and another error if doc is not JSON or the
// definition does not exist.
func Validate(definition string, doc []byte) error { return bundle03.validate(definition, doc) }

// Error is a failed validation.
type Error struct {
	// Version is the schema's A2A version (Version or Version10).
	Version string
	// Definition is the schema definition the document was checked against.
	Definition string
	// Violations are short descriptions, each "at /json/pointer: what",
	// of the errors that decided the result (for a union such as
	// Task | Message, those of the alternative the document came closest to).
	Violations []string
	ve         *jsonschema.ValidationError
}

// Error implements error: the definition and the first violations.
func (e *Error) Error() string {
	const maxShown = 5
	v := e.Violations
	more := ""
	if len(v) > maxShown {
		more = fmt.Sprintf("; and %d more", len(v)-maxShown)
		v = v[:maxShown]
	}
	version := e.Version
	if version == "" {
		version = Version
	}
	return fmt.Sprintf("not a valid A2A %s %s: %s%s", version, e.Definition, strings.Join(v, "; "), more)
}

// Unwrap returns the underlying *jsonschema.ValidationError.
func (e *Error) Unwrap() error { return e.ve }

// load compiles the 0.3.0 schema (draft-07) as one resource; definition
// names map to their "#/definitions/…" URLs.
func load() (*jsonschema.Compiler, map[string]string, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("schema: parsing the embedded schema: %w", err)
	}
	obj, _ := doc.(map[string]any)
	defs, ok := obj["definitions"].(map[string]any)
	if !ok {
		return nil, nil, errors.New("schema: the embedded schema has no definitions")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, nil, fmt.Errorf("schema: %w", err)
	}
	names := make(map[string]string, len(defs))
	for name := range defs {
		names[name] = schemaURL + "#/definitions/" + name
	}
	return c, names, nil
}

// summarize turns a validation error tree into short leaf messages. For
// anyOf/oneOf it follows the alternative the document was meant to be: the
// one whose "kind" discriminator matched, else the one with fewest errors.
func summarize(ve *jsonschema.ValidationError) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range leaves(ve) {
		// A leaf (no causes) prints as "at '/pointer': what".
		s := l.Error()
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		out = []string{ve.Error()}
	}
	return out
}

func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch ve.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		if len(ve.Causes) == 0 {
			return []*jsonschema.ValidationError{ve}
		}
		var best []*jsonschema.ValidationError
		bestScore := -1
		for _, c := range ve.Causes {
			l := leaves(c)
			// Prefer an alternative whose discriminator matched (no const
			// failure on a "kind" member), then the fewest violations.
			score := 1000 - len(l)
			if !kindMismatch(l) {
				score += 10000
			}
			if missingError(l) {
				// A response without "error" means to be a success response.
				score -= 5
			}
			if score > bestScore {
				best, bestScore = l, score
			}
		}
		return best
	}
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func missingError(ls []*jsonschema.ValidationError) bool {
	for _, l := range ls {
		if r, ok := l.ErrorKind.(*kind.Required); ok && len(l.InstanceLocation) == 0 && slices.Contains(r.Missing, "error") {
			return true
		}
	}
	return false
}

func kindMismatch(ls []*jsonschema.ValidationError) bool {
	for _, l := range ls {
		if _, ok := l.ErrorKind.(*kind.Const); ok {
			if n := len(l.InstanceLocation); n > 0 && l.InstanceLocation[n-1] == "kind" {
				return true
			}
		}
		if r, ok := l.ErrorKind.(*kind.Required); ok && slices.Contains(r.Missing, "kind") {
			return true
		}
	}
	return false
}
