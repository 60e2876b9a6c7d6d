package sse

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/iotest"
)

// FuzzReader checks that the Reader never panics, that its result does not
// depend on how the input is split into reads, that dispatched events obey
// the format's invariants, and that events written by Writer are read back
// identically.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"",
		"data: hello\n\n",
		"id: 1\nevent: e\ndata: a\ndata: b\n\n",
		"id: 1\r\nevent: e\r\ndata: a\r\n\r\n",
		"data: a\rdata: b\r\r",
		"\xEF\xBB\xBFdata: x\n\n",
		": comment\n\n:\n\nretry: 1000\ndata\n\n",
		"id: a\x00b\ndata: x\n\nid\ndata\n\n",
		"retry: 99999999999999999999\nfoo\nbar: baz\ndata:  x\n\n",
		"data: trailing",
		"data: a\r\r\n\n\r",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// 1. Parse the raw input, whole and one byte at a time.
		got, err := readAll(NewReader(bytes.NewReader(in)))
		if err != io.EOF {
			t.Fatalf("Next: %v", err)
		}
		got1, err := readAll(NewReader(iotest.OneByteReader(bytes.NewReader(in))))
		if err != io.EOF {
			t.Fatalf("Next (one byte reads): %v", err)
		}
		if !equalEvents(got, got1) {
			t.Fatalf("result depends on read sizes:\n%+v\n%+v", got, got1)
		}
		for _, e := range got {
			if bytes.ContainsAny([]byte(e.ID), "\r\n\x00") || bytes.ContainsAny([]byte(e.Event), "\r\n") ||
				bytes.IndexByte(e.Data, '\r') >= 0 || e.Data == nil || e.Retry < 0 {
				t.Fatalf("invalid event %+v", e)
			}
		}
		// A small limit must give the same events or ErrEventTooLarge.
		small, err := readAll(NewReaderSize(iotest.HalfReader(bytes.NewReader(in)), 20))
		if err != io.EOF && !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("small limit: %v", err)
		}
		if len(small) > len(got) || !equalEvents(small, got[:len(small)]) {
			t.Fatalf("small limit gave different events:\n%+v\n%+v", small, got)
		}

		// 2. Re-encode the parsed events and read them back.
		var written []Event
		var buf bytes.Buffer
		w := newTestWriter(t, &buf)
		for _, e := range got {
			err := w.Event(e.ID, e.Event, e.Data)
			if bytes.IndexByte([]byte(e.Event), 0) >= 0 {
				if !errors.Is(err, ErrInvalidField) {
					t.Fatalf("event name with NUL: err = %v", err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("Event(%+v): %v", e, err)
			}
			written = append(written, e)
		}
		checkRoundTrip(t, buf.Bytes(), written)

		// 3. Use the raw input as event data (and as id, event name and
		// comment), write it and read it back.
		buf.Reset()
		w = newTestWriter(t, &buf)
		s := string(in)
		if err := w.Comment(s); err != nil {
			t.Fatal(err)
		}
		want := []Event{{Data: in}}
		if err := w.Event("", "", in); err != nil {
			t.Fatal(err)
		}
		if validField(s) {
			if err := w.Event(s, s, in); err != nil {
				t.Fatal(err)
			}
			want = append(want, Event{ID: s, Event: s, Data: in})
		} else if err := w.Event(s, "", in); !errors.Is(err, ErrInvalidField) {
			t.Fatalf("invalid id %q accepted: %v", s, err)
		}
		checkRoundTrip(t, buf.Bytes(), want)
	})
}

// checkRoundTrip reads stream and compares it with the events that were
// written to it, applying the format's rules: the ID is the last non-empty
// ID written so far, CRLF and CR in data become LF, Retry is never set.
func checkRoundTrip(t *testing.T, stream []byte, written []Event) {
	t.Helper()
	back, err := readAll(NewReader(bytes.NewReader(stream)))
	if err != io.EOF {
		t.Fatalf("reading back: %v", err)
	}
	if len(back) != len(written) {
		t.Fatalf("wrote %d events, read %d\nstream %q", len(written), len(back), stream)
	}
	lastID := ""
	for i, e := range written {
		if e.ID != "" {
			lastID = e.ID
		}
		want := Event{ID: lastID, Event: e.Event, Data: normalizeEOL(e.Data)}
		if !equalEvents([]Event{want}, back[i:i+1]) {
			t.Fatalf("event %d: read %+v, want %+v\nstream %q", i, back[i], want, stream)
		}
	}
}

func normalizeEOL(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}

func equalEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Event != b[i].Event || !bytes.Equal(a[i].Data, b[i].Data) || a[i].Retry != b[i].Retry {
			return false
		}
	}
	return true
}

// bufferRW is a flushing http.ResponseWriter writing into a bytes.Buffer.
type bufferRW struct {
	h   http.Header
	buf *bytes.Buffer
}

func (b *bufferRW) Header() http.Header         { return b.h }
func (b *bufferRW) WriteHeader(int)             {}
func (b *bufferRW) Write(p []byte) (int, error) { return b.buf.Write(p) }
func (b *bufferRW) Flush()                      {}

func newTestWriter(t *testing.T, buf *bytes.Buffer) *Writer {
	w, err := NewWriter(&bufferRW{h: http.Header{}, buf: buf})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestRoundTrip writes a fixed set of events and reads them back.
func TestRoundTrip(t *testing.T) {
	events := []Event{
		{ID: "1", Event: "a", Data: []byte("x")},
		{Event: "b", Data: []byte("multi\nline\n\ndata\n")},
		{ID: "id with spaces ", Data: []byte("")},
		{ID: " lead", Event: " e ", Data: []byte(" lead\x00nul \xff")},
		{Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{"kind":"status-update"}}`)},
		{ID: "3", Data: []byte("crlf\r\nand cr\rend\r")},
	}
	var buf bytes.Buffer
	w := newTestWriter(t, &buf)
	for _, e := range events {
		if err := w.Event(e.ID, e.Event, e.Data); err != nil {
			t.Fatal(err)
		}
		if err := w.Comment("keep-alive"); err != nil {
			t.Fatal(err)
		}
	}
	checkRoundTrip(t, buf.Bytes(), events)
}
