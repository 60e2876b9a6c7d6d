package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	_ "github.com/a2abridge/a2abridge/client/grpc" // remotes that offer gRPC only, or binding: grpc
	"github.com/a2abridge/a2abridge/internal/egress"
	"github.com/a2abridge/a2abridge/internal/h1"
	"github.com/a2abridge/a2abridge/internal/outsize"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	"github.com/a2abridge/a2abridge/internal/urlguard"
	"github.com/a2abridge/a2abridge/server"
)

// Agent is a server.Agent (and server.Canceler) that forwards each
// message to a remote A2A agent through the client package, and reports
// the remote task's events as its own. It is safe for concurrent use.
type Agent struct {
	cfg Config
	// wholeCall is Config.Timeout when the configuration set it: it
	// bounds an execution's whole exchange with the remote.
	wholeCall time.Duration
	where     string // the configured URL as shown (shownURL), for reasons and errors
	tr        *h1.Transport
	opts      client.Options
	policy    *egress.Policy // where requests may go (Config.AllowHosts)

	mu      sync.Mutex
	c       *client.Client // nil until a dial succeeds
	dialing *dialCall      // the dial in progress, if any
	closes  int            // how many times Close ran: a dial that saw another count keeps no gRPC connection

	// running maps our task ids to their remote tasks while an execution
	// knows one, so that Cancel finds the remote task even before (or
	// without) the task's metadata.
	running sync.Map // string → Ref
}

// dialCall is one attempt to resolve the remote's card, shared by the
// callers that wait for it.
type dialCall struct {
	done   chan struct{}
	closes int // Agent.closes when the dial began
	c      *client.Client
	err    error
}

var (
	_ server.Agent       = (*Agent)(nil)
	_ server.Canceler    = (*Agent)(nil)
	_ server.InlineAgent = (*Agent)(nil)
)

// maxIdleConns is how many idle connections to the remote the Agent
// keeps for reuse: as many calls as this can run at once on pooled
// connections. More concurrent calls open more connections, which are
// closed after use (with 64, 128 concurrent callers opened and closed
// about a thousand connections a second in the bench).
const maxIdleConns = 256

// New validates c (see Config.Validate; the error names every bad key)
// and returns an Agent with c's defaults applied and its own pool of
// connections. It does no network I/O: the remote's card is fetched at
// the first execution or RemoteCard call, and fetched again at the next
// one if that fails.
func New(c Config) (*Agent, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	wholeCall := c.Timeout
	c = c.withDefaults()
	policy, err := egress.New(c.URL, c.AllowHosts, "allow_hosts")
	if err != nil {
		return nil, err
	}
	fallback := http.DefaultTransport.(*http.Transport).Clone()
	fallback.MaxIdleConns = maxIdleConns
	fallback.MaxIdleConnsPerHost = maxIdleConns
	fallback.DialContext = policy.Dialer().DialContext
	tr := h1.New(fallback, maxIdleConns)
	tr.Control = policy.Control
	check := policy.After(c.CheckURL)
	binding, _ := bindingName(c.Binding)
	cr := c.Credentials
	a := &Agent{cfg: c, wholeCall: wholeCall, where: shownURL(c.URL), tr: tr, policy: policy}
	a.opts = client.Options{
		HTTPClient:  &http.Client{Transport: telemetry.Transport(urlguard.Transport(tr, check), "a2a")},
		DialControl: policy.Control,
		Protocol:    c.Protocol,
		Binding:     binding,
		// The Agent keeps the remote's card itself (RemoteCard); a fetch
		// after a failed one asks the remote, not a process-wide cache
		// that another client may have filled from the same URL.
		NoCardCache:  true,
		MaxCardBytes: c.MaxCardBytes,
		// One answer holds at most the task's output, its raw bytes in
		// base64, and the JSON around it.
		MaxResponseBytes: c.MaxOutput/3*4 + 1<<20,
	}
	if cr.BearerToken != "" || cr.APIKey != "" {
		h := http.Header{}
		if cr.BearerToken != "" {
			h.Set("Authorization", "Bearer "+cr.BearerToken)
		}
		if cr.APIKey != "" {
			h.Set(cr.APIKeyHeader, cr.APIKey)
		}
		// The client sends these only to the host of c.URL and removes
		// them before a redirect to another host.
		a.opts.Headers = func(context.Context, string) (http.Header, error) { return h.Clone(), nil }
	}
	return a, nil
}

