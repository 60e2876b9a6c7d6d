package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// The operations, each under its A2A 1.0 name (A2A 1.0 §3.1), with the
// A2A 0.3.0 JSON-RPC method it is over a 0.3 JSON-RPC interface (§7).
// Over HTTP+JSON the paths are those of A2A 1.0 §11.3, below /v1 over A2A
// 0.3 (A2A 0.3.0 §3.2.3, the bodies then the JSON of the 0.3 proto). Over
// A2A 1.0 every request carries A2A-Version: 1.0; the tenant of a call is
// its params' Tenant, or the interface's when that is empty (A2A 1.0
// §3.1, §11.3: the "tenant" member over JSON-RPC, the first path segment
// over HTTP+JSON); A2A 0.3 has no tenants, and Tenant is not sent.

// ErrNotInProtocol is returned (wrapped) by an operation that the
// protocol version the client speaks does not define: ListTasks over
// A2A 0.3.
var ErrNotInProtocol = errors.New("a2a client: the operation is not part of the protocol version spoken")

// rpc03 reports whether the client speaks A2A 0.3 over JSON-RPC, whose
// calls are the 0.3 methods; the other interfaces take the 1.0 names and
// HTTP+JSON paths.
func (c *Client) rpc03() bool { return !c.v10 && !c.rest }

// rest03 reports whether the client speaks A2A 0.3 over HTTP+JSON.
func (c *Client) rest03() bool { return !c.v10 && c.rest }

// tenant returns the tenant of a call whose params name t ("" over A2A
// 0.3).
func (c *Client) tenant(t string) string {
	if !c.v10 {
		return ""
	}
	if t != "" {
		return t
	}
	return c.iface.Tenant
}

// bodyTenant is the tenant written in a request body: over HTTP+JSON the
// tenant is in the path instead.
func (c *Client) bodyTenant(t string) string {
	if c.rest {
		return ""
	}
	return t
}

func taskPath(id string) string { return "/tasks/" + pathSegment(id) }

// pathSegment escapes s as one HTTP+JSON path segment, its colons too: a
// literal ':' after a task id starts a custom method (":cancel",
// ":subscribe", A2A 1.0 §11.3), so a colon inside an id must not be one.
func pathSegment(s string) string { return strings.ReplaceAll(url.PathEscape(s), ":", "%3A") }

func pushPath(taskID string) string { return taskPath(taskID) + "/pushNotificationConfigs" }

// sendCall is the call of SendMessage (stream false) or
// SendStreamingMessage. A message without MessageID gets a fresh one, one
// without Role is the user's.
func (c *Client) sendCall(p *a2a.SendMessageRequest, stream bool) (call, error) {
	if p.Message.MessageID == "" {
		p.Message.MessageID = a2a.NewID()
	}
	if p.Message.Role == "" {
		p.Message.Role = a2a.RoleUser
	}
	cl := call{retry: c.sendRetryable(), verb: http.MethodPost}
	var err error
	if c.grpc != nil {
		cl.method, cl.tenant = pick(stream, "SendMessage", "SendStreamingMessage"), c.tenant(p.Tenant)
		q := *p
		q.Tenant = cl.tenant
		cl.params, err = pb.AppendSendMessageRequest(nil, &q)
		return cl, err
	}
	if c.rpc03() {
		cl.method = pick(stream, "message/send", "message/stream")
		cl.params, err = v03.EncodeMessageSendParams(p)
		return cl, err
	}
	cl.method = pick(stream, "SendMessage", "SendStreamingMessage")
	cl.path = pick(stream, "/message:send", "/message:stream")
	q := *p
	cl.tenant = c.tenant(q.Tenant)
	q.Tenant = c.bodyTenant(cl.tenant)
	if c.rest03() {
		cl.params, err = v10.AppendREST03SendMessageRequest(nil, &q)
	} else {
		cl.params, err = v10.AppendSendMessageRequest(nil, &q)
	}
	return cl, err
}

// pick returns a when !stream, else b.
func pick(stream bool, a, b string) string {
	if stream {
		return b
	}
	return a
}

