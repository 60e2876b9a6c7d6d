package check

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/grpcdial"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// A2A 1.0 operation names (A2A 1.0 §5.3): the JSON-RPC methods, and the
// names of the HTTP+JSON routes in evidence.
const (
	opSendMessage       = "SendMessage"
	opSendStreaming     = "SendStreamingMessage"
	opGetTask           = "GetTask"
	opListTasks         = "ListTasks"
	opCancelTask        = "CancelTask"
	opSubscribeToTask   = "SubscribeToTask"
	opCreatePushConfig  = "CreateTaskPushNotificationConfig"
	opGetPushConfig     = "GetTaskPushNotificationConfig"
	opListPushConfigs   = "ListTaskPushNotificationConfigs"
	opDeletePushConfig  = "DeleteTaskPushNotificationConfig"
	opGetExtendedCard   = "GetExtendedAgentCard"
	versionHeader       = "A2A-Version"
	noVersion           = "-" // req10.version: send no A2A-Version header
	definitionNone      = ""
	definitionAgentCard = "AgentCard"
)

// resultDefinition is the A2A 1.0.1 schema definition of each operation's
// result (of each event, for streams).
var resultDefinition = map[string]string{
	opSendMessage:      "SendMessageResponse",
	opSendStreaming:    "StreamResponse",
	opGetTask:          "Task",
	opListTasks:        "ListTasksResponse",
	opCancelTask:       "Task",
	opSubscribeToTask:  "StreamResponse",
	opCreatePushConfig: "TaskPushNotificationConfig",
	opGetPushConfig:    "TaskPushNotificationConfig",
	opListPushConfigs:  "ListTaskPushNotificationConfigsResponse",
	opGetExtendedCard:  definitionAgentCard,
}

// suite10 probes one A2A 1.0 interface (JSON-RPC or HTTP+JSON): it builds
// each operation's request for its binding and reads the answer into a
// reply10, so that a check is written once for both bindings.
type suite10 struct {
	p       *Probe
	key     string // "1.0/jsonrpc"
	binding string
	rest    bool
	// grpc: the gRPC binding, over conn to target (host:port).
	grpc   bool
	conn   grpcdial.Conn
	target string
	iface  Interface
	no     string // why the interface cannot be probed ("" = it can)
	na     bool   // the interface is not offered (no is n/a, not a skip)

	once sync.Once
	mu   sync.Mutex
	// tasks the suite started: id → last state seen, in order.
	tasks     map[string]a2a.TaskState
	taskOrder []string
	pushes    [][2]string // (task id, config id) the suite created
}

// suite returns the A2A 1.0 suite of binding, set up on first use.
func (p *Probe) suite(binding string) *suite10 {
	p.mu.Lock()
	if p.suites == nil {
		p.suites = map[string]*suite10{}
	}
	key := suiteKey(a2a.Version10, binding)
	s := p.suites[key]
	if s == nil {
		s = &suite10{p: p, key: key, binding: binding, rest: binding == BindingREST, grpc: binding == BindingGRPC, tasks: map[string]a2a.TaskState{}}
		p.suites[key] = s
	}
	p.mu.Unlock()
	return s
}

// setup finds the interface and pings it once: GetTask of an unknown id.
func (s *suite10) setup(ctx context.Context) {
	s.once.Do(func() {
		it, ok := s.p.offered(a2a.Version10, s.binding)
		switch {
		case s.p.card == nil:
			s.no = "no Agent Card: " + s.p.cardErr
			return
		case !ok:
			s.no, s.na = fmt.Sprintf("the card offers no %s interface", suiteName(a2a.Version10, s.binding)), true
			return
		case s.grpc:
			if s.no = s.setupGRPC(it); s.no != "" {
				return
			}
		case !absoluteHTTP(it.URL):
			s.no = fmt.Sprintf("the %s interface's url %q is not an absolute http(s) URL", it.Name(), it.URL)
			return
		}
		s.iface = it
		r := s.do(ctx, s.getTask("a2a-check-ping-"+newUUID(), nil))
		switch {
		case r.ex.Status == 0:
			s.no = fmt.Sprintf("the %s interface %s is unreachable: %s", it.Name(), it.URL, r.ex.Err)
		case r.ex.Status == http.StatusUnauthorized || r.ex.Status == http.StatusForbidden:
			with := "without credentials; give them with --token, --api-key or --header"
			if s.p.hasCredentials() {
				with = "with the credentials given"
			}
			s.no = fmt.Sprintf("the %s interface answers HTTP %d %s", it.Name(), r.ex.Status, with)
		}
	})
}

