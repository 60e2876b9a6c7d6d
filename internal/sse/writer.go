// Package sse implements the Server-Sent Events wire format as defined by
// the WHATWG HTML Living Standard, section "Server-sent events"
// (https://html.spec.whatwg.org/multipage/server-sent-events.html).
//
// [Writer] produces a text/event-stream response on an [http.ResponseWriter],
// flushing after every event. [Reader] parses a text/event-stream body into
// [Event] values following the spec's interpretation rules, including last
// event ID tracking, the retry field and all three line-ending styles.
package sse

import (
	"bytes"
	"errors"
	"net/http"
	"sync"
	"time"
)

// ContentType is the media type of a Server-Sent Events stream.
const ContentType = "text/event-stream"

// ErrInvalidField is returned by [Writer.Event] when an event ID or event
// name contains a carriage return, line feed or NUL character, none of which
// can be represented in (or survive) the event stream format.
var ErrInvalidField = errors.New("sse: id or event name contains CR, LF or NUL")

// ErrClosed is returned by [Writer.Event] and [Writer.Comment] after
// [Writer.Close].
var ErrClosed = errors.New("sse: writer closed")

// Writer writes Server-Sent Events to an HTTP response.
//
// Every call to [Writer.Event] or [Writer.Comment] results in exactly one
// Write followed by one Flush on the underlying ResponseWriter, so each event
// reaches the client as soon as it is written; [Writer.Queue] writes
// without flushing, for an event that can leave with the next one. A
// Writer is safe for concurrent use (for example an event loop and a
// keep-alive ticker);
// after the first write error every later call returns that same error.
// Call [Writer.Close] before the handler returns if other goroutines may
// still write.
type Writer struct {
	mu          sync.Mutex
	w           http.ResponseWriter
	rc          *http.ResponseController
	wroteHeader bool
	err         error
}

// NewWriter prepares w for streaming Server-Sent Events.
//
// It sets the response headers Content-Type: text/event-stream,
// Cache-Control: no-cache, Connection: keep-alive and X-Accel-Buffering: no
// (the latter disables response buffering in nginx-style proxies). The
// status line (200 OK) is not written until the first event or comment, so
// the caller may still add headers or send an error response instead.
//
// NewWriter clears any write deadline on the connection (such as one set by
// http.Server.WriteTimeout) so that long-lived streams are not cut off;
// ResponseWriters that do not support deadlines are accepted as they are.
//
// It returns an error if w, after unwrapping through Unwrap methods as
// [http.ResponseController] does, cannot flush.
func NewWriter(w http.ResponseWriter) (*Writer, error) {
	if !canFlush(w) {
		return nil, errors.New("sse: http.ResponseWriter does not support flushing")
	}
	rc := http.NewResponseController(w)
	if err := rc.SetWriteDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return nil, err
	}
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	return &Writer{w: w, rc: rc}, nil
}

// Close marks the Writer closed: every later Event or Comment returns
// [ErrClosed] without touching the ResponseWriter. Close waits for a write
// in progress on another goroutine to finish, so a handler can call it (for
// example deferred) before returning to make sure that no keep-alive
// goroutine writes to the response after the handler has returned. It does
// not close the connection and always returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = ErrClosed
	}
	return nil
}

// canFlush reports whether http.ResponseController.Flush would find a
// flusher, without flushing (which would commit the status line).
func canFlush(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case interface{ FlushError() error }:
			return true
		case http.Flusher:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}

// Event writes one event and flushes it to the client.
//
// id and event are omitted from the stream when empty; note that per the
// spec a client keeps the last event ID it saw, so an empty id does not reset
// it (and a client reports an empty event name as "message"). id and event
// must not contain CR, LF or NUL; otherwise [ErrInvalidField] is returned and
// nothing is written.
//
// data may contain line breaks: it is split into one "data:" line per line.
// Because the format cannot distinguish them, CRLF and lone CR in data are
// read back by clients as LF. Empty (or nil) data is sent as a single empty
// data line, so the client still dispatches an event with empty data.
func (w *Writer) Event(id, event string, data []byte) error {
	return w.event(id, event, data, true)
}

// Queue writes one event like [Writer.Event] but does not flush it: it
// reaches the client with the next flushed event or comment, with
// [Writer.Flush], or when the response ends. Use it when the next event is
// already at hand (or the stream ends next), so that several events leave
// in one write. The caller must make sure a flush follows.
func (w *Writer) Queue(id, event string, data []byte) error {
	return w.event(id, event, data, false)
}

