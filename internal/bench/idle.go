package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Idle streams do not go through http.Transport (two goroutines and two
// 4 KiB buffers per connection): each is one goroutine on a plain
// connection with a small buffer, so that the client holds ten thousand
// of them cheaply.

const idleBuf = 1024

type idleRun struct {
	o      Options
	d      dialect
	u      *url.URL
	runID  string
	taskID string

	// counters (whole run)
	keepAlives, keepAliveBytes atomic.Int64
	events, eventBytes         atomic.Int64
	opened, open, ended        atomic.Int64
	closing                    atomic.Bool

	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	openLat  histogram
	errKinds map[string]int64
	firstErr string
}

func runIdle(ctx context.Context, o Options) (*Result, error) {
	u, _ := url.Parse(o.URL)
	r := &idleRun{o: o, d: newDialect(o), u: u, runID: newRunID(), conns: map[net.Conn]struct{}{}}
	tr := newTransport(o)
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: o.Timeout}
	if o.IdleVia == "resubscribe" {
		r.taskID = o.IdleTask
		if r.taskID == "" {
			id, state, err := createTask(ctx, c, o, r.runID, 0, o.IdleText, false)
			if err != nil {
				return nil, fmt.Errorf("bench: creating the idle task with %s %q: %w", r.d.sendMethod(false), o.IdleText, err)
			}
			if state.Final() {
				return nil, fmt.Errorf("bench: task %s is already finished: idle mode needs a long-running task, such as the built-in slow agent's (…/a2a/slow)", id)
			}
			r.taskID = id
		}
	}

	// Open the streams, Concurrency at a time.
	openStart := time.Now()
	sem := make(chan struct{}, o.Concurrency)
	var attempted, streams sync.WaitGroup
	stopProgress := r.progress(time.Now(), "opening")
	for i := range o.IdleStreams {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		attempted.Add(1)
		streams.Add(1)
		go func() {
			defer streams.Done()
			r.stream(ctx, int64(i+1), func() { <-sem; attempted.Done() })
		}()
	}
	attempted.Wait()
	stopProgress()
	openSecs := time.Since(openStart).Seconds()
	opened := int(r.opened.Load())
	// Streams on a task that is already finished end right after their
	// snapshot; some may still be ending now: give them a moment.
	for wait := time.Now().Add(500 * time.Millisecond); ctx.Err() == nil && r.open.Load() > 0 && r.ended.Load() > 0 && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond)
	}
	if ctx.Err() == nil && r.open.Load() == 0 {
		r.closeAll()
		streams.Wait()
		if opened > 0 {
			return nil, fmt.Errorf("bench: the %d streams that opened ended at once: idle mode needs a long-running task, such as the built-in slow agent's (…/a2a/slow)", opened)
		}
		return nil, fmt.Errorf("bench: no stream could be opened: %s", r.firstErr)
	}
	if o.OnOpen != nil {
		o.OnOpen(opened)
	}

	// Hold them.
	ka0, kab0, ev0, evb0 := r.keepAlives.Load(), r.keepAliveBytes.Load(), r.events.Load(), r.eventBytes.Load()
	holdStart := time.Now()
	stopProgress = r.progress(holdStart, "holding")
	select {
	case <-time.After(o.Duration):
	case <-ctx.Done():
	}
	held := time.Since(holdStart).Seconds()
	stopProgress()
	ka, kab, ev, evb := r.keepAlives.Load()-ka0, r.keepAliveBytes.Load()-kab0, r.events.Load()-ev0, r.eventBytes.Load()-evb0
	openAtEnd := int(r.open.Load())
	r.closeAll()
	streams.Wait()

	res := &Result{
		Mode: ModeIdle, URL: o.URL, Protocol: o.Protocol, Binding: o.Binding, Concurrency: o.Concurrency, Payload: o.Payload, Elapsed: held,
		Requests: int64(opened), Errors: int64(o.IdleStreams - opened), FirstError: r.firstErr,
		BytesReceived: kab + evb, Events: ev,
	}
	if len(r.errKinds) > 0 {
		res.ErrorKinds = r.errKinds
	}
	idle := &IdleResult{
		Via: o.IdleVia, TaskID: r.taskID, Requested: o.IdleStreams, Opened: opened, Failed: o.IdleStreams - opened,
		OpenAtEnd: openAtEnd, Ended: int(r.ended.Load()), OpenSeconds: openSecs, HeldSeconds: held,
		KeepAlives: ka, KeepAliveBytes: kab, Events: ev, EventBytes: evb,
		OpenLatency: r.openLat.summary(),
	}
	if openAtEnd > 0 && held > 0 {
		idle.KeepAlivesPerStreamPerSecond = float64(ka) / float64(openAtEnd) / held
	}
	res.Latency = idle.OpenLatency
	res.Idle = idle
	return res, nil
}

func (r *idleRun) closeAll() {
	r.closing.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.conns {
		c.Close()
	}
}

func (r *idleRun) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.errKinds == nil {
		r.errKinds = map[string]int64{}
	}
	r.errKinds[classify(err)]++
	if r.firstErr == "" {
		r.firstErr = err.Error()
	}
}

