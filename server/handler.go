package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/a2abridge/a2abridge/internal/binding/edge"
	"github.com/a2abridge/a2abridge/internal/engine"

	"github.com/a2abridge/a2abridge/internal/extension"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	taskfold "github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/internal/record"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	"github.com/a2abridge/a2abridge/store"
)

// AgentHandler answers the A2A operations for one agent, independent of any
// transport: a transport decodes a request, calls one AgentHandler method and
// encodes the result. Errors returned are *a2a.Error for protocol errors;
// any other error is an internal failure (-32603 on the wire). Tasks it
// returns share their slices and maps with the engine and the store: they
// are to be read (encoded), not modified.
type AgentHandler struct {
	e *engine.Engine
	// hooks are what the engine calls of the agent besides its
	// executions (its Canceler, its CancelMessenger).
	hooks *engine.Hooks
	name  string
	agent Agent
	card  a2a.AgentCard
	opts  HandlerOptions
	// required are the URIs of the extensions the card declares
	// required: true (A2A 1.0 §3.3.4), nil when none.
	required []string
	// in is what the card accepts in message parts (A2A 1.0 §3.1.1).
	in inputModes
	// ops answers the operations: the interceptors around this handler's
	// own implementation (engineHandler).
	ops binding.Handler
}

// HandlerOptions configure an AgentHandler. The zero value serves the agent
// without authentication.
type HandlerOptions struct {
	// Auth authenticates every request (any of its schemes; A2A 0.3.0
	// §4). Empty: no authentication. When set, the card's securitySchemes
	// and security are generated from it, each task belongs to the
	// principal that created it, and other principals get -32001 for it.
	Auth auth.Set
	// CardRequiresAuth protects the Agent Card endpoints too (by default
	// they are public).
	CardRequiresAuth bool
	// ExtendedCard, if set (with Auth), is returned by
	// agent/getAuthenticatedExtendedCard to authenticated callers; the
	// public card then sets supportsAuthenticatedExtendedCard. Its url and
	// security fields are taken from the public card.
	ExtendedCard *a2a.AgentCard
	// Methods are JSON-RPC methods of one's own that the agent's JSON-RPC
	// endpoint answers beside the A2A methods, by name (extension methods,
	// A2A 0.3.0 §3.5.5; declare them in the card as an extension, A2A 1.0
	// §4.6). They are served whatever A2A-Version a request names (they
	// are not A2A methods of either version), in batches when they answer
	// with a result, authenticated as every A2A method is (Auth; the
	// principal is in the Method's context). They are not served over
	// HTTP+JSON. A name must be "category/action" (it contains a "/",
	// not first or last) and may neither be an A2A method nor start with
	// "rpc." (reserved by JSON-RPC 2.0 §4), "message/", "tasks/" or
	// "agent/" (the A2A 0.3 categories): NewHandler panics on such a
	// name, and on a nil Method. nil: none. The map is copied.
	Methods map[string]Method
	// NoPush turns push notifications off for this agent although the
	// engine delivers them (EngineOptions.Push): the card says
	// capabilities.pushNotifications false, and the push notification
	// config methods (A2A 1.0 §3.1.7-§3.1.10; 0.3.0 §7.5-§7.8) and a
	// message carrying a pushNotificationConfig answer -32003
	// (PushNotificationNotSupported), before any task is looked up. The
	// conversation bridge (bridge/conversation) sets it.
	NoPush bool
	// RevealPushSecrets makes GetTaskPushNotificationConfig and
	// ListTaskPushNotificationConfigs (A2A 1.0 §3.1.8, §3.1.9; 0.3.0
	// §7.6, §7.7) return a config's token and authentication credentials
	// as they were set. By default they are returned empty (the schemes
	// stay): they are secrets the webhook checks, and a caller who can
	// read a task's configs need not be one who may learn them. The
	// stored configs keep them for delivery either way, and
	// CreateTaskPushNotificationConfig answers the config as set.
	RevealPushSecrets bool
	// Attachments, if set, stores the files clients send by value and
	// replaces them by URLs before anything else sees the message (see
	// AttachmentOptions; serve them with NewAttachmentHandler). The
	// engine's store must implement store.AttachmentStore: NewHandler
	// panics otherwise. nil: files by value are kept in the message.
	Attachments *AttachmentOptions
	// Unlisted leaves the agent out of the list of agents that a
	// request for an unknown agent is answered with (HTTP 404): an agent
	// whose URL is a capability (such as a pair's side, whose name holds
	// random bits) is reached only by whoever was given it.
	Unlisted bool
	// Retired marks an agent that was removed but whose tasks stay
	// readable (serve's admin API keeps such a tombstone): GetTask,
	// ListTasks, CancelTask, SubscribeToTask, the push notification
	// config methods and the card are served as usual, but a new message
	// (SendMessage and SendStreamingMessage, A2A 1.0 §3.1.1-§3.1.2;
	// message/send and message/stream in 0.3; every binding), once the
	// caller is authenticated, is answered as a Host answers an unknown
	// agent: HTTP 404 with the hosted agents (Host.ServeHTTP), and
	// nothing is stored. A JSON-RPC batch that holds such a message is
	// answered so as a whole. A Host does not list retired agents in
	// that 404.
	Retired bool
	// Interceptors wrap the agent's operations (see Interceptor), the
	// first outermost: every call of every binding, and a Go caller's of
	// the AgentHandler's methods, goes through them. They run after
	// authentication (the principal is in ctx: auth.FromContext) and
	// before any check of the request. NewHandler panics on one that
	// returns a nil binding.Handler. nil: none.
	Interceptors []Interceptor
	// Limiter, if set, admits or refuses each request to the agent after
	// authentication (see Limiter): a refused one is answered
	// a2a.ErrRateLimited (-32029) with Retry-After: HTTP 429 on JSON-RPC
	// and HTTP+JSON, the card and the routes behind Authenticated, gRPC
	// RESOURCE_EXHAUSTED; nothing is stored (over HTTP, the body is not
	// read). nil: no limit.
	Limiter Limiter
}

