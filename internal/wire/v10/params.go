package v10

import (
	"github.com/a2abridge/a2abridge/a2a"
)

// Request decoders for the JSON-RPC binding (A2A 1.0 §9): raw is the
// "params" member of the request (nil when absent). Errors are *a2a.Error
// InvalidParams (-32602) whose data names the field as a JSON Pointer
// under /params ("/params/message/parts/0/raw").

var (
	sendMessageFields    = message("SendMessageRequest")
	sendConfigFields     = message("SendMessageConfiguration")
	getTaskFields        = message("GetTaskRequest")
	listTasksFields      = message("ListTasksRequest")
	taskIDFields         = message("CancelTaskRequest") // and SubscribeToTask's
	pushConfigIDFields   = message("GetTaskPushNotificationConfigRequest")
	listPushConfigFields = message("ListTaskPushNotificationConfigsRequest")
	tenantFields         = message("GetExtendedAgentCardRequest")
)

const paramsPrefix = "/params"

// DecodeSendMessageRequest decodes the params of SendMessage and
// SendStreamingMessage, a SendMessageRequest (A2A 1.0 §3.2.1): tenant,
// message (required, with at least one part), configuration
// (acceptedOutputModes; taskPushNotificationConfig, whose tenant and taskId
// are ignored; historyLength >= 0; returnImmediately, the negation of
// a2a.SendMessageConfiguration.Blocking: true gives Blocking false, false
// or absent leaves Blocking nil, blocking) and metadata.
func DecodeSendMessageRequest(raw []byte) (a2a.SendMessageRequest, error) {
	return decodeSendMessage(raw, paramsPrefix, false)
}

func decodeSendMessage(raw []byte, prefix string, rest bool) (a2a.SendMessageRequest, error) {
	var p a2a.SendMessageRequest
	var hasMessage bool
	d := newDecoder(raw, prefix, rest)
	defer d.release()
	err := d.readObject(raw, false, sendMessageFields, func(name string) error {
		var err error
		switch name {
		case "tenant":
			p.Tenant, err = d.str()
		case "message":
			p.Message, hasMessage, err = d.message(true)
		case "configuration":
			p.Configuration, err = d.sendConfig()
		case "metadata":
			p.Metadata, err = d.structValue()
		}
		return err
	}, func() error {
		if !hasMessage {
			return d.missing("message")
		}
		return nil
	})
	return orZero(p, err)
}

// sendConfig reads a SendMessageConfiguration (A2A 1.0 §3.2.2).
func (d *decoder) sendConfig() (*a2a.SendMessageConfiguration, error) {
	c := &a2a.SendMessageConfiguration{}
	present, err := d.object(sendConfigFields, func(name string) error {
		var err error
		switch name {
		case "acceptedOutputModes":
			c.AcceptedOutputModes, err = d.strs()
		case "taskPushNotificationConfig":
			var pc a2a.TaskPushNotificationConfig
			var ok bool
			if pc, ok, err = d.pushConfig(); ok && err == nil {
				c.PushNotificationConfig = &pc.PushNotificationConfig
			}
		case "historyLength":
			c.HistoryLength, err = d.nonNegative()
		case "returnImmediately":
			var ri bool
			if ri, err = d.boolean(); ri {
				blocking := false
				c.Blocking = &blocking
			}
		}
		return err
	})
	if !present {
		c = nil
	}
	return c, err
}

// DecodeGetTaskRequest decodes the params of GetTask, a GetTaskRequest
// (A2A 1.0 §3.1.3): tenant, id (required), historyLength (>= 0).
func DecodeGetTaskRequest(raw []byte) (a2a.GetTaskRequest, error) {
	var p a2a.GetTaskRequest
	d := newDecoder(raw, paramsPrefix, false)
	defer d.release()
	err := d.readObject(raw, true, getTaskFields, func(name string) error {
		var err error
		switch name {
		case "tenant":
			p.Tenant, err = d.str()
		case "id":
			p.ID, err = d.str()
		case "historyLength":
			p.HistoryLength, err = d.nonNegative()
		}
		return err
	}, func() error { return d.required("id", p.ID) })
	return orZero(p, err)
}