// Inline implements server.InlineAgent: Execute returns as soon as our
// task is final (terminal, input-required or auth-required) and waits for
// nothing but the remote meanwhile, so a blocking message/send runs it on
// the request's goroutine instead of handing it to a worker and waiting
// (two goroutine hand-overs fewer per call). Streams and non-blocking
// sends are unaffected; tasks/cancel still cancels the execution.
func (a *Agent) Inline() bool { return true }

// Close releases the Agent's idle connections (and its gRPC connection,
// which a later call opens again; a gRPC connection that a dial in
// progress opens is closed too, and the callers waiting for that dial get
// an error). The Agent stays usable.
func (a *Agent) Close() error {
	a.tr.CloseIdleConnections()
	a.mu.Lock()
	a.closes++
	a.dialing = nil // a call from now on dials anew; the dial in progress closes what it opens
	c := a.c
	if c != nil && c.Interface().Binding == a2a.TransportGRPC {
		a.c = nil
	}
	a.mu.Unlock()
	if c != nil && c.Interface().Binding == a2a.TransportGRPC {
		return c.Close()
	}
	return nil
}

// Skill returns a default skill for the card of an agent configured
// without skills: id "remote", naming the remote's URL as shown
// everywhere (see Config.URL: its query is replaced by "…").
func (a *Agent) Skill() a2a.AgentSkill {
	return a2a.AgentSkill{
		ID:          "remote",
		Name:        "Remote A2A agent",
		Description: "Forwards each message to the A2A agent at " + a.where + " and streams its answer back.",
		Tags:        []string{"a2a", "remote", "bridge"},
	}
}

// RemoteCard returns the remote agent's card, fetched at the first call
// (bounded by Config.CardTimeout) and cached; a failed fetch is retried at
// the next call. Errors name the configured URL (its query replaced by
// "…"). Use DeriveCard to build
// the card under which the agent is served.
func (a *Agent) RemoteCard(ctx context.Context) (a2a.AgentCard, error) {
	c, err := a.client(ctx)
	if err != nil {
		return a2a.AgentCard{}, a.redacted(fmt.Errorf("remote A2A agent at %s: %w", a.where, err))
	}
	return c.Card(), nil
}