// newHooks returns what the engine calls of agent besides its
// executions: its Canceler and CancelMessenger, if it has them.
func newHooks(name string, agent Agent) *engine.Hooks {
	hk := &engine.Hooks{Name: name}
	if c, ok := agent.(Canceler); ok {
		hk.Cancel = c.Cancel
	}
	if cm, ok := agent.(CancelMessenger); ok {
		hk.CancelMessage = func(task a2a.Task) *a2a.Message { return cancelMessage(cm, task) }
	}
	return hk
}

// start starts the agent's execution of req on the task info (with the
// task's lock held: engine.StartLocked); with inline, *inline is set to
// the function that runs it instead.
func (h *AgentHandler) start(info store.TaskInfo, req *Request, inline *func()) {
	req.h, req.owner, req.created = h, info.Owner, info.Created
	h.e.StartLocked(h.hooks, info, req.span, (*agentRun)(req), inline)
}

// agentRun is a Request as the engine runs it (engine.Runner): the
// request is already made for the execution, so that handing it over
// allocates nothing more.
type agentRun Request

// Run runs the agent's Execute with a TaskUpdater over x.
func (r *agentRun) Run(ctx context.Context, x *engine.Execution) error {
	req := (*Request)(r)
	h := req.h
	t := &TaskUpdater{e: h.e, agent: h.name, owner: req.owner, created: req.created, taskID: x.TaskID(), ctxID: x.ContextID(), x: x}
	if h.opts.Attachments != nil {
		t.files = &fileSink{h: h, base: req.attachBase}
	}
	return h.agent.Execute(ctx, req, t)
}

// NewHandler serves agent under name (the task namespace: tasks created
// through this handler are invisible to other handlers) on engine e, with
// card as its Agent Card (A2A 0.3.0 §5.5). Missing ProtocolVersion and
// PreferredTransport are set to 0.3.0 and JSONRPC; capabilities
// (pushNotifications), securitySchemes and security follow e and opts;
// capabilities.extendedAgentCard (0.3: supportsAuthenticatedExtendedCard)
// is set when opts configures an extended card (ExtendedCard with Auth)
// and kept when card declares it. It panics on a
// name in opts.Methods that cannot be served (see HandlerOptions.Methods).
//
// The card is also what messages are held to, before anything is stored
// (SendMessage and SendStreamingMessage, new tasks and continuations): a
// part whose media type matches neither card.DefaultInputModes nor any
// skill's InputModes is ContentTypeNotSupportedError (-32005, A2A 1.0
// §3.1.1; an empty DefaultInputModes or "*/*" accepts everything; a file
// part without a media type is not refused), and a message whose context
// does not activate every extension of card.Capabilities.Extensions with
// Required set is ExtensionSupportRequiredError (-32008, A2A 1.0 §3.3.4;
// see WithExtensions, Request.Extensions). The other operations and the
// card need no extension.
func NewHandler(e *Engine, name string, agent Agent, card a2a.AgentCard, opts HandlerOptions) *AgentHandler {
	if card.ProtocolVersion == "" {
		card.ProtocolVersion = a2a.ProtocolVersion
	}
	if card.PreferredTransport == "" {
		card.PreferredTransport = a2a.TransportJSONRPC
	}
	card.Capabilities.PushNotifications = e.PushEnabled() && !opts.NoPush
	if !slices.ContainsFunc(card.Capabilities.Extensions, func(x a2a.AgentExtension) bool { return x.URI == a2a.ExtensionEventLog }) {
		card.Capabilities.Extensions = append(slices.Clip(card.Capabilities.Extensions), a2a.AgentExtension{URI: a2a.ExtensionEventLog,
			Description: "SSE event ids are the task's event sequence numbers (1, 2, 3…); tasks/resubscribe (0.3) and SubscribeToTask (1.0, JSON-RPC and HTTP+JSON) replay every event after Last-Event-ID, also after a restart and on a terminal task; a repeated messageId is not processed twice. Over gRPC, a stream whose request activates this extension (a2a-extensions metadata) carries each event's sequence number in field 1048576 (varint) of its StreamResponse, and SubscribeToTask replays after the last-event-id metadata."})
	}
	if len(opts.Auth) > 0 {
		card.SecuritySchemes, card.Security = opts.Auth.CardSecurity()
	}
	// A card may declare the extended card without one being configured:
	// GetExtendedAgentCard then answers ExtendedAgentCardNotConfiguredError
	// (A2A 1.0 §3.3.4).
	card.Capabilities.ExtendedAgentCard = card.Capabilities.ExtendedAgentCard || card.SupportsAuthenticatedExtendedCard ||
		(opts.ExtendedCard != nil && len(opts.Auth) > 0)
	card.SupportsAuthenticatedExtendedCard = card.Capabilities.ExtendedAgentCard
	opts.Methods = checkMethods(opts.Methods)
	if opts.Attachments != nil {
		if _, ok := e.e.Store().(store.AttachmentStore); !ok {
			panic(fmt.Sprintf("server: NewHandler %q: HandlerOptions.Attachments needs a store that implements store.AttachmentStore", name))
		}
		a := *opts.Attachments
		opts.Attachments = &a
	}
	h := &AgentHandler{e: e.e, name: name, hooks: newHooks(name, agent), agent: agent, card: card, opts: opts, required: requiredExtensions(card), in: newInputModes(card)}
	h.opts.Interceptors = slices.Clone(opts.Interceptors)
	h.ops = chain((*engineHandler)(h), h.opts.Interceptors)
	return h
}

