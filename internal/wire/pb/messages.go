package pb

import (
	"github.com/a2abridge/a2abridge/a2a"
)

// ---- responses: written by a server, read by a client ----

// AppendStreamResponse appends a StreamResponse (A2A 1.0 §3.2.3) holding
// ev: a *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent or
// *a2a.TaskArtifactUpdateEvent. Errors: ErrInvalidUTF8,
// ErrUnsupportedValue, another event type; dst is then as it was.
func AppendStreamResponse(dst []byte, ev a2a.Event) ([]byte, error) {
	e := encoder{b: dst}
	e.event(ev, false)
	return e.finish(dst, len(dst))
}

// EventSeqField is the field of a StreamResponse that carries the event's
// sequence number in its task's log, as a varint, in the streams of a
// request that activates the event-log extension (a2a.ExtensionEventLog):
// the gRPC binding's counterpart of an SSE event's id. Not a field of
// a2a.proto: other decoders skip it as an unknown field.
const EventSeqField = 1 << 20

// AppendStreamResponseSeq is AppendStreamResponse with seq (> 0) in
// EventSeqField.
func AppendStreamResponseSeq(dst []byte, ev a2a.Event, seq int64) ([]byte, error) {
	e := encoder{b: dst}
	e.event(ev, false)
	if seq > 0 {
		e.uvarint(EventSeqField, uint64(seq))
	}
	return e.finish(dst, len(dst))
}

// AppendSendMessageResponse appends a SendMessageResponse (A2A 1.0
// §3.1.1): a *a2a.Task or *a2a.Message. Errors as AppendStreamResponse's.
func AppendSendMessageResponse(dst []byte, ev a2a.Event) ([]byte, error) {
	e := encoder{b: dst}
	e.event(ev, true)
	return e.finish(dst, len(dst))
}

// AppendTask appends a Task (A2A 1.0 §4.1.1), the result of GetTask and
// CancelTask.
func AppendTask(dst []byte, t *a2a.Task) ([]byte, error) {
	e := encoder{b: dst}
	e.task(t, true)
	return e.finish(dst, len(dst))
}

// AppendListTasksResponse appends a ListTasksResponse (A2A 1.0 §3.1.4):
// tasks = 1 (with their artifacts only when includeArtifacts),
// next_page_token = 2, page_size = 3, total_size = 4.
func AppendListTasksResponse(dst []byte, r *a2a.ListTasksResponse, includeArtifacts bool) ([]byte, error) {
	e := encoder{b: dst}
	for i := range r.Tasks {
		at := e.begin(1)
		e.task(&r.Tasks[i], includeArtifacts)
		e.end(at)
	}
	e.str(2, r.NextPageToken)
	e.int32(3, r.PageSize)
	e.int32(4, r.TotalSize)
	return e.finish(dst, len(dst))
}

// AppendTaskPushNotificationConfig appends a TaskPushNotificationConfig
// (A2A 1.0 §4.3.1), the result of Create and GetTaskPushNotificationConfig.
func AppendTaskPushNotificationConfig(dst []byte, c *a2a.TaskPushNotificationConfig) ([]byte, error) {
	e := encoder{b: dst}
	e.pushConfig(c)
	return e.finish(dst, len(dst))
}

// AppendListTaskPushNotificationConfigsResponse appends a
// ListTaskPushNotificationConfigsResponse (A2A 1.0 §3.1.9): configs = 1,
// next_page_token = 2.
func AppendListTaskPushNotificationConfigsResponse(dst []byte, configs []a2a.TaskPushNotificationConfig, nextPageToken string) ([]byte, error) {
	e := encoder{b: dst}
	for i := range configs {
		at := e.begin(1)
		e.pushConfig(&configs[i])
		e.end(at)
	}
	e.str(2, nextPageToken)
	return e.finish(dst, len(dst))
}

// UnmarshalStreamResponse decodes a StreamResponse (A2A 1.0 §3.2.3) into
// a *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent (Final true on a
// state that ends a stream) or *a2a.TaskArtifactUpdateEvent. Errors are
// *a2a.Error InvalidParams naming the field.
func UnmarshalStreamResponse(b []byte) (a2a.Event, error) {
	d := decoder{b: b, index: -1}
	return d.event(false, nil)
}

