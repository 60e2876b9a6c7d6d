package a2a

// MessageSendParams are the params of message/send and message/stream
// (A2A 0.3.0 §7.1, §7.2).
type MessageSendParams struct {
	Message       Message
	Configuration *MessageSendConfiguration
	Metadata      map[string]any
}

// MessageSendConfiguration tunes a message/send call (A2A 0.3.0 §7.1.1).
// A nil Blocking means true. A nil HistoryLength means "no limit"; 0 means
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

// TaskQueryParams are the params of tasks/get (A2A 0.3.0 §7.3).
type TaskQueryParams struct {
	ID            string
	HistoryLength *int
	Metadata      map[string]any
}

// TaskIDParams are the params of tasks/cancel and tasks/resubscribe
// (A2A 0.3.0 §7.4, §7.9).
type TaskIDParams struct {
	ID       string
	Metadata map[string]any
}

// PushNotificationConfig is where and how a server delivers push
// notifications for a task (A2A 0.3.0 §6.8).
type PushNotificationConfig struct {
	ID             string
	URL            string
	Token          string
	Authentication *PushNotificationAuthenticationInfo
}

// PushNotificationAuthenticationInfo names the schemes (e.g. "Bearer") the
// server uses to authenticate itself to the webhook (A2A 0.3.0 §6.9).
type PushNotificationAuthenticationInfo struct {
	Schemes     []string
	Credentials string
}

// TaskPushNotificationConfig binds a PushNotificationConfig to a task (A2A 0.3.0 §6.10).
type TaskPushNotificationConfig struct {
	TaskID                 string
	PushNotificationConfig PushNotificationConfig
}

// GetTaskPushNotificationConfigParams are the params of
// tasks/pushNotificationConfig/get (A2A 0.3.0 §7.6).
type GetTaskPushNotificationConfigParams struct {
	ID                       string
	PushNotificationConfigID string
	Metadata                 map[string]any
}

// DeleteTaskPushNotificationConfigParams are the params of
// tasks/pushNotificationConfig/delete (A2A 0.3.0 §7.8).
type DeleteTaskPushNotificationConfigParams struct {
	ID                       string
	PushNotificationConfigID string
	Metadata                 map[string]any
}
