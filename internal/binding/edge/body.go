package edge

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
)

// maxInitialBody caps the buffer allocated for a request body before any
// of it has arrived, whatever its Content-Length says: 64 KiB. The buffer
// grows as data arrives.
const maxInitialBody = 64 << 10

// ReadBody reads r's body: at most limit bytes, within timeout when it is
// positive. It returns the body, or the HTTP status and the error to answer
// with: 200 and -32600 for a body over the limit, 408 and -32600 for one
// that did not arrive in time, 200 and -32600 for one that could not be
// read. After a body read in full, the connection's read deadline is
// cleared (the response may be a long SSE stream); after a failure the
// rest of the body is abandoned (AbandonBody).
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration) ([]byte, int, *a2a.Error) {
	if r.ContentLength > limit {
		AbandonBody(w, r)
		return nil, http.StatusOK, a2a.ErrInvalidRequest.WithMessage("Request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, limit)
	}
	rc := http.NewResponseController(w)
	deadline := timeout > 0 && r.ContentLength != 0 && rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	b, err := readAll(r.Body, r.ContentLength, limit)
	if err == nil {
		if deadline {
			// net/http clears it too once an HTTP/1.1 body hits its end;
			// this also covers HTTP/2 streams.
			_ = rc.SetReadDeadline(time.Time{})
		}
		return b, 0, nil
	}
	AbandonBody(w, r)
	switch {
	case errors.Is(err, errBodyTooLarge):
		return nil, http.StatusOK, a2a.ErrInvalidRequest.WithMessage("Request body exceeds the limit of %d bytes", limit)
	case isTimeout(err):
		return nil, http.StatusRequestTimeout, a2a.ErrInvalidRequest.WithMessage("Request body not received within %s", timeout)
	}
	return nil, http.StatusOK, a2a.ErrInvalidRequest.WithMessage("Could not read the request body")
}

// AbandonBody gives up the unread rest of r's body before an error
// answer: the connection closes after the answer, and its read deadline is
// set to now, so that net/http does not first wait for up to 256 KiB more
// of the body (which it would read with no deadline) from a client that
// sends it slowly. Only HTTP/1.x: an HTTP/2 stream is reset on its own,
// and "Connection: close" there would end the whole connection (GOAWAY),
// with every other stream on it.
func AbandonBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || r.ProtoMajor != 1 {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

var errBodyTooLarge = errors.New("request body too large")

// readAll reads rd to its end, at most limit bytes (more is
// errBodyTooLarge). The buffer starts at min(declared, 64 KiB) bytes (512
// when declared is unknown, < 0) and grows as data arrives, never beyond
// declared: a client that announces 10 MiB and sends a byte costs 64 KiB,
// not 10 MiB.
func readAll(rd io.Reader, declared, limit int64) ([]byte, error) {
	size := int64(512)
	if declared >= 0 {
		size = min(declared, maxInitialBody)
	}
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			if int64(len(b)) > limit {
				return nil, errBodyTooLarge
			}
			if declared >= 0 && int64(len(b)) >= declared {
				// All that was announced is here: expect the end without
				// growing for it. (net/http never reads past Content-Length;
				// another reader's extra bytes are taken as of unknown length.)
				var one [1]byte
				if _, err := io.ReadFull(rd, one[:]); err == io.EOF {
					return b, nil
				} else if err != nil {
					return nil, err
				}
				b, declared = append(b, one[0]), -1
				continue
			}
			grow := max(cap(b), 512)
			if declared >= 0 {
				grow = int(min(int64(grow), declared-int64(len(b))))
			}
			grow = int(min(int64(grow), limit+1-int64(len(b)))) // one byte past the limit tells it is exceeded
			nb := make([]byte, len(b), len(b)+grow)             // exactly: append's rounding would pass the limit
			copy(nb, b)
			b = nb
		}
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return nil, errBodyTooLarge
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// isTimeout reports a read that failed on its deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