// client returns the cached client, or dials the remote (one dial at a
// time; callers that arrive meanwhile share its outcome). The dial is
// bounded by CardTimeout, not by ctx, which bounds only the wait.
func (a *Agent) client(ctx context.Context) (*client.Client, error) {
	a.mu.Lock()
	if a.c != nil {
		c := a.c
		a.mu.Unlock()
		return c, nil
	}
	d := a.dialing
	if d == nil {
		d = &dialCall{done: make(chan struct{}), closes: a.closes}
		a.dialing = d
		go a.dial(d, context.WithoutCancel(ctx))
	}
	a.mu.Unlock()
	select {
	case <-d.done:
		return d.c, d.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (a *Agent) dial(d *dialCall, ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.CardTimeout)
	defer cancel()
	c, err := client.Dial(ctx, a.cfg.URL, a.opts)
	if err == nil {
		// The interface the card offers is where every call goes: it must
		// be where this agent may send requests.
		iface := c.Interface()
		var cerr error
		if iface.Binding == a2a.TransportGRPC {
			cerr = a.policy.CheckGRPC(iface.URL)
		} else if u, perr := url.Parse(iface.URL); perr != nil {
			cerr = errors.New("its URL does not parse")
		} else {
			cerr = a.policy.CheckURL(u)
		}
		if cerr != nil {
			_ = c.Close()
			c, err = nil, fmt.Errorf("its card's %s interface: %w", iface.Binding, cerr)
		}
	}
	if err == nil && a.cfg.CheckURL != nil && c.Interface().Binding == a2a.TransportGRPC {
		// CheckURL confines HTTP requests; a gRPC connection would
		// escape it.
		_ = c.Close()
		c, err = nil, fmt.Errorf("its card offers gRPC only (at %s), which an agent confined to an allowlist does not call", c.Interface().URL)
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no Agent Card within card_timeout %s: %w", a.cfg.CardTimeout, err)
	} else if err != nil {
		err = fmt.Errorf("fetching its Agent Card: %w", err)
	}
	a.mu.Lock()
	if err == nil && d.closes != a.closes && c.Interface().Binding == a2a.TransportGRPC {
		// Close ran meanwhile: the connection it would have closed is this
		// one, which nothing would close later.
		_ = c.Close()
		c, err = nil, errors.New("the agent was closed while its remote was being dialed")
	}
	d.c, d.err = c, err
	if err == nil && d.closes == a.closes {
		a.c = c
	}
	if a.dialing == d {
		a.dialing = nil
	}
	a.mu.Unlock()
	close(d.done)
}

// Execute forwards req.Message to the remote agent: to the remote task
// recorded in the task's metadata (MetadataKey) when the task continues,
// else as a new message. When the remote card declares streaming it uses
// SendStreamingMessage and passes each event on as it arrives
// (status-updates with their messages, artifact-updates with append and
// lastChunk, agent messages), rewritten to this task's id and contextId;
// otherwise a blocking SendMessage (bounded by Config.Timeout; a task that
// comes back still working is polled with GetTask). A remote terminal
// state (completed, failed, canceled, rejected) becomes this task's; an
// input-required or auth-required one too, and Execute returns, so the
// task waits for the caller's next message. A remote answer that is a
// Message completes the task with it as the status message. As soon as
// the remote task id is known, a working status-update carries it as
// metadata (MetadataKey). Remote failures (unreachable, HTTP or A2A
// errors, malformed answers, timeouts) fail the task with a reason that
// names the remote's URL and the error; credentials never appear in it.
func (a *Agent) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	r := &run{a: a, t: t, ctx: ctx, ours: req.Task, out: taskOutput(req.Task)}
	ref, cont := RefOf(req.Task)
	if !cont && continues(req.Task) {
		return r.end(ctx, errors.New("cannot continue: the task's metadata does not say which remote task it is ("+MetadataKey+")"))
	}
	c, err := a.client(ctx)
	if err != nil {
		return r.end(ctx, err)
	}
	r.c, r.ref, r.cont = c, ref, cont
	if cont {
		a.running.Store(t.TaskID(), ref)
	}
	defer func() {
		// After a cancel, Cancel reads (and removes) the entry.
		if ctx.Err() == nil {
			a.running.Delete(t.TaskID())
		}
	}()
	p := a.params(req, ref)
	if !cont && req.Params.Message.ContextID != "" {
		p.Message.ContextID = r.earlierContext(ctx)
	}
	// The network calls of the execution, bounded as a whole by timeout
	// when the configuration set one.
	nctx := ctx
	if a.wholeCall > 0 {
		var cancel context.CancelFunc
		nctx, cancel = context.WithTimeoutCause(ctx, a.wholeCall,
			&limitError{fmt.Sprintf("no answer within timeout %s", a.wholeCall), context.DeadlineExceeded})
		defer cancel()
	}
	if c.Card().Capabilities.Streaming {
		err = r.stream(nctx, p)
	} else {
		err = r.send(nctx, p)
	}
	if cause := context.Cause(nctx); cause != nil && ctx.Err() == nil && err != nil && !errors.Is(err, errFinal) {
		err = cause // the whole-call bound ended it, whatever error the cut call saw
	}
	if errors.Is(err, client.ErrResponseTooLarge) {
		err = &limitError{reason: fmt.Sprintf("an answer of the remote passed the size that max_output allows (%d bytes of output; %d bytes per answer); the remote task was canceled",
			a.cfg.MaxOutput, a.opts.MaxResponseBytes), err: err}
	}
	var le *limitError
	if errors.As(err, &le) && r.ref.TaskID != "" && ctx.Err() == nil {
		// What the remote still does for this task is of no use: cancel
		// it, in the background, so that our task fails at once whether
		// the remote answers or not.
		go a.cancelRemote(context.WithoutCancel(ctx), r.ref)
	}
	return r.end(ctx, err)
}

