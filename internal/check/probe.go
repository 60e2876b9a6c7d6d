package check

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/internal/jsonrpc"
	"github.com/a2abridge/a2abridge/internal/sse"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// Defaults of [Options].
const (
	DefaultTimeout = 10 * time.Second
	DefaultText    = "hello"
)

// Limits on what a server can make the checker keep.
const (
	maxBody         = 256 << 10 // of one response body (or stream)
	maxEventSize    = 1 << 20   // of one SSE event
	maxStreamEvents = 2000      // events kept (and read) per stream
)

// Options configure a run.
type Options struct {
	// URL is the agent: a base URL (the card is looked up under
	// /.well-known/agent-card.json) or the card's own URL.
	URL string
	// Header is sent with every request (except the probes of
	// unauthenticated access); Token adds "Authorization: Bearer Token";
	// APIKey is placed where the card's apiKey security scheme says
	// (default: header X-API-Key).
	Header http.Header
	Token  string
	APIKey string
	// CredentialHosts lists other hosts (host or host:port) that may
	// receive Header, Token and APIKey. By default they go only to the
	// host (and port) of URL, so an interface URL of the card that points
	// elsewhere gets none.
	CredentialHosts []string
	// Timeout bounds each request (and each stream); 0 means DefaultTimeout.
	Timeout time.Duration
	// Text is the text of the messages of ordinary probes: something the
	// agent answers quickly (default "hello"). LongText keeps the agent
	// busy for a few seconds, for the probes that need a running task
	// (cancel, resubscribe); default: Text.
	Text, LongText string
	// Categories and Only select checks (see [Select]); empty: all.
	Categories, Only []string
	// Protocol ("0.3" or "1.0") and Binding (BindingJSONRPC or
	// BindingREST) restrict the run to the interfaces of that version or
	// binding; empty: every interface the card offers.
	Protocol, Binding string
	// Progress, if set, is called before each check (r is nil) and after it.
	Progress func(done, total int, c *Check, r *Result, took time.Duration)
	// HTTPClient sends the requests; nil: a client of its own. Its
	// redirect policy is replaced: redirects are recorded, not followed.
	HTTPClient *http.Client
	// Now returns the current time (tests); nil: time.Now.
	Now func() time.Time
}

// Exchange is one HTTP request made by a probe and what came back.
type Exchange struct {
	Seq   int    // 1, 2, … in the order sent
	Check string // id of the check that made it ("setup", "cleanup")

	Method    string // HTTP method
	URL       string
	RPCMethod string      // JSON-RPC method, if any
	ReqHeader http.Header // the headers that matter (credentials redacted)
	ReqBody   []byte

	Status int
	// GRPCStatus is the gRPC status of an exchange of the gRPC suite
	// ("OK", "NOT_FOUND"); Status is then the HTTP status it corresponds
	// to, and the bodies are the A2A 1.0 JSON of the messages.
	GRPCStatus string      `json:",omitempty"`
	RespHeader http.Header // the headers that matter
	RespBody   []byte      // up to maxBody bytes (for streams: the raw stream)
	Truncated  bool
	Err        string // transport error, timeout
	Duration   time.Duration

	// Streams (SSE).
	Stream bool
	Events []SSEEvent
	// Closed reports that the server ended the stream (EOF) rather than
	// the probe stopping or timing out; CloseDelay is the time from the
	// final event to the end of the stream.
	Closed     bool
	FinalSeen  bool
	CloseDelay time.Duration

	// Schema is the definition the response (or each stream event) must
	// satisfy ("" = none, e.g. a deliberately malformed request).
	Schema string
	// ReqID is the raw id of the JSON-RPC request (nil if none).
	ReqID jsontext.Value
	// Invalid marks a deliberately invalid request (malformed JSON, bad
	// params): its answer is judged by its own check, not by the schema.
	Invalid bool
	// Suite is the interface the exchange probed, as "1.0/HTTP+JSON"; ""
	// for A2A 0.3 JSON-RPC and the Agent Card.
	Suite string
}

// SSEEvent is one event of a recorded stream.
type SSEEvent struct {
	ID    string // the stream's last event id when the event was dispatched
	Event string // event type, "" for none
	Data  []byte
	At    time.Duration // since the request was sent
}

// RespContentType returns the response's Content-Type.
func (e *Exchange) RespContentType() string {
	if e == nil || e.RespHeader == nil {
		return ""
	}
	return e.RespHeader.Get("Content-Type")
}