// SendMessage sends a message (A2A 1.0 §3.1.1 SendMessage; A2A 0.3.0 §7.1
// message/send). The result is a *a2a.Task or, for agents that answer
// directly, a *a2a.Message. It is retried on transport errors only when
// the server does not process a repeated messageId twice (its card
// declares a2a.ExtensionEventLog) or Options.RetrySend is set. A message
// without MessageID gets a fresh one.
func (c *Client) SendMessage(ctx context.Context, p a2a.SendMessageRequest) (a2a.Event, error) {
	cl, err := c.sendCall(&p, false)
	if err != nil {
		return nil, err
	}
	if c.grpc != nil {
		return grpcCall(ctx, c, cl.method, cl.retry, cl.params, nil, pb.UnmarshalSendMessageResponse)
	}
	ev, err := callDecode(ctx, c, &cl, v10.UnmarshalSendMessageResponse, v10.UnmarshalREST03SendMessageResponse, v03.UnmarshalEvent)
	if err != nil {
		return nil, err
	}
	switch ev.(type) {
	case *a2a.Task, *a2a.Message:
		return ev, nil
	}
	return nil, &ProtocolError{Method: cl.method, Reason: fmt.Sprintf("result is a %T, want a Task or Message", ev)}
}

// decodeTask decodes a Task result of method.
func (c *Client) decodeTask(method string, raw jsontext.Value) (*a2a.Task, error) {
	if !c.rpc03() {
		unmarshal := v10.UnmarshalTask
		if c.rest03() {
			unmarshal = v10.UnmarshalREST03Task
		}
		t, err := unmarshal(raw)
		if err != nil {
			return nil, protocolError(method, "invalid Task in result", err)
		}
		return &t, nil
	}
	ev, err := v03.UnmarshalEvent(raw)
	if err != nil {
		return nil, protocolError(method, "invalid Task in result", err)
	}
	t, ok := ev.(*a2a.Task)
	if !ok {
		return nil, &ProtocolError{Method: method, Reason: fmt.Sprintf("result is a %T, want a Task", ev)}
	}
	return t, nil
}

// GetTask reads a task (A2A 1.0 §3.1.3 GetTask, GET /tasks/{id}; A2A 0.3.0
// §7.3 tasks/get, GET /v1/tasks/{id}), with at most p.HistoryLength
// messages of history when set; retried when safe.
func (c *Client) GetTask(ctx context.Context, p a2a.GetTaskRequest) (*a2a.Task, error) {
	if c.grpc != nil {
		return c.grpcGetTask(ctx, p)
	}
	cl := &call{method: "tasks/get", retry: true}
	var err error
	if !c.rpc03() {
		cl.method, cl.verb, cl.path, cl.tenant = "GetTask", http.MethodGet, taskPath(p.ID), c.tenant(p.Tenant)
		cl.query = v10.GetTaskQuery(&p)
		p.Tenant = c.bodyTenant(cl.tenant)
		cl.params, err = c.rpcParams(v10.AppendGetTaskRequest(nil, &p))
	} else {
		cl.params, err = v03.EncodeTaskQueryParams(&p)
	}
	if err != nil {
		return nil, err
	}
	raw, err := c.call(ctx, cl)
	if err != nil {
		return nil, err
	}
	return c.decodeTask(cl.method, raw)
}

// rpcParams returns the params of a call that has them only over
// JSON-RPC (over HTTP+JSON, its values are in the path and query).
func (c *Client) rpcParams(b []byte, err error) ([]byte, error) {
	if c.rest || err != nil {
		return nil, err
	}
	return b, nil
}

// ListTasks lists the caller's tasks, newest first, one page at a time
// (A2A 1.0 §3.1.4 ListTasks, GET /tasks): filtered by p.ContextID,
// p.Status and p.StatusTimestampAfter; p.PageSize tasks a page (1 to 100;
// nil: the server's default, 50) from p.PageToken (the previous result's
// NextPageToken, "" for the first page; "" in a result means the last
// page). Retried when safe. A2A 0.3 has ListTasks over HTTP+JSON only
// (A2A 0.3.0 §3.5.6, GET /v1/tasks; the state filter is sent by its 1.0
// name): over a 0.3 JSON-RPC interface it returns ErrNotInProtocol
// without calling the agent.
func (c *Client) ListTasks(ctx context.Context, p a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	if c.grpc != nil {
		return c.grpcListTasks(ctx, p)
	}
	if c.rpc03() {
		return nil, fmt.Errorf("%w: ListTasks is an operation of A2A 1.0 and of A2A 0.3 over HTTP+JSON, and the client speaks A2A 0.3 JSON-RPC to agent %q (%s)", ErrNotInProtocol, c.card.Name, c.iface.URL)
	}
	cl := &call{method: "ListTasks", retry: true, verb: http.MethodGet, path: "/tasks", tenant: c.tenant(p.Tenant)}
	cl.query = v10.ListTasksQuery(&p)
	p.Tenant = c.bodyTenant(cl.tenant)
	params, err := c.rpcParams(v10.AppendListTasksRequest(nil, &p))
	if err != nil {
		return nil, err
	}
	cl.params = params
	raw, err := c.call(ctx, cl)
	if err != nil {
		return nil, err
	}
	unmarshal := v10.UnmarshalListTasksResponse
	if c.rest03() {
		unmarshal = v10.UnmarshalREST03ListTasksResponse
	}
	r, err := unmarshal(raw)
	if err != nil {
		return nil, protocolError(cl.method, "invalid result", err)
	}
	return &r, nil
}

