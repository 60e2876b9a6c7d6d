package a2a

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
)

// Role is the sender of a Message (A2A 0.3.0 §6.4): "user" or "agent".
type Role string

// Roles defined by A2A 1.0 §4.1.4 (ROLE_USER, ROLE_AGENT) and A2A 0.3.0 §6.4.
const (
	RoleUser  Role = "user"
	RoleAgent Role = "agent"
)

// TaskState is the lifecycle state of a Task (A2A 1.0 §4.1.3): its values
// are the numbers of the TaskState enum of a2a.proto, the zero value being
// TaskStateUnspecified. String returns the state's name as the
// specification's text writes it ("submitted", "input-required", …), which
// is also its A2A 0.3.0 wire value (§6.3), where TaskStateUnspecified is
// "unknown"; the 1.0 wire name (TASK_STATE_COMPLETED) belongs to the 1.0
// codec. TaskState encodes as its String in JSON and text
// (MarshalText), so logs and JSON outputs read "completed".
type TaskState int

// The task states of A2A 1.0 §4.1.3, numbered as in a2a.proto.
const (
	// TaskStateUnspecified is no known state: A2A 1.0
	// TASK_STATE_UNSPECIFIED, A2A 0.3.0 "unknown".
	TaskStateUnspecified   TaskState = 0
	TaskStateSubmitted     TaskState = 1
	TaskStateWorking       TaskState = 2
	TaskStateCompleted     TaskState = 3
	TaskStateFailed        TaskState = 4
	TaskStateCanceled      TaskState = 5
	TaskStateInputRequired TaskState = 6
	TaskStateRejected      TaskState = 7
	TaskStateAuthRequired  TaskState = 8
)

// taskStateNames are the states' names, indexed by number.
var taskStateNames = [...]string{"unspecified", "submitted", "working", "completed", "failed",
	"canceled", "input-required", "rejected", "auth-required"}

// String returns the state's name: "submitted", "working",
// "input-required", "completed", "canceled", "failed", "rejected",
// "auth-required", "unspecified", or "TaskState(N)" for a number outside
// the enum.
func (s TaskState) String() string {
	if s.Valid() {
		return taskStateNames[s]
	}
	return "TaskState(" + strconv.Itoa(int(s)) + ")"
}

// ParseTaskState returns the state whose String is name, also accepting
// "unknown" (the A2A 0.3.0 name of TaskStateUnspecified); ok is false for
// any other string.
func ParseTaskState(name string) (s TaskState, ok bool) {
	if name == "unknown" {
		return TaskStateUnspecified, true
	}
	for i, n := range taskStateNames {
		if n == name {
			return TaskState(i), true
		}
	}
	return TaskStateUnspecified, false
}

// MarshalText implements encoding.TextMarshaler: the state's String.
func (s TaskState) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, errors.New("a2a: invalid task state " + s.String())
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler (ParseTaskState).
func (s *TaskState) UnmarshalText(b []byte) error {
	st, ok := ParseTaskState(string(b))
	if !ok {
		return errors.New("a2a: unknown task state " + strconv.Quote(string(b)))
	}
	*s = st
	return nil
}

// Valid reports whether s is one of the nine states of the enum
// (TaskStateUnspecified included).
func (s TaskState) Valid() bool {
	return s >= TaskStateUnspecified && s <= TaskStateAuthRequired
}

// Terminal reports whether s is a terminal state (completed, canceled,
// failed, rejected): a task in such a state never changes again (A2A 0.3.0 §6.1).
func (s TaskState) Terminal() bool {
	switch s {
	case TaskStateCompleted, TaskStateCanceled, TaskStateFailed, TaskStateRejected:
		return true
	}
	return false
}

// Interrupted reports whether s waits on the client (input-required or
// auth-required). Blocking calls and streams end on such a state.
func (s TaskState) Interrupted() bool {
	return s == TaskStateInputRequired || s == TaskStateAuthRequired
}

// Final reports whether a status update in state s ends a stream: terminal or interrupted.
func (s TaskState) Final() bool { return s.Terminal() || s.Interrupted() }

// Part is one piece of content in a Message or Artifact: exactly one of
// TextPart (1.0 "text"), FilePart (1.0 "raw" bytes or "url"; 0.3 file with
// bytes or uri) or DataPart (1.0 "data", any JSON value; 0.3 a JSON
// object). Every part may carry metadata, a media type and a file name
// (A2A 1.0 §4.1.6; A2A 0.3.0 §6.5). The set is closed.
//
// The model is the superset of both protocol versions; the 0.3 edge drops
// what 0.3 cannot carry (a TextPart's or DataPart's media type and file
// name) and wraps a DataPart whose Data is not an object as
// {"value": Data} with metadata "data_part_compat": true, which it unwraps
// again on input (the convention of the official a2a-go SDK).
type Part interface {
	// PartMetadata returns the part's optional metadata (may be nil).
	PartMetadata() map[string]any
	isPart()
}

// TextPart is text content (A2A 1.0 §4.1.6 "text"; A2A 0.3.0 §6.5.1).
// MediaType (e.g. "text/markdown"; "" means text/plain) and Filename are
// optional and carried by A2A 1.0 only.
type TextPart struct {
	Text      string
	MediaType string
	Filename  string
	Metadata  map[string]any
}