// Probe runs requests against one endpoint for the checks, records them,
// and caches what several checks share.
type Probe struct {
	opts    Options
	hc      *http.Client
	timeout time.Duration
	now     func() time.Time

	// Discovery (set up before the checks run).
	cardURL    string // where the card was found
	cardSource string // "given", "well-known", "root", "legacy"
	cardBody   []byte
	card       map[string]any
	cardEx     *Exchange   // the exchange that returned the card
	cardTried  []*Exchange // every card request made
	cardErr    string
	endpoint   string // the JSON-RPC URL
	endpointEx *Exchange
	endpointNo string // why the endpoint cannot be used ("" = usable)
	endpointNA bool   // the endpoint is not applicable (no JSON-RPC interface)
	authNo     string // the endpoint refuses the checker's credentials ("" = it does not)

	ifaces        []Interface // every interface the card declares, in card order
	has10         bool        // the card has a supportedInterfaces member
	cardDecodeErr string      // why card.Unmarshal refused the card ("" = it did not)
	suites        map[string]*suite10

	mu       sync.Mutex
	seq      int
	nextID   int
	all      []*Exchange
	cur      []*Exchange
	curCheck string

	tasks     map[string]string // task id → last state seen
	taskOrder []string
	pushTasks []string // tasks the checker gave push configs

	memo map[string]*memoEntry
	hook *webhook
}

type memoEntry struct {
	v   any
	res *Result // set when the fixture could not be obtained
}

func newProbe(o Options) *Probe {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Text == "" {
		o.Text = DefaultText
	}
	if o.LongText == "" {
		o.LongText = o.Text
	}
	hc := &http.Client{}
	if o.HTTPClient != nil {
		c := *o.HTTPClient
		hc = &c
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Probe{opts: o, hc: hc, timeout: o.Timeout, now: now, tasks: map[string]string{}, memo: map[string]*memoEntry{}}
}

// cached runs f once per key; later calls return its value, or the Result
// (a skip or failure) it gave instead.
func cached[T any](p *Probe, key string, f func() (T, *Result)) (T, *Result) {
	if m, ok := p.memo[key]; ok {
		v, _ := m.v.(T)
		return v, m.res
	}
	v, res := f()
	p.memo[key] = &memoEntry{v: v, res: res}
	return v, res
}

// ---------------------------------------------------------------- recording

func (p *Probe) record(e *Exchange) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	e.Seq = p.seq
	e.Check = p.curCheck
	p.all = append(p.all, e)
	p.cur = append(p.cur, e)
}

func (p *Probe) begin(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.curCheck, p.cur = id, nil
}

func (p *Probe) current() []*Exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Exchange(nil), p.cur...)
}

// exchanges returns every exchange of A2A 0.3 JSON-RPC (and of the card)
// recorded so far.
func (p *Probe) exchanges() []*Exchange { return p.exchangesOf("") }

// exchangesOf returns every exchange of the suite recorded so far.
func (p *Probe) exchangesOf(suite string) []*Exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*Exchange
	for _, e := range p.all {
		if e.Suite == suite {
			out = append(out, e)
		}
	}
	return out
}

// ---------------------------------------------------------------- HTTP

type reqOpt struct {
	method      string // HTTP method; default POST
	url         string // default: the endpoint
	contentType string // default application/json (for POST)
	accept      string // default application/json
	noAuth      bool   // send no credentials
	lastEventID string
	rpcMethod   string
	schema      string
	reqID       jsontext.Value
	invalid     bool
	suite       string      // the interface probed ("" for A2A 0.3 JSON-RPC), see Exchange.Suite
	header      http.Header // more request headers (A2A-Version)
	// noExtensions leaves out the A2A-Extensions headers that activate
	// the extensions the card requires (requiredExtensions).
	noExtensions bool
}

// interesting are the headers kept in evidence.
var interesting = []string{"Content-Type", "Accept", "A2a-Version", "A2a-Extensions", "X-A2a-Extensions", "Allow", "Authorization", "Last-Event-Id", "Www-Authenticate", "Location", "Cache-Control", "X-Api-Key"}

func keep(h http.Header, redact bool) http.Header {
	out := http.Header{}
	for _, k := range interesting {
		if vs := h.Values(k); len(vs) > 0 {
			for _, v := range vs {
				if redact && (k == "Authorization" || k == "X-Api-Key") {
					if s, _, ok := strings.Cut(v, " "); ok && k == "Authorization" {
						v = s + " ***"
					} else {
						v = "***"
					}
				}
				out.Add(k, v)
			}
		}
	}
	return out
}

