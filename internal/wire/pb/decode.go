package pb

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2abridge/a2abridge/a2a"
)

// maxDepth bounds the nesting of messages a decoder follows (each level
// of a structured value takes three: the Value, its Struct and the map
// entry), as protobuf-go's default recursion limit does.
const maxDepth = 10000

// decoder reads the fields of one message from b. The message is member
// name (the index-th element, when index >= 0) of the message its parent
// reads; the chain gives the JSON Pointer of errors, built only when one
// is returned.
type decoder struct {
	b      []byte
	parent *decoder
	name   string
	index  int
	depth  int
}

// pointer returns the JSON Pointer of d's message, with member name
// appended when name is not "".
func (d *decoder) pointer(name string) string {
	var parts []string
	if name != "" {
		parts = append(parts, name)
	}
	for at := d; at != nil && at.parent != nil; at = at.parent {
		if at.index >= 0 {
			parts = append(parts, strconv.Itoa(at.index))
		}
		if at.name != "" { // the levels of a structured value that JSON does not have
			parts = append(parts, at.name)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	slices.Reverse(parts)
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1")
	}
	return "/" + strings.Join(parts, "/")
}

// fail returns an InvalidParams error naming the field name of the
// message being read (or the message itself when name is "").
func (d *decoder) fail(name, reason string) error {
	return a2a.InvalidParams(d.pointer(name), reason)
}

// next reads the next field's tag: ok false at the end of the message.
func (d *decoder) next() (num, wt int, ok bool, err error) {
	if len(d.b) == 0 {
		return 0, 0, false, nil
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v>>3 == 0 || v>>3 > math.MaxInt32 {
		return 0, 0, false, d.fail("", "malformed protobuf: a bad field tag")
	}
	d.b = d.b[n:]
	return int(v >> 3), int(v & 7), true, nil
}

// varint reads a varint field's value.
func (d *decoder) varint(name string, wt int) (uint64, error) {
	if wt != wireVarint {
		return 0, d.fail(name, "wrong wire type (want a varint)")
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, d.fail(name, "malformed protobuf: a bad varint")
	}
	d.b = d.b[n:]
	return v, nil
}

// bytes reads a length-delimited field's content (not copied).
func (d *decoder) bytes(name string, wt int) ([]byte, error) {
	if wt != wireBytes {
		return nil, d.fail(name, "wrong wire type (want length-delimited)")
	}
	l, n := binary.Uvarint(d.b)
	if n <= 0 || l > uint64(len(d.b)-n) {
		return nil, d.fail(name, "malformed protobuf: a length beyond the message")
	}
	b := d.b[n : n+int(l)]
	d.b = d.b[n+int(l):]
	return b, nil
}

// str reads a string field, which must be UTF-8.
func (d *decoder) str(name string, wt int) (string, error) {
	b, err := d.bytes(name, wt)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", d.fail(name, "invalid UTF-8")
	}
	return string(b), nil
}

func (d *decoder) boolean(name string, wt int) (bool, error) {
	v, err := d.varint(name, wt)
	return v != 0, err
}

// int32 reads an int32 field.
func (d *decoder) int32(name string, wt int) (int, error) {
	v, err := d.varint(name, wt)
	return int(int32(v)), err
}

// skip passes over a field of an unknown number.
func (d *decoder) skip(wt int) error {
	switch wt {
	case wireVarint:
		_, err := d.varint("", wt)
		return err
	case wire64:
		if len(d.b) < 8 {
			return d.fail("", "malformed protobuf: a truncated field")
		}
		d.b = d.b[8:]
	case wireBytes:
		_, err := d.bytes("", wt)
		return err
	case wire32:
		if len(d.b) < 4 {
			return d.fail("", "malformed protobuf: a truncated field")
		}
		d.b = d.b[4:]
	default:
		return d.fail("", "malformed protobuf: an unsupported wire type (groups are not used by A2A)")
	}
	return nil
}

// enter returns the decoder of a message field named name (its JSON name;
// index, when >= 0, is its place in a repeated field).
func (d *decoder) enter(name string, index, wt int) (decoder, error) {
	b, err := d.bytes(name, wt)
	if err != nil {
		return decoder{}, err
	}
	if d.depth >= maxDepth {
		return decoder{}, d.fail(name, "nested too deep")
	}
	return decoder{b: b, parent: d, name: name, index: index, depth: d.depth + 1}, nil
}

// sub reads a message field with read, which reads the fields of the
// decoder enter gives.
func (d *decoder) sub(name string, index, wt int, read func(s *decoder) error) error {
	s, err := d.enter(name, index, wt)
	if err != nil {
		return err
	}
	return read(&s)
}

// fields reads every field of the message with field, which must read
// (or skip) the value of the field it is given.
func (d *decoder) fields(field func(num, wt int) error) error {
	for {
		num, wt, ok, err := d.next()
		if err != nil || !ok {
			return err
		}
		if err := field(num, wt); err != nil {
			return err
		}
	}
}

// timestamp reads a google.protobuf.Timestamp (seconds = 1, nanos = 2).
// timestamp reads a google.protobuf.Timestamp (seconds = 1, nanos = 2)
// into t; a second one given for the same field merges into the first.
func (d *decoder) timestamp(name string, wt int, t *time.Time) error {
	secs, nanos := t.Unix(), t.Nanosecond()
	if t.IsZero() {
		secs, nanos = 0, 0
	}
	err := d.sub(name, -1, wt, func(s *decoder) error {
		return s.fields(func(num, wt int) error {
			switch num {
			case 1:
				v, err := s.varint("seconds", wt)
				secs = int64(v)
				return err
			case 2:
				var err error
				nanos, err = s.int32("nanos", wt)
				return err
			}
			return s.skip(wt)
		})
	})
	if err != nil {
		return err
	}
	if nanos < 0 || nanos > 999_999_999 || secs < minSeconds || secs > maxSeconds {
		return d.fail(name, "a timestamp out of range")
	}
	*t = time.Unix(secs, int64(nanos)).UTC()
	return nil
}

// The range of a google.protobuf.Timestamp: years 1 to 9999.
const (
	minSeconds = -62135596800
	maxSeconds = 253402300799
)

// structValue reads a google.protobuf.Struct (fields = 1, map<string,
// Value>) into *m (made when nil; a Struct given twice merges).
func (d *decoder) structValue(name string, wt int, m *map[string]any) error {
	if *m == nil {
		*m = map[string]any{}
	}
	return d.sub(name, -1, wt, func(s *decoder) error { return s.structFields(*m) })
}

// structFields reads the entries of a Struct into m. Errors name a value
// by its key, as the JSON form has it.
func (d *decoder) structFields(m map[string]any) error {
	return d.fields(func(num, wt int) error {
		if num != 1 {
			return d.skip(wt)
		}
		var key string
		var val any
		err := d.sub("", -1, wt, func(e *decoder) error {
			return e.fields(func(num, wt int) error {
				switch num {
				case 1:
					var err error
					key, err = e.str("", wt)
					return err
				case 2:
					return e.sub(key, -1, wt, func(v *decoder) error {
						var err error
						val, err = v.value()
						return err
					})
				}
				return e.skip(wt)
			})
		})
		m[key] = val
		return err
	})
}

// value reads the fields of a google.protobuf.Value: null_value = 1,
// number_value = 2, string_value = 3, bool_value = 4, struct_value = 5,
// list_value = 6 {values = 1}. An empty Value is null. Errors name a list
// element by its index, as the JSON form has it.
func (d *decoder) value() (any, error) {
	var v any
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			_, err = d.varint("", wt)
			v = nil
		case 2:
			if wt != wire64 || len(d.b) < 8 {
				return d.fail("", "a number value must be a double")
			}
			f := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
			d.b = d.b[8:]
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return d.fail("", "a number JSON cannot hold")
			}
			v = f
		case 3:
			v, err = d.str("", wt)
		case 4:
			v, err = d.boolean("", wt)
		case 5:
			m, ok := v.(map[string]any)
			if !ok {
				m = map[string]any{}
			}
			err = d.sub("", -1, wt, func(s *decoder) error { return s.structFields(m) })
			v = m
		case 6:
			l, ok := v.([]any)
			if !ok {
				l = []any{}
			}
			err = d.sub("", -1, wt, func(s *decoder) error {
				return s.fields(func(num, wt int) error {
					if num != 1 {
						return s.skip(wt)
					}
					return s.sub("", len(l), wt, func(x *decoder) error {
						e, err := x.value()
						l = append(l, e)
						return err
					})
				})
			})
			v = l
		default:
			err = d.skip(wt)
		}
		return err
	})
	return v, err
}

