package bench

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// The protocol versions and bindings a run can speak (Options.Protocol,
// Options.Binding).
const (
	// Protocol03 is A2A 0.3.0: message/send, message/stream,
	// tasks/resubscribe; 0.3 JSON bodies ("kind", "final").
	Protocol03 = "0.3"
	// Protocol10 is A2A 1.0: SendMessage, SendStreamingMessage,
	// SubscribeToTask with the A2A-Version: 1.0 header; ProtoJSON bodies
	// (A2A 1.0 §5.5), results wrapped as {"task":…} or {"message":…}.
	Protocol10 = "1.0"
	// BindingJSONRPC posts JSON-RPC 2.0 requests to the URL as is.
	BindingJSONRPC = "jsonrpc"
	// BindingREST is the HTTP+JSON binding of A2A 1.0 (§11): the URL is
	// the interface URL, requests go to URL/message:send,
	// URL/message:stream and URL/tasks/{id}:subscribe.
	BindingREST = "rest"
)

// dialect is how a run talks to its target: the protocol version and the
// binding decide the URLs, the request bodies and what a correct answer
// looks like.
type dialect struct {
	v10  bool
	rest bool
	grpc bool
	url  string // Options.URL; for REST without its trailing slashes
}

func newDialect(o Options) dialect {
	d := dialect{v10: o.Protocol == Protocol10, rest: o.Binding == BindingREST, grpc: o.Binding == BindingGRPC, url: o.URL}
	if d.rest {
		d.url = strings.TrimRight(d.url, "/")
	}
	return d
}

// String names the dialect as the results do: "0.3 JSON-RPC", "1.0 REST".
func (d dialect) String() string {
	v, b := Protocol03, "JSON-RPC"
	if d.v10 {
		v = Protocol10
	}
	switch {
	case d.rest:
		b = "REST"
	case d.grpc:
		b = "gRPC"
	}
	return v + " " + b
}

// Method names by operation.
func (d dialect) sendMethod(stream bool) string {
	switch {
	case d.v10 && stream:
		return "SendStreamingMessage"
	case d.v10:
		return "SendMessage"
	case stream:
		return "message/stream"
	}
	return "message/send"
}

func (d dialect) subscribeMethod() string {
	if d.v10 {
		return "SubscribeToTask"
	}
	return "tasks/resubscribe"
}

// sendURL is where message/send (with stream, message/stream) requests go.
func (d dialect) sendURL(stream bool) string {
	switch {
	case !d.rest:
		return d.url
	case stream:
		return d.url + "/message:stream"
	}
	return d.url + "/message:send"
}

// subscribeURL is where a subscription to taskID goes.
func (d dialect) subscribeURL(taskID string) string {
	if !d.rest {
		return d.url
	}
	return d.url + "/tasks/" + url.PathEscape(taskID) + ":subscribe"
}

// appendSend appends a send request (with stream, a streaming one) whose
// messageId is unique per run and id; REST bodies have no envelope.
func (d dialect) appendSend(dst []byte, runID string, id int64, text string, stream, blocking bool) []byte {
	switch {
	case !d.v10:
		return appendSend03(dst, d.sendMethod(stream), runID, id, text, blocking)
	case d.rest:
		return appendSendParams10(dst, runID, id, text, blocking)
	}
	dst = appendRPCHead(dst, id, d.sendMethod(stream))
	return append(appendSendParams10(dst, runID, id, text, blocking), '}')
}

// appendSubscribe appends a subscription to taskID; a REST subscription
// has no body (the task is in the URL), so dst comes back unchanged.
func (d dialect) appendSubscribe(dst []byte, id int64, taskID string) []byte {
	if d.rest {
		return dst
	}
	dst = appendRPCHead(dst, id, d.subscribeMethod())
	dst = append(dst, `{"id":`...)
	dst = appendQuote(dst, taskID)
	return append(dst, `}}`...)
}

// header sets the headers the dialect needs on every request.
func (d dialect) header(h http.Header) {
	if d.v10 {
		h.Set("A2A-Version", Protocol10)
	}
}