// cancelRemote asks the remote to cancel ref's task, bounded by
// Config.Timeout (at most 10 s); the outcome is not waited for beyond
// that, and an error is dropped: the remote task ended, is gone, or the
// remote is unreachable.
func (a *Agent) cancelRemote(ctx context.Context, ref Ref) {
	c, err := a.client(ctx)
	if err != nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, min(a.cfg.Timeout, 10*time.Second))
	defer cancel()
	_, _ = c.CancelTask(cctx, a2a.CancelTaskRequest{ID: ref.TaskID})
}

// Cancel forwards tasks/cancel to the remote task of task (A2A 1.0
// §3.1.5; 0.3.0 §7.4), if one is known, bounded by Config.Timeout and
// ctx. A remote answer that the task is not cancelable or not found is
// ignored (it has ended, or is gone); other errors are returned (the
// engine logs them; the task is canceled regardless).
func (a *Agent) Cancel(ctx context.Context, task a2a.Task) error {
	ref, ok := RefOf(task)
	if v, found := a.running.LoadAndDelete(task.ID); found {
		ref, ok = v.(Ref), true
	}
	if !ok {
		return nil
	}
	c, err := a.client(ctx)
	if err != nil {
		return a.redacted(fmt.Errorf("remote A2A agent at %s: cancel of remote task %s: %w", a.where, ref.TaskID, err))
	}
	cctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	_, err = c.CancelTask(cctx, a2a.CancelTaskRequest{ID: ref.TaskID})
	err = a.timedOut(ctx, err)
	if err == nil || errors.Is(err, a2a.ErrTaskNotCancelable) || errors.Is(err, a2a.ErrTaskNotFound) {
		return nil
	}
	return a.redacted(fmt.Errorf("remote A2A agent at %s: cancel of remote task %s: %w", a.where, ref.TaskID, err))
}

// earlierContext returns the remote contextId of the latest earlier task
// in this task's context (of the same caller, see
// server.TaskUpdater.ContextHistory) that went to the same remote
// interface: a new task in a context that the caller reuses continues the
// remote conversation too. "" when there is none.
func (r *run) earlierContext(ctx context.Context) string {
	earlier, err := r.t.ContextHistory(ctx, 1)
	if err != nil || len(earlier) == 0 {
		return ""
	}
	if ref, ok := RefOf(earlier[len(earlier)-1]); ok && shownURL(ref.URL) == shownURL(r.c.URL()) {
		return ref.ContextID
	}
	return ""
}

// continues reports whether task has had an earlier turn (it is past its
// first execution, and has a user message before the last one): then its
// message must go to the same remote task.
func continues(task a2a.Task) bool {
	if task.Status.State == a2a.TaskStateSubmitted || task.Status.State == a2a.TaskStateUnspecified {
		// The task's first execution: whatever history it was created
		// with (the conversation bridge gives a participant's turn the
		// conversation so far), nothing went to the remote yet.
		return false
	}
	n := 0
	for i := range task.History {
		if task.History[i].Role == a2a.RoleUser {
			n++
		}
	}
	return n > 1
}

// params is what goes to the remote: the caller's message, under a
// message id derived from ours (a retry of the same message is the same
// message to the remote; two callers who pick the same id are not),
// addressed to ref's remote task, without our task references; the
// caller's accepted output modes and metadata; always blocking. The
// caller's push config is ours to serve, not the remote's.
func (a *Agent) params(req *server.Request, ref Ref) a2a.SendMessageRequest {
	m := req.Message
	m.MessageID = remoteMessageID(req.Task.ID, req.Message.MessageID)
	m.TaskID, m.ContextID = ref.TaskID, ref.ContextID
	m.ReferenceTaskIDs = nil
	m.Role = a2a.RoleUser
	blocking := true
	cfg := &a2a.SendMessageConfiguration{Blocking: &blocking}
	if rc := req.Params.Configuration; rc != nil {
		cfg.AcceptedOutputModes = rc.AcceptedOutputModes
	}
	return a2a.SendMessageRequest{Message: m, Configuration: cfg, Metadata: req.Params.Metadata}
}