// Name returns the agent's name.
func (h *AgentHandler) Name() string { return h.name }

// Card returns the agent's card as configured (URL as given).
func (h *AgentHandler) Card() a2a.AgentCard { return h.card }

// load returns a task of this agent, or -32001.
func (h *AgentHandler) load(ctx context.Context, id string) (store.TaskInfo, error) {
	if h.e.Telemetry() != nil {
		telemetry.CallFrom(ctx).SetTask(id)
	}
	if id == "" {
		return store.TaskInfo{}, a2a.ErrTaskNotFound
	}
	owner, ok := h.owner(ctx)
	if !ok {
		return store.TaskInfo{}, a2a.ErrUnauthenticated
	}
	info, err := h.e.Store().Task(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (info.Agent != h.name || info.Owner != owner)) {
		// Another agent's or another principal's task: no hint that it exists.
		return store.TaskInfo{}, a2a.ErrTaskNotFound.WithMessage("Task not found: %s", id)
	}
	if err == nil && h.e.Telemetry().Tracing() {
		// The request's span links to the trace of the task's execution
		// (wherever it ran: the store keeps its context).
		telemetry.CallFrom(ctx).LinkTask(info.Trace)
	}
	return info, err
}

// owner is the owner key of the calling principal: "" without
// authentication, else "<scheme>/<issuer>/<subject>" (subjects of
// different schemes or issuers never collide). ok is false when the agent
// requires authentication and the request carries no principal (a
// transport that skipped authentication): nothing may be done then.
//
// A tenant (A2A 1.0 §3.2, the request's tenant field or REST path prefix,
// put in ctx by withTenant) scopes the key further: t"<tenant>"/ before
// it, so a task of one tenant is not found from another.
func (h *AgentHandler) owner(ctx context.Context) (key string, ok bool) {
	tenant, _ := ctx.Value(tenantKey{}).(string)
	if tenant != "" {
		key = "t" + strconv.Quote(tenant) + "/"
	}
	if len(h.opts.Auth) == 0 {
		return key, true
	}
	p, found := auth.FromContext(ctx)
	if !found || p == nil {
		return "", false
	}
	iss, _ := p.Claims["iss"].(string)
	return key + fmt.Sprintf("%q/%q/%q", p.Scheme, iss, p.Subject), true
}

type tenantKey struct{}

