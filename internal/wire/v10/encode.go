package v10

import (
	"errors"
	"strconv"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// The encoders write A2A 1.0 JSON (ProtoJSON: lowerCamelCase names, enums
// by name, no "kind") straight into the caller's buffer. Members come in
// the order of a2a.proto; zero values are omitted as ProtoJSON omits them,
// except the fields a2a.proto marks REQUIRED (A2A 1.0 §5.7), which are
// always written. Timestamps are RFC 3339 in UTC with milliseconds
// (A2A 1.0 §5.6.1). encode_test.go checks the output byte for byte against
// json/v2 encoding of plain wire structs, and against the A2A 1.0 JSON
// Schema.
//
// Each Append function appends to dst and returns the extended buffer; on
// error it returns dst unchanged. Errors: a string that is not valid UTF-8,
// a structured value JSON cannot hold (a NaN, a json.Number that is not a
// number, a channel), a nil event.

// errUnknownEvent is returned for a nil or unknown event.
var errUnknownEvent = errors.New("v10: unknown or nil event")

// encoder writes into b; its first error sticks (later writes go on, and
// the caller drops the output).
type encoder struct {
	b   []byte
	err error
	v03 bool // write the JSON of the A2A 0.3 proto (proto03.go), not 1.0's
}

func (e *encoder) setErr(err error) {
	if err != nil && e.err == nil {
		e.err = err
	}
}

// str appends v as a JSON string.
func (e *encoder) str(v string) {
	var err error
	e.b, err = wirejson.AppendString(e.b, v)
	e.setErr(err)
}

// member appends `"name":`, preceded by a comma unless it is the
// object's first member.
func (e *encoder) member(name string) {
	if e.b[len(e.b)-1] != '{' {
		e.b = append(e.b, ',')
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, name...)
	e.b = append(e.b, '"', ':')
}

// array appends s as a JSON array, each element written by elem.
func array[T any](e *encoder, s []T, elem func(*encoder, *T)) {
	e.b = append(e.b, '[')
	for i := range s {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		elem(e, &s[i])
	}
	e.b = append(e.b, ']')
}

// field appends a string member.
func (e *encoder) field(name, v string) {
	e.member(name)
	e.str(v)
}

// optional appends a string member unless v is "".
func (e *encoder) optional(name, v string) {
	if v != "" {
		e.member(name)
		e.str(v)
	}
}

// boolean appends a bool member.
func (e *encoder) boolean(name string, v bool) {
	e.member(name)
	e.b = strconv.AppendBool(e.b, v)
}

// number appends an integer member.
func (e *encoder) number(name string, v int) {
	e.member(name)
	e.b = strconv.AppendInt(e.b, int64(v), 10)
}

// stringList appends a string array member unless ss is empty.
func (e *encoder) stringList(name string, ss []string) {
	if len(ss) > 0 {
		e.member(name)
		e.strings(ss)
	}
}

// strings appends ss as an array (nil is []).
func (e *encoder) strings(ss []string) {
	var err error
	e.b, err = wirejson.AppendStrings(e.b, ss)
	e.setErr(err)
}

// value appends a structured value.
func (e *encoder) value(v any) {
	var err error
	e.b, err = wirejson.AppendAny(e.b, v)
	e.setErr(err)
}

// object appends m as an object (nil is {}).
func (e *encoder) object(m map[string]any) {
	var err error
	e.b, err = wirejson.AppendObject(e.b, m)
	e.setErr(err)
}

// metadata appends a metadata member unless m is empty.
func (e *encoder) metadata(m map[string]any) {
	if len(m) > 0 {
		e.member("metadata")
		e.object(m)
	}
}

// part appends a Part (A2A 1.0 §4.1.6). A part without content is written
// as an empty text part, so the output stays valid.
func (e *encoder) part(p *a2a.Part) {
	if e.v03 {
		e.part03(p)
		return
	}
	switch c := p.Content.(type) {
	case a2a.Text:
		e.b = append(e.b, `{"text":`...)
		e.str(string(c))
	case a2a.Raw:
		e.b = append(e.b, `{"raw":`...)
		e.b = wirejson.AppendBase64(e.b, c)
	case a2a.URL:
		e.b = append(e.b, `{"url":`...)
		e.str(string(c))
	case a2a.Data:
		e.b = append(e.b, `{"data":`...)
		e.value(c.Value)
	default:
		e.b = append(e.b, `{"text":""}`...)
		return
	}
	e.metadata(p.Metadata)
	e.optional("filename", p.Filename)
	e.optional("mediaType", p.MediaType)
	e.b = append(e.b, '}')
}

func (e *encoder) parts(ps []a2a.Part) {
	array(e, ps, (*encoder).part)
}

// message appends a Message (A2A 1.0 §4.1.4).
func (e *encoder) message(m *a2a.Message) {
	e.b = append(e.b, `{"messageId":`...)
	e.str(m.MessageID)
	e.optional("contextId", m.ContextID)
	e.optional("taskId", m.TaskID)
	e.member("role")
	e.b = append(e.b, '"')
	e.b = append(e.b, roleName(m.Role)...)
	e.b = append(e.b, '"')
	if e.v03 {
		e.member("content")
	} else {
		e.member("parts")
	}
	e.parts(m.Parts)
	e.metadata(m.Metadata)
	e.stringList("extensions", m.Extensions)
	e.stringList("referenceTaskIds", m.ReferenceTaskIDs)
	e.b = append(e.b, '}')
}

// status appends a TaskStatus (A2A 1.0 §4.1.2).
func (e *encoder) status(s *a2a.TaskStatus) {
	e.b = append(e.b, `{"state":"`...)
	if e.v03 {
		e.b = append(e.b, taskStateName03(s.State)...)
	} else {
		e.b = append(e.b, TaskStateName(s.State)...)
	}
	e.b = append(e.b, '"')
	if s.Message != nil {
		e.member("message")
		e.message(s.Message)
	}
	if !s.Timestamp.IsZero() {
		e.b = append(e.b, `,"timestamp":"`...)
		e.b = wirejson.AppendTime(e.b, s.Timestamp)
		e.b = append(e.b, '"')
	}
	e.b = append(e.b, '}')
}

// artifact appends an Artifact (A2A 1.0 §4.1.7).
func (e *encoder) artifact(a *a2a.Artifact) {
	e.b = append(e.b, `{"artifactId":`...)
	e.str(a.ArtifactID)
	e.optional("name", a.Name)
	e.optional("description", a.Description)
	e.member("parts")
	e.parts(a.Parts)
	e.metadata(a.Metadata)
	e.stringList("extensions", a.Extensions)
	e.b = append(e.b, '}')
}

// Artifact modes of a Task: ListTasks omits them unless asked, and then
// writes them even when empty (A2A 1.0 §3.1.4).
const (
	artifactsIfAny = iota
	artifactsNever
	artifactsAlways
)

// task appends a Task (A2A 1.0 §4.1.1).
func (e *encoder) task(t *a2a.Task, artifacts int) {
	e.b = append(e.b, `{"id":`...)
	e.str(t.ID)
	e.optional("contextId", t.ContextID)
	e.member("status")
	e.status(&t.Status)
	if artifacts == artifactsAlways || artifacts == artifactsIfAny && len(t.Artifacts) > 0 {
		e.member("artifacts")
		array(e, t.Artifacts, (*encoder).artifact)
	}
	if len(t.History) > 0 {
		e.member("history")
		array(e, t.History, (*encoder).message)
	}
	e.metadata(t.Metadata)
	e.b = append(e.b, '}')
}

// statusUpdate appends a TaskStatusUpdateEvent (A2A 1.0 §4.2.1); Final
// has no A2A 1.0 field and is written only in the 0.3 proto's JSON.
func (e *encoder) statusUpdate(v *a2a.TaskStatusUpdateEvent) {
	e.b = append(e.b, `{"taskId":`...)
	e.str(v.TaskID)
	e.field("contextId", v.ContextID)
	e.member("status")
	e.status(&v.Status)
	if e.v03 && v.Final {
		e.b = append(e.b, `,"final":true`...)
	}
	e.metadata(v.Metadata)
	e.b = append(e.b, '}')
}

// artifactUpdate appends a TaskArtifactUpdateEvent (A2A 1.0 §4.2.2).
func (e *encoder) artifactUpdate(v *a2a.TaskArtifactUpdateEvent) {
	e.b = append(e.b, `{"taskId":`...)
	e.str(v.TaskID)
	e.field("contextId", v.ContextID)
	e.member("artifact")
	e.artifact(&v.Artifact)
	if v.Append {
		e.b = append(e.b, `,"append":true`...)
	}
	if v.LastChunk {
		e.b = append(e.b, `,"lastChunk":true`...)
	}
	e.metadata(v.Metadata)
	e.b = append(e.b, '}')
}

// event appends the bare object of an event; wrap is the StreamResponse
// member name to wrap it in ("" for none). It reports false for a nil or
// unknown event.
func (e *encoder) event(ev a2a.Event, wrapped bool) bool {
	var name string
	switch v := ev.(type) {
	case *a2a.Task:
		if v == nil {
			return false
		}
		name = `{"task":`
	case *a2a.Message:
		if v == nil {
			return false
		}
		name = `{"message":`
	case *a2a.TaskStatusUpdateEvent:
		if v == nil {
			return false
		}
		name = `{"statusUpdate":`
	case *a2a.TaskArtifactUpdateEvent:
		if v == nil {
			return false
		}
		name = `{"artifactUpdate":`
	default:
		return false
	}
	if wrapped {
		e.b = append(e.b, name...)
	}
	switch v := ev.(type) {
	case *a2a.Task:
		e.task(v, artifactsIfAny)
	case *a2a.Message:
		e.message(v)
	case *a2a.TaskStatusUpdateEvent:
		e.statusUpdate(v)
	case *a2a.TaskArtifactUpdateEvent:
		e.artifactUpdate(v)
	}
	if wrapped {
		e.b = append(e.b, '}')
	}
	return true
}

// finish returns the encoder's buffer, or dst[:n] and the error.
func (e *encoder) finish(dst []byte, n int) ([]byte, error) {
	if e.err != nil {
		return dst[:n], e.err
	}
	return e.b, nil
}

// AppendEvent appends the A2A 1.0 JSON object of a *a2a.Task,
// *a2a.Message, *a2a.TaskStatusUpdateEvent or *a2a.TaskArtifactUpdateEvent
// (A2A 1.0 §4.1.1, §4.1.4, §4.2.1, §4.2.2), unwrapped: the result of
// GetTask and CancelTask. A status update's Final is not written (A2A 1.0
// has no such field; a stream ends on a terminal or interrupted state).
func AppendEvent(dst []byte, ev a2a.Event) ([]byte, error) {
	e := encoder{b: dst}
	if !e.event(ev, false) {
		return dst, errUnknownEvent
	}
	return e.finish(dst, len(dst))
}

// AppendTask appends a Task (A2A 1.0 §4.1.1), the result of GetTask and
// CancelTask.
func AppendTask(dst []byte, t *a2a.Task) ([]byte, error) { return AppendEvent(dst, t) }

// AppendStreamResponse appends a StreamResponse (A2A 1.0 §3.2.3): the
// event wrapped in {"task": …}, {"message": …}, {"statusUpdate": …} or
// {"artifactUpdate": …} — one frame of SendStreamingMessage and
// SubscribeToTask, and the body of a push notification (A2A 1.0 §4.3.3).
func AppendStreamResponse(dst []byte, ev a2a.Event) ([]byte, error) {
	e := encoder{b: dst}
	if !e.event(ev, true) {
		return dst, errUnknownEvent
	}
	return e.finish(dst, len(dst))
}

// AppendSendMessageResponse appends a SendMessageResponse (A2A 1.0 §9.4.1,
// §11.4): {"task": …} or {"message": …}. Other events are errors.
func AppendSendMessageResponse(dst []byte, ev a2a.Event) ([]byte, error) {
	switch v := ev.(type) {
	case *a2a.Task, *a2a.Message:
		return AppendStreamResponse(dst, v)
	}
	return dst, errUnknownEvent
}

// AppendListTasksResponse appends a ListTasksResponse (A2A 1.0 §3.1.4):
// tasks, nextPageToken (always present, "" on the last page), pageSize and
// totalSize. Unless includeArtifacts, the tasks' artifacts member is left
// out entirely; with it, it is written even when empty.
func AppendListTasksResponse(dst []byte, r *a2a.ListTasksResponse, includeArtifacts bool) ([]byte, error) {
	e := encoder{b: dst}
	e.listTasks(r, includeArtifacts)
	return e.finish(dst, len(dst))
}

// listTasks appends a ListTasksResponse (AppendListTasksResponse).
func (e *encoder) listTasks(r *a2a.ListTasksResponse, includeArtifacts bool) {
	mode := artifactsNever
	if includeArtifacts {
		mode = artifactsAlways
	}
	e.b = append(e.b, `{"tasks":[`...)
	for i := range r.Tasks {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.task(&r.Tasks[i], mode)
	}
	e.b = append(e.b, ']')
	e.field("nextPageToken", r.NextPageToken)
	e.number("pageSize", r.PageSize)
	e.number("totalSize", r.TotalSize)
	e.b = append(e.b, '}')
}

// pushConfig appends a TaskPushNotificationConfig (A2A 1.0 §4.3.1,
// flattened). The one authentication scheme is Schemes[0].
func (e *encoder) pushConfig(c *a2a.TaskPushNotificationConfig) {
	e.b = append(e.b, '{')
	e.optional("tenant", c.Tenant)
	e.optional("id", c.PushNotificationConfig.ID)
	e.optional("taskId", c.TaskID)
	e.field("url", c.PushNotificationConfig.URL)
	e.optional("token", c.PushNotificationConfig.Token)
	if a := c.PushNotificationConfig.Authentication; a != nil {
		scheme := ""
		if len(a.Schemes) > 0 {
			scheme = a.Schemes[0]
		}
		e.member("authentication")
		e.b = append(e.b, `{"scheme":`...)
		e.str(scheme)
		e.optional("credentials", a.Credentials)
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, '}')
}

// AppendTaskPushNotificationConfig appends a TaskPushNotificationConfig
// (A2A 1.0 §4.3.1): the result of Create and GetTaskPushNotificationConfig.
func AppendTaskPushNotificationConfig(dst []byte, c *a2a.TaskPushNotificationConfig) ([]byte, error) {
	e := encoder{b: dst}
	e.pushConfig(c)
	return e.finish(dst, len(dst))
}

// AppendListTaskPushNotificationConfigsResponse appends a
// ListTaskPushNotificationConfigsResponse (A2A 1.0 §3.1.9): {"configs":
// […], "nextPageToken": …}; configs is always written, the token when not "".
func AppendListTaskPushNotificationConfigsResponse(dst []byte, configs []a2a.TaskPushNotificationConfig, nextPageToken string) ([]byte, error) {
	e := encoder{b: dst}
	e.b = append(e.b, `{"configs":`...)
	array(&e, configs, (*encoder).pushConfig)
	e.optional("nextPageToken", nextPageToken)
	e.b = append(e.b, '}')
	return e.finish(dst, len(dst))
}
