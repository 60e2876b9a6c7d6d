package v03

import (
	"encoding/base64"
	"errors"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
)

// Kind values of A2A 0.3.0.
const (
	KindTask           = "task"
	KindMessage        = "message"
	KindStatusUpdate   = "status-update"
	KindArtifactUpdate = "artifact-update"
	KindText           = "text"
	KindFile           = "file"
	KindData           = "data"
)

// ---- encoding ----

func fromParts(ps []a2a.Part) []partJSON {
	out := make([]partJSON, len(ps))
	for i, p := range ps {
		switch c := p.Content.(type) {
		case a2a.Text:
			t := string(c)
			out[i] = partJSON{Kind: KindText, Text: &t, Metadata: p.Metadata}
		case a2a.Raw, a2a.URL:
			out[i] = partJSON{Kind: KindFile, File: fromFile(p), Metadata: p.Metadata}
		case a2a.Data:
			d, meta := CompatData(p)
			out[i] = partJSON{Kind: KindData, Data: &d, Metadata: meta}
		default:
			// A nil Part: encode as empty text so the output stays valid.
			e := ""
			out[i] = partJSON{Kind: KindText, Text: &e}
		}
	}
	return out
}

// fromFile is the 0.3 file of a Raw or URL part.
func fromFile(p a2a.Part) *fileJSON {
	out := &fileJSON{Name: p.Filename, MimeType: p.MediaType}
	if u, ok := p.Content.(a2a.URL); ok {
		s := string(u)
		out.URI = &s
	} else {
		s := base64.StdEncoding.EncodeToString(p.Raw())
		out.Bytes = &s
	}
	return out
}

func fromMessage(m *a2a.Message) messageJSON {
	role := string(m.Role)
	return messageJSON{
		Kind: KindMessage, MessageID: m.MessageID, Role: role, Parts: fromParts(m.Parts),
		ContextID: m.ContextID, TaskID: m.TaskID, ReferenceTaskIDs: m.ReferenceTaskIDs,
		Extensions: m.Extensions, Metadata: m.Metadata,
	}
}