// newRequest builds a request with the probe's credentials (unless noAuth).
func (p *Probe) newRequest(ctx context.Context, body []byte, o reqOpt) (*http.Request, error) {
	m := o.method
	if m == "" {
		m = http.MethodPost
	}
	u := o.url
	if u == "" {
		u = p.endpoint
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, m, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		ct := o.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	acc := o.accept
	if acc == "" {
		acc = "application/json"
	}
	req.Header.Set("Accept", acc)
	if o.lastEventID != "" {
		req.Header.Set("Last-Event-ID", o.lastEventID)
	}
	for k, vs := range o.header {
		req.Header[k] = vs
	}
	if exts := p.requiredExtensions(); exts != "" && !o.noExtensions {
		// Every request activates what the card requires (A2A 1.0
		// §3.3.4), under the 1.0 name and the one of 0.3 clients, so that
		// the agent answers the checks at all.
		req.Header.Set("A2A-Extensions", exts)
		req.Header.Set("X-A2A-Extensions", exts)
	}
	if !o.noAuth {
		p.applyAuth(req)
	}
	return req, nil
}

// mayAuthenticate reports whether the checker's credentials may go to u:
// the host of Options.URL (its port included) or one of
// Options.CredentialHosts.
func (p *Probe) mayAuthenticate(u *url.URL) bool {
	host := strings.ToLower(u.Host)
	if base, err := url.Parse(p.opts.URL); err == nil && strings.ToLower(base.Host) == host {
		return true
	}
	for _, h := range p.opts.CredentialHosts {
		if h = strings.ToLower(h); h == host || h == strings.ToLower(u.Hostname()) && u.Port() == "" {
			return true
		}
	}
	return false
}

// apiKeyPlace is where the card's first apiKey security scheme puts the
// key (in: header, query or cookie; name), in the 0.3 shape (A2A 0.3.0
// §5.5.2.3: type, in, name) or the 1.0 one (A2A 1.0 §4.5.2:
// apiKeySecurityScheme{location, name}); header X-API-Key without one.
func (p *Probe) apiKeyPlace() (in, name string) {
	schemes, _ := p.card["securitySchemes"].(map[string]any)
	for _, s := range schemes {
		sm, _ := s.(map[string]any)
		if w, ok := sm["apiKeySecurityScheme"].(map[string]any); ok {
			in, name = str(w, "location"), str(w, "name")
		} else if str(sm, "type") == "apiKey" {
			in, name = str(sm, "in"), str(sm, "name")
		}
		if name != "" {
			return in, name
		}
	}
	return "header", "X-API-Key"
}

// requiredExtensions returns the URIs of the extensions the card
// declares required: true (capabilities.extensions, A2A 1.0 §4.4.4; the
// same in 0.3), comma-separated; "" when none (or no card).
func (p *Probe) requiredExtensions() string {
	caps, _ := p.card["capabilities"].(map[string]any)
	exts, _ := caps["extensions"].([]any)
	var out []string
	for _, x := range exts {
		m, _ := x.(map[string]any)
		if req, _ := m["required"].(bool); req {
			if u := strings.TrimSpace(str(m, "uri")); u != "" && !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	return strings.Join(out, ",")
}

func (p *Probe) applyAuth(req *http.Request) {
	if !p.mayAuthenticate(req.URL) {
		return
	}
	for k, vs := range p.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if p.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.opts.Token)
	}
	if p.opts.APIKey != "" {
		in, name := p.apiKeyPlace()
		switch in {
		case "query":
			q := req.URL.Query()
			q.Set(name, p.opts.APIKey)
			req.URL.RawQuery = q.Encode()
		case "cookie":
			req.AddCookie(&http.Cookie{Name: name, Value: p.opts.APIKey})
		default:
			req.Header.Set(name, p.opts.APIKey)
		}
	}
}

// exchange sends the request that body and o make and records it in e, and
// the response's status and headers; it returns the response, whose body
// the caller reads and closes, and the time the request went out. When
// the request cannot be made or sent it records the error in e and
// reports false.
func (p *Probe) exchange(ctx context.Context, e *Exchange, body []byte, o reqOpt) (*http.Response, time.Time, bool) {
	req, err := p.newRequest(ctx, body, o)
	if err != nil {
		e.Err = err.Error()
		return nil, time.Time{}, false
	}
	e.URL = req.URL.String()
	e.ReqHeader = keep(req.Header, true)
	start := time.Now()
	resp, err := p.hc.Do(req)
	if err != nil {
		e.Duration = time.Since(start)
		e.Err = transportErr(err, p.timeout)
		return nil, start, false
	}
	e.Status = resp.StatusCode
	e.RespHeader = keep(resp.Header, false)
	return resp, start, true
}

// readBody reads an answer's body into e, up to maxBody (Truncated beyond
// it), with the exchange's duration since start and a transport error.
func (p *Probe) readBody(e *Exchange, body io.Reader, start time.Time) {
	b, err := io.ReadAll(io.LimitReader(body, maxBody+1))
	e.Duration = time.Since(start)
	if len(b) > maxBody {
		b, e.Truncated = b[:maxBody], true
	}
	e.RespBody = b
	if err != nil {
		e.Err = transportErr(err, p.timeout)
	}
}

// do sends one request and records the exchange (body read up to maxBody).
func (p *Probe) do(ctx context.Context, body []byte, o reqOpt) *Exchange {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	e := &Exchange{Method: o.method, RPCMethod: o.rpcMethod, ReqBody: body, Schema: o.schema, ReqID: o.reqID, Invalid: o.invalid, Suite: o.suite}
	if e.Method == "" {
		e.Method = http.MethodPost
	}
	defer p.record(e)
	resp, start, ok := p.exchange(ctx, e, body, o)
	if !ok {
		return e
	}
	defer resp.Body.Close()
	p.readBody(e, resp.Body, start)
	return e
}

func transportErr(err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "deadline exceeded") {
		return fmt.Sprintf("no complete answer within %s", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// ---------------------------------------------------------------- JSON-RPC

// rpcResp is a parsed JSON-RPC response.
type rpcResp struct {
	ex        *Exchange
	obj       map[string]jsontext.Value // nil: not a JSON object
	ID        jsontext.Value
	HasID     bool
	Result    jsontext.Value
	HasResult bool
	Err       *rpcError
	parseErr  string // why the body is not a JSON-RPC response
}

type rpcError struct {
	Code    int
	CodeOK  bool // code present and an integer
	Message string
	Data    jsontext.Value
}

func (e *rpcError) String() string {
	if e == nil {
		return ""
	}
	s := strconv.Itoa(e.Code)
	if !e.CodeOK {
		s = "(no integer code)"
	}
	if e.Message != "" {
		s += " " + strconv.Quote(e.Message)
	}
	return s
}

var lenient = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// parseRPC parses a JSON-RPC response object.
func parseRPC(b []byte) *rpcResp {
	r := &rpcResp{}
	if len(bytes.TrimSpace(b)) == 0 {
		r.parseErr = "empty body"
		return r
	}
	var obj map[string]jsontext.Value
	if err := json.Unmarshal(b, &obj, lenient); err != nil || obj == nil {
		if v := jsontext.Value(bytes.TrimSpace(b)); v.IsValid() {
			r.parseErr = fmt.Sprintf("the body is a JSON %s, not a JSON-RPC response object", wirejson.KindName(v.Kind()))
		} else {
			r.parseErr = "the body is not JSON"
		}
		return r
	}
	r.obj = obj
	r.ID, r.HasID = obj["id"]
	r.Result, r.HasResult = obj["result"]
	if ev, ok := obj["error"]; ok {
		e := &rpcError{}
		var eo map[string]jsontext.Value
		if json.Unmarshal(ev, &eo, lenient) == nil {
			if c, ok := eo["code"]; ok && c.Kind() == '0' {
				if n, err := strconv.Atoi(string(c)); err == nil {
					e.Code, e.CodeOK = n, true
				}
			}
			if m, ok := eo["message"]; ok {
				_ = json.Unmarshal(m, &e.Message, lenient)
			}
			e.Data = eo["data"]
		}
		r.Err = e
	}
	return r
}

// resultObj decodes the result as a JSON object (nil if it is not one).
func (r *rpcResp) resultObj() map[string]any {
	if r == nil || !r.HasResult {
		return nil
	}
	m, _ := decode(r.Result).(map[string]any)
	return m
}

// code returns the error code, or 0 when the response is not an error.
func (r *rpcResp) code() int {
	if r == nil || r.Err == nil {
		return 0
	}
	return r.Err.Code
}

// describe summarizes the response for messages: "result task completed",
// "error -32001 "Task not found"", "HTTP 500 text/html".
func (r *rpcResp) describe() string {
	if r == nil {
		return "no response"
	}
	e := r.ex
	if e != nil && e.Err != "" && e.Status == 0 {
		return e.Err
	}
	var s string
	switch {
	case r.parseErr != "":
		s = r.parseErr
	case r.Err != nil && r.HasResult:
		s = "both result and error: error " + r.Err.String()
	case r.Err != nil:
		s = "error " + r.Err.String()
	case r.HasResult:
		s = "result " + summarizeResult(r.resultObj(), r.Result)
	default:
		s = "neither result nor error"
	}
	if e != nil && e.Status != 0 && e.Status != http.StatusOK {
		s = fmt.Sprintf("HTTP %d, %s", e.Status, s)
	}
	return s
}

func summarizeResult(m map[string]any, raw jsontext.Value) string {
	if m == nil {
		if len(raw) > 40 {
			return string(raw[:40]) + "…"
		}
		return string(raw)
	}
	switch k := str(m, "kind"); k {
	case "task":
		return "task " + str(m, "status", "state")
	case "status-update":
		f := ""
		if b, _ := m["final"].(bool); b {
			f = " (final)"
		}
		return "status-update " + str(m, "status", "state") + f
	case "":
		return "object"
	default:
		return k
	}
}

// decode parses JSON into any (numbers as float64); nil on error.
func decode(b []byte) any {
	var v any
	if err := json.Unmarshal(b, &v, lenient); err != nil {
		return nil
	}
	return v
}

// str returns the string at the path of nested objects, "" if absent.
func str(m map[string]any, path ...string) string {
	v := dig(m, path...)
	s, _ := v.(string)
	return s
}

func dig(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}

// rpcBody encodes a JSON-RPC request; id is raw JSON ("" omits it).
func rpcBody(id, method string, params any) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0",`)
	if id != "" {
		b.WriteString(`"id":` + id + `,`)
	}
	b.WriteString(`"method":`)
	m, _ := json.Marshal(method)
	b.Write(m)
	if params != nil {
		pb, err := json.Marshal(params, json.Deterministic(true))
		if err != nil {
			pb = []byte("{}")
		}
		b.WriteString(`,"params":`)
		b.Write(pb)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// responseSchema is the schema definition of a method's response.
var responseSchema = map[string]string{
	"message/send":                        "SendMessageResponse",
	"message/stream":                      "SendStreamingMessageResponse",
	"tasks/get":                           "GetTaskResponse",
	"tasks/cancel":                        "CancelTaskResponse",
	"tasks/resubscribe":                   "SendStreamingMessageResponse",
	"tasks/pushNotificationConfig/set":    "SetTaskPushNotificationConfigResponse",
	"tasks/pushNotificationConfig/get":    "GetTaskPushNotificationConfigResponse",
	"tasks/pushNotificationConfig/list":   "ListTaskPushNotificationConfigResponse",
	"tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfigResponse",
	"agent/getAuthenticatedExtendedCard":  "GetAuthenticatedExtendedCardResponse",
}

// call sends a JSON-RPC request with a fresh numeric id.
func (p *Probe) call(ctx context.Context, method string, params any) *rpcResp {
	return p.callOpt(ctx, method, params, reqOpt{})
}

func (p *Probe) newID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	return strconv.Itoa(p.nextID)
}

func (p *Probe) callOpt(ctx context.Context, method string, params any, o reqOpt) *rpcResp {
	id := string(o.reqID)
	if id == "" {
		id = p.newID()
	}
	o.reqID = jsontext.Value(id)
	o.rpcMethod = method
	if o.schema == "" {
		o.schema = responseSchema[method]
		if o.schema == "" {
			o.schema = "JSONRPCResponse"
		}
	}
	return p.send(ctx, rpcBody(id, method, params), o)
}

// send posts a body and parses the answer as a JSON-RPC response.
func (p *Probe) send(ctx context.Context, body []byte, o reqOpt) *rpcResp {
	e := p.do(ctx, body, o)
	r := parseRPC(e.RespBody)
	r.ex = e
	if r.obj != nil {
		p.observeResult(r.resultObj())
	}
	return r
}

// ---------------------------------------------------------------- streams

type streamOpt struct {
	lastEventID string
	noAuth      bool
	reqID       string
	// onEvent is called with each event as it arrives (index from 0); a
	// true return stops reading and closes the connection.
	onEvent func(i int, ev SSEEvent) bool
	// closeWait is how long to wait for the server to end the stream
	// after a final event (default 2 s).
	closeWait time.Duration
	// timeout bounds the stream (default and maximum: the probe's timeout).
	timeout time.Duration
}

// stream sends a 0.3 streaming request and records its events until the
// server ends the stream, onEvent says stop, closeWait passes after a
// final event, or the timeout.
func (p *Probe) stream(ctx context.Context, method string, params any, so streamOpt) *Exchange {
	id := so.reqID
	if id == "" {
		id = p.newID()
	}
	body := rpcBody(id, method, params)
	o := reqOpt{rpcMethod: method, schema: responseSchema[method], reqID: jsontext.Value(id), accept: "text/event-stream",
		lastEventID: so.lastEventID, noAuth: so.noAuth}
	return p.streamHTTP(ctx, body, o, so, func(ev SSEEvent) bool {
		r := parseRPC(ev.Data)
		res := r.resultObj()
		p.observeResult(res)
		return endsStream(r, res)
	})
}

// streamHTTP sends a streaming request (o.method, POST by default) and
// records its events until the server ends the stream, so.onEvent says
// stop, so.closeWait passes after the event for which ends is true (the
// final one), or the timeout.
func (p *Probe) streamHTTP(ctx context.Context, body []byte, o reqOpt, so streamOpt, ends func(SSEEvent) bool) *Exchange {
	limit, closeWait := p.streamLimits(so)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	method := o.method
	if method == "" {
		method = http.MethodPost
	}
	e := &Exchange{Method: method, RPCMethod: o.rpcMethod, ReqBody: body, Schema: o.schema, ReqID: o.reqID, Stream: true, Suite: o.suite}
	defer p.record(e)
	resp, start, ok := p.exchange(ctx, e, body, o)
	if !ok {
		return e
	}
	defer resp.Body.Close()
	raw := &capped{max: maxBody}
	if mt := mediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		// Not a stream: an ordinary (error) answer.
		p.readBody(e, resp.Body, start)
		e.Closed = true
		return e
	}
	defer func() {
		e.Duration = time.Since(start)
		e.RespBody, e.Truncated = raw.bytes()
	}()
	rd := sse.NewReaderSize(io.TeeReader(resp.Body, raw), maxEventSize)
	p.collect(ctx, e, start, limit, closeWait, so, ends, func() (SSEEvent, bool, error) {
		ev, err := rd.Next()
		return SSEEvent{ID: ev.ID, Event: ev.Event, Data: ev.Data}, false, err
	})
	return e
}

// streamLimits are how long a stream may last (the probe's timeout, or
// less) and how long the server has to end it after its final event.
func (p *Probe) streamLimits(so streamOpt) (limit, closeWait time.Duration) {
	closeWait = so.closeWait
	if closeWait <= 0 {
		closeWait = 2 * time.Second
	}
	limit = p.timeout
	if so.timeout > 0 && so.timeout < limit {
		limit = so.timeout
	}
	return limit, closeWait
}

// eventSource returns a stream's next event; last marks one after which
// nothing more is read (an error event). err io.EOF is the server's clean
// end of the stream, another err a broken one.
type eventSource func() (ev SSEEvent, last bool, err error)

// collect records in e the events next reads (on a goroutine of its own)
// until the server ends the stream, so.onEvent says stop, closeWait passes
// after the event for which ends is true (the final one), ctx ends (the
// stream's limit), or the checker's cap on events; start is when the
// request went out.
func (p *Probe) collect(ctx context.Context, e *Exchange, start time.Time, limit, closeWait time.Duration, so streamOpt, ends func(SSEEvent) bool, next eventSource) {
	type item struct {
		ev   SSEEvent
		last bool
		err  error
	}
	items := make(chan item)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			ev, last, err := next()
			select {
			case items <- item{ev, last, err}:
			case <-done:
				return
			}
			if err != nil || last {
				return
			}
		}
	}()
	var finalAt time.Time
	var closeTimer <-chan time.Time
	for {
		select {
		case it := <-items:
			if it.err != nil {
				if errors.Is(it.err, io.EOF) {
					e.Closed = true
					if e.FinalSeen {
						e.CloseDelay = time.Since(finalAt)
					}
				} else if ctx.Err() != nil {
					e.Err = fmt.Sprintf("stream still open after %s", limit)
				} else {
					e.Err = transportErr(it.err, p.timeout)
				}
				return
			}
			ev := it.ev
			ev.At = time.Since(start)
			e.Events = append(e.Events, ev)
			if len(e.Events) >= maxStreamEvents {
				e.Err = fmt.Sprintf("more than %d events; the checker stopped reading", maxStreamEvents)
				return
			}
			if ends(ev) && !e.FinalSeen {
				e.FinalSeen, finalAt = true, time.Now()
				closeTimer = time.After(closeWait)
			}
			if it.last || so.onEvent != nil && so.onEvent(len(e.Events)-1, ev) {
				return
			}
		case <-closeTimer:
			return
		case <-ctx.Done():
			if !e.FinalSeen {
				e.Err = fmt.Sprintf("stream still open after %s", limit)
			}
			return
		}
	}
}

