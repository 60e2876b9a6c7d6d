package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ev is shorthand for a dispatched event.
func ev(id, event, data string) Event {
	return Event{ID: id, Event: event, Data: []byte(data)}
}

// readAll reads events until an error and returns them with the error.
func readAll(r *Reader) ([]Event, error) {
	var evs []Event
	for {
		e, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, e)
	}
}

var readerTests = []struct {
	name  string
	input string
	want  []Event
}{
	{"empty stream", "", nil},
	{"single event", "data: hello\n\n", []Event{ev("", "", "hello")}},
	{"no space after colon", "data:hello\n\n", []Event{ev("", "", "hello")}},
	{"only one space stripped", "data:  two\n\n", []Event{ev("", "", " two")}},
	{"tab not stripped", "data:\tx\n\n", []Event{ev("", "", "\tx")}},
	{"multi-line data", "data: a\ndata: b\ndata:c\n\n", []Event{ev("", "", "a\nb\nc")}},
	{"empty data line", "data\n\n", []Event{ev("", "", "")}},
	{"empty data with colon", "data:\n\n", []Event{ev("", "", "")}},
	{"two empty data lines", "data\ndata\n\n", []Event{ev("", "", "\n")}},
	{"data trailing empty", "data: a\ndata:\n\n", []Event{ev("", "", "a\n")}},
	{"colon in value", "data: a: b:c\n\n", []Event{ev("", "", "a: b:c")}},
	{"CRLF", "id: 1\r\nevent: e\r\ndata: a\r\ndata: b\r\n\r\n", []Event{ev("1", "e", "a\nb")}},
	{"CR", "id: 1\revent: e\rdata: a\rdata: b\r\r", []Event{ev("1", "e", "a\nb")}},
	{"mixed endings", "data: a\rdata: b\ndata: c\r\n\n", []Event{ev("", "", "a\nb\nc")}},
	{"CR CR LF", "data: a\r\r\n", []Event{ev("", "", "a")}},
	{"LF CR", "data: a\n\r", []Event{ev("", "", "a")}},
	{"event name", "event: add\ndata: 73857293\n\n", []Event{ev("", "add", "73857293")}},
	{"event name resets after dispatch", "event: x\ndata: 1\n\ndata: 2\n\n", []Event{ev("", "x", "1"), ev("", "", "2")}},
	{"event name resets on empty block", "event: x\n\ndata: 2\n\n", []Event{ev("", "", "2")}},
	{"last event name wins", "event: a\nevent: b\ndata: 1\n\n", []Event{ev("", "b", "1")}},
	{"empty event name", "event\ndata: 1\n\n", []Event{ev("", "", "1")}},
	{"comments and keep-alives", ": hi\n\n:\n\n: keep-alive\ndata: x\n: mid\ndata: y\n\n", []Event{ev("", "", "x\ny")}},
	{"comment only", ": just a comment\n\n", nil},
	{"BOM", "\xEF\xBB\xBFdata: x\n\n", []Event{ev("", "", "x")}},
	{"BOM only once", "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n", []Event{ev("", "", "y")}},
	{"BOM-like not stripped later", "data: \xEF\xBB\xBFx\n\n", []Event{ev("", "", "\xEF\xBB\xBFx")}},
	{"partial BOM is data", "\xEF\xBBdata: x\n\ndata: y\n\n", []Event{ev("", "", "y")}},
	{"unknown fields ignored", "foo: bar\ndata: x\nDATA: nope\nData: no\n data: no\nbaz\n\n", []Event{ev("", "", "x")}},
	{"id persists", "id: 1\ndata: a\n\ndata: b\n\n", []Event{ev("1", "", "a"), ev("1", "", "b")}},
	{"id changes", "id: 1\ndata: a\n\nid: 2\ndata: b\n\n", []Event{ev("1", "", "a"), ev("2", "", "b")}},
	{"empty id resets", "id: 1\ndata: a\n\nid\ndata: b\n\nid:\ndata: c\n\n", []Event{ev("1", "", "a"), ev("", "", "b"), ev("", "", "c")}},
	{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []Event{ev("1", "", "a"), ev("1", "", "b")}},
	{"id from block without data", "id: 5\n\ndata: a\n\n", []Event{ev("5", "", "a")}},
	{"id after data in block", "data: a\nid: 9\n\n", []Event{ev("9", "", "a")}},
	{"id spaces", "id:  x \ndata: a\n\n", []Event{ev(" x ", "", "a")}},
	{"no data means no event", "id: 1\nevent: e\n\n", nil},
	{"retry", "retry: 1500\ndata: a\n\ndata: b\n\n", []Event{{Data: []byte("a"), Retry: 1500}, ev("", "", "b")}},
	{"standalone retry reported with next event", "retry: 3000\n\ndata: a\n\n", []Event{{Data: []byte("a"), Retry: 3000}}},
	{"invalid retry ignored", "retry: 10\nretry: 1.5\nretry: -1\nretry: x\nretry:\nretry: 99999999999999999999999\ndata: a\n\n", []Event{{Data: []byte("a"), Retry: 10}}},
	{"retry zero", "retry: 0\ndata: a\n\n", []Event{{Data: []byte("a"), Retry: 0}}},
	{"trailing event without blank line discarded", "data: a\n\ndata: b\n", []Event{ev("", "", "a")}},
	{"trailing partial line discarded", "data: a\n\ndata: b", []Event{ev("", "", "a")}},
	{"CR at EOF ends the line", "data: a\r\r", []Event{ev("", "", "a")}},
	{"NUL in data kept", "data: a\x00b\n\n", []Event{ev("", "", "a\x00b")}},
	{"NUL in event kept", "event: a\x00b\ndata: x\n\n", []Event{ev("", "a\x00b", "x")}},
	{"invalid UTF-8 passed through", "data: \xff\xfe\n\n", []Event{ev("", "", "\xff\xfe")}},
	{"many blank lines", "\n\n\r\n\rdata: a\n\n\n\n", []Event{ev("", "", "a")}},
	{"spec example stocks", "data: YHOO\ndata: +2\ndata: 10\n\n", []Event{ev("", "", "YHOO\n+2\n10")}},
	{"spec example mixed", ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n", []Event{ev("1", "", "first event"), ev("", "", "second event")}},
	{"spec example two events", "data\n\ndata\ndata\n\ndata:\n", []Event{ev("", "", ""), ev("", "", "\n")}},
	{"spec example spaces", "data:test\n\ndata: test\n\n", []Event{ev("", "", "test"), ev("", "", "test")}},
}

func TestReader(t *testing.T) {
	readers := map[string]func(io.Reader) io.Reader{
		"whole":   func(r io.Reader) io.Reader { return r },
		"onebyte": iotest.OneByteReader,
		"half":    iotest.HalfReader,
		"dataerr": iotest.DataErrReader,
	}
	for _, tt := range readerTests {
		for rname, wrap := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got, err := readAll(NewReader(wrap(strings.NewReader(tt.input))))
				if err != io.EOF {
					t.Errorf("final error = %v, want io.EOF", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("events mismatch for %q (-want +got):\n%s", tt.input, diff)
				}
			})
		}
	}
}

