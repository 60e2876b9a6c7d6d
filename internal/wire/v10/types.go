package v10

import (
	"strconv"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/a2aproto"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// Enum names of A2A 1.0 (a2a.proto TaskState, Role), indexed by number:
// an a2a.TaskState is its enum number.
var (
	taskStateNames = enumNames("TaskState")
	roleNames      = enumNames("Role")
)

// enumNames returns the value names of the A2A 1.0 enum named name,
// indexed by number (the proto numbers them 0, 1, 2, …).
func enumNames(name string) []string {
	e := a2aproto.LookupEnum(name)
	names := make([]string, len(e.Values))
	for i, v := range e.Values {
		if int(v.Number) != i {
			panic("v10: enum " + name + " is not numbered 0, 1, 2, …")
		}
		names[i] = v.Name
	}
	return names
}

// TaskStateName returns the A2A 1.0 enum name of s (TASK_STATE_WORKING
// for a2a.TaskStateWorking); a number outside the enum is
// TASK_STATE_UNSPECIFIED.
func TaskStateName(s a2a.TaskState) string {
	if !s.Valid() {
		return taskStateNames[0]
	}
	return taskStateNames[s]
}

// ParseTaskState returns the state named name (an A2A 1.0 enum name or
// its number, "3").
func ParseTaskState(name string) (a2a.TaskState, bool) {
	for i, n := range taskStateNames {
		if n == name || strconv.Itoa(i) == name {
			return a2a.TaskState(i), true
		}
	}
	return a2a.TaskStateUnspecified, false
}

func roleName(r a2a.Role) string {
	switch r {
	case a2a.RoleUser:
		return roleNames[1]
	case a2a.RoleAgent:
		return roleNames[2]
	}
	return roleNames[0]
}

var (
	// kind and file: A2A 0.3 members, only to explain the error.
	partFields     = message("Part", "kind", "file")
	messageFields  = message("Message")
	statusFields   = message("TaskStatus")
	artifactFields = message("Artifact")
	taskFields     = message("Task")
	// final is not an A2A 1.0 member; a 0.3-minded server may still send it.
	statusUpdateFields   = message("TaskStatusUpdateEvent", "final")
	artifactUpdateFields = message("TaskArtifactUpdateEvent")
	// error: an HTTP+JSON stream's google.rpc.Status, as a2a-go writes one.
	streamFields     = message("StreamResponse", "error")
	pushConfigFields = message("TaskPushNotificationConfig")
	authFields       = message("AuthenticationInfo")
)

// part reads a Part (A2A 1.0 §4.1.6): exactly one of text, raw, url, data.
func (d *decoder) part() (a2a.Part, error) {
	if err := d.element(); err != nil {
		return a2a.Part{}, err
	}
	var (
		content             []string // names of the content members given
		text, url           string
		raw                 []byte
		data                any
		meta                map[string]any
		filename, mediaType string
		legacy              bool
	)
	_, err := d.object(partFields, func(name string) error {
		var err error
		switch name {
		case "text":
			content = append(content, name)
			text, err = d.str()
		case "raw":
			content = append(content, name)
			var s string
			if s, err = d.str(); err == nil {
				if raw, err = wirejson.DecodeBase64(s); err != nil {
					err = d.fail("raw is not valid base64")
				} else if raw == nil {
					raw = []byte{}
				}
			}
		case "url":
			content = append(content, name)
			if url, err = d.str(); err == nil && url == "" {
				err = d.fail("url is empty")
			}
		case "data":
			content = append(content, name)
			data, err = d.value()
		case "metadata":
			meta, err = d.structValue()
		case "filename":
			filename, err = d.str()
		case "mediaType":
			mediaType, err = d.str()
		case "kind", "file":
			legacy = true
			err = d.wrapNil(d.dec.SkipValue())
		}
		return err
	})
	if err != nil {
		return a2a.Part{}, err
	}
	switch len(content) {
	case 0:
		if legacy {
			return a2a.Part{}, d.fail("part has none of text, raw, url or data (an A2A 0.3 part with \"kind\"? A2A 1.0 parts have no kind)")
		}
		return a2a.Part{}, d.fail("part has none of text, raw, url or data; exactly one is required")
	case 1:
	default:
		return a2a.Part{}, d.fail("part has both " + content[0] + " and " + content[1] + "; exactly one of text, raw, url or data is allowed")
	}
	switch content[0] {
	case "text":
		return a2a.Part{Content: a2a.Text(text), MediaType: mediaType, Filename: filename, Metadata: meta}, nil
	case "raw":
		return a2a.Part{Content: a2a.Raw(raw), MediaType: mediaType, Filename: filename, Metadata: meta}, nil
	case "url":
		return a2a.Part{Content: a2a.URL(url), MediaType: mediaType, Filename: filename, Metadata: meta}, nil
	}
	return a2a.Part{Content: a2a.Data{Value: data}, MediaType: mediaType, Filename: filename, Metadata: meta}, nil
}

// parts reads an array of Parts.
func (d *decoder) parts() ([]a2a.Part, error) {
	out := []a2a.Part{}
	read := d.part
	if d.v03 {
		read = d.part03
	}
	_, err := d.array(func() error {
		p, err := read()
		out = append(out, p)
		return err
	})
	return out, err
}

// message reads a Message (A2A 1.0 §4.1.4). With needParts, at least one
// part is required (a client's message; A2A 1.0 §5.7: a required array
// has at least one element); else parts may be absent (ProtoJSON writers
// omit an empty array).
func (d *decoder) message(needParts bool) (a2a.Message, bool, error) {
	var m a2a.Message
	var role int
	fields, partsName := messageFields, "parts"
	if d.v03 {
		fields, partsName = messageFields03, "content"
	}
	present, err := d.object(fields, func(name string) error {
		var err error
		switch name {
		case "messageId":
			m.MessageID, err = d.str()
		case "contextId":
			m.ContextID, err = d.str()
		case "taskId":
			m.TaskID, err = d.str()
		case "role":
			if role, err = d.enum(roleNames, "role"); err == nil && role == 0 {
				err = d.fail("role must be ROLE_USER or ROLE_AGENT")
			}
		case "parts", "content":
			m.Parts, err = d.parts()
		case "metadata":
			m.Metadata, err = d.structValue()
		case "extensions":
			m.Extensions, err = d.strs()
		case "referenceTaskIds":
			m.ReferenceTaskIDs, err = d.strs()
		}
		return err
	})
	if err != nil || !present {
		return m, present, err
	}
	switch {
	case m.MessageID == "":
		return m, true, d.missing("messageId")
	case role == 0:
		return m, true, d.missing("role")
	case needParts && len(m.Parts) == 0:
		if m.Parts == nil {
			return m, true, d.missing(partsName)
		}
		return m, true, a2a.InvalidParams(d.ptr()+"/"+partsName, "at least one part is required")
	}
	m.Role = a2a.RoleUser
	if role == 2 {
		m.Role = a2a.RoleAgent
	}
	if m.Parts == nil {
		m.Parts = []a2a.Part{}
	}
	return m, true, nil
}

// status reads a TaskStatus (A2A 1.0 §4.1.2). An absent state is
// TASK_STATE_UNSPECIFIED (ProtoJSON omits the zero enum).
func (d *decoder) status() (a2a.TaskStatus, bool, error) {
	s := a2a.TaskStatus{State: a2a.TaskStateUnspecified}
	names := taskStateNames
	if d.v03 {
		names = taskStateNames03
	}
	present, err := d.object(statusFields, func(name string) error {
		var err error
		switch name {
		case "state":
			var n int
			if n, err = d.enum(names, "task state"); err == nil {
				s.State = a2a.TaskState(n)
			}
		case "message":
			var m a2a.Message
			var ok bool
			if m, ok, err = d.message(false); ok && err == nil {
				s.Message = &m
			}
		case "timestamp":
			s.Timestamp, err = d.timestamp()
		}
		return err
	})
	return s, present, err
}

// artifact reads an Artifact (A2A 1.0 §4.1.7).
func (d *decoder) artifact() (a2a.Artifact, bool, error) {
	var a a2a.Artifact
	present, err := d.object(artifactFields, func(name string) error {
		var err error
		switch name {
		case "artifactId":
			a.ArtifactID, err = d.str()
		case "name":
			a.Name, err = d.str()
		case "description":
			a.Description, err = d.str()
		case "parts":
			a.Parts, err = d.parts()
		case "metadata":
			a.Metadata, err = d.structValue()
		case "extensions":
			a.Extensions, err = d.strs()
		}
		return err
	})
	if err != nil || !present {
		return a, present, err
	}
	if a.ArtifactID == "" {
		return a, true, d.missing("artifactId")
	}
	if a.Parts == nil {
		a.Parts = []a2a.Part{}
	}
	return a, true, nil
}

// task reads a Task (A2A 1.0 §4.1.1).
func (d *decoder) task() (a2a.Task, bool, error) {
	var t a2a.Task
	var hasStatus bool
	present, err := d.object(taskFields, func(name string) error {
		var err error
		switch name {
		case "id":
			t.ID, err = d.str()
		case "contextId":
			t.ContextID, err = d.str()
		case "status":
			t.Status, hasStatus, err = d.status()
		case "artifacts":
			_, err = d.array(func() error {
				if err := d.element(); err != nil {
					return err
				}
				a, _, err := d.artifact()
				t.Artifacts = append(t.Artifacts, a)
				return err
			})
		case "history":
			_, err = d.array(func() error {
				if err := d.element(); err != nil {
					return err
				}
				m, _, err := d.message(false)
				t.History = append(t.History, m)
				return err
			})
		case "metadata":
			t.Metadata, err = d.structValue()
		}
		return err
	})
	if err != nil || !present {
		return t, present, err
	}
	if t.ID == "" {
		return t, true, d.missing("id")
	}
	if !hasStatus {
		return t, true, d.missing("status")
	}
	return t, true, nil
}

// statusUpdate reads a TaskStatusUpdateEvent (A2A 1.0 §4.2.1). A2A 1.0
// has no "final": Final is true when the state ends a stream (terminal or
// interrupted, A2A 1.0 §3.1.2), or when a "final": true says so.
func (d *decoder) statusUpdate() (*a2a.TaskStatusUpdateEvent, bool, error) {
	e := &a2a.TaskStatusUpdateEvent{}
	var hasStatus bool
	present, err := d.object(statusUpdateFields, func(name string) error {
		var err error
		switch name {
		case "taskId":
			e.TaskID, err = d.str()
		case "contextId":
			e.ContextID, err = d.str()
		case "status":
			e.Status, hasStatus, err = d.status()
		case "metadata":
			e.Metadata, err = d.structValue()
		case "final":
			e.Final, err = d.boolean()
		}
		return err
	})
	if err != nil || !present {
		return e, present, err
	}
	if e.TaskID == "" {
		return e, true, d.missing("taskId")
	}
	if !hasStatus {
		return e, true, d.missing("status")
	}
	e.Final = e.Final || e.Status.State.Final()
	return e, true, nil
}

// artifactUpdate reads a TaskArtifactUpdateEvent (A2A 1.0 §4.2.2).
func (d *decoder) artifactUpdate() (*a2a.TaskArtifactUpdateEvent, bool, error) {
	e := &a2a.TaskArtifactUpdateEvent{}
	var hasArtifact bool
	present, err := d.object(artifactUpdateFields, func(name string) error {
		var err error
		switch name {
		case "taskId":
			e.TaskID, err = d.str()
		case "contextId":
			e.ContextID, err = d.str()
		case "artifact":
			e.Artifact, hasArtifact, err = d.artifact()
		case "append":
			e.Append, err = d.boolean()
		case "lastChunk":
			e.LastChunk, err = d.boolean()
		case "metadata":
			e.Metadata, err = d.structValue()
		}
		return err
	})
	if err != nil || !present {
		return e, present, err
	}
	if e.TaskID == "" {
		return e, true, d.missing("taskId")
	}
	if !hasArtifact {
		return e, true, d.missing("artifact")
	}
	return e, true, nil
}

// streamResponse reads a StreamResponse (A2A 1.0 §3.2.3) or, with
// onlyTaskOrMessage, a SendMessageResponse: exactly one payload member.
// A member "error" (an HTTP+JSON stream's google.rpc.Status, as a2a-go
// writes one) comes back as a *StreamError.
func (d *decoder) streamResponse(onlyTaskOrMessage bool) (a2a.Event, error) {
	var (
		ev    a2a.Event
		given []string
		serr  *a2a.Error
	)
	_, err := d.object(streamFields, func(name string) error {
		given = append(given, name)
		var err error
		switch name {
		case "task":
			var t a2a.Task
			var ok bool
			if t, ok, err = d.task(); ok {
				ev = &t
			}
		case "message":
			var m a2a.Message
			var ok bool
			if m, ok, err = d.message(false); ok {
				ev = &m
			}
		case "statusUpdate":
			if onlyTaskOrMessage {
				return d.wrapNil(d.dec.SkipValue())
			}
			var e *a2a.TaskStatusUpdateEvent
			var ok bool
			if e, ok, err = d.statusUpdate(); ok {
				ev = e
			}
		case "artifactUpdate":
			if onlyTaskOrMessage {
				return d.wrapNil(d.dec.SkipValue())
			}
			var e *a2a.TaskArtifactUpdateEvent
			var ok bool
			if e, ok, err = d.artifactUpdate(); ok {
				ev = e
			}
		case "error":
			serr, err = d.statusError()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case len(given) > 1:
		return nil, d.fail("response has both " + given[0] + " and " + given[1] + "; exactly one is allowed")
	case serr != nil:
		return nil, &StreamError{Err: serr}
	case ev == nil && onlyTaskOrMessage:
		return nil, d.fail("response has neither task nor message")
	case ev == nil:
		return nil, d.fail("response has none of task, message, statusUpdate or artifactUpdate")
	}
	return ev, nil
}

// StreamError is a stream frame that carries the server's error instead of
// an event: {"error": {google.rpc.Status}} (how a2a-go's HTTP+JSON server
// ends a stream with an error). Err is the server's error; errors.Is and
// errors.As see through to it.
type StreamError struct {
	Err *a2a.Error
}

// Error implements error.
func (e *StreamError) Error() string { return "stream error: " + e.Err.Error() }

// Unwrap returns Err.
func (e *StreamError) Unwrap() error { return e.Err }

// pushConfig reads a TaskPushNotificationConfig (A2A 1.0 §4.3.1, the
// flattened form). The url is required.
func (d *decoder) pushConfig() (a2a.TaskPushNotificationConfig, bool, error) {
	var c a2a.TaskPushNotificationConfig
	present, err := d.object(pushConfigFields, func(name string) error {
		var err error
		switch name {
		case "tenant":
			c.Tenant, err = d.str()
		case "id":
			c.PushNotificationConfig.ID, err = d.str()
		case "taskId":
			c.TaskID, err = d.str()
		case "url":
			c.PushNotificationConfig.URL, err = d.str()
		case "token":
			c.PushNotificationConfig.Token, err = d.str()
		case "authentication":
			var a a2a.AuthenticationInfo
			var scheme string
			var ok bool
			ok, err = d.object(authFields, func(name string) error {
				var err error
				switch name {
				case "scheme":
					scheme, err = d.str()
				case "credentials":
					a.Credentials, err = d.str()
				}
				return err
			})
			if err == nil && ok {
				if scheme == "" {
					return d.missing("scheme")
				}
				a.Schemes = []string{scheme}
				c.PushNotificationConfig.Authentication = &a
			}
		}
		return err
	})
	if err != nil || !present {
		return c, present, err
	}
	if c.PushNotificationConfig.URL == "" {
		return c, true, d.missing("url")
	}
	return c, true, nil
}
