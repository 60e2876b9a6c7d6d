package a2a

import "time"

// SendMessageRequest sends a message to an agent: SendMessage and
// SendStreamingMessage (A2A 1.0 §3.1.1, §3.1.2), message/send and
// message/stream (A2A 0.3.0 §7.1, §7.2, MessageSendParams). Tenant (1.0
// only) scopes the call: tasks of one tenant are not found from another.
type SendMessageRequest struct {
	Tenant        string
	Message       Message
	Configuration *SendMessageConfiguration
	Metadata      map[string]any
}

// SendMessageConfiguration tunes a SendMessage call (A2A 1.0 §3.1.1,
// whose returnImmediately is the negation of Blocking; A2A 0.3.0 §7.1.1
// MessageSendConfiguration). A nil Blocking means true. A nil
// HistoryLength means "no limit"; 0 means no history in the result.
type SendMessageConfiguration struct {
	AcceptedOutputModes    []string
	Blocking               *bool
	HistoryLength          *int
	PushNotificationConfig *PushNotificationConfig
}

// IsBlocking reports whether the call waits for a final or interrupted state (default true).
func (c *SendMessageConfiguration) IsBlocking() bool {
	return c == nil || c.Blocking == nil || *c.Blocking
}

// GetTaskRequest asks for task ID: GetTask (A2A 1.0 §3.1.3), tasks/get
// (A2A 0.3.0 §7.3, TaskQueryParams). HistoryLength nil means the whole
// history, 0 none.
type GetTaskRequest struct {
	Tenant        string
	ID            string
	HistoryLength *int
	Metadata      map[string]any
}

// CancelTaskRequest asks to cancel task ID: CancelTask (A2A 1.0 §3.1.5),
// tasks/cancel (A2A 0.3.0 §7.4). Tenant (1.0 only) scopes the call.
type CancelTaskRequest struct {
	Tenant   string
	ID       string
	Metadata map[string]any
}

// SubscribeToTaskRequest asks for the event stream of task ID:
// SubscribeToTask (A2A 1.0 §3.1.6), tasks/resubscribe (A2A 0.3.0 §7.9).
// Tenant is carried by 1.0 only, Metadata by 0.3 only.
type SubscribeToTaskRequest struct {
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
	Authentication  *AuthenticationInfo
	ProtocolVersion string
}

// AuthenticationInfo names the schemes (e.g. "Bearer") the server uses to
// authenticate itself to a webhook (A2A 1.0 §4.3 AuthenticationInfo, which
// has one scheme: Schemes[0]; A2A 0.3.0 §6.9
// PushNotificationAuthenticationInfo).
type AuthenticationInfo struct {
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

// GetTaskPushNotificationConfigRequest asks for config ID of task TaskID:
// GetTaskPushNotificationConfig (A2A 1.0 §3.1.8),
// tasks/pushNotificationConfig/get (A2A 0.3.0 §7.6, where ID is
// pushNotificationConfigId and may be empty).
type GetTaskPushNotificationConfigRequest struct {
	Tenant   string
	TaskID   string
	ID       string
	Metadata map[string]any
}

// DeleteTaskPushNotificationConfigRequest asks to delete config ID of task
// TaskID: DeleteTaskPushNotificationConfig (A2A 1.0 §3.1.10),
// tasks/pushNotificationConfig/delete (A2A 0.3.0 §7.8).
type DeleteTaskPushNotificationConfigRequest struct {
	Tenant   string
	TaskID   string
	ID       string
	Metadata map[string]any
}

// ListTasksRequest asks for a page of tasks: ListTasks (A2A 1.0 §3.1.4): filters
// (ContextID, Status, StatusTimestampAfter; zero values do not filter),
// paging (PageSize nil means 50, at most 100; PageToken is the previous
// page's NextPageToken, "" for the first page) and shaping (HistoryLength
// as for GetTask; artifacts only when IncludeArtifacts).
type ListTasksRequest struct {
	Tenant               string
	ContextID            string
	Status               TaskState
	PageSize             *int
	PageToken            string
	HistoryLength        *int
	StatusTimestampAfter time.Time
	IncludeArtifacts     bool
}

// ListTasksResponse is the result of ListTasks (A2A 1.0 §3.1.4): tasks
// newest status timestamp first; NextPageToken is "" on the last page;
// PageSize is the page size used and TotalSize the number of tasks
// matching the filters.
type ListTasksResponse struct {
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

// ListTaskPushNotificationConfigsRequest asks for the push notification
// configs of task TaskID: ListTaskPushNotificationConfigs (A2A 1.0
// §3.1.9), tasks/pushNotificationConfig/list (A2A 0.3.0 §7.7),
// paged (PageSize nil means the server's default; PageToken is the
// previous page's next page token, "" for the first page).
type ListTaskPushNotificationConfigsRequest struct {
	Tenant    string
	TaskID    string
	PageSize  *int
	PageToken string
}