// endsStream reports whether a stream event is the last one of an
// interaction: a final status-update, a Message, or an error.
func endsStream(r *rpcResp, res map[string]any) bool {
	if r.Err != nil {
		return true
	}
	switch str(res, "kind") {
	case "message":
		return true
	case "status-update":
		b, _ := res["final"].(bool)
		return b
	}
	return false
}

type capped struct {
	buf       bytes.Buffer
	max       int
	truncated bool
	mu        sync.Mutex
}

func (c *capped) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room < len(b) {
		c.buf.Write(b[:max(room, 0)])
		c.truncated = true
		return len(b), nil
	}
	return c.buf.Write(b)
}

func (c *capped) bytes() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes()), c.truncated
}

func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// ---------------------------------------------------------------- tasks

// observeResult notes the task and state of a result (Task, status-update).
func (p *Probe) observeResult(m map[string]any) {
	if m == nil {
		return
	}
	var id, state string
	switch str(m, "kind") {
	case "task":
		id, state = str(m, "id"), str(m, "status", "state")
	case "status-update", "artifact-update":
		id, state = str(m, "taskId"), str(m, "status", "state")
	default:
		return
	}
	if id == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.tasks[id]; !ok {
		p.taskOrder = append(p.taskOrder, id)
	}
	if state != "" {
		p.tasks[id] = state
	} else if _, ok := p.tasks[id]; !ok {
		p.tasks[id] = ""
	}
}

