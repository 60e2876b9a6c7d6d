package a2a

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
)

// Role is the sender of a Message (A2A 1.0 §4.1.5; A2A 0.3.0 §6.4): "user" or "agent".
type Role string

// Roles defined by A2A 1.0 §4.1.5 (ROLE_USER, ROLE_AGENT) and A2A 0.3.0 §6.4.
const (
	RoleUser  Role = "user"
	RoleAgent Role = "agent"
)

// TaskState is the lifecycle state of a Task (A2A 1.0 §4.1.3): its values
// are the numbers of the TaskState enum of a2a.proto, the zero value being
// TaskStateUnspecified. String returns the state's name as the
// specification's text writes it ("submitted", "input-required", …), which
// is also its A2A 0.3.0 wire value (§6.3); TaskStateUnspecified, which
// has no such name in 1.0, is "unknown", its 0.3 name. The 1.0 wire name
// (TASK_STATE_COMPLETED) belongs to the 1.0 codec. TaskState encodes as
// its String in JSON and text (MarshalText), so logs and JSON outputs
// read "completed".
type TaskState int

// The task states of A2A 1.0 §4.1.3, numbered as in a2a.proto.
const (
	// TaskStateUnspecified is no known state: A2A 1.0
	// TASK_STATE_UNSPECIFIED, A2A 0.3.0 "unknown". An agent cannot move
	// a task to it.
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
var taskStateNames = [...]string{"unknown", "submitted", "working", "completed", "failed",
	"canceled", "input-required", "rejected", "auth-required"}

// String returns the state's name: "submitted", "working",
// "input-required", "completed", "canceled", "failed", "rejected",
// "auth-required", "unknown" (TaskStateUnspecified), or "TaskState(N)"
// for a number outside the enum.
func (s TaskState) String() string {
	if s.Valid() {
		return taskStateNames[s]
	}
	return "TaskState(" + strconv.Itoa(int(s)) + ")"
}

// ParseTaskState returns the state whose String is name; ok is false for
// any other string.
func ParseTaskState(name string) (s TaskState, ok bool) {
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

// UnmarshalText implements encoding.TextUnmarshaler (ParseTaskState; the
// empty string is TaskStateUnspecified too).
func (s *TaskState) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*s = TaskStateUnspecified
		return nil
	}
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
// failed, rejected): a task in such a state never changes again (A2A 1.0 §4.1.3).
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

// Part is one piece of content in a Message or Artifact (A2A 1.0 §4.1.6):
// its Content is exactly one of Text, Raw (bytes carried by value), URL
// (a file by reference) or Data (any JSON value), with an optional
// MediaType (e.g. "text/markdown", "image/png"), Filename and Metadata.
//
// The model is the superset of both protocol versions. A2A 0.3.0 (§6.5)
// names the kinds TextPart, FilePart (Raw: a file with bytes; URL: a file
// with a uri; MediaType and Filename are the file's mimeType and name) and
// DataPart; the 0.3 edge drops what 0.3 cannot carry (a Text or Data
// part's MediaType and Filename) and wraps a Data value that is not an
// object as {"value": Value} with metadata "data_part_compat": true, which
// it unwraps again on input (the convention of the official a2a-go SDK).
// A Part whose Content is nil is invalid and is refused by every codec.
type Part struct {
	Content   PartContent
	MediaType string
	Filename  string
	Metadata  map[string]any
}

// PartContent is the content of a Part: Text, Raw, URL or Data. The set is closed.
type PartContent interface {
	isPartContent()
}

// Text is text content (A2A 1.0 Part "text").
type Text string

// Raw is file content carried by value (A2A 1.0 Part "raw", base64 in
// JSON). A nil Raw is the empty file.
type Raw []byte

// URL is file content by reference: an absolute URL (A2A 1.0 Part "url").
type URL string

// Data is structured content: any JSON value (A2A 1.0 Part "data"; A2A
// 0.3.0 a JSON object, see Part).
//
// Value, like every Metadata map in this package, holds what JSON decoding
// yields: nil, bool, string, []any, map[string]any, and numbers as
// encoding/json.Number holding their literal text (so
// 123456789012345678901234567890 and 9007199254740993 go through exactly;
// use Number.Int64 or Number.Float64 to compute with one). An agent may
// also put float64, the integer types or json-encodable Go values there; a
// json.Number it sets must be a JSON number, and NaN or infinite floats
// cannot be sent (TaskUpdater refuses such an event with ErrInvalidEvent).
// A nil Value is the JSON null.
type Data struct {
	Value any
}

// Object returns Value as a JSON object, or nil when Value is not one.
func (d Data) Object() map[string]any {
	m, _ := d.Value.(map[string]any)
	return m
}

func (Text) isPartContent() {}
func (Raw) isPartContent()  {}
func (URL) isPartContent()  {}
func (Data) isPartContent() {}

// NewTextPart returns a Part holding text.
func NewTextPart(text string) Part { return Part{Content: Text(text)} }

// NewRawPart returns a Part holding b by value (nil b is the empty file).
func NewRawPart(b []byte) Part {
	if b == nil {
		b = []byte{}
	}
	return Part{Content: Raw(b)}
}

// NewURLPart returns a Part referring to a file at url.
func NewURLPart(url string) Part { return Part{Content: URL(url)} }

// NewDataPart returns a Part holding the JSON value v (see Data).
func NewDataPart(v any) Part { return Part{Content: Data{Value: v}} }

// Text returns the part's text, or "" when it is not a text part.
func (p Part) Text() string {
	t, _ := p.Content.(Text)
	return string(t)
}

// Raw returns the part's bytes, or nil when it is not a raw part.
func (p Part) Raw() []byte {
	r, _ := p.Content.(Raw)
	return r
}

// URL returns the part's URL, or "" when it is not a url part.
func (p Part) URL() string {
	u, _ := p.Content.(URL)
	return string(u)
}

// Data returns the part's JSON value, or nil when it is not a data part
// (or its value is null).
func (p Part) Data() any {
	d, _ := p.Content.(Data)
	return d.Value
}

// IsFile reports whether the part is file content (Raw or URL): a 0.3 FilePart.
func (p Part) IsFile() bool {
	switch p.Content.(type) {
	case Raw, URL:
		return true
	}
	return false
}

// Message is one turn of communication between a client and an agent
// (A2A 1.0 §4.1.4; A2A 0.3.0 §6.4).
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
// the time it was set (A2A 1.0 §4.1.2). Timestamp is encoded as ISO 8601
// (RFC 3339) in UTC; the zero time is omitted.
type TaskStatus struct {
	State     TaskState
	Message   *Message
	Timestamp time.Time
}

// Artifact is an output of a task (A2A 1.0 §4.1.7).
type Artifact struct {
	ArtifactID  string
	Name        string
	Description string
	Parts       []Part
	Extensions  []string
	Metadata    map[string]any
}

// Task is the stateful unit of work (A2A 1.0 §4.1.1).
type Task struct {
	ID        string
	ContextID string
	Status    TaskStatus
	History   []Message
	Artifacts []Artifact
	Metadata  map[string]any
}

// Event is one item of a task's event log and of a stream (A2A 1.0 §3.2.3
// StreamResponse; A2A 0.3.0 §7.2.2):
// *Task, *Message, *TaskStatusUpdateEvent or *TaskArtifactUpdateEvent.
type Event interface {
	isEvent()
}

func (*Task) isEvent()                    {}
func (*Message) isEvent()                 {}
func (*TaskStatusUpdateEvent) isEvent()   {}
func (*TaskArtifactUpdateEvent) isEvent() {}

// TaskStatusUpdateEvent reports a status change (A2A 1.0 §4.2.1; A2A
// 0.3.0 §7.2.3). Final (carried by 0.3 only) is true on the last event of
// a stream.
type TaskStatusUpdateEvent struct {
	TaskID    string
	ContextID string
	Status    TaskStatus
	Final     bool
	Metadata  map[string]any
}

// TaskArtifactUpdateEvent carries a new artifact or a chunk of one
// (A2A 1.0 §4.2.2; A2A 0.3.0 §7.2.4). Append adds the parts to the
// artifact with the same ArtifactID; LastChunk marks its final chunk.
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