func bindingOf(rest bool) string {
	if rest {
		return BindingREST
	}
	return BindingJSONRPC
}

// need returns a skip (or n/a) result when the interface cannot be probed.
func (s *suite10) need(ctx context.Context) *Result {
	s.setup(ctx)
	if s.no == "" {
		return nil
	}
	r := skip("%s", s.no)
	if s.na {
		r.Status = NotApplicable
	}
	return &r
}

// req10 is one A2A 1.0 request, for either binding.
type req10 struct {
	op     string
	params []byte     // JSON-RPC params; the HTTP+JSON body of a POST
	method string     // HTTP+JSON method (GET, POST, DELETE)
	path   string     // HTTP+JSON path below the interface URL (and tenant)
	query  url.Values // HTTP+JSON query
	// version is the A2A-Version header sent: "" for "1.0", noVersion for none.
	version string
	// invalid marks a deliberately wrong request: its answer is judged by
	// its own check, not by the schema.
	invalid bool
	// encErr is why params could not be encoded (the request is not sent).
	encErr error
	// noExt sends none of the extensions the card requires.
	noExt bool
	// pb is the request in protobuf's binary encoding, for the gRPC
	// binding (nil: the request has no gRPC form).
	pb []byte
}

// newReq10 is a request of op whose params were encoded with err.
func newReq10(op string, params []byte, err error, method, path string) req10 {
	return req10{op: op, params: params, encErr: err, method: method, path: path}
}

// reply10 is the answer to a req10.
type reply10 struct {
	ex *Exchange
	// ok: a success; body is its payload (the JSON-RPC result, or the
	// HTTP+JSON body).
	ok   bool
	body []byte
	// err is the A2A error of an error answer (decoded with
	// v10.UnmarshalError or v10.UnmarshalRESTError); errDoc is the
	// JSON-RPC error object or the HTTP+JSON body.
	err    *a2a.Error
	errDoc []byte
	// bad says why the answer is neither a success nor an error.
	bad string
}

// describe summarizes the reply for messages.
func (r *reply10) describe() string {
	e := r.ex
	switch {
	case e.Status == 0:
		return e.Err
	case r.bad != "":
		return fmt.Sprintf("%s: %s", statusText(e), r.bad)
	case r.err != nil:
		s := fmt.Sprintf("error %d %q", r.err.Code, r.err.Message)
		if e.Status != http.StatusOK {
			s = fmt.Sprintf("HTTP %d, %s", e.Status, s)
		}
		return s
	}
	return "result " + summarize10(r.body)
}

// summarize10 names a 1.0 payload: "task TASK_STATE_COMPLETED", "message",
// "statusUpdate TASK_STATE_WORKING", "object".
func summarize10(b []byte) string {
	m, _ := decode(b).(map[string]any)
	for _, k := range []string{"task", "message", "statusUpdate", "artifactUpdate"} {
		if v, ok := m[k].(map[string]any); ok {
			if st := str(v, "status", "state"); st != "" {
				return k + " " + st
			}
			return k
		}
	}
	if st := str(m, "status", "state"); st != "" && str(m, "id") != "" {
		return "task " + st
	}
	if m == nil {
		return excerpt(b, 40)
	}
	return "object"
}

// url returns the URL of a request: the interface URL, and for HTTP+JSON
// the tenant and the path.
func (s *suite10) url(r req10) string {
	if !s.rest {
		return s.iface.URL
	}
	u := strings.TrimRight(s.iface.URL, "/")
	if s.iface.Tenant != "" {
		u += "/" + url.PathEscape(s.iface.Tenant)
	}
	u += r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	return u
}

// opt returns the reqOpt of a request (and its JSON-RPC body).
func (s *suite10) opt(r req10, accept string) ([]byte, reqOpt) {
	h := http.Header{}
	switch r.version {
	case "":
		h.Set(versionHeader, a2a.Version10)
	case noVersion:
	default:
		h.Set(versionHeader, r.version)
	}
	o := reqOpt{url: s.url(r), accept: accept, rpcMethod: r.op, schema: resultDefinition[r.op], suite: s.key, header: h, invalid: r.invalid, noExtensions: r.noExt}
	if s.rest {
		o.method = r.method
		if r.method != http.MethodPost {
			return nil, o
		}
		body := r.params
		if body == nil {
			body = []byte("{}")
		}
		return body, o
	}
	id := s.p.newID()
	o.reqID = jsontext.Value(id)
	params := r.params
	if params == nil {
		params = []byte("{}")
	}
	return rpcBody(id, r.op, jsontext.Value(params)), o
}

