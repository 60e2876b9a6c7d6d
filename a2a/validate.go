package a2a

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// ErrNilEvent is returned by ValidateEvent for a nil *Task, *Message,
// *TaskStatusUpdateEvent or *TaskArtifactUpdateEvent.
var ErrNilEvent = errors.New("nil event")

// ValidateEvent reports the first way e breaks the invariants that every
// version and binding of the protocol requires of a stream event (A2A 1.0
// §4.1, §4.2.1): a Task has an ID and a ContextID; a TaskStatusUpdateEvent
// and a TaskArtifactUpdateEvent a TaskID; a Message a MessageID and the
// role user or agent; an Artifact an ArtifactID; every TaskState, the
// task's and its updates', is one of the nine of TaskState.Valid; every Part
// holds content (Text, Raw, URL or Data). It does not look at structured
// values (see ValidateValues). The error is ErrNilEvent for a nil pointer,
// and otherwise names the rule, e.g. "message without messageId"; an event
// of another type is an error too.
func ValidateEvent(e Event) error {
	switch v := e.(type) {
	case *Task:
		if v == nil {
			return ErrNilEvent
		}
		if v.ID == "" || v.ContextID == "" {
			return errors.New("task without id or contextId")
		}
		if err := validateStatus(&v.Status); err != nil {
			return err
		}
		for i := range v.History {
			if err := validateMessage(&v.History[i]); err != nil {
				return err
			}
		}
		for i := range v.Artifacts {
			if err := validateArtifact(&v.Artifacts[i]); err != nil {
				return err
			}
		}
		return nil
	case *Message:
		if v == nil {
			return ErrNilEvent
		}
		return validateMessage(v)
	case *TaskStatusUpdateEvent:
		if v == nil {
			return ErrNilEvent
		}
		if v.TaskID == "" {
			return errors.New("status update without taskId")
		}
		return validateStatus(&v.Status)
	case *TaskArtifactUpdateEvent:
		if v == nil {
			return ErrNilEvent
		}
		if v.TaskID == "" {
			return errors.New("artifact update without taskId")
		}
		return validateArtifact(&v.Artifact)
	}
	return fmt.Errorf("unknown event type %T", e)
}

func validateStatus(s *TaskStatus) error {
	if !s.State.Valid() {
		return fmt.Errorf("invalid task state %v", s.State)
	}
	if s.Message != nil {
		return validateMessage(s.Message)
	}
	return nil
}

func validateMessage(m *Message) error {
	if m.MessageID == "" {
		return errors.New("message without messageId")
	}
	if m.Role != RoleUser && m.Role != RoleAgent {
		return fmt.Errorf("message role %q", m.Role)
	}
	return validateParts(m.Parts)
}

func validateArtifact(a *Artifact) error {
	if a.ArtifactID == "" {
		return errors.New("artifact without artifactId")
	}
	return validateParts(a.Parts)
}

func validateParts(ps []Part) error {
	for _, p := range ps {
		switch p.Content.(type) {
		case Text, Raw, URL, Data:
		default:
			return errors.New("part without content")
		}
	}
	return nil
}

// ValidateValues reports the first structured value of e that JSON cannot
// carry: in a metadata map (the event's, its message's, artifact's and
// parts') or a Data part's value, a json.Number whose text is not a JSON
// number, a NaN or infinite float, or a value that cannot be marshalled (a
// channel, a function). The error names where it is, e.g.
// "artifact.parts[0].data.n". Strings are not looked at: one that is not
// valid UTF-8, which JSON cannot carry either, is refused by every encoder
// of this module (and by the stores' record format). The server checks an
// agent's events with it before it stores them, so a task never holds a
// value no client could read. A Task's values are not walked (agents do
// not emit whole tasks).
func ValidateValues(e Event) error {
	switch v := e.(type) {
	case *TaskStatusUpdateEvent:
		if err := valuesMap("metadata", v.Metadata); err != nil {
			return err
		}
		if v.Status.Message != nil {
			return valuesMessage("status.message", v.Status.Message)
		}
	case *TaskArtifactUpdateEvent:
		if err := valuesMap("metadata", v.Metadata); err != nil {
			return err
		}
		if err := valuesMap("artifact.metadata", v.Artifact.Metadata); err != nil {
			return err
		}
		return valuesParts("artifact.parts", v.Artifact.Parts)
	case *Message:
		return valuesMessage("", v)
	}
	return nil
}

func valuesMessage(path string, m *Message) error {
	if path != "" {
		path += "."
	}
	if err := valuesMap(path+"metadata", m.Metadata); err != nil {
		return err
	}
	return valuesParts(path+"parts", m.Parts)
}

func valuesParts(path string, parts []Part) error {
	for i, p := range parts {
		at := path + "[" + strconv.Itoa(i) + "]"
		if err := valuesMap(at+".metadata", p.Metadata); err != nil {
			return err
		}
		if d, ok := p.Content.(Data); ok {
			if err := checkValue(at+".data", d.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

func valuesMap(path string, m map[string]any) error {
	for k, v := range m {
		if err := checkValue(path+"."+k, v); err != nil {
			return err
		}
	}
	return nil
}

// checkValue walks the types decoding yields and the plain Go types the
// encoders write themselves; anything else is tried with the encoder.
func checkValue(path string, v any) error {
	switch v := v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, []string:
		return nil
	case stdjson.Number:
		if !wirejson.ValidNumber(string(v)) {
			return fmt.Errorf("%s: %q is not a JSON number", path, string(v))
		}
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: %v cannot be written as JSON", path, v)
		}
	case float32:
		return checkValue(path, float64(v))
	case map[string]any:
		return valuesMap(path, v)
	case []any:
		for i, x := range v {
			if err := checkValue(path+"["+strconv.Itoa(i)+"]", x); err != nil {
				return err
			}
		}
	default:
		if _, err := wirejson.AppendAny(nil, v); err != nil {
			return fmt.Errorf("%s: a %T cannot be written as JSON", path, v)
		}
	}
	return nil
}
