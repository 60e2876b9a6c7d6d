package simple

import (
	"encoding/base64"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// DefaultTextField is the key under which texts travel in dialect values
// when no other is configured.
const DefaultTextField = "text"

// Keys of dialect values that the mapping reserves besides the text field.
const (
	filesKey = "files"
	dataKey  = "data"
)

// PartsToValue maps a message's parts to a dialect value (the "input" of a
// request), as the package documentation describes: a single DataPart's
// data as is, else an object merging data objects' keys, the texts joined
// with "\n" under textField ("" means DefaultTextField), the files under
// "files" and non-object data under "data". The value holds what JSON
// decoding yields (maps, slices, strings, json.Number…) and whatever the
// DataParts hold.
func PartsToValue(parts []a2a.Part, textField string) any {
	if len(parts) == 1 {
		if d, ok := parts[0].Content.(a2a.Data); ok {
			return d.Value
		}
	}
	var m merger
	for _, p := range parts {
		m.add(p)
		m.endGroup()
	}
	return m.value(textField)
}

// ArtifactsToValue maps a task's artifacts to a dialect value (the
// "output" of an answer): as PartsToValue over all their parts, except
// that the texts of one artifact are concatenated as they are and the
// texts of different artifacts joined with "\n", and a single DataPart
// is its data as is only when that is an object. So the value is always
// an object (the empty object for no parts), as a dialect "output" must
// be.
func ArtifactsToValue(arts []a2a.Artifact, textField string) map[string]any {
	n := 0
	var only a2a.Part
	for _, a := range arts {
		n += len(a.Parts)
		if len(a.Parts) > 0 {
			only = a.Parts[0]
		}
	}
	if n == 1 {
		if d, ok := only.Content.(a2a.Data); ok {
			if o, ok := d.Value.(map[string]any); ok {
				return o
			}
		}
	}
	var m merger
	for _, a := range arts {
		for _, p := range a.Parts {
			m.add(p)
		}
		m.endGroup()
	}
	return m.value(textField)
}

// merger collects parts into one object.
type merger struct {
	obj   map[string]any
	texts []string
	files []any
	data  []any
	// group is the text of the current group; inGroup whether it has any.
	group   strings.Builder
	inGroup bool
}

func (m *merger) add(p a2a.Part) {
	switch c := p.Content.(type) {
	case a2a.Text:
		m.group.WriteString(string(c))
		m.inGroup = true
	case a2a.Data:
		if o, ok := c.Value.(map[string]any); ok {
			if m.obj == nil {
				m.obj = make(map[string]any, len(o)+1)
			}
			for k, v := range o {
				m.obj[k] = v
			}
		} else {
			m.data = append(m.data, c.Value)
		}
	case a2a.Raw, a2a.URL:
		m.files = append(m.files, fileValue(p))
	}
}

// endGroup closes a group of texts (one part, or one artifact).
func (m *merger) endGroup() {
	if m.inGroup {
		m.texts = append(m.texts, m.group.String())
		m.group.Reset()
		m.inGroup = false
	}
}

func (m *merger) value(textField string) map[string]any {
	if textField == "" {
		textField = DefaultTextField
	}
	if m.obj == nil {
		m.obj = make(map[string]any, 2)
	}
	if len(m.texts) > 0 {
		m.obj[textField] = strings.Join(m.texts, "\n")
	}
	if len(m.files) > 0 {
		m.obj[filesKey] = m.files
	}
	if len(m.data) > 0 {
		m.obj[dataKey] = m.data
	}
	return m.obj
}

// fileValue is a file part (Raw or URL) as the dialect carries it.
func fileValue(p a2a.Part) map[string]any {
	v := make(map[string]any, 3)
	if p.Filename != "" {
		v["name"] = p.Filename
	}
	if p.MediaType != "" {
		v["mediaType"] = p.MediaType
	}
	if r, ok := p.Content.(a2a.Raw); ok {
		v["bytes"] = base64.StdEncoding.EncodeToString(r)
	} else {
		v["uri"] = p.URL()
	}
	return v
}

// ValueToParts maps a dialect value (a backend's "output", a simple
// caller's "input") to parts, as the package documentation describes: nil
// is no parts, a string a TextPart, an object of only textField and
// "files" a TextPart and FileParts, any other object a TextPart of its
// textField (when a string) and a DataPart of it, anything else a
// DataPart. textField "" means DefaultTextField.
func ValueToParts(v any, textField string) []a2a.Part {
	if textField == "" {
		textField = DefaultTextField
	}
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		return []a2a.Part{a2a.NewTextPart(v)}
	case map[string]any:
		if parts, ok := textAndFiles(v, textField); ok {
			return parts
		}
		if s, ok := v[textField].(string); ok {
			return []a2a.Part{a2a.NewTextPart(s), a2a.NewDataPart(v)}
		}
		return []a2a.Part{a2a.NewDataPart(v)}
	}
	return []a2a.Part{a2a.NewDataPart(v)}
}

// textAndFiles maps an object whose only keys are textField (a string)
// and "files" (a non-empty list of valid files); ok is false for any
// other object.
func textAndFiles(v map[string]any, textField string) (parts []a2a.Part, ok bool) {
	if len(v) == 0 || len(v) > 2 {
		return nil, false
	}
	var text *string
	var files []any
	for k, x := range v {
		switch k {
		case textField:
			s, isStr := x.(string)
			if !isStr {
				return nil, false
			}
			text = &s
		case filesKey:
			l, isList := x.([]any)
			if !isList || len(l) == 0 {
				return nil, false
			}
			files = l
		default:
			return nil, false
		}
	}
	parts = make([]a2a.Part, 0, len(files)+1)
	if text != nil {
		parts = append(parts, a2a.NewTextPart(*text))
	}
	for _, x := range files {
		f, ok := parseFile(x)
		if !ok {
			return nil, false
		}
		parts = append(parts, f)
	}
	return parts, true
}

// parseFile reads one file of a "files" list: an object with an optional
// "name" and "mediaType" (strings) and exactly one of "uri" (a non-empty
// string) and "bytes" (base64, standard or URL-safe, padded or not).
func parseFile(x any) (a2a.Part, bool) {
	o, ok := x.(map[string]any)
	if !ok {
		return a2a.Part{}, false
	}
	var f a2a.Part
	var hasURI, hasBytes bool
	for k, v := range o {
		s, isStr := v.(string)
		if !isStr {
			return a2a.Part{}, false
		}
		switch k {
		case "name":
			f.Filename = s
		case "mediaType":
			f.MediaType = s
		case "uri":
			if s == "" {
				return a2a.Part{}, false
			}
			f.Content, hasURI = a2a.URL(s), true
		case "bytes":
			b, err := wirejson.DecodeBase64(s)
			if err != nil {
				return a2a.Part{}, false
			}
			f.Content, hasBytes = a2a.Raw(b), true
		default:
			return a2a.Part{}, false
		}
	}
	if hasURI == hasBytes {
		return a2a.Part{}, false
	}
	return f, true
}
