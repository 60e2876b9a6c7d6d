package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// The functions here decode answers fully, with the protocol codecs of
// a2abridge's client (internal/wire/v03, internal/wire/v10): they run once
// per target or per task, not in the measured loop.

type wireResponse struct {
	ID     jsontext.Value `json:"id"`
	Result jsontext.Value `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// post sends body to u and returns the response if it is HTTP 200.
func (d dialect) post(ctx context.Context, c *http.Client, o Options, u string, body []byte, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = requestHeader(o, accept)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, d.httpFailure(resp)
	}
	return resp, nil
}

// decode decodes an answer fully: a JSON-RPC response to request id (its
// result), or a REST body. With frame, b is one event of a stream (any
// StreamResponse in 1.0); otherwise a send's answer (a Task or a Message).
func (d dialect) decode(b []byte, id int64, frame bool) (a2a.Event, error) {
	res := b
	if !d.rest {
		var r wireResponse
		if err := json.Unmarshal(b, &r, json.RejectUnknownMembers(false)); err != nil {
			return nil, fail("bad response", "bad JSON-RPC response: %v", err)
		}
		if r.Error != nil {
			return nil, fail("rpc "+strconv.Itoa(r.Error.Code), "JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
		}
		if string(r.ID) != strconv.FormatInt(id, 10) {
			return nil, fail("bad response", "response id %s, want %d", r.ID, id)
		}
		if len(r.Result) == 0 {
			return nil, fail("bad response", "response has no result")
		}
		res = r.Result
	}
	var ev a2a.Event
	var err error
	switch {
	case !d.v10:
		ev, err = v03.UnmarshalEvent(res)
	case frame:
		ev, err = v10.UnmarshalStreamResponse(res)
	default:
		ev, err = v10.UnmarshalSendMessageResponse(res)
	}
	if se := (*v10.StreamError)(nil); errors.As(err, &se) {
		return nil, fail("stream error "+reasonOf(se.Err), "stream error event: %s", se.Err.Message)
	}
	if err != nil {
		return nil, fail("bad response", "bad %s result: %v", d, err)
	}
	if !frame {
		switch ev.(type) {
		case *a2a.Task, *a2a.Message:
		default:
			return nil, fail("bad response", "%s answered %s, not a Task or a Message", d.sendMethod(false), kindOf(ev))
		}
	}
	return ev, nil
}

// kindOf names an event's type as 0.3 does ("task", "status-update", …).
func kindOf(ev a2a.Event) string {
	switch ev.(type) {
	case *a2a.Task:
		return "task"
	case *a2a.Message:
		return "message"
	case *a2a.TaskStatusUpdateEvent:
		return "status-update"
	case *a2a.TaskArtifactUpdateEvent:
		return "artifact-update"
	}
	return fmt.Sprintf("%T", ev)
}

// send sends text once with the dialect's send method and decodes the
// answer fully.
func (d dialect) send(ctx context.Context, c *http.Client, o Options, runID string, id int64, text string, blocking bool) (a2a.Event, error) {
	resp, err := d.post(ctx, c, o, d.sendURL(false), d.appendSend(nil, runID, id, text, false, blocking), "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return d.decode(b, id, false)
}

// createTask sends text with the dialect's send method and returns the
// task it made and the state the answer gives it.
func createTask(ctx context.Context, c *http.Client, o Options, runID string, id int64, text string, blocking bool) (string, a2a.TaskState, error) {
	d := newDialect(o)
	ev, err := d.send(ctx, c, o, runID, id, text, blocking)
	if err != nil {
		return "", a2a.TaskStateUnspecified, err
	}
	t, ok := ev.(*a2a.Task)
	if !ok || t.ID == "" {
		return "", a2a.TaskStateUnspecified, fail("bad response", "%s answered a %s, not a task", d.sendMethod(false), kindOf(ev))
	}
	return t.ID, t.Status.State, nil
}

// artifactText is the text of the artifacts' text parts, in order.
func artifactText(b *strings.Builder, arts ...a2a.Artifact) {
	for _, a := range arts {
		for _, p := range a.Parts {
			if tp, ok := p.Content.(a2a.Text); ok {
				b.WriteString(string(tp))
			}
		}
	}
}

// Verify checks that the endpoint at o.URL behaves as an echo agent for
// the benchmark's purposes, in o's protocol version and binding, decoding
// the answers fully with a2abridge's client codecs: the send method
// returns a completed Task whose artifacts repeat the text, and the
// streaming method answers text/event-stream with a Task, artifact updates
// repeating the text and a completed status update that ends the stream
// (0.3: "final": true; 1.0: the state alone), after which the server
// closes the stream. It tells a fair comparison (every target does the
// same work) from a server that answers too little.
func Verify(ctx context.Context, o Options) error {
	if err := o.normalize(); err != nil {
		return err
	}
	d := newDialect(o)
	if d.grpc {
		return verifyGRPC(ctx, o)
	}
	tr := newTransport(o)
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: o.Timeout}
	runID, text := newRunID(), payloadText(o.Payload)

	ev, err := d.send(ctx, c, o, runID, 1, text, true)
	if err != nil {
		return fmt.Errorf("%s: %w", d.sendMethod(false), err)
	}
	var got strings.Builder
	t, _ := ev.(*a2a.Task)
	if t != nil {
		artifactText(&got, t.Artifacts...)
	}
	if t == nil || t.Status.State != a2a.TaskStateCompleted || got.String() != text {
		state := a2a.TaskStateUnspecified
		if t != nil {
			state = t.Status.State
		}
		return fmt.Errorf("%s: got a %s in state %q with artifact text %q; want a completed task echoing %q", d.sendMethod(false), kindOf(ev), state, got.String(), text)
	}
	if err := d.verifyStream(ctx, c, o, runID, text); err != nil {
		return fmt.Errorf("%s: %w", d.sendMethod(true), err)
	}
	return nil
}

// verifyStream checks one streamed echo of text (see Verify).
func (d dialect) verifyStream(ctx context.Context, c *http.Client, o Options, runID, text string) error {
	const id = 2
	resp, err := d.post(ctx, c, o, d.sendURL(true), d.appendSend(nil, runID, id, text, true, true), "text/event-stream")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return fmt.Errorf("Content-Type %q", ct)
	}
	var kinds []string
	var got strings.Builder
	rd := sse.NewReaderSize(resp.Body, 16<<20)
	for {
		frame, err := rd.Next()
		if err == io.EOF {
			return fmt.Errorf("stream ended after %v without a final status update", kinds)
		}
		if err != nil {
			return err
		}
		ev, err := d.decode(frame.Data, id, true)
		if err != nil {
			return err
		}
		kinds = append(kinds, kindOf(ev))
		switch ev := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			artifactText(&got, ev.Artifact)
		case *a2a.TaskStatusUpdateEvent:
			if !ev.Final {
				continue
			}
			if ev.Status.State != a2a.TaskStateCompleted || kinds[0] != "task" || got.String() != text {
				return fmt.Errorf("events %v ending in %q with artifact text %q; want task … completed echoing %q", kinds, ev.Status.State, got.String(), text)
			}
			if _, err := rd.Next(); err != io.EOF {
				return fmt.Errorf("the stream went on after its final status update (%v)", err)
			}
			return nil
		}
	}
}
