package v10

import (
	"net/url"
	"strconv"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// Request encoders, for a client of A2A 1.0: each appends the params
// object of a JSON-RPC request (A2A 1.0 §9.4), which is also the body of
// the HTTP+JSON POST requests. The …Query functions give the query of the
// HTTP+JSON GET requests (A2A 1.0 §11.5). What they write, the Decode
// functions read back to the same value.

// AppendSendMessageRequest appends a SendMessageRequest (A2A 1.0 §3.2.1).
// Blocking false is written as returnImmediately true; the push config's
// single authentication scheme is Schemes[0].
func AppendSendMessageRequest(dst []byte, p *a2a.SendMessageRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.b = append(e.b, '{')
	e.optional("tenant", p.Tenant)
	e.member("message")
	e.message(&p.Message)
	if c := p.Configuration; c != nil {
		e.member("configuration")
		e.b = append(e.b, '{')
		e.stringList("acceptedOutputModes", c.AcceptedOutputModes)
		if c.PushNotificationConfig != nil {
			e.member("taskPushNotificationConfig")
			e.pushConfig(&a2a.TaskPushNotificationConfig{PushNotificationConfig: *c.PushNotificationConfig})
		}
		if c.HistoryLength != nil {
			e.number("historyLength", *c.HistoryLength)
		}
		if !c.IsBlocking() {
			e.boolean("returnImmediately", true)
		}
		e.b = append(e.b, '}')
	}
	e.metadata(p.Metadata)
	e.b = append(e.b, '}')
	return e.finish(dst, len(dst))
}

// AppendGetTaskRequest appends a GetTaskRequest (A2A 1.0 §3.1.3).
func AppendGetTaskRequest(dst []byte, p *a2a.GetTaskRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.b = append(e.b, '{')
	e.optional("tenant", p.Tenant)
	e.field("id", p.ID)
	if p.HistoryLength != nil {
		e.number("historyLength", *p.HistoryLength)
	}
	e.b = append(e.b, '}')
	return e.finish(dst, len(dst))
}

// AppendListTasksRequest appends a ListTasksRequest (A2A 1.0 §3.1.4).
func AppendListTasksRequest(dst []byte, p *a2a.ListTasksRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.b = append(e.b, '{')
	e.optional("tenant", p.Tenant)
	e.optional("contextId", p.ContextID)
	if p.Status != a2a.TaskStateUnspecified {
		e.field("status", TaskStateName(p.Status))
	}
	if p.PageSize != nil {
		e.number("pageSize", *p.PageSize)
	}
	e.optional("pageToken", p.PageToken)
	if p.HistoryLength != nil {
		e.number("historyLength", *p.HistoryLength)
	}
	if !p.StatusTimestampAfter.IsZero() {
		e.field("statusTimestampAfter", wirejson.FormatTime(p.StatusTimestampAfter))
	}
	if p.IncludeArtifacts {
		e.boolean("includeArtifacts", true)
	}
	e.b = append(e.b, '}')
	return e.finish(dst, len(dst))
}

// AppendCancelTaskRequest appends a CancelTaskRequest (A2A 1.0 §3.1.5).
func AppendCancelTaskRequest(dst []byte, p *a2a.CancelTaskRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.b = append(e.b, '{')
	e.optional("tenant", p.Tenant)
	e.field("id", p.ID)
	e.metadata(p.Metadata)
	e.b = append(e.b, '}')
	return e.finish(dst, len(dst))
}

// AppendSubscribeToTaskRequest appends a SubscribeToTaskRequest (A2A 1.0
// §3.1.6), which has no metadata.
func AppendSubscribeToTaskRequest(dst []byte, p *a2a.SubscribeToTaskRequest) ([]byte, error) {
	return AppendCancelTaskRequest(dst, &a2a.CancelTaskRequest{Tenant: p.Tenant, ID: p.ID})
}

// AppendPushConfigIDRequest appends a GetTaskPushNotificationConfigRequest
// or DeleteTaskPushNotificationConfigRequest (A2A 1.0 §3.1.8, §3.1.10):
// {tenant, taskId: p.TaskID, id: p.ID}.
func AppendPushConfigIDRequest(dst []byte, p *a2a.GetTaskPushNotificationConfigRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.b = append(e.b, '{')
	e.optional("tenant", p.Tenant)
	e.field("taskId", p.TaskID)
	e.field("id", p.ID)
	e.b = append(e.b, '}')
	return e.finish(dst, len(dst))
}

// AppendListTaskPushNotificationConfigsRequest appends a
// ListTaskPushNotificationConfigsRequest (A2A 1.0 §3.1.9).
func AppendListTaskPushNotificationConfigsRequest(dst []byte, p *a2a.ListTaskPushNotificationConfigsRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.b = append(e.b, '{')
	e.optional("tenant", p.Tenant)
	e.field("taskId", p.TaskID)
	if p.PageSize != nil {
		e.number("pageSize", *p.PageSize)
	}
	e.optional("pageToken", p.PageToken)
	e.b = append(e.b, '}')
	return e.finish(dst, len(dst))
}

// AppendGetExtendedAgentCardRequest appends a GetExtendedAgentCardRequest
// (A2A 1.0 §3.1.11).
func AppendGetExtendedAgentCardRequest(dst []byte, tenant string) ([]byte, error) {
	e := encoder{b: dst}
	e.b = append(e.b, '{')
	e.optional("tenant", tenant)
	e.b = append(e.b, '}')
	return e.finish(dst, len(dst))
}

// GetTaskQuery returns the query of GET /tasks/{id} for p (A2A 1.0 §11.5).
func GetTaskQuery(p *a2a.GetTaskRequest) url.Values {
	q := url.Values{}
	if p.HistoryLength != nil {
		q.Set("historyLength", strconv.Itoa(*p.HistoryLength))
	}
	return q
}

// ListTasksQuery returns the query of GET /tasks for p (A2A 1.0 §11.5).
func ListTasksQuery(p *a2a.ListTasksRequest) url.Values {
	q := url.Values{}
	if p.ContextID != "" {
		q.Set("contextId", p.ContextID)
	}
	if p.Status != a2a.TaskStateUnspecified {
		q.Set("status", TaskStateName(p.Status))
	}
	if p.PageSize != nil {
		q.Set("pageSize", strconv.Itoa(*p.PageSize))
	}
	if p.PageToken != "" {
		q.Set("pageToken", p.PageToken)
	}
	if p.HistoryLength != nil {
		q.Set("historyLength", strconv.Itoa(*p.HistoryLength))
	}
	if !p.StatusTimestampAfter.IsZero() {
		q.Set("statusTimestampAfter", wirejson.FormatTime(p.StatusTimestampAfter))
	}
	if p.IncludeArtifacts {
		q.Set("includeArtifacts", "true")
	}
	return q
}

// ListPushConfigsQuery returns the query of GET
// /tasks/{taskId}/pushNotificationConfigs for p (A2A 1.0 §11.5).
func ListPushConfigsQuery(p *a2a.ListTaskPushNotificationConfigsRequest) url.Values {
	q := url.Values{}
	if p.PageSize != nil {
		q.Set("pageSize", strconv.Itoa(*p.PageSize))
	}
	if p.PageToken != "" {
		q.Set("pageToken", p.PageToken)
	}
	return q
}
