package v10

import (
	"net/url"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
)

// Request decoders for the HTTP+JSON binding (A2A 1.0 §11). The binding
// extracts the tenant (the optional /{tenant} path prefix; "" when absent)
// and the ids of the path, already unescaped, and passes them with the
// query and the body. Errors are *a2a.Error: ErrParse (-32700) for a body
// that is not JSON, InvalidParams (-32602) naming the field as a JSON
// Pointer of the request message ("/message/role", "/pageSize" for a
// query parameter, "/id" for a path id).
//
// Query parameters (A2A 1.0 §11.5) are matched by their JSON name or their
// proto name (pageSize or page_size); a parameter given twice is an error;
// unknown parameters (A2A-Version, say) are ignored. Numbers are decimal,
// booleans true/false (or 1/0), enums their name (or number), timestamps
// RFC 3339. A tenant or id that also appears in a body must equal the
// path's.

// DecodeRESTSendMessage decodes the body of POST /message:send and POST
// /message:stream, a SendMessageRequest (see DecodeSendMessageRequest).
func DecodeRESTSendMessage(tenant string, body []byte) (a2a.SendMessageRequest, error) {
	p, err := decodeSendMessage(body, "", true)
	if err != nil {
		return a2a.SendMessageRequest{}, err
	}
	if p.Tenant, err = mergeTenant(tenant, p.Tenant); err != nil {
		return a2a.SendMessageRequest{}, err
	}
	return p, nil
}

// mergeTenant returns the tenant of a request whose path says path and
// whose body says body.
func mergeTenant(path, body string) (string, error) {
	switch {
	case path == "":
		return body, nil
	case body != "" && body != path:
		return "", a2a.InvalidParams("/tenant", "tenant differs from the tenant in the path")
	}
	return path, nil
}

// pathID checks an id taken from the path.
func pathID(field, id string) error {
	if id == "" {
		return a2a.InvalidParams("/"+field, "required field missing")
	}
	return nil
}

// query reads the query parameters of one request.
type query struct {
	v url.Values
}

// get returns the parameter named name (its JSON name) or its proto name.
func (q query) get(name string) (string, bool, error) {
	vals := q.v[name]
	if alt := snakeCase(name); alt != name {
		vals = append(vals[:len(vals):len(vals)], q.v[alt]...)
	}
	switch len(vals) {
	case 0:
		return "", false, nil
	case 1:
		return vals[0], true, nil
	}
	return "", false, a2a.InvalidParams("/"+name, "query parameter given more than once")
}

// int32 reads an integer parameter.
func (q query) int32(name string) (*int, error) {
	s, ok, err := q.get(name)
	if err != nil || !ok {
		return nil, err
	}
	n, reason := parseInt32(strings.TrimSpace(s))
	if reason != "" {
		return nil, a2a.InvalidParams("/"+name, reason)
	}
	return &n, nil
}

// nonNegative reads an integer parameter that must be >= 0.
func (q query) nonNegative(name string) (*int, error) {
	n, err := q.int32(name)
	if err == nil && n != nil && *n < 0 {
		return nil, a2a.InvalidParams("/"+name, "must not be negative")
	}
	return n, err
}

// boolean reads a boolean parameter.
func (q query) boolean(name string) (bool, error) {
	s, ok, err := q.get(name)
	if err != nil || !ok {
		return false, err
	}
	switch s {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, a2a.InvalidParams("/"+name, "not a boolean (true or false): "+quoteShort(s))
}

func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "\uFFFD") + `"`
}

// DecodeRESTGetTask decodes GET /tasks/{id}?historyLength=N (A2A 1.0
// §11.3.2): a GetTaskRequest.
func DecodeRESTGetTask(tenant, id string, q url.Values) (a2a.GetTaskRequest, error) {
	if err := pathID("id", id); err != nil {
		return a2a.GetTaskRequest{}, err
	}
	h, err := query{q}.nonNegative("historyLength")
	if err != nil {
		return a2a.GetTaskRequest{}, err
	}
	return a2a.GetTaskRequest{Tenant: tenant, ID: id, HistoryLength: h}, nil
}

