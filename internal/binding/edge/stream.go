package edge

// Server-Sent Events for every streaming binding (JSON-RPC 0.3 and 1.0,
// HTTP+JSON, the events endpoint): the stream's context, frame writing,
// connection take-over and keep-alive comments live here, in one place.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/telemetry"
)

// StreamContext returns the context of an SSE stream, with values from
// parent, and the scope that ends it. A stream that may take its HTTP/1.1
// connection over (WriteSSE) outlives its handler, so its context does
// not end with the request's; until then, the request's end cancels it.
// The caller defers the scope's Release, which ends the context unless
// Hand gave it to WriteSSE, which owns it from then on.
func StreamContext(parent context.Context, r *http.Request, opts Options) (context.Context, StreamScope) {
	if opts.KeepAlive > 0 && r.ProtoMajor == 1 {
		ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
		return ctx, StreamScope{cancel: cancel, detach: context.AfterFunc(r.Context(), cancel)}
	}
	ctx, cancel := context.WithCancel(parent)
	return ctx, StreamScope{cancel: cancel, detach: func() bool { return true }}
}

// StreamScope ends a stream's context (StreamContext): cancel ends it,
// detach stops the request's end from ending it.
type StreamScope struct {
	cancel context.CancelFunc
	detach func() bool
	handed bool
}

// Release ends the stream's context, unless Hand was called: for a
// request answered without a stream.
func (s *StreamScope) Release() {
	if !s.handed {
		s.detach()
		s.cancel()
	}
}

// Hand returns the scope for WriteSSE, which owns it from then on.
func (s *StreamScope) Hand() StreamScope {
	s.handed = true
	return *s
}

// AcceptsOnlySSE reports whether the request's Accept header names
// text/event-stream and neither application/json nor a wildcard: a
// streaming client.
func AcceptsOnlySSE(r *http.Request) bool {
	if !AcceptsSSE(r) {
		return false
	}
	for _, v := range r.Header.Values("Accept") {
		v = strings.ToLower(v)
		if strings.Contains(v, "application/json") || strings.Contains(v, "*/*") || strings.Contains(v, "application/*") {
			return false
		}
	}
	return true
}

// AcceptsSSE reports whether the request's Accept header names text/event-stream.
func AcceptsSSE(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(v), "text/event-stream") {
			return true
		}
	}
	return false
}

// LastEventID parses the Last-Event-ID header (A2A resume point).
func LastEventID(r *http.Request) (*int64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return nil, a2a.InvalidParams("Last-Event-ID", "Last-Event-ID must be a non-negative event sequence number")
	}
	return &n, nil
}

// WriteSSE streams events as SSE frames with keep-alive comments; ctx
// and its scope come from StreamContext (sc from its Hand), and WriteSSE
// owns them. The
// sse.Writer serialises the keep-alive goroutine's writes with ours.
//
// With takeover (tasks/resubscribe and the events endpoint, which follow
// a task already running: most are held long), keep-alives on and an
// HTTP/1.1 request, the stream takes its connection over once the status
// line is sent (with Connection: close; the body stays chunked, so the
// client can tell its clean end from a cut) and goes on in a goroutine of
// its own while the handler returns: a held stream then keeps none of
// net/http's per-connection state (its buffers, the request, the
// handler's stack). Otherwise (message/stream, which may be short, so its
// connection stays reusable) the handler writes the stream.
func WriteSSE(ctx context.Context, sc StreamScope, w http.ResponseWriter, r *http.Request, events iter.Seq2[binding.StreamEvent, error], opts Options,
	takeover bool, encode func([]byte, a2a.Event) ([]byte, error), errEvent string, encodeErr func(error) []byte) {
	cancel, detach := sc.cancel, sc.detach
	sw, err := sse.NewWriter(w)
	if err != nil {
		detach()
		cancel()
		e := a2a.ErrInternal.WithMessage("streaming is not supported by this connection")
		NoteError(ctx, e)
		WriteError(w, http.StatusInternalServerError, e)
		return
	}
	call := telemetry.CallFrom(ctx)
	call.StreamOpened(ctx)
	if takeover && opts.KeepAlive > 0 && r.ProtoMajor == 1 && r.ProtoMinor >= 1 {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		var taken *chunkedSSE
		if rc.Flush() == nil && sw.Replace(func(old http.ResponseWriter, _ bool) (http.ResponseWriter, error) {
			conn, _, err := http.NewResponseController(old).Hijack()
			if err != nil {
				return nil, err
			}
			taken = &chunkedSSE{conn: conn}
			return taken, nil
		}) == nil {
			detach() // the stream outlives the request now
			call.HandOff()
			go func() {
				defer call.Finish()
				defer cancel()
				pumpSSE(ctx, cancel, sw, events, opts, encode, errEvent, encodeErr)
				_ = sw.Close() // waits for a keep-alive write in progress
				taken.finish()
			}()
			return
		}
	}
	defer cancel()
	defer detach()
	pumpSSE(ctx, cancel, sw, events, opts, encode, errEvent, encodeErr)
	_ = sw.Close()
}