// do sends a unary request and reads the answer.
func (s *suite10) do(ctx context.Context, r req10) *reply10 {
	if r.encErr != nil {
		e := s.unencodable(r)
		return &reply10{ex: e, bad: e.Err}
	}
	var e *Exchange
	if s.grpc {
		e = s.doGRPC(ctx, r)
	} else {
		body, o := s.opt(r, "application/json")
		e = s.p.do(ctx, body, o)
	}
	rep := s.read(e)
	s.observe(rep.body, r.op)
	return rep
}

// read reads a unary answer.
func (s *suite10) read(e *Exchange) *reply10 {
	r := &reply10{ex: e}
	if e.Status == 0 {
		r.bad = e.Err
		return r
	}
	if s.rest || s.grpc {
		if e.Status >= 200 && e.Status < 300 {
			r.ok, r.body = true, e.RespBody
			return r
		}
		r.err, r.errDoc = v10.UnmarshalRESTError(e.Status, e.RespBody), e.RespBody
		return r
	}
	rp := parseRPC(e.RespBody)
	switch {
	case rp.obj == nil:
		r.bad = rp.parseErr
	case rp.Err != nil && rp.HasResult:
		r.bad = "both result and error"
	case rp.HasResult:
		r.ok, r.body = true, rp.Result
	case rp.Err != nil:
		r.errDoc = rp.obj["error"]
		ae, err := v10.UnmarshalError(r.errDoc)
		if err != nil {
			r.bad = "an error object that is not A2A 1.0: " + err.Error()
			r.err = &a2a.Error{Code: rp.Err.Code, Message: rp.Err.Message}
			break
		}
		r.err = ae
	default:
		r.bad = "neither result nor error"
	}
	return r
}

// frame10 is one event of a 1.0 stream.
type frame10 struct {
	payload []byte     // the StreamResponse (JSON-RPC: the result)
	ev      a2a.Event  // decoded payload (nil when it does not decode)
	decErr  string     // why it does not decode
	err     *a2a.Error // an error event
	bad     string     // neither a StreamResponse nor an error
}

// frame reads one SSE event of a stream of this binding.
func (s *suite10) frame(ev SSEEvent) frame10 {
	var f frame10
	if s.rest || s.grpc {
		m, _ := decode(ev.Data).(map[string]any)
		if _, isErr := m["error"]; isErr || ev.Event == "error" {
			status := 0
			if s.grpc {
				// The recorded status's code is gRPC's (statusDocument).
				st, _ := m["error"].(map[string]any)
				code, _ := st["code"].(float64)
				status = grpcdial.HTTPStatus(int(code))
			}
			f.err = v10.UnmarshalRESTError(status, ev.Data)
			return f
		}
		if m == nil {
			f.bad = "not a JSON object"
			return f
		}
		f.payload = ev.Data
	} else {
		rp := parseRPC(ev.Data)
		switch {
		case rp.obj == nil:
			f.bad = rp.parseErr
			return f
		case rp.Err != nil:
			if ae, err := v10.UnmarshalError(rp.obj["error"]); err == nil {
				f.err = ae
			} else {
				f.err = &a2a.Error{Code: rp.Err.Code, Message: rp.Err.Message}
			}
			return f
		case !rp.HasResult:
			f.bad = "neither result nor error"
			return f
		}
		f.payload = rp.Result
	}
	ev10, err := v10.UnmarshalStreamResponse(f.payload)
	if err != nil {
		f.decErr = err.Error()
		return f
	}
	f.ev = ev10
	return f
}

// ends reports whether a frame ends its stream: an error, a Message, a
// status update in a terminal or interrupted state (A2A 1.0 §11.7), or a
// Task in a terminal state (a Task snapshot in an interrupted state starts
// a SubscribeToTask stream that goes on, §3.1.6).
func (f frame10) ends() bool {
	switch ev := f.ev.(type) {
	case *a2a.Message:
		return true
	case *a2a.Task:
		return ev.Status.State.Terminal()
	case *a2a.TaskStatusUpdateEvent:
		return ev.Status.State.Final()
	}
	return f.err != nil
}