// part reads a Part: exactly one of text, raw, url (not empty) or data.
func (d *decoder) part() (a2a.Part, error) {
	var p a2a.Part
	var content []string
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			content = append(content, "text")
			var s string
			s, err = d.str("text", wt)
			p.Content = a2a.Text(s)
		case 2:
			content = append(content, "raw")
			var b []byte
			b, err = d.bytes("raw", wt)
			p.Content = a2a.Raw(append([]byte{}, b...))
		case 3:
			content = append(content, "url")
			var s string
			if s, err = d.str("url", wt); err == nil && s == "" {
				err = d.fail("url", "url is empty")
			}
			p.Content = a2a.URL(s)
		case 4:
			content = append(content, "data")
			err = d.sub("data", -1, wt, func(s *decoder) error {
				v, err := s.value()
				p.Content = a2a.Data{Value: v}
				return err
			})
		case 5:
			err = d.structValue("metadata", wt, &p.Metadata)
		case 6:
			p.Filename, err = d.str("filename", wt)
		case 7:
			p.MediaType, err = d.str("mediaType", wt)
		default:
			err = d.skip(wt)
		}
		return err
	})
	switch {
	case err != nil:
	case len(content) == 0:
		err = d.fail("", "part has none of text, raw, url or data; exactly one is required")
	case len(content) > 1:
		err = d.fail("", "part has both "+content[0]+" and "+content[1]+"; exactly one of text, raw, url or data is allowed")
	}
	return p, err
}

