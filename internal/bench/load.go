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
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Phases of a load run.
const (
	phaseWarmup = iota
	phaseMeasure
	phaseDone
)

type runner struct {
	o      Options
	d      dialect
	client *http.Client
	runID  string
	text   string
	url    string      // send and stream modes: where requests go
	tasks  []benchTask // resubscribe mode: the tasks subscribed to
	hdr    http.Header
	grpc   *grpcClient // the gRPC binding's connections (nil for HTTP)

	nextID atomic.Int64
	phase  atomic.Int32
	issued atomic.Int64 // requests mode: tickets taken in the measure phase

	// live counters for progress (all phases)
	done, failed atomic.Int64
}

// benchTask is a task that resubscribe mode subscribes to, and where.
type benchTask struct {
	id, url string
}

// stats is one worker's record of the measured window.
type stats struct {
	lat, first histogram
	ok, errs   int64
	events     int64
	bytes      int64
	kinds      map[string]int64
	firstErr   string

	body bytes.Buffer  // send: response body
	br   *bufio.Reader // stream: response reader
	line []byte        // stream: a line longer than br's buffer
	data []byte        // stream: an event's data
	req  []byte        // request body
	// firstD is the time to the last stream's first event.
	firstD time.Duration
	idb    []byte // the request id as JSON
}

func newTransport(o Options) *http.Transport {
	conns := o.Concurrency + 16
	return &http.Transport{
		Proxy: nil, // a benchmark measures the target, not a proxy
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		TLSClientConfig:     &tls.Config{},
		ForceAttemptHTTP2:   true, // only matters for https
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		WriteBufferSize:     16 << 10,
		ReadBufferSize:      16 << 10,
	}
}

