package sse

import (
	"bytes"
	"errors"
	"io"
	"strconv"
)

// DefaultMaxEventSize is the limit used by [NewReader] for the length of a
// single line and for the accumulated data of a single event: 16 MiB.
const DefaultMaxEventSize = 16 << 20

// ErrEventTooLarge is returned (wrapped, see errors.Is) by [Reader.Next]
// when a line or the data of an event exceeds the reader's size limit.
var ErrEventTooLarge = errors.New("sse: event exceeds maximum size")

// Event is one event dispatched from an event stream.
type Event struct {
	// ID is the stream's last event ID at the time the event was
	// dispatched: the value of the most recent "id" field seen so far in
	// the stream, which may have been sent with an earlier event. It is
	// empty if no id was set yet or the server reset it with an empty id.
	ID string
	// Event is the event type from the "event" field, empty if the event
	// had none (browsers then report the type "message").
	Event string
	// Data is the event's data: the values of its "data" fields joined
	// with "\n". It is never nil for a dispatched event (but may be
	// empty) and is owned by the caller.
	Data []byte
	// Retry is the reconnection time in milliseconds from the most recent
	// valid "retry" field received since the previous dispatched event
	// (including in blocks that carried no data), or 0 if there was none.
	Retry int
}

// Reader parses a text/event-stream byte stream into events.
//
// It follows the spec's interpretation rules: a leading UTF-8 byte order
// mark is skipped; lines may end in CRLF, LF or CR; lines starting with ':'
// are comments; a field without ':' has an empty value; one space after the
// colon is removed; unknown fields are ignored; an "id" value containing NUL
// is ignored; a "retry" value that is not all ASCII digits is ignored; an
// event is dispatched only at a blank line and only if it has at least one
// data field; an incomplete event at the end of the stream is discarded.
// Bytes are passed through as they are: invalid UTF-8 is not replaced.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	rd      io.Reader
	buf     []byte // buffered input is buf[r:w]
	r, w    int
	readErr error // error from rd, returned once buffered input is used up
	err     error // sticky error returned by Next
	max     int
	maxBuf  int

	started bool // BOM check done
	skipLF  bool // previous line ended in CR; a following LF belongs to it

	data      []byte // data buffer, without the trailing LF
	hasData   bool   // at least one data field since the last dispatch
	eventType string // event type buffer
	prevType  string // last event type seen, to avoid re-allocating it
	lastID    string // last event ID buffer
	retry     int    // pending retry value, reported with the next event
}

// NewReader returns a Reader for r with the default size limit
// [DefaultMaxEventSize].
func NewReader(r io.Reader) *Reader {
	return NewReaderSize(r, DefaultMaxEventSize)
}

// NewReaderSize returns a Reader for r that rejects any line, and any
// event's accumulated data, longer than maxEvent bytes with an error
// wrapping [ErrEventTooLarge] instead of buffering without bound. A
// maxEvent <= 0 selects [DefaultMaxEventSize].
func NewReaderSize(r io.Reader, maxEvent int) *Reader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventSize
	}
	// A line of maxEvent bytes plus its terminator must fit; keep room for
	// the 3-byte BOM check even with tiny limits.
	maxBuf := max(maxEvent+1, 16)
	return &Reader{
		rd:     r,
		buf:    make([]byte, min(4096, maxBuf)),
		max:    maxEvent,
		maxBuf: maxBuf,
	}
}

// Next reads until the next event is dispatched and returns it. At the end
// of the stream it returns io.EOF (any incomplete trailing event is
// discarded, as the spec requires); other read errors are returned as they
// are. After an error, Next keeps returning that error.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	if !r.started {
		if err := r.skipBOM(); err != nil {
			r.err = err
			return Event{}, err
		}
	}
	for {
		line, err := r.readLine()
		if err != nil {
			r.err = err
			r.data, r.hasData = nil, false
			return Event{}, err
		}
		if len(line) == 0 {
			if r.hasData {
				return r.dispatch(), nil
			}
			r.eventType = ""
			continue
		}
		if err := r.processLine(line); err != nil {
			r.err = err
			return Event{}, err
		}
	}
}

// LastEventID returns the stream's current last event ID, which a client
// sends in the Last-Event-ID header when it reconnects. Unlike Event.ID it
// also reflects id fields in blocks that dispatched no event.
func (r *Reader) LastEventID() string { return r.lastID }