// remoteMessageID derives the remote message id from our task id and
// message id: a UUID (version 8, RFC 9562 §5.8) of their SHA-256.
func remoteMessageID(taskID, messageID string) string {
	h := sha256.Sum256([]byte(taskID + "\x00" + messageID))
	h[6] = h[6]&0x0f | 0x80
	h[8] = h[8]&0x3f | 0x80
	s := hex.EncodeToString(h[:16])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// run is one execution.
type run struct {
	a    *Agent
	c    *client.Client
	t    *server.TaskUpdater
	ctx  context.Context // the execution's: our events are emitted with it
	ours a2a.Task        // our task as the execution started
	ref  Ref             // the remote task, once known
	cont bool            // the message went to an existing remote task
	out  int64           // output counted against Config.MaxOutput
}

// eventCost is what every answer of the remote (a stream event, a
// response) counts against max_output besides its content: one that adds
// nothing to our task (a snapshot, a repeated status) still cost reading.
const eventCost = 100

// charge counts n bytes the remote sent against max_output: a
// *limitError once they pass it.
func (r *run) charge(n int64) error {
	if r.out += n + eventCost; r.out > r.a.cfg.MaxOutput {
		return &limitError{reason: fmt.Sprintf("its output passed max_output (%d bytes); the rest was not kept and the remote task was canceled", r.a.cfg.MaxOutput)}
	}
	return nil
}

// taskOutput is the output a task holds already, counted as charge counts
// it: its artifacts, agent messages and status message.
func taskOutput(t a2a.Task) int64 {
	n := outsize.Message(t.Status.Message)
	for i := range t.History {
		if t.History[i].Role == a2a.RoleAgent {
			n += outsize.Message(&t.History[i]) + eventCost
		}
	}
	for i := range t.Artifacts {
		n += outsize.Artifact(&t.Artifacts[i]) + eventCost
	}
	return n
}

// limitError is a bound of the Config that ended an execution: the
// task fails with it, and the remote task is canceled.
// A time bound wraps context.DeadlineExceeded.
type limitError struct {
	reason string
	err    error
}

func (e *limitError) Error() string { return e.reason }
func (e *limitError) Unwrap() error { return e.err }

// errFinal ends event processing: our task reached a final state.
var errFinal = errors.New("final")

// end turns the outcome of an execution into its result: nil when the
// task reached its final state (or was closed by a cancel), ctx's error
// when it ended, and otherwise a failed task with a reason.
func (r *run) end(ctx context.Context, err error) error {
	switch {
	case err == nil, errors.Is(err, errFinal), errors.Is(err, server.ErrTaskClosed):
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, server.ErrInvalidEvent):
		return err // the engine has failed the task, and logs this
	}
	if ferr := r.t.Fail(ctx, r.a.reason(err)); ferr != nil && !errors.Is(ferr, server.ErrTaskClosed) {
		return ferr
	}
	return nil
}

// timedOut says which timeout ended a call whose own deadline (timeout),
// not ctx, expired.
func (a *Agent) timedOut(ctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within timeout %s: %w", a.cfg.Timeout, err)
	}
	return err
}

// reason is the status message of a task failed by err. URLs are shown
// as shownURL shows them.
func (a *Agent) reason(err error) string {
	var ae *a2a.Error
	var s string
	switch {
	case errors.As(err, &ae):
		s = fmt.Sprintf("The remote A2A agent at %s answered with error %d: %s", a.where, ae.Code, ae.Message)
	case errors.Is(err, context.DeadlineExceeded):
		s = fmt.Sprintf("The remote A2A agent at %s did not answer in time: %v", a.where, redactURLs(err))
	default:
		s = fmt.Sprintf("The remote A2A agent at %s failed: %v", a.where, redactURLs(err))
	}
	return a.scrub(s)
}