// DecodeListTasksRequest decodes the params of ListTasks, a
// ListTasksRequest (A2A 1.0 §3.1.4); all fields are optional: tenant,
// contextId, status (an enum name or number; TASK_STATE_UNSPECIFIED does
// not filter), pageSize (1 to 100), pageToken, historyLength (>= 0),
// statusTimestampAfter (RFC 3339), includeArtifacts.
func DecodeListTasksRequest(raw []byte) (a2a.ListTasksRequest, error) {
	var p a2a.ListTasksRequest
	d := newDecoder(raw, paramsPrefix, false)
	defer d.release()
	err := d.readObject(raw, true, listTasksFields, func(name string) error {
		var err error
		switch name {
		case "tenant":
			p.Tenant, err = d.str()
		case "contextId":
			p.ContextID, err = d.str()
		case "status":
			var n int
			if n, err = d.enum(taskStateNames, "task state"); err == nil && n != 0 {
				p.Status = a2a.TaskState(n)
			}
		case "pageSize":
			var n int
			if n, err = d.int32(); err == nil {
				if n < 1 || n > a2a.ListTasksMaxPageSize {
					err = d.fail("pageSize must be between 1 and 100")
				}
				p.PageSize = &n
			}
		case "pageToken":
			p.PageToken, err = d.str()
		case "historyLength":
			p.HistoryLength, err = d.nonNegative()
		case "statusTimestampAfter":
			p.StatusTimestampAfter, err = d.timestamp()
		case "includeArtifacts":
			p.IncludeArtifacts, err = d.boolean()
		}
		return err
	}, nil)
	return orZero(p, err)
}

// DecodeCancelTaskRequest decodes the params of CancelTask, a
// CancelTaskRequest (A2A 1.0 §3.1.5): tenant, id (required), metadata.
func DecodeCancelTaskRequest(raw []byte) (a2a.CancelTaskRequest, error) {
	return decodeTaskID(raw, paramsPrefix, false, "")
}

// DecodeSubscribeToTaskRequest decodes the params of SubscribeToTask, a
// SubscribeToTaskRequest (A2A 1.0 §3.1.6): tenant, id (required).
func DecodeSubscribeToTaskRequest(raw []byte) (a2a.SubscribeToTaskRequest, error) {
	p, err := decodeTaskID(raw, paramsPrefix, false, "")
	return a2a.SubscribeToTaskRequest(p), err
}

// decodeTaskID reads {tenant, id, metadata}; pathID, when not "", is the
// id of a REST path, which a body's id must match.
func decodeTaskID(raw []byte, prefix string, rest bool, pathID string) (a2a.CancelTaskRequest, error) {
	var p a2a.CancelTaskRequest
	d := newDecoder(raw, prefix, rest)
	defer d.release()
	err := d.readObject(raw, true, taskIDFields, func(name string) error {
		var err error
		switch name {
		case "tenant":
			p.Tenant, err = d.str()
		case "id":
			if p.ID, err = d.str(); err == nil && pathID != "" && p.ID != "" && p.ID != pathID {
				err = d.fail("id differs from the id in the path")
			}
		case "metadata":
			p.Metadata, err = d.structValue()
		}
		return err
	}, func() error {
		if pathID != "" {
			return nil
		}
		return d.required("id", p.ID)
	})
	return orZero(p, err)
}

// DecodeTaskPushNotificationConfig decodes the params of
// CreateTaskPushNotificationConfig, a TaskPushNotificationConfig (A2A 1.0
// §3.1.7, flattened): tenant, id (optional; the server may assign one),
// taskId (required), url (required), token, authentication {scheme
// (required), credentials}. The one scheme is Authentication.Schemes[0].
func DecodeTaskPushNotificationConfig(raw []byte) (a2a.TaskPushNotificationConfig, error) {
	return decodeCreatePushConfig(raw, paramsPrefix, false, "")
}