// UnmarshalStreamResponseSeq is UnmarshalStreamResponse that also returns
// the event's sequence number from EventSeqField (0 when absent).
func UnmarshalStreamResponseSeq(b []byte) (a2a.Event, int64, error) {
	d := decoder{b: b, index: -1}
	var seq int64
	ev, err := d.event(false, &seq)
	return ev, seq, err
}

// UnmarshalSendMessageResponse decodes a SendMessageResponse (A2A 1.0
// §3.1.1): a *a2a.Task or *a2a.Message.
func UnmarshalSendMessageResponse(b []byte) (a2a.Event, error) {
	d := decoder{b: b, index: -1}
	return d.event(true, nil)
}

// UnmarshalTask decodes a Task (A2A 1.0 §4.1.1).
func UnmarshalTask(b []byte) (a2a.Task, error) {
	d := decoder{b: b, index: -1}
	return orZero(d.task())
}

// UnmarshalListTasksResponse decodes a ListTasksResponse (A2A 1.0
// §3.1.4); Tasks is never nil.
func UnmarshalListTasksResponse(b []byte) (a2a.ListTasksResponse, error) {
	r := a2a.ListTasksResponse{Tasks: []a2a.Task{}}
	d := decoder{b: b, index: -1}
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			err = d.sub("tasks", len(r.Tasks), wt, func(s *decoder) error {
				t, err := s.task()
				r.Tasks = append(r.Tasks, t)
				return err
			})
		case 2:
			r.NextPageToken, err = d.str("nextPageToken", wt)
		case 3:
			r.PageSize, err = d.int32("pageSize", wt)
		case 4:
			r.TotalSize, err = d.int32("totalSize", wt)
		default:
			err = d.skip(wt)
		}
		return err
	})
	return orZero(r, err)
}

// UnmarshalTaskPushNotificationConfig decodes a TaskPushNotificationConfig
// (A2A 1.0 §4.3.1).
func UnmarshalTaskPushNotificationConfig(b []byte) (a2a.TaskPushNotificationConfig, error) {
	d := decoder{b: b, index: -1}
	return orZero(d.pushConfig())
}

// UnmarshalListTaskPushNotificationConfigsResponse decodes a
// ListTaskPushNotificationConfigsResponse (A2A 1.0 §3.1.9): the configs
// (never nil) and the next page's token.
func UnmarshalListTaskPushNotificationConfigsResponse(b []byte) ([]a2a.TaskPushNotificationConfig, string, error) {
	configs := []a2a.TaskPushNotificationConfig{}
	var next string
	d := decoder{b: b, index: -1}
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			err = d.sub("configs", len(configs), wt, func(s *decoder) error {
				c, err := s.pushConfig()
				configs = append(configs, c)
				return err
			})
		case 2:
			next, err = d.str("nextPageToken", wt)
		default:
			err = d.skip(wt)
		}
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return configs, next, nil
}

// ---- requests: written by a client, read by a server ----

// AppendSendMessageRequest appends a SendMessageRequest (A2A 1.0
// §3.2.1): tenant = 1, message = 2, configuration = 3
// {accepted_output_modes = 1, task_push_notification_config = 2,
// history_length = 3, return_immediately = 4}, metadata = 4. Blocking
// false is written as return_immediately true.
func AppendSendMessageRequest(dst []byte, p *a2a.SendMessageRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, p.Tenant)
	at := e.begin(2)
	e.message(&p.Message)
	e.end(at)
	if c := p.Configuration; c != nil {
		at := e.begin(3)
		e.strs(1, c.AcceptedOutputModes)
		if c.PushNotificationConfig != nil {
			pat := e.begin(2)
			e.pushConfig(&a2a.TaskPushNotificationConfig{PushNotificationConfig: *c.PushNotificationConfig})
			e.end(pat)
		}
		if c.HistoryLength != nil {
			e.tag(3, wireVarint)
			e.b = appendInt32(e.b, *c.HistoryLength)
		}
		e.boolean(4, !c.IsBlocking())
		e.end(at)
	}
	e.structValue(4, p.Metadata)
	return e.finish(dst, len(dst))
}