// CancelTask asks the agent to cancel a task (A2A 1.0 §3.1.5 CancelTask,
// POST /tasks/{id}:cancel; A2A 0.3.0 §7.4 tasks/cancel, POST
// /v1/tasks/{id}:cancel, whose request has no metadata: p.Metadata is not
// sent there) and returns the task as it is then. Not retried.
func (c *Client) CancelTask(ctx context.Context, p a2a.CancelTaskRequest) (*a2a.Task, error) {
	if c.grpc != nil {
		return c.grpcCancelTask(ctx, p)
	}
	cl, err := c.taskIDCall(&p, "tasks/cancel", "CancelTask", ":cancel", false)
	if err != nil {
		return nil, err
	}
	raw, err := c.call(ctx, &cl)
	if err != nil {
		return nil, err
	}
	return c.decodeTask(cl.method, raw)
}

// taskIDCall is the call of CancelTask or SubscribeToTask (subscribe
// true): over HTTP+JSON, POST /tasks/{id}{action} with no body unless
// there is metadata over A2A 1.0 (the official clients send none).
func (c *Client) taskIDCall(p *a2a.CancelTaskRequest, method03, method10, action string, subscribe bool) (call, error) {
	cl := call{method: method03, retry: subscribe}
	var err error
	if c.grpc != nil && subscribe {
		cl.method, cl.tenant = method10, c.tenant(p.Tenant)
		sq := a2a.SubscribeToTaskRequest(*p)
		sq.Tenant = cl.tenant
		cl.params, err = pb.AppendSubscribeToTaskRequest(nil, &sq)
		return cl, err
	}
	if c.rpc03() {
		cl.params, err = v03.EncodeTaskIDParams(p)
		return cl, err
	}
	cl.method, cl.verb, cl.path, cl.tenant = method10, http.MethodPost, taskPath(p.ID)+action, c.tenant(p.Tenant)
	q := *p
	q.Tenant = c.bodyTenant(cl.tenant)
	if c.rest03() || c.rest && len(q.Metadata) == 0 {
		return cl, nil
	}
	if subscribe {
		sq := a2a.SubscribeToTaskRequest(q)
		cl.params, err = v10.AppendSubscribeToTaskRequest(nil, &sq)
	} else {
		cl.params, err = v10.AppendCancelTaskRequest(nil, &q)
	}
	return cl, err
}

// CreateTaskPushNotificationConfig asks the agent to send the task's
// updates to a webhook (A2A 1.0 §3.1.7 CreateTaskPushNotificationConfig,
// POST /tasks/{id}/pushNotificationConfigs; A2A 0.3.0 §7.5
// tasks/pushNotificationConfig/set, POST /v1/tasks/{id}/pushNotificationConfigs
// with the whole CreateTaskPushNotificationConfigRequest) and returns the
// config as stored (with the id the server chose when cfg has none). Not
// retried.
func (c *Client) CreateTaskPushNotificationConfig(ctx context.Context, cfg a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	if c.grpc != nil {
		return c.grpcCreatePushConfig(ctx, cfg)
	}
	cl := &call{method: "tasks/pushNotificationConfig/set"}
	var err error
	switch {
	case c.rest03():
		cl.method, cl.verb, cl.path = "CreateTaskPushNotificationConfig", http.MethodPost, pushPath(cfg.TaskID)
		cl.params, err = v10.AppendREST03CreatePushConfigRequest(nil, &cfg)
	case c.v10:
		cl.method, cl.verb, cl.path, cl.tenant = "CreateTaskPushNotificationConfig", http.MethodPost, pushPath(cfg.TaskID), c.tenant(cfg.Tenant)
		q := cfg
		q.Tenant = c.bodyTenant(cl.tenant)
		cl.params, err = v10.AppendTaskPushNotificationConfig(nil, &q)
	default:
		cl.params, err = v03.MarshalTaskPushNotificationConfig(&cfg)
	}
	if err != nil {
		return nil, err
	}
	return c.pushConfigCall(ctx, cl)
}

