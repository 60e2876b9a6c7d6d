// Package bench is the load generator behind `a2abridge bench`. It drives
// any A2A endpoint, over A2A 0.3.0 JSON-RPC, A2A 1.0 JSON-RPC or the A2A
// 1.0 HTTP+JSON (REST) binding, with pre-built raw requests (unique
// messageIds, no client SDK) over a tuned keep-alive HTTP transport, and
// checks each answer cheaply, without decoding it: HTTP 200, the request's
// id echoed (JSON-RPC), a result that is a Task or a Message (not an
// error), and for streams every event well-formed up to the one that ends
// the stream: in 0.3 the status-update with "final":true, in 1.0 the
// statusUpdate in a terminal or interrupted state (1.0 has no final flag).
// The client is meant to cost far less than any server it measures.
//
// Modes (0.3 method names; 1.0: SendMessage, SendStreamingMessage,
// SubscribeToTask; REST: POST /message:send, /message:stream,
// /tasks/{id}:subscribe):
//
//   - send: message/send round trips.
//   - stream: message/stream round trips, from the request to the final
//     status-update (time to the first event is reported too).
//   - resubscribe: tasks/resubscribe round trips (snapshot + final) on
//     finished tasks that message/send created beforehand. A2A 1.0
//     §3.1.6 refuses a subscription to a task in a terminal state and
//     keeps one to an interrupted task open until the task ends, so in
//     1.0 each SubscribeToTask resumes a finished task from its start
//     (Last-Event-ID: 0, the resume of the a2abridge event-log
//     extension): its events are replayed, the last one ends the stream.
//   - idle: open many streams to one long-running task (or one task each)
//     and hold them, counting keep-alive comments and events; the streams
//     use one goroutine and a small buffer each on plain connections.
//
// Latencies go to a log-linear histogram (under 1 % error) per worker.
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Mode selects what Run measures.
type Mode string

// The modes of Run.
const (
	ModeSend        Mode = "send"
	ModeStream      Mode = "stream"
	ModeResubscribe Mode = "resubscribe"
	ModeIdle        Mode = "idle"
)

// Defaults of Options' zero values.
const (
	DefaultConcurrency = 32
	DefaultDuration    = 10 * time.Second
	DefaultPayload     = 16
	DefaultTimeout     = 30 * time.Second
	DefaultIdleStreams = 1000
	DefaultIdleText    = "3600"
)

// Options configures Run. Zero values select the documented defaults.
type Options struct {
	// URL is the agent's JSON-RPC endpoint (http or https), e.g.
	// http://127.0.0.1:8080/a2a/echo, or with Binding "rest" the
	// interface URL the REST paths are appended to (the same URL for
	// a2abridge). It is used as is: no card lookup.
	URL string
	// Protocol is the A2A version spoken: Protocol03 ("0.3", the default)
	// or Protocol10 ("1.0", sent with the A2A-Version: 1.0 header).
	Protocol string
	// Binding is BindingJSONRPC ("jsonrpc", the default), BindingREST
	// ("rest", A2A 1.0 §11; needs Protocol "1.0") or BindingGRPC ("grpc",
	// A2A 1.0 §10; URL is then the gRPC target host:port; send and stream
	// modes).
	Binding string
	// Tenant is the tenant of gRPC requests (A2A 1.0 §3.2): with
	// a2abridge, the agent's name.
	Tenant string
	// Mode is what to measure; "" means ModeSend.
	Mode Mode
	// Concurrency is the number of concurrent clients (default 32). In
	// idle mode it is how many streams are being opened at once.
	Concurrency int
	// Duration is the measured time (default 10 s) unless Requests is set.
	// In idle mode it is how long the open streams are held.
	Duration time.Duration
	// Requests, when positive, ends the measurement after that many
	// requests (not counting the warmup) instead of after Duration.
	Requests int64
	// Warmup is run before measuring; its requests are not counted.
	Warmup time.Duration
	// Payload is the length in bytes of the message's text part (default
	// 16; negative means empty).
	Payload int
	// Header is sent with every request (authentication, say).
	Header http.Header
	// Timeout bounds each request, stream included (default 30 s; idle
	// streams are bounded by the hold only).
	Timeout time.Duration

	// Tasks is the number of finished tasks resubscribe mode cycles
	// through (default 4 × Concurrency).
	Tasks int

	// IdleStreams is the number of streams idle mode opens (default 1000).
	IdleStreams int
	// IdleVia is how idle streams are opened: "resubscribe" (default;
	// tasks/resubscribe, SubscribeToTask in 1.0, to one task) or "stream"
	// (one message/stream each, every stream its own task).
	IdleVia string
	// IdleTask is the task idle resubscribe streams follow; empty means
	// one is created with a non-blocking message/send (1.0: SendMessage
	// with returnImmediately) of IdleText.
	IdleTask string
	// IdleText is the text of the messages that start idle tasks (default
	// "3600": an hour of the built-in slow agent).
	IdleText string

	// Progress, when set, receives one line of live progress per second.
	Progress io.Writer
	// OnStart and OnStop, when set, are called as the measured window
	// opens and closes (to sample a server's CPU time, say).
	OnStart, OnStop func()
	// OnOpen, when set, is called in idle mode once every stream has been
	// attempted, with the number open; the hold starts when it returns.
	OnOpen func(open int)
}

