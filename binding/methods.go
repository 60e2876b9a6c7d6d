package binding

// A2A 0.3.0 JSON-RPC method names (A2A 0.3.0 §7).
const (
	MethodSendMessage          = "message/send"
	MethodSendStreamingMessage = "message/stream"
	MethodGetTask              = "tasks/get"
	MethodCancelTask           = "tasks/cancel"
	MethodResubscribe          = "tasks/resubscribe"
	MethodSetPushConfig        = "tasks/pushNotificationConfig/set"
	MethodGetPushConfig        = "tasks/pushNotificationConfig/get"
	MethodListPushConfig       = "tasks/pushNotificationConfig/list"
	MethodDeletePushConfig     = "tasks/pushNotificationConfig/delete"
	MethodGetExtendedCard      = "agent/getAuthenticatedExtendedCard"
)

// A2A 1.0 JSON-RPC method names (A2A 1.0 §9.4), which are also the
// operations' names in the HTTP+JSON binding's routes and in telemetry. They never collide with
// the 0.3 names: a request is dispatched by its method, and the
// A2A-Version it names must be the method's.
const (
	Method10SendMessage          = "SendMessage"
	Method10SendStreamingMessage = "SendStreamingMessage"
	Method10GetTask              = "GetTask"
	Method10ListTasks            = "ListTasks"
	Method10CancelTask           = "CancelTask"
	Method10SubscribeToTask      = "SubscribeToTask"
	Method10CreatePushConfig     = "CreateTaskPushNotificationConfig"
	Method10GetPushConfig        = "GetTaskPushNotificationConfig"
	Method10ListPushConfigs      = "ListTaskPushNotificationConfigs"
	Method10DeletePushConfig     = "DeleteTaskPushNotificationConfig"
	Method10GetExtendedCard      = "GetExtendedAgentCard"
)