// withTenant scopes ctx to a tenant ("" is the default tenant).
func withTenant(ctx context.Context, tenant string) context.Context {
	if tenant == "" {
		if old, _ := ctx.Value(tenantKey{}).(string); old == "" {
			return ctx
		}
	}
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// messageKey scopes a messageId to the caller, so that one principal can
// neither claim nor probe another's message ids.
func (h *AgentHandler) messageKey(ctx context.Context, messageID string) string {
	o, _ := h.owner(ctx)
	if o == "" {
		return messageID
	}
	return o + "\x00" + messageID
}

// outputModesOK reports whether the client's accepted output modes
// intersect the agent's (wildcards "*/*" and "type/*" on either side).
func (h *AgentHandler) outputModesOK(accepted []string) bool {
	if len(accepted) == 0 || len(h.card.DefaultOutputModes) == 0 {
		return true
	}
	for _, a := range accepted {
		for _, o := range h.card.DefaultOutputModes {
			if mediaMatch(a, o) {
				return true
			}
		}
	}
	return false
}

func mediaMatch(a, b string) bool {
	a, b = strings.ToLower(strings.TrimSpace(a)), strings.ToLower(strings.TrimSpace(b))
	if a == b || a == "*/*" || b == "*/*" || a == "*" || b == "*" {
		return true
	}
	at, _, _ := strings.Cut(a, "/")
	bt, _, _ := strings.Cut(b, "/")
	return (strings.HasSuffix(a, "/*") || strings.HasSuffix(b, "/*")) && at == bt
}

// taskStored reports whether task id may be stored, after its create
// failed: false only when the store says it is not (a failed write whose
// outcome is unknown may have been durable all the same). It runs even
// when ctx has ended.
func (h *AgentHandler) taskStored(ctx context.Context, id string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropAttachmentsTimeout)
	defer cancel()
	_, err := h.e.Store().Task(ctx, id)
	return !errors.Is(err, store.ErrNotFound)
}

// messageStored reports whether the message with key msgKey may have
// been accepted for task taskID, after the continuation failed: false
// only when the store indexes it for no task or another one. It runs
// even when ctx has ended.
func (h *AgentHandler) messageStored(ctx context.Context, msgKey, taskID string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropAttachmentsTimeout)
	defer cancel()
	id, err := h.e.Store().MessageTask(ctx, h.name, msgKey)
	return err != nil || id == taskID
}

func (h *AgentHandler) retryDuplicate(ctx context.Context, msg *a2a.Message) (store.TaskInfo, error) {
	id, err := h.e.Store().MessageTask(ctx, h.name, h.messageKey(ctx, msg.MessageID))
	if err != nil {
		return store.TaskInfo{}, err
	}
	return h.duplicate(ctx, msg, id)
}

var errReusedMessageID = a2a.InvalidParams("/params/message/messageId", "messageId was already used for a different message")

// duplicate answers a message whose id was already accepted for task
// dupID: a retry of the same message gets the task; anything else -32602.
func (h *AgentHandler) duplicate(ctx context.Context, msg *a2a.Message, dupID string) (store.TaskInfo, error) {
	if msg.TaskID != "" && msg.TaskID != dupID {
		return store.TaskInfo{}, errReusedMessageID
	}
	info, err := h.load(ctx, dupID)
	if errors.Is(err, a2a.ErrTaskNotFound) {
		return info, errReusedMessageID // another principal's message: say nothing more
	}
	if err != nil {
		return info, err
	}
	for i := range info.Task.History {
		if prev := &info.Task.History[i]; prev.MessageID == msg.MessageID {
			if !sameMessage(msg, prev) && !h.sameAttachments(ctx, msg, prev) {
				return store.TaskInfo{}, errReusedMessageID
			}
			return info, nil
		}
	}
	return info, nil
}

// sameMessage reports whether incoming is a retry of stored: equal content,
// and ids that are either absent or the stored ones. Content is compared in
// the stores' record format, which writes equal domain values as equal
// bytes (map keys sorted, a nil map as an empty one, numbers as their
// JSON text), whatever version the two messages came in.
func sameMessage(incoming, stored *a2a.Message) bool {
	if (incoming.ContextID != "" && incoming.ContextID != stored.ContextID) ||
		(incoming.TaskID != "" && incoming.TaskID != stored.TaskID) {
		return false
	}
	a, b := *incoming, *stored
	a.ContextID, a.TaskID, b.ContextID, b.TaskID = "", "", "", ""
	ea, err1 := record.AppendEvent(nil, &a)
	eb, err2 := record.AppendEvent(nil, &b)
	return err1 == nil && err2 == nil && bytes.Equal(ea, eb)
}