// pumpSSE writes the stream's frames to sw until events ends, a write
// fails or ctx is done.
func pumpSSE(ctx context.Context, cancel context.CancelFunc, sw *sse.Writer, events iter.Seq2[binding.StreamEvent, error], opts Options,
	encode func([]byte, a2a.Event) ([]byte, error), errEvent string, encodeErr func(error) []byte) {
	defer KeepAlive(sw, opts.KeepAlive, cancel)()
	call := telemetry.CallFrom(ctx)
	for ev, err := range events {
		if err != nil {
			if ctx.Err() == nil {
				_ = sw.Event("", errEvent, encodeErr(err))
			}
			return
		}
		// The buffer goes back to the pool after each event: a held,
		// idle stream keeps none.
		bp := BufPool.Get().(*[]byte)
		buf, err := encode((*bp)[:0], ev.Event)
		if err != nil {
			_ = sw.Event("", errEvent, encodeErr(fmt.Errorf("encode event: %w", err)))
			return
		}
		_ = sw.SetWriteDeadline(time.Now().Add(opts.StreamWriteTimeout))
		var werr error
		id := ""
		if ev.Seq > 0 {
			// Events of a task's log; a direct Message answer (Seq 0) is
			// in no log, and there is nothing to resume.
			id = strconv.FormatInt(ev.Seq, 10)
		}
		if ev.Hold {
			// The next event is at hand or the stream ends next (and with
			// it the response, which flushes): one write sends both.
			werr = sw.Queue(id, "", buf)
		} else {
			werr = sw.Event(id, "", buf)
		}
		if cap(buf) <= 64<<10 {
			*bp = buf
			BufPool.Put(bp)
		}
		if werr != nil {
			return // client gone; the task goes on
		}
		call.Event()
	}
}

// chunkedSSE is an http.ResponseWriter that goes on with a chunked
// HTTP/1.1 response (RFC 9112 §7.1) on a connection taken over from
// net/http after the status line and some of the body were sent.
type chunkedSSE struct {
	conn net.Conn
	hdr  [20]byte
}

func (c *chunkedSSE) Header() http.Header { return http.Header{} }
func (c *chunkedSSE) WriteHeader(int)     {}

// Write sends p as one chunk.
func (c *chunkedSSE) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil // an empty chunk would end the body
	}
	h := strconv.AppendInt(c.hdr[:0], int64(len(p)), 16)
	h = append(h, '\r', '\n')
	bufs := net.Buffers{h, p, crlf}
	if _, err := bufs.WriteTo(c.conn); err != nil {
		return 0, err
	}
	return len(p), nil
}

var crlf = []byte("\r\n")

// Flush implements http.Flusher: writes go straight to the connection.
func (c *chunkedSSE) Flush() {}

// SetWriteDeadline lets http.ResponseController bound writes.
func (c *chunkedSSE) SetWriteDeadline(t time.Time) error { return c.conn.SetWriteDeadline(t) }

