// Package record is the storage format of a2abridge's stores: a compact,
// versioned binary encoding of the domain model's log events (a2a.Task,
// a2a.Message, a2a.TaskStatusUpdateEvent, a2a.TaskArtifactUpdateEvent) and
// push notification configs. It belongs to no protocol version: it holds
// every field of package a2a, those A2A 0.3 cannot carry (a part's
// MediaType and Filename, a Data part whose Value is not an object)
// included, and what a store persists in it is read back whatever wire
// version a client speaks.
//
// # Format version 1
//
// Every encoded value starts with two bytes: the format version (1) and
// the kind (1 Task, 2 Message, 3 TaskStatusUpdateEvent, 4
// TaskArtifactUpdateEvent, 5 PushNotificationConfig). A later format gets
// a new version byte; the decoder keeps reading every version it ever
// wrote, so stored records need no rewrite when one is added.
//
// The body is the value's fields in a fixed order, every field always
// present, with these encodings:
//
//	uvarint, varint   encoding/binary's (LEB128; varint zig-zag)
//	bool              one byte, 0 or 1
//	str               uvarint length, then that many bytes of UTF-8
//	strs              uvarint count, then count str
//	bytes             uvarint length, then the raw bytes
//	value             one tag byte, then: 0 null; 1 false; 2 true;
//	                  3 string (str); 4 number (str: the JSON number's
//	                  literal text); 5 array (uvarint count, count value);
//	                  6 object (map)
//	map               uvarint count, then count (str key, value) pairs,
//	                  keys in strictly increasing byte order
//	parts             uvarint count, then count part
//	part              one tag byte, then:
//	                  1 text: str text, str mediaType, str filename, map metadata
//	                  2 file: str name, str mimeType, bool hasBytes,
//	                    [bytes, when hasBytes], str uri, map metadata
//	                  3 data: value data, str mediaType, str filename, map metadata
//	message           str messageId, str role, parts, str contextId,
//	                  str taskId, strs referenceTaskIds, strs extensions,
//	                  map metadata
//	status            str state, one flags byte (bit 0: a message
//	                  follows; bit 1: a timestamp follows), [message],
//	                  [varint Unix seconds, uvarint nanoseconds < 1e9]
//	artifact          str artifactId, str name, str description, parts,
//	                  strs extensions, map metadata
//
// and the kinds' bodies:
//
//	1 Task            str id, str contextId, status, uvarint count and
//	                  count message (history), uvarint count and count
//	                  artifact, map metadata
//	2 Message         message
//	3 status update   str taskId, str contextId, status, bool final, map metadata
//	4 artifact update str taskId, str contextId, artifact, one flags
//	                  byte (bit 0: append, bit 1: lastChunk), map metadata
//	5 push config     str id, str url, str token, bool hasAuthentication,
//	                  [strs schemes, str credentials], str protocolVersion
//
// Nothing may follow the body. A nil map or slice and an empty one are
// both written as count 0 and read back as nil (History, Artifacts,
// Metadata, the string lists), except Parts, which is read back as an
// empty, non-nil slice. A file part is a Raw part (hasBytes set, its
// bytes, uri "") or a URL part (hasBytes clear, its uri); one without
// bytes and without a uri, or with both (as earlier versions of the
// encoder wrote some), is read back as a Raw part: the empty file, or its
// bytes.
//
// # Values
//
// Metadata and a Data part's Value hold the JSON data model, as decoding
// JSON yields it: nil, bool, string, encoding/json.Number (a number as its
// literal text, so 123456789012345678901234567890 stays exact), []any and
// map[string]any. Those are stored as they are and read back the same.
// Other Go values an agent may put there are stored as the JSON they
// stand for: float64 and float32 as their shortest text (json/v2's
// formatting), the integer types as decimal text, []string as an array of
// strings, and any other type as what json/v2 makes of it; they read back
// in the JSON data model (a float64 comes back as a json.Number). A NaN or
// infinite float, a json.Number that is not a JSON number, or a value
// json/v2 refuses is an error, as is a string that is not valid UTF-8
// (JSON cannot carry it, RFC 8259 §8.1).
//
// # Decoding
//
// Decoding is strict: a record that is truncated, has bytes after its
// body, an unknown version, kind or tag, a bool or flags byte with other
// bits, keys out of order, a number that is not a JSON number, invalid
// UTF-8, or nesting deeper than 10,000 levels gives an error wrapping
// ErrCorrupt (or ErrVersion), never a panic, and every record that
// decodes re-encodes to the same bytes (but for such an earlier file
// part, which re-encodes as its Raw part). The decoded values do not alias
// the input: its strings share one copy of it, made when decoding starts.
package record

