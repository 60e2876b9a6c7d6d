package sse

import (
	"bytes"
	"net/http"
	"testing"
)

var benchPayload = []byte(`{"jsonrpc":"2.0","id":"req-1","result":{"kind":"status-update","taskId":"3f0c6a1e-8d2b-4c1a-9f7e-2b1d5e6a7c8d","contextId":"c0ffee00-1234-5678-9abc-def012345678","status":{"state":"working","timestamp":"2025-01-01T00:00:00Z"},"final":false}}`)

func BenchmarkWriterEvent(b *testing.B) {
	w, err := NewWriter(&discardFlusher{header: http.Header{}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchPayload)))
	for b.Loop() {
		if err := w.Event("12345", "message", benchPayload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriterEventMultiline(b *testing.B) {
	data := bytes.Repeat([]byte("a line of text\n"), 20)
	w, _ := NewWriter(&discardFlusher{header: http.Header{}})
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		_ = w.Event("", "", data)
	}
}

// cycleReader returns its data over and over.
type cycleReader struct {
	data []byte
	off  int
}

func (c *cycleReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m := copy(p[n:], c.data[c.off:])
		n += m
		c.off = (c.off + m) % len(c.data)
	}
	return n, nil
}

func benchmarkReader(b *testing.B, stream []byte) {
	r := NewReader(&cycleReader{data: stream})
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReaderNext(b *testing.B) {
	var buf bytes.Buffer
	w, _ := NewWriter(&bufferRW{h: http.Header{}, buf: &buf})
	_ = w.Event("12345", "message", benchPayload)
	benchmarkReader(b, buf.Bytes())
}

func BenchmarkReaderNextMultiline(b *testing.B) {
	var buf bytes.Buffer
	w, _ := NewWriter(&bufferRW{h: http.Header{}, buf: &buf})
	_ = w.Comment("keep-alive")
	_ = w.Event("", "", bytes.Repeat([]byte("a line of text\n"), 20))
	benchmarkReader(b, buf.Bytes())
}
