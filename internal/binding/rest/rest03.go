package rest

import (
	"net/http"

	"github.com/a2abridge/a2abridge/binding"

	"github.com/a2abridge/a2abridge/a2a"
	v03 "github.com/a2abridge/a2abridge/internal/wire/v03"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// The HTTP+JSON binding of A2A 0.3.0 (§3.2.3, §3.5.6), the Binding New
// makes for a2a.Version03, below an agent's URL and below the Host's
// root for the default agent:
//
//	POST      /v1/message:send                               SendMessageResponse {task} | {message}
//	POST      /v1/message:stream                             SSE of StreamResponse
//	GET       /v1/tasks/{id}?historyLength=N                 Task
//	GET       /v1/tasks?contextId=…&status=…&pageSize=…      {tasks, nextPageToken, …}
//	POST      /v1/tasks/{id}:cancel                          Task
//	GET|POST  /v1/tasks/{id}:subscribe                       SSE of StreamResponse (Last-Event-ID resumes)
//	POST      /v1/tasks/{id}/pushNotificationConfigs         TaskPushNotificationConfig
//	GET       /v1/tasks/{id}/pushNotificationConfigs         {configs}
//	GET       /v1/tasks/{id}/pushNotificationConfigs/{cid}   TaskPushNotificationConfig
//	DELETE    /v1/tasks/{id}/pushNotificationConfigs/{cid}   {}
//	GET       /v1/card                                       the authenticated extended Agent Card (0.3 JSON)
//
// Bodies are the JSON of the A2A 0.3 proto (v10.DecodeREST03SendMessage
// and the other REST03 functions), what the official 0.3 SDKs send
// (interop/V03_REST_NOTES.md). Every success is HTTP 200. An error is
// v10.AppendREST03Error's body (a google.rpc.Status under "error" plus the
// JSON-RPC members code, message, data) with the HTTP status of
// v10.HTTPStatus; an error after a stream began is its last SSE event,
// named "error". Each SSE event's id is the event's sequence number in the
// task's log. There are no tenants in 0.3. Requests must ask for A2A 0.3
// (no A2A-Version, or 0.3); below an agent's URL, a request for 1.0 goes
// to the 1.0 binding with the tenant "v1" instead (Host.Add).

// parseREST03Path routes the path below an agent's URL (escaped, without
// its leading slash) to an operation of the 0.3 binding: "v1/" and a path
// of the 1.0 binding's table (parseRESTPath) other than extendedAgentCard,
// or "v1/card". ok is false for a path that names no route; a path that
// names one with another HTTP method has Op "" and allow set.
func parseREST03Path(method, escaped string) (Route, bool) {
	segs, ok := pathSegments(escaped)
	if !ok || len(segs) < 2 || segs[0] != "v1" {
		return Route{}, false
	}
	switch {
	case len(segs) == 2 && segs[1] == "card":
		return allowRoute(method, http.MethodGet, binding.Method10GetExtendedCard), true
	case len(segs) == 2 && segs[1] == "extendedAgentCard":
		return Route{}, false
	}
	return routeSegments(method, segs[1:])
}

// restCodec03 is the codec of the HTTP+JSON binding of A2A 0.3.0: the
// JSON of the 0.3 proto; push notification configs made here are 0.3
// configs (their notifications carry the 0.3 Task).
var restCodec03 = restCodec{
	version: a2a.Version03,
	sendMessage: func(_ string, body []byte) (a2a.SendMessageRequest, error) {
		return v10.DecodeREST03SendMessage(body)
	},
	taskAction: func(_, id string, body []byte) (a2a.CancelTaskRequest, error) {
		return v10.DecodeREST03TaskAction(id, body)
	},
	createPush: func(_, taskID string, body []byte) (a2a.TaskPushNotificationConfig, error) {
		return v10.DecodeREST03CreatePushConfig(taskID, body)
	},
	sendResult:  v10.AppendREST03SendMessageResponse,
	task:        v10.AppendREST03Event,
	listTasks:   v10.AppendREST03ListTasksResponse,
	pushConfig:  v10.AppendREST03PushConfig,
	pushConfigs: v10.AppendREST03ListPushConfigs,
	card:        v03.MarshalAgentCard,
	streamEvent: v10.AppendREST03StreamResponse,
	appendErr:   v10.AppendREST03Error,
}

// writeREST03Error answers with e as the 0.3 binding's error body
// (v10.AppendREST03Error), with HTTP status status or, when status is 0,
// the one e's code maps to.
func writeREST03Error(w http.ResponseWriter, status int, e *a2a.Error) {
	writeRESTErrorBody(w, status, e, v10.AppendREST03Error)
}