// FilePart is file content, by value or by reference (A2A 1.0 §4.1.6 "raw"
// and "url"; A2A 0.3.0 §6.5.2). File.Name and File.MimeType are the part's
// filename and mediaType in A2A 1.0.
type FilePart struct {
	File     File
	Metadata map[string]any
}

// DataPart is structured JSON content (A2A 1.0 §4.1.6 "data"; A2A 0.3.0
// §6.5.3). In A2A 1.0 Data may be any JSON value; in 0.3 it is an object
// (see Part for how other values cross the 0.3 edge). MediaType and
// Filename are optional and carried by A2A 1.0 only.
//
// Data, like every Metadata map in this package, holds what JSON decoding
// yields: nil, bool, string, []any, map[string]any, and numbers as
// encoding/json.Number holding their literal text (so
// 123456789012345678901234567890 and 9007199254740993 go through exactly;
// use Number.Int64 or Number.Float64 to compute with one). An agent may
// also put float64, the integer types or json-encodable Go values there; a
// json.Number it sets must be a JSON number, and NaN or infinite floats
// cannot be sent (TaskUpdater refuses such an event with ErrInvalidEvent).
// A nil Data is the JSON null.
type DataPart struct {
	Data      any
	MediaType string
	Filename  string
	Metadata  map[string]any
}

// Object returns Data as a JSON object, or nil when Data is not one.
func (p DataPart) Object() map[string]any {
	m, _ := p.Data.(map[string]any)
	return m
}

func (TextPart) isPart() {}
func (FilePart) isPart() {}
func (DataPart) isPart() {}

// PartMetadata implements Part.
func (p TextPart) PartMetadata() map[string]any { return p.Metadata }

// PartMetadata implements Part.
func (p FilePart) PartMetadata() map[string]any { return p.Metadata }

// PartMetadata implements Part.
func (p DataPart) PartMetadata() map[string]any { return p.Metadata }

// File is the content of a FilePart (A2A 0.3.0 §6.6; A2A 1.0 §4.1.6):
// exactly one of Bytes (1.0 "raw", 0.3 FileWithBytes; a non-nil slice,
// possibly empty) or URI (1.0 "url", 0.3 FileWithUri) is set. Name is the
// 1.0 filename and MimeType the 1.0 mediaType.
type File struct {
	Name     string
	MimeType string
	Bytes    []byte
	URI      string
}

// HasBytes reports whether the file is carried by value.
func (f File) HasBytes() bool { return f.Bytes != nil }

// Message is one turn of communication between a client and an agent
// (A2A 0.3.0 §6.4).
type Message struct {
	MessageID        string
	Role             Role
	Parts            []Part
	ContextID        string
	TaskID           string
	ReferenceTaskIDs []string
	Extensions       []string
	Metadata         map[string]any
}

// NewMessage returns a Message with a fresh random MessageID.
func NewMessage(role Role, parts ...Part) Message {
	return Message{MessageID: NewID(), Role: role, Parts: parts}
}

// TaskStatus is the current state of a Task with an optional message and
// the time it was set (A2A 0.3.0 §6.2). Timestamp is encoded as ISO 8601
// (RFC 3339) in UTC; the zero time is omitted.
type TaskStatus struct {
	State     TaskState
	Message   *Message
	Timestamp time.Time
}

// Artifact is an output of a task (A2A 0.3.0 §6.7).
type Artifact struct {
	ArtifactID  string
	Name        string
	Description string
	Parts       []Part
	Extensions  []string
	Metadata    map[string]any
}

// Task is the stateful unit of work (A2A 0.3.0 §6.1).
type Task struct {
	ID        string
	ContextID string
	Status    TaskStatus
	History   []Message
	Artifacts []Artifact
	Metadata  map[string]any
}

// Event is one item of a task's event log and of a stream (A2A 0.3.0 §7.2.2):
// *Task, *Message, *TaskStatusUpdateEvent or *TaskArtifactUpdateEvent.
type Event interface {
	isEvent()
}

func (*Task) isEvent()                    {}
func (*Message) isEvent()                 {}
func (*TaskStatusUpdateEvent) isEvent()   {}
func (*TaskArtifactUpdateEvent) isEvent() {}

// TaskStatusUpdateEvent reports a status change (A2A 0.3.0 §7.2.3). Final
// is true on the last event of a stream.
type TaskStatusUpdateEvent struct {
	TaskID    string
	ContextID string
	Status    TaskStatus
	Final     bool
	Metadata  map[string]any
}

// TaskArtifactUpdateEvent carries a new artifact or a chunk of one
// (A2A 0.3.0 §7.2.4). Append adds the parts to the artifact with the same
// ArtifactID; LastChunk marks the artifact's final chunk.
type TaskArtifactUpdateEvent struct {
	TaskID    string
	ContextID string
	Artifact  Artifact
	Append    bool
	LastChunk bool
	Metadata  map[string]any
}

// NewID returns a new RFC 9562 version 7 UUID string (48 bits of Unix
// milliseconds, then 74 random bits), used for task, context, message and
// artifact ids. Ids made later sort after earlier ones (to the
// millisecond), which keeps a durable store's indexes appending at their
// end instead of writing all over them; they remain unguessable.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[6:])
	ms := uint64(time.Now().UnixMilli())
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = (b[6] & 0x0f) | 0x70
	b[8] = (b[8] & 0x3f) | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:16])
	return string(out[:])
}
