package v03

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// Structured JSON values (a DataPart's data, metadata, extension params)
// go through byte for byte: a number is decoded as an encoding/json.Number
// holding its literal text, and a json.Number is encoded as that literal.
// A float64 would round 123456789012345678901234567890 to
// 1.2345678901234568e+29 and 9007199254740993 to 9007199254740992.

// numberLiteral decodes a JSON number into an `any` as a json.Number
// with its exact text; other values decode as usual.
var numberLiteral = json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
	if dec.PeekKind() != '0' {
		return errors.ErrUnsupported
	}
	val, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*v = stdjson.Number(val)
	return nil
})

// numberMarshaler encodes a json.Number as its literal, which must be a
// JSON number.
var numberMarshaler = json.MarshalToFunc(func(enc *jsontext.Encoder, n stdjson.Number) error {
	if !wirejson.ValidNumber(string(n)) {
		return fmt.Errorf("v03: %q is not a JSON number", string(n))
	}
	return enc.WriteValue(jsontext.Value(n))
})

var (
	// decodeOpts are the options of every decoding in this package.
	decodeOpts = json.WithUnmarshalers(numberLiteral)
	// encodeOpts are the options of every encoding through json.Marshal.
	encodeOpts = json.JoinOptions(json.Deterministic(true), json.WithMarshalers(numberMarshaler))
)

// UnmarshalValue decodes JSON text into v as this package decodes
// structured values: numbers inside `any` values become json.Number
// with their exact text. For a DataPart's data given on a command line,
// say.
func UnmarshalValue(b []byte, v any) error {
	return json.Unmarshal(b, v, decodeOpts)
}

// MarshalValue encodes a structured value (what a DataPart's data or a
// metadata map holds) as this package does: map keys sorted, a
// json.Number as its literal text (an error when that text is not a JSON
// number).
func MarshalValue(v any) ([]byte, error) {
	return wirejson.AppendAny(nil, v)
}

// CheckEventValues reports the first structured value of ev (a metadata
// map, a DataPart's data, in the event, its message, parts and artifact)
// that this package cannot encode as JSON: a json.Number whose text is not
// a JSON number, a NaN or infinite float, or a value json.Marshal refuses
// (a channel, a function). The error names where it is, e.g.
// "artifact.parts[0].data.n". An agent's events are checked with it before
// they are stored, so a task never holds what no client could read.
func CheckEventValues(ev a2a.Event) error {
	switch v := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		if err := valuesMap("metadata", v.Metadata); err != nil {
			return err
		}
		if v.Status.Message != nil {
			return valuesMessage("status.message", v.Status.Message)
		}
	case *a2a.TaskArtifactUpdateEvent:
		if err := valuesMap("metadata", v.Metadata); err != nil {
			return err
		}
		if err := valuesMap("artifact.metadata", v.Artifact.Metadata); err != nil {
			return err
		}
		return valuesParts("artifact.parts", v.Artifact.Parts)
	case *a2a.Message:
		return valuesMessage("", v)
	}
	return nil
}

func valuesMessage(path string, m *a2a.Message) error {
	if path != "" {
		path += "."
	}
	if err := valuesMap(path+"metadata", m.Metadata); err != nil {
		return err
	}
	return valuesParts(path+"parts", m.Parts)
}

func valuesParts(path string, parts []a2a.Part) error {
	for i, p := range parts {
		at := path + "[" + strconv.Itoa(i) + "]"
		if err := valuesMap(at+".metadata", p.Metadata); err != nil {
			return err
		}
		if d, ok := p.Content.(a2a.Data); ok {
			if err := checkValue(at+".data", d.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

func valuesMap(path string, m map[string]any) error {
	for k, v := range m {
		if err := checkValue(path+"."+k, v); err != nil {
			return err
		}
	}
	return nil
}

// checkValue walks the types decoding yields and the plain Go types the
// encoder writes itself; anything else is tried with the encoder.
func checkValue(path string, v any) error {
	switch v := v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, []string:
		return nil
	case stdjson.Number:
		if !wirejson.ValidNumber(string(v)) {
			return fmt.Errorf("%s: %q is not a JSON number", path, string(v))
		}
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: %v cannot be written as JSON", path, v)
		}
	case float32:
		return checkValue(path, float64(v))
	case map[string]any:
		return valuesMap(path, v)
	case []any:
		for i, x := range v {
			if err := checkValue(path+"["+strconv.Itoa(i)+"]", x); err != nil {
				return err
			}
		}
	default:
		if _, err := wirejson.AppendAny(nil, v); err != nil {
			return fmt.Errorf("%s: a %T cannot be written as JSON", path, v)
		}
	}
	return nil
}
