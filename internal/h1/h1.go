// Package h1 is the HTTP/1.1 client transport of the bridges' hop to
// their backends: an http.RoundTripper that writes the request and reads
// the answer on the caller's own goroutine, over pooled keep-alive
// connections.
//
// net/http's Transport gives every connection a read goroutine and a
// write goroutine; a call hands the request to one and waits for the
// other, two goroutine hand-overs per call. For a gateway whose every
// call is such a hop, measured on loopback at one client, that is about a
// third of the hop's latency (73 µs with net/http against 48 µs here, to
// the same backend). All the HTTP itself is net/http's: the request is
// written by (*http.Request).Write and the answer parsed by
// http.ReadResponse (Content-Length, chunked bodies, 1xx answers,
// Connection: close), so this package is only connection management.
//
// Only plain http:// requests that no proxy is configured for take this
// path; https (TLS, and HTTP/2 where the server offers it), proxies and
// everything else go to the Fallback transport.
package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Bounds of an answer's head, as net/http's Transport has them: the
// status line and header fields of one answer (MaxResponseHeaderBytes'
// default), and informational (1xx) answers before the final one.
const (
	maxHeaderBytes = 10 << 20
	max1xx         = 5
)

// Transport is an http.RoundTripper; see the package doc. Its zero value
// is not usable: build it with New.
type Transport struct {
	// Fallback carries the requests this transport does not (see the
	// package doc).
	Fallback *http.Transport
	// Control, if set, is the Control function of the connections this
	// transport dials itself (net.Dialer.Control): it may refuse the
	// address. Set it before the first request; give Fallback's dialer
	// the same.
	Control func(network, address string, c syscall.RawConn) error

	dialer      net.Dialer
	proxy       func(*http.Request) (*url.URL, error)
	maxIdle     int
	idleTimeout time.Duration
	mu          sync.Mutex
	idle        map[string][]*conn // by host:port; most recently used last
}

// New returns a Transport that keeps up to maxIdlePerHost idle
// connections to each host:port (net/http's default of 2 is too few for
// a gateway), closes those idle for more than 90 s, and falls back to
// fallback for what it does not carry. fallback's Proxy function decides
// which requests go through a proxy (and hence to fallback).
func New(fallback *http.Transport, maxIdlePerHost int) *Transport {
	return &Transport{
		Fallback:    fallback,
		dialer:      net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second},
		proxy:       fallback.Proxy,
		maxIdle:     maxIdlePerHost,
		idleTimeout: 90 * time.Second,
		idle:        map[string][]*conn{},
	}
}

// conn is one pooled connection.
type conn struct {
	nc     net.Conn
	lim    limited // under br: bounds an answer's head
	br     *bufio.Reader
	bw     *bufio.Writer
	key    string
	idleAt time.Time
	reused bool
}

// CloseIdleConnections closes the idle connections of this transport and
// of Fallback.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*conn{}
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.nc.Close()
		}
	}
	t.Fallback.CloseIdleConnections()
}

// ours reports whether req takes this transport's path.
func (t *Transport) ours(req *http.Request) bool {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" {
		return false
	}
	if t.proxy != nil {
		if u, err := t.proxy(req); err != nil || u != nil {
			return false
		}
	}
	return true
}

// hostPort is req's host with the port made explicit.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// RoundTrip implements http.RoundTripper. A request on a reused
// connection that the server had closed (the answer ends before its
// first byte) is sent again on a new connection when it can be replayed
// (no body, or GetBody set) and is idempotent or carries an
// Idempotency-Key, as net/http does; other errors are returned as they
// are, a cancelled context as its error.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.ours(req) {
		return t.Fallback.RoundTrip(req)
	}
	ctx := req.Context()
	key := hostPort(req.URL)
	for attempt := 0; ; attempt++ {
		c, err := t.get(ctx, key)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := t.exchange(ctx, c, req)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			closeBody(req)
			return nil, ctx.Err()
		}
		if !c.reused || attempt > 0 || !errors.Is(err, errStale) || !replayable(req) {
			closeBody(req)
			return nil, err
		}
		if req.Body != nil && req.Body != http.NoBody {
			b, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			req = req.Clone(ctx)
			req.Body = b
		}
	}
}

// errStale marks an answer that ended before its first byte on a reused
// connection: the server closed the connection while it was idle.
var errStale = errors.New("h1: the server closed the idle connection")

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// replayable reports whether req may be sent again after a connection
// that the server had closed failed it.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, k1 := req.Header["Idempotency-Key"]
	_, k2 := req.Header["X-Idempotency-Key"]
	return k1 || k2
}

