package simple

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/server"
)

// Defaults of EndpointOptions.
const (
	DefaultMaxBody     = 1 << 20
	DefaultWaitTimeout = 30 * time.Second
	DefaultMaxTimeout  = 10 * time.Minute
)

// InputHashKey is the message metadata key under which the endpoint
// records the first 16 hex digits of the SHA-256 of a call's input
// (canonical JSON: keys sorted, numbers as sent), to tell a retried call
// from a new one.
const InputHashKey = "a2abridge/simple-input"

// TimeoutMessage is the "error" of a call whose task was not done in time.
const TimeoutMessage = "timed out; call again with the same task_id to get the result"

// EndpointOptions configure NewEndpoint. The zero value is ready to use.
type EndpointOptions struct {
	// MaxBody is the largest request body read, in bytes (0 means 1 MiB);
	// a larger one is answered 413.
	MaxBody int64
	// DefaultTimeout is how long a call waits for its task when it gives
	// no timeout_ms (0 means 30 s).
	DefaultTimeout time.Duration
	// MaxTimeout is the largest timeout_ms accepted (0 means 10 min); a
	// larger one is answered 400.
	MaxTimeout time.Duration
	// TextField is the key of texts in input and output values ("" means
	// "text").
	TextField string
	// Logger logs internal errors (nil means slog.Default()).
	Logger *slog.Logger
}

// NewEndpoint returns the handler of POST /simple/{agent}:
// any agent that lookup finds answers simple callers. Mount it with a
// pattern that names {agent} (Host.Handle("/simple/{agent}", …)); without
// one, the agent is the last segment of the path.
//
// A call is a JSON object {"task_id", "input", "timeout_ms"} (see
// ParseRequest). Its input becomes the parts of an A2A message
// (ValueToParts: a string, or an object whose only key is the text field,
// a string, is a TextPart; text and "files" alone become a TextPart and FileParts; any
// other object is a DataPart of the whole object, text field included,
// after a TextPart of its text field when that is a string), sent to the
// agent's server.AgentHandler as a blocking SendMessage, and the call waits
// for the task to finish or to wait for input (timeout_ms, default
// EndpointOptions.DefaultTimeout). The answer is
// {"task_id", "status", "output", "error"}:
//
//   - completed: "success", output ArtifactsToValue of the artifacts (of
//     the closing status message's parts when there are none; {} when
//     there is neither);
//   - failed, rejected, canceled: "error", error the texts of the status
//     message ("the task failed" etc. when it has none), output null;
//   - input-required, auth-required: "input_required", output the
//     question (ArtifactsToValue of the status message's parts:
//     {"text": "<question>"} for a text question), error null;
//   - not done in time: "error", error TimeoutMessage, with HTTP 504; the
//     task goes on.
//
// Content-Type: for an agent that authenticates its callers
// (server.AgentHandler.RequiresAuth), a call must be sent with one JSON media
// type, application/json or application/*+json (parameters such as
// charset are ignored, case does not matter). Any other Content-Type,
// none, or more than one is answered 415 before the credentials are
// checked: a web page elsewhere can make a browser POST form, text/plain
// and untyped bodies without a CORS preflight, with the cookies the
// browser holds for this server (cross-site request forgery, when the
// credential is a cookie). For an agent without authentication any
// Content-Type is accepted, and the body is read as JSON whatever it
// says: such an agent answers anyone who can reach it anyway.
//
// Task ids and idempotency: the caller's task_id (one is generated and
// returned when the call has none) names the task. The message that
// creates it has messageId "simple:"+task_id, so a call with a task_id
// already used returns that task's result without running the agent again
// (waiting, within the call's timeout, while it still works), whatever
// its input. When that task waits for input, a call with a different input
// continues it: the input is sent as a message of the task with messageId
// "simple:"+task_id+":"+the first 16 hex digits of the SHA-256 of the
// input (see InputHashKey), so a retry of that call is answered from the
// task too. A call with the input that led to the question (a retry), or
// with none, gets the question again. Hence an answer identical to the
// task's previous input cannot be sent; vary it. A task_id is the
// caller's own: another principal's task_id names another task.
//
// HTTP statuses: 200 for every task outcome; 400 for a malformed call
// (error names the member: "input: required", "timeout_ms: …"); 415 for
// a call without a JSON Content-Type to an agent that authenticates; 401
// when the agent's authentication (HandlerOptions.Auth, through
// AgentHandler.Authenticated) refuses the credentials, 503 when it is
// unavailable; 404 for an unknown agent (with the call's task_id), and
// for a new task_id of a retired agent (server.HandlerOptions.Retired:
// it still answers the calls of its finished tasks); 405 for a method
// other than POST;
// 409 when the agent refuses the message (a task_id reused concurrently
// for a different input); 413 for a body over MaxBody; 504 on timeout;
// 500 for an internal error. Every answer has the dialect's shape, with
// "status": "error" and the reason in "error" when it is not 200.
func NewEndpoint(lookup func(name string) (*server.AgentHandler, bool), opts EndpointOptions) http.Handler {
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultWaitTimeout
	}
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = DefaultMaxTimeout
	}
	opts.DefaultTimeout = min(opts.DefaultTimeout, opts.MaxTimeout)
	if opts.TextField == "" {
		opts.TextField = DefaultTextField
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &endpoint{lookup: lookup, opts: opts}
}