func decodeCreatePushConfig(raw []byte, prefix string, rest bool, pathTaskID string) (a2a.TaskPushNotificationConfig, error) {
	d := newDecoder(raw, prefix, rest)
	defer d.release()
	return readDocument(d, raw, false, func() (a2a.TaskPushNotificationConfig, error) {
		c, _, err := d.pushConfig()
		switch {
		case err != nil:
		case pathTaskID == "" && c.TaskID == "":
			err = d.missing("taskId")
		case pathTaskID != "" && c.TaskID != "" && c.TaskID != pathTaskID:
			err = a2a.InvalidParams(d.ptr()+"/taskId", "taskId differs from the task id in the path")
		}
		return c, err
	})
}

// DecodeGetTaskPushNotificationConfigRequest decodes the params of
// GetTaskPushNotificationConfig (A2A 1.0 §3.1.8): tenant, taskId and id
// (both required): TaskID and ID.
func DecodeGetTaskPushNotificationConfigRequest(raw []byte) (a2a.GetTaskPushNotificationConfigRequest, error) {
	return decodePushConfigID(raw)
}

// DecodeDeleteTaskPushNotificationConfigRequest decodes the params of
// DeleteTaskPushNotificationConfig (A2A 1.0 §3.1.10): tenant, taskId and
// id (both required).
func DecodeDeleteTaskPushNotificationConfigRequest(raw []byte) (a2a.DeleteTaskPushNotificationConfigRequest, error) {
	p, err := decodePushConfigID(raw)
	return a2a.DeleteTaskPushNotificationConfigRequest(p), err
}

func decodePushConfigID(raw []byte) (a2a.GetTaskPushNotificationConfigRequest, error) {
	var p a2a.GetTaskPushNotificationConfigRequest
	d := newDecoder(raw, paramsPrefix, false)
	defer d.release()
	err := d.readObject(raw, true, pushConfigIDFields, func(name string) error {
		var err error
		switch name {
		case "tenant":
			p.Tenant, err = d.str()
		case "taskId":
			p.TaskID, err = d.str()
		case "id":
			p.ID, err = d.str()
		}
		return err
	}, func() error {
		if err := d.required("taskId", p.TaskID); err != nil {
			return err
		}
		return d.required("id", p.ID)
	})
	return orZero(p, err)
}

// DecodeListTaskPushNotificationConfigsRequest decodes the params of
// ListTaskPushNotificationConfigs (A2A 1.0 §3.1.9): tenant, taskId
// (required), pageSize (>= 0; 0 is unset), pageToken.
func DecodeListTaskPushNotificationConfigsRequest(raw []byte) (a2a.ListTaskPushNotificationConfigsRequest, error) {
	var p a2a.ListTaskPushNotificationConfigsRequest
	d := newDecoder(raw, paramsPrefix, false)
	defer d.release()
	err := d.readObject(raw, true, listPushConfigFields, func(name string) error {
		var err error
		switch name {
		case "tenant":
			p.Tenant, err = d.str()
		case "taskId":
			p.TaskID, err = d.str()
		case "pageSize":
			var n *int
			if n, err = d.nonNegative(); err == nil && *n > 0 {
				p.PageSize = n
			}
		case "pageToken":
			p.PageToken, err = d.str()
		}
		return err
	}, func() error { return d.required("taskId", p.TaskID) })
	return orZero(p, err)
}

// DecodeGetExtendedAgentCardRequest decodes the params of
// GetExtendedAgentCard (A2A 1.0 §3.1.11), which may be absent: the tenant.
func DecodeGetExtendedAgentCardRequest(raw []byte) (tenant string, err error) {
	d := newDecoder(raw, paramsPrefix, false)
	defer d.release()
	err = d.readObject(raw, true, tenantFields, func(string) error {
		var err error
		tenant, err = d.str()
		return err
	}, nil)
	return orZero(tenant, err)
}