// redactURLs is err's text with the URL a transport error quotes shown
// as shownURL shows it (Validate refuses user info, but a redirect may
// carry some). err is not changed: one dial's error reaches every caller
// that waited for that dial.
func redactURLs(err error) string {
	s := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) && ue.URL != "" {
		shown := shownURL(ue.URL)
		s = strings.ReplaceAll(s, strconv.Quote(ue.URL), strconv.Quote(shown))
		s = strings.ReplaceAll(s, ue.URL, shown)
	}
	return s
}

// shownURL is raw as this package shows it (the card's default skill,
// failure reasons, errors, task metadata): without user info, with its
// query, which may hold a key (?key=…), replaced by "…", and without its
// fragment (never sent to a server, and a place for tokens too). A URL
// that does not parse is not shown at all.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	u.ForceQuery = false
	u.Fragment, u.RawFragment = "", ""
	if u.Host == "" && strings.HasPrefix(u.Path, "//") {
		// Without a host, a path of "//…" would read back as an
		// authority ("//:p@//@" would show "//@"): escape its second slash.
		u.RawPath = "/%2F" + strings.TrimPrefix(u.EscapedPath(), "//")
	}
	return u.String()
}

// scrub removes from s what shownURL hides of the URLs the agent uses
// (the configured one, and the remote interface's once known), wherever
// an error quotes them as text: "?QUERY" becomes "?…", "USERINFO@"
// disappears.
func (a *Agent) scrub(s string) string {
	urls := []string{a.cfg.URL}
	a.mu.Lock()
	if a.c != nil {
		urls = append(urls, a.c.URL())
	}
	a.mu.Unlock()
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		if u.RawQuery != "" {
			s = strings.ReplaceAll(s, "?"+u.RawQuery, "?…")
		}
		if u.User != nil {
			s = strings.ReplaceAll(s, u.User.String()+"@", "")
		}
	}
	return s
}

// redactedError is an error whose text went through Agent.scrub; it
// unwraps to the original, for errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redacted returns err with its text scrubbed (see scrub).
func (a *Agent) redacted(err error) error {
	return &redactedError{msg: a.scrub(redactURLs(err)), err: err}
}

// learn records the remote task of an event, and tells the task's
// metadata when it is new.
func (r *run) learn(ctx context.Context, taskID, contextID string) error {
	if taskID == "" || r.ref.TaskID == taskID && (contextID == "" || r.ref.ContextID == contextID) {
		return nil
	}
	if r.ref.TaskID != "" && r.ref.TaskID != taskID {
		return fmt.Errorf("the remote sent an event of task %q in the stream of its task %q", taskID, r.ref.TaskID)
	}
	r.ref = Ref{TaskID: taskID, ContextID: contextID, URL: shownURL(r.c.URL())}
	r.a.running.Store(r.t.TaskID(), r.ref)
	return r.t.Emit(r.ctx, &a2a.TaskStatusUpdateEvent{
		Status:   a2a.TaskStatus{State: a2a.TaskStateWorking},
		Metadata: map[string]any{MetadataKey: r.ref.metadata()},
	})
}

// ourMessage is m as a message of our task.
func (r *run) ourMessage(m *a2a.Message) *a2a.Message {
	if m == nil {
		return nil
	}
	c := *m
	c.TaskID, c.ContextID = r.t.TaskID(), r.t.ContextID()
	c.ReferenceTaskIDs = nil
	if c.Role == "" {
		c.Role = a2a.RoleAgent
	}
	return &c
}

// ourMetadata is a remote event's metadata without our own key.
func ourMetadata(md map[string]any) map[string]any {
	if _, ok := md[MetadataKey]; !ok {
		return md
	}
	md = maps.Clone(md)
	delete(md, MetadataKey)
	if len(md) == 0 {
		return nil
	}
	return md
}

// status applies a remote status; errFinal when it ends the execution.
func (r *run) status(ctx context.Context, st a2a.TaskStatus, md map[string]any) error {
	msg := r.ourMessage(st.Message)
	switch st.State {
	case a2a.TaskStateSubmitted:
		// We are past submitted already; keep a message it carries.
		if msg != nil {
			return r.t.Emit(r.ctx, msg)
		}
		return nil
	case a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired,
		a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected:
	default:
		return fmt.Errorf("the remote task %s is in state %q, which this bridge cannot map", r.ref.TaskID, st.State)
	}
	if err := r.t.Emit(r.ctx, &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: st.State, Message: msg}, Metadata: ourMetadata(md)}); err != nil {
		return err
	}
	if st.State.Final() {
		return errFinal
	}
	return nil
}