// check scans an answer cheaply: a JSON-RPC response (its id must be
// wantID), a REST response body or one SSE event's data. It reports the
// payload's kind ("task", "message", "status-update"/"statusUpdate",
// "artifact-update"/"artifactUpdate"), whether it ends a stream, and an
// error code when the answer is an error.
func (d dialect) check(b, wantID []byte) (envelope, bool) {
	scan := scanResult03
	if d.v10 {
		scan = scanResult10
	}
	if !d.rest {
		return checkEnvelope(b, wantID, scan)
	}
	e := envelope{idOK: true, hasResult: true}
	ok := scan(b, &e)
	return e, ok
}

// scanResult03 reads a 0.3 result's kind and final flag.
func scanResult03(v []byte, e *envelope) bool {
	ok := eachMember(v, func(k, v []byte) {
		switch string(k) {
		case "kind":
			if len(v) >= 2 {
				e.kind = string(v[1 : len(v)-1])
			}
		case "final":
			e.final = string(v) == "true"
		}
	})
	e.final = e.final && e.kind == "status-update"
	return ok
}

// scanResult10 reads which member a 1.0 SendMessageResponse or
// StreamResponse holds. There is no "final" flag in 1.0: a stream closes
// once the task is in a terminal or interrupted state (A2A 1.0 §3.1.2,
// §11.7), which a statusUpdate, or a Task snapshot the server may resend
// before closing, says. A member "error" is the google.rpc.Status of a
// REST stream that failed.
func scanResult10(v []byte, e *envelope) bool {
	return eachMember(v, func(k, v []byte) {
		switch string(k) {
		case "message", "artifactUpdate":
			e.kind = string(k)
		case "task", "statusUpdate":
			e.kind = string(k)
			e.final = finalState10(v)
		case "error":
			e.errCode = "error"
		}
	})
}

// finalState10 reports whether the Task or TaskStatusUpdateEvent v has a
// terminal or interrupted status.state.
func finalState10(v []byte) bool {
	final := false
	eachMember(v, func(k, v []byte) {
		if string(k) != "status" {
			return
		}
		eachMember(v, func(k, v []byte) {
			if string(k) != "state" {
				return
			}
			switch string(v) {
			case `"TASK_STATE_COMPLETED"`, `"TASK_STATE_FAILED"`, `"TASK_STATE_CANCELED"`, `"TASK_STATE_REJECTED"`,
				`"TASK_STATE_INPUT_REQUIRED"`, `"TASK_STATE_AUTH_REQUIRED"`:
				final = true
			}
		})
	})
	return final
}

// unary judges the answer to a send: a JSON object, no error, the
// request's id, and a Task or a Message as result.
func (d dialect) unary(b, wantID []byte) error {
	e, ok := d.check(b, wantID)
	if err := d.verdict(e, ok, b); err != nil {
		return err
	}
	if e.kind != "task" && e.kind != "message" {
		return fail("bad response", "the result is not a Task or a Message")
	}
	return nil
}

// verdict turns a scanned answer into nil or the failure it is.
func (d dialect) verdict(e envelope, ok bool, b []byte) error {
	switch {
	case !ok:
		return fail("bad response", "response is not a JSON object")
	case e.errCode != "" && d.rest:
		ae := v10.UnmarshalRESTError(http.StatusOK, b)
		return fail("stream error "+reasonOf(ae), "stream error event: %s", ae.Message)
	case e.errCode != "":
		return fail("rpc "+e.errCode, "JSON-RPC error %s", e.errCode)
	case !e.idOK:
		return fail("bad response", "response id is not the request's")
	case !e.hasResult:
		return fail("bad response", "response has no result")
	}
	return nil
}

// httpFailure is the failure a non-200 answer counts as; a REST error body
// (a google.rpc.Status, A2A 1.0 §11.6) adds its reason.
func (d dialect) httpFailure(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	kind := "http " + strconv.Itoa(resp.StatusCode)
	if d.rest {
		ae := v10.UnmarshalRESTError(resp.StatusCode, b)
		return fail(kind+" "+reasonOf(ae), "HTTP %s: %s", resp.Status, ae.Message)
	}
	return fail(kind, "HTTP %s", resp.Status)
}

// reasonOf is the google.rpc.ErrorInfo reason of e's code (A2A 1.0 §5.4),
// or the code itself.
func reasonOf(e *a2a.Error) string {
	if r := a2a.Reason(e.Code); r != "" {
		return r
	}
	return strconv.Itoa(e.Code)
}