type endpoint struct {
	lookup func(string) (*server.AgentHandler, bool)
	opts   EndpointOptions
}

// answer writes a dialect answer.
func answer(w http.ResponseWriter, code int, r Response) {
	b, err := Marshal(r)
	if err != nil { // an output that cannot be JSON (invalid UTF-8 from an agent)
		code = http.StatusInternalServerError
		msg := "the result cannot be encoded as JSON: " + err.Error()
		b, _ = Marshal(Response{TaskID: r.TaskID, Status: StatusError, Error: &msg})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// fail writes an error answer.
func fail(w http.ResponseWriter, code int, taskID, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	answer(w, code, Response{TaskID: taskID, Status: StatusError, Error: &msg})
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("agent")
	if name == "" {
		p := strings.TrimRight(r.URL.Path, "/")
		name = p[strings.LastIndexByte(p, '/')+1:]
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		fail(w, http.StatusMethodNotAllowed, "", "method %s not allowed: POST a JSON request", r.Method)
		return
	}
	h, ok := e.lookup(name)
	if !ok || h == nil {
		fail(w, http.StatusNotFound, e.callerTaskID(w, r), "no agent named %s", quote(name, 100))
		return
	}
	if h.RequiresAuth() && !jsonContentType(r.Header.Values("Content-Type")) {
		// A browser sends form, text/plain and untyped bodies across
		// sites without a preflight, with the user's cookies: refuse
		// them on an agent whose callers authenticate (an API key in a
		// cookie), before its authentication runs.
		fail(w, http.StatusUnsupportedMediaType, "", "Content-Type must be application/json (or application/*+json) for this agent, which authenticates its callers")
		return
	}
	h.Authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.serve(w, r, h)
	}), func(w http.ResponseWriter, r *http.Request, status int, err *a2a.Error) {
		fail(w, status, "", "%s", err.Message)
	}).ServeHTTP(w, r)
}

// callerTaskID is the task_id of the call r carries, for an error answer
// given before the call is served (an unknown agent): "" when the body
// cannot be read or is no valid call.
func (e *endpoint) callerTaskID(w http.ResponseWriter, r *http.Request) string {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, e.opts.MaxBody))
	if err != nil {
		return ""
	}
	req, err := ParseRequest(body)
	if err != nil {
		return ""
	}
	return req.TaskID
}

// jsonContentType reports whether a request's Content-Type header values
// are exactly one JSON media type: application/json or application/*+json
// (RFC 6839 §3.1), with any parameters, in any case. A value with a
// control character other than a tab is no field value (RFC 9110 §5.5)
// and no JSON type, whatever mime.ParseMediaType (which trims Unicode
// white space, form feeds included) would make of it.
func jsonContentType(values []string) bool {
	if len(values) != 1 || strings.ContainsFunc(values[0], func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
		return false
	}
	mt, _, err := mime.ParseMediaType(values[0])
	if err != nil {
		return false
	}
	sub, ok := strings.CutPrefix(mt, "application/") // mt is lower case
	return ok && (sub == "json" || len(sub) > len("+json") && strings.HasSuffix(sub, "+json"))
}