// DecodeRESTListTasks decodes the query of GET /tasks (A2A 1.0 §11.5): a
// ListTasksRequest with contextId, status, pageSize (1 to 100), pageToken,
// historyLength (>= 0), statusTimestampAfter (also read as
// lastUpdatedAfter, the name a2a-go v2.4.0's client sends) and
// includeArtifacts.
func DecodeRESTListTasks(tenant string, q url.Values) (a2a.ListTasksRequest, error) {
	qq := query{q}
	p := a2a.ListTasksRequest{Tenant: tenant}
	var err error
	var ok bool
	if p.ContextID, _, err = qq.get("contextId"); err != nil {
		return a2a.ListTasksRequest{}, err
	}
	var s string
	if s, ok, err = qq.get("status"); err != nil {
		return a2a.ListTasksRequest{}, err
	} else if ok {
		st, known := ParseTaskState(s)
		if !known {
			return a2a.ListTasksRequest{}, a2a.InvalidParams("/status", "unknown task state "+quoteShort(s))
		}
		if st != a2a.TaskStateUnspecified {
			p.Status = st
		}
	}
	if p.PageSize, err = qq.int32("pageSize"); err != nil {
		return a2a.ListTasksRequest{}, err
	} else if p.PageSize != nil && (*p.PageSize < 1 || *p.PageSize > a2a.ListTasksMaxPageSize) {
		return a2a.ListTasksRequest{}, a2a.InvalidParams("/pageSize", "pageSize must be between 1 and 100")
	}
	if p.PageToken, _, err = qq.get("pageToken"); err != nil {
		return a2a.ListTasksRequest{}, err
	}
	if p.HistoryLength, err = qq.nonNegative("historyLength"); err != nil {
		return a2a.ListTasksRequest{}, err
	}
	ts, ok, err := qq.get("statusTimestampAfter")
	if err != nil {
		return a2a.ListTasksRequest{}, err
	}
	field := "statusTimestampAfter"
	if !ok {
		field = "lastUpdatedAfter"
		if ts, ok, err = qq.get(field); err != nil {
			return a2a.ListTasksRequest{}, err
		}
	}
	if ok {
		t, reason := parseTimestamp(ts)
		if reason != "" {
			return a2a.ListTasksRequest{}, a2a.InvalidParams("/"+field, reason)
		}
		p.StatusTimestampAfter = t
	}
	if p.IncludeArtifacts, err = qq.boolean("includeArtifacts"); err != nil {
		return a2a.ListTasksRequest{}, err
	}
	return p, nil
}

// DecodeRESTTaskAction decodes POST /tasks/{id}:cancel and POST
// /tasks/{id}:subscribe (A2A 1.0 §11.3.2): a CancelTaskRequest or
// SubscribeToTaskRequest whose id is the path's. The body may be empty (as
// a2a-go's client sends it) or carry tenant, id and metadata.
func DecodeRESTTaskAction(tenant, id string, body []byte) (a2a.CancelTaskRequest, error) {
	if err := pathID("id", id); err != nil {
		return a2a.CancelTaskRequest{}, err
	}
	p, err := decodeTaskID(body, "", true, id)
	if err != nil {
		return a2a.CancelTaskRequest{}, err
	}
	p.ID = id
	if p.Tenant, err = mergeTenant(tenant, p.Tenant); err != nil {
		return a2a.CancelTaskRequest{}, err
	}
	return p, nil
}

// DecodeRESTCreatePushConfig decodes POST /tasks/{taskId}/pushNotificationConfigs
// (A2A 1.0 §11.3.3): the body is the TaskPushNotificationConfig (see
// DecodeTaskPushNotificationConfig); its taskId may be left out.
func DecodeRESTCreatePushConfig(tenant, taskID string, body []byte) (a2a.TaskPushNotificationConfig, error) {
	if err := pathID("taskId", taskID); err != nil {
		return a2a.TaskPushNotificationConfig{}, err
	}
	c, err := decodeCreatePushConfig(body, "", true, taskID)
	if err != nil {
		return a2a.TaskPushNotificationConfig{}, err
	}
	c.TaskID = taskID
	if c.Tenant, err = mergeTenant(tenant, c.Tenant); err != nil {
		return a2a.TaskPushNotificationConfig{}, err
	}
	return c, nil
}

// DecodeRESTPushConfigID decodes GET and DELETE
// /tasks/{taskId}/pushNotificationConfigs/{configId} (A2A 1.0 §11.3.3).
// For DELETE, convert the result:
// a2a.DeleteTaskPushNotificationConfigRequest(p).
func DecodeRESTPushConfigID(tenant, taskID, configID string) (a2a.GetTaskPushNotificationConfigRequest, error) {
	if err := pathID("taskId", taskID); err != nil {
		return a2a.GetTaskPushNotificationConfigRequest{}, err
	}
	if err := pathID("id", configID); err != nil {
		return a2a.GetTaskPushNotificationConfigRequest{}, err
	}
	return a2a.GetTaskPushNotificationConfigRequest{Tenant: tenant, TaskID: taskID, ID: configID}, nil
}

// DecodeRESTListPushConfigs decodes GET
// /tasks/{taskId}/pushNotificationConfigs?pageSize=N&pageToken=T (A2A 1.0
// §11.3.3).
func DecodeRESTListPushConfigs(tenant, taskID string, q url.Values) (a2a.ListTaskPushNotificationConfigsRequest, error) {
	if err := pathID("taskId", taskID); err != nil {
		return a2a.ListTaskPushNotificationConfigsRequest{}, err
	}
	qq := query{q}
	p := a2a.ListTaskPushNotificationConfigsRequest{Tenant: tenant, TaskID: taskID}
	var err error
	if p.PageSize, err = qq.nonNegative("pageSize"); err != nil {
		return a2a.ListTaskPushNotificationConfigsRequest{}, err
	}
	if p.PageSize != nil && *p.PageSize == 0 {
		p.PageSize = nil
	}
	if p.PageToken, _, err = qq.get("pageToken"); err != nil {
		return a2a.ListTaskPushNotificationConfigsRequest{}, err
	}
	return p, nil
}
