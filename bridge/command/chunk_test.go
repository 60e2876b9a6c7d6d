package command

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a2abridge/a2abridge/a2a"
)

// chunkAll feeds data to a chunker in pieces cut at cuts (byte offsets,
// taken modulo the length) and returns the parts.
func chunkAll(t *testing.T, data []byte, cuts []byte) []a2a.Part {
	var ck chunker
	var parts []a2a.Part
	pos := 0
	for _, c := range cuts {
		if pos >= len(data) {
			break
		}
		n := int(c) % (len(data) - pos + 1)
		if p := ck.next(data[pos:pos+n], false); p.Content != nil {
			parts = append(parts, p)
		}
		if len(ck.carry) >= utf8.UTFMax {
			t.Fatalf("carry of %d bytes", len(ck.carry))
		}
		pos += n
	}
	if p := ck.next(data[pos:], true); p.Content != nil {
		parts = append(parts, p)
	}
	if ck.carry != nil {
		t.Fatalf("carry %q after eof", ck.carry)
	}
	return parts
}

// Concatenated, the parts are the input; text parts are valid UTF-8 and
// never empty; valid UTF-8 input yields text parts only.
func FuzzChunker(f *testing.F) {
	f.Add([]byte("hello, wörld ✓ 𝄞"), []byte{1, 2, 3, 5, 7, 11})
	f.Add([]byte("\xff\xfe binary \x00"), []byte{2})
	f.Add([]byte("𝄞𝄞𝄞"), []byte{1, 1, 1, 1, 1, 1, 1})
	f.Add([]byte("a\xe2\x9c"), []byte{2, 0})
	f.Add([]byte("\xf0\x9d\x84"), []byte{3})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		parts := chunkAll(t, data, cuts)
		var got []byte
		for _, p := range parts {
			switch c := p.Content.(type) {
			case a2a.Text:
				if string(c) == "" || !utf8.ValidString(string(c)) {
					t.Fatalf("text part %q", string(c))
				}
				got = append(got, string(c)...)
			case a2a.Raw, a2a.URL:
				if p.MediaType != OctetStream || len(p.Raw()) == 0 {
					t.Fatalf("raw part %+v", p)
				}
				if utf8.Valid(data) {
					t.Fatalf("raw part %q for valid UTF-8 input %q", p.Raw(), data)
				}
				got = append(got, p.Raw()...)
			default:
				t.Fatalf("part %T", c)
			}
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("parts give %q, want %q", got, data)
		}
	})
}

func TestChunkerKeepsCharactersWhole(t *testing.T) {
	s := "a✓𝄞é"
	for i := 0; i <= len(s); i++ {
		parts := chunkAll(t, []byte(s), []byte{byte(i)})
		for _, p := range parts {
			if _, ok := p.Content.(a2a.Text); !ok {
				t.Fatalf("cut at %d: %T", i, p.Content)
			}
		}
		if n := len(parts); n > 2 || n == 0 {
			t.Fatalf("cut at %d: %d parts", i, n)
		}
	}
}

func TestCompleteRunes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 3}, {"a\xe2", 1}, {"a\xe2\x9c", 1}, {"a\xe2\x9c\x93", 4},
		{"\xf0\x9d\x84", 0}, {"\xf0\x9d\x84\x9e", 4}, {"\x80\x80\x80\x80", 4},
		{"a\xff", 2}, {"a\xc3", 1}, {"a\xc3(", 3},
	} {
		if got := completeRunes([]byte(c.in)); got != c.want {
			t.Errorf("completeRunes(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// Lines are what is between newlines, without "\r\n", cut to maxLine;
// the tail keeps the last tailLines lines, valid UTF-8 and bounded.
func FuzzReadLines(f *testing.F) {
	f.Add([]byte("one\ntwo\r\nthree"), 0)
	f.Add([]byte(strings.Repeat("x", 5000)+"\nafter\n"), 0)
	f.Add([]byte("\xff\n\n\n"), 3)
	f.Add(bytes.Repeat([]byte("é"), 3000), 1)
	f.Fuzz(func(t *testing.T, data []byte, extraLong int) {
		if extraLong > 0 && extraLong < 4 {
			data = append(bytes.Repeat(data, 1+maxLine/(len(data)+1)), '\n')
		}
		var lines [][]byte
		var cuts []bool
		var tl tail
		readLines(bytes.NewReader(data), func(line []byte, cut bool) {
			if len(line) > maxLine || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("line %q", line)
			}
			lines = append(lines, bytes.Clone(line))
			cuts = append(cuts, cut)
			tl.add(line, cut)
		})
		// Without long lines, the lines are the input.
		long := false
		for _, l := range bytes.Split(data, []byte{'\n'}) {
			if len(l) >= maxLine {
				long = true
			}
		}
		if !long {
			want := bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'})
			if len(data) == 0 {
				want = nil
			}
			if len(want) != len(lines) {
				t.Fatalf("%d lines, want %d", len(lines), len(want))
			}
			for i := range want {
				if w := bytes.TrimSuffix(want[i], []byte{'\r'}); !bytes.Equal(lines[i], w) || cuts[i] {
					t.Fatalf("line %d %q (cut %v), want %q", i, lines[i], cuts[i], w)
				}
			}
		}
		last := tl.last()
		if len(last) != min(len(lines), tailLines) {
			t.Fatalf("tail of %d lines for %d", len(last), len(lines))
		}
		for i, l := range last {
			if !utf8.ValidString(l) || len(l) > 3*maxTailLine+len("…") {
				t.Fatalf("tail line %q", l)
			}
			src := lines[len(lines)-len(last)+i]
			if utf8.Valid(src) && len(src) <= maxTailLine && !cuts[len(lines)-len(last)+i] && l != string(src) {
				t.Fatalf("tail line %q, want %q", l, src)
			}
		}
	})
}

func TestPrintable(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		cut  bool
		want string
	}{
		{"abc", 10, false, "abc"},
		{"abc", 10, true, "abc…"},
		{"abcdef", 3, false, "abc…"},
		{"ab✓", 4, false, "ab…"},
		{"a\xffb", 10, false, "a\uFFFDb"},
	} {
		if got := printable([]byte(c.in), c.max, c.cut); got != c.want {
			t.Errorf("printable(%q, %d, %v) = %q, want %q", c.in, c.max, c.cut, got, c.want)
		}
	}
}