// Flush sends what [Writer.Queue] left unsent. It returns the Writer's
// first write error, or [ErrClosed] after Close.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return w.write(nil, true)
}

func (w *Writer) event(id, event string, data []byte, flush bool) error {
	if !validField(id) || !validField(event) {
		return ErrInvalidField
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	bp := framePool.Get().(*[]byte)
	defer putFrame(bp)
	b := (*bp)[:0]
	if id != "" {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	if event != "" {
		b = append(b, "event: "...)
		b = append(b, event...)
		b = append(b, '\n')
	}
	b = appendLines(b, "data:", data)
	b = append(b, '\n')
	*bp = b
	return w.write(b, flush)
}

// Comment writes a comment block (": text" followed by a blank line) and
// flushes it. Clients ignore comments, which makes them suitable as
// keep-alives that stop proxies from timing out an idle stream. Line breaks
// in text start new comment lines.
func (w *Writer) Comment(text string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return w.comment(text)
}

// comment writes a comment block; w.mu must be held.
func (w *Writer) comment(text string) error {
	bp := framePool.Get().(*[]byte)
	defer putFrame(bp)
	b := appendLines((*bp)[:0], ":", []byte(text)) // up to 32 bytes (a keep-alive), the copy stays on the stack
	b = append(b, '\n')
	*bp = b
	return w.write(b, true)
}

// framePool holds the buffers frames are built in: a Writer keeps none
// between writes, so a held, idle stream costs no buffer.
var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func putFrame(bp *[]byte) {
	if cap(*bp) <= 64<<10 {
		framePool.Put(bp)
	}
}

// TryComment is Comment when no other write is in progress; otherwise it
// writes nothing and returns false (a keep-alive is not needed then).
func (w *Writer) TryComment(text string) (bool, error) {
	if !w.mu.TryLock() {
		return false, nil
	}
	defer w.mu.Unlock()
	if w.err != nil {
		return true, w.err
	}
	return true, w.comment(text)
}

// SetWriteDeadline sets the write deadline of the connection under the
// current ResponseWriter (see [Writer.Replace]); ResponseWriters without
// deadlines return an error wrapping http.ErrNotSupported.
func (w *Writer) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	rc := w.rc
	w.mu.Unlock()
	return rc.SetWriteDeadline(t)
}

// Replace swaps the ResponseWriter under the Writer for the one fn
// returns, between two writes: fn runs with no write in progress and none
// starts until it returns. fn receives the current ResponseWriter and
// whether the status line was written. If fn fails, nothing changes and
// its error is returned; after [Writer.Close] or a write error, fn is not
// called and that error is returned. Later events and comments go to the
// new ResponseWriter, which must flush (or write through).
func (w *Writer) Replace(fn func(old http.ResponseWriter, wroteHeader bool) (http.ResponseWriter, error)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	nw, err := fn(w.w, w.wroteHeader)
	if err != nil {
		return err
	}
	w.w, w.rc = nw, http.NewResponseController(nw)
	return nil
}

// write writes b in one Write call and, when flush is set, flushes.
// w.mu must be held.
func (w *Writer) write(b []byte, flush bool) error {
	if !w.wroteHeader {
		w.wroteHeader = true
		w.w.WriteHeader(http.StatusOK)
	}
	if _, err := w.w.Write(b); err != nil {
		w.err = err
		return err
	}
	if !flush {
		return nil
	}
	if err := w.rc.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// appendLines appends s to b as one or more lines, each starting with
// prefix followed by a space (the space is omitted for empty lines) and
// terminated by LF. CRLF, CR and LF in s all end a line.
func appendLines(b []byte, prefix string, s []byte) []byte {
	for {
		i := indexEOL(s)
		line := s
		if i >= 0 {
			line = s[:i]
		}
		b = append(b, prefix...)
		if len(line) > 0 {
			b = append(b, ' ')
			b = append(b, line...)
		}
		b = append(b, '\n')
		if i < 0 {
			return b
		}
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
}

// indexEOL returns the index of the first CR or LF in s, or -1. It uses two
// vectorised IndexByte scans rather than a byte-at-a-time loop.
func indexEOL(s []byte) int {
	i := bytes.IndexByte(s, '\n')
	if i < 0 {
		return bytes.IndexByte(s, '\r')
	}
	if j := bytes.IndexByte(s[:i], '\r'); j >= 0 {
		return j
	}
	return i
}

// validField reports whether s can be sent as an id or event field value.
func validField(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\r', '\n', 0:
			return false
		}
	}
	return true
}
