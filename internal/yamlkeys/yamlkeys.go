// Package yamlkeys checks YAML documents against the Go types they decode
// into: an unknown key is an error naming its line, where it is, and the
// closest valid key. It serves a2abridge's config files (the gateway's,
// the client's profiles).
package yamlkeys

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/a2abridge/a2abridge/internal/suggest"
	"go.yaml.in/yaml/v3"
)

// UnknownKeyError is a mapping key that no field of the Go type the YAML
// is decoded into names: its line, where it is (a dotted path, "" at the
// top level), the closest valid key when one is close enough, and the
// valid keys.
type UnknownKeyError struct {
	Line    int
	Key     string
	Path    string
	Suggest string
	Valid   []string
}

func (e *UnknownKeyError) Error() string {
	s := fmt.Sprintf("unknown key %q", e.Key)
	if e.Line > 0 {
		s = fmt.Sprintf("%d: %s", e.Line, s)
	}
	if e.Path != "" {
		s += " in " + e.Path
	}
	if e.Suggest != "" {
		return s + fmt.Sprintf(": did you mean %q?", e.Suggest)
	}
	return s + " (valid keys: " + strings.Join(e.Valid, ", ") + ")"
}

// Custom reports whether t or *t decodes itself: it implements
// yaml.Unmarshaler, or the older UnmarshalYAML(func(any) error) error
// that public types use to keep yaml's types out of their API. Such
// types are not entered.
func Custom(t reflect.Type) bool {
	for _, u := range []reflect.Type{reflect.TypeFor[yaml.Unmarshaler](), reflect.TypeFor[interface{ UnmarshalYAML(func(any) error) error }]()} {
		if t.Implements(u) || reflect.PointerTo(t).Implements(u) {
			return true
		}
	}
	return false
}

// CheckKeys walks n against t, the type it will be decoded into, and
// returns the first key (in document order) that t does not have. Keys are
// derived from the yaml struct tags (a field without a tag is its
// lowercased name, as yaml.v3 does; ",inline" fields are merged); the keys
// of Go maps are free. Types with their own UnmarshalYAML are not entered.
// Values of the wrong kind are left to the decoder to report.
func CheckKeys(n *yaml.Node, t reflect.Type, path string) *UnknownKeyError {
	if n == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if Custom(t) {
		return nil
	}
	if opaque[t] {
		return nil // checked by its owner
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := CheckKeys(c, t, path); err != nil {
				return err
			}
		}
		return nil
	case yaml.AliasNode:
		return CheckKeys(n.Alias, t, path)
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		fields := Fields(t)
		if fields == nil {
			return nil // an inline map takes any key
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" || k.ShortTag() == "!!null" {
				continue // as yaml.v3, which skips null keys
			}
			ft, ok := fields[k.Value]
			if !ok {
				valid := make([]string, 0, len(fields))
				for name := range fields {
					valid = append(valid, name)
				}
				slices.Sort(valid)
				return &UnknownKeyError{Line: k.Line, Key: k.Value, Path: path, Suggest: suggest.Closest(k.Value, valid), Valid: valid}
			}
			if err := CheckKeys(v, ft, JoinPath(path, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].ShortTag() == "!!null" {
				continue // as yaml.v3, which decodes no value under a null key
			}
			if err := CheckKeys(n.Content[i+1], t.Elem(), JoinPath(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			if err := CheckKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// JoinPath is the dotted path of key below path ("" at the top level).
func JoinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Fields maps the YAML keys of struct t to their field types; nil when
// t has an inline map (every key is valid).
func Fields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if slices.Contains(strings.Split(opts, ","), "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() != reflect.Struct {
				return nil
			}
			inner := Fields(ft)
			if inner == nil {
				return nil
			}
			for k, v := range inner {
				fields[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields
}

// opaque are the types CheckKeys does not enter (see Opaque).
var opaque = map[reflect.Type]bool{}

// Opaque makes CheckKeys skip values of type t, whose keys its owner
// checks itself (an entry whose keys depend on its kind). Call it from an
// init function.
func Opaque(t reflect.Type) { opaque[t] = true }

// EnvRef matches a ${NAME} reference to an environment variable in a
// YAML value; group 1 is NAME.
var EnvRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// RedactError is a decoding error's text with the quoted values dropped
// (they may be secrets) and its line reference kept.
func RedactError(err error) string {
	return regexp.MustCompile("`[^`]*`").ReplaceAllString(err.Error(), "`…`")
}