// exchange writes req on c and reads its answer's head; the body is read
// by the caller, and c goes back to the pool once it is read to its end
// (or is closed when the body is closed before that).
func (t *Transport) exchange(ctx context.Context, c *conn, req *http.Request) (*http.Response, error) {
	// A cancelled context interrupts whatever read or write is under way
	// by moving the deadline into the past.
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*http.Response, error) {
		stop()
		c.nc.Close()
		return nil, err
	}
	err := req.Write(c.bw)
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		// A server may answer before it has read the whole request (a
		// 413, say) and close the connection: that answer, when it came,
		// is the result, as net/http has it.
		c.nc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if resp, rerr := t.readHead(c, req); rerr == nil && resp.StatusCode >= 200 {
			c.nc.SetReadDeadline(time.Time{})
			resp.Close = true
			resp.Body = &body{rc: resp.Body, t: t, c: c, ctx: ctx, stop: stop}
			return resp, nil
		}
		if c.reused {
			err = errors.Join(errStale, err)
		}
		return fail(err)
	}
	if _, err := c.br.Peek(1); err != nil {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		if c.reused {
			// Nothing of an answer came: the server closed the
			// connection while it was idle (EOF, or a reset).
			return fail(errors.Join(errStale, err))
		}
		return fail(err)
	}
	resp, err := t.readHead(c, req)
	if err != nil {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		return fail(err)
	}
	// A body that ends when the server closes the connection (neither a
	// length nor chunked) leaves nothing to keep.
	delimited := resp.ContentLength >= 0 || resp.Body == http.NoBody ||
		(len(resp.TransferEncoding) > 0 && resp.TransferEncoding[0] == "chunked")
	keep := delimited && !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols
	resp.Body = &body{rc: resp.Body, t: t, c: c, ctx: ctx, stop: stop, keep: keep}
	return resp, nil
}

// readHead reads the head of req's final answer, skipping informational
// ones (at most max1xx), each head within maxHeaderBytes.
func (t *Transport) readHead(c *conn, req *http.Request) (*http.Response, error) {
	for range max1xx + 1 {
		c.lim.n = maxHeaderBytes
		resp, err := http.ReadResponse(c.br, req)
		over := c.lim.n == 0
		c.lim.n = -1
		if err != nil {
			if over {
				return nil, errors.New("h1: the server's answer head is over " + strconv.Itoa(maxHeaderBytes) + " bytes")
			}
			return nil, err
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		return resp, nil
	}
	return nil, errors.New("h1: the server sent more than " + strconv.Itoa(max1xx) + " informational (1xx) answers")
}

// limited reads from r at most n bytes while n >= 0 (then it reports
// errHeadTooLarge), without limit while n < 0.
type limited struct {
	r io.Reader
	n int64
}

var errHeadTooLarge = errors.New("h1: the answer's head is too large")

func (l *limited) Read(p []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(p)
	}
	if l.n == 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// body is an answer's body; at its end its connection goes back to the
// pool.
type body struct {
	rc   io.ReadCloser
	t    *Transport
	c    *conn
	ctx  context.Context
	stop func() bool
	keep bool
	mu   sync.Mutex
	done bool
	eof  bool // read to its end: later reads report EOF again
}

// errBodyClosed is what a read of a closed body returns.
var errBodyClosed = errors.New("h1: read on a closed response body")

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	done, eof := b.done, b.eof
	b.mu.Unlock()
	if eof {
		return 0, io.EOF
	}
	if done {
		return 0, errBodyClosed
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.mu.Lock()
		b.eof = true
		b.mu.Unlock()
		b.finish(true)
	} else if err != nil {
		b.finish(false)
		if cerr := b.ctx.Err(); cerr != nil {
			// The deadline that interrupted the read was the context's.
			err = cerr
		}
	}
	return n, err
}

// Close closes the body; a body not read to its end closes the
// connection (an empty body is at its end).
func (b *body) Close() error {
	b.finish(b.rc == http.NoBody)
	return nil
}

// finish releases the connection once: to the pool when the body was
// read to its end on a connection that may be kept, else closed.
func (b *body) finish(atEOF bool) {
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return
	}
	b.done = true
	b.mu.Unlock()
	// stop reports false when the context's AfterFunc already ran (or
	// runs now): the connection's deadline was moved, so it is not kept.
	if b.stop() && atEOF && b.keep {
		b.t.put(b.c)
		return
	}
	b.c.nc.Close()
}

// get takes an idle connection to key, or dials one.
func (t *Transport) get(ctx context.Context, key string) (*conn, error) {
	now := time.Now()
	t.mu.Lock()
	for cs := t.idle[key]; len(cs) > 0; cs = t.idle[key] {
		c := cs[len(cs)-1]
		cs[len(cs)-1] = nil
		t.idle[key] = cs[:len(cs)-1]
		if now.Sub(c.idleAt) > t.idleTimeout {
			t.mu.Unlock()
			c.nc.Close()
			t.mu.Lock()
			continue
		}
		t.mu.Unlock()
		if c.alive() {
			c.reused = true
			return c, nil
		}
		c.nc.Close()
		t.mu.Lock()
	}
	t.mu.Unlock()
	d := t.dialer
	d.Control = t.Control
	nc, err := d.DialContext(ctx, "tcp", key)
	if err != nil {
		return nil, err
	}
	c := &conn{nc: nc, key: key}
	c.lim = limited{r: nc, n: -1}
	c.br = bufio.NewReaderSize(&c.lim, 16<<10)
	c.bw = bufio.NewWriterSize(nc, 16<<10)
	return c, nil
}

// put returns c to the pool, or closes it when the pool is full.
func (t *Transport) put(c *conn) {
	c.nc.SetDeadline(time.Time{})
	c.idleAt = time.Now()
	t.mu.Lock()
	if cs := t.idle[c.key]; len(cs) < t.maxIdle {
		t.idle[c.key] = append(cs, c)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	c.nc.Close()
}