// message reads a Message into m (a message given twice for one field
// merges): message_id and role are required, and with needParts at least
// one part.
func (d *decoder) message(m *a2a.Message, needParts bool) error {
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			m.MessageID, err = d.str("messageId", wt)
		case 2:
			m.ContextID, err = d.str("contextId", wt)
		case 3:
			m.TaskID, err = d.str("taskId", wt)
		case 4:
			var r uint64
			if r, err = d.varint("role", wt); err == nil {
				switch r {
				case 1:
					m.Role = a2a.RoleUser
				case 2:
					m.Role = a2a.RoleAgent
				default:
					err = d.fail("role", "role must be ROLE_USER or ROLE_AGENT")
				}
			}
		case 5:
			err = d.sub("parts", len(m.Parts), wt, func(s *decoder) error {
				p, err := s.part()
				m.Parts = append(m.Parts, p)
				return err
			})
		case 6:
			err = d.structValue("metadata", wt, &m.Metadata)
		case 7:
			var s string
			s, err = d.str("extensions", wt)
			m.Extensions = append(m.Extensions, s)
		case 8:
			var s string
			s, err = d.str("referenceTaskIds", wt)
			m.ReferenceTaskIDs = append(m.ReferenceTaskIDs, s)
		default:
			err = d.skip(wt)
		}
		return err
	})
	switch {
	case err != nil:
		return err
	case m.MessageID == "":
		return d.fail("messageId", "required field missing")
	case m.Role == "":
		return d.fail("role", "required field missing")
	case needParts && len(m.Parts) == 0:
		return d.fail("parts", "at least one part is required")
	}
	return nil
}

// status reads a TaskStatus into s.
func (d *decoder) status(s *a2a.TaskStatus) error {
	return d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			var v uint64
			if v, err = d.varint("state", wt); err == nil {
				if st := a2a.TaskState(v); v <= math.MaxInt32 && st.Valid() {
					s.State = st
				} else {
					err = d.fail("state", "an unknown task state")
				}
			}
		case 2:
			if s.Message == nil {
				s.Message = &a2a.Message{}
			}
			err = d.sub("message", -1, wt, func(sd *decoder) error { return sd.message(s.Message, false) })
		case 3:
			err = d.timestamp("timestamp", wt, &s.Timestamp)
		default:
			err = d.skip(wt)
		}
		return err
	})
}

