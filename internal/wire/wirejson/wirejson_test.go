package wirejson

import (
	"bytes"
	stdjson "encoding/json"
	"math"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

type point struct{ X, Y int }

// AppendAny writes what json/v2 writes (Deterministic, json.Number as its
// literal) and fails where json/v2 fails.
func TestAppendAnyMatchesJSONv2(t *testing.T) {
	strs := []string{"", "plain", "quote\" back\\slash", "ctl\x00\x01\x1f\x7f\b\f\n\r\t", "<html>&amp;</html>",
		"héllo wörld ☃ 𝄞", "\u2028\u2029", "\ufffd", "bad \xff utf8", "trunc \xe2\x98", "surrogate \xed\xa0\x80"}
	vals := []any{nil, true, false, "s", 0.0, math.Copysign(0, -1), 1.5, 1e21, 1e20, 1e-6, 1e-7, 123456789.125, -2.5e-300,
		float32(0.1), float32(1e30), 7, int64(-9), int32(3), uint64(1 << 63), int8(4), uint(5),
		[]any{}, []any(nil), map[string]any{}, map[string]any(nil), []string{"a", "b\n"}, []string(nil),
		map[string]any{"b": 1.0, "a": 2.0, "": nil, "é": "x", "A": []any{map[string]any{"y": 1.0, "x": 2.0}}},
		point{1, 2}, &point{3, 4}, (*point)(nil), map[string]int{"b": 1, "a": 2}, []byte("raw"),
		math.NaN(), math.Inf(1), float32(math.Inf(-1)), make(chan int), map[string]any{"bad\xff": 1.0},
		stdjson.Number("123456789012345678901234567890"), stdjson.Number("9007199254740993"), stdjson.Number("1e400"),
		stdjson.Number("-0"), stdjson.Number("0.10"), stdjson.Number("-1.5E-07"), []any{stdjson.Number("1"), stdjson.Number("2.50")},
		stdjson.Number(""), stdjson.Number("abc"), stdjson.Number("01"), stdjson.Number("1."), stdjson.Number("+1"),
		stdjson.Number(".5"), stdjson.Number("1e"), stdjson.Number("1 "), stdjson.Number("NaN"), stdjson.Number("1,2")}
	for _, s := range strs {
		vals = append(vals, s, map[string]any{s: s}, []any{s})
	}
	for _, v := range vals {
		want, werr := json.Marshal(v, EncodeOptions)
		got, gerr := AppendAny([]byte("x"), v)
		if (werr != nil) != (gerr != nil) {
			t.Errorf("%#v: json/v2 error %v, AppendAny error %v", v, werr, gerr)
			continue
		}
		if werr == nil && !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("%#v:\n got %s\nwant x%s", v, got, want)
		}
	}
	if got, err := AppendStringMap(nil, map[string]string{"b": "1", "a": "\n"}); err != nil || string(got) != `{"a":"\n","b":"1"}` {
		t.Errorf("AppendStringMap = %s, %v", got, err)
	}
}

func TestValidNumber(t *testing.T) {
	for s, want := range map[string]bool{"0": true, "-0": true, "1.5e-7": true, "1E+400": true, "": false, "01": false,
		"1.": false, ".5": false, "+1": false, "1e": false, "NaN": false, "1 ": false} {
		if ValidNumber(s) != want {
			t.Errorf("ValidNumber(%q) = %v", s, !want)
		}
	}
}

func TestBase64(t *testing.T) {
	raw := []byte{0xfb, 0xff, 0xfe, 0x00, 0x01}
	for _, s := range []string{"+//+AAE=", "+//+AAE", "-__-AAE=", "-__-AAE"} {
		b, err := DecodeBase64(s)
		if err != nil || !bytes.Equal(b, raw) {
			t.Errorf("DecodeBase64(%q) = %v, %v", s, b, err)
		}
	}
	if b, err := DecodeBase64(""); err != nil || b == nil || len(b) != 0 {
		t.Errorf("DecodeBase64(\"\") = %#v, %v", b, err)
	}
	for _, s := range []string{"!", "AAE=x", "A", "+_"} {
		if _, err := DecodeBase64(s); err == nil {
			t.Errorf("DecodeBase64(%q) succeeded", s)
		}
	}
	if got := string(AppendBase64(nil, raw)); got != `"+//+AAE="` {
		t.Errorf("AppendBase64 = %s", got)
	}
}

func TestAppendTime(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2025, 6, 1, 12, 0, 0, 123456789, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", -7200)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(1763700000, 5e6).In(time.FixedZone("y", 19800)),
	} {
		if got, want := string(AppendTime(nil, tm)), tm.UTC().Format("2006-01-02T15:04:05.000Z07:00"); got != want {
			t.Errorf("AppendTime(%v) = %s, want %s", tm, got, want)
		}
	}
	if FormatTime(time.Time{}) != "" {
		t.Error("zero time not empty")
	}
}

func TestDecodeOptionsKeepNumbers(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"a":[123456789012345678901234567890,-0.10]}`), &v, DecodeOptions); err != nil {
		t.Fatal(err)
	}
	got, err := AppendAny(nil, v)
	if err != nil || string(got) != `{"a":[123456789012345678901234567890,-0.10]}` {
		t.Errorf("round trip = %s, %v", got, err)
	}
}
