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
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// StreamEvent is one event of a stream (A2A 1.0 §3.2.3 StreamResponse;
// A2A 0.3.0 §7.2.2).
type StreamEvent struct {
	// Event is a *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent or
	// *a2a.TaskArtifactUpdateEvent.
	Event a2a.Event
	// ID is the SSE event id ("" when the server sends none). a2abridge
	// servers send the event's sequence number in the task's log; pass it
	// to SubscribeToTask to continue from there.
	ID string
	// Resumed marks the first event received after the client resubscribed
	// to a broken stream.
	Resumed bool
	// Gap marks a resumption whose continuity the client cannot prove: the
	// server did not replay from the last event id seen (it sent a Task
	// snapshot, or events without sequential numeric ids, or skipped
	// numbers), so updates in between may not have been delivered one by
	// one. A Task snapshot, when sent, holds their result; GetTask gives
	// the current state otherwise.
	Gap bool
}

// ErrStreamEnded is returned (wrapped) when a stream ends before its final
// event and cannot be resumed.
var ErrStreamEnded = errors.New("a2a client: stream ended before the final event")

// SendStreamingMessage sends a message and streams the task's events
// (A2A 1.0 §3.1.2 SendStreamingMessage, POST /message:stream; A2A 0.3.0
// §7.2 message/stream) until the final one: a status-update in a terminal
// or interrupted state (over 0.3 one with final=true), a Message, or the
// server closing the stream after a Task or status in such a state. If
// the connection breaks first, the client resubscribes (SubscribeToTask
// with Last-Event-ID set to the last id it saw) and continues, skipping
// events it already yielded, so the caller sees every event once, in
// order; see StreamEvent.Gap for servers that cannot replay.
// Options.NoResume turns this off. Errors end the sequence.
func (c *Client) SendStreamingMessage(ctx context.Context, p a2a.SendMessageRequest) iter.Seq2[StreamEvent, error] {
	cl, err := c.sendCall(&p, true)
	if err != nil {
		return func(yield func(StreamEvent, error) bool) { yield(StreamEvent{}, err) }
	}
	return c.stream(ctx, cl, true, p.Message.TaskID, "")
}

// Resuming: against a server that declares a2a.ExtensionEventLog, SSE ids
// are the task's event sequence numbers, so a resumed stream skips what was
// already yielded and proves it missed nothing. Against other servers the
// first event after a resumption is marked Gap and nothing is skipped.

// SubscribeToTask streams the events of a task (A2A 1.0 §3.1.6
// SubscribeToTask, POST /tasks/{id}:subscribe; A2A 0.3.0 §7.9
// tasks/resubscribe). With lastEventID "" the server starts from the
// task's snapshot; otherwise the client sends it as Last-Event-ID and
// a2abridge servers replay the events after it. The stream resumes itself
// like SendStreamingMessage's. Over A2A 1.0 it follows the task through
// interrupted states (input-required, auth-required: what the task's next
// message brings comes on the same stream) until a status in a terminal
// state, or the server closing the stream cleanly after an interrupted
// state (servers that end subscriptions there); a connection that breaks
// while the task waits is resumed. Over 0.3 it ends like
// SendStreamingMessage's, at a status-update with final=true.
func (c *Client) SubscribeToTask(ctx context.Context, p a2a.SubscribeToTaskRequest, lastEventID string) iter.Seq2[StreamEvent, error] {
	cl, err := c.subscribeCall(p)
	if err != nil {
		return func(yield func(StreamEvent, error) bool) { yield(StreamEvent{}, err) }
	}
	return c.stream(ctx, cl, false, p.ID, lastEventID)
}

func (c *Client) subscribeCall(p a2a.SubscribeToTaskRequest) (call, error) {
	q := a2a.CancelTaskRequest(p)
	return c.taskIDCall(&q, "tasks/resubscribe", "SubscribeToTask", ":subscribe", true)
}

// frameSource is an open stream: SSE over HTTP, or a gRPC server stream.
type frameSource interface {
	// next returns the next event with its id ("" when it has none) and
	// its raw encoding (to tell repeats); readErr when the connection
	// ended (io.EOF: cleanly), err for the server's error or a malformed
	// frame.
	next(c *Client, cl *call) (ev a2a.Event, id string, raw []byte, readErr, err error)
	close()
}

// openStream opens the stream of cl, resumed after lastEventID when set.
func (c *Client) openStream(ctx context.Context, cl *call, lastEventID string) (frameSource, error) {
	if c.grpc != nil {
		return c.openGRPC(ctx, cl, lastEventID)
	}
	resp, id, err := c.openSSE(ctx, cl, lastEventID)
	if err != nil {
		return nil, err
	}
	return &sseFrames{resp: resp, rd: sse.NewReaderSize(resp.Body, intLimit(c.opts.maxResponse())), reqID: id}, nil
}