// artifact reads an Artifact into a: artifact_id is required.
func (d *decoder) artifact(a *a2a.Artifact) error {
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			a.ArtifactID, err = d.str("artifactId", wt)
		case 2:
			a.Name, err = d.str("name", wt)
		case 3:
			a.Description, err = d.str("description", wt)
		case 4:
			err = d.sub("parts", len(a.Parts), wt, func(s *decoder) error {
				p, err := s.part()
				a.Parts = append(a.Parts, p)
				return err
			})
		case 5:
			err = d.structValue("metadata", wt, &a.Metadata)
		case 6:
			var s string
			s, err = d.str("extensions", wt)
			a.Extensions = append(a.Extensions, s)
		default:
			err = d.skip(wt)
		}
		return err
	})
	if err == nil && a.ArtifactID == "" {
		err = d.fail("artifactId", "required field missing")
	}
	return err
}

// task reads a Task: id and status are required.
func (d *decoder) task() (a2a.Task, error) {
	var t a2a.Task
	var hasStatus bool
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			t.ID, err = d.str("id", wt)
		case 2:
			t.ContextID, err = d.str("contextId", wt)
		case 3:
			hasStatus = true
			err = d.sub("status", -1, wt, func(s *decoder) error { return s.status(&t.Status) })
		case 4:
			err = d.sub("artifacts", len(t.Artifacts), wt, func(s *decoder) error {
				t.Artifacts = append(t.Artifacts, a2a.Artifact{})
				return s.artifact(&t.Artifacts[len(t.Artifacts)-1])
			})
		case 5:
			err = d.sub("history", len(t.History), wt, func(s *decoder) error {
				t.History = append(t.History, a2a.Message{})
				return s.message(&t.History[len(t.History)-1], false)
			})
		case 6:
			err = d.structValue("metadata", wt, &t.Metadata)
		default:
			err = d.skip(wt)
		}
		return err
	})
	switch {
	case err != nil:
	case t.ID == "":
		err = d.fail("id", "required field missing")
	case !hasStatus:
		err = d.fail("status", "required field missing")
	}
	return t, err
}

// statusUpdate reads a TaskStatusUpdateEvent: task_id and status are
// required; Final is true on a state that ends a stream.
func (d *decoder) statusUpdate() (a2a.TaskStatusUpdateEvent, error) {
	var u a2a.TaskStatusUpdateEvent
	var hasStatus bool
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			u.TaskID, err = d.str("taskId", wt)
		case 2:
			u.ContextID, err = d.str("contextId", wt)
		case 3:
			hasStatus = true
			err = d.sub("status", -1, wt, func(s *decoder) error { return s.status(&u.Status) })
		case 4:
			err = d.structValue("metadata", wt, &u.Metadata)
		default:
			err = d.skip(wt)
		}
		return err
	})
	switch {
	case err != nil:
	case u.TaskID == "":
		err = d.fail("taskId", "required field missing")
	case !hasStatus:
		err = d.fail("status", "required field missing")
	}
	u.Final = u.Status.State.Final()
	return u, err
}

// artifactUpdate reads a TaskArtifactUpdateEvent: task_id and artifact
// are required.
func (d *decoder) artifactUpdate() (a2a.TaskArtifactUpdateEvent, error) {
	var u a2a.TaskArtifactUpdateEvent
	var hasArtifact bool
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			u.TaskID, err = d.str("taskId", wt)
		case 2:
			u.ContextID, err = d.str("contextId", wt)
		case 3:
			hasArtifact = true
			err = d.sub("artifact", -1, wt, func(s *decoder) error { return s.artifact(&u.Artifact) })
		case 4:
			u.Append, err = d.boolean("append", wt)
		case 5:
			u.LastChunk, err = d.boolean("lastChunk", wt)
		case 6:
			err = d.structValue("metadata", wt, &u.Metadata)
		default:
			err = d.skip(wt)
		}
		return err
	})
	switch {
	case err != nil:
	case u.TaskID == "":
		err = d.fail("taskId", "required field missing")
	case !hasArtifact:
		err = d.fail("artifact", "required field missing")
	}
	return u, err
}