// FormatTime renders t as ISO 8601 / RFC 3339 in UTC with millisecond
// precision ("2025-06-01T12:00:00.000Z"); the zero time renders as "".
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// MarshalEvent encodes a *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent
// or *a2a.TaskArtifactUpdateEvent as its A2A 0.3.0 JSON object (with
// "kind"; §6.1, §6.4, §7.2.3, §7.2.4). It fails for another or a nil event,
// a string that is not valid UTF-8, and a metadata value JSON cannot hold
// (a non-finite number, a channel, …).
func MarshalEvent(e a2a.Event) ([]byte, error) {
	b, err := appendEvent(make([]byte, 0, 512), e)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// AppendEvent is MarshalEvent appending to dst; on error it returns dst
// as it was.
func AppendEvent(dst []byte, e a2a.Event) ([]byte, error) {
	n := len(dst)
	b, err := appendEvent(dst, e)
	if err != nil {
		return dst[:n], err
	}
	return b, nil
}

// ---- decoding ----

// decodeErr converts a json error into -32602 naming the field under prefix.
func decodeErr(prefix string, err error) *a2a.Error {
	var se *json.SemanticError
	if errors.As(err, &se) {
		reason := "invalid value"
		if se.JSONKind != 0 {
			reason = "unexpected JSON " + se.JSONKind.String()
		}
		if se.GoType != nil {
			reason += " (want " + goTypeName(se.GoType.Kind().String()) + ")"
		}
		return a2a.InvalidParams(prefix+string(se.JSONPointer), reason)
	}
	var synt *jsontext.SyntacticError
	if errors.As(err, &synt) {
		return a2a.InvalidParams(prefix+string(synt.JSONPointer), "invalid JSON: "+synt.Err.Error())
	}
	return a2a.InvalidParams(prefix, "invalid value")
}

func goTypeName(k string) string {
	switch k {
	case "ptr":
		return "object"
	case "struct", "map":
		return "object"
	case "slice":
		return "array"
	case "int", "int64":
		return "integer"
	}
	return k
}

func toParts(path string, in []partJSON) ([]a2a.Part, *a2a.Error) {
	if in == nil {
		return nil, a2a.InvalidParams(path, "required field missing")
	}
	out := make([]a2a.Part, len(in))
	for i := range in {
		p := &in[i]
		pp := path + "/" + strconv.Itoa(i)
		switch p.Kind {
		case KindText:
			if p.Text == nil {
				return nil, a2a.InvalidParams(pp+"/text", "required field missing")
			}
			out[i] = a2a.Part{Content: a2a.Text(*p.Text), Metadata: p.Metadata}
		case KindFile:
			if p.File == nil {
				return nil, a2a.InvalidParams(pp+"/file", "required field missing")
			}
			f, err := toFile(pp+"/file", p.File)
			if err != nil {
				return nil, err
			}
			f.Metadata = p.Metadata
			out[i] = f
		case KindData:
			if p.Data == nil || *p.Data == nil {
				return nil, a2a.InvalidParams(pp+"/data", "required field missing")
			}
			out[i] = FromCompatData(*p.Data, p.Metadata)
		case "":
			return nil, a2a.InvalidParams(pp+"/kind", "required field missing")
		default:
			return nil, a2a.InvalidParams(pp+"/kind", "unknown part kind "+strconv.Quote(p.Kind))
		}
	}
	return out, nil
}

// toFile is the Raw or URL part of a 0.3 file.
func toFile(path string, f *fileJSON) (a2a.Part, *a2a.Error) {
	out := a2a.Part{Filename: f.Name, MediaType: f.MimeType}
	switch {
	case f.Bytes != nil && f.URI != nil:
		return out, a2a.InvalidParams(path, "file has both bytes and uri; exactly one is allowed")
	case f.Bytes == nil && f.URI == nil:
		return out, a2a.InvalidParams(path, "file has neither bytes nor uri; exactly one is required")
	case f.Bytes != nil:
		b, err := base64.StdEncoding.DecodeString(*f.Bytes)
		if err != nil {
			b, err = base64.RawStdEncoding.DecodeString(*f.Bytes)
			if err != nil {
				return out, a2a.InvalidParams(path+"/bytes", "bytes is not valid base64")
			}
		}
		if b == nil {
			b = []byte{}
		}
		out.Content = a2a.Raw(b)
	default:
		if *f.URI == "" {
			return out, a2a.InvalidParams(path+"/uri", "uri is empty")
		}
		out.Content = a2a.URL(*f.URI)
	}
	return out, nil
}

func toMessage(path string, m *messageJSON) (a2a.Message, *a2a.Error) {
	var out a2a.Message
	if m.Kind != KindMessage {
		if m.Kind == "" {
			return out, a2a.InvalidParams(path+"/kind", "required field missing")
		}
		return out, a2a.InvalidParams(path+"/kind", "kind must be \"message\"")
	}
	if m.MessageID == "" {
		return out, a2a.InvalidParams(path+"/messageId", "required field missing")
	}
	switch a2a.Role(m.Role) {
	case a2a.RoleUser, a2a.RoleAgent:
	case "":
		return out, a2a.InvalidParams(path+"/role", "required field missing")
	default:
		return out, a2a.InvalidParams(path+"/role", "role must be \"user\" or \"agent\"")
	}
	parts, err := toParts(path+"/parts", m.Parts)
	if err != nil {
		return out, err
	}
	return a2a.Message{MessageID: m.MessageID, Role: a2a.Role(m.Role), Parts: parts, ContextID: m.ContextID,
		TaskID: m.TaskID, ReferenceTaskIDs: m.ReferenceTaskIDs, Extensions: m.Extensions, Metadata: m.Metadata}, nil
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	// A time whose UTC year has not four digits cannot be written back
	// as RFC 3339: it is not kept.
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return time.Time{}
	}
	return t
}

func toStatus(path string, s *taskStatusJSON) (a2a.TaskStatus, *a2a.Error) {
	out := a2a.TaskStatus{Timestamp: parseTime(s.Timestamp)}
	var ok bool
	if out.State, ok = a2a.ParseTaskState(s.State); !ok {
		return out, a2a.InvalidParams(path+"/state", "unknown task state "+strconv.Quote(s.State))
	}
	if s.Message != nil {
		m, err := toMessage(path+"/message", s.Message)
		if err != nil {
			return out, err
		}
		out.Message = &m
	}
	return out, nil
}

func toArtifact(path string, a *artifactJSON) (a2a.Artifact, *a2a.Error) {
	if a.ArtifactID == "" {
		return a2a.Artifact{}, a2a.InvalidParams(path+"/artifactId", "required field missing")
	}
	parts, err := toParts(path+"/parts", a.Parts)
	if err != nil {
		return a2a.Artifact{}, err
	}
	return a2a.Artifact{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description, Parts: parts,
		Extensions: a.Extensions, Metadata: a.Metadata}, nil
}

func toTask(path string, t *taskJSON) (a2a.Task, *a2a.Error) {
	if t.ID == "" {
		return a2a.Task{}, a2a.InvalidParams(path+"/id", "required field missing")
	}
	if t.ContextID == "" {
		return a2a.Task{}, a2a.InvalidParams(path+"/contextId", "required field missing")
	}
	st, err := toStatus(path+"/status", &t.Status)
	if err != nil {
		return a2a.Task{}, err
	}
	out := a2a.Task{ID: t.ID, ContextID: t.ContextID, Status: st, Metadata: t.Metadata}
	if len(t.History) > 0 {
		out.History = make([]a2a.Message, len(t.History))
		for i := range t.History {
			if out.History[i], err = toMessage(path+"/history/"+strconv.Itoa(i), &t.History[i]); err != nil {
				return a2a.Task{}, err
			}
		}
	}
	if len(t.Artifacts) > 0 {
		out.Artifacts = make([]a2a.Artifact, len(t.Artifacts))
		for i := range t.Artifacts {
			if out.Artifacts[i], err = toArtifact(path+"/artifacts/"+strconv.Itoa(i), &t.Artifacts[i]); err != nil {
				return a2a.Task{}, err
			}
		}
	}
	return out, nil
}

