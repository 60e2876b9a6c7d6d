package schema

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// bundle is one embedded schema: loaded on first use, its definitions
// compiled on first use each and cached; safe for concurrent use.
type bundle struct {
	version string
	// load builds the compiler and maps each definition name to the URL
	// it compiles from.
	load func() (*jsonschema.Compiler, map[string]string, error)

	once     sync.Once
	err      error
	names    map[string]string
	mu       sync.Mutex // guards compiler and compiled
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

func (b *bundle) init() error {
	b.once.Do(func() {
		b.compiler, b.names, b.err = b.load()
		b.compiled = map[string]*jsonschema.Schema{}
	})
	return b.err
}

func (b *bundle) definitions() []string {
	b.init()
	names := make([]string, 0, len(b.names))
	for k := range b.names {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func (b *bundle) compile(name string) (*jsonschema.Schema, error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	url, ok := b.names[name]
	if !ok {
		return nil, fmt.Errorf("schema: no definition %q in the A2A %s schema", name, b.version)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.compiled[name]; ok {
		return s, nil
	}
	s, err := b.compiler.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema: compiling definition %q: %w", name, err)
	}
	b.compiled[name] = s
	return s, nil
}

// validate checks doc against definition name: nil, an *Error listing the
// violations, or another error (doc is not JSON, no such definition).
func (b *bundle) validate(name string, doc []byte) error {
	sch, err := b.compile(name)
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
			return &Error{Version: b.version, Definition: name, Violations: summarize(ve), ve: ve}
		}
		return err
	}
	return nil
}