// stream opens one stream and reads it until it ends or the run closes
// it. attempted is called once: when the stream is open or has failed.
func (r *idleRun) stream(ctx context.Context, id int64, attempted func()) {
	once := sync.OnceFunc(attempted)
	defer once()
	start := time.Now()
	conn, err := r.dial(ctx)
	if err != nil {
		r.failed(err)
		return
	}
	r.mu.Lock()
	if r.closing.Load() {
		r.mu.Unlock()
		conn.Close()
		return
	}
	r.conns[conn] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.conns, conn)
		r.mu.Unlock()
		conn.Close()
	}()

	body, u := r.d.appendSubscribe(nil, id, r.taskID), r.d.subscribeURL(r.taskID)
	if r.o.IdleVia == "stream" {
		body, u = r.d.appendSend(nil, r.runID, id, r.o.IdleText, true, true), r.d.sendURL(true)
	}
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		r.failed(err)
		return
	}
	req.Header = requestHeader(r.o, "text/event-stream")
	// Opening is bounded by Timeout; an open stream only by the hold.
	_ = conn.SetDeadline(time.Now().Add(r.o.Timeout))
	bw := bufio.NewWriterSize(conn, len(body)+512)
	if err := req.Write(bw); err == nil {
		err = bw.Flush()
	}
	if err != nil {
		r.failed(err)
		return
	}
	br := bufio.NewReaderSize(conn, idleBuf)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		r.failed(err)
		return
	}
	if resp.StatusCode != http.StatusOK {
		r.failed(fail(fmt.Sprintf("http %d", resp.StatusCode), "HTTP %s", resp.Status))
		return
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		r.failed(fail("not a stream", "answer is %q, not text/event-stream", ct))
		return
	}
	var sc sseCounter
	buf := make([]byte, idleBuf)
	isOpen := false
	for {
		n, err := resp.Body.Read(buf)
		for _, ev := range sc.feed(buf[:n]) {
			switch ev.kind {
			case ':':
				r.keepAlives.Add(int64(ev.lines))
				r.keepAliveBytes.Add(int64(ev.n))
			case 'e':
				r.events.Add(1)
				r.eventBytes.Add(int64(ev.n))
				if !isOpen {
					isOpen = true
					_ = conn.SetDeadline(time.Time{})
					r.opened.Add(1)
					r.open.Add(1)
					r.mu.Lock()
					r.openLat.record(time.Since(start))
					r.mu.Unlock()
					once()
				}
			}
		}
		if err != nil {
			if r.closing.Load() {
				return
			}
			if isOpen {
				r.open.Add(-1)
				r.ended.Add(1)
				return
			}
			if errors.Is(err, io.EOF) {
				err = fail("stream ended early", "stream ended before its first event")
			}
			r.failed(err)
			return
		}
	}
}

func (r *idleRun) dial(ctx context.Context) (net.Conn, error) {
	host := r.u.Host
	if r.u.Port() == "" {
		if r.u.Scheme == "https" {
			host = net.JoinHostPort(r.u.Hostname(), "443")
		} else {
			host = net.JoinHostPort(r.u.Hostname(), "80")
		}
	}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil || r.u.Scheme != "https" {
		return conn, err
	}
	tc := tls.Client(conn, &tls.Config{ServerName: r.u.Hostname(), NextProtos: []string{"http/1.1"}})
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// sseCounter splits an SSE byte stream into comment lines and events
// without keeping lines: it needs only its own few fields.
type sseCounter struct {
	midLine  bool
	kind     byte // kind of the current line: ':' comment, 'd' data, 'o' other
	lineLen  int
	evBytes  int  // bytes of the event being read
	evData   bool // the event has a data line
	skipLF   bool // the previous line ended in CR
	lastCmt  bool // the previous line was a comment
	pendings []sseItem
}

type sseItem struct {
	kind  byte // ':' a comment line, 'e' an event
	n     int  // its bytes
	lines int  // comments: 1, or 0 for the LF of a comment's CRLF seen later
}

// feed consumes p and returns the comments and events it completed (the
// slice is reused by the next call).
func (s *sseCounter) feed(p []byte) []sseItem {
	s.pendings = s.pendings[:0]
	for _, c := range p {
		if s.skipLF {
			s.skipLF = false
			if c == '\n' {
				if s.lastCmt {
					s.pendings = append(s.pendings, sseItem{kind: ':', n: 1})
				} else {
					s.evBytes++
				}
				continue
			}
		}
		if c == '\r' || c == '\n' {
			s.skipLF = c == '\r'
			s.lastCmt = s.midLine && s.kind == ':'
			if !s.midLine { // blank line: dispatch
				s.evBytes++
				if s.evData {
					s.pendings = append(s.pendings, sseItem{kind: 'e', n: s.evBytes})
				}
				s.evBytes, s.evData = 0, false
				continue
			}
			s.midLine = false
			switch s.kind {
			case ':':
				s.pendings = append(s.pendings, sseItem{kind: ':', n: s.lineLen + 1, lines: 1})
			case 'd':
				s.evData = true
				s.evBytes += s.lineLen + 1
			default:
				s.evBytes += s.lineLen + 1
			}
			continue
		}
		if !s.midLine {
			s.midLine, s.lineLen = true, 0
			switch c {
			case ':':
				s.kind = ':'
			case 'd':
				s.kind = 'd' // "data"; other fields starting with d do not exist
			default:
				s.kind = 'o'
			}
		}
		s.lineLen++
	}
	return s.pendings
}

// progress prints idle progress once per second until stopped.
func (r *idleRun) progress(start time.Time, label string) (stop func()) {
	lastKA, lastEv := r.keepAlives.Load(), r.events.Load()
	return everySecond(r.o.Progress, nil, func(w io.Writer) {
		ka, ev := r.keepAlives.Load(), r.events.Load()
		r.mu.Lock()
		var bad int64
		for _, n := range r.errKinds {
			bad += n
		}
		r.mu.Unlock()
		fmt.Fprintf(w, "%5.0fs  %-7s  %6d open  %6d keep-alives/s  %6d events/s  %d ended  %d failed\n",
			time.Since(start).Seconds(), label, r.open.Load(), ka-lastKA, ev-lastEv, r.ended.Load(), bad)
		lastKA, lastEv = ka, ev
	})
}
