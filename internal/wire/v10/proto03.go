package v10

import (
	"bytes"
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
		return a2a.Part{}, err
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
			p = a2a.NewTextPart(s)
		case "file":
			content = append(content, name)
			p, err = d.file03()
		case "data":
			content = append(content, name)
			data, err = d.data03()
		case "metadata":
			meta, err = d.structValue()
		}
		return err
	})
	if err != nil {
		return a2a.Part{}, err
	}
	switch len(content) {
	case 0:
		return a2a.Part{}, d.fail("part has none of text, file or data; exactly one is required")
	case 1:
	default:
		return a2a.Part{}, d.fail("part has both " + content[0] + " and " + content[1] + "; exactly one of text, file or data is allowed")
	}
	if content[0] == "data" {
		return v03.FromCompatData(data, meta), nil
	}
	p.Metadata = meta
	return p, nil
}

// file03 reads a FilePart of the 0.3 proto: exactly one of fileWithUri
// and fileWithBytes (standard base64, as proto bytes), with mimeType and
// name, as a Raw or URL part.
func (d *decoder) file03() (a2a.Part, error) {
	var f a2a.Part
	var given []string
	present, err := d.object(filePartFields03, func(name string) error {
		var err error
		switch name {
		case "fileWithUri":
			given = append(given, name)
			var u string
			if u, err = d.str(); err == nil && u == "" {
				err = d.fail("fileWithUri is empty")
			}
			f.Content = a2a.URL(u)
		case "fileWithBytes":
			given = append(given, name)
			var s string
			if s, err = d.str(); err == nil {
				var b []byte
				if b, err = wirejson.DecodeBase64(s); err != nil {
					err = d.fail("fileWithBytes is not valid base64")
				} else if b == nil {
					b = []byte{}
				}
				f.Content = a2a.Raw(b)
			}
		case "mimeType":
			f.MediaType, err = d.str()
		case "name":
			f.Filename, err = d.str()
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

// part03 appends a Part of the 0.3 proto.
func (e *encoder) part03(p *a2a.Part) {
	meta := p.Metadata
	switch c := p.Content.(type) {
	case a2a.Text:
		e.b = append(e.b, `{"text":`...)
		e.str(string(c))
	case a2a.Raw, a2a.URL:
		e.b = append(e.b, `{"file":{`...)
		if u, ok := c.(a2a.URL); ok {
			e.b = append(e.b, `"fileWithUri":`...)
			e.str(string(u))
		} else {
			e.b = append(e.b, `"fileWithBytes":`...)
			e.b = wirejson.AppendBase64(e.b, p.Raw())
		}
		e.optional("mimeType", p.MediaType)
		e.optional("name", p.Filename)
		e.b = append(e.b, '}')
	case a2a.Data:
		var data map[string]any
		data, meta = v03.CompatData(*p)
		e.b = append(e.b, `{"data":{"data":`...)
		e.object(data)
		e.b = append(e.b, '}')
	default:
		e.b = append(e.b, `{"text":""`...)
		meta = nil
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
func DecodeREST03SendMessage(body []byte) (a2a.SendMessageRequest, error) {
	var p a2a.SendMessageRequest
	var hasMessage bool
	d := newDecoder(body, "", true)
	defer d.release()
	d.v03 = true
	err := d.readObject(body, false, sendMessageFields03, func(name string) error {
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
	}, func() error {
		if !hasMessage {
			return d.missing("message")
		}
		return nil
	})
	return orZero(p, err)
}

// sendConfig03 reads a SendMessageConfiguration of the 0.3 proto.
func (d *decoder) sendConfig03() (*a2a.SendMessageConfiguration, error) {
	c := &a2a.SendMessageConfiguration{}
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
			var a a2a.AuthenticationInfo
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
func DecodeREST03TaskAction(id string, body []byte) (a2a.CancelTaskRequest, error) {
	if err := pathID("id", id); err != nil {
		return a2a.CancelTaskRequest{}, err
	}
	d := newDecoder(body, "", true)
	defer d.release()
	err := d.readObject(body, true, taskNameFields03, func(string) error {
		name, err := d.str()
		if err == nil && name != "" && name != "tasks/"+id {
			err = d.fail("name " + quoteShort(name) + " does not name the task of the path, tasks/" + id)
		}
		return err
	}, nil)
	if err != nil {
		return a2a.CancelTaskRequest{}, err
	}
	return a2a.CancelTaskRequest{ID: id}, nil
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
	return orZero(c, err)
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
func AppendREST03ListTasksResponse(dst []byte, r *a2a.ListTasksResponse, includeArtifacts bool) ([]byte, error) {
	e := encoder{b: dst, v03: true}
	e.listTasks(r, includeArtifacts)
	return e.finish(dst, len(dst))
}

// pushConfig03 appends a TaskPushNotificationConfig of the 0.3 proto.
func (e *encoder) pushConfig03(c *a2a.TaskPushNotificationConfig) {
	pc := &c.PushNotificationConfig
	e.b = append(e.b, `{"name":`...)
	e.str("tasks/" + c.TaskID + "/pushNotificationConfigs/" + pc.ID)
	e.member("pushNotificationConfig")
	e.pushNotificationConfig03(pc)
	e.b = append(e.b, '}')
}

// pushNotificationConfig03 appends a PushNotificationConfig of the 0.3
// proto: {id, url, token, authentication {schemes, credentials}}.
func (e *encoder) pushNotificationConfig03(pc *a2a.PushNotificationConfig) {
	e.b = append(e.b, '{')
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
	e.b = append(e.b, '}')
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
	e.b = append(e.b, `{"configs":`...)
	array(&e, configs, (*encoder).pushConfig03)
	e.b = append(e.b, '}')
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

// Client side of the 0.3 HTTP+JSON binding: request bodies a client sends
// and the decoders of the answers. What the Append…Request functions
// write, the Decode functions above read back to the same value; what the
// server-side Append functions write, the Unmarshal functions read back.

// AppendREST03SendMessageRequest appends a SendMessageRequest of the 0.3
// proto, the body of POST /v1/message:send and /v1/message:stream (A2A
// 0.3.0 §7.1, §7.2, REST): {"message": {… "content": […]},
// "configuration": {acceptedOutputModes, pushNotification, historyLength,
// blocking}, "metadata"}. blocking is always written when there is a
// configuration (proto3 would read an absent one as false); p.Tenant has
// no 0.3 field and is not written. Errors: invalid UTF-8, a value JSON
// cannot hold.
func AppendREST03SendMessageRequest(dst []byte, p *a2a.SendMessageRequest) ([]byte, error) {
	e := encoder{b: dst, v03: true}
	e.b = append(e.b, `{"message":`...)
	e.message(&p.Message)
	if c := p.Configuration; c != nil {
		e.member("configuration")
		e.b = append(e.b, '{')
		e.stringList("acceptedOutputModes", c.AcceptedOutputModes)
		if c.PushNotificationConfig != nil {
			e.member("pushNotification")
			e.pushNotificationConfig03(c.PushNotificationConfig)
		}
		if c.HistoryLength != nil {
			e.number("historyLength", *c.HistoryLength)
		}
		e.boolean("blocking", c.IsBlocking())
		e.b = append(e.b, '}')
	}
	e.metadata(p.Metadata)
	e.b = append(e.b, '}')
	return e.finish(dst, len(dst))
}

// AppendREST03CreatePushConfigRequest appends the body of POST
// /v1/tasks/{taskId}/pushNotificationConfigs (A2A 0.3.0 §7.5, REST). The
// 0.3 servers read different shapes (interop/V03_REST_NOTES.md §1): a2a-go
// v2's, a2a-python's and @a2a-js/sdk 0.3.14's the whole
// CreateTaskPushNotificationConfigRequest {parent, configId, config},
// @a2a-js/sdk 1.x's legacy mode the TaskPushNotificationConfig itself
// {name, pushNotificationConfig} (the proto's body: "config"), each
// ignoring the other's members. So the body holds both, the same config
// twice:
//
//	{"parent":"tasks/t1","configId":"c1","config":{"name":…,"pushNotificationConfig":{…}},"name":…,"pushNotificationConfig":{…}}
//
// configId is written when the config has an id. Errors: invalid UTF-8.
func AppendREST03CreatePushConfigRequest(dst []byte, c *a2a.TaskPushNotificationConfig) ([]byte, error) {
	e := encoder{b: dst, v03: true}
	e.b = append(e.b, `{"parent":`...)
	e.str("tasks/" + c.TaskID)
	e.optional("configId", c.PushNotificationConfig.ID)
	e.member("config")
	start := len(e.b)
	e.pushConfig03(c)
	// The same members again, at the top level (with config's closing
	// brace, which closes the body).
	members := e.b[start+1:]
	e.b = append(e.b, ',')
	e.b = append(e.b, members...)
	return e.finish(dst, len(dst))
}

// newDecoder03 returns a decoder of a response body in the 0.3 proto's
// JSON.
func newDecoder03(b []byte) *decoder {
	d := newDecoder(b, "", false)
	d.v03 = true
	return d
}

// UnmarshalREST03Task decodes a Task of the 0.3 proto: the body of GET
// /v1/tasks/{id} and POST /v1/tasks/{id}:cancel (A2A 0.3.0 §7.3, §7.4,
// REST). Errors are *a2a.Error InvalidParams naming the field by its JSON
// Pointer ("/status/state").
func UnmarshalREST03Task(b []byte) (a2a.Task, error) {
	return unmarshalTask(b, true)
}

// UnmarshalREST03SendMessageResponse decodes a SendMessageResponse of the
// 0.3 proto, {"task": …} or {"message": …}: the body of POST /v1/message:send (A2A 0.3.0 §7.1, REST), a
// *a2a.Task or *a2a.Message. Errors as UnmarshalREST03Task's.
func UnmarshalREST03SendMessageResponse(b []byte) (a2a.Event, error) {
	return unmarshalStream(b, true, true)
}

// UnmarshalREST03StreamResponse decodes a StreamResponse of the 0.3 proto,
// the data of one SSE event of POST /v1/message:stream and
// /v1/tasks/{id}:subscribe (A2A 0.3.0 §7.2, §7.9, REST): *a2a.Task,
// *a2a.Message, *a2a.TaskStatusUpdateEvent (Final when "final": true or
// the state is terminal or interrupted) or *a2a.TaskArtifactUpdateEvent.
// A frame {"error": {google.rpc.Status}} (how a2a-go v2's 0.3 server ends
// a stream with an error, without an event name) is a *StreamError.
// Errors otherwise as UnmarshalREST03Task's.
func UnmarshalREST03StreamResponse(b []byte) (a2a.Event, error) {
	return unmarshalStream(b, false, true)
}

// UnmarshalREST03PushConfig decodes a TaskPushNotificationConfig of the
// 0.3 proto, {"name": "tasks/{taskId}/pushNotificationConfigs/{configId}",
// "pushNotificationConfig": {id, url, token, authentication}}: the body of
// POST and GET /v1/tasks/{id}/pushNotificationConfigs[/{configId}] (A2A
// 0.3.0 §7.5, §7.6, REST). The task id comes from name; the config id is
// pushNotificationConfig.id, else name's. The url is required. Errors as
// UnmarshalREST03Task's.
func UnmarshalREST03PushConfig(b []byte) (a2a.TaskPushNotificationConfig, error) {
	d := newDecoder03(b)
	defer d.release()
	return readDocument(d, b, false, func() (a2a.TaskPushNotificationConfig, error) {
		return d.taskPushConfig03()
	})
}

// taskPushConfig03 reads a TaskPushNotificationConfig of the 0.3 proto.
func (d *decoder) taskPushConfig03() (a2a.TaskPushNotificationConfig, error) {
	var c a2a.TaskPushNotificationConfig
	var nameID string
	var found bool
	_, err := d.object(taskPushFields03, func(name string) error {
		var err error
		switch name {
		case "name":
			c.TaskID, nameID, err = d.pushConfigName03()
		case "pushNotificationConfig":
			c.PushNotificationConfig, found, err = d.pushNotificationConfig03()
		}
		return err
	})
	switch {
	case err != nil:
		return c, err
	case !found:
		return c, d.missing("pushNotificationConfig")
	case c.TaskID == "":
		return c, d.missing("name")
	case c.PushNotificationConfig.ID == "":
		c.PushNotificationConfig.ID = nameID
	}
	return c, nil
}

var taskPushFields03 = newFields("name", "pushNotificationConfig")

// pushConfigName03 reads "tasks/{taskId}/pushNotificationConfigs/{configId}"
// and returns its task and config ids (the config id may be empty).
func (d *decoder) pushConfigName03() (taskID, configID string, err error) {
	s, err := d.str()
	if err != nil {
		return "", "", err
	}
	rest, ok := strings.CutPrefix(s, "tasks/")
	if ok {
		taskID, configID, ok = strings.Cut(rest, "/pushNotificationConfigs/")
	}
	if !ok || taskID == "" || strings.Contains(taskID, "/") || strings.Contains(configID, "/") {
		return "", "", d.fail("name " + quoteShort(s) + " is not tasks/{taskId}/pushNotificationConfigs/{configId}")
	}
	return taskID, configID, nil
}

var listPushConfigsFields03 = newFields("configs", "nextPageToken")

// UnmarshalREST03ListPushConfigs decodes a
// ListTaskPushNotificationConfigResponse of the 0.3 proto, {"configs":
// […]} (a bare array of configs is read too, as a2a-go v2's 0.3 client
// does): the body of GET /v1/tasks/{id}/pushNotificationConfigs (A2A
// 0.3.0 §7.7, REST). Errors as UnmarshalREST03Task's; in a bare array
// they point below "/configs".
func UnmarshalREST03ListPushConfigs(b []byte) ([]a2a.TaskPushNotificationConfig, error) {
	b = wrapArray(b, "configs")
	configs := []a2a.TaskPushNotificationConfig{}
	d := newDecoder03(b)
	defer d.release()
	err := d.readObject(b, false, listPushConfigsFields03, func(name string) error {
		if name != "configs" {
			return d.wrapNil(d.dec.SkipValue())
		}
		_, err := d.array(func() error {
			if err := d.element(); err != nil {
				return err
			}
			c, err := d.taskPushConfig03()
			configs = append(configs, c)
			return err
		})
		return err
	}, nil)
	if err != nil {
		return nil, err
	}
	return configs, nil
}

// UnmarshalREST03ListTasksResponse decodes the body of GET /v1/tasks (A2A
// 0.3.0 §3.5.6 "tasks/list", REST only): {"tasks": […], "nextPageToken",
// "pageSize", "totalSize"} (what a2a-go v2 and a2abridge write), or the
// bare array of tasks the spec's table shows. Errors as
// UnmarshalREST03Task's; in a bare array they point below "/tasks".
func UnmarshalREST03ListTasksResponse(b []byte) (a2a.ListTasksResponse, error) {
	b = wrapArray(b, "tasks")
	d := newDecoder03(b)
	defer d.release()
	return d.listTasksResponse(b)
}

// wrapArray returns b, or {"name": b} when b is a JSON array.
func wrapArray(b []byte, name string) []byte {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		return append(append([]byte(`{"`+name+`":`), t...), '}')
	}
	return b
}

var rest03ErrorFields = newFields("error", "code", "message", "data")

// ParseREST03Error decodes the body of an error answer of the 0.3
// HTTP+JSON binding (or the data of an SSE event named "error") into the
// *a2a.Error it stands for. It reads both shapes the 0.3 SDKs write
// (interop/V03_REST_NOTES.md §3): a google.rpc.Status under "error"
// (a2a-go v2; the code then comes from its ErrorInfo reason, A2A 1.0
// §11.6) and the JSON-RPC error members "code" (an A2A 0.3 code, -32001 …;
// a code that is not negative is ignored), "message" and "data" at the top
// level (@a2a-js/sdk; the code is used when the Status has no known
// reason, and the data replaces the Status details), or both, as a2abridge
// writes them.
// httpStatus (0 when there is none, as in a stream) decides the code when
// neither does, as UnmarshalRESTError says. ok is false when body is
// neither shape (an HTML page, {"message": …} alone, as a2a-python
// writes); e is then the error of the status alone, with the body (up to
// 200 bytes) as its message.
func ParseREST03Error(httpStatus int, body []byte) (e *a2a.Error, ok bool) {
	d := newDecoder03(body)
	defer d.release()
	var (
		st              *a2a.Error
		ds              details
		code            int
		hasCode         bool
		message         string
		topData         any
		hasData, hasErr bool
	)
	err := d.readObject(body, false, rest03ErrorFields, func(name string) error {
		var err error
		switch name {
		case "error":
			hasErr = true
			st, err = d.statusErrorDetails(&ds)
		case "code":
			code, err = d.int32()
			hasCode = true
		case "message":
			message, err = d.str()
		case "data":
			topData, err = d.value()
			hasData = true
		}
		return err
	}, nil)
	if err != nil || (!hasErr && !hasCode) {
		return statusOnlyError(httpStatus, body), false
	}
	switch {
	case hasErr && ds.reason != "":
		if c, known := a2a.CodeForReason(ds.reason); known {
			code, hasCode = c, true
		}
	case hasCode && code >= 0:
		hasCode = false // not a JSON-RPC error code: an HTTP status, perhaps
	}
	if hasErr {
		if message == "" {
			message = st.Message
		}
		if httpStatus == 0 {
			httpStatus = st.Code
		}
	}
	if !hasCode {
		code = codeForHTTPStatus(httpStatus)
	}
	if hasData {
		// The 0.3 error's own data, which the Status details only copy.
		return &a2a.Error{Code: code, Message: message, Data: topData}, true
	}
	return ds.result(code, message), true
}