func TestReaderSmallBufferSizes(t *testing.T) {
	// Exercise buffer growth and compaction with every limit from tiny up.
	for _, tt := range readerTests {
		for _, size := range []int{32, 33, 64, 100} {
			r := NewReaderSize(iotest.HalfReader(strings.NewReader(tt.input)), size)
			got, err := readAll(r)
			if err != io.EOF {
				t.Errorf("%s/%d: err = %v", tt.name, size, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s/%d: (-want +got):\n%s", tt.name, size, diff)
			}
		}
	}
}

func TestReaderDataIsNotAliased(t *testing.T) {
	r := NewReader(strings.NewReader("data: aaaa\n\ndata: bbbb\n\n"))
	e1, _ := r.Next()
	e2, _ := r.Next()
	if string(e1.Data) != "aaaa" || string(e2.Data) != "bbbb" {
		t.Fatalf("got %q, %q", e1.Data, e2.Data)
	}
	e2.Data[0] = 'Z'
	if e3, _ := NewReader(strings.NewReader("data:\n\n")).Next(); e3.Data == nil {
		t.Error("empty Data is nil, want non-nil empty slice")
	}
	if string(e1.Data) != "aaaa" {
		t.Errorf("first event's data changed to %q", e1.Data)
	}
}

func TestReaderLastEventID(t *testing.T) {
	r := NewReader(strings.NewReader("id: 1\ndata: a\n\nid: 2\n\n"))
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if got := r.LastEventID(); got != "1" {
		t.Errorf("LastEventID = %q, want 1", got)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("err = %v", err)
	}
	if got := r.LastEventID(); got != "2" {
		t.Errorf("LastEventID after id-only block = %q, want 2", got)
	}
}

func TestReaderSizeLimit(t *testing.T) {
	tests := []struct {
		name  string
		limit int
		input string
		want  []Event // events before the error
	}{
		{"long line", 100, "data: ok\n\n" + "data: " + strings.Repeat("x", 200) + "\n\n", []Event{ev("", "", "ok")}},
		{"long line never terminated", 100, strings.Repeat("x", 10000), nil},
		{"long comment", 100, ":" + strings.Repeat("x", 200) + "\n\n", nil},
		{"many data lines", 100, strings.Repeat("data: 0123456789\n", 20) + "\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReaderSize(strings.NewReader(tt.input), tt.limit)
			got, err := readAll(r)
			if !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("err = %v, want ErrEventTooLarge", err)
			}
			if !strings.Contains(err.Error(), "100 bytes") {
				t.Errorf("error %q does not mention the limit", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if _, err2 := r.Next(); err2 != err {
				t.Errorf("error not sticky: %v", err2)
			}
			if cap(r.buf) > 2*tt.limit+64 {
				t.Errorf("buffer grew to %d for limit %d", cap(r.buf), tt.limit)
			}
		})
	}
	// Exactly at the limit is fine: a 100-byte line and 100 bytes of data.
	line := "data:" + strings.Repeat("y", 95)
	r := NewReaderSize(strings.NewReader(line+"\r\n\r\n"), 100)
	if e, err := r.Next(); err != nil || len(e.Data) != 95 {
		t.Fatalf("at limit: len=%d err=%v", len(e.Data), err)
	}
	in := strings.Repeat("data: 123456789\n", 10) // 10*9 + 9 separators = 99
	r = NewReaderSize(strings.NewReader(in+"\n"), 99)
	if e, err := r.Next(); err != nil || len(e.Data) != 99 {
		t.Fatalf("data at limit: len=%d err=%v", len(e.Data), err)
	}
}

func TestReaderDefaultLimit(t *testing.T) {
	r := NewReaderSize(strings.NewReader(""), 0)
	if r.max != DefaultMaxEventSize {
		t.Errorf("max = %d", r.max)
	}
	big := bytes.Repeat([]byte("z"), 1<<20)
	in := append(append([]byte("data: "), big...), "\n\n"...)
	e, err := NewReader(bytes.NewReader(in)).Next()
	if err != nil || !bytes.Equal(e.Data, big) {
		t.Fatalf("1 MiB event: err=%v len=%d", err, len(e.Data))
	}
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom)))
	got, err := readAll(r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if diff := cmp.Diff([]Event{ev("", "", "a")}, got); diff != "" {
		t.Error(diff)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("error not sticky: %v", err)
	}
}