// DecodeSendMessageRequest decodes a SendMessageRequest (A2A 1.0 §3.2.1);
// the message is required, and history_length must not be negative. The
// push config's tenant and task id are ignored.
func DecodeSendMessageRequest(b []byte) (a2a.SendMessageRequest, error) {
	var p a2a.SendMessageRequest
	var hasMessage bool
	d := decoder{b: b, index: -1}
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			p.Tenant, err = d.str("tenant", wt)
		case 2:
			hasMessage = true
			err = d.sub("message", -1, wt, func(s *decoder) error { return s.message(&p.Message, true) })
		case 3:
			err = d.sub("configuration", -1, wt, func(s *decoder) error {
				var err error
				p.Configuration, err = s.sendConfig()
				return err
			})
		case 4:
			err = d.structValue("metadata", wt, &p.Metadata)
		default:
			err = d.skip(wt)
		}
		return err
	})
	if err == nil && !hasMessage {
		err = d.fail("message", "required field missing")
	}
	return orZero(p, err)
}

// sendConfig reads a SendMessageConfiguration.
func (d *decoder) sendConfig() (*a2a.SendMessageConfiguration, error) {
	c := &a2a.SendMessageConfiguration{}
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			var s string
			s, err = d.str("acceptedOutputModes", wt)
			c.AcceptedOutputModes = append(c.AcceptedOutputModes, s)
		case 2:
			err = d.sub("taskPushNotificationConfig", -1, wt, func(s *decoder) error {
				pc, err := s.pushConfig()
				c.PushNotificationConfig = &pc.PushNotificationConfig
				return err
			})
		case 3:
			c.HistoryLength, err = d.nonNegative("historyLength", wt)
		case 4:
			var ri bool
			if ri, err = d.boolean("returnImmediately", wt); ri {
				blocking := false
				c.Blocking = &blocking
			}
		default:
			err = d.skip(wt)
		}
		return err
	})
	return c, err
}

// nonNegative reads an optional int32 that must not be negative.
func (d *decoder) nonNegative(name string, wt int) (*int, error) {
	n, err := d.int32(name, wt)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, d.fail(name, "must not be negative")
	}
	return &n, nil
}

// AppendGetTaskRequest appends a GetTaskRequest (A2A 1.0 §3.1.3): tenant
// = 1, id = 2, history_length = 3.
func AppendGetTaskRequest(dst []byte, p *a2a.GetTaskRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, p.Tenant)
	e.str(2, p.ID)
	if p.HistoryLength != nil {
		e.tag(3, wireVarint)
		e.b = appendInt32(e.b, *p.HistoryLength)
	}
	return e.finish(dst, len(dst))
}

// DecodeGetTaskRequest decodes a GetTaskRequest (A2A 1.0 §3.1.3): the id
// is required, history_length must not be negative.
func DecodeGetTaskRequest(b []byte) (a2a.GetTaskRequest, error) {
	var p a2a.GetTaskRequest
	d := decoder{b: b, index: -1}
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			p.Tenant, err = d.str("tenant", wt)
		case 2:
			p.ID, err = d.str("id", wt)
		case 3:
			p.HistoryLength, err = d.nonNegative("historyLength", wt)
		default:
			err = d.skip(wt)
		}
		return err
	})
	if err == nil && p.ID == "" {
		err = d.fail("id", "required field missing")
	}
	return orZero(p, err)
}

// AppendListTasksRequest appends a ListTasksRequest (A2A 1.0 §3.1.4):
// tenant = 1, context_id = 2, status = 3, page_size = 4, page_token = 5,
// history_length = 6, status_timestamp_after = 7, include_artifacts = 8.
func AppendListTasksRequest(dst []byte, p *a2a.ListTasksRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, p.Tenant)
	e.str(2, p.ContextID)
	if p.Status.Valid() {
		e.uvarint(3, uint64(p.Status))
	}
	if p.PageSize != nil {
		e.tag(4, wireVarint)
		e.b = appendInt32(e.b, *p.PageSize)
	}
	e.str(5, p.PageToken)
	if p.HistoryLength != nil {
		e.tag(6, wireVarint)
		e.b = appendInt32(e.b, *p.HistoryLength)
	}
	e.timestamp(7, p.StatusTimestampAfter)
	e.boolean(8, p.IncludeArtifacts)
	return e.finish(dst, len(dst))
}