// Result is the outcome of Run. Latencies are in milliseconds.
type Result struct {
	Mode Mode   `json:"mode"`
	URL  string `json:"url"`
	// Protocol and Binding are Options' (defaults filled in).
	Protocol    string  `json:"protocol"`
	Binding     string  `json:"binding"`
	Concurrency int     `json:"concurrency"`
	Payload     int     `json:"payload_bytes"`
	Warmup      float64 `json:"warmup_s"`
	// Elapsed is the measured window in seconds.
	Elapsed float64 `json:"elapsed_s"`
	// Requests counts the successful round trips of the window.
	Requests int64 `json:"requests"`
	// Errors counts the failed ones; ErrorKinds breaks them down
	// ("http 503", "rpc -32001", "timeout", "stream ended early", …) and
	// FirstError is the first one's message.
	Errors     int64            `json:"errors"`
	ErrorKinds map[string]int64 `json:"error_kinds,omitempty"`
	FirstError string           `json:"first_error,omitempty"`
	// Throughput is Requests per second of Elapsed.
	Throughput float64 `json:"throughput"`
	// Latency is of whole round trips (for streams: until the final event).
	Latency Latency `json:"latency_ms"`
	// FirstEvent is the time to a stream's first event (stream modes).
	FirstEvent *Latency `json:"first_event_ms,omitempty"`
	// Events counts SSE events received in the window (stream modes).
	Events int64 `json:"events,omitempty"`
	// BytesReceived counts response bytes (bodies) received in the window.
	BytesReceived int64 `json:"bytes_received"`
	// Idle is set in idle mode.
	Idle *IdleResult `json:"idle,omitempty"`
}

// IdleResult is the outcome of idle mode.
type IdleResult struct {
	Via       string `json:"via"`
	TaskID    string `json:"task_id,omitempty"`
	Requested int    `json:"requested"`
	// Opened counts streams that were open (answered 200 with an event)
	// once every stream had been attempted; Failed the others.
	Opened int `json:"opened"`
	Failed int `json:"failed"`
	// OpenAtEnd counts streams still open when the hold ended; Ended
	// those the server ended (or that broke) during the hold.
	OpenAtEnd int `json:"open_at_end"`
	Ended     int `json:"ended"`
	// OpenSeconds is how long opening took; HeldSeconds the hold.
	OpenSeconds float64 `json:"open_s"`
	HeldSeconds float64 `json:"held_s"`
	// KeepAlives and KeepAliveBytes count SSE comment lines (and their
	// bytes) received during the hold; Events and EventBytes the events.
	KeepAlives     int64 `json:"keep_alives"`
	KeepAliveBytes int64 `json:"keep_alive_bytes"`
	Events         int64 `json:"events"`
	EventBytes     int64 `json:"event_bytes"`
	// KeepAlivesPerStreamPerSecond is KeepAlives / OpenAtEnd / HeldSeconds.
	KeepAlivesPerStreamPerSecond float64 `json:"keep_alives_per_stream_per_s"`
	// OpenLatency is the time from dialling to a stream's first event.
	OpenLatency Latency `json:"open_latency_ms"`
}