// cleanup cancels every task the run started that may still be running
// (or waiting for input), and deletes the push configs it set, so that no
// work (and no delivery to the checker's closed webhook) is left behind.
func (p *Probe) cleanup(ctx context.Context) {
	p.cleanupPush(ctx)
	p.mu.Lock()
	var ids []string
	for _, id := range p.taskOrder {
		if !terminal(p.tasks[id]) {
			ids = append(ids, id)
		}
	}
	p.mu.Unlock()
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		p.call(ctx, "tasks/cancel", map[string]any{"id": id})
	}
}

func (p *Probe) cleanupPush(ctx context.Context) {
	for _, id := range p.pushTasks {
		if ctx.Err() != nil {
			return
		}
		l := p.call(ctx, "tasks/pushNotificationConfig/list", map[string]any{"id": id})
		arr, _ := decode(l.Result).([]any)
		for _, c := range arr {
			m, _ := c.(map[string]any)
			_, cid, u := configOf(m)
			ours := u == fallbackWebhook || (p.hook != nil && strings.HasPrefix(u, p.hook.base+"/"))
			if ours && cid != "" {
				p.call(ctx, "tasks/pushNotificationConfig/delete", map[string]any{"id": id, "pushNotificationConfigId": cid})
			}
		}
	}
}

