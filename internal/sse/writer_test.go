package sse

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// recorder is an http.ResponseWriter that records every call.
type recorder struct {
	header  http.Header
	status  []int
	writes  []string
	flushes int
	body    bytes.Buffer
	failErr error // returned from Write when set
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header  { return r.header }
func (r *recorder) WriteHeader(code int) { r.status = append(r.status, code) }
func (r *recorder) Flush()               { r.flushes++ }
func (r *recorder) Write(p []byte) (int, error) {
	if r.failErr != nil {
		return 0, r.failErr
	}
	r.writes = append(r.writes, string(p))
	return r.body.Write(p)
}

// noFlush is an http.ResponseWriter that cannot flush.
type noFlush struct{ http.ResponseWriter }

// wrapped hides the flusher behind an Unwrap method, as middleware does.
type wrapped struct{ rw http.ResponseWriter }

func (w *wrapped) Header() http.Header         { return w.rw.Header() }
func (w *wrapped) Write(p []byte) (int, error) { return w.rw.Write(p) }
func (w *wrapped) WriteHeader(code int)        { w.rw.WriteHeader(code) }
func (w *wrapped) Unwrap() http.ResponseWriter { return w.rw }

func TestWriterEvent(t *testing.T) {
	tests := []struct {
		name, id, event, data string
		want                  string
	}{
		{"data only", "", "", "hello", "data: hello\n\n"},
		{"all fields", "42", "update", `{"a":1}`, "id: 42\nevent: update\ndata: {\"a\":1}\n\n"},
		{"empty data", "", "", "", "data:\n\n"},
		{"multi-line LF", "", "", "a\nb\nc", "data: a\ndata: b\ndata: c\n\n"},
		{"multi-line CRLF", "", "", "a\r\nb", "data: a\ndata: b\n\n"},
		{"multi-line CR", "", "", "a\rb", "data: a\ndata: b\n\n"},
		{"CR CR is two breaks", "", "", "a\r\rb", "data: a\ndata:\ndata: b\n\n"},
		{"LF CR is two breaks", "", "", "a\n\rb", "data: a\ndata:\ndata: b\n\n"},
		{"trailing newline", "", "", "a\n", "data: a\ndata:\n\n"},
		{"leading newline", "", "", "\na", "data:\ndata: a\n\n"},
		{"leading space kept", "", "", " x", "data:  x\n\n"},
		{"colon in data", "", "", "a: b", "data: a: b\n\n"},
		{"id only", "7", "", "x", "id: 7\ndata: x\n\n"},
		{"event only", "", "ping", "x", "event: ping\ndata: x\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			w, err := NewWriter(rec)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Event(tt.id, tt.event, []byte(tt.data)); err != nil {
				t.Fatal(err)
			}
			if got := rec.body.String(); got != tt.want {
				t.Errorf("wrote %q, want %q", got, tt.want)
			}
			if len(rec.writes) != 1 || rec.flushes != 1 {
				t.Errorf("got %d writes and %d flushes, want 1 and 1", len(rec.writes), rec.flushes)
			}
		})
	}
}

func TestWriterNilData(t *testing.T) {
	rec := newRecorder()
	w, _ := NewWriter(rec)
	if err := w.Event("", "", nil); err != nil {
		t.Fatal(err)
	}
	if got := rec.body.String(); got != "data:\n\n" {
		t.Errorf("wrote %q", got)
	}
}

func TestWriterComment(t *testing.T) {
	tests := []struct{ text, want string }{
		{"keep-alive", ": keep-alive\n\n"},
		{"", ":\n\n"},
		{"a\nb", ": a\n: b\n\n"},
		{"a\r\nb\rc", ": a\n: b\n: c\n\n"},
	}
	for _, tt := range tests {
		rec := newRecorder()
		w, _ := NewWriter(rec)
		if err := w.Comment(tt.text); err != nil {
			t.Fatal(err)
		}
		if got := rec.body.String(); got != tt.want {
			t.Errorf("Comment(%q) wrote %q, want %q", tt.text, got, tt.want)
		}
		if rec.flushes != 1 {
			t.Errorf("Comment(%q): %d flushes", tt.text, rec.flushes)
		}
	}
}

