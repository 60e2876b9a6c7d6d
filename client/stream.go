package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/jsonrpc"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
)

// StreamEvent is one event of a stream (A2A 0.3.0 §7.2.2).
type StreamEvent struct {
	// Event is a *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent or
	// *a2a.TaskArtifactUpdateEvent.
	Event a2a.Event
	// ID is the SSE event id ("" when the server sends none). a2abridge
	// servers send the event's sequence number in the task's log; pass it
	// to Resubscribe to continue from there.
	ID string
	// Resumed marks the first event received after the client resubscribed
	// to a broken stream.
	Resumed bool
	// Gap marks a resumption whose continuity the client cannot prove: the
	// server did not replay from the last event id seen (it sent a Task
	// snapshot, or events without sequential numeric ids, or skipped
	// numbers), so updates in between may not have been delivered one by
	// one. A Task snapshot, when sent, holds their result; a tasks/get
	// gives the current state otherwise.
	Gap bool
}

// ErrStreamEnded is returned (wrapped) when a stream ends before its final
// event and cannot be resumed.
var ErrStreamEnded = errors.New("a2a client: stream ended before the final event")

// SendStreamingMessage calls message/stream (A2A 0.3.0 §7.2) and yields
// its events until the final one (a status-update with final=true, a
// Message, or the server closing the stream after a Task or status in a
// terminal or interrupted state). If the connection breaks first, the client resubscribes
// (tasks/resubscribe with Last-Event-ID set to the last id it saw) and
// continues, skipping events it already yielded, so the caller sees every
// event once, in order; see StreamEvent.Gap for servers that cannot
// replay. Options.NoResume turns this off. Errors end the sequence.
func (c *Client) SendStreamingMessage(ctx context.Context, p a2a.MessageSendParams) iter.Seq2[StreamEvent, error] {
	if p.Message.MessageID == "" {
		p.Message.MessageID = a2a.NewID()
	}
	if p.Message.Role == "" {
		p.Message.Role = a2a.RoleUser
	}
	params, err := v03.EncodeMessageSendParams(&p)
	if err != nil {
		return func(yield func(StreamEvent, error) bool) { yield(StreamEvent{}, err) }
	}
	return c.stream(ctx, "message/stream", params, p.Message.TaskID, "")
}

// Resuming: against a server that declares a2a.ExtensionEventLog, SSE ids
// are the task's event sequence numbers, so a resumed stream skips what was
// already yielded and proves it missed nothing. Against other servers the
// first event after a resumption is marked Gap and nothing is skipped.

// Resubscribe calls tasks/resubscribe (A2A 0.3.0 §7.9). With lastEventID ""
// the server starts from the task's snapshot; otherwise the client sends it
// as Last-Event-ID and a2abridge servers replay the events after it. The
// stream resumes itself like SendStreamingMessage's.
func (c *Client) Resubscribe(ctx context.Context, p a2a.TaskIDParams, lastEventID string) iter.Seq2[StreamEvent, error] {
	params, err := v03.EncodeTaskIDParams(&p)
	if err != nil {
		return func(yield func(StreamEvent, error) bool) { yield(StreamEvent{}, err) }
	}
	return c.stream(ctx, "tasks/resubscribe", params, p.ID, lastEventID)
}

func (c *Client) openStream(ctx context.Context, method string, params []byte, lastEventID string) (*http.Response, int64, error) {
	var resp *http.Response
	var id int64
	retry := method != "message/stream" || c.sendRetryable()
	err := c.withRetry(ctx, method, retry, func() error {
		id = c.idSeq.Add(1)
		req, err := c.request(ctx, method, id, params, true)
		if err != nil {
			return err
		}
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		r, err := c.http.Do(req)
		if err != nil {
			return redact(err)
		}
		if err := checkResponse(r, "text/event-stream"); err != nil {
			r.Body.Close()
			return err
		}
		resp = r
		return nil
	})
	return resp, id, err
}

func eventTaskID(e a2a.Event) string {
	switch v := e.(type) {
	case *a2a.Task:
		return v.ID
	case *a2a.TaskStatusUpdateEvent:
		return v.TaskID
	case *a2a.TaskArtifactUpdateEvent:
		return v.TaskID
	case *a2a.Message:
		return v.TaskID
	}
	return ""
}

// idleReset is how long a connection must have stayed open for its end to
// count as a proxy's idle cut rather than a failure.
const idleReset = 30 * time.Second