func terminal(state string) bool {
	switch state {
	case "completed", "canceled", "failed", "rejected":
		return true
	}
	return false
}

func interrupted(state string) bool {
	return state == "input-required" || state == "auth-required"
}

// ---------------------------------------------------------------- messages

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func textPart(s string) map[string]any { return map[string]any{"kind": "text", "text": s} }

// message builds a user message with the parts (and taskId/contextId when set).
func message(taskID, contextID string, parts ...map[string]any) map[string]any {
	ps := make([]any, len(parts))
	for i, pt := range parts {
		ps[i] = pt
	}
	m := map[string]any{"kind": "message", "role": "user", "messageId": newUUID(), "parts": ps}
	if taskID != "" {
		m["taskId"] = taskID
	}
	if contextID != "" {
		m["contextId"] = contextID
	}
	return m
}

// sendParams are message/send params; cfg may be nil.
func sendParams(msg map[string]any, cfg map[string]any) map[string]any {
	p := map[string]any{"message": msg}
	if cfg != nil {
		p["configuration"] = cfg
	}
	return p
}

// taskRef is what a probe knows of a task it obtained.
type taskRef struct {
	ID, ContextID, State string
	Resp                 *rpcResp
}

// asTask reads a Task result.
func asTask(r *rpcResp) (taskRef, bool) {
	m := r.resultObj()
	if str(m, "kind") != "task" || str(m, "id") == "" {
		return taskRef{Resp: r}, false
	}
	return taskRef{ID: str(m, "id"), ContextID: str(m, "contextId"), State: str(m, "status", "state"), Resp: r}, true
}