// serve answers an authenticated call to h.
func (e *endpoint) serve(w http.ResponseWriter, r *http.Request, h *server.AgentHandler) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, e.opts.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			fail(w, http.StatusRequestEntityTooLarge, "", "the request body exceeds %d bytes", e.opts.MaxBody)
			return
		}
		fail(w, http.StatusBadRequest, "", "the request body could not be read: %v", err)
		return
	}
	req, err := ParseRequest(body)
	if err != nil {
		fail(w, http.StatusBadRequest, "", "%v", err)
		return
	}
	timeout := e.opts.DefaultTimeout
	if req.TimeoutMS > 0 {
		if req.TimeoutMS > e.opts.MaxTimeout.Milliseconds() {
			fail(w, http.StatusBadRequest, req.TaskID, "timeout_ms: must be at most %d", e.opts.MaxTimeout.Milliseconds())
			return
		}
		timeout = time.Duration(req.TimeoutMS) * time.Millisecond
	}
	taskID := req.TaskID
	if taskID == "" {
		taskID = a2a.NewID()
	}
	var hash string
	if req.Input != nil {
		b, err := Marshal(req.Input)
		if err != nil {
			fail(w, http.StatusBadRequest, taskID, "input: %v", err)
			return
		}
		sum := sha256.Sum256(b)
		hash = hex.EncodeToString(sum[:8])
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	firstID := "simple:" + taskID
	task, err := h.MessageTask(ctx, firstID)
	switch {
	case errors.Is(err, a2a.ErrTaskNotFound):
		if h.Retired() {
			// A removed agent takes no new task: unknown, as for an
			// agent never hosted (its finished tasks are still answered).
			fail(w, http.StatusNotFound, taskID, "no agent named %s", quote(h.Name(), 100))
			return
		}
		if req.Input == nil {
			fail(w, http.StatusBadRequest, taskID, "input: required (there is no task with this task_id yet)")
			return
		}
		msg := a2a.Message{MessageID: firstID, Role: a2a.RoleUser, Parts: e.parts(req.Input),
			Metadata: map[string]any{InputHashKey: hash}}
		task, err = e.send(ctx, h, msg)
	case err != nil:
	case task.Status.State.Terminal():
		// Done: its result, whatever the input.
	case task.Status.State.Interrupted():
		last := lastUserMessage(task)
		if req.Input == nil || last == nil || last.Metadata[InputHashKey] == hash {
			break // a poll, or a retry of the call that led here: the question again
		}
		msg := a2a.Message{MessageID: firstID + ":" + hash, Role: a2a.RoleUser, TaskID: task.ID,
			Parts: e.parts(req.Input), Metadata: map[string]any{InputHashKey: hash}}
		task, err = e.send(ctx, h, msg)
	default:
		// Still working (an earlier call timed out): wait for it by
		// sending its last message again, which the agent's AgentHandler
		// answers from the task, once done, without running it again.
		if last := lastUserMessage(task); last != nil {
			task, err = e.send(ctx, h, *last)
		}
	}
	if err != nil {
		e.failErr(ctx, w, r, taskID, err)
		return
	}
	e.answerTask(w, taskID, task)
}

// parts are the message parts of a call's input.
func (e *endpoint) parts(input any) []a2a.Part {
	parts := ValueToParts(input, e.opts.TextField)
	if len(parts) == 0 {
		parts = []a2a.Part{a2a.NewDataPart(input)}
	}
	return parts
}

// lastUserMessage is the task's latest message from the client.
func lastUserMessage(t *a2a.Task) *a2a.Message {
	for i := len(t.History) - 1; i >= 0; i-- {
		if t.History[i].Role == a2a.RoleUser {
			m := t.History[i]
			return &m
		}
	}
	return nil
}