func (c *Client) stream(ctx context.Context, method0 string, params0 []byte, taskID0, lastID0 string) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		// Per-iteration state: the sequence may be ranged over again.
		method, params, taskID, lastID := method0, params0, taskID0, lastID0
		lastNum, haveNum := int64(0), false
		if n, err := strconv.ParseInt(lastID, 10, 64); err == nil && c.replayable {
			lastNum, haveNum = n, true
		}
		resumed := false
		failures := 0
		events := 0 // events yielded so far
		var lastState a2a.TaskState
		var lastRaw []byte
		for {
			opened := time.Now()
			resp, reqID, err := c.openStream(ctx, method, params, lastID)
			if err != nil {
				yield(StreamEvent{}, err)
				return
			}
			rd := sse.NewReader(resp.Body)
			first := true
			var readErr error
			for {
				ev, err := rd.Next()
				if err != nil {
					readErr = err
					break
				}
				if len(ev.Data) == 0 {
					continue
				}
				r, err := jsonrpc.ParseResponse(ev.Data)
				if err != nil {
					resp.Body.Close()
					yield(StreamEvent{}, protocolError(method, "invalid JSON-RPC response in stream", err))
					return
				}
				if r.Err != nil {
					resp.Body.Close()
					yield(StreamEvent{}, r.Err)
					return
				}
				if !jsonrpc.SameID(r.ID, jsontext.Value(strconv.FormatInt(reqID, 10))) {
					resp.Body.Close()
					yield(StreamEvent{}, &ProtocolError{Method: method, Reason: fmt.Sprintf("stream event id %s does not match request id %d", r.ID, reqID)})
					return
				}
				if r.Result == nil {
					resp.Body.Close()
					yield(StreamEvent{}, &ProtocolError{Method: method, Reason: "stream event has neither result nor error"})
					return
				}
				e, err := v03.UnmarshalEvent(r.Result)
				if err != nil {
					resp.Body.Close()
					yield(StreamEvent{}, protocolError(method, "invalid event in stream", err))
					return
				}
				// Continuity is provable only with the event-log extension's
				// sequential ids.
				contiguous, progress := false, true
				if n, err := strconv.ParseInt(ev.ID, 10, 64); err == nil && c.replayable {
					if haveNum && n <= lastNum && resumed {
						continue // already yielded before the break
					}
					contiguous = haveNum && n == lastNum+1
					lastNum, haveNum = n, true
				} else if resumed && bytes.Equal(lastRaw, r.Result) {
					progress = false // a server repeating itself after a resume
				}
				if ev.ID != "" {
					lastID = ev.ID
				}
				if id := eventTaskID(e); id != "" {
					taskID = id
				}
				out := StreamEvent{Event: e, ID: ev.ID}
				if resumed && first {
					out.Resumed = true
					out.Gap = !contiguous
				}
				first = false
				final := false
				switch v := e.(type) {
				case *a2a.TaskStatusUpdateEvent:
					final = v.Final
					lastState = v.Status.State
				case *a2a.Task:
					// A snapshot is not progress by itself: a server that
					// answers every resubscription with one and then hangs up
					// must not keep the client resubscribing forever.
					lastState = v.Status.State
					progress = false
				case *a2a.Message:
					final = true
				}
				if progress {
					failures = 0
				}
				lastRaw = append(lastRaw[:0], r.Result...)
				events++
				if !yield(out, nil) {
					resp.Body.Close()
					return
				}
				if final {
					resp.Body.Close()
					return
				}
			}
			resp.Body.Close()
			if ctx.Err() != nil {
				yield(StreamEvent{}, ctx.Err())
				return
			}
			if lastState.Final() {
				// The stream closed after showing a terminal or interrupted
				// task (some servers answer a resubscription to a finished
				// task with its snapshot alone): nothing more will come.
				return
			}
			if readErr == nil || errors.Is(readErr, io.EOF) {
				readErr = io.ErrUnexpectedEOF
			}
			if time.Since(opened) >= idleReset {
				failures = 0 // a long-lived connection cut by an idle proxy
			}
			failures++
			// A message/stream that broke before its first event may not
			// have been accepted: resubscribing could report a task that
			// never saw the message, so the caller decides.
			noEvents := events == 0 && method == "message/stream"
			if noEvents || c.opts.NoResume || taskID == "" || c.opts.MaxRetries < 0 || failures > c.opts.MaxRetries {
				yield(StreamEvent{}, fmt.Errorf("%w (%s): %w", ErrStreamEnded, method, readErr))
				return
			}
			if err := sleep(ctx, c.backoff(failures)); err != nil {
				yield(StreamEvent{}, err)
				return
			}
			method = "tasks/resubscribe"
			params, _ = v03.EncodeTaskIDParams(&a2a.TaskIDParams{ID: taskID})
			resumed = true
		}
	}
}