import (
	"errors"
	"fmt"

	"github.com/a2abridge/a2abridge/a2a"
)

// Version is the format version the encoder writes.
const Version = 1

// Kinds: the second byte of every record.
const (
	KindTask           = 1
	KindMessage        = 2
	KindStatusUpdate   = 3
	KindArtifactUpdate = 4
	KindPushConfig     = 5
)

var (
	// ErrCorrupt is wrapped by every decoding error but ErrVersion's.
	ErrCorrupt = errors.New("record: corrupt record")
	// ErrVersion is wrapped by the error for a record of a format
	// version this package does not know (written by a newer release).
	ErrVersion = errors.New("record: unknown format version")
)

// maxDepth bounds the nesting of arrays and objects in values, as JSON
// decoders do (json/v2's limit), on encoding and on decoding.
const maxDepth = 10000

// AppendEvent appends the record of e (a *a2a.Task, *a2a.Message,
// *a2a.TaskStatusUpdateEvent or *a2a.TaskArtifactUpdateEvent) to dst. It
// fails for another or a nil event, a nil part or one of another type, a
// string that is not valid UTF-8 and a value that is not JSON (see the
// package doc); on error it returns dst as it was. AppendEvent does not
// check the domain's invariants (ids present, states valid): CheckEvent
// does.
func AppendEvent(dst []byte, e a2a.Event) ([]byte, error) {
	n := len(dst)
	enc := encoder{b: dst}
	switch v := e.(type) {
	case *a2a.Task:
		if v == nil {
			return dst, errNilEvent
		}
		enc.b = append(enc.b, Version, KindTask)
		enc.task(v)
	case *a2a.Message:
		if v == nil {
			return dst, errNilEvent
		}
		enc.b = append(enc.b, Version, KindMessage)
		enc.message(v)
	case *a2a.TaskStatusUpdateEvent:
		if v == nil {
			return dst, errNilEvent
		}
		enc.b = append(enc.b, Version, KindStatusUpdate)
		enc.str(v.TaskID)
		enc.str(v.ContextID)
		enc.status(&v.Status)
		enc.bool(v.Final)
		enc.meta(v.Metadata)
	case *a2a.TaskArtifactUpdateEvent:
		if v == nil {
			return dst, errNilEvent
		}
		enc.b = append(enc.b, Version, KindArtifactUpdate)
		enc.str(v.TaskID)
		enc.str(v.ContextID)
		enc.artifact(&v.Artifact)
		var flags byte
		if v.Append {
			flags |= 1
		}
		if v.LastChunk {
			flags |= 2
		}
		enc.b = append(enc.b, flags)
		enc.meta(v.Metadata)
	default:
		return dst, fmt.Errorf("record: cannot encode event of type %T", e)
	}
	if enc.err != nil {
		return dst[:n], enc.err
	}
	return enc.b, nil
}

var errNilEvent = errors.New("record: nil event")

// MarshalEvent returns the record of e: AppendEvent to a new slice.
func MarshalEvent(e a2a.Event) ([]byte, error) {
	return AppendEvent(make([]byte, 0, 256), e)
}