// send sends a message with the text and returns the answer.
func (p *Probe) sendText(ctx context.Context, text string, cfg map[string]any) *rpcResp {
	return p.call(ctx, "message/send", sendParams(message("", "", textPart(text)), cfg))
}

// getTask calls tasks/get.
func (p *Probe) getTask(ctx context.Context, id string, historyLength *int) *rpcResp {
	params := map[string]any{"id": id}
	if historyLength != nil {
		params["historyLength"] = *historyLength
	}
	return p.call(ctx, "tasks/get", params)
}

// blockingTask sends Text with blocking:true and returns the task.
func (p *Probe) blockingTask(ctx context.Context) (taskRef, *Result) {
	r := p.sendText(ctx, p.opts.Text, map[string]any{"blocking": true})
	t, ok := asTask(r)
	if !ok {
		if r.HasResult && str(r.resultObj(), "kind") == "message" {
			res := skip("the agent answers with a Message, not a Task, so there is no task to probe")
			return t, &res
		}
		res := skip("could not create a task: message/send answered %s", r.describe())
		return t, &res
	}
	return t, nil
}

// terminalTask returns a task in a terminal state: a blocking send of
// Text; a task that is not terminal yet is polled briefly, and canceled if
// it waits for input or keeps running. fresh skips the cache.
func (p *Probe) terminalTask(ctx context.Context, fresh bool) (taskRef, *Result) {
	get := func() (taskRef, *Result) {
		t, res := p.blockingTask(ctx)
		if res != nil {
			return t, res
		}
		deadline := time.Now().Add(min(p.timeout, 3*time.Second))
		for !terminal(t.State) && !interrupted(t.State) && time.Now().Before(deadline) {
			if !sleep(ctx, 200*time.Millisecond) {
				break
			}
			g := p.getTask(ctx, t.ID, nil)
			if gt, ok := asTask(g); ok {
				t.State = gt.State
			}
		}
		if !terminal(t.State) {
			c := p.call(ctx, "tasks/cancel", map[string]any{"id": t.ID})
			ct, ok := asTask(c)
			if !ok || !terminal(ct.State) {
				res := skip("could not obtain a task in a terminal state: the task stayed %s and tasks/cancel answered %s", t.State, c.describe())
				return t, &res
			}
			t.State = ct.State
		}
		return t, nil
	}
	if fresh {
		return get()
	}
	return cached(p, "terminal", get)
}