// snapshot applies a remote Task: its artifacts (whole, replacing ours of
// the same id, unless equal to those our task had when the execution
// started) and, if withStatus, its status.
func (r *run) snapshot(ctx context.Context, task *a2a.Task, withStatus bool) error {
	if err := r.learn(ctx, task.ID, task.ContextID); err != nil {
		return err
	}
	for _, art := range task.Artifacts {
		if r.hadArtifact(art) {
			continue
		}
		if err := r.t.Emit(r.ctx, &a2a.TaskArtifactUpdateEvent{Artifact: art, LastChunk: true}); err != nil {
			return err
		}
	}
	if !withStatus {
		return nil
	}
	return r.status(ctx, task.Status, task.Metadata)
}

func (r *run) hadArtifact(art a2a.Artifact) bool {
	for _, have := range r.ours.Artifacts {
		if have.ArtifactID == art.ArtifactID {
			return reflect.DeepEqual(have, art)
		}
	}
	return false
}

// answer completes our task with a remote Message that answers the
// message, when no remote task is involved; within a remote task, it is
// an agent message of ours.
func (r *run) answer(ctx context.Context, m *a2a.Message) error {
	if r.ref.TaskID == "" && m.TaskID == "" {
		if err := r.t.Emit(r.ctx, &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: r.ourMessage(m)}}); err != nil {
			return err
		}
		return errFinal
	}
	if err := r.learn(ctx, m.TaskID, m.ContextID); err != nil {
		return err
	}
	return r.t.Emit(r.ctx, r.ourMessage(m))
}

// send forwards the message with a blocking SendMessage and applies the
// result; a task that is not final yet is polled.
func (r *run) send(ctx context.Context, p a2a.SendMessageRequest) error {
	cctx, cancel := context.WithTimeout(ctx, r.a.cfg.Timeout)
	res, err := r.c.SendMessage(cctx, p)
	cancel()
	if err != nil {
		return r.a.timedOut(ctx, err)
	}
	if err := r.charge(outsize.Event(res)); err != nil {
		return err
	}
	if m, ok := res.(*a2a.Message); ok {
		if err := r.answer(ctx, m); err != nil {
			return err
		}
		return r.poll(ctx)
	}
	task := res.(*a2a.Task)
	if err := r.snapshot(ctx, task, task.Status.State.Final()); err != nil {
		return err
	}
	return r.poll(ctx)
}

// Polling of a remote task that a blocking send left running: the delay
// starts at pollMin and doubles up to pollMax.
const (
	pollMin = 100 * time.Millisecond
	pollMax = 5 * time.Second
)

// poll reads the remote task until it is final, and applies it. A
// remote task that shows no change (state, status time, history and
// artifacts) for idle_timeout fails ours, as a silent stream does.
func (r *run) poll(ctx context.Context) error {
	var last string
	changed := time.Now()
	for d := pollMin; ; d = min(2*d, pollMax) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
		cctx, cancel := context.WithTimeout(ctx, r.a.cfg.Timeout)
		task, err := r.c.GetTask(cctx, a2a.GetTaskRequest{ID: r.ref.TaskID})
		cancel()
		if err != nil {
			return r.a.timedOut(ctx, err)
		}
		if err := r.charge(outsize.Task(task)); err != nil {
			return err
		}
		if task.Status.State.Final() {
			return r.snapshot(ctx, task, true)
		}
		// A change is a new state, message or artifact (not a status time
		// that a remote may touch at every read).
		if now := fmt.Sprint(task.Status.State, len(task.History), len(task.Artifacts), outsize.Task(task)); now != last {
			last, changed = now, time.Now()
		} else if time.Since(changed) > r.a.cfg.IdleTimeout {
			return &limitError{fmt.Sprintf("the remote task %s showed no change for idle_timeout %s", r.ref.TaskID, r.a.cfg.IdleTimeout), context.DeadlineExceeded}
		}
	}
}