// UnmarshalEvent decodes a record of kind Task, Message, status update or
// artifact update into a new *a2a.Task, *a2a.Message,
// *a2a.TaskStatusUpdateEvent or *a2a.TaskArtifactUpdateEvent. Its errors
// wrap ErrCorrupt, or ErrVersion for a record of an unknown version.
func UnmarshalEvent(b []byte) (a2a.Event, error) {
	d, kind, err := start(b)
	if err != nil {
		return nil, err
	}
	var ev a2a.Event
	switch kind {
	case KindTask:
		t := new(a2a.Task)
		d.task(t)
		ev = t
	case KindMessage:
		m := new(a2a.Message)
		d.message(m)
		ev = m
	case KindStatusUpdate:
		u := new(a2a.TaskStatusUpdateEvent)
		u.TaskID = d.str()
		u.ContextID = d.str()
		d.status(&u.Status)
		u.Final = d.bool()
		u.Metadata = d.meta()
		ev = u
	case KindArtifactUpdate:
		u := new(a2a.TaskArtifactUpdateEvent)
		u.TaskID = d.str()
		u.ContextID = d.str()
		d.artifact(&u.Artifact)
		flags := d.byte()
		if flags&^3 != 0 {
			d.fail("artifact update flags %#x", flags)
		}
		u.Append, u.LastChunk = flags&1 != 0, flags&2 != 0
		u.Metadata = d.meta()
		ev = u
	default:
		return nil, fmt.Errorf("%w: kind %d is not an event", ErrCorrupt, kind)
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return ev, nil
}

// UnmarshalTask decodes a record of kind Task (a snapshot); a record of
// another kind is an error wrapping ErrCorrupt.
func UnmarshalTask(b []byte) (a2a.Task, error) {
	if len(b) >= 2 && b[0] == Version && b[1] != KindTask {
		return a2a.Task{}, fmt.Errorf("%w: kind %d is not a task", ErrCorrupt, b[1])
	}
	e, err := UnmarshalEvent(b)
	if err != nil {
		return a2a.Task{}, err
	}
	return *e.(*a2a.Task), nil
}

// MarshalPushConfig returns the record of a push notification config. It
// fails only for a string that is not valid UTF-8.
func MarshalPushConfig(c *a2a.PushNotificationConfig) ([]byte, error) {
	enc := encoder{b: make([]byte, 0, 64+len(c.URL)+len(c.Token))}
	enc.b = append(enc.b, Version, KindPushConfig)
	enc.str(c.ID)
	enc.str(c.URL)
	enc.str(c.Token)
	enc.bool(c.Authentication != nil)
	if c.Authentication != nil {
		enc.strs(c.Authentication.Schemes)
		enc.str(c.Authentication.Credentials)
	}
	enc.str(c.ProtocolVersion)
	if enc.err != nil {
		return nil, enc.err
	}
	return enc.b, nil
}

// UnmarshalPushConfig decodes a record of kind PushConfig. Its errors
// wrap ErrCorrupt, or ErrVersion for a record of an unknown version.
func UnmarshalPushConfig(b []byte) (a2a.PushNotificationConfig, error) {
	var c a2a.PushNotificationConfig
	d, kind, err := start(b)
	if err != nil {
		return c, err
	}
	if kind != KindPushConfig {
		return c, fmt.Errorf("%w: kind %d is not a push config", ErrCorrupt, kind)
	}
	c.ID = d.str()
	c.URL = d.str()
	c.Token = d.str()
	if d.bool() {
		c.Authentication = &a2a.AuthenticationInfo{Schemes: d.strs(), Credentials: d.str()}
	}
	c.ProtocolVersion = d.str()
	if err := d.end(); err != nil {
		return a2a.PushNotificationConfig{}, err
	}
	return c, nil
}

// start checks the version of record b and returns a decoder positioned
// after its kind byte.
func start(b []byte) (*decoder, byte, error) {
	if len(b) < 2 {
		return nil, 0, fmt.Errorf("%w: %d bytes", ErrCorrupt, len(b))
	}
	if b[0] != Version {
		return nil, 0, fmt.Errorf("%w %d", ErrVersion, b[0])
	}
	return &decoder{s: string(b), i: 2}, b[1], nil
}

// CheckEvent reports whether e satisfies the invariants that every reader
// of a stored event relies on, which are those every protocol version
// requires (a2a.ValidateEvent; its error, prefixed "record: "). Stores
// refuse what fails it. It does not look at values (see AppendEvent).
func CheckEvent(e a2a.Event) error {
	if err := a2a.ValidateEvent(e); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// StateName is the name a task state is stored under, in records and in
// the stores' state columns: its String, the A2A 0.3.0 wire value
// ("completed", "input-required"; "unknown" for
// a2a.TaskStateUnspecified), the names every version of this format has
// written. A change of a2a.TaskState.String must not change them.
func StateName(s a2a.TaskState) string { return s.String() }

// ParseStateName is the inverse of StateName; ok is false for a name it
// never returns.
func ParseStateName(name string) (s a2a.TaskState, ok bool) { return a2a.ParseTaskState(name) }
