//go:build linux

package main

// The cross-replica event latency, whose goal is: "a stream joined on
// replica B for a task running on replica A sees each event within 5 ms
// p50 of its commit".
//
// Three `a2abridge serve --replica` on a fresh schema host, besides the
// built-in agents, an agent of kind exec running servers/ticker, which
// waits half a second, then writes a line every --cross-interval: each
// line is one artifact-update event of the task, appended (and
// committed) by the replica running it. For each of three tasks, replica
// A (1, 2, 3 in turn) gets the message/stream that starts it, and the
// next replica, B, a tasks/resubscribe to it (Last-Event-ID: the first
// event A's stream delivered) as soon as A's first event names the task,
// before the first line. Every event's arrival is timed on both streams,
// in this process; the delay of an event is its arrival on B minus its
// arrival on A. A's own stream gets the event once A has committed it, so
// its arrival is a proxy for the commit, a little after it: the delay is
// that of B's path (NOTIFY after the commit, B reads the task's new
// events, writes them to its stream), slightly understated by A's own
// delivery time. The requests go to the replicas directly, not through
// nginx, so that A and B are known.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2abridge/a2abridge/internal/bench"
	"github.com/a2abridge/a2abridge/internal/sse"
)

// crossReport is the outcome of the cross-replica latency measurement.
type crossReport struct {
	err       string
	replicas  int
	tasks     int
	every     time.Duration
	perTask   int       // lines the ticker writes per task
	delays    []float64 // ms, one per event measured
	replayed  int       // events A delivered before B's stream was open (not measured)
	missing   int       // events on A's stream that B's did not deliver
	finalOnB  int       // B streams that ended with the task's final event
	lat       bench.Latency
	onA, onB  int // events delivered on A's streams and B's
	negatives int // events B delivered before A did
}

// tickerConfig is the replicas' --config: the built-in agents, and
// "ticker", of kind exec, running servers/ticker.
func tickerConfig(bin string, lines int, every time.Duration) string {
	return fmt.Sprintf("agents:\n  ticker:\n    kind: exec\n    description: Writes %d lines, one every %s, after half a second\n    command: [%q, \"-n\", \"%d\", \"-every\", %q, \"-delay\", \"500ms\"]\n    timeout: 0s\n",
		lines, every, filepath.Join(bin, "ticker"), lines, every.String())
}