// runningTask starts a task with LongText (blocking:false) and returns it
// if it is still submitted or working.
func (p *Probe) runningTask(ctx context.Context) (taskRef, *Result) {
	r := p.sendText(ctx, p.opts.LongText, map[string]any{"blocking": false})
	t, ok := asTask(r)
	if !ok {
		res := skip("could not obtain a running task: message/send (blocking:false) answered %s", r.describe())
		return t, &res
	}
	if t.State != "submitted" && t.State != "working" {
		res := skip("could not obtain a running task: message/send (blocking:false) returned a task already %s (use --long-text with a message that keeps the agent busy)", t.State)
		return t, &res
	}
	// A task still "submitted" in the answer may be done by now.
	if g, ok := asTask(p.getTask(ctx, t.ID, nil)); ok && g.State != "submitted" && g.State != "working" {
		res := skip("could not obtain a running task: the task started with --long-text was already %s a moment later (use --long-text with a message that keeps the agent busy)", g.State)
		return t, &res
	}
	return t, nil
}

// interruptedTask sends Text and returns the task if the agent asks for
// input (input-required or auth-required).
func (p *Probe) interruptedTask(ctx context.Context) (taskRef, *Result) {
	t, res := p.blockingTask(ctx)
	if res != nil {
		return t, res
	}
	if !interrupted(t.State) {
		r := skip("the agent did not ask for input: the task is %s (an agent that answers with input-required is needed)", t.State)
		return t, &r
	}
	return t, nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// idsEqual compares raw JSON ids by value and type.
func idsEqual(a, b jsontext.Value) bool { return jsonrpc.SameID(a, b) }
