// Package wiretest holds the hostile inputs the codecs' tests write and
// compare against json/v2: strings that need escaping or are not UTF-8,
// and values of every kind a structured value (metadata, a DataPart's
// data) may hold, JSON numbers by their literal text included.
package wiretest

import (
	stdjson "encoding/json"
	"math"
)

// Point is a struct a structured value may hold (written through
// json.Marshal).
type Point struct{ X, Y int }

// Strings are texts to write: empty, plain, ones that need escaping,
// non-ASCII, invalid and truncated UTF-8, a surrogate.
func Strings() []string {
	return []string{"", "plain", "quote\" back\\slash", "ctl\x00\x01\x1f\x7f\b\f\n\r\t", "<html>&amp;</html>",
		"héllo wörld ☃ 𝄞", "\u2028\u2029", "\ufffd", "bad \xff utf8", "trunc \xe2\x98", "surrogate \xed\xa0\x80"}
}

// Values are structured values to write: every JSON kind, floats near the
// exponent-form bounds, integer types, nil and empty containers, structs,
// values JSON cannot hold (NaN, infinities, a channel, a key that is not
// UTF-8), and json.Numbers whose text is or is not a JSON number.
func Values() []any {
	return []any{nil, true, false, "s", 0.0, math.Copysign(0, -1), 1.5, 1e21, 1e20, 1e-6, 1e-7, 123456789.125, -2.5e-300,
		float32(0.1), float32(1e30), 7, int64(-9), int32(3), uint64(1 << 63), int8(4), uint(5),
		[]any{}, []any(nil), map[string]any{}, map[string]any(nil), []string{"a", "b\n"}, []string(nil),
		map[string]any{"b": 1.0, "a": 2.0, "": nil, "é": "x", "A": []any{map[string]any{"y": 1.0, "x": 2.0}}},
		Point{1, 2}, &Point{3, 4}, (*Point)(nil), map[string]int{"b": 1, "a": 2}, []byte("raw"),
		math.NaN(), math.Inf(1), float32(math.Inf(-1)), make(chan int), map[string]any{"bad\xff": 1.0},
		stdjson.Number("123456789012345678901234567890"), stdjson.Number("9007199254740993"), stdjson.Number("1e400"),
		stdjson.Number("-0"), stdjson.Number("0.10"), stdjson.Number("-1.5E-07"), []any{stdjson.Number("1"), stdjson.Number("2.50")},
		stdjson.Number(""), stdjson.Number("abc"), stdjson.Number("01"), stdjson.Number("1."), stdjson.Number("+1"),
		stdjson.Number(".5"), stdjson.Number("1e"), stdjson.Number("1 "), stdjson.Number("NaN"), stdjson.Number("1,2")}
}
