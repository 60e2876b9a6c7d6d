// Package cardsig signs and verifies Agent Cards (A2A 1.0 §8.4): a JWS
// (RFC 7515) whose payload is the card's canonical form and whose
// protected header holds alg, typ "JOSE", kid and, optionally, jku; the
// payload is detached (not in the AgentCardSignature).
//
// The canonical form (Canonicalize) is the one the A2A SDKs that sign
// cards compute (@a2a-js/sdk 1.3.0's canonicalizeAgentCard, a2a-python's
// MessageToDict path): the card read as the A2A 1.0 AgentCard message,
// so members outside that message (the A2A 0.3 members of a union card,
// extensions of other parties) are not covered; fields without presence
// at their default dropped; then every empty value ("", null, [], {})
// dropped, recursively; `signatures` excluded; and the result serialized
// by RFC 8785 (JCS). interop/V1_WIRE_NOTES.md lists where this departs
// from the examples of §8.4.1.
package cardsig

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/gowebpki/jcs"
)

// ErrMalformedCard is wrapped by Canonicalize's errors: the document is
// not JSON, or a member of the A2A 1.0 AgentCard has the wrong type.
var ErrMalformedCard = errors.New("malformed agent card")

// Canonicalize returns the canonical payload of an Agent Card document
// (A2A 1.0 §8.4.1), which may carry signatures: they are excluded. Errors
// wrap ErrMalformedCard and name the member at fault (for example
// "skills[2].tags: want an array of strings").
func Canonicalize(card []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(card, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedCard, err)
	}
	p, err := project(agentCard(), doc, "")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedCard, err)
	}
	cleaned := clean(p)
	if cleaned == nil {
		return []byte("{}"), nil
	}
	b, err := json.Marshal(cleaned)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedCard, err)
	}
	out, err := jcs.Transform(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedCard, err)
	}
	return out, nil
}

// project reads v as message msg and returns its fields by JSON name,
// dropping unknown members and fields without presence at their default.
// at is the path of v, for errors.
func project(msg *message, v any, at string) (map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object (%s)", pathOr(at), msg.name)
	}
	out := make(map[string]any, len(msg.fields))
	for _, fd := range msg.fields {
		val, ok := lookup(obj, fd)
		if !ok {
			continue
		}
		if msg.oneof && len(out) > 0 {
			return nil, fmt.Errorf("%s: more than one member of the %s oneof", pathOr(at), msg.name)
		}
		pv, keep, err := projectField(fd, val, join(at, fd.json))
		if err != nil {
			return nil, err
		}
		if keep {
			out[fd.json] = pv
		}
	}
	return out, nil
}

// lookup finds a field by its JSON name, else by its proto name; a null
// value counts as absent, as ProtoJSON has it.
func lookup(obj map[string]any, fd field) (any, bool) {
	v, ok := obj[fd.json]
	if (!ok || v == nil) && fd.proto != fd.json {
		v, ok = obj[fd.proto]
	}
	return v, ok && v != nil
}

// projectField reads one field's value; keep is false for a bool without
// presence that is false.
func projectField(fd field, v any, at string) (out any, keep bool, err error) {
	switch fd.kind {
	case kString:
		s, ok := v.(string)
		if !ok {
			return nil, false, fmt.Errorf("%s: want a string", at)
		}
		return s, true, nil
	case kBool, kOptBool:
		b, ok := v.(bool)
		if !ok {
			return nil, false, fmt.Errorf("%s: want true or false", at)
		}
		return b, b || fd.kind == kOptBool, nil
	case kStrings:
		out, err = strs(v, at)
	case kMessage:
		out, err = project(fd.msg, v, at)
	case kMessages:
		out, err = messages(fd.msg, v, at)
	case kMessageMap:
		out, err = mapOf(v, at, func(e any, at string) (any, error) { return project(fd.msg, e, at) })
	case kStringMap:
		out, err = mapOf(v, at, func(e any, at string) (any, error) {
			if s, ok := e.(string); ok {
				return s, nil
			}
			return nil, fmt.Errorf("%s: want a string", at)
		})
	case kStruct:
		if _, ok := v.(map[string]any); !ok {
			return nil, false, fmt.Errorf("%s: want an object", at)
		}
		out = v
	case kScopeMap:
		out, err = mapOf(v, at, scopeList)
	}
	return out, err == nil, err
}

// scopeList reads a StringList ({"list": [...]}). A bare array, the form
// a2a-go v2 (up to v2.4.0) needs and a2abridge serves, reads as an empty
// list: @a2a-js/sdk 1.3.0 reads it so, and a signature must cover what
// its verifier computes.
func scopeList(v any, at string) (any, error) {
	if _, ok := v.([]any); ok {
		return map[string]any{}, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object (StringList)", at)
	}
	out := map[string]any{}
	if l, ok := obj["list"]; ok && l != nil {
		s, err := strs(l, at+".list")
		if err != nil {
			return nil, err
		}
		out["list"] = s
	}
	return out, nil
}

func strs(v any, at string) ([]any, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an array of strings", at)
	}
	for i, e := range arr {
		if _, ok := e.(string); !ok {
			return nil, fmt.Errorf("%s[%d]: want a string", at, i)
		}
	}
	return arr, nil
}

func messages(msg *message, v any, at string) ([]any, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an array", at)
	}
	out := make([]any, len(arr))
	for i, e := range arr {
		p, err := project(msg, e, fmt.Sprintf("%s[%d]", at, i))
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

func mapOf(v any, at string, value func(any, string) (any, error)) (map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object", at)
	}
	out := make(map[string]any, len(obj))
	for k, e := range obj {
		p, err := value(e, join(at, k))
		if err != nil {
			return nil, err
		}
		out[k] = p
	}
	return out, nil
}

// clean drops empty values recursively: "", null, and arrays and objects
// that are empty once cleaned; it returns nil for a value that is itself
// dropped. Numbers (0 too) and booleans (false too) stay.
func clean(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if c := clean(e); c != nil {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if c := clean(e); c != nil {
				out[k] = c
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

func pathOr(at string) string {
	if at == "" {
		return "the card"
	}
	return at
}