// maxResubscribes bounds the resubscriptions in a row that bring no
// progress (no event but Task snapshots) after streams that ended without
// a final state; resubscribeDelay is the first pause before one (doubled
// each time).
const (
	maxResubscribes  = 3
	resubscribeDelay = 200 * time.Millisecond
)

// stream forwards the message with SendStreamingMessage and passes its
// events on. A stream that ends without a final state (a server that ends
// it after an agent message, or after a snapshot) is followed by a
// SubscribeToTask of the remote task. The client itself resumes streams
// whose connection drops.
func (r *run) stream(ctx context.Context, p a2a.SendMessageRequest) (err error) {
	// A watchdog ends the stream when the remote sends nothing for too
	// long: first_event_timeout before its first event, idle_timeout
	// between two.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var got atomic.Bool
	cfg := r.a.cfg
	wd := time.AfterFunc(cfg.FirstEventTimeout, func() {
		if got.Load() {
			stop(&limitError{fmt.Sprintf("the remote sent no event for idle_timeout %s", cfg.IdleTimeout), context.DeadlineExceeded})
			return
		}
		stop(&limitError{fmt.Sprintf("the remote sent no event within first_event_timeout %s", cfg.FirstEventTimeout), context.DeadlineExceeded})
	})
	defer wd.Stop()
	defer func() {
		var le *limitError
		if cause := context.Cause(ctx); err != nil && !errors.Is(err, errFinal) && errors.As(cause, &le) {
			err = cause // the watchdog cut the stream: say why
		}
	}()
	seq := r.c.SendStreamingMessage(ctx, p)
	lastID := ""
	subscribed := false
	for idle := 0; ; {
		progress := false
		first := true
		for ev, err := range seq {
			if err != nil {
				return err
			}
			got.Store(true)
			wd.Reset(cfg.IdleTimeout)
			if err := r.charge(outsize.Event(ev.Event)); err != nil {
				return err
			}
			if ev.ID != "" {
				lastID = ev.ID
			}
			if _, snap := ev.Event.(*a2a.Task); !snap {
				progress = true
			}
			if err := r.event(ctx, ev, first, subscribed); err != nil {
				return err
			}
			first = false
		}
		if r.ref.TaskID == "" {
			return errors.New("the remote ended its stream without an answer")
		}
		if progress {
			idle = 0
		} else if idle++; idle > maxResubscribes {
			return fmt.Errorf("the remote ended the stream of its task %s before the task reached a final state", r.ref.TaskID)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(resubscribeDelay << idle):
		}
		seq = r.c.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: r.ref.TaskID}, lastID)
		subscribed = true
	}
}

// event passes on one stream event; errFinal ends the execution.
func (r *run) event(ctx context.Context, ev client.StreamEvent, first, subscribed bool) error {
	switch e := ev.Event.(type) {
	case *a2a.Task:
		// The Task that opens the stream of a continued task may be the
		// stored task as it was before our message (still input-required
		// with the previous question): only a terminal state of it counts.
		// Any other snapshot is current, but only its final state matters
		// (we are working already; its messages were seen, or are lost
		// anyway). Its artifacts are applied whole, but for those our task
		// already had.
		stale := r.cont && first && !ev.Resumed && !subscribed
		st := e.Status.State
		return r.snapshot(ctx, e, st.Terminal() || !stale && st.Interrupted())
	case *a2a.TaskStatusUpdateEvent:
		if err := r.learn(ctx, e.TaskID, e.ContextID); err != nil {
			return err
		}
		return r.status(ctx, e.Status, e.Metadata)
	case *a2a.TaskArtifactUpdateEvent:
		if err := r.learn(ctx, e.TaskID, e.ContextID); err != nil {
			return err
		}
		return r.t.Emit(r.ctx, &a2a.TaskArtifactUpdateEvent{Artifact: e.Artifact, Append: e.Append, LastChunk: e.LastChunk, Metadata: ourMetadata(e.Metadata)})
	case *a2a.Message:
		return r.answer(ctx, e)
	}
	return fmt.Errorf("the remote sent an event of unexpected type %T", ev.Event)
}