// event reads a StreamResponse (or, with onlyTaskOrMessage, a
// SendMessageResponse): exactly one member of its payload oneof.
func (d *decoder) event(onlyTaskOrMessage bool, seq *int64) (a2a.Event, error) {
	var ev a2a.Event
	var given []string
	err := d.fields(func(num, wt int) error {
		read := func(name string, fn func(s *decoder) (a2a.Event, error)) error {
			given = append(given, name)
			return d.sub(name, -1, wt, func(s *decoder) error {
				e, err := fn(s)
				ev = e
				return err
			})
		}
		switch {
		case num == 1:
			return read("task", func(s *decoder) (a2a.Event, error) { t, err := s.task(); return &t, err })
		case num == 2:
			return read("message", func(s *decoder) (a2a.Event, error) {
				m := &a2a.Message{}
				return m, s.message(m, false)
			})
		case num == 3 && !onlyTaskOrMessage:
			return read("statusUpdate", func(s *decoder) (a2a.Event, error) { u, err := s.statusUpdate(); return &u, err })
		case num == 4 && !onlyTaskOrMessage:
			return read("artifactUpdate", func(s *decoder) (a2a.Event, error) { u, err := s.artifactUpdate(); return &u, err })
		case num == EventSeqField && seq != nil:
			v, err := d.varint("eventSeq", wt)
			if err == nil && v > math.MaxInt64 {
				err = d.fail("eventSeq", "an event sequence number out of range")
			}
			*seq = int64(v)
			return err
		}
		return d.skip(wt)
	})
	switch {
	case err != nil:
		return nil, err
	case len(given) > 1:
		return nil, d.fail("", "response has both "+given[0]+" and "+given[1]+"; exactly one is allowed")
	case ev == nil && onlyTaskOrMessage:
		return nil, d.fail("", "response has neither task nor message")
	case ev == nil:
		return nil, d.fail("", "response has none of task, message, statusUpdate or artifactUpdate")
	}
	return ev, nil
}

// pushConfig reads a TaskPushNotificationConfig: url is required, and an
// authentication's scheme.
func (d *decoder) pushConfig() (a2a.TaskPushNotificationConfig, error) {
	var c a2a.TaskPushNotificationConfig
	err := d.fields(func(num, wt int) error {
		var err error
		switch num {
		case 1:
			c.Tenant, err = d.str("tenant", wt)
		case 2:
			c.PushNotificationConfig.ID, err = d.str("id", wt)
		case 3:
			c.TaskID, err = d.str("taskId", wt)
		case 4:
			c.PushNotificationConfig.URL, err = d.str("url", wt)
		case 5:
			c.PushNotificationConfig.Token, err = d.str("token", wt)
		case 6:
			auth := c.PushNotificationConfig.Authentication
			if auth == nil {
				auth = &a2a.AuthenticationInfo{}
			}
			err = d.sub("authentication", -1, wt, func(s *decoder) error {
				err := s.fields(func(num, wt int) error {
					var err error
					switch num {
					case 1:
						var scheme string
						if scheme, err = s.str("scheme", wt); err == nil {
							auth.Schemes = []string{scheme}
						}
					case 2:
						auth.Credentials, err = s.str("credentials", wt)
					default:
						err = s.skip(wt)
					}
					return err
				})
				if err == nil && (len(auth.Schemes) == 0 || auth.Schemes[0] == "") {
					err = s.fail("scheme", "required field missing")
				}
				return err
			})
			c.PushNotificationConfig.Authentication = auth
		default:
			err = d.skip(wt)
		}
		return err
	})
	if err == nil && c.PushNotificationConfig.URL == "" {
		err = d.fail("url", "required field missing")
	}
	return c, err
}