// finish ends the body and closes the connection.
func (c *chunkedSSE) finish() {
	_ = c.conn.SetWriteDeadline(time.Now().Add(keepAliveWriteTimeout))
	_, _ = c.conn.Write([]byte("0\r\n\r\n"))
	_ = c.conn.Close()
}

// ParseSeq parses an event sequence number (an SSE id, a Last-Event-ID):
// a non-negative decimal integer.
func ParseSeq(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("bad sequence")
	}
	return n, nil
}

// KeepAlive sends keep-alive comments on sw every interval while it is
// idle, until the returned stop is called; after stop returns, none
// touches the response. A keep-alive that cannot be written calls cancel
// (the client is gone). interval ≤ 0: none, and stop does nothing.
func KeepAlive(sw *sse.Writer, interval time.Duration, cancel context.CancelFunc) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	st := &keepAliveStream{sw: sw, cancel: cancel}
	k := keepAlives(interval)
	k.add(st)
	return func() { k.remove(st) }
}

// keepAliveStream is one open SSE stream that gets keep-alive comments.
type keepAliveStream struct {
	mu     sync.Mutex // held while writing a keep-alive; closed under it
	closed bool
	sw     *sse.Writer
	cancel context.CancelFunc // ends the stream when a keep-alive cannot be written
}

// keepAliver writes the keep-alive comments of every open stream of one
// interval from a single goroutine (instead of one timer goroutine per
// stream: ten thousand idle streams cost ten thousand fewer goroutines). A
// stream busy writing an event is skipped; a write to a client that does
// not read is bounded by a short deadline and ends that stream.
type keepAliver struct {
	interval time.Duration
	mu       sync.Mutex
	streams  map[*keepAliveStream]struct{}
	running  bool
}

var (
	keepAliversMu sync.Mutex
	keepAliversBy = map[time.Duration]*keepAliver{}
)

func keepAlives(interval time.Duration) *keepAliver {
	keepAliversMu.Lock()
	defer keepAliversMu.Unlock()
	k := keepAliversBy[interval]
	if k == nil {
		k = &keepAliver{interval: interval, streams: map[*keepAliveStream]struct{}{}}
		keepAliversBy[interval] = k
	}
	return k
}

func (k *keepAliver) add(s *keepAliveStream) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.streams[s] = struct{}{}
	if !k.running {
		k.running = true
		go k.loop()
	}
}

// remove unregisters s; after it returns no keep-alive touches the
// response (whose connection may serve another request next).
func (k *keepAliver) remove(s *keepAliveStream) {
	k.mu.Lock()
	delete(k.streams, s)
	k.mu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// loop ticks while streams are open and exits when none is left.
func (k *keepAliver) loop() {
	tk := time.NewTicker(k.interval)
	defer tk.Stop()
	var batch []*keepAliveStream
	for range tk.C {
		k.mu.Lock()
		if len(k.streams) == 0 {
			k.running = false
			k.mu.Unlock()
			return
		}
		batch = batch[:0]
		for s := range k.streams {
			batch = append(batch, s)
		}
		k.mu.Unlock()
		for _, s := range batch {
			s.mu.Lock()
			if !s.closed {
				_ = s.sw.SetWriteDeadline(time.Now().Add(keepAliveWriteTimeout))
				if _, err := s.sw.TryComment("keep-alive"); err != nil && s.cancel != nil {
					s.cancel() // the client is gone
				}
			}
			s.mu.Unlock()
		}
		clear(batch)
	}
}

// keepAliveWriteTimeout bounds one keep-alive write.
const keepAliveWriteTimeout = 2 * time.Second

// WriteEvent answers with a stream of one SSE event holding data (a
// streaming client reads errors only from inside a stream) and reports
// whether it could; false when the connection cannot stream, and nothing
// was written: the caller answers in JSON.
func WriteEvent(w http.ResponseWriter, data []byte) bool {
	sw, err := sse.NewWriter(w)
	if err != nil {
		return false
	}
	_ = sw.Event("", "", data)
	_ = sw.Close()
	return true
}
