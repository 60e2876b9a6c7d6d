// Package jsonpointer reads JSON Pointers (RFC 6901), as A2A errors name
// the member at fault ("/params/message/parts/0/raw").
package jsonpointer

import (
	"strconv"
	"strings"
)

// Dotted writes the JSON Pointer ptr, which starts with "/", as the
// member path a reader knows from documentation: "/message/parts/0/raw"
// is "message.parts[0].raw". Each reference token is unescaped ("~1" is
// "/", "~0" is "~") and, when token is not nil, passed through it (to
// shorten or clean a token taken from input); a numeric token after the
// first is an index. The empty pointer (the whole document) gives "".
func Dotted(ptr string, token func(string) string) string {
	if ptr == "" {
		return ""
	}
	var b strings.Builder
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if token != nil {
			tok = token(tok)
		}
		b.WriteString(tok)
	}
	return b.String()
}
