package v03

import (
	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// Structured JSON values (a DataPart's data, metadata, extension params)
// go through byte for byte, as in every codec (wirejson.DecodeOptions and
// EncodeOptions): a number is decoded as an encoding/json.Number holding
// its literal text, and a json.Number is encoded as that literal.
var (
	// decodeOpts are the options of every decoding in this package.
	decodeOpts = wirejson.DecodeOptions
	// encodeOpts are the options of every encoding through json.Marshal.
	encodeOpts = wirejson.EncodeOptions
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
