package cli

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// unknownKeyError is a mapping key that no field of the Go type the YAML
// is decoded into names: its line, where it is (a dotted path, "" at the
// top level), the closest valid key when one is close enough, and the
// valid keys.
type unknownKeyError struct {
	Line    int
	Key     string
	Path    string
	Suggest string
	Valid   []string
}

func (e *unknownKeyError) Error() string {
	s := fmt.Sprintf("%d: unknown key %q", e.Line, e.Key)
	if e.Path != "" {
		s += " in " + e.Path
	}
	if e.Suggest != "" {
		return s + fmt.Sprintf(": did you mean %q?", e.Suggest)
	}
	return s + " (valid keys: " + strings.Join(e.Valid, ", ") + ")"
}

var yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()

// checkKeys walks n against t, the type it will be decoded into, and
// returns the first key (in document order) that t does not have. Keys are
// derived from the yaml struct tags (a field without a tag is its
// lowercased name, as yaml.v3 does; ",inline" fields are merged); the keys
// of Go maps are free. Types with their own UnmarshalYAML are not entered.
// Values of the wrong kind are left to the decoder to report.
func checkKeys(n *yaml.Node, t reflect.Type, path string) *unknownKeyError {
	if n == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(yamlUnmarshaler) || t.Implements(yamlUnmarshaler) {
		return nil
	}
	if t == reflect.TypeFor[agentFile]() {
		return nil // by its kind's keys: checkAgentKeys
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := checkKeys(c, t, path); err != nil {
				return err
			}
		}
		return nil
	case yaml.AliasNode:
		return checkKeys(n.Alias, t, path)
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		fields := yamlFields(t)
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
				return &unknownKeyError{Line: k.Line, Key: k.Value, Path: path, Suggest: closest(k.Value, valid), Valid: valid}
			}
			if err := checkKeys(v, ft, joinPath(path, k.Value)); err != nil {
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
			if err := checkKeys(n.Content[i+1], t.Elem(), joinPath(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			if err := checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields maps the YAML keys of struct t to their field types; nil when
// t has an inline map (every key is valid).
func yamlFields(t reflect.Type) map[string]reflect.Type {
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
			inner := yamlFields(ft)
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

// closest returns the candidate nearest to key when it is plausibly a typo
// of it: at most 2 edits (1 for keys of up to 4 characters), ignoring case
// and the difference between '-' and '_'; "" otherwise.
func closest(key string, candidates []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	k := norm(key)
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(k, norm(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len([]rune(key)) <= 4 {
		limit = 1
	}
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b
// (insertions, deletions, substitutions and transpositions of adjacent
// runes each cost 1). Inputs are bounded by the caller (YAML keys).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 256 || len(rb) > 256 {
		return max(len(ra), len(rb))
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
