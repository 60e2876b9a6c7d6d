package edge

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// readSizes records the largest buffer a Read was given.
type readSizes struct {
	r   io.Reader
	max int
}

func (s *readSizes) Read(p []byte) (int, error) {
	s.max = max(s.max, len(p))
	return s.r.Read(p)
}

// A declared Content-Length is not allocated up front: a client that
// announces 9 MiB and sends 100 bytes is read into a buffer of 64 KiB at
// most, not 9 MiB; and a body of unknown length is not read into a buffer
// much larger than the limit.
func TestReadBodyDoesNotTrustContentLength(t *testing.T) {
	rs := &readSizes{r: io.MultiReader(strings.NewReader(strings.Repeat("x", 100)), iotest.ErrReader(errors.New("client gone")))}
	r := &http.Request{Method: http.MethodPost, ContentLength: 9 << 20, Body: io.NopCloser(rs)}
	if _, _, e := ReadBody(httptest.NewRecorder(), r, 10<<20, 0); e == nil {
		t.Fatal("a body cut short was accepted")
	}
	if rs.max > maxInitialBody {
		t.Fatalf("reading 100 bytes of a body announced as 9 MiB used a %d-byte buffer", rs.max)
	}
	const limit = 1000 << 10
	got, err := readAll(strings.NewReader(strings.Repeat("x", limit)), -1, limit)
	if err != nil || len(got) != limit {
		t.Fatalf("a body at the limit: %d bytes, %v", len(got), err)
	}
	if cap(got) > limit+1 {
		t.Fatalf("a body of unknown length was read into a %d-byte buffer; the limit is %d", cap(got), limit)
	}
}

// readAll returns exactly the body, whatever the declared length and the
// sizes of the reads, and refuses more than the limit.
func TestReadAll(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 30000) // 300 kB: grows past 64 KiB
	for _, c := range []struct {
		name     string
		body     []byte
		declared int64
		limit    int64
		tooLarge bool
	}{
		{"declared", big, int64(len(big)), 1 << 20, false},
		{"unknown length", big, -1, 1 << 20, false},
		{"empty", nil, 0, 10, false},
		{"small declared", []byte("{}"), 2, 10, false},
		{"at the limit", big[:1000], -1, 1000, false},
		{"over the limit", big[:1001], -1, 1000, true},
		{"longer than declared", big[:5000], 100, 1 << 20, false},
		{"longer than declared, over the limit", big[:5000], 100, 1000, true},
	} {
		for _, rd := range []struct {
			name string
			r    func([]byte) io.Reader
		}{{"whole", func(b []byte) io.Reader { return bytes.NewReader(b) }},
			{"bytewise", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
			{"data with EOF", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }}} {
			got, err := readAll(rd.r(c.body), c.declared, c.limit)
			if c.tooLarge {
				if !errors.Is(err, errBodyTooLarge) {
					t.Errorf("%s/%s: %v, want errBodyTooLarge", c.name, rd.name, err)
				}
				continue
			}
			if err != nil || !bytes.Equal(got, c.body) {
				t.Errorf("%s/%s: %d bytes, %v; want the %d bytes", c.name, rd.name, len(got), err, len(c.body))
			}
		}
	}
	if _, err := readAll(iotest.TimeoutReader(bytes.NewReader(big)), -1, 1<<20); err == nil {
		t.Error("a read error was not reported")
	}
}