// DecodeListTasksRequest decodes a ListTasksRequest (A2A 1.0 §3.1.4):
// page_size 1 to 100 when given, history_length not negative, a known
// status (TASK_STATE_UNSPECIFIED does not filter).
func DecodeListTasksRequest(b []byte) (a2a.ListTasksRequest, error) {
	var p a2a.ListTasksRequest
	d := decoder{b: b, index: -1}
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			p.Tenant, err = d.str("tenant", wt)
		case 2:
			p.ContextID, err = d.str("contextId", wt)
		case 3:
			var v uint64
			if v, err = d.varint("status", wt); err == nil {
				if s := a2a.TaskState(v); v <= 8 && s.Valid() {
					p.Status = s
				} else {
					err = d.fail("status", "an unknown task state")
				}
			}
		case 4:
			var n int
			if n, err = d.int32("pageSize", wt); err == nil && n != 0 {
				// 0 is unspecified: a2a-go v2's client (v2.4.0) sets
				// page_size on every request, 0 when its caller named none.
				if n < 1 || n > a2a.ListTasksMaxPageSize {
					err = d.fail("pageSize", "pageSize must be between 1 and 100")
				}
				p.PageSize = &n
			}
		case 5:
			p.PageToken, err = d.str("pageToken", wt)
		case 6:
			p.HistoryLength, err = d.nonNegative("historyLength", wt)
		case 7:
			err = d.timestamp("statusTimestampAfter", wt, &p.StatusTimestampAfter)
		case 8:
			p.IncludeArtifacts, err = d.boolean("includeArtifacts", wt)
		default:
			err = d.skip(wt)
		}
		return err
	})
	return orZero(p, err)
}

// AppendCancelTaskRequest appends a CancelTaskRequest (A2A 1.0 §3.1.5):
// tenant = 1, id = 2, metadata = 3.
func AppendCancelTaskRequest(dst []byte, p *a2a.CancelTaskRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, p.Tenant)
	e.str(2, p.ID)
	e.structValue(3, p.Metadata)
	return e.finish(dst, len(dst))
}

// DecodeCancelTaskRequest decodes a CancelTaskRequest (A2A 1.0 §3.1.5);
// the id is required.
func DecodeCancelTaskRequest(b []byte) (a2a.CancelTaskRequest, error) {
	var p a2a.CancelTaskRequest
	d := decoder{b: b, index: -1}
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			p.Tenant, err = d.str("tenant", wt)
		case 2:
			p.ID, err = d.str("id", wt)
		case 3:
			err = d.structValue("metadata", wt, &p.Metadata)
		default:
			err = d.skip(wt)
		}
		return err
	})
	if err == nil && p.ID == "" {
		err = d.fail("id", "required field missing")
	}
	return orZero(p, err)
}

// AppendSubscribeToTaskRequest appends a SubscribeToTaskRequest (A2A 1.0
// §3.1.6): tenant = 1, id = 2.
func AppendSubscribeToTaskRequest(dst []byte, p *a2a.SubscribeToTaskRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, p.Tenant)
	e.str(2, p.ID)
	return e.finish(dst, len(dst))
}

// DecodeSubscribeToTaskRequest decodes a SubscribeToTaskRequest (A2A 1.0
// §3.1.6): tenant = 1, id = 2 (required).
func DecodeSubscribeToTaskRequest(b []byte) (a2a.SubscribeToTaskRequest, error) {
	var p a2a.SubscribeToTaskRequest
	d := decoder{b: b, index: -1}
	err := d.flat([]flatField{{"tenant", &p.Tenant, false}, {"id", &p.ID, true}})
	return orZero(p, err)
}

// DecodeTaskPushNotificationConfig decodes the request of
// CreateTaskPushNotificationConfig, a TaskPushNotificationConfig (A2A 1.0
// §3.1.7): task_id and url are required, id may be empty (the server
// assigns one).
func DecodeTaskPushNotificationConfig(b []byte) (a2a.TaskPushNotificationConfig, error) {
	d := decoder{b: b, index: -1}
	c, err := d.pushConfig()
	if err == nil && c.TaskID == "" {
		err = d.fail("taskId", "required field missing")
	}
	return orZero(c, err)
}

