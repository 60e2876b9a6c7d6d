// Package wirejson holds the JSON primitives the wire codecs share: an
// append-style writer for strings, structured values (what a DataPart's
// data and metadata maps hold), numbers kept as their literal text and
// timestamps; and the decoding options that keep numbers in structured
// values exact (as encoding/json.Number).
//
// Its output is what json/v2 (github.com/go-json-experiment/json) makes of
// the same values with Deterministic(true): strings escaped only where JSON
// requires it ('"', '\\' and control characters; invalid UTF-8 is an
// error), map keys sorted, floats in their shortest form. The tests check
// this against json/v2.
//
// These are the primitives of internal/wire/v03's hand-written encoder,
// moved here so that every version's codec writes JSON the same way.
package wirejson

import (
	"encoding/base64"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ErrInvalidUTF8 is returned for a string that is not valid UTF-8, which
// JSON text cannot carry (RFC 8259 §8.1).
var ErrInvalidUTF8 = errors.New("wirejson: string is not valid UTF-8")

// ErrBadNumber is returned for a json.Number whose text is not a JSON
// number (a Go caller can put anything in one).
var ErrBadNumber = errors.New("wirejson: a json.Number holds text that is not a JSON number")

// ErrNonFinite is returned for a NaN or infinite float, which JSON cannot hold.
var ErrNonFinite = errors.New("wirejson: a non-finite number cannot be written as JSON")

// safeASCII[c] is true for the bytes a JSON string holds unescaped.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. It fails with ErrInvalidUTF8
// (leaving a partial string in dst) when s is not valid UTF-8.
func AppendString(dst []byte, s string) ([]byte, error) {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return dst, ErrInvalidUTF8
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), nil
}

// AppendStrings appends ss as a JSON array of strings (nil is []).
func AppendStrings(dst []byte, ss []string) ([]byte, error) {
	return appendArray(dst, ss, AppendString)
}

// appendArray appends s as a JSON array, each element written by elem.
func appendArray[V any](dst []byte, s []V, elem func([]byte, V) ([]byte, error)) ([]byte, error) {
	dst = append(dst, '[')
	var err error
	for i, v := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = elem(dst, v); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// AppendObject appends m as a JSON object with its keys in byte order (a
// nil map is {}).
func AppendObject(dst []byte, m map[string]any) ([]byte, error) {
	var err error
	switch len(m) {
	case 0:
		return append(dst, '{', '}'), nil
	case 1:
		dst = append(dst, '{')
		for k, v := range m {
			if dst, err = AppendString(dst, k); err != nil {
				return dst, err
			}
			dst = append(dst, ':')
			if dst, err = AppendAny(dst, v); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	return appendSorted(dst, m, AppendAny)
}

// AppendStringMap appends m as a JSON object of strings, keys in byte
// order (a nil map is {}).
func AppendStringMap(dst []byte, m map[string]string) ([]byte, error) {
	return appendSorted(dst, m, AppendString)
}

// appendSorted appends m as a JSON object, its keys in byte order, each
// value written by elem.
func appendSorted[V any](dst []byte, m map[string]V, elem func([]byte, V) ([]byte, error)) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = AppendString(dst, k); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		if dst, err = elem(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// AppendFloat appends f, a float of bits (32 or 64) bits, as json/v2
// does: the shortest representation that reads back the same, in exponent
// form below 1e-6 and from 1e21 on. NaN and the infinities are
// ErrNonFinite, with dst as it was.
func AppendFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, ErrNonFinite
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// e-09 → e-9
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// AppendAny appends a structured value: the types decoding yields (nil,
// bool, json.Number, string, []any, map[string]any), float64, float32 and
// the integer types directly, anything else through json.Marshal. A
// json.Number is written as its literal text, which must be a JSON number.
func AppendAny(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return AppendString(dst, v)
	case stdjson.Number:
		if !ValidNumber(string(v)) {
			return dst, ErrBadNumber
		}
		return append(dst, v...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case float64:
		return AppendFloat(dst, v, 64)
	case float32:
		return AppendFloat(dst, float64(v), 32)
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case uint64:
		return strconv.AppendUint(dst, v, 10), nil
	case map[string]any:
		return AppendObject(dst, v)
	case []any:
		return appendArray(dst, v, AppendAny)
	case []string:
		return AppendStrings(dst, v)
	}
	b, err := json.Marshal(v, EncodeOptions)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// AppendBase64 appends b as a JSON string in standard, padded base64.
func AppendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// DecodeBase64 decodes base64 as ProtoJSON accepts it for bytes: the
// standard or the URL-safe alphabet, padded or not. The result is never
// nil.
func DecodeBase64(s string) ([]byte, error) {
	enc := base64.StdEncoding
	urlSafe := false
	for i := 0; i < len(s); i++ {
		if s[i] == '-' || s[i] == '_' {
			urlSafe = true
			break
		}
	}
	if urlSafe {
		enc = base64.URLEncoding
	}
	if len(s)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// FormatTime renders t as RFC 3339 in UTC with millisecond precision
// ("2025-06-01T12:00:00.000Z"), the form A2A 1.0 §5.6.1 asks for; the zero
// time renders as "".
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return string(AppendTime(nil, t))
}

// AppendTime appends t (unquoted) as FormatTime does, for any t.
func AppendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, "2006-01-02T15:04:05.000Z07:00")
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(dst,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

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
	if !ValidNumber(string(n)) {
		return fmt.Errorf("json.Number %q is not a JSON number", string(n))
	}
	return enc.WriteValue(jsontext.Value(n))
})

var (
	// DecodeOptions decode numbers inside `any` values as json.Number
	// with their exact text.
	DecodeOptions = json.WithUnmarshalers(numberLiteral)
	// EncodeOptions encode deterministically (map keys sorted) and a
	// json.Number as its literal text.
	EncodeOptions = json.JoinOptions(json.Deterministic(true), json.WithMarshalers(numberMarshaler))
)

// ValidNumber reports whether s is a JSON number (RFC 8259 §6):
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func ValidNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// KindName names a JSON kind for an error message: "object", "array",
// "string", "number", "boolean", "null", else "value".
func KindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "value"
}