// respond asks r for a direct answer to msg (with its contextId, no task
// yet), and checks it: nil when r leaves the message to the task path.
// An *a2a.Error of the agent's is returned as is, but for -32029 (which
// says that nothing ran); another error, a panic or an invalid message is
// returned as a plain error (-32603 on the wire, logged by the transport).
func (h *AgentHandler) respond(ctx context.Context, r MessageResponder, msg a2a.Message, p *a2a.SendMessageRequest, exts []string, ec *extension.Call) (out *a2a.Message, err error) {
	req := &Request{Message: msg, Params: *p, Principal: principal(ctx), Extensions: exts, ext: ec}
	panicked := func() (panicked bool) {
		defer func() {
			if v := recover(); v != nil {
				out, err, panicked = nil, fmt.Errorf("agent %q panicked in Respond: %v", h.name, v), true
			}
		}()
		out, err = r.Respond(ctx, req)
		return false
	}()
	if err != nil {
		var ae *a2a.Error
		if !panicked && errors.As(err, &ae) && ae.Code == a2a.CodeRateLimited {
			// -32029 says the request was refused unread, and clients
			// repeat it: Respond ran, so it is the agent's failure (an
			// agent passing on another's refusal, say).
			return nil, fmt.Errorf("agent %q: Respond: %w", h.name, errors.New(ae.Message))
		}
		if panicked || errors.As(err, &ae) {
			return nil, err
		}
		return nil, fmt.Errorf("agent %q: Respond: %w", h.name, err)
	}
	if out == nil {
		return nil, nil
	}
	c := *out
	if c.MessageID == "" {
		c.MessageID = a2a.NewID()
	}
	if c.Role == "" {
		c.Role = a2a.RoleAgent
	}
	if c.ContextID == "" {
		c.ContextID = msg.ContextID
	}
	bad := ""
	switch {
	case c.Role != a2a.RoleAgent:
		bad = fmt.Sprintf("role %q (an answer is the agent's)", c.Role)
	case c.TaskID != "":
		bad = fmt.Sprintf("taskId %q (a direct answer belongs to no task)", c.TaskID)
	case c.ContextID != msg.ContextID:
		bad = fmt.Sprintf("contextId %q, not the request's %q", c.ContextID, msg.ContextID)
	case len(c.Parts) == 0:
		bad = "no parts"
	default:
		if err := a2a.ValidateEvent(&c); err != nil {
			bad = err.Error()
		} else if err := a2a.ValidateValues(&c); err != nil {
			bad = err.Error()
		}
	}
	if bad != "" {
		return nil, fmt.Errorf("agent %q answered with an invalid message: %s", h.name, bad)
	}
	return &c, nil
}

// SendMessage is AgentHandler.SendMessage without the interceptors. A
// context marked by SendMessageForTask leaves a MessageResponder out.
func (eh *engineHandler) SendMessage(ctx context.Context, p a2a.SendMessageRequest) (a2a.Event, error) {
	h := (*AgentHandler)(eh)
	var reply *a2a.Message
	replyTo := &reply
	if ctx.Value(taskOnlyKey{}) != nil {
		replyTo = nil
	}
	t, err := h.send(ctx, p, replyTo)
	switch {
	case err != nil:
		return nil, err
	case reply != nil:
		return reply, nil
	}
	return t, nil
}