// AppendPushConfigIDRequest appends a GetTaskPushNotificationConfigRequest
// or DeleteTaskPushNotificationConfigRequest (A2A 1.0 §3.1.8, §3.1.10):
// tenant = 1, task_id = 2, id = 3.
func AppendPushConfigIDRequest(dst []byte, p *a2a.GetTaskPushNotificationConfigRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, p.Tenant)
	e.str(2, p.TaskID)
	e.str(3, p.ID)
	return e.finish(dst, len(dst))
}

// DecodePushConfigIDRequest decodes a GetTaskPushNotificationConfigRequest
// or DeleteTaskPushNotificationConfigRequest (A2A 1.0 §3.1.8, §3.1.10):
// task_id and id are required.
func DecodePushConfigIDRequest(b []byte) (a2a.GetTaskPushNotificationConfigRequest, error) {
	var p a2a.GetTaskPushNotificationConfigRequest
	d := decoder{b: b, index: -1}
	err := d.flat([]flatField{{"tenant", &p.Tenant, false}, {"taskId", &p.TaskID, true}, {"id", &p.ID, true}})
	return orZero(p, err)
}

// AppendListTaskPushNotificationConfigsRequest appends a
// ListTaskPushNotificationConfigsRequest (A2A 1.0 §3.1.9): task_id = 1,
// page_size = 2, page_token = 3, tenant = 4.
func AppendListTaskPushNotificationConfigsRequest(dst []byte, p *a2a.ListTaskPushNotificationConfigsRequest) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, p.TaskID)
	if p.PageSize != nil {
		e.int32(2, *p.PageSize)
	}
	e.str(3, p.PageToken)
	e.str(4, p.Tenant)
	return e.finish(dst, len(dst))
}

// DecodeListTaskPushNotificationConfigsRequest decodes a
// ListTaskPushNotificationConfigsRequest (A2A 1.0 §3.1.9): task_id is
// required; page_size must not be negative (0 is unset).
func DecodeListTaskPushNotificationConfigsRequest(b []byte) (a2a.ListTaskPushNotificationConfigsRequest, error) {
	var p a2a.ListTaskPushNotificationConfigsRequest
	d := decoder{b: b, index: -1}
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			p.TaskID, err = d.str("taskId", wt)
		case 2:
			var n *int
			if n, err = d.nonNegative("pageSize", wt); err == nil && *n > 0 {
				p.PageSize = n
			}
		case 3:
			p.PageToken, err = d.str("pageToken", wt)
		case 4:
			p.Tenant, err = d.str("tenant", wt)
		default:
			err = d.skip(wt)
		}
		return err
	})
	if err == nil && p.TaskID == "" {
		err = d.fail("taskId", "required field missing")
	}
	return orZero(p, err)
}

// AppendGetExtendedAgentCardRequest appends a GetExtendedAgentCardRequest
// (A2A 1.0 §3.1.11): tenant = 1.
func AppendGetExtendedAgentCardRequest(dst []byte, tenant string) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, tenant)
	return e.finish(dst, len(dst))
}

// DecodeGetExtendedAgentCardRequest decodes a GetExtendedAgentCardRequest
// (A2A 1.0 §3.1.11): its tenant.
func DecodeGetExtendedAgentCardRequest(b []byte) (string, error) {
	var tenant string
	d := decoder{b: b, index: -1}
	err := d.flat([]flatField{{"tenant", &tenant, false}})
	return orZero(tenant, err)
}

// flatField is a string field of a message that has no other kind:
// field number i+1 in flat's list, its JSON name, where it goes, and
// whether it is required.
type flatField struct {
	name     string
	to       *string
	required bool
}

// flat reads a message whose fields, numbered from 1, are the strings of
// fields; other fields are skipped, and a required one must not be "".
func (d *decoder) flat(fields []flatField) error {
	err := d.fields(func(num, wt int) error {
		if num < 1 || num > len(fields) {
			return d.skip(wt)
		}
		var err error
		f := fields[num-1]
		*f.to, err = d.str(f.name, wt)
		return err
	})
	for _, f := range fields {
		if err == nil && f.required && *f.to == "" {
			err = d.fail(f.name, "required field missing")
		}
	}
	return err
}

// appendInt32 appends v as an int32 varint (ten bytes when negative).
func appendInt32(b []byte, v int) []byte {
	x := uint64(int64(int32(v)))
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

// orZero returns v, or T's zero value with err when err is not nil.
func orZero[T any](v T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}