// stream sends a streaming request and records its events.
func (s *suite10) stream(ctx context.Context, r req10, so streamOpt) *Exchange {
	if r.encErr != nil {
		return s.unencodable(r)
	}
	return s.streamUntil(ctx, r, so, func(ev SSEEvent) bool {
		f := s.frame(ev)
		s.observeEvent(f.ev)
		return f.ends()
	})
}

// streamUntil sends a streaming request over the suite's binding and
// records its events, ends saying which is the final one.
func (s *suite10) streamUntil(ctx context.Context, r req10, so streamOpt, ends func(SSEEvent) bool) *Exchange {
	if s.grpc {
		return s.streamGRPC(ctx, r, so, ends)
	}
	body, o := s.opt(r, "text/event-stream")
	return s.p.streamHTTP(ctx, body, o, so, ends)
}

// frames reads the events of a recorded stream.
func (s *suite10) frames(e *Exchange) []frame10 {
	out := make([]frame10, len(e.Events))
	for i, ev := range e.Events {
		out[i] = s.frame(ev)
	}
	return out
}

// ---- requests

func (s *suite10) tenant() string { return s.iface.Tenant }

// unencodable records a request whose params could not be encoded (the
// encoders fail only on values JSON cannot hold) as an exchange that
// failed before it was sent.
func (s *suite10) unencodable(r req10) *Exchange {
	e := &Exchange{Method: r.method, URL: s.url(r), RPCMethod: r.op, Suite: s.key,
		Err: "the checker could not encode the request: " + r.encErr.Error()}
	s.p.record(e)
	return e
}

func (s *suite10) send(p a2a.SendMessageRequest, stream bool) req10 {
	p.Tenant = s.tenant()
	b, err := v10.AppendSendMessageRequest(nil, &p)
	r := newReq10(opSendMessage, b, err, http.MethodPost, "/message:send")
	r.pb = s.pbOf(pb.AppendSendMessageRequest(nil, &p))
	if stream {
		r.op, r.path = opSendStreaming, "/message:stream"
	}
	return r
}

func (s *suite10) getTask(id string, historyLength *int) req10 {
	p := a2a.GetTaskRequest{Tenant: s.tenant(), ID: id, HistoryLength: historyLength}
	b, err := v10.AppendGetTaskRequest(nil, &p)
	r := newReq10(opGetTask, b, err, http.MethodGet, "/tasks/"+url.PathEscape(id))
	r.pb = s.pbOf(pb.AppendGetTaskRequest(nil, &p))
	r.query = v10.GetTaskQuery(&p)
	return r
}

func (s *suite10) listTasks(p a2a.ListTasksRequest) req10 {
	p.Tenant = s.tenant()
	b, err := v10.AppendListTasksRequest(nil, &p)
	r := newReq10(opListTasks, b, err, http.MethodGet, "/tasks")
	r.pb = s.pbOf(pb.AppendListTasksRequest(nil, &p))
	r.query = v10.ListTasksQuery(&p)
	return r
}

func (s *suite10) cancelTask(id string) req10 {
	p := a2a.CancelTaskRequest{Tenant: s.tenant(), ID: id}
	b, err := v10.AppendCancelTaskRequest(nil, &p)
	r := newReq10(opCancelTask, b, err, http.MethodPost, "/tasks/"+url.PathEscape(id)+":cancel")
	r.pb = s.pbOf(pb.AppendCancelTaskRequest(nil, &p))
	return r
}

func (s *suite10) subscribe(id string) req10 {
	p := a2a.SubscribeToTaskRequest{Tenant: s.tenant(), ID: id}
	b, err := v10.AppendSubscribeToTaskRequest(nil, &p)
	r := newReq10(opSubscribeToTask, b, err, http.MethodPost, "/tasks/"+url.PathEscape(id)+":subscribe")
	r.pb = s.pbOf(pb.AppendSubscribeToTaskRequest(nil, &p))
	return r
}

func (s *suite10) createPush(c a2a.TaskPushNotificationConfig) req10 {
	c.Tenant = s.tenant()
	b, err := v10.AppendTaskPushNotificationConfig(nil, &c)
	r := newReq10(opCreatePushConfig, b, err, http.MethodPost, "/tasks/"+url.PathEscape(c.TaskID)+"/pushNotificationConfigs")
	r.pb = s.pbOf(pb.AppendTaskPushNotificationConfig(nil, &c))
	return r
}

