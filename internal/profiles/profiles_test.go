package profiles

import "testing"

func FuzzParseClientFile(f *testing.F) {
	f.Add([]byte("profiles:\n  p:\n    url: http://x\n    token: ${T}\n    headers: {A: b}\n"))
	f.Add([]byte("profiles: {a: {tokne: x}}"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		cf, err := Parse(raw)
		if err != nil {
			return
		}
		for name := range cf.Profiles {
			if !Name.MatchString(name) {
				t.Fatalf("profile name %q accepted", name)
			}
		}
	})
}
