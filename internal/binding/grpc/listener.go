package grpc

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"time"
)

// preface is the HTTP/2 client connection preface (RFC 9113 §3.4): the
// first bytes of a cleartext HTTP/2 connection with prior knowledge, as
// gRPC clients open one without TLS.
var preface = []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")

// Split divides the connections ln accepts by their first bytes: those
// that open with the HTTP/2 client preface (cleartext gRPC) are accepted
// from h2c, all others (HTTP/1.x) from rest. No byte is lost: a
// connection's first bytes are read again from the connection accepted.
// A connection that has not told which it is within timeout (or that
// closes first) goes to rest, whose server has its own timeouts.
//
// Each listener returned is closed on its own (its Accept then returns
// net.ErrClosed); ln is closed once both are. A connection neither
// listener accepts (both closed) is closed.
func Split(ln net.Listener, timeout time.Duration) (h2c, rest net.Listener) {
	s := &splitter{ln: ln, timeout: timeout, failed: make(chan struct{})}
	s.h2c = &half{s: s, conns: make(chan net.Conn), closed: make(chan struct{})}
	s.rest = &half{s: s, conns: make(chan net.Conn), closed: make(chan struct{})}
	s.open = 2
	go s.run()
	return s.h2c, s.rest
}

type splitter struct {
	ln        net.Listener
	timeout   time.Duration
	h2c, rest *half

	// failed is closed once ln's Accept failed, with err.
	failed chan struct{}
	err    error

	mu   sync.Mutex
	open int // halves not closed
}

// half is one of the two listeners of a splitter.
type half struct {
	s      *splitter
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

// run accepts ln's connections until it fails (ln closed): each one is
// sorted on a goroutine of its own, so that a slow client holds up no
// other.
func (s *splitter) run() {
	var delay time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of file descriptors and the like: wait and retry,
				// as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			s.err = err
			close(s.failed)
			return
		}
		delay = 0
		go s.sort(c)
	}
}

// isTemporary reports an accept error that may pass (EMFILE, ENFILE,
// ECONNABORTED).
func isTemporary(err error) bool {
	t, ok := err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// sort reads c's first bytes and hands it to its half.
func (s *splitter) sort(c net.Conn) {
	buf := make([]byte, 4096) // the first read usually holds a whole HTTP/1.1 request
	n := 0
	to := s.rest
	_ = c.SetReadDeadline(time.Now().Add(s.timeout))
	for {
		m, err := c.Read(buf[n:])
		n += m
		k := min(n, len(preface))
		if !bytes.Equal(buf[:k], preface[:k]) {
			break // HTTP/1.x
		}
		if n >= len(preface) {
			to = s.h2c
			break
		}
		if err != nil {
			break
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	pc := &prefixConn{Conn: c, prefix: buf[:n]}
	select {
	case to.conns <- pc:
	case <-to.closed:
		c.Close()
	case <-s.failed:
		c.Close()
	}
}

// Accept waits for the next connection of this half.
func (h *half) Accept() (net.Conn, error) {
	select {
	case c := <-h.conns:
		return c, nil
	case <-h.closed:
		return nil, net.ErrClosed
	case <-h.s.failed:
		return nil, h.s.err
	}
}

// Close closes this half; ln once both are.
func (h *half) Close() error {
	var err error
	h.once.Do(func() {
		close(h.closed)
		h.s.mu.Lock()
		h.s.open--
		last := h.s.open == 0
		h.s.mu.Unlock()
		if last {
			err = h.s.ln.Close()
		}
	})
	return err
}

// Addr is ln's address.
func (h *half) Addr() net.Addr { return h.s.ln.Addr() }

// prefixConn is a connection whose first bytes were read already: Read
// returns them first.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		if len(c.prefix) == 0 {
			c.prefix = nil // the buffer goes
		}
		return n, nil
	}
	return c.Conn.Read(p)
}
