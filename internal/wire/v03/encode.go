package v03

import (
	"encoding/base64"
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
// json.Marshal(…, json.Deterministic(true)) makes of the wire structs in
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

// appendMember appends `"name":` (name needs no escaping) after a comma
// unless first.
func appendMember(dst []byte, name string, first bool) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

func appendStringMember(dst []byte, name, v string, first bool) ([]byte, error) {
	return appendString(appendMember(dst, name, first), v)
}

func appendStrings(dst []byte, ss []string) ([]byte, error) {
	dst = append(dst, '[')
	var err error
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendString(dst, s); err != nil {
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

// appendAny appends a metadata or data value: the types JSON decoding
// yields (nil, bool, float64, string, []any, map[string]any) and the
// integer types directly, anything else through json.Marshal.
func appendAny(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, v)
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
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendMetadata appends `,"metadata":{…}` unless m is empty.
func appendMetadata(dst []byte, m map[string]any) ([]byte, error) {
	if len(m) == 0 {
		return dst, nil
	}
	return appendObject(appendMember(dst, "metadata", false), m)
}

func appendParts(dst []byte, ps []a2a.Part) ([]byte, error) {
	dst = append(dst, '[')
	var err error
	for i, p := range ps {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendPart(dst, p); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// appendPart appends one Part (A2A 0.3.0 §6.5); a nil Part is encoded as
// an empty TextPart so the output stays valid.
func appendPart(dst []byte, p a2a.Part) ([]byte, error) {
	switch q := p.(type) {
	case *a2a.TextPart:
		if q != nil {
			p = *q
		} else {
			p = nil
		}
	case *a2a.FilePart:
		if q != nil {
			p = *q
		} else {
			p = nil
		}
	case *a2a.DataPart:
		if q != nil {
			p = *q
		} else {
			p = nil
		}
	}
	var err error
	var meta map[string]any
	switch p := p.(type) {
	case a2a.TextPart:
		dst = append(dst, `{"kind":"text","text":`...)
		if dst, err = appendString(dst, p.Text); err != nil {
			return dst, err
		}
		meta = p.Metadata
	case a2a.FilePart:
		dst = append(dst, `{"kind":"file","file":{`...)
		first := true
		if p.File.Name != "" {
			if dst, err = appendStringMember(dst, "name", p.File.Name, first); err != nil {
				return dst, err
			}
			first = false
		}
		if p.File.MimeType != "" {
			if dst, err = appendStringMember(dst, "mimeType", p.File.MimeType, first); err != nil {
				return dst, err
			}
			first = false
		}
		if p.File.Bytes != nil || p.File.URI == "" {
			dst = appendMember(dst, "bytes", first)
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, p.File.Bytes)
			dst = append(dst, '"')
		} else if dst, err = appendStringMember(dst, "uri", p.File.URI, first); err != nil {
			return dst, err
		}
		dst = append(dst, '}')
		meta = p.Metadata
	case a2a.DataPart:
		dst = append(dst, `{"kind":"data","data":`...)
		if dst, err = appendObject(dst, p.Data); err != nil {
			return dst, err
		}
		meta = p.Metadata
	default:
		return append(dst, `{"kind":"text","text":""}`...), nil
	}
	if dst, err = appendMetadata(dst, meta); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendMessage appends a Message (A2A 0.3.0 §6.4).
func appendMessage(dst []byte, m *a2a.Message) ([]byte, error) {
	var err error
	dst = append(dst, `{"kind":"message","messageId":`...)
	if dst, err = appendString(dst, m.MessageID); err != nil {
		return dst, err
	}
	if dst, err = appendStringMember(dst, "role", string(m.Role), false); err != nil {
		return dst, err
	}
	if dst, err = appendParts(appendMember(dst, "parts", false), m.Parts); err != nil {
		return dst, err
	}
	if m.ContextID != "" {
		if dst, err = appendStringMember(dst, "contextId", m.ContextID, false); err != nil {
			return dst, err
		}
	}
	if m.TaskID != "" {
		if dst, err = appendStringMember(dst, "taskId", m.TaskID, false); err != nil {
			return dst, err
		}
	}
	if len(m.ReferenceTaskIDs) > 0 {
		if dst, err = appendStrings(appendMember(dst, "referenceTaskIds", false), m.ReferenceTaskIDs); err != nil {
			return dst, err
		}
	}
	if len(m.Extensions) > 0 {
		if dst, err = appendStrings(appendMember(dst, "extensions", false), m.Extensions); err != nil {
			return dst, err
		}
	}
	if dst, err = appendMetadata(dst, m.Metadata); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendStatus appends a TaskStatus (A2A 0.3.0 §6.2).
func appendStatus(dst []byte, s *a2a.TaskStatus) ([]byte, error) {
	var err error
	dst = append(dst, `{"state":`...)
	if dst, err = appendString(dst, string(s.State)); err != nil {
		return dst, err
	}
	if s.Message != nil {
		if dst, err = appendMessage(appendMember(dst, "message", false), s.Message); err != nil {
			return dst, err
		}
	}
	if !s.Timestamp.IsZero() {
		dst = append(dst, `,"timestamp":"`...)
		dst = appendTime(dst, s.Timestamp)
		dst = append(dst, '"')
	}
	return append(dst, '}'), nil
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

// appendArtifact appends an Artifact (A2A 0.3.0 §6.7).
func appendArtifact(dst []byte, a *a2a.Artifact) ([]byte, error) {
	var err error
	dst = append(dst, `{"artifactId":`...)
	if dst, err = appendString(dst, a.ArtifactID); err != nil {
		return dst, err
	}
	if a.Name != "" {
		if dst, err = appendStringMember(dst, "name", a.Name, false); err != nil {
			return dst, err
		}
	}
	if a.Description != "" {
		if dst, err = appendStringMember(dst, "description", a.Description, false); err != nil {
			return dst, err
		}
	}
	if dst, err = appendParts(appendMember(dst, "parts", false), a.Parts); err != nil {
		return dst, err
	}
	if len(a.Extensions) > 0 {
		if dst, err = appendStrings(appendMember(dst, "extensions", false), a.Extensions); err != nil {
			return dst, err
		}
	}
	if dst, err = appendMetadata(dst, a.Metadata); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendTask appends a Task (A2A 0.3.0 §6.1).
func appendTask(dst []byte, t *a2a.Task) ([]byte, error) {
	var err error
	dst = append(dst, `{"kind":"task","id":`...)
	if dst, err = appendString(dst, t.ID); err != nil {
		return dst, err
	}
	if dst, err = appendStringMember(dst, "contextId", t.ContextID, false); err != nil {
		return dst, err
	}
	if dst, err = appendStatus(appendMember(dst, "status", false), &t.Status); err != nil {
		return dst, err
	}
	if len(t.History) > 0 {
		dst = appendMember(dst, "history", false)
		dst = append(dst, '[')
		for i := range t.History {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendMessage(dst, &t.History[i]); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	if len(t.Artifacts) > 0 {
		dst = appendMember(dst, "artifacts", false)
		dst = append(dst, '[')
		for i := range t.Artifacts {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendArtifact(dst, &t.Artifacts[i]); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	if dst, err = appendMetadata(dst, t.Metadata); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendEvent appends any of the four event kinds; on error dst may hold a
// partial encoding after its original length.
func appendEvent(dst []byte, e a2a.Event) ([]byte, error) {
	var err error
	switch e := e.(type) {
	case *a2a.Task:
		if e != nil {
			return appendTask(dst, e)
		}
	case *a2a.Message:
		if e != nil {
			return appendMessage(dst, e)
		}
	case *a2a.TaskStatusUpdateEvent:
		if e == nil {
			break
		}
		dst = append(dst, `{"kind":"status-update","taskId":`...)
		if dst, err = appendString(dst, e.TaskID); err != nil {
			return dst, err
		}
		if dst, err = appendStringMember(dst, "contextId", e.ContextID, false); err != nil {
			return dst, err
		}
		if dst, err = appendStatus(appendMember(dst, "status", false), &e.Status); err != nil {
			return dst, err
		}
		dst = strconv.AppendBool(appendMember(dst, "final", false), e.Final)
		if dst, err = appendMetadata(dst, e.Metadata); err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	case *a2a.TaskArtifactUpdateEvent:
		if e == nil {
			break
		}
		dst = append(dst, `{"kind":"artifact-update","taskId":`...)
		if dst, err = appendString(dst, e.TaskID); err != nil {
			return dst, err
		}
		if dst, err = appendStringMember(dst, "contextId", e.ContextID, false); err != nil {
			return dst, err
		}
		if dst, err = appendArtifact(appendMember(dst, "artifact", false), &e.Artifact); err != nil {
			return dst, err
		}
		if e.Append {
			dst = append(dst, `,"append":true`...)
		}
		if e.LastChunk {
			dst = append(dst, `,"lastChunk":true`...)
		}
		if dst, err = appendMetadata(dst, e.Metadata); err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	}
	return dst, errors.New("v03: unknown event type")
}