func TestWriterRejectsInvalidFields(t *testing.T) {
	for _, bad := range []string{"a\nb", "a\rb", "a\x00b", "\n", "x\r\n"} {
		rec := newRecorder()
		w, _ := NewWriter(rec)
		if err := w.Event(bad, "", []byte("d")); !errors.Is(err, ErrInvalidField) {
			t.Errorf("Event(id=%q): err = %v, want ErrInvalidField", bad, err)
		}
		if err := w.Event("", bad, []byte("d")); !errors.Is(err, ErrInvalidField) {
			t.Errorf("Event(event=%q): err = %v, want ErrInvalidField", bad, err)
		}
		if rec.body.Len() != 0 || len(rec.status) != 0 {
			t.Errorf("invalid event %q wrote output %q / status %v", bad, rec.body.String(), rec.status)
		}
		// The writer stays usable after a rejected event.
		if err := w.Event("", "", []byte("ok")); err != nil {
			t.Errorf("valid event after rejected one: %v", err)
		}
	}
}

func TestWriterHeadersAndLazyStatus(t *testing.T) {
	rec := newRecorder()
	rec.header.Set("Content-Length", "12")
	w, err := NewWriter(rec)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Content-Type":      "text/event-stream",
		"Cache-Control":     "no-cache",
		"Connection":        "keep-alive",
		"X-Accel-Buffering": "no",
		"Content-Length":    "",
	}
	for k, v := range want {
		if got := rec.header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if len(rec.status) != 0 || rec.flushes != 0 || len(rec.writes) != 0 {
		t.Fatalf("NewWriter wrote: status %v, %d flushes, %d writes", rec.status, rec.flushes, len(rec.writes))
	}
	_ = w.Comment("hi")
	_ = w.Event("1", "e", []byte("d"))
	if len(rec.status) != 1 || rec.status[0] != http.StatusOK {
		t.Errorf("status calls = %v, want exactly [200]", rec.status)
	}
	if len(rec.writes) != 2 || rec.flushes != 2 {
		t.Errorf("got %d writes, %d flushes; want 2, 2", len(rec.writes), rec.flushes)
	}
}

func TestNewWriterNeedsFlusher(t *testing.T) {
	if _, err := NewWriter(noFlush{newRecorder()}); err == nil {
		t.Fatal("NewWriter accepted a ResponseWriter that cannot flush")
	}
	if _, err := NewWriter(&wrapped{noFlush{newRecorder()}}); err == nil {
		t.Fatal("NewWriter accepted a wrapped ResponseWriter that cannot flush")
	}
}