// measureCross runs the measurement on three fresh replicas.
func measureCross(ctx context.Context, c config, bin, tmp string, db *pgDB, stderr io.Writer) (*crossReport, error) {
	const replicas, tasks = 3, 3
	rep := &crossReport{replicas: replicas, tasks: tasks, every: c.crossEvery, perTask: max(c.crossEvents/tasks, 1)}
	pg := newSchema(db, "x")
	defer func() { _ = pg.drop() }()
	if err := pg.reset(ctx); err != nil {
		return nil, err
	}
	serve := []string{filepath.Join(bin, "a2abridge"), "serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}
	conf := tickerConfig(bin, rep.perTask, c.crossEvery)
	g := replicaGroup("cross", "replicas of the cross-replica latency measurement", serve, pg, replicas, func(string) string { return conf })
	for _, r := range g.replicas {
		if err := r.start(ctx, tmp); err != nil {
			g.stopDeps()
			return nil, err
		}
	}
	defer g.stopDeps()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for i := range tasks {
		a, b := g.replicas[i%replicas], g.replicas[(i+1)%replicas]
		fmt.Fprintf(stderr, "cross-replica: task %d of %d on %s, followed on %s (%d events, one every %s)…\n", i+1, tasks, a.key, b.key, rep.perTask, c.crossEvery)
		if err := crossTask(ctx, client, a.base+"/a2a/ticker", b.base+"/a2a/ticker", i, rep); err != nil {
			return nil, fmt.Errorf("task %d (on %s, followed on %s): %w", i+1, a.key, b.key, err)
		}
	}
	if len(rep.delays) == 0 {
		return nil, errors.New("no event was seen on both streams")
	}
	rep.lat = latencyOf(rep.delays)
	fmt.Fprintf(stderr, "cross-replica: %d events, delay p50 %s p99 %s (replayed %d, missing %d)\n",
		len(rep.delays), bench.FormatMS(rep.lat.P50), bench.FormatMS(rep.lat.P99), rep.replayed, rep.missing)
	return rep, nil
}

// latencyOf summarizes delays (ms): exact percentiles (nearest rank).
func latencyOf(delays []float64) bench.Latency {
	s := slices.Clone(delays)
	slices.Sort(s)
	rank := func(p float64) float64 {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	var sum float64
	for _, v := range s {
		sum += v
	}
	return bench.Latency{P50: rank(0.5), P90: rank(0.9), P99: rank(0.99), Max: s[len(s)-1], Min: s[0], Mean: sum / float64(len(s))}
}

// tap reads one SSE stream in the background, timing each event's
// arrival by its id.
type tap struct {
	mu      sync.Mutex
	at      map[int64]time.Time
	first   chan int64  // the first event's id
	taskID  chan string // the task's id, from the first event
	final   bool        // the stream delivered a final status-update
	done    chan struct{}
	err     error
	started bool
}

func newTap(body io.ReadCloser) *tap {
	t := &tap{at: map[int64]time.Time{}, first: make(chan int64, 1), taskID: make(chan string, 1), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		defer body.Close()
		rd := sse.NewReader(bufio.NewReaderSize(body, 64<<10))
		for {
			ev, err := rd.Next()
			now := time.Now()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.err = err
				}
				return
			}
			id, err := strconv.ParseInt(ev.ID, 10, 64)
			if err != nil {
				t.err = fmt.Errorf("an event without a numeric id: %q: %.200s", ev.ID, ev.Data)
				return
			}
			var r struct {
				Result struct {
					Kind   string `json:"kind"`
					ID     string `json:"id"`
					TaskID string `json:"taskId"`
					Final  bool   `json:"final"`
				} `json:"result"`
				Error *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(ev.Data, &r); err != nil {
				t.err = fmt.Errorf("event %d: %v: %.200s", id, err, ev.Data)
				return
			}
			if r.Error != nil {
				t.err = fmt.Errorf("event %d: error %d: %s", id, r.Error.Code, r.Error.Message)
				return
			}
			t.mu.Lock()
			if _, dup := t.at[id]; !dup {
				t.at[id] = now
			}
			t.final = t.final || r.Result.Final
			if !t.started {
				t.started = true
				tid := r.Result.TaskID
				if r.Result.Kind == "task" || tid == "" {
					tid = r.Result.ID
				}
				t.first <- id
				t.taskID <- tid
			}
			t.mu.Unlock()
		}
	}()
	return t
}

// postSSE posts a JSON-RPC streaming request and checks that the answer
// is an event stream.
func postSSE(ctx context.Context, client *http.Client, url, body string, lastEventID int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID >= 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastEventID, 10))
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		resp.Body.Close()
		return nil, fmt.Errorf("%s: HTTP %d, %s: %.300s", url, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return resp, nil
}

// crossTask starts one ticker task with message/stream on urlA, follows
// it with tasks/resubscribe on urlB, and adds its events' delays to rep.
func crossTask(ctx context.Context, client *http.Client, urlA, urlB string, n int, rep *crossReport) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute+time.Duration(rep.perTask)*rep.every)
	defer cancel()
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"cross-%d-%d","role":"user","parts":[{"kind":"text","text":"go"}]}}}`, n, time.Now().UnixNano())
	respA, err := postSSE(ctx, client, urlA, msg, -1)
	if err != nil {
		return err
	}
	a := newTap(respA.Body)
	var first int64
	var taskID string
	select {
	case first = <-a.first:
		taskID = <-a.taskID
	case <-a.done:
		return fmt.Errorf("the stream on A ended before its first event: %v", a.err)
	case <-ctx.Done():
		return ctx.Err()
	}
	respB, err := postSSE(ctx, client, urlB, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/resubscribe","params":{"id":%q}}`, taskID), first)
	if err != nil {
		return err
	}
	subscribed := time.Now()
	b := newTap(respB.Body)
	for _, s := range []*tap{a, b} {
		select {
		case <-s.done:
		case <-ctx.Done():
			return fmt.Errorf("the streams did not end: %w", ctx.Err())
		}
	}
	if a.err != nil || b.err != nil {
		return fmt.Errorf("stream on A: %v; stream on B: %v", a.err, b.err)
	}
	if b.final {
		rep.finalOnB++
	}
	rep.onA += len(a.at)
	rep.onB += len(b.at)
	for id, ta := range a.at {
		if id <= first {
			continue
		}
		tb, ok := b.at[id]
		switch {
		case !ok:
			rep.missing++
		case ta.Before(subscribed):
			rep.replayed++
		default:
			d := tb.Sub(ta)
			if d < 0 {
				rep.negatives++
			}
			rep.delays = append(rep.delays, float64(d)/float64(time.Millisecond))
		}
	}
	return nil
}