// send is SendMessage; with reply not nil, a MessageResponder's answer
// is left in *reply instead (the task then nil).
func (h *AgentHandler) send(ctx context.Context, p a2a.SendMessageRequest, reply **a2a.Message) (*a2a.Task, error) {
	ctx = withTenant(ctx, p.Tenant)
	// A blocking send runs an InlineAgent on this goroutine (when the
	// store allows, see accept): it would only wait for it otherwise, and
	// the answer needs no hand-over between goroutines.
	var run func()
	var inline *func()
	if p.Configuration.IsBlocking() {
		inline = &run
	}
	info, err := h.accept(ctx, &p, inline, reply)
	if run != nil {
		run()
	}
	if err != nil {
		return nil, err
	}
	if reply != nil && *reply != nil {
		return nil, nil
	}
	var hl *int
	if p.Configuration != nil {
		hl = p.Configuration.HistoryLength
	}
	if p.Configuration.IsBlocking() && !info.Task.Status.State.Final() {
		// The events are folded as they come: the final snapshot needs no
		// read of the store (a rare fold error falls back to one).
		t, folded := taskfold.Detach(info.Task), true
		for ev, err := range h.e.Stream(ctx, info, info.Seq, false, false) {
			if err != nil {
				return nil, err
			}
			if folded {
				if nt, err := fold(t, ev.Event); err == nil {
					t = nt
				} else {
					folded = false
				}
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if folded {
			info.Task = t
		} else if info, err = h.load(context.WithoutCancel(ctx), info.Task.ID); err != nil {
			return nil, err
		}
	}
	t := withHistoryLength(info.Task, hl)
	return &t, nil
}

// SendStreamingMessage is AgentHandler.SendStreamingMessage without the interceptors.
func (eh *engineHandler) SendStreamingMessage(ctx context.Context, p a2a.SendMessageRequest) (iter.Seq2[binding.StreamEvent, error], error) {
	h := (*AgentHandler)(eh)
	if !h.card.Capabilities.Streaming {
		return nil, a2a.ErrUnsupportedOperation.WithMessage("This agent does not support streaming")
	}
	ctx = withTenant(ctx, p.Tenant)
	var reply *a2a.Message
	info, err := h.accept(ctx, &p, nil, &reply)
	if err != nil {
		return nil, err
	}
	if reply != nil {
		return func(yield func(binding.StreamEvent, error) bool) { yield(binding.StreamEvent{Event: reply}, nil) }, nil
	}
	return h.e.Stream(ctx, info, info.Seq, true, false), nil
}

// GetTask is AgentHandler.GetTask without the interceptors.
func (eh *engineHandler) GetTask(ctx context.Context, p a2a.GetTaskRequest) (*a2a.Task, error) {
	h := (*AgentHandler)(eh)
	ctx = withTenant(ctx, p.Tenant)
	info, err := h.load(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	t := withHistoryLength(info.Task, p.HistoryLength)
	return &t, nil
}

// MessageTask returns the task that accepted the message whose messageId
// is messageID (A2A 1.0 §3.1.1: a messageId identifies a message, and a
// repeated one is answered from its task), as tasks/get would return it.
// Only messages of the calling principal and tenant (from ctx, as for
// every operation) are found. It returns a2a.ErrTaskNotFound when no
// such message was accepted (or its task was deleted), and
// a2a.ErrUnauthenticated when the agent requires authentication and ctx
// carries no principal. Adapters that give callers idempotency through
// their own ids (such as the simple HTTP dialect's task_id) use it.
func (h *AgentHandler) MessageTask(ctx context.Context, messageID string) (*a2a.Task, error) {
	if _, ok := h.owner(ctx); !ok {
		return nil, a2a.ErrUnauthenticated
	}
	id, err := h.e.Store().MessageTask(ctx, h.name, h.messageKey(ctx, messageID))
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, a2a.ErrTaskNotFound.WithMessage("No task accepted message %s", messageID)
	}
	info, err := h.load(ctx, id)
	if err != nil {
		return nil, err
	}
	t := info.Task
	return &t, nil
}

// RequiresAuth reports whether the agent authenticates its callers
// (HandlerOptions.Auth is set). Routes of one's own that accept requests a
// browser can send across sites without a preflight (form or text/plain
// bodies) must refuse those for such an agent, as the JSON-RPC binding
// does (HTTP 415), or a page elsewhere could use a visitor's cookie.
func (h *AgentHandler) RequiresAuth() bool { return len(h.opts.Auth) > 0 }

// Retired reports whether the agent takes no new messages
// (HandlerOptions.Retired): endpoints of one's own that send it messages
// (another dialect's) answer as for an unknown agent.
func (h *AgentHandler) Retired() bool { return h.opts.Retired }

// Authenticated returns next behind the agent's authentication
// (HandlerOptions.Auth; A2A 1.0 §7, A2A 0.3.0 §4): a request whose
// credentials pass reaches next with its principal in the request's
// context, where every AgentHandler method finds it; one without valid
// credentials gets onError with status 401 (and the WWW-Authenticate
// challenges already set) or 503 when the authenticator is unavailable,
// and err a2a.ErrUnauthenticated (or a2a.ErrInternal) saying why. Without
// Auth, next is returned as is. Routes of one's own below a Host (see
// Host.Handle) use it to authenticate as the agent's A2A routes do.
func (h *AgentHandler) Authenticated(next http.Handler, onError func(w http.ResponseWriter, r *http.Request, status int, err *a2a.Error)) http.Handler {
	var log *slog.Logger
	if h.e != nil {
		log = h.e.Log()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return authenticateReq(h, log, next, onError)
}

// ListTasks is AgentHandler.ListTasks without the interceptors.
func (eh *engineHandler) ListTasks(ctx context.Context, p a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	h := (*AgentHandler)(eh)
	ctx = withTenant(ctx, p.Tenant)
	owner, ok := h.owner(ctx)
	if !ok {
		return nil, a2a.ErrUnauthenticated
	}
	size := a2a.ListTasksDefaultPageSize
	if p.PageSize != nil {
		size = *p.PageSize
	}
	switch {
	case size < 1 || size > a2a.ListTasksMaxPageSize:
		return nil, a2a.InvalidParams("/params/pageSize", fmt.Sprintf("pageSize must be between 1 and %d", a2a.ListTasksMaxPageSize))
	case p.HistoryLength != nil && *p.HistoryLength < 0:
		return nil, a2a.InvalidParams("/params/historyLength", "historyLength must not be negative")
	case !p.Status.Valid():
		return nil, a2a.InvalidParams("/params/status", fmt.Sprintf("unknown task state %q", p.Status))
	}
	page, err := h.e.Store().ListTasks(ctx, store.TaskQuery{Agent: h.name, Owner: owner, ContextID: p.ContextID, State: p.Status,
		StatusAfter: p.StatusTimestampAfter, Limit: size, Cursor: p.PageToken})
	if errors.Is(err, store.ErrInvalidCursor) {
		return nil, a2a.InvalidParams("/params/pageToken", "pageToken is not a token this server gave out")
	}
	if err != nil {
		return nil, err
	}
	out := &a2a.ListTasksResponse{Tasks: make([]a2a.Task, len(page.Tasks)), NextPageToken: page.Next, PageSize: size, TotalSize: page.Total}
	for i, info := range page.Tasks {
		t := withHistoryLength(info.Task, p.HistoryLength)
		if !p.IncludeArtifacts {
			t.Artifacts = nil
		}
		out.Tasks[i] = t
	}
	return out, nil
}

// CancelTask is AgentHandler.CancelTask without the interceptors.
func (eh *engineHandler) CancelTask(ctx context.Context, p a2a.CancelTaskRequest) (*a2a.Task, error) {
	h := (*AgentHandler)(eh)
	ctx = withTenant(ctx, p.Tenant)
	info, err := h.load(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	if st := info.Task.Status.State; st.Terminal() {
		return nil, a2a.ErrTaskNotCancelable.WithMessage("Task cannot be canceled: it is already %s", st)
	}
	info, err = h.e.Cancel(ctx, h.hooks, p.ID)
	if err != nil {
		return nil, err
	}
	return &info.Task, nil
}

// SubscribeToTask is AgentHandler.SubscribeToTask without the interceptors.
func (eh *engineHandler) SubscribeToTask(ctx context.Context, p a2a.SubscribeToTaskRequest, opts binding.SubscribeOptions) (iter.Seq2[binding.StreamEvent, error], error) {
	h := (*AgentHandler)(eh)
	return h.subscribe(ctx, p, opts.From, !opts.EndOnInterrupt)
}

// subscribe is SubscribeToTask; with as10 it is A2A 1.0's (§3.1.6): a
// subscription without a resume point (from nil) to a task in a terminal
// state is UnsupportedOperationError (-32004) (a resume, from set, replays
// what the client missed, terminal or not), and the stream stays open
// through interrupted states (input-required, auth-required) until the
// task is terminal.
func (h *AgentHandler) subscribe(ctx context.Context, p a2a.SubscribeToTaskRequest, from *int64, as10 bool) (iter.Seq2[binding.StreamEvent, error], error) {
	if !h.card.Capabilities.Streaming {
		return nil, a2a.ErrUnsupportedOperation.WithMessage("This agent does not support streaming")
	}
	ctx = withTenant(ctx, p.Tenant)
	info, err := h.load(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	if from == nil {
		if st := info.Task.Status.State; as10 && st.Terminal() {
			return nil, a2a.ErrUnsupportedOperation.WithMessage("Task %s is already %s: there is nothing to subscribe to (GetTask returns it)", p.ID, st)
		}
		return h.e.Stream(ctx, info, info.Seq, true, as10), nil
	}
	after := max(*from, 0)
	if after > info.Seq {
		return nil, a2a.InvalidParams("Last-Event-ID", "event id is beyond the task's last event")
	}
	return h.e.Stream(ctx, info, after, false, as10), nil
}

// CreateTaskPushNotificationConfig is AgentHandler.CreateTaskPushNotificationConfig without the interceptors.
func (eh *engineHandler) CreateTaskPushNotificationConfig(ctx context.Context, c a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	h := (*AgentHandler)(eh)
	if err := h.pushSupported(); err != nil {
		return nil, err
	}
	ctx = withTenant(ctx, c.Tenant)
	info, err := h.load(ctx, c.TaskID)
	if err != nil {
		return nil, err
	}
	if err := checkPushHeaders("/params/pushNotificationConfig", c.PushNotificationConfig); err != nil {
		return nil, err
	}
	if err := h.checkPushURL(ctx, "/params/pushNotificationConfig/url", c.PushNotificationConfig.URL); err != nil {
		return nil, err
	}
	cfg, err := h.setPushConfig(ctx, c.TaskID, c.PushNotificationConfig, info.Seq)
	if err != nil {
		return nil, err
	}
	return &a2a.TaskPushNotificationConfig{Tenant: c.Tenant, TaskID: c.TaskID, PushNotificationConfig: cfg}, nil
}

// GetTaskPushNotificationConfig is AgentHandler.GetTaskPushNotificationConfig without the interceptors.
func (eh *engineHandler) GetTaskPushNotificationConfig(ctx context.Context, p a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	h := (*AgentHandler)(eh)
	ctx = withTenant(ctx, p.Tenant)
	cfgs, err := h.pushConfigs(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	for _, c := range cfgs {
		if p.ID == "" || c.PushNotificationConfig.ID == p.ID {
			return &c, nil
		}
	}
	return nil, errPushConfigNotFound(p.ID)
}

// ListTaskPushNotificationConfigs is AgentHandler.ListTaskPushNotificationConfigs without the interceptors.
func (eh *engineHandler) ListTaskPushNotificationConfigs(ctx context.Context, p a2a.ListTaskPushNotificationConfigsRequest) ([]a2a.TaskPushNotificationConfig, error) {
	h := (*AgentHandler)(eh)
	ctx = withTenant(ctx, p.Tenant)
	return h.pushConfigs(ctx, p.TaskID)
}

// DeleteTaskPushNotificationConfig is AgentHandler.DeleteTaskPushNotificationConfig without the interceptors.
func (eh *engineHandler) DeleteTaskPushNotificationConfig(ctx context.Context, p a2a.DeleteTaskPushNotificationConfigRequest) error {
	h := (*AgentHandler)(eh)
	if err := h.pushSupported(); err != nil {
		return err
	}
	ctx = withTenant(ctx, p.Tenant)
	if _, err := h.load(ctx, p.TaskID); err != nil {
		return err
	}
	if err := h.e.Store().DeletePushConfig(ctx, p.TaskID, p.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil // nothing to delete: the same effect as deleting it
		}
		return err
	}
	h.e.Push().Configured(p.TaskID)
	return nil
}

// pushSupported is PushNotificationNotSupportedError (-32003) when this
// agent has no push notifications (the engine delivers none, or
// HandlerOptions.NoPush). The push config methods check it before they
// look anything up (A2A 1.0 §3.3.4: an undeclared capability is answered
// as such whatever the task id).
func (h *AgentHandler) pushSupported() error {
	if h.e.Push() == nil || h.opts.NoPush {
		return a2a.ErrPushNotificationNotSupported
	}
	return nil
}

// redactPushSecrets is cfg without its token and authentication
// credentials (its schemes kept).
func redactPushSecrets(cfg a2a.PushNotificationConfig) a2a.PushNotificationConfig {
	cfg.Token = ""
	if cfg.Authentication != nil {
		a := *cfg.Authentication
		a.Credentials = ""
		cfg.Authentication = &a
	}
	return cfg
}

func (h *AgentHandler) pushConfigs(ctx context.Context, taskID string) ([]a2a.TaskPushNotificationConfig, error) {
	if err := h.pushSupported(); err != nil {
		return nil, err
	}
	if _, err := h.load(ctx, taskID); err != nil {
		return nil, err
	}
	cs, err := h.e.Store().PushConfigs(ctx, taskID)
	if err != nil {
		return nil, err
	}
	out := make([]a2a.TaskPushNotificationConfig, len(cs))
	for i, c := range cs {
		if !h.opts.RevealPushSecrets {
			c.Config = redactPushSecrets(c.Config)
		}
		out[i] = a2a.TaskPushNotificationConfig{TaskID: taskID, PushNotificationConfig: c.Config}
		out[i].Tenant, _ = ctx.Value(tenantKey{}).(string)
	}
	return out, nil
}

// GetExtendedAgentCard is AgentHandler.GetExtendedAgentCard without the interceptors.
func (eh *engineHandler) GetExtendedAgentCard(ctx context.Context) (*a2a.AgentCard, error) {
	h := (*AgentHandler)(eh)
	if !h.card.Capabilities.ExtendedAgentCard {
		return nil, a2a.ErrUnsupportedOperation.WithMessage("This agent declares no extended Agent Card (capabilities.extendedAgentCard)")
	}
	if h.opts.ExtendedCard == nil || len(h.opts.Auth) == 0 {
		return nil, a2a.ErrAuthenticatedExtendedCardNotConfigured
	}
	if p, ok := auth.FromContext(ctx); !ok || p == nil {
		return nil, a2a.ErrUnauthenticated
	}
	c := *h.opts.ExtendedCard
	pub := h.card
	c.URL, c.PreferredTransport, c.AdditionalInterfaces, c.SupportedInterfaces = pub.URL, pub.PreferredTransport, pub.AdditionalInterfaces, pub.SupportedInterfaces
	if u, ok := ctx.Value(edge.CardURLKey{}).(string); ok && u != "" {
		served, _ := ctx.Value(edge.ServedKey{}).([]string)
		if served == nil {
			served = edge.ServedVersions
		}
		var grpc *a2a.AgentInterface
		if gi, ok := ctx.Value(edge.GRPCKey{}).(a2a.AgentInterface); ok {
			grpc = &gi
		}
		c = cardAt(c, u, served, grpc)
	}
	c.SecuritySchemes, c.Security, c.SupportsAuthenticatedExtendedCard, c.Capabilities.ExtendedAgentCard = pub.SecuritySchemes, pub.Security, true, true
	c.Capabilities.PushNotifications, c.Capabilities.Extensions = pub.Capabilities.PushNotifications, pub.Capabilities.Extensions
	if c.ProtocolVersion == "" {
		c.ProtocolVersion = pub.ProtocolVersion
	}
	return &c, nil
}

func principal(ctx context.Context) *auth.Principal {
	p, _ := auth.FromContext(ctx)
	return p
}