func TestNewWriterUnwraps(t *testing.T) {
	rec := newRecorder()
	w, err := NewWriter(&wrapped{&wrapped{rec}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Event("", "", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if rec.flushes != 1 || rec.body.String() != "data: x\n\n" {
		t.Errorf("flushes=%d body=%q", rec.flushes, rec.body.String())
	}
}

func TestNewWriterHTTPTestRecorder(t *testing.T) {
	rec := httptest.NewRecorder()
	w, err := NewWriter(rec)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Flushed {
		t.Fatal("flushed before the first event")
	}
	if err := w.Event("", "", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if !rec.Flushed || rec.Code != http.StatusOK || rec.Body.String() != "data: x\n\n" {
		t.Errorf("flushed=%v code=%d body=%q", rec.Flushed, rec.Code, rec.Body.String())
	}
}

func TestWriterStickyError(t *testing.T) {
	rec := newRecorder()
	w, _ := NewWriter(rec)
	boom := errors.New("boom")
	rec.failErr = boom
	if err := w.Event("", "", []byte("x")); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	rec.failErr = nil
	if err := w.Comment("x"); !errors.Is(err, boom) {
		t.Errorf("Comment after failure: err = %v, want boom", err)
	}
	if err := w.Event("", "", []byte("x")); !errors.Is(err, boom) {
		t.Errorf("Event after failure: err = %v, want boom", err)
	}
}

func TestWriterEventDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers")
	}
	d := &discardFlusher{header: http.Header{}}
	w, _ := NewWriter(d)
	data := []byte("line1\nline2")
	_ = w.Event("id", "ev", []byte(strings.Repeat("x\n", 1000))) // grow the buffer once
	allocs := testing.AllocsPerRun(100, func() {
		_ = w.Event("id", "ev", data)
		_ = w.Comment("keep-alive")
	})
	if allocs != 0 {
		t.Errorf("Event+Comment allocate %v times per call, want 0", allocs)
	}
}

// discardFlusher is a minimal flushing ResponseWriter that drops output.
type discardFlusher struct {
	header http.Header
	n      int
}

func (d *discardFlusher) Header() http.Header         { return d.header }
func (d *discardFlusher) WriteHeader(int)             {}
func (d *discardFlusher) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
func (d *discardFlusher) Flush()                      {}

func TestWriterClose(t *testing.T) {
	rec := newRecorder()
	w, _ := NewWriter(rec)
	_ = w.Event("", "", []byte("a"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Event("", "", []byte("b")); !errors.Is(err, ErrClosed) {
		t.Errorf("Event after Close: %v, want ErrClosed", err)
	}
	if err := w.Comment("c"); !errors.Is(err, ErrClosed) {
		t.Errorf("Comment after Close: %v, want ErrClosed", err)
	}
	if rec.body.String() != "data: a\n\n" || rec.flushes != 1 {
		t.Errorf("wrote %q with %d flushes after Close", rec.body.String(), rec.flushes)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestWriterConcurrent writes events and comments from several goroutines;
// run with -race. Every block must arrive intact.
func TestWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	w := newTestWriter(t, &buf)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if i%5 == 0 {
					_ = w.Comment("keep-alive")
				}
				_ = w.Event(strconv.Itoa(g), "", []byte("x\ny"))
			}
		}()
	}
	wg.Wait()
	_ = w.Close()
	evs, err := readAll(NewReader(&buf))
	if err != io.EOF || len(evs) != 200 {
		t.Fatalf("read %d events, err %v", len(evs), err)
	}
	for _, e := range evs {
		if string(e.Data) != "x\ny" {
			t.Fatalf("corrupted event %+v", e)
		}
	}
}

func TestWriterQueueWaitsForFlush(t *testing.T) {
	rec := newRecorder()
	w, _ := NewWriter(rec)
	if err := w.Queue("1", "", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := w.Queue("2", "", []byte("b")); err != nil {
		t.Fatal(err)
	}
	if rec.flushes != 0 || len(rec.status) != 1 {
		t.Fatalf("after two queued events: %d flushes, status %v; want 0 flushes and the status written", rec.flushes, rec.status)
	}
	if err := w.Event("3", "", []byte("c")); err != nil {
		t.Fatal(err)
	}
	if rec.flushes != 1 {
		t.Fatalf("the event after queued ones flushed %d times, want 1", rec.flushes)
	}
	if err := w.Queue("4", "", []byte("d")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if rec.flushes != 2 {
		t.Fatalf("Flush: %d flushes, want 2", rec.flushes)
	}
	if got, want := rec.body.String(), "id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\nid: 4\ndata: d\n\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	_ = w.Close()
	if err := w.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close: %v, want ErrClosed", err)
	}
	if err := w.Queue("", "", []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Queue after Close: %v, want ErrClosed", err)
	}
}

func TestWriterFlushWritesStatus(t *testing.T) {
	rec := newRecorder()
	w, _ := NewWriter(rec)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(rec.status) != 1 || rec.status[0] != http.StatusOK || rec.flushes != 1 {
		t.Errorf("Flush on a new stream: status %v, %d flushes; want [200] and 1", rec.status, rec.flushes)
	}
}

func TestWriterQueueError(t *testing.T) {
	rec := newRecorder()
	rec.failErr = errors.New("broken pipe")
	w, _ := NewWriter(rec)
	if err := w.Queue("", "", []byte("x")); err == nil {
		t.Fatal("Queue on a failing connection: no error")
	}
	if err := w.Flush(); err == nil || err.Error() != "broken pipe" {
		t.Errorf("Flush after a failed Queue: %v, want the sticky write error", err)
	}
}
