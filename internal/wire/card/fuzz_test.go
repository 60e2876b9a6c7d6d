package card

import (
	"testing"
)

// FuzzUnmarshal: any card document decodes or is refused without a panic;
// a card that decodes encodes again as our union card, and the union card
// decodes to a card with the same name and interfaces. UnmarshalSigned
// never panics either.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","description":"d","version":"1","url":"http://h/a","protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`,
		`{"name":"a","description":"d","version":"1","supportedInterfaces":[{"url":"http://h/a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],"securitySchemes":{"k":{"apiKeySecurityScheme":{"location":"header","name":"X"}}}}`,
		`{}`, `null`, `{"supportedInterfaces":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		UnmarshalSigned(b, b)
		c, _, err := Unmarshal(b)
		if err != nil {
			return
		}
		out, err := MarshalUnion(&c, Options{})
		if err != nil {
			return // a decoded card the encoder refuses (e.g. an invalid value kept as given) is an error, not a panic
		}
		back, _, err := Unmarshal(out)
		if err != nil {
			t.Fatalf("our union card does not decode: %v\n%s\nfrom %s", err, out, b)
		}
		if back.Name != c.Name || len(back.SupportedInterfaces) < len(c.SupportedInterfaces) {
			t.Fatalf("round trip changed the card: %+v → %+v", c, back)
		}
	})
}
