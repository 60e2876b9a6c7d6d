package pb

import (
	"encoding/binary"
	stdjson "encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// Wire types of the binary encoding.
const (
	wireVarint = 0
	wire64     = 1
	wireBytes  = 2
	wire32     = 5
)

// Errors of the encoders.
var (
	// ErrInvalidUTF8 is returned for a string that is not UTF-8, which a
	// proto3 string field cannot hold (protobuf-go refuses to read it).
	ErrInvalidUTF8 = errors.New("pb: a string is not valid UTF-8")
	// ErrUnsupportedValue is returned for a structured value (metadata, a
	// Data part) that google.protobuf.Value cannot hold: NaN, an infinity,
	// a json.Number that is not a JSON number, a value JSON cannot encode,
	// a timestamp outside years 1 to 9999.
	ErrUnsupportedValue = errors.New("pb: a value the binary encoding cannot hold")
)

// encoder appends fields to b; the first error is kept in err and the
// rest of the encoding goes on, so that callers check once (finish).
type encoder struct {
	b   []byte
	err error
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// finish returns what e appended after dst[:n], or dst[:n] and the error.
func (e *encoder) finish(dst []byte, n int) ([]byte, error) {
	if e.err != nil {
		return dst[:n], e.err
	}
	return e.b, nil
}

func (e *encoder) tag(num, wt int) {
	e.b = binary.AppendUvarint(e.b, uint64(num)<<3|uint64(wt))
}

// begin starts a length-delimited field (a message) of number num and
// returns where its content starts; end writes its length there.
func (e *encoder) begin(num int) int {
	e.tag(num, wireBytes)
	e.b = append(e.b, 0) // one byte of length, grown by end when needed
	return len(e.b)
}

// end closes the field begin opened at start: its length goes before its
// content, which moves when the length takes more than one byte.
func (e *encoder) end(start int) {
	n := len(e.b) - start
	if n < 0x80 {
		e.b[start-1] = byte(n)
		return
	}
	var lb [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(lb[:], uint64(n))
	e.b = append(e.b, lb[:k-1]...)
	copy(e.b[start+k-1:], e.b[start:start+n])
	copy(e.b[start-1:], lb[:k])
}

// str writes a string field; "" is not written (proto3 without presence).
func (e *encoder) str(num int, s string) {
	if s != "" {
		e.strAlways(num, s)
	}
}

// strAlways writes a string field even when it is "" (a oneof member).
func (e *encoder) strAlways(num int, s string) {
	if !utf8.ValidString(s) {
		e.fail(ErrInvalidUTF8)
	}
	e.tag(num, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) strs(num int, ss []string) {
	for _, s := range ss {
		e.strAlways(num, s)
	}
}

func (e *encoder) bytesAlways(num int, b []byte) {
	e.tag(num, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(b)))
	e.b = append(e.b, b...)
}

func (e *encoder) uvarint(num int, v uint64) {
	if v != 0 {
		e.tag(num, wireVarint)
		e.b = binary.AppendUvarint(e.b, v)
	}
}

// int32 writes an int32 field; a negative value takes ten bytes, as the
// encoding has it.
func (e *encoder) int32(num int, v int) {
	e.uvarint(num, uint64(int64(int32(v))))
}

func (e *encoder) boolean(num int, v bool) {
	if v {
		e.tag(num, wireVarint)
		e.b = append(e.b, 1)
	}
}

func (e *encoder) double(num int, f float64) {
	e.tag(num, wire64)
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(f))
}

// timestamp writes a google.protobuf.Timestamp; the zero time is not
// written, and one outside years 1 to 9999 is ErrUnsupportedValue.
func (e *encoder) timestamp(num int, t time.Time) {
	if t.IsZero() {
		return
	}
	if s := t.Unix(); s < minSeconds || s > maxSeconds {
		e.fail(ErrUnsupportedValue)
	}
	at := e.begin(num)
	e.uvarint(1, uint64(t.Unix()))
	e.int32(2, t.Nanosecond())
	e.end(at)
}

// structValue writes a google.protobuf.Struct; a nil or empty map is not
// written.
func (e *encoder) structValue(num int, m map[string]any) {
	if len(m) == 0 {
		return
	}
	at := e.begin(num)
	e.fields(m)
	e.end(at)
}

// fields writes the entries of a Struct (map<string, Value> fields = 1),
// keys in byte order so that a value has one encoding.
func (e *encoder) fields(m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		at := e.begin(1)
		e.strAlways(1, k)
		vat := e.begin(2)
		e.value(m[k])
		e.end(vat)
		e.end(at)
	}
}

// value writes the content of a google.protobuf.Value: null_value = 1,
// number_value = 2, string_value = 3, bool_value = 4, struct_value = 5,
// list_value = 6.
func (e *encoder) value(v any) {
	switch v := v.(type) {
	case nil:
		e.tag(1, wireVarint)
		e.b = append(e.b, 0)
	case bool:
		e.tag(4, wireVarint)
		if v {
			e.b = append(e.b, 1)
		} else {
			e.b = append(e.b, 0)
		}
	case string:
		e.strAlways(3, v)
	case float64:
		e.number(v)
	case float32:
		e.number(float64(v))
	case int:
		e.number(float64(v))
	case int64:
		e.number(float64(v))
	case int32:
		e.number(float64(v))
	case uint64:
		e.number(float64(v))
	case stdjson.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || !wirejson.ValidNumber(string(v)) {
			e.fail(ErrUnsupportedValue)
		}
		e.number(f)
	case map[string]any:
		at := e.begin(5)
		e.fields(v)
		e.end(at)
	case []any:
		at := e.begin(6)
		for _, x := range v {
			xat := e.begin(1)
			e.value(x)
			e.end(xat)
		}
		e.end(at)
	case []string:
		at := e.begin(6)
		for _, s := range v {
			xat := e.begin(1)
			e.strAlways(3, s)
			e.end(xat)
		}
		e.end(at)
	default:
		// Another Go value (a struct, a typed map): as JSON has it.
		b, err := json.Marshal(v, json.Deterministic(true))
		var x any
		if err == nil {
			err = json.Unmarshal(b, &x)
		}
		if err != nil {
			e.fail(ErrUnsupportedValue)
			e.tag(1, wireVarint)
			e.b = append(e.b, 0)
			return
		}
		e.value(x)
	}
}

func (e *encoder) number(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.fail(ErrUnsupportedValue)
	}
	e.double(2, f)
}