// dispatch builds the event from the buffers and resets them.
func (r *Reader) dispatch() Event {
	ev := Event{
		ID:    r.lastID,
		Event: r.eventType,
		Data:  append(make([]byte, 0, len(r.data)), r.data...),
		Retry: r.retry,
	}
	if cap(r.data) > 64<<10 {
		r.data = nil // don't pin the memory of one huge event
	} else {
		r.data = r.data[:0]
	}
	r.hasData = false
	r.eventType = ""
	r.retry = 0
	return ev
}

// processLine interprets one non-empty line.
func (r *Reader) processLine(line []byte) error {
	if line[0] == ':' {
		return nil // comment
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		n := len(value)
		if r.hasData {
			n += len(r.data) + 1
		}
		if n > r.max {
			return r.tooLarge()
		}
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		// Reuse the previous name's string: no allocation for repeats.
		if string(value) != r.prevType {
			r.prevType = string(value)
		}
		r.eventType = r.prevType
	case "id":
		if bytes.IndexByte(value, 0) < 0 && string(value) != r.lastID {
			r.lastID = string(value)
		}
	case "retry":
		if n, ok := parseRetry(value); ok {
			r.retry = n
		}
	}
	return nil
}

// parseRetry parses a non-empty string of ASCII digits that fits in an int.
func parseRetry(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int(c - '0')
		if n > (maxInt-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

const maxInt = int(^uint(0) >> 1)

func (r *Reader) tooLarge() error {
	return &sizeError{limit: r.max}
}

// sizeError reports an exceeded size limit; it matches ErrEventTooLarge.
type sizeError struct{ limit int }

func (e *sizeError) Error() string {
	return ErrEventTooLarge.Error() + " of " + strconv.Itoa(e.limit) + " bytes"
}

func (e *sizeError) Is(target error) bool { return target == ErrEventTooLarge }

var bom = []byte("\xEF\xBB\xBF")

// skipBOM discards a UTF-8 byte order mark at the start of the stream.
func (r *Reader) skipBOM() error {
	for r.w-r.r < len(bom) && bytes.HasPrefix(bom, r.buf[r.r:r.w]) && r.readErr == nil {
		if err := r.fill(); err != nil {
			return err
		}
	}
	if bytes.HasPrefix(r.buf[r.r:r.w], bom) {
		r.r += len(bom)
	}
	r.started = true
	return nil
}

// readLine returns the next line without its terminator. The slice aliases
// the internal buffer and is valid until the next call. At the end of input
// a final line without terminator is discarded and the read error returned.
func (r *Reader) readLine() ([]byte, error) {
	scanned := 0 // bytes of buf[r.r:] known to contain no line terminator
	for {
		if r.skipLF && r.r < r.w {
			if r.buf[r.r] == '\n' {
				r.r++
			}
			r.skipLF = false
		}
		if i := indexEOL(r.buf[r.r+scanned : r.w]); i >= 0 {
			i += scanned
			line := r.buf[r.r : r.r+i]
			r.skipLF = r.buf[r.r+i] == '\r'
			r.r += i + 1
			if len(line) > r.max {
				return nil, r.tooLarge()
			}
			return line, nil
		}
		scanned = r.w - r.r
		if scanned > r.max {
			return nil, r.tooLarge()
		}
		if r.readErr != nil {
			r.r = r.w
			return nil, r.readErr
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads more input into the buffer, compacting or growing it as
// needed. A read error is recorded in r.readErr (not returned) so buffered
// lines are still processed; fill returns an error only when the reader
// makes no progress.
func (r *Reader) fill() error {
	if r.r > 0 {
		copy(r.buf, r.buf[r.r:r.w])
		r.w -= r.r
		r.r = 0
	}
	if r.w == len(r.buf) {
		// Callers only ask for more when the buffer holds an unfinished
		// line of at most r.max bytes, so len(r.buf) < r.maxBuf here.
		nb := make([]byte, min(max(2*len(r.buf), 4096), r.maxBuf))
		copy(nb, r.buf[:r.w])
		r.buf = nb
	}
	for range 100 {
		n, err := r.rd.Read(r.buf[r.w:])
		if n < 0 || n > len(r.buf)-r.w {
			return errors.New("sse: reader returned invalid count")
		}
		r.w += n
		if err != nil {
			r.readErr = err
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	return io.ErrNoProgress
}
