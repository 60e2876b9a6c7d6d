package v03

import (
	stdjson "encoding/json"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

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
