package jsonpointer

import (
	"strings"
	"testing"
)

func TestDotted(t *testing.T) {
	for ptr, want := range map[string]string{
		"":                     "",
		"/message":             "message",
		"/message/parts/0/raw": "message.parts[0].raw",
		"/0":                   "0",
		"/a~1b/c~0d":           "a/b.c~d",
		"/metadata/12x":        "metadata.12x",
	} {
		if got := Dotted(ptr, nil); got != want {
			t.Errorf("Dotted(%q) = %q, want %q", ptr, got, want)
		}
	}
	if got := Dotted("/messages/0/ROLE", strings.ToLower); got != "messages[0].role" {
		t.Errorf("with token: %q", got)
	}
}

// FuzzDotted: any pointer is written without a panic, and one token,
// escaped, comes back as itself.
func FuzzDotted(f *testing.F) {
	f.Add("/message/parts/0/raw", "a~b/c")
	f.Fuzz(func(t *testing.T, ptr, tok string) {
		_ = Dotted(ptr, nil)
		esc := "/" + strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
		if got := Dotted(esc, nil); got != tok {
			t.Fatalf("Dotted(%q) = %q, want %q", esc, got, tok)
		}
	})
}
