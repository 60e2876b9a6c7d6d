package cardsig

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCanonicalizeMatchesJS compares Canonicalize with the output of
// @a2a-js/sdk 1.3.0's canonicalizeAgentCard on the same documents
// (testdata/canon/*.canon; interop/js/signing.test.mjs checks that they
// still are its output and rewrites them with UPDATE_CANON_GOLDEN=1).
func TestCanonicalizeMatchesJS(t *testing.T) {
	files, err := filepath.Glob("testdata/canon/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range files {
		t.Run(filepath.Base(in), func(t *testing.T) {
			card, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(in, ".json") + ".canon")
			if err != nil {
				t.Fatal(err)
			}
			got, err := Canonicalize(card)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Canonicalize =\n%s\nwant (@a2a-js/sdk 1.3.0)\n%s", got, want)
			}
		})
	}
}

// TestCanonicalizeNumbers checks RFC 8785 §3.2.2.3 number serialization
// (the ECMAScript Number-to-String rules) on doubles at the edges, and
// the RFC's Appendix B samples, inside a Struct (the only place a card
// holds numbers).
func TestCanonicalizeNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "-0": "0", "1e21": "1e+21", "1e20": "100000000000000000000",
		"1e-7": "1e-7", "0.000001": "0.000001", "5e-324": "5e-324",
		"1.7976931348623157e308": "1.7976931348623157e+308",
		"9007199254740993":       "9007199254740992", "4.50": "4.5", "-1.5e-10": "-1.5e-10",
		// RFC 8785 Appendix B.
		"333333333.33333329": "333333333.3333333", "1E30": "1e+30", "4.5": "4.5",
		"0.002": "0.002", "0.000000000000000000000000001": "1e-27",
		"295147905179352830000": "295147905179352830000",
	} {
		card := `{"name":"n","capabilities":{"extensions":[{"uri":"u","params":{"n":` + in + `}}]}}`
		got, err := Canonicalize([]byte(card))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		w := `{"capabilities":{"extensions":[{"params":{"n":` + want + `},"uri":"u"}]},"name":"n"}`
		if string(got) != w {
			t.Errorf("%s: got %s, want %s", in, got, w)
		}
	}
}

// TestCanonicalizeRFC8785Strings checks the string and ordering rules of
// RFC 8785 §3.2.2.2 and §3.2.3 with the sample of its §3.2.3 (keys sorted
// by UTF-16 code units, so U+1F600 sorts before U+FB33).
func TestCanonicalizeRFC8785Strings(t *testing.T) {
	card := `{"name":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","capabilities":{"extensions":[{"uri":"u","params":` +
		`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}}]}}`
	got, err := Canonicalize([]byte(card))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"capabilities":{"extensions":[{"params":{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","` + "\ufb33" + `":"Hebrew Letter Dalet With Dagesh"},"uri":"u"}]},"name":"€$\u000f\nA'B\"\\\\\"/"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestCanonicalizeErrors(t *testing.T) {
	for _, tc := range []struct{ card, want string }{
		{`not json`, "malformed agent card"},
		{`[1]`, "the card: want an object (AgentCard)"},
		{`{"name":1}`, "name: want a string"},
		{`{"name":"n","name":"m"}`, "duplicate"},
		{`{"skills":[{"tags":"x"}]}`, "skills[0].tags: want an array of strings"},
		{`{"skills":[{"tags":[1]}]}`, "skills[0].tags[0]: want a string"},
		{`{"capabilities":{"streaming":"yes"}}`, "capabilities.streaming: want true or false"},
		{`{"capabilities":{"extensions":[{"params":[1]}]}}`, "capabilities.extensions[0].params: want an object"},
		{`{"provider":"p"}`, "provider: want an object (AgentProvider)"},
		{`{"securitySchemes":{"a":{"mtlsSecurityScheme":{},"apiKeySecurityScheme":{}}}}`, "securitySchemes.a: more than one member of the SecurityScheme oneof"},
		{`{"securityRequirements":[{"schemes":{"a":"x"}}]}`, "securityRequirements[0].schemes.a: want an object (StringList)"},
		{`{"securitySchemes":{"o":{"oauth2SecurityScheme":{"flows":{"implicit":{"scopes":{"a":1}}}}}}}`, "securitySchemes.o.oauth2SecurityScheme.flows.implicit.scopes.a: want a string"},
		{`{"name":"\ud800"}`, "malformed agent card"},
	} {
		_, err := Canonicalize([]byte(tc.card))
		if !errors.Is(err, ErrMalformedCard) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrMalformedCard containing %q", tc.card, err, tc.want)
		}
	}
}

// TestCanonicalizeExcludesSignaturesAndUnknownMembers: what a signature
// does not cover may change without breaking it.
func TestCanonicalizeExcludesSignaturesAndUnknownMembers(t *testing.T) {
	a, err := Canonicalize([]byte(`{"name":"n","url":"https://a.example","signatures":[{"protected":"x","signature":"y"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Canonicalize([]byte(`{"url":"https://b.example","name":"n"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != `{"name":"n"}` || string(a) != string(b) {
		t.Errorf("got %s and %s, want {\"name\":\"n\"} twice", a, b)
	}
}