// zeroReader returns 0, nil forever.
type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderNoProgress(t *testing.T) {
	if _, err := NewReader(zeroReader{}).Next(); err != io.ErrNoProgress {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

// TestReaderDoesNotBlockAfterCR checks that an event terminated by CR is
// dispatched without waiting to see whether an LF follows.
func TestReaderDoesNotBlockAfterCR(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	r := NewReader(pr)
	go func() { _, _ = pw.Write([]byte("data: a\r\r")) }()
	got := make(chan Event, 1)
	go func() {
		e, _ := r.Next()
		got <- e
	}()
	select {
	case e := <-got:
		if string(e.Data) != "a" {
			t.Fatalf("data = %q", e.Data)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next blocked after CR-terminated event")
	}
	// A following LF belongs to the previous CR and is not a blank line.
	go func() { _, _ = pw.Write([]byte("\ndata: b\r\n\r\n")) }()
	e, err := r.Next()
	if err != nil || string(e.Data) != "b" {
		t.Fatalf("second event = %q, %v", e.Data, err)
	}
}

// TestReaderBOMDoesNotBlock checks that the BOM check does not wait for
// three bytes when the stream clearly does not start with a BOM.
func TestReaderBOMDoesNotBlock(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	r := NewReader(pr)
	go func() {
		_, _ = pw.Write([]byte("d"))
		_, _ = pw.Write([]byte("ata:x\n\n"))
	}()
	e, err := r.Next()
	if err != nil || string(e.Data) != "x" {
		t.Fatalf("got %q, %v", e.Data, err)
	}
}