// pushConfigCall performs cl and decodes its TaskPushNotificationConfig.
func (c *Client) pushConfigCall(ctx context.Context, cl *call) (*a2a.TaskPushNotificationConfig, error) {
	out, err := callDecode(ctx, c, cl, v10.UnmarshalTaskPushNotificationConfig, v10.UnmarshalREST03PushConfig, v03.UnmarshalTaskPushNotificationConfig)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// callDecode performs cl and decodes its result with the codec of the
// client's protocol version and binding: v10 for A2A 1.0, rest03 for the
// body of the 0.3 HTTP+JSON binding, rpc03 for a 0.3 JSON-RPC result. A
// result that does not decode is a *ProtocolError; errors of the call are
// returned as they are.
func callDecode[T any](ctx context.Context, c *Client, cl *call, v10dec, rest03dec, rpc03dec func([]byte) (T, error)) (T, error) {
	var zero T
	raw, err := c.call(ctx, cl)
	if err != nil {
		return zero, err
	}
	decode := rpc03dec
	switch {
	case c.v10:
		decode = v10dec
	case c.rest:
		decode = rest03dec
	}
	v, err := decode(raw)
	if err != nil {
		return zero, protocolError(cl.method, "invalid result", err)
	}
	return v, nil
}

// GetTaskPushNotificationConfig reads one push notification config of a
// task (A2A 1.0 §3.1.8 GetTaskPushNotificationConfig, GET
// /tasks/{id}/pushNotificationConfigs/{configId}; A2A 0.3.0 §7.6
// tasks/pushNotificationConfig/get, GET
// /v1/tasks/{id}/pushNotificationConfigs/{configId}). An empty
// ID asks for the task's first config (over
// HTTP+JSON and 1.0, which require the id: the first that
// ListTaskPushNotificationConfigs returns; a task without one is then
// a2a.ErrTaskNotFound). Retried when safe.
func (c *Client) GetTaskPushNotificationConfig(ctx context.Context, p a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	if c.rpc03() {
		params, err := v03.EncodeTaskPushConfigParams(&p)
		if err != nil {
			return nil, err
		}
		return c.pushConfigCall(ctx, &call{method: "tasks/pushNotificationConfig/get", params: params, retry: true})
	}
	if p.ID == "" {
		return c.firstPushConfig(ctx, p)
	}
	if c.grpc != nil {
		return c.grpcGetPushConfig(ctx, p)
	}
	cl, err := c.pushConfigIDCall(&p, "GetTaskPushNotificationConfig", http.MethodGet)
	if err != nil {
		return nil, err
	}
	return c.pushConfigCall(ctx, cl)
}

// firstPushConfig returns the first push notification config of a task.
func (c *Client) firstPushConfig(ctx context.Context, p a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	cfgs, _, err := c.ListTaskPushNotificationConfigs(ctx, a2a.ListTaskPushNotificationConfigsRequest{Tenant: p.Tenant, TaskID: p.TaskID})
	if err != nil {
		return nil, err
	}
	if len(cfgs) == 0 {
		return nil, &a2a.Error{Code: a2a.CodeTaskNotFound, Message: "task " + p.TaskID + " has no push notification config"}
	}
	return &cfgs[0], nil
}

// pushConfigIDCall is the call of Get or DeleteTaskPushNotificationConfig
// over A2A 1.0 or HTTP+JSON.
func (c *Client) pushConfigIDCall(p *a2a.GetTaskPushNotificationConfigRequest, method, verb string) (*call, error) {
	cl := &call{method: method, verb: verb, tenant: c.tenant(p.Tenant), retry: verb == http.MethodGet, void: verb == http.MethodDelete,
		path: pushPath(p.TaskID) + "/" + pathSegment(p.ID)}
	q := *p
	q.Tenant = c.bodyTenant(cl.tenant)
	params, err := c.rpcParams(v10.AppendPushConfigIDRequest(nil, &q))
	cl.params = params
	return cl, err
}

// ListTaskPushNotificationConfigs lists the push notification configs of
// task p.TaskID (A2A 1.0 §3.1.9 ListTaskPushNotificationConfigs, GET
// /tasks/{id}/pushNotificationConfigs; A2A 0.3.0 §7.7
// tasks/pushNotificationConfig/list) and returns them with the next
// page's token ("" on the last page; always "" over 0.3, which does not
// page: PageSize and PageToken are not sent; GET
// /v1/tasks/{id}/pushNotificationConfigs over 0.3 HTTP+JSON). Retried when
// safe.
func (c *Client) ListTaskPushNotificationConfigs(ctx context.Context, p a2a.ListTaskPushNotificationConfigsRequest) ([]a2a.TaskPushNotificationConfig, string, error) {
	if c.grpc != nil {
		return c.grpcListPushConfigs(ctx, p)
	}
	cl := &call{method: "tasks/pushNotificationConfig/list", retry: true}
	var err error
	if !c.rpc03() {
		cl.method, cl.verb, cl.path, cl.tenant = "ListTaskPushNotificationConfigs", http.MethodGet, pushPath(p.TaskID), c.tenant(p.Tenant)
		if c.v10 {
			cl.query = v10.ListPushConfigsQuery(&p)
		}
		p.Tenant = c.bodyTenant(cl.tenant)
		cl.params, err = c.rpcParams(v10.AppendListTaskPushNotificationConfigsRequest(nil, &p))
	} else {
		cl.params, err = v03.EncodeTaskIDParams(&a2a.CancelTaskRequest{ID: p.TaskID})
	}
	if err != nil {
		return nil, "", err
	}
	var next string
	out, err := callDecode(ctx, c, cl, func(b []byte) ([]a2a.TaskPushNotificationConfig, error) {
		out, token, err := v10.UnmarshalListTaskPushNotificationConfigsResponse(b)
		next = token
		return out, err
	}, v10.UnmarshalREST03ListPushConfigs, v03.UnmarshalTaskPushNotificationConfigs)
	if err != nil {
		return nil, "", err
	}
	return out, next, nil
}

// DeleteTaskPushNotificationConfig removes a push notification config of
// a task (A2A 1.0 §3.1.10 DeleteTaskPushNotificationConfig, DELETE
// /tasks/{id}/pushNotificationConfigs/{configId}; A2A 0.3.0 §7.8
// tasks/pushNotificationConfig/delete, DELETE
// /v1/tasks/{id}/pushNotificationConfigs/{configId}). Not retried.
func (c *Client) DeleteTaskPushNotificationConfig(ctx context.Context, p a2a.DeleteTaskPushNotificationConfigRequest) error {
	if c.grpc != nil {
		return c.grpcDeletePushConfig(ctx, p)
	}
	gp := a2a.GetTaskPushNotificationConfigRequest(p)
	var cl *call
	var err error
	if !c.rpc03() {
		cl, err = c.pushConfigIDCall(&gp, "DeleteTaskPushNotificationConfig", http.MethodDelete)
	} else {
		cl = &call{method: "tasks/pushNotificationConfig/delete", void: true}
		cl.params, err = v03.EncodeTaskPushConfigParams(&gp)
	}
	if err != nil {
		return err
	}
	_, err = c.call(ctx, cl)
	return err
}

// GetExtendedAgentCard returns the card the agent shows to authenticated
// callers (A2A 1.0 §3.1.11 GetExtendedAgentCard, GET /extendedAgentCard;
// A2A 0.3.0 §7.10 agent/getAuthenticatedExtendedCard, GET /v1/card);
// retried when safe. Over 1.0 the tenant is the interface's. With
// Options.CardVerifier the card must verify, as if fetched from the
// interface URL, and is built from its signed content
// (CardVerifier.VerifyCard); errors are then *CardSignatureError.
func (c *Client) GetExtendedAgentCard(ctx context.Context) (*a2a.AgentCard, error) {
	if c.grpc != nil {
		return c.grpcExtendedCard(ctx)
	}
	cl := &call{method: "agent/getAuthenticatedExtendedCard", retry: true}
	switch {
	case c.rest03():
		cl.method, cl.verb, cl.path = "GetExtendedAgentCard", http.MethodGet, "/card"
	case c.v10:
		cl.method, cl.verb, cl.path, cl.tenant = "GetExtendedAgentCard", http.MethodGet, "/extendedAgentCard", c.iface.Tenant
		params, err := c.rpcParams(v10.AppendGetExtendedAgentCardRequest(nil, c.bodyTenant(cl.tenant)))
		if err != nil {
			return nil, err
		}
		cl.params = params
	}
	raw, err := c.call(ctx, cl)
	if err != nil {
		return nil, err
	}
	card, err := c.decodeCard(ctx, c.iface.URL, cl.method, raw)
	if err != nil {
		return nil, err
	}
	return &card, nil
}
