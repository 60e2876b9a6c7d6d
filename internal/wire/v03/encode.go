package v03

import (
	"encoding/base64"
	stdjson "encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
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

// errInvalidUTF8 is returned for a string that is not valid UTF-8, which
// JSON text cannot carry (RFC 8259 §8.1).
var errInvalidUTF8 = errors.New("v03: string is not valid UTF-8")

// safeASCII[c] is true for the bytes a JSON string holds unescaped.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) ([]byte, error) {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return dst, errInvalidUTF8
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), nil
}

// appendStrings appends ss as a JSON array of strings.
func appendStrings(dst []byte, ss []string) ([]byte, error) {
	dst = append(dst, '[')
	var err error
	for i, v := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendString(dst, v); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// appendObject appends m as a JSON object with its keys in byte order (a
// nil map is {}).
func appendObject(dst []byte, m map[string]any) ([]byte, error) {
	var err error
	switch len(m) {
	case 0:
		return append(dst, '{', '}'), nil
	case 1:
		dst = append(dst, '{')
		for k, v := range m {
			if dst, err = appendString(dst, k); err != nil {
				return dst, err
			}
			dst = append(dst, ':')
			if dst, err = appendAny(dst, v); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendString(dst, k); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		if dst, err = appendAny(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendFloat appends f as json/v2 does: the shortest representation that
// reads back the same, in exponent form below 1e-6 and from 1e21 on.
func appendFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, errors.New("v03: metadata holds a non-finite number")
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// e-09 → e-9
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// errBadNumber is returned for a json.Number whose text is not a JSON
// number (a Go caller can put anything in one).
var errBadNumber = errors.New("v03: a json.Number holds text that is not a JSON number")

// appendAny appends a metadata or data value: the types decoding yields
// (nil, bool, json.Number, string, []any, map[string]any), float64 and the
// integer types directly, anything else through json.Marshal. A
// json.Number is written as its literal text.
func appendAny(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, v)
	case stdjson.Number:
		if !validNumber(string(v)) {
			return dst, errBadNumber
		}
		return append(dst, v...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case float64:
		return appendFloat(dst, v, 64)
	case float32:
		return appendFloat(dst, float64(v), 32)
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case uint64:
		return strconv.AppendUint(dst, v, 10), nil
	case map[string]any:
		return appendObject(dst, v)
	case []any:
		dst = append(dst, '[')
		var err error
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendAny(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case []string:
		return appendStrings(dst, v)
	}
	b, err := json.Marshal(v, encodeOpts)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// encoder writes the structured values into b. Its first error sticks:
// later writes go on (their output is dropped) and err reports it.
type encoder struct {
	b   []byte
	err error
}

// str appends v as a JSON string.
func (e *encoder) str(v string) {
	var err error
	if e.b, err = appendString(e.b, v); err != nil && e.err == nil {
		e.err = err
	}
}

// member appends `,"name":` (name needs no escaping).
func (e *encoder) member(name string) {
	e.b = append(e.b, ',', '"')
	e.b = append(e.b, name...)
	e.b = append(e.b, '"', ':')
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
		if e.b, err = appendStrings(e.b, ss); err != nil && e.err == nil {
			e.err = err
		}
	}
}

// object appends m as a JSON object (a nil map is {}).
func (e *encoder) object(m map[string]any) {
	var err error
	if e.b, err = appendObject(e.b, m); err != nil && e.err == nil {
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

// part appends one Part (A2A 0.3.0 §6.5); a nil Part is encoded as an
// empty TextPart so the output stays valid.
func (e *encoder) part(p a2a.Part) {
	switch q := p.(type) {
	case *a2a.TextPart:
		p = nil
		if q != nil {
			p = *q
		}
	case *a2a.FilePart:
		p = nil
		if q != nil {
			p = *q
		}
	case *a2a.DataPart:
		p = nil
		if q != nil {
			p = *q
		}
	}
	switch p := p.(type) {
	case a2a.TextPart:
		e.b = append(e.b, `{"kind":"text","text":`...)
		e.str(p.Text)
		e.metadata(p.Metadata)
	case a2a.FilePart:
		e.b = append(e.b, `{"kind":"file","file":{`...)
		n := len(e.b)
		e.optional("name", p.File.Name)
		e.optional("mimeType", p.File.MimeType)
		if p.File.Bytes != nil || p.File.URI == "" {
			e.member("bytes")
			e.b = append(e.b, '"')
			e.b = base64.StdEncoding.AppendEncode(e.b, p.File.Bytes)
			e.b = append(e.b, '"')
		} else {
			e.member("uri")
			e.str(p.File.URI)
		}
		e.b = slices.Delete(e.b, n, n+1) // the first member's comma
		e.b = append(e.b, '}')
		e.metadata(p.Metadata)
	case a2a.DataPart:
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
	e.str(string(s.State))
	if s.Message != nil {
		e.member("message")
		e.message(s.Message)
	}
	if !s.Timestamp.IsZero() {
		e.b = append(e.b, `,"timestamp":"`...)
		e.b = appendTime(e.b, s.Timestamp)
		e.b = append(e.b, '"')
	}
	e.b = append(e.b, '}')
}

// appendTime appends t as FormatTime does: 2025-06-01T12:00:00.000Z.
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, "2006-01-02T15:04:05.000Z07:00")
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(dst,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
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
		e.b = append(e.b, '[')
		for i := range t.History {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.message(&t.History[i])
		}
		e.b = append(e.b, ']')
	}
	if len(t.Artifacts) > 0 {
		e.member("artifacts")
		e.b = append(e.b, '[')
		for i := range t.Artifacts {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.artifact(&t.Artifacts[i])
		}
		e.b = append(e.b, ']')
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
