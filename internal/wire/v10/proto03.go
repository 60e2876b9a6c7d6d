package v10

import (
	"strconv"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// The JSON of the A2A 0.3 proto (a2a-v0.3.0.proto, package a2a.v1): the
// bodies of the HTTP+JSON binding of A2A 0.3.0 (§3.2.3, the /v1/… paths),
// as @a2a-js/sdk 0.3.14, a2a-python 0.3 and a2a-go v2's a2av0 package send
// and read them (interop/V03_REST_NOTES.md). It is ProtoJSON like A2A
// 1.0's, so the same reader and writer serve it, in their 0.3 mode
// (decoder.v03, encoder.v03), which differs from 1.0 in:
//
//   - Message.content, not parts;
//   - Part: {"text": …}, {"file": {"fileWithUri" | "fileWithBytes",
//     "mimeType", "name"}} or {"data": {"data": {…}}}, with "metadata"
//     (an a2a-go addition the others ignore). A data value that is not an
//     object is wrapped as {"value": …} with the metadata mark of
//     v03.CompatData, as on 0.3 JSON-RPC, and a null one is {}. The
//     MediaType and Filename of text and data parts have no 0.3 field
//     and are not written;
//   - TaskState TASK_STATE_CANCELLED (1.0: TASK_STATE_CANCELED);
//   - TaskStatusUpdateEvent.final, written when true;
//   - SendMessageConfiguration {acceptedOutputModes, pushNotification,
//     historyLength, blocking};
//   - PushNotificationConfig {id, url, token, authentication {schemes,
//     credentials}} inside TaskPushNotificationConfig {name:
//     "tasks/{taskId}/pushNotificationConfigs/{configId}",
//     pushNotificationConfig}.
//
// Everything else (lowerCamelCase or proto names, enums by name or number,
// null as absent, unknown members ignored, the JSON Pointer of every
// error) is as the package documentation says for 1.0.

// Enum names of the A2A 0.3 proto's TaskState, indexed by number.
var taskStateNames03 = []string{"TASK_STATE_UNSPECIFIED", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
	"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELLED", "TASK_STATE_INPUT_REQUIRED",
	"TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED"}

// taskStateName03 is the 0.3 proto's name of s.
func taskStateName03(s a2a.TaskState) string {
	if s == a2a.TaskStateCanceled {
		return "TASK_STATE_CANCELLED"
	}
	return TaskStateName(s)
}

var (
	messageFields03 = newFields("messageId", "contextId", "taskId", "role", "content", "metadata",
		"extensions", "referenceTaskIds")
	partFields03        = newFields("text", "file", "data", "metadata")
	filePartFields03    = newFields("fileWithUri", "fileWithBytes", "mimeType", "name")
	dataPartFields03    = newFields("data")
	sendMessageFields03 = withAlias(newFields("message", "configuration", "metadata"), "request", "message")
	sendConfigFields03  = newFields("acceptedOutputModes", "pushNotification", "historyLength", "blocking")
	taskNameFields03    = newFields("name")
	createPushFields03  = newFields("name", "pushNotificationConfig", "parent", "configId", "config")
	pushConfigFields03  = newFields("id", "url", "token", "authentication")
	authFields03        = newFields("schemes", "credentials")
)

// withAlias makes alias (a proto field name that differs from the JSON
// name, json_name in the proto) another name of the member named name.
func withAlias(f *fields, alias, name string) *fields {
	f.index[alias] = f.index[name]
	return f
}

// part03 reads a Part of the 0.3 proto: exactly one of text, file, data.
func (d *decoder) part03() (a2a.Part, error) {
	if err := d.element(); err != nil {
		return nil, err
	}
	var (
		content []string
		p       a2a.Part
		data    map[string]any
		meta    map[string]any
	)
	_, err := d.object(partFields03, func(name string) error {
		var err error
		switch name {
		case "text":
			content = append(content, name)
			var s string
			s, err = d.str()
			p = a2a.TextPart{Text: s}
		case "file":
			content = append(content, name)
			var f a2a.File
			f, err = d.file03()
			p = a2a.FilePart{File: f}
		case "data":
			content = append(content, name)
			data, err = d.data03()
		case "metadata":
			meta, err = d.structValue()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	switch len(content) {
	case 0:
		return nil, d.fail("part has none of text, file or data; exactly one is required")
	case 1:
	default:
		return nil, d.fail("part has both " + content[0] + " and " + content[1] + "; exactly one of text, file or data is allowed")
	}
	switch q := p.(type) {
	case a2a.TextPart:
		q.Metadata = meta
		return q, nil
	case a2a.FilePart:
		q.Metadata = meta
		return q, nil
	}
	return v03.FromCompatData(data, meta), nil
}

// file03 reads a FilePart of the 0.3 proto: exactly one of fileWithUri
// and fileWithBytes (standard base64, as proto bytes), with mimeType and
// name.
func (d *decoder) file03() (a2a.File, error) {
	var f a2a.File
	var given []string
	present, err := d.object(filePartFields03, func(name string) error {
		var err error
		switch name {
		case "fileWithUri":
			given = append(given, name)
			if f.URI, err = d.str(); err == nil && f.URI == "" {
				err = d.fail("fileWithUri is empty")
			}
		case "fileWithBytes":
			given = append(given, name)
			var s string
			if s, err = d.str(); err == nil {
				if f.Bytes, err = wirejson.DecodeBase64(s); err != nil {
					err = d.fail("fileWithBytes is not valid base64")
				} else if f.Bytes == nil {
					f.Bytes = []byte{}
				}
			}
		case "mimeType":
			f.MimeType, err = d.str()
		case "name":
			f.Name, err = d.str()
		}
		return err
	})
	switch {
	case err != nil:
		return f, err
	case !present || len(given) == 0:
		return f, d.fail("file has neither fileWithUri nor fileWithBytes; exactly one is required")
	case len(given) > 1:
		return f, d.fail("file has both fileWithUri and fileWithBytes; exactly one is allowed")
	}
	return f, nil
}

// data03 reads a DataPart of the 0.3 proto: {"data": {…}}.
func (d *decoder) data03() (map[string]any, error) {
	var data map[string]any
	present, err := d.object(dataPartFields03, func(string) error {
		var err error
		data, err = d.structValue()
		return err
	})
	if err == nil && (!present || data == nil) {
		return nil, d.fail("data part has no data object")
	}
	return data, err
}

// part03 appends a Part of the 0.3 proto; p is not a pointer (derefPart).
func (e *encoder) part03(p a2a.Part) {
	var meta map[string]any
	switch p := p.(type) {
	case a2a.TextPart:
		e.b = append(e.b, `{"text":`...)
		e.str(p.Text)
		meta = p.Metadata
	case a2a.FilePart:
		e.b = append(e.b, `{"file":{`...)
		if p.File.Bytes != nil || p.File.URI == "" {
			e.b = append(e.b, `"fileWithBytes":`...)
			e.b = wirejson.AppendBase64(e.b, p.File.Bytes)
		} else {
			e.b = append(e.b, `"fileWithUri":`...)
			e.str(p.File.URI)
		}
		e.optional("mimeType", p.File.MimeType)
		e.optional("name", p.File.Name)
		e.b = append(e.b, '}')
		meta = p.Metadata
	case a2a.DataPart:
		var data map[string]any
		data, meta = v03.CompatData(p)
		e.b = append(e.b, `{"data":{"data":`...)
		e.object(data)
		e.b = append(e.b, '}')
	default:
		e.b = append(e.b, `{"text":""`...)
	}
	e.metadata(meta)
	e.b = append(e.b, '}')
}

// DecodeREST03SendMessage decodes the body of POST /v1/message:send and
// POST /v1/message:stream (A2A 0.3.0 §7.1, §7.2, REST), a SendMessageRequest
// of the 0.3 proto: message (also by its proto name, request; required,
// with at least one part in content), configuration {acceptedOutputModes,
// pushNotification, historyLength >= 0, blocking} and metadata. As proto3
// reads it, a configuration without blocking is blocking false (Blocking
// points to false; @a2a-js/sdk 0.3.14 sends a non-blocking request so); no
// configuration leaves Blocking nil (the server waits).
// Errors are *a2a.Error: ErrParse (-32700) for a body that is not JSON,
// else InvalidParams (-32602) naming the field ("/message/content/0/file").
func DecodeREST03SendMessage(body []byte) (a2a.MessageSendParams, error) {
	var p a2a.MessageSendParams
	d := newDecoder(body, "", true)
	defer d.release()
	d.v03 = true
	var hasMessage bool
	err := d.document(body, false, func() error {
		_, err := d.object(sendMessageFields03, func(name string) error {
			var err error
			switch name {
			case "message":
				p.Message, hasMessage, err = d.message(true)
			case "configuration":
				p.Configuration, err = d.sendConfig03()
			case "metadata":
				p.Metadata, err = d.structValue()
			}
			return err
		})
		if err == nil && !hasMessage {
			return d.missing("message")
		}
		return err
	})
	if err != nil {
		return a2a.MessageSendParams{}, err
	}
	return p, nil
}

// sendConfig03 reads a SendMessageConfiguration of the 0.3 proto.
func (d *decoder) sendConfig03() (*a2a.MessageSendConfiguration, error) {
	c := &a2a.MessageSendConfiguration{}
	present, err := d.object(sendConfigFields03, func(name string) error {
		var err error
		switch name {
		case "acceptedOutputModes":
			c.AcceptedOutputModes, err = d.strs()
		case "pushNotification":
			var pc a2a.PushNotificationConfig
			var ok bool
			if pc, ok, err = d.pushNotificationConfig03(); ok && err == nil {
				c.PushNotificationConfig = &pc
			}
		case "historyLength":
			c.HistoryLength, err = d.nonNegative()
		case "blocking":
			var b bool
			if b, err = d.boolean(); err == nil {
				c.Blocking = &b
			}
		}
		return err
	})
	if !present {
		return nil, err
	}
	if c.Blocking == nil {
		// proto3: an absent bool is false. @a2a-js/sdk 0.3.14 asks for a
		// non-blocking send exactly so, by leaving blocking out.
		c.Blocking = new(bool)
	}
	return c, err
}

// pushNotificationConfig03 reads a PushNotificationConfig of the 0.3
// proto; url is required, and authentication's schemes.
func (d *decoder) pushNotificationConfig03() (a2a.PushNotificationConfig, bool, error) {
	var c a2a.PushNotificationConfig
	present, err := d.object(pushConfigFields03, func(name string) error {
		var err error
		switch name {
		case "id":
			c.ID, err = d.str()
		case "url":
			c.URL, err = d.str()
		case "token":
			c.Token, err = d.str()
		case "authentication":
			var a a2a.PushNotificationAuthenticationInfo
			var ok bool
			ok, err = d.object(authFields03, func(name string) error {
				var err error
				switch name {
				case "schemes":
					a.Schemes, err = d.strs()
				case "credentials":
					a.Credentials, err = d.str()
				}
				return err
			})
			if err == nil && ok {
				if len(a.Schemes) == 0 {
					return d.missing("schemes")
				}
				c.Authentication = &a
			}
		}
		return err
	})
	if err == nil && present && c.URL == "" {
		return c, true, d.missing("url")
	}
	return c, present, err
}

// DecodeREST03TaskAction decodes the optional body of POST
// /v1/tasks/{id}:cancel and POST /v1/tasks/{id}:subscribe (A2A 0.3.0 §7.4,
// §7.9, REST): empty, or {"name": "tasks/{id}"} naming the path's task.
// Errors as DecodeREST03SendMessage's.
func DecodeREST03TaskAction(id string, body []byte) (a2a.TaskIDParams, error) {
	if err := pathID("id", id); err != nil {
		return a2a.TaskIDParams{}, err
	}
	d := newDecoder(body, "", true)
	defer d.release()
	err := d.document(body, true, func() error {
		_, err := d.object(taskNameFields03, func(string) error {
			name, err := d.str()
			if err == nil && name != "" && name != "tasks/"+id {
				err = d.fail("name " + quoteShort(name) + " does not name the task of the path, tasks/" + id)
			}
			return err
		})
		return err
	})
	if err != nil {
		return a2a.TaskIDParams{}, err
	}
	return a2a.TaskIDParams{ID: id}, nil
}

// DecodeREST03CreatePushConfig decodes the body of POST
// /v1/tasks/{taskId}/pushNotificationConfigs (A2A 0.3.0 §7.5, REST). The
// 0.3 proto maps the body to the request's config, a
// TaskPushNotificationConfig {name, pushNotificationConfig} (what
// @a2a-js/sdk 0.3.14 sends); the whole CreateTaskPushNotificationConfigRequest
// {parent, configId, config} is accepted too (what a2a-go v2's and
// a2a-python's 0.3 clients send). Names must name the path's task
// ("tasks/{taskId}", "tasks/{taskId}/pushNotificationConfigs/{configId}");
// the config id is pushNotificationConfig.id, else the one in name or
// configId (they must agree), else "" (the server assigns one). The url is
// required. Errors as DecodeREST03SendMessage's.
func DecodeREST03CreatePushConfig(taskID string, body []byte) (a2a.TaskPushNotificationConfig, error) {
	if err := pathID("taskId", taskID); err != nil {
		return a2a.TaskPushNotificationConfig{}, err
	}
	d := newDecoder(body, "", true)
	defer d.release()
	c := a2a.TaskPushNotificationConfig{TaskID: taskID}
	err := d.document(body, false, func() error {
		ids, found, err := d.createPush03(taskID, &c.PushNotificationConfig)
		if err != nil {
			return err
		}
		if !found {
			return d.missing("pushNotificationConfig")
		}
		return mergeConfigIDs(&c.PushNotificationConfig, ids)
	})
	if err != nil {
		return a2a.TaskPushNotificationConfig{}, err
	}
	return c, nil
}

// configIDs are the config ids a create request names besides the
// config's own id: by member (JSON Pointer), in reading order.
type configIDs []struct{ ptr, id string }

// createPush03 reads a TaskPushNotificationConfig or a
// CreateTaskPushNotificationConfigRequest into c; found reports a
// pushNotificationConfig.
func (d *decoder) createPush03(taskID string, c *a2a.PushNotificationConfig) (ids configIDs, found bool, err error) {
	_, err = d.object(createPushFields03, func(name string) error {
		var err error
		switch name {
		case "name":
			var cfg string
			if cfg, err = d.configName03(taskID); err == nil && cfg != "" {
				ids = append(ids, struct{ ptr, id string }{d.ptr(), cfg})
			}
		case "parent":
			var s string
			if s, err = d.str(); err == nil && s != "tasks/"+taskID {
				err = d.fail("parent " + quoteShort(s) + " does not name the task of the path, tasks/" + taskID)
			}
		case "configId":
			var s string
			if s, err = d.str(); err == nil && s != "" {
				ids = append(ids, struct{ ptr, id string }{d.ptr(), s})
			}
		case "pushNotificationConfig":
			*c, found, err = d.pushNotificationConfig03()
		case "config":
			var more configIDs
			more, found, err = d.createPush03(taskID, c)
			ids = append(ids, more...)
		}
		return err
	})
	return ids, found, err
}

// configName03 reads the name of a TaskPushNotificationConfig,
// "tasks/{taskId}/pushNotificationConfigs/{configId}" (configId may be
// empty, as @a2a-js/sdk 0.3.14 writes it for a new config), and returns
// its configId.
func (d *decoder) configName03(taskID string) (string, error) {
	s, err := d.str()
	if err != nil || s == "" {
		return "", err
	}
	prefix := "tasks/" + taskID + "/pushNotificationConfigs/"
	cfg, ok := strings.CutPrefix(s, prefix)
	if !ok || strings.Contains(cfg, "/") {
		return "", d.fail("name " + quoteShort(s) + " is not " + prefix + "{configId}")
	}
	return cfg, nil
}

// mergeConfigIDs sets c.ID from ids when it is empty; ids that disagree
// with it are an error naming the one that differs.
func mergeConfigIDs(c *a2a.PushNotificationConfig, ids configIDs) error {
	for _, x := range ids {
		switch {
		case c.ID == "":
			c.ID = x.id
		case x.id != c.ID:
			return a2a.InvalidParams(x.ptr, "config id "+quoteShort(x.id)+" differs from pushNotificationConfig.id "+quoteShort(c.ID))
		}
	}
	return nil
}

// AppendREST03Event appends the 0.3 proto JSON of a *a2a.Task,
// *a2a.Message, *a2a.TaskStatusUpdateEvent or *a2a.TaskArtifactUpdateEvent,
// unwrapped: the body of GET /v1/tasks/{id} and POST /v1/tasks/{id}:cancel
// (A2A 0.3.0 §7.3, §7.4, REST). Errors: a nil or unknown event, invalid
// UTF-8, a value JSON cannot hold.
func AppendREST03Event(dst []byte, ev a2a.Event) ([]byte, error) {
	e := encoder{b: dst, v03: true}
	if !e.event(ev, false) {
		return dst, errUnknownEvent
	}
	return e.finish(dst, len(dst))
}

// AppendREST03StreamResponse appends a StreamResponse of the 0.3 proto:
// {"task": …}, {"message": …}, {"statusUpdate": …} (with "final": true on
// the last one) or {"artifactUpdate": …}, the data of one SSE event of
// POST /v1/message:stream and /v1/tasks/{id}:subscribe (A2A 0.3.0 §7.2,
// §7.9, REST). Errors as AppendREST03Event's.
func AppendREST03StreamResponse(dst []byte, ev a2a.Event) ([]byte, error) {
	e := encoder{b: dst, v03: true}
	if !e.event(ev, true) {
		return dst, errUnknownEvent
	}
	return e.finish(dst, len(dst))
}

// AppendREST03SendMessageResponse appends a SendMessageResponse of the
// 0.3 proto, {"task": …} or {"message": …}: the body of POST
// /v1/message:send (A2A 0.3.0 §7.1, REST). Other events are errors.
func AppendREST03SendMessageResponse(dst []byte, ev a2a.Event) ([]byte, error) {
	switch ev.(type) {
	case *a2a.Task, *a2a.Message:
		return AppendREST03StreamResponse(dst, ev)
	}
	return dst, errUnknownEvent
}

// AppendREST03ListTasksResponse appends the body of GET /v1/tasks (A2A
// 0.3.0 §7.3.1 "tasks/list", REST only): {"tasks": […], "nextPageToken":
// …, "pageSize": …, "totalSize": …}, the tasks in the 0.3 proto's JSON.
// The spec's table says [Task]; the object keeps the page token, and
// a2a-go v2's 0.3 client reads both. Errors as AppendREST03Event's.
func AppendREST03ListTasksResponse(dst []byte, r *a2a.ListTasksResult, includeArtifacts bool) ([]byte, error) {
	e := encoder{b: dst, v03: true}
	e.listTasks(r, includeArtifacts)
	return e.finish(dst, len(dst))
}

// pushConfig03 appends a TaskPushNotificationConfig of the 0.3 proto.
func (e *encoder) pushConfig03(c *a2a.TaskPushNotificationConfig) {
	pc := &c.PushNotificationConfig
	e.b = append(e.b, `{"name":`...)
	e.str("tasks/" + c.TaskID + "/pushNotificationConfigs/" + pc.ID)
	e.b = append(e.b, `,"pushNotificationConfig":{`...)
	e.optional("id", pc.ID)
	e.field("url", pc.URL)
	e.optional("token", pc.Token)
	if a := pc.Authentication; a != nil {
		e.member("authentication")
		e.b = append(e.b, `{"schemes":`...)
		e.strings(a.Schemes)
		e.optional("credentials", a.Credentials)
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, "}}"...)
}

// AppendREST03PushConfig appends a TaskPushNotificationConfig of the 0.3
// proto, {"name": "tasks/{taskId}/pushNotificationConfigs/{id}",
// "pushNotificationConfig": {id, url, token, authentication}}: the body of
// POST and GET /v1/tasks/{id}/pushNotificationConfigs[/{configId}] (A2A
// 0.3.0 §7.5, §7.6, REST). Errors: invalid UTF-8.
func AppendREST03PushConfig(dst []byte, c *a2a.TaskPushNotificationConfig) ([]byte, error) {
	e := encoder{b: dst, v03: true}
	e.pushConfig03(c)
	return e.finish(dst, len(dst))
}

// AppendREST03ListPushConfigs appends a
// ListTaskPushNotificationConfigResponse of the 0.3 proto, {"configs":
// […]} (always written, [] when there are none): the body of GET
// /v1/tasks/{id}/pushNotificationConfigs (A2A 0.3.0 §7.7, REST). Errors:
// invalid UTF-8.
func AppendREST03ListPushConfigs(dst []byte, configs []a2a.TaskPushNotificationConfig) ([]byte, error) {
	e := encoder{b: dst, v03: true}
	e.b = append(e.b, `{"configs":[`...)
	for i := range configs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.pushConfig03(&configs[i])
	}
	e.b = append(e.b, "]}"...)
	return e.finish(dst, len(dst))
}

// AppendREST03Error appends the error body of the 0.3 HTTP+JSON binding
// and returns the HTTP status to answer with (HTTPStatus). The official
// 0.3 clients read different shapes (interop/V03_REST_NOTES.md), so the
// body holds both: the google.rpc.Status of AppendRESTError under "error"
// (a2a-go v2's 0.3 client reads it, with the ErrorInfo reason), then the
// JSON-RPC error members "code" (the A2A 0.3 code, -32001 …), "message"
// and, when e has Data, "data" (@a2a-js/sdk 0.3.14 reads them):
//
//	{"error":{"code":404,"status":"NOT_FOUND","message":"…","details":[…]},"code":-32001,"message":"…"}
//
// It cannot fail: invalid UTF-8 is replaced with U+FFFD, a Data value JSON
// cannot hold is left out.
func AppendREST03Error(dst []byte, e *a2a.Error) ([]byte, int) {
	dst, status := AppendRESTError(dst, e)
	dst = dst[:len(dst)-1] // the closing brace
	dst = append(dst, `,"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst, _ = wirejson.AppendString(dst, strings.ToValidUTF8(e.Message, "\uFFFD"))
	if e.Data != nil {
		if data, err := wirejson.AppendAny(nil, e.Data); err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, data...)
		}
	}
	return append(dst, '}'), status
}
