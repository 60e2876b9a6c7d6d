package command

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/a2abridge/a2abridge/a2a"
)

// OctetStream is the media type of the raw parts that carry stdout bytes
// which are not valid UTF-8.
const OctetStream = "application/octet-stream"

// chunker turns a stream of stdout bytes into artifact parts, one per
// chunk: a TextPart when the chunk is valid UTF-8, else a FilePart with
// the raw bytes (media type OctetStream). A UTF-8 sequence cut by a chunk
// boundary is carried over to the next chunk, so text parts never split a
// character. The parts' bytes, concatenated in order, are the input.
type chunker struct {
	carry []byte // an incomplete UTF-8 sequence (at most 3 bytes)
}

// next returns the part for the bytes carried over and b, or the empty
// Part (Content nil) when there is nothing to send yet (b is empty, or is
// the start of a character). With eof, everything left is returned. b is
// not retained.
func (c *chunker) next(b []byte, eof bool) a2a.Part {
	acc := b
	if len(c.carry) > 0 {
		acc = append(c.carry[:len(c.carry):len(c.carry)], b...)
	}
	c.carry = nil
	if len(acc) == 0 {
		return a2a.Part{}
	}
	cut := len(acc)
	if !eof {
		cut = completeRunes(acc)
	}
	if utf8.Valid(acc[:cut]) {
		if cut < len(acc) {
			c.carry = bytes.Clone(acc[cut:])
		}
		if cut == 0 {
			return a2a.Part{}
		}
		return a2a.NewTextPart(string(acc[:cut]))
	}
	return a2a.Part{Content: a2a.Raw(bytes.Clone(acc)), MediaType: OctetStream}
}

// completeRunes returns the length of b without a UTF-8 sequence that is
// cut short at its end (a leading byte followed by fewer continuation
// bytes than it announces); len(b) when b ends on a whole character or on
// bytes that can never become one.
func completeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		switch c := b[i]; {
		case c < utf8.RuneSelf:
			return len(b)
		case c >= 0xC0: // a leading byte
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
		// a continuation byte: look further back
	}
	return len(b)
}

// Bounds of what is kept of stderr.
const (
	// maxLine is the length of the stderr lines logged; longer lines
	// are cut (and marked with "…").
	maxLine = 4096
	// tailLines is the number of stderr lines kept for a failure reason.
	tailLines = 20
	// maxTailLine is the length of a line kept for a failure reason.
	maxTailLine = 1024
	// maxLoggedLines is the number of stderr lines logged per run; the
	// rest are counted, not logged.
	maxLoggedLines = 1000
)

// readLines calls fn for each line read from r until EOF or an error:
// without its "\n" (or "\r\n"), cut to maxLine bytes (cut reports it),
// and possibly not valid UTF-8. A last line without "\n" counts.
func readLines(r io.Reader, fn func(line []byte, cut bool)) {
	br := bufio.NewReaderSize(r, maxLine)
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			fn(line, true)
			// Skip the rest of the line.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			if err != nil {
				return
			}
			continue
		case err != nil:
			if len(line) > 0 {
				fn(trimEOL(line), false)
			}
			return
		}
		fn(trimEOL(line), false)
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// tail keeps the last tailLines lines given to add.
type tail struct {
	lines [tailLines]string
	n     int // lines added
}

// add keeps line (made valid UTF-8 and cut to maxTailLine bytes).
func (t *tail) add(line []byte, cut bool) {
	t.lines[t.n%tailLines] = printable(line, maxTailLine, cut)
	t.n++
}

// last returns the lines kept, oldest first.
func (t *tail) last() []string {
	k := min(t.n, tailLines)
	out := make([]string, 0, k)
	for i := t.n - k; i < t.n; i++ {
		out = append(out, t.lines[i%tailLines])
	}
	return out
}

// printable returns b as valid UTF-8 (invalid bytes become U+FFFD), cut
// to max bytes of b on a character boundary, with "…" when cut.
func printable(b []byte, max int, cut bool) string {
	if len(b) > max {
		b = b[:completeRunes(b[:max])]
		cut = true
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if cut {
		s += "…"
	}
	return s
}