// Run measures o.URL as o describes. It returns an error when the target
// cannot be measured at all (a bad option, or the first request fails);
// failures during the run are counted in the Result instead. Cancelling
// ctx ends the run early with the results so far.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	if o.Mode == ModeIdle {
		return runIdle(ctx, o)
	}
	return runLoad(ctx, o)
}

func (o *Options) normalize() error {
	if o.Binding == BindingGRPC {
		if _, _, err := net.SplitHostPort(o.URL); err != nil {
			return fmt.Errorf("bench: %q is not a gRPC target (host:port)", o.URL)
		}
	} else if u, err := url.Parse(o.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("bench: %q is not an http(s) URL", o.URL)
	}
	switch o.Mode {
	case "":
		o.Mode = ModeSend
	case ModeSend, ModeStream, ModeResubscribe, ModeIdle:
	default:
		return fmt.Errorf("bench: unknown mode %q (want send, stream, resubscribe or idle)", o.Mode)
	}
	switch o.Protocol {
	case "":
		o.Protocol = Protocol03
	case Protocol03, Protocol10:
	default:
		return fmt.Errorf("bench: unknown protocol version %q (want 0.3 or 1.0)", o.Protocol)
	}
	switch o.Binding {
	case "":
		o.Binding = BindingJSONRPC
	case BindingJSONRPC:
	case BindingREST:
		if o.Protocol != Protocol10 {
			return fmt.Errorf("bench: the rest binding is A2A 1.0's HTTP+JSON: give protocol 1.0")
		}
	case BindingGRPC:
		if o.Protocol != Protocol10 {
			return fmt.Errorf("bench: the grpc binding is A2A 1.0's: give protocol 1.0")
		}
		if o.Mode != ModeSend && o.Mode != ModeStream {
			return fmt.Errorf("bench: over grpc, the send and stream modes only")
		}
	default:
		return fmt.Errorf("bench: unknown binding %q (want jsonrpc, rest or grpc)", o.Binding)
	}
	if o.Concurrency < 0 || o.Duration < 0 || o.Requests < 0 || o.Warmup < 0 || o.Timeout < 0 || o.IdleStreams < 0 || o.Tasks < 0 {
		return errors.New("bench: negative option")
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.Payload == 0 {
		o.Payload = DefaultPayload
	}
	o.Payload = max(o.Payload, 0)
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Tasks == 0 {
		o.Tasks = 4 * o.Concurrency
	}
	if o.IdleStreams == 0 {
		o.IdleStreams = DefaultIdleStreams
	}
	switch o.IdleVia {
	case "":
		o.IdleVia = "resubscribe"
	case "resubscribe", "stream":
	default:
		return fmt.Errorf("bench: unknown idle method %q (want resubscribe or stream)", o.IdleVia)
	}
	if o.IdleText == "" {
		o.IdleText = DefaultIdleText
	}
	if o.Mode == ModeIdle && o.Requests > 0 {
		return errors.New("bench: idle mode holds streams for a duration; requests does not apply")
	}
	return nil
}

// newRunID returns a random tag that makes this run's messageIds unique
// (servers deduplicate repeated messageIds).
func newRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// failure is an error with the category it is counted under.
type failure struct {
	kind string
	msg  string
}

func (f *failure) Error() string { return f.msg }

func fail(kind, format string, args ...any) error {
	return &failure{kind: kind, msg: fmt.Sprintf(format, args...)}
}