// part writes a Part (A2A 1.0 §4.1.6): text = 1, raw = 2, url = 3, data =
// 4 (oneof content), metadata = 5, filename = 6, media_type = 7.
func (e *encoder) part(p *a2a.Part) {
	switch c := p.Content.(type) {
	case a2a.Text:
		e.strAlways(1, string(c))
	case a2a.Raw:
		e.bytesAlways(2, c)
	case a2a.URL:
		e.strAlways(3, string(c))
	case a2a.Data:
		at := e.begin(4)
		e.value(c.Value)
		e.end(at)
	default:
		e.strAlways(1, "") // no content: an empty text, as the JSON codec writes it
	}
	e.structValue(5, p.Metadata)
	e.str(6, p.Filename)
	e.str(7, p.MediaType)
}

// message writes a Message (A2A 1.0 §4.1.4): message_id = 1, context_id =
// 2, task_id = 3, role = 4, parts = 5, metadata = 6, extensions = 7,
// reference_task_ids = 8.
func (e *encoder) message(m *a2a.Message) {
	e.str(1, m.MessageID)
	e.str(2, m.ContextID)
	e.str(3, m.TaskID)
	e.uvarint(4, uint64(roleNumber(m.Role)))
	for i := range m.Parts {
		at := e.begin(5)
		e.part(&m.Parts[i])
		e.end(at)
	}
	e.structValue(6, m.Metadata)
	e.strs(7, m.Extensions)
	e.strs(8, m.ReferenceTaskIDs)
}

func roleNumber(r a2a.Role) int {
	switch r {
	case a2a.RoleUser:
		return 1
	case a2a.RoleAgent:
		return 2
	}
	return 0
}

// status writes a TaskStatus (A2A 1.0 §4.1.2): state = 1, message = 2,
// timestamp = 3.
func (e *encoder) status(s *a2a.TaskStatus) {
	if s.State.Valid() {
		e.uvarint(1, uint64(s.State))
	}
	if s.Message != nil {
		at := e.begin(2)
		e.message(s.Message)
		e.end(at)
	}
	e.timestamp(3, s.Timestamp)
}