func runLoad(ctx context.Context, o Options) (*Result, error) {
	tr := newTransport(o)
	defer tr.CloseIdleConnections()
	r := &runner{
		o:      o,
		d:      newDialect(o),
		client: &http.Client{Transport: tr, Timeout: o.Timeout},
		runID:  newRunID(),
		text:   payloadText(o.Payload),
	}
	r.url = r.d.sendURL(o.Mode == ModeStream)
	if o.Binding == BindingGRPC {
		g, err := newGRPCClient(o)
		if err != nil {
			return nil, err
		}
		defer g.close()
		r.grpc = g
	}
	if o.Mode == ModeSend {
		r.hdr = requestHeader(o, "application/json")
	} else {
		r.hdr = requestHeader(o, "text/event-stream")
	}
	if o.Mode == ModeResubscribe {
		if r.d.v10 {
			// A resume of the finished task from its first event: A2A
			// 1.0 refuses a plain subscription to a terminal task
			// (§3.1.6), and one to an interrupted task lasts until the
			// task ends.
			r.hdr.Set("Last-Event-ID", "0")
		}
		if err := r.makeTasks(ctx); err != nil {
			return nil, err
		}
	}
	// One checked request first: a target that cannot answer at all is an
	// error, not a run full of failures.
	pre := r.newStats()
	if err := r.once(ctx, pre, 0); err != nil {
		return nil, fmt.Errorf("bench: first %s request to %s failed: %w", r.o.Mode, r.o.URL, err)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := make([]*stats, o.Concurrency)
	var wg sync.WaitGroup
	for w := range workers {
		workers[w] = r.newStats()
		wg.Add(1)
		go func(st *stats, w int) {
			defer wg.Done()
			r.work(runCtx, st, w)
		}(workers[w], w)
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	stopProgress := r.progress(allDone)
	defer stopProgress()

	// Warmup, then the measured window.
	if o.Warmup > 0 {
		select {
		case <-time.After(o.Warmup):
		case <-ctx.Done():
		case <-allDone:
		}
	}
	if o.OnStart != nil {
		o.OnStart()
	}
	t0 := time.Now()
	r.phase.Store(phaseMeasure)
	var t1 time.Time
	if o.Requests > 0 {
		select {
		case <-allDone:
		case <-ctx.Done():
		}
		t1 = time.Now()
		r.phase.Store(phaseDone)
	} else {
		select {
		case <-time.After(o.Duration):
		case <-ctx.Done():
		case <-allDone:
		}
		t1 = time.Now()
		r.phase.Store(phaseDone)
	}
	if o.OnStop != nil {
		o.OnStop()
	}
	// Requests still in flight are not counted; give them a moment to end
	// cleanly (keeping connections reusable), then cut them.
	select {
	case <-allDone:
	case <-time.After(2 * time.Second):
		cancel()
		<-allDone
	}

	res := &Result{
		Mode: o.Mode, URL: o.URL, Protocol: o.Protocol, Binding: o.Binding, Concurrency: o.Concurrency, Payload: o.Payload,
		Warmup: o.Warmup.Seconds(), Elapsed: t1.Sub(t0).Seconds(),
	}
	var lat, first histogram
	for _, st := range workers {
		lat.merge(&st.lat)
		first.merge(&st.first)
		res.Requests += st.ok
		res.Errors += st.errs
		res.Events += st.events
		res.BytesReceived += st.bytes
		for k, n := range st.kinds {
			if res.ErrorKinds == nil {
				res.ErrorKinds = map[string]int64{}
			}
			res.ErrorKinds[k] += n
		}
		if res.FirstError == "" {
			res.FirstError = st.firstErr
		}
	}
	if res.Elapsed > 0 {
		res.Throughput = float64(res.Requests) / res.Elapsed
	}
	res.Latency = lat.summary()
	if o.Mode != ModeSend {
		f := first.summary()
		res.FirstEvent = &f
	}
	return res, nil
}

func (r *runner) newStats() *stats {
	return &stats{br: bufio.NewReaderSize(nil, 64<<10)}
}

// work issues requests back to back until the run ends.
func (r *runner) work(ctx context.Context, st *stats, w int) {
	for ctx.Err() == nil {
		startPhase := r.phase.Load()
		if startPhase == phaseDone {
			return
		}
		if startPhase == phaseMeasure && r.o.Requests > 0 && r.issued.Add(1) > r.o.Requests {
			return
		}
		ev0, b0 := st.events, st.bytes
		start := time.Now()
		err := r.once(ctx, st, w)
		d := time.Since(start)
		counted := startPhase == phaseMeasure && (r.o.Requests > 0 || r.phase.Load() == phaseMeasure)
		if !counted {
			st.events, st.bytes = ev0, b0
			if err != nil {
				r.failed.Add(1)
			} else {
				r.done.Add(1)
			}
			continue
		}
		if err != nil {
			if ctx.Err() != nil && r.o.Requests == 0 {
				return // cut at the end of the run
			}
			r.failed.Add(1)
			st.errs++
			kind := classify(err)
			if st.kinds == nil {
				st.kinds = map[string]int64{}
			}
			st.kinds[kind]++
			if st.firstErr == "" {
				st.firstErr = err.Error()
			}
			continue
		}
		r.done.Add(1)
		st.ok++
		st.lat.record(d)
		if r.o.Mode != ModeSend {
			st.first.record(st.firstD)
		}
	}
}

// once performs one request of the run's mode and checks its answer.
func (r *runner) once(ctx context.Context, st *stats, w int) error {
	id := r.nextID.Add(1)
	if r.grpc != nil {
		return r.onceGRPC(ctx, st, w, id)
	}
	st.idb = strconv.AppendInt(st.idb[:0], id, 10)
	u := r.url
	if r.o.Mode == ModeResubscribe {
		t := r.tasks[(int(id)+w)%len(r.tasks)]
		st.req, u = r.d.appendSubscribe(st.req[:0], id, t.id), t.url
	} else {
		st.req = r.d.appendSend(st.req[:0], r.runID, id, r.text, r.o.Mode == ModeStream, true)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(st.req))
	if err != nil {
		return err
	}
	req.Header = r.hdr
	start := time.Now()
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return r.d.httpFailure(resp)
	}
	if r.o.Mode == ModeSend {
		return r.checkSend(st, resp)
	}
	return r.readStream(st, resp, start)
}

// requestHeader returns the headers of every request of a run (shared
// read-only by all of them).
func requestHeader(o Options, accept string) http.Header {
	h := o.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", accept)
	newDialect(o).header(h)
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", "a2abridge-bench")
	}
	return h
}

func (r *runner) checkSend(st *stats, resp *http.Response) error {
	st.body.Reset()
	n, err := st.body.ReadFrom(resp.Body)
	st.bytes += n
	if err != nil {
		return err
	}
	return r.d.unary(st.body.Bytes(), st.idb)
}

