package wirejson

import (
	"bytes"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/wire/wiretest"
	"github.com/go-json-experiment/json"
)

// AppendAny writes what json/v2 writes (Deterministic, json.Number as its
// literal) and fails where json/v2 fails.
func TestAppendAnyMatchesJSONv2(t *testing.T) {
	strs, vals := wiretest.Strings(), wiretest.Values()
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
