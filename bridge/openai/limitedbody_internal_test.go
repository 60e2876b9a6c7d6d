package openai

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// A body of exactly the limit reads whole, whatever the reads' sizes; one
// byte more is errAnswerTooLarge. An event stream's event longer than
// maxEvent fails the same way, however long the stream.
func TestLimitedBody(t *testing.T) {
	read := func(body string, u *upstream) (string, error) {
		b := &limitedBody{ReadCloser: io.NopCloser(iotest.OneByteReader(strings.NewReader(body))), u: u, left: u.limit}
		out, err := io.ReadAll(b)
		return string(out), err
	}
	for _, c := range []struct {
		body     string
		limit    int64
		maxEvent int64
		over     bool
	}{
		{strings.Repeat("x", 10), 10, 0, false},
		{strings.Repeat("x", 11), 10, 0, true},
		{"", 10, 0, false},
		{strings.Repeat("data: 12345\n\n", 100), 0, 20, false},
		{strings.Repeat("data: 12345\r\n\r\n", 100), 0, 20, false},
		{"data: 1\ndata: 2\ndata: 3\ndata: 4\n\n", 0, 20, true},
		{strings.Repeat("data: 12345\n\n", 100), 100, 20, true},
	} {
		u := &upstream{limit: c.limit, maxEvent: c.maxEvent}
		got, err := read(c.body, u)
		switch {
		case c.over && (!errors.Is(err, errAnswerTooLarge) || !u.overLimit):
			t.Errorf("%q (limit %d, event %d): %v, overLimit %v; want errAnswerTooLarge", c.body, c.limit, c.maxEvent, err, u.overLimit)
		case !c.over && (err != nil || got != c.body || u.overLimit):
			t.Errorf("%q (limit %d, event %d): %q, %v; want it whole", c.body, c.limit, c.maxEvent, got, err)
		}
	}
}
