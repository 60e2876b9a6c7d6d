package v03

import (
	"encoding/base64"
	"errors"
	"slices"
	"strconv"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// The event encoder below writes the A2A 0.3.0 JSON of Tasks, Messages and
// the two update events straight into the caller's buffer: no wire structs,
// no reflection, no intermediate copy. Its output is byte for byte what
// json.Marshal(…, encodeOpts) makes of the wire structs in
// types.go (codec_test.go checks this against that reference encoder):
// members in struct order, omitted optional members, map keys sorted, and
// strings escaped as json/v2 does (only '"', '\\' and control characters;
// invalid UTF-8 is an error). Metadata values of types other than the
// ones JSON decoding yields are encoded by json.Marshal.

// The JSON primitives (strings, string lists, objects, values, times)
// are internal/wire/wirejson's, shared with the 1.0 codec.

// encoder writes the structured values into b. Its first error sticks:
// later writes go on (their output is dropped) and err reports it.
type encoder struct {
	b   []byte
	err error
}

// str appends v as a JSON string.
func (e *encoder) str(v string) {
	var err error
	if e.b, err = wirejson.AppendString(e.b, v); err != nil && e.err == nil {
		e.err = err
	}
}

// member appends `,"name":` (name needs no escaping).
func (e *encoder) member(name string) {
	e.b = append(e.b, ',', '"')
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

// optional appends `,"name":"v"` unless v is empty.
func (e *encoder) optional(name, v string) {
	if v != "" {
		e.member(name)
		e.str(v)
	}
}

// stringList appends `,"name":[…]` unless ss is empty.
func (e *encoder) stringList(name string, ss []string) {
	if len(ss) > 0 {
		e.member(name)
		var err error
		if e.b, err = wirejson.AppendStrings(e.b, ss); err != nil && e.err == nil {
			e.err = err
		}
	}
}

// object appends m as a JSON object (a nil map is {}).
func (e *encoder) object(m map[string]any) {
	var err error
	if e.b, err = wirejson.AppendObject(e.b, m); err != nil && e.err == nil {
		e.err = err
	}
}

// metadata appends `,"metadata":{…}` unless m is empty.
func (e *encoder) metadata(m map[string]any) {
	if len(m) > 0 {
		e.member("metadata")
		e.object(m)
	}
}

func (e *encoder) parts(ps []a2a.Part) {
	e.b = append(e.b, '[')
	for i, p := range ps {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.part(p)
	}
	e.b = append(e.b, ']')
}

// part appends one Part (A2A 0.3.0 §6.5); a Part without content is
// encoded as an empty TextPart so the output stays valid.
func (e *encoder) part(p a2a.Part) {
	switch c := p.Content.(type) {
	case a2a.Text:
		e.b = append(e.b, `{"kind":"text","text":`...)
		e.str(string(c))
		e.metadata(p.Metadata)
	case a2a.Raw, a2a.URL:
		e.b = append(e.b, `{"kind":"file","file":{`...)
		n := len(e.b)
		e.optional("name", p.Filename)
		e.optional("mimeType", p.MediaType)
		if u, ok := c.(a2a.URL); ok {
			e.member("uri")
			e.str(string(u))
		} else {
			e.member("bytes")
			e.b = append(e.b, '"')
			e.b = base64.StdEncoding.AppendEncode(e.b, p.Raw())
			e.b = append(e.b, '"')
		}
		e.b = slices.Delete(e.b, n, n+1) // the first member's comma
		e.b = append(e.b, '}')
		e.metadata(p.Metadata)
	case a2a.Data:
		d, meta := CompatData(p)
		e.b = append(e.b, `{"kind":"data","data":`...)
		e.object(d)
		e.metadata(meta)
	default:
		e.b = append(e.b, `{"kind":"text","text":""`...)
	}
	e.b = append(e.b, '}')
}

// message appends a Message (A2A 0.3.0 §6.4).
func (e *encoder) message(m *a2a.Message) {
	e.b = append(e.b, `{"kind":"message","messageId":`...)
	e.str(m.MessageID)
	e.member("role")
	e.str(string(m.Role))
	e.member("parts")
	e.parts(m.Parts)
	e.optional("contextId", m.ContextID)
	e.optional("taskId", m.TaskID)
	e.stringList("referenceTaskIds", m.ReferenceTaskIDs)
	e.stringList("extensions", m.Extensions)
	e.metadata(m.Metadata)
	e.b = append(e.b, '}')
}

// status appends a TaskStatus (A2A 0.3.0 §6.2).
func (e *encoder) status(s *a2a.TaskStatus) {
	e.b = append(e.b, `{"state":`...)
	e.str(s.State.String())
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

// artifact appends an Artifact (A2A 0.3.0 §6.7).
func (e *encoder) artifact(a *a2a.Artifact) {
	e.b = append(e.b, `{"artifactId":`...)
	e.str(a.ArtifactID)
	e.optional("name", a.Name)
	e.optional("description", a.Description)
	e.member("parts")
	e.parts(a.Parts)
	e.stringList("extensions", a.Extensions)
	e.metadata(a.Metadata)
	e.b = append(e.b, '}')
}

// task appends a Task (A2A 0.3.0 §6.1).
func (e *encoder) task(t *a2a.Task) {
	e.b = append(e.b, `{"kind":"task","id":`...)
	e.str(t.ID)
	e.member("contextId")
	e.str(t.ContextID)
	e.member("status")
	e.status(&t.Status)
	if len(t.History) > 0 {
		e.member("history")
		array(e, t.History, (*encoder).message)
	}
	if len(t.Artifacts) > 0 {
		e.member("artifacts")
		array(e, t.Artifacts, (*encoder).artifact)
	}
	e.metadata(t.Metadata)
	e.b = append(e.b, '}')
}

// appendEvent appends any of the four event kinds; on error dst may hold a
// partial encoding after its original length.
func appendEvent(dst []byte, ev a2a.Event) ([]byte, error) {
	e := encoder{b: dst}
	switch v := ev.(type) {
	case *a2a.Task:
		if v == nil {
			return dst, errUnknownEvent
		}
		e.task(v)
	case *a2a.Message:
		if v == nil {
			return dst, errUnknownEvent
		}
		e.message(v)
	case *a2a.TaskStatusUpdateEvent:
		if v == nil {
			return dst, errUnknownEvent
		}
		e.b = append(e.b, `{"kind":"status-update","taskId":`...)
		e.str(v.TaskID)
		e.member("contextId")
		e.str(v.ContextID)
		e.member("status")
		e.status(&v.Status)
		e.member("final")
		e.b = strconv.AppendBool(e.b, v.Final)
		e.metadata(v.Metadata)
		e.b = append(e.b, '}')
	case *a2a.TaskArtifactUpdateEvent:
		if v == nil {
			return dst, errUnknownEvent
		}
		e.b = append(e.b, `{"kind":"artifact-update","taskId":`...)
		e.str(v.TaskID)
		e.member("contextId")
		e.str(v.ContextID)
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
	default:
		return dst, errUnknownEvent
	}
	return e.b, e.err
}

var errUnknownEvent = errors.New("v03: unknown event type")