// send sends msg and waits for the task, or for ctx. SendMessage runs on
// a goroutine of its own: for an agent that runs inline (see
// server.InlineAgent) it returns only when the agent has, and the call
// must not wait past its timeout for that.
func (e *endpoint) send(ctx context.Context, h *server.AgentHandler, msg a2a.Message) (*a2a.Task, error) {
	type result struct {
		t   *a2a.Task
		err error
	}
	ch := make(chan result, 1)
	go func() {
		t, err := h.SendMessageForTask(ctx, a2a.SendMessageRequest{Message: msg,
			Configuration: &a2a.SendMessageConfiguration{Blocking: new(true), HistoryLength: new(0)}})
		ch <- result{t, err}
	}()
	select {
	case res := <-ch:
		return res.t, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// failErr answers an error of the agent's AgentHandler or the call's context.
func (e *endpoint) failErr(ctx context.Context, w http.ResponseWriter, r *http.Request, taskID string, err error) {
	var ae *a2a.Error
	switch {
	case r.Context().Err() != nil:
		return // the caller is gone
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		fail(w, http.StatusGatewayTimeout, taskID, TimeoutMessage)
	case errors.As(err, &ae):
		code := http.StatusInternalServerError
		msg := ae.Message
		switch ae.Code {
		case a2a.CodeInvalidParams:
			if d, _ := ae.Data.(map[string]any); d != nil && d["field"] == "/params/message/messageId" {
				code, msg = http.StatusConflict, "task_id: already used for a different input"
				break
			}
			code = http.StatusBadRequest
		case a2a.CodeInvalidRequest, a2a.CodeParseError, a2a.CodeContentTypeNotSupported:
			code = http.StatusBadRequest
		case a2a.CodeTaskNotFound:
			code = http.StatusNotFound
		case a2a.CodeUnauthenticated:
			code = http.StatusUnauthorized
		case a2a.CodeUnsupportedOperation:
			code = http.StatusConflict
		case a2a.CodeInternalError:
			code = http.StatusServiceUnavailable
		}
		fail(w, code, taskID, "%s", msg)
	default:
		e.opts.Logger.Error("simple endpoint: internal error", "task_id", taskID, "err", err)
		fail(w, http.StatusInternalServerError, taskID, "internal error")
	}
}

// answerTask answers with the task's outcome.
func (e *endpoint) answerTask(w http.ResponseWriter, taskID string, t *a2a.Task) {
	st := t.Status.State
	switch {
	case st == a2a.TaskStateCompleted:
		arts := t.Artifacts
		if len(arts) == 0 && t.Status.Message != nil {
			arts = []a2a.Artifact{{Parts: t.Status.Message.Parts}}
		}
		out := ArtifactsToValue(arts, e.opts.TextField)
		answer(w, http.StatusOK, Response{TaskID: taskID, Status: StatusSuccess, Output: out})
	case st.Terminal():
		msg := messageText(t.Status.Message)
		if msg == "" {
			msg = map[a2a.TaskState]string{a2a.TaskStateFailed: "the task failed",
				a2a.TaskStateCanceled: "the task was canceled", a2a.TaskStateRejected: "the task was rejected"}[st]
		}
		answer(w, http.StatusOK, Response{TaskID: taskID, Status: StatusError, Error: &msg})
	case st.Interrupted():
		var arts []a2a.Artifact
		if t.Status.Message != nil {
			arts = []a2a.Artifact{{Parts: t.Status.Message.Parts}}
		}
		out := ArtifactsToValue(arts, e.opts.TextField)
		answer(w, http.StatusOK, Response{TaskID: taskID, Status: StatusInputRequired, Output: out})
	default: // still working: only when the wait ended without an error
		fail(w, http.StatusGatewayTimeout, taskID, TimeoutMessage)
	}
}

// messageText is the texts of a message joined with "\n".
func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var texts []string
	for _, p := range m.Parts {
		if tp, ok := p.Content.(a2a.Text); ok {
			texts = append(texts, string(tp))
		}
	}
	return strings.Join(texts, "\n")
}