// artifact writes an Artifact (A2A 1.0 §4.1.7): artifact_id = 1, name =
// 2, description = 3, parts = 4, metadata = 5, extensions = 6.
func (e *encoder) artifact(a *a2a.Artifact) {
	e.str(1, a.ArtifactID)
	e.str(2, a.Name)
	e.str(3, a.Description)
	for i := range a.Parts {
		at := e.begin(4)
		e.part(&a.Parts[i])
		e.end(at)
	}
	e.structValue(5, a.Metadata)
	e.strs(6, a.Extensions)
}

// task writes a Task (A2A 1.0 §4.1.1): id = 1, context_id = 2, status =
// 3 (always written: it is REQUIRED), artifacts = 4, history = 5, metadata
// = 6. Artifacts are left out without withArtifacts (ListTasks without
// includeArtifacts).
func (e *encoder) task(t *a2a.Task, withArtifacts bool) {
	e.str(1, t.ID)
	e.str(2, t.ContextID)
	at := e.begin(3)
	e.status(&t.Status)
	e.end(at)
	if withArtifacts {
		for i := range t.Artifacts {
			at := e.begin(4)
			e.artifact(&t.Artifacts[i])
			e.end(at)
		}
	}
	for i := range t.History {
		at := e.begin(5)
		e.message(&t.History[i])
		e.end(at)
	}
	e.structValue(6, t.Metadata)
}

// statusUpdate writes a TaskStatusUpdateEvent (A2A 1.0 §4.2.1): task_id =
// 1, context_id = 2, status = 3, metadata = 4. Final has no field.
func (e *encoder) statusUpdate(u *a2a.TaskStatusUpdateEvent) {
	e.str(1, u.TaskID)
	e.str(2, u.ContextID)
	at := e.begin(3)
	e.status(&u.Status)
	e.end(at)
	e.structValue(4, u.Metadata)
}

// artifactUpdate writes a TaskArtifactUpdateEvent (A2A 1.0 §4.2.2):
// task_id = 1, context_id = 2, artifact = 3, append = 4, last_chunk = 5,
// metadata = 6.
func (e *encoder) artifactUpdate(u *a2a.TaskArtifactUpdateEvent) {
	e.str(1, u.TaskID)
	e.str(2, u.ContextID)
	at := e.begin(3)
	e.artifact(&u.Artifact)
	e.end(at)
	e.boolean(4, u.Append)
	e.boolean(5, u.LastChunk)
	e.structValue(6, u.Metadata)
}

// event writes ev as the member of a StreamResponse's (or, with
// onlyTaskOrMessage, a SendMessageResponse's) payload oneof: task = 1,
// message = 2, status_update = 3, artifact_update = 4.
func (e *encoder) event(ev a2a.Event, onlyTaskOrMessage bool) {
	switch ev := ev.(type) {
	case *a2a.Task:
		at := e.begin(1)
		e.task(ev, true)
		e.end(at)
	case *a2a.Message:
		at := e.begin(2)
		e.message(ev)
		e.end(at)
	case *a2a.TaskStatusUpdateEvent:
		if onlyTaskOrMessage {
			e.fail(errNotTaskOrMessage)
			return
		}
		at := e.begin(3)
		e.statusUpdate(ev)
		e.end(at)
	case *a2a.TaskArtifactUpdateEvent:
		if onlyTaskOrMessage {
			e.fail(errNotTaskOrMessage)
			return
		}
		at := e.begin(4)
		e.artifactUpdate(ev)
		e.end(at)
	default:
		e.fail(errNoEvent)
	}
}

var (
	errNotTaskOrMessage = errors.New("pb: a SendMessageResponse holds a Task or a Message")
	errNoEvent          = errors.New("pb: not an A2A event (want *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent or *a2a.TaskArtifactUpdateEvent)")
)

// pushConfig writes a TaskPushNotificationConfig (A2A 1.0 §4.3.1,
// flattened): tenant = 1, id = 2, task_id = 3, url = 4, token = 5,
// authentication = 6 {scheme = 1, credentials = 2}; the one scheme is
// Schemes[0].
func (e *encoder) pushConfig(c *a2a.TaskPushNotificationConfig) {
	e.str(1, c.Tenant)
	e.str(2, c.PushNotificationConfig.ID)
	e.str(3, c.TaskID)
	e.str(4, c.PushNotificationConfig.URL)
	e.str(5, c.PushNotificationConfig.Token)
	if a := c.PushNotificationConfig.Authentication; a != nil {
		at := e.begin(6)
		if len(a.Schemes) > 0 {
			e.str(1, a.Schemes[0])
		}
		e.str(2, a.Credentials)
		e.end(at)
	}
}