// sseFrames is an SSE stream of request reqID.
type sseFrames struct {
	resp  *http.Response
	rd    *sse.Reader
	reqID int64
}

func (f *sseFrames) next(c *Client, cl *call) (a2a.Event, string, []byte, error, error) {
	for {
		ev, err := f.rd.Next()
		if errors.Is(err, sse.ErrEventTooLarge) {
			// Not a broken connection: resuming would read it again.
			return nil, "", nil, nil, tooLarge(cl.method, "a stream event", c.opts.maxResponse())
		}
		if err != nil {
			return nil, "", nil, err, nil
		}
		if len(ev.Data) == 0 {
			continue
		}
		e, raw, err := c.frame(cl, f.reqID, &ev)
		if err != nil {
			return nil, "", nil, nil, err
		}
		return e, ev.ID, raw, nil, nil
	}
}

func (f *sseFrames) close() { f.resp.Body.Close() }

func (c *Client) openSSE(ctx context.Context, cl *call, lastEventID string) (*http.Response, int64, error) {
	var resp *http.Response
	var id int64
	err := c.withRetry(ctx, cl.method, cl.retry, func() error {
		id = c.idSeq.Add(1)
		req, err := c.newRequest(ctx, cl, id, true)
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
		if err := c.checkResponse(r, "text/event-stream"); err != nil {
			r.Body.Close()
			return err
		}
		resp = r
		return nil
	})
	return resp, id, err
}

// frame decodes one SSE event of a stream opened by request reqID of cl:
// the A2A event and its raw JSON (to tell repeats), or the server's error.
func (c *Client) frame(cl *call, reqID int64, ev *sse.Event) (a2a.Event, []byte, error) {
	if c.rest {
		return c.restFrame(cl, ev)
	}
	r, err := jsonrpc.ParseResponse(ev.Data)
	if err != nil {
		return nil, nil, protocolError(cl.method, "invalid JSON-RPC response in stream", err)
	}
	if r.Err != nil {
		return nil, nil, c.rpcError(r.Err)
	}
	if !jsonrpc.SameID(r.ID, jsontext.Value(strconv.FormatInt(reqID, 10))) {
		return nil, nil, &ProtocolError{Method: cl.method, Reason: fmt.Sprintf("stream event id %s does not match request id %d", r.ID, reqID)}
	}
	if r.Result == nil {
		return nil, nil, &ProtocolError{Method: cl.method, Reason: "stream event has neither result nor error"}
	}
	var e a2a.Event
	if c.v10 {
		e, err = v10.UnmarshalStreamResponse(r.Result)
	} else {
		e, err = v03.UnmarshalEvent(r.Result)
	}
	if err != nil {
		return nil, nil, protocolError(cl.method, "invalid event in stream", err)
	}
	return e, r.Result, nil
}