func (s *suite10) pushConfigRequest(op, method, taskID, id string) req10 {
	p := a2a.GetTaskPushNotificationConfigRequest{Tenant: s.tenant(), TaskID: taskID, ID: id}
	b, err := v10.AppendPushConfigIDRequest(nil, &p)
	r := newReq10(op, b, err, method, "/tasks/"+url.PathEscape(taskID)+"/pushNotificationConfigs/"+url.PathEscape(id))
	r.pb = s.pbOf(pb.AppendPushConfigIDRequest(nil, &p))
	return r
}

func (s *suite10) listPush(taskID string) req10 {
	p := a2a.ListTaskPushNotificationConfigsRequest{Tenant: s.tenant(), TaskID: taskID}
	b, err := v10.AppendListTaskPushNotificationConfigsRequest(nil, &p)
	r := newReq10(opListPushConfigs, b, err, http.MethodGet, "/tasks/"+url.PathEscape(taskID)+"/pushNotificationConfigs")
	r.pb = s.pbOf(pb.AppendListTaskPushNotificationConfigsRequest(nil, &p))
	r.query = v10.ListPushConfigsQuery(&p)
	return r
}

func (s *suite10) extendedCard() req10 {
	b, err := v10.AppendGetExtendedAgentCardRequest(nil, s.tenant())
	r := newReq10(opGetExtendedCard, b, err, http.MethodGet, "/extendedAgentCard")
	r.pb = s.pbOf(pb.AppendGetExtendedAgentCardRequest(nil, s.tenant()))
	return r
}

// userMessage is a 1.0 user message with one text part.
func userMessage(taskID, contextID, text string) a2a.SendMessageRequest {
	return a2a.SendMessageRequest{Message: a2a.Message{Role: a2a.RoleUser, MessageID: newUUID(), TaskID: taskID, ContextID: contextID,
		Parts: []a2a.Part{a2a.NewTextPart(text)}}}
}

// withBlocking sets returnImmediately (blocking false) on p.
func withBlocking(p a2a.SendMessageRequest, blocking bool) a2a.SendMessageRequest {
	p.Configuration = &a2a.SendMessageConfiguration{Blocking: &blocking}
	return p
}

// ---- tasks

// observe notes the task of a unary payload (a Task or a SendMessageResponse).
func (s *suite10) observe(b []byte, op string) {
	if b == nil {
		return
	}
	switch op {
	case opSendMessage:
		if ev, err := v10.UnmarshalSendMessageResponse(b); err == nil {
			s.observeEvent(ev)
		}
	case opGetTask, opCancelTask:
		if t, err := v10.UnmarshalTask(b); err == nil {
			s.observeEvent(&t)
		}
	}
}

// observeEvent notes the task and state of an event.
func (s *suite10) observeEvent(ev a2a.Event) {
	var id string
	var state a2a.TaskState
	switch x := ev.(type) {
	case *a2a.Task:
		id, state = x.ID, x.Status.State
	case *a2a.TaskStatusUpdateEvent:
		id, state = x.TaskID, x.Status.State
	default:
		return
	}
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tasks[id]; !ok {
		s.taskOrder = append(s.taskOrder, id)
	}
	s.tasks[id] = state
}

// pbOf is a request's binary encoding for the gRPC suite (nil for the
// others, or when it cannot be encoded).
func (s *suite10) pbOf(b []byte, err error) []byte {
	if !s.grpc || err != nil {
		return nil
	}
	if b == nil {
		b = []byte{} // an empty message is a message
	}
	return b
}

// cleanup cancels the tasks the suite left running and deletes the push
// configs it created (and closes a gRPC connection).
func (s *suite10) cleanup(ctx context.Context) {
	if s.conn != nil {
		defer s.conn.Close()
	}
	if s.no != "" || s.iface.URL == "" {
		return
	}
	for _, pc := range s.pushes {
		if ctx.Err() != nil {
			return
		}
		s.do(ctx, s.pushConfigRequest(opDeletePushConfig, http.MethodDelete, pc[0], pc[1]))
	}
	s.mu.Lock()
	var ids []string
	for _, id := range s.taskOrder {
		if !s.tasks[id].Terminal() {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		s.do(ctx, s.cancelTask(id))
	}
}