// UnmarshalEvent decodes an A2A 0.3.0 event object (a Task, Message,
// status-update or artifact-update, told apart by "kind"). Errors are
// *a2a.Error (-32602) naming the field.
func UnmarshalEvent(b []byte) (a2a.Event, error) {
	var e eventJSON
	if err := json.Unmarshal(b, &e, decodeOpts); err != nil {
		return nil, decodeErr("", err)
	}
	return e.toEvent()
}

func (e *eventJSON) toEvent() (a2a.Event, error) {
	switch e.Kind {
	case KindTask:
		t := taskJSON{Kind: e.Kind, ID: e.ID, ContextID: e.ContextID, History: e.History, Artifacts: e.Artifacts, Metadata: e.Metadata}
		if e.Status == nil {
			return nil, a2a.InvalidParams("/status", "required field missing")
		}
		t.Status = *e.Status
		task, err := toTask("", &t)
		if err != nil {
			return nil, err
		}
		return &task, nil
	case KindMessage:
		m := messageJSON{Kind: e.Kind, MessageID: e.MessageID, Role: e.Role, Parts: e.Parts, ContextID: e.ContextID,
			TaskID: e.TaskID, ReferenceTaskIDs: e.ReferenceTaskIDs, Extensions: e.Extensions, Metadata: e.Metadata}
		msg, err := toMessage("", &m)
		if err != nil {
			return nil, err
		}
		return &msg, nil
	case KindStatusUpdate:
		if e.TaskID == "" {
			return nil, a2a.InvalidParams("/taskId", "required field missing")
		}
		if e.Status == nil {
			return nil, a2a.InvalidParams("/status", "required field missing")
		}
		st, err := toStatus("/status", e.Status)
		if err != nil {
			return nil, err
		}
		return &a2a.TaskStatusUpdateEvent{TaskID: e.TaskID, ContextID: e.ContextID, Status: st, Final: e.Final, Metadata: e.Metadata}, nil
	case KindArtifactUpdate:
		if e.TaskID == "" {
			return nil, a2a.InvalidParams("/taskId", "required field missing")
		}
		if e.Artifact == nil {
			return nil, a2a.InvalidParams("/artifact", "required field missing")
		}
		art, err := toArtifact("/artifact", e.Artifact)
		if err != nil {
			return nil, err
		}
		return &a2a.TaskArtifactUpdateEvent{TaskID: e.TaskID, ContextID: e.ContextID, Artifact: art,
			Append: e.Append, LastChunk: e.LastChunk, Metadata: e.Metadata}, nil
	case "":
		return nil, a2a.InvalidParams("/kind", "required field missing")
	}
	return nil, a2a.InvalidParams("/kind", "unknown kind "+strconv.Quote(e.Kind))
}

// DataPartCompatKey is the metadata key that marks a 0.3 DataPart whose
// object wraps a non-object A2A 1.0 data value as {"value": …} (the
// convention of the official a2a-go SDK's 0.3 compatibility layer).
const DataPartCompatKey = "data_part_compat"

// CompatData returns the 0.3 data object and metadata of p: Data itself
// when it is an object (nil becomes {}), else {"value": Data} with
// DataPartCompatKey set to true in a copy of the metadata.
func CompatData(p a2a.Part) (data, metadata map[string]any) {
	switch d := p.Data().(type) {
	case map[string]any:
		return d, p.Metadata
	case nil:
		return map[string]any{}, p.Metadata
	}
	meta := make(map[string]any, len(p.Metadata)+1)
	for k, v := range p.Metadata {
		meta[k] = v
	}
	meta[DataPartCompatKey] = true
	return map[string]any{"value": p.Data()}, meta
}

// FromCompatData is the inverse of CompatData: a 0.3 data object marked
// with DataPartCompatKey and holding only "value" becomes that value, and
// the mark is dropped from the metadata.
func FromCompatData(data, metadata map[string]any) a2a.Part {
	if mark, _ := metadata[DataPartCompatKey].(bool); mark && len(data) == 1 {
		if v, ok := data["value"]; ok {
			meta := make(map[string]any, len(metadata)-1)
			for k, x := range metadata {
				if k != DataPartCompatKey {
					meta[k] = x
				}
			}
			if len(meta) == 0 {
				meta = nil
			}
			return a2a.Part{Content: a2a.Data{Value: v}, Metadata: meta}
		}
	}
	return a2a.Part{Content: a2a.Data{Value: data}, Metadata: metadata}
}