// restFrame decodes an HTTP+JSON stream event: a StreamResponse, or an
// error as a google.rpc.Status ({"error": …}, with or without "event:
// error"; A2A 1.0 §11.7) or, over A2A 0.3, as the JSON-RPC error members
// in an event named "error" (@a2a-js/sdk; v10.ParseREST03Error).
func (c *Client) restFrame(cl *call, ev *sse.Event) (a2a.Event, []byte, error) {
	unmarshal := v10.UnmarshalStreamResponse
	if !c.v10 {
		unmarshal = v10.UnmarshalREST03StreamResponse
		if ev.Event == "error" {
			e, _ := v10.ParseREST03Error(0, ev.Data)
			return nil, nil, e
		}
	}
	if ev.Event == "error" {
		return nil, nil, v10.UnmarshalRESTError(0, ev.Data)
	}
	e, err := unmarshal(ev.Data)
	var se *v10.StreamError
	if errors.As(err, &se) {
		return nil, nil, se.Err
	}
	if err != nil {
		return nil, nil, protocolError(cl.method, "invalid event in stream", err)
	}
	return e, ev.Data, nil
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

// stream runs the stream of cl0 (send: a message stream, else a
// subscription to taskID0), resuming it as SendStreamingMessage says.
func (c *Client) stream(ctx context.Context, cl0 call, send bool, taskID0, lastID0 string) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		// Per-iteration state: the sequence may be ranged over again.
		cl, taskID, lastID := cl0, taskID0, lastID0
		lastNum, haveNum := int64(0), false
		if n, err := strconv.ParseInt(lastID, 10, 64); err == nil && c.replayable {
			lastNum, haveNum = n, true
		}
		resumed := false
		failures := 0
		events := 0 // events yielded so far
		var lastState a2a.TaskState
		var lastRaw []byte
		// A 1.0 subscription follows the task until it is terminal (A2A
		// 1.0 §3.1.6); 1.0 frames have no final flag (the decoder sets
		// Final for interrupted states too, which end a message stream).
		through := !send && c.v10
		for {
			opened := time.Now()
			src, err := c.openStream(ctx, &cl, lastID)
			if err != nil {
				if resumed {
					c.settled(ctx, cl0.tenant, taskID, err, yield)
				} else {
					yield(StreamEvent{}, err)
				}
				return
			}
			first := true
			var readErr error
			for {
				e, evID, raw, rerr, err := src.next(c, &cl)
				if rerr != nil {
					readErr = rerr
					break
				}
				if err != nil {
					src.close()
					yield(StreamEvent{}, err)
					return
				}
				// Continuity is provable only with the event-log extension's
				// sequential ids.
				contiguous, progress := false, true
				if n, err := strconv.ParseInt(evID, 10, 64); err == nil && c.replayable {
					if haveNum && n <= lastNum && resumed {
						continue // already yielded before the break
					}
					contiguous = haveNum && n == lastNum+1
					lastNum, haveNum = n, true
				} else if resumed && bytes.Equal(lastRaw, raw) {
					progress = false // a server repeating itself after a resume
				}
				if evID != "" {
					lastID = evID
				}
				if id := eventTaskID(e); id != "" {
					taskID = id
				}
				out := StreamEvent{Event: e, ID: evID}
				if resumed && first {
					out.Resumed = true
					out.Gap = !contiguous
				}
				first = false
				final := false
				switch v := e.(type) {
				case *a2a.TaskStatusUpdateEvent:
					final = v.Final
					if through {
						final = v.Status.State.Terminal()
					}
					lastState = v.Status.State
				case *a2a.Task:
					// A snapshot is not progress by itself: a server that
					// answers every resubscription with one and then hangs up
					// must not keep the client resubscribing forever.
					lastState = v.Status.State
					progress = false
				case *a2a.Message:
					// A message stream's direct answer; a 1.0 subscription
					// ends at a terminal state only.
					final = !through
				}
				if progress {
					failures = 0
				}
				lastRaw = append(lastRaw[:0], raw...)
				events++
				if !yield(out, nil) {
					src.close()
					return
				}
				if final {
					src.close()
					return
				}
			}
			src.close()
			if ctx.Err() != nil {
				yield(StreamEvent{}, ctx.Err())
				return
			}
			if lastState.Terminal() || (lastState.Interrupted() && (!through || errors.Is(readErr, io.EOF))) {
				// The stream closed after showing a terminal or interrupted
				// task (some servers answer a resubscription to a finished
				// task with its snapshot alone): nothing more will come. A
				// 1.0 subscription whose connection broke while the task
				// waits resumes instead: the server would have kept it open.
				return
			}
			if readErr == nil || errors.Is(readErr, io.EOF) {
				readErr = io.ErrUnexpectedEOF
			}
			if time.Since(opened) >= idleReset {
				failures = 0 // a long-lived connection cut by an idle proxy
			}
			failures++
			// A message stream that broke before its first event may not
			// have been accepted: resubscribing could report a task that
			// never saw the message, so the caller decides.
			noEvents := events == 0 && send
			if noEvents || c.opts.NoResume || taskID == "" || c.opts.MaxRetries < 0 || failures > c.opts.MaxRetries {
				yield(StreamEvent{}, fmt.Errorf("%w (%s): %w", ErrStreamEnded, cl0.method, readErr))
				return
			}
			if err := sleep(ctx, c.backoff(failures)); err != nil {
				yield(StreamEvent{}, err)
				return
			}
			if cl, err = c.subscribeCall(a2a.SubscribeToTaskRequest{Tenant: cl0.tenant, ID: taskID}); err != nil {
				yield(StreamEvent{}, err)
				return
			}
			resumed = true
		}
	}
}

// settled ends a stream whose resubscription failed with err: a server
// without the event log refuses to subscribe to a task that has ended
// meanwhile (A2A 1.0 §3.1.6: UnsupportedOperationError; a2a-go:
// TaskNotFoundError), so the task is read, and yielded (Resumed, Gap) when
// it is in a terminal or interrupted state; otherwise err is yielded.
func (c *Client) settled(ctx context.Context, tenant, taskID string, err error, yield func(StreamEvent, error) bool) {
	if c.replayable || !(errors.Is(err, a2a.ErrUnsupportedOperation) || errors.Is(err, a2a.ErrTaskNotFound)) {
		yield(StreamEvent{}, err)
		return
	}
	t, gerr := c.GetTask(ctx, a2a.GetTaskRequest{Tenant: tenant, ID: taskID})
	if gerr != nil || !t.Status.State.Final() {
		yield(StreamEvent{}, err)
		return
	}
	yield(StreamEvent{Event: t, Resumed: true, Gap: true}, nil)
}