// readStream reads an SSE response until the status update that ends it
// (or the end of a stream whose last event was a Message, or a Task
// snapshot in a terminal or interrupted state).
func (r *runner) readStream(st *stats, resp *http.Response, start time.Time) error {
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		st.body.Reset()
		n, _ := st.body.ReadFrom(io.LimitReader(resp.Body, 1<<20))
		st.bytes += n
		if env, ok := r.d.check(st.body.Bytes(), st.idb); ok && env.errCode != "" {
			return r.d.verdict(env, ok, st.body.Bytes())
		}
		return fail("not a stream", "answer is %q, not text/event-stream", ct)
	}
	br := st.br
	br.Reset(resp.Body)
	defer br.Reset(nil)
	st.data = st.data[:0]
	hasData, events, lastKind, lastFinal := false, 0, "", false
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			st.line = append(st.line[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				st.line = append(st.line, line...)
			}
			line = st.line
		}
		st.bytes += int64(len(line))
		if err != nil {
			if err == io.EOF {
				if events > 0 && (lastKind == "message" || lastFinal) {
					return nil // a Message, or a final Task snapshot, then the end
				}
				return fail("stream ended early", "stream ended after %d events without a final status-update", events)
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if !hasData {
				continue
			}
			env, ok := r.d.check(st.data, st.idb)
			if err := r.d.verdict(env, ok, st.data); err != nil {
				return err
			}
			if env.kind == "" {
				return fail("bad response", "an event that is not a Task, a Message, a status update or an artifact update")
			}
			if events == 0 {
				st.firstD = time.Since(start)
			}
			events++
			st.events++
			lastKind, lastFinal = env.kind, env.final
			hasData = false
			st.data = st.data[:0]
			if env.final && env.kind != "task" {
				// The server ends the response now; reading to its end
				// keeps the connection reusable.
				n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
				st.bytes += n
				return nil
			}
		case line[0] == ':':
		case bytes.HasPrefix(line, []byte("data:")):
			v := line[5:]
			if len(v) > 0 && v[0] == ' ' {
				v = v[1:]
			}
			if hasData {
				st.data = append(st.data, '\n')
			}
			st.data = append(st.data, v...)
			hasData = true
		}
	}
}

// makeTasks creates the tasks that resubscribe mode subscribes to: they
// must be finished (a 1.0 subscription, a resume from the start, would
// otherwise stay open until the task ends).
func (r *runner) makeTasks(ctx context.Context) error {
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		next     atomic.Int64
	)
	r.tasks = make([]benchTask, r.o.Tasks)
	for range min(r.o.Concurrency, r.o.Tasks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(r.tasks) {
					return
				}
				id, state, err := createTask(ctx, r.client, r.o, r.runID, int64(-1-i), r.text, true)
				if err == nil && !state.Terminal() {
					err = fmt.Errorf("task %s is %s, not finished: a subscription to it lasts until it ends; point the URL at an agent that answers at once, such as the built-in echo agent (…/a2a/echo)", id, state)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				r.tasks[i] = benchTask{id: id, url: r.d.subscribeURL(id)}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("bench: creating tasks with %s: %w", r.d.sendMethod(false), firstErr)
	}
	return nil
}

// progress prints a line per second until stop is called or done closes.
func (r *runner) progress(done <-chan struct{}) (stop func()) {
	start := time.Now()
	var lastOK, lastErr int64
	return everySecond(r.o.Progress, done, func(w io.Writer) {
		ok, bad := r.done.Load(), r.failed.Load()
		label := "measuring"
		switch r.phase.Load() {
		case phaseWarmup:
			label = "warmup"
		case phaseDone:
			label = "finishing"
		}
		fmt.Fprintf(w, "%5.0fs  %-9s  %8d req/s  %6d errors/s  (total %d ok, %d errors)\n",
			time.Since(start).Seconds(), label, ok-lastOK, bad-lastErr, ok, bad)
		lastOK, lastErr = ok, bad
	})
}

// everySecond calls report with w once a second, on a goroutine of its
// own, until stop is called or done (which may be nil) closes; stop
// returns once report has returned for the last time. A nil w reports
// nothing.
func everySecond(w io.Writer, done <-chan struct{}, report func(w io.Writer)) (stop func()) {
	if w == nil {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		for {
			select {
			case <-tk.C:
			case <-quit:
				return
			case <-done:
				return
			}
			report(w)
		}
	}()
	return func() { close(quit); wg.Wait() }
}

// classify names the category an error is counted under.
func classify(err error) string {
	var f *failure
	var ne net.Error
	switch {
	case errors.As(err, &f):
		return f.kind
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "unexpected EOF"
	case errors.Is(err, syscall.EADDRNOTAVAIL), errors.Is(err, syscall.EMFILE), errors.Is(err, os.ErrDeadlineExceeded):
		return "client resources"
	}
	return "transport"
}

// sortedKinds lists error kinds by count, most frequent first.
func sortedKinds(m map[string]int64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return ks[i] < ks[j]
	})
	return ks
}
