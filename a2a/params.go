package a2a

import "time"

// MessageSendParams are the params of message/send and message/stream
// (A2A 0.3.0 §7.1, §7.2), SendMessage and SendStreamingMessage (A2A 1.0
// §3.1.1, §3.1.2). Tenant (1.0 only) scopes the call: tasks of one tenant
// are not found from another.
type MessageSendParams struct {
	Tenant        string
	Message       Message
	Configuration *MessageSendConfiguration
	Metadata      map[string]any
}

// MessageSendConfiguration tunes a message/send call (A2A 0.3.0 §7.1.1;
// A2A 1.0 SendMessageConfiguration, whose returnImmediately is the
// negation of Blocking). A nil Blocking means true. A nil HistoryLength means "no limit"; 0 means
// no history in the result.
type MessageSendConfiguration struct {
	AcceptedOutputModes    []string
	Blocking               *bool
	HistoryLength          *int
	PushNotificationConfig *PushNotificationConfig
}

// IsBlocking reports whether the call waits for a final or interrupted state (default true).
func (c *MessageSendConfiguration) IsBlocking() bool {
	return c == nil || c.Blocking == nil || *c.Blocking
}

// TaskQueryParams are the params of tasks/get (A2A 0.3.0 §7.3) and
// GetTask (A2A 1.0 §3.1.3).
type TaskQueryParams struct {
	Tenant        string
	ID            string
	HistoryLength *int
	Metadata      map[string]any
}

// TaskIDParams are the params of tasks/cancel and tasks/resubscribe
// (A2A 0.3.0 §7.4, §7.9), CancelTask and SubscribeToTask (A2A 1.0 §3.1.5,
// §3.1.6), and of listing a task's push notification configs.
type TaskIDParams struct {
	Tenant   string
	ID       string
	Metadata map[string]any
}

// PushNotificationConfig is where and how a server delivers push
// notifications for a task (A2A 0.3.0 §6.8).
//
// ProtocolVersion is not a wire field: it is the protocol version ("0.3",
// the zero value, or "1.0") of the request that created the config, set
// by the codec that decoded it. It decides the shape of the notifications
// (A2A 0.3.0 §9.5: the Task, with X-A2A-Notification-Token; A2A 1.0
// §4.3.3: a StreamResponse, with Authorization from Authentication).
type PushNotificationConfig struct {
	ID              string
	URL             string
	Token           string
	Authentication  *PushNotificationAuthenticationInfo
	ProtocolVersion string
}

// PushNotificationAuthenticationInfo names the schemes (e.g. "Bearer") the
// server uses to authenticate itself to the webhook (A2A 0.3.0 §6.9; A2A
// 1.0 AuthenticationInfo has one scheme: Schemes[0]).
type PushNotificationAuthenticationInfo struct {
	Schemes     []string
	Credentials string
}

// TaskPushNotificationConfig binds a PushNotificationConfig to a task (A2A
// 0.3.0 §6.10; A2A 1.0 §4.3, where the config's fields are flattened into
// it and Tenant scopes it).
type TaskPushNotificationConfig struct {
	Tenant                 string
	TaskID                 string
	PushNotificationConfig PushNotificationConfig
}

// GetTaskPushNotificationConfigParams are the params of
// tasks/pushNotificationConfig/get (A2A 0.3.0 §7.6).
type GetTaskPushNotificationConfigParams struct {
	Tenant                   string
	ID                       string
	PushNotificationConfigID string
	Metadata                 map[string]any
}

// DeleteTaskPushNotificationConfigParams are the params of
// tasks/pushNotificationConfig/delete (A2A 0.3.0 §7.8).
type DeleteTaskPushNotificationConfigParams struct {
	Tenant                   string
	ID                       string
	PushNotificationConfigID string
	Metadata                 map[string]any
}

// ListTasksParams are the params of ListTasks (A2A 1.0 §3.1.4): filters
// (ContextID, Status, StatusTimestampAfter; zero values do not filter),
// paging (PageSize nil means 50, at most 100; PageToken is the previous
// page's NextPageToken, "" for the first page) and shaping (HistoryLength
// as for GetTask; artifacts only when IncludeArtifacts).
type ListTasksParams struct {
	Tenant               string
	ContextID            string
	Status               TaskState
	PageSize             *int
	PageToken            string
	HistoryLength        *int
	StatusTimestampAfter time.Time
	IncludeArtifacts     bool
}

// ListTasksResult is the result of ListTasks (A2A 1.0 §3.1.4): tasks
// newest status timestamp first; NextPageToken is "" on the last page;
// PageSize is the page size used and TotalSize the number of tasks
// matching the filters.
type ListTasksResult struct {
	Tasks         []Task
	NextPageToken string
	PageSize      int
	TotalSize     int
}

// ListTasks page sizes (A2A 1.0 §3.1.4).
const (
	ListTasksDefaultPageSize = 50
	ListTasksMaxPageSize     = 100
)

// ListTaskPushNotificationConfigsParams are the params of
// ListTaskPushNotificationConfigs (A2A 1.0 §3.1.9): the task's configs,
// paged (PageSize nil means the server's default; PageToken is the
// previous page's next page token, "" for the first page).
type ListTaskPushNotificationConfigsParams struct {
	Tenant    string
	TaskID    string
	PageSize  *int
	PageToken string
}
