package v10

import (
	"bytes"
	"encoding/base64"
	stdjson "encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// The reference encoder: plain wire structs through json/v2, mirroring
// a2a.proto with ProtoJSON's omissions. The hand-written encoder must
// produce the same bytes, and fail where this one fails.

type refPart struct {
	Text      *string        `json:"text,omitzero"`
	Raw       *string        `json:"raw,omitzero"`
	URL       *string        `json:"url,omitzero"`
	Data      *any           `json:"data,omitzero"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Filename  string         `json:"filename,omitempty"`
	MediaType string         `json:"mediaType,omitempty"`
}

type refMessage struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []refPart      `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

type refStatus struct {
	State     string      `json:"state"`
	Message   *refMessage `json:"message,omitzero"`
	Timestamp string      `json:"timestamp,omitempty"`
}

type refArtifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []refPart      `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

type refTask struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId,omitempty"`
	Status    refStatus      `json:"status"`
	Artifacts *[]refArtifact `json:"artifacts,omitzero"`
	History   []refMessage   `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type refStatusUpdate struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    refStatus      `json:"status"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type refArtifactUpdate struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  refArtifact    `json:"artifact"`
	Append    bool           `json:"append,omitzero"`
	LastChunk bool           `json:"lastChunk,omitzero"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type refStream struct {
	Task           *refTask           `json:"task,omitzero"`
	Message        *refMessage        `json:"message,omitzero"`
	StatusUpdate   *refStatusUpdate   `json:"statusUpdate,omitzero"`
	ArtifactUpdate *refArtifactUpdate `json:"artifactUpdate,omitzero"`
}

func refParts(ps []a2a.Part) []refPart {
	out := make([]refPart, len(ps))
	for i, p := range ps {
		switch c := p.Content.(type) {
		case a2a.Text:
			t := string(c)
			out[i] = refPart{Text: &t, Metadata: p.Metadata, Filename: p.Filename, MediaType: p.MediaType}
		case a2a.Raw:
			s := base64.StdEncoding.EncodeToString(c)
			out[i] = refPart{Raw: &s, Metadata: p.Metadata, Filename: p.Filename, MediaType: p.MediaType}
		case a2a.URL:
			u := string(c)
			out[i] = refPart{URL: &u, Metadata: p.Metadata, Filename: p.Filename, MediaType: p.MediaType}
		case a2a.Data:
			d := c.Value
			out[i] = refPart{Data: &d, Metadata: p.Metadata, Filename: p.Filename, MediaType: p.MediaType}
		default:
			e := ""
			out[i] = refPart{Text: &e}
		}
	}
	return out
}

func refMsg(m *a2a.Message) refMessage {
	return refMessage{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: roleName(m.Role),
		Parts: refParts(m.Parts), Metadata: m.Metadata, Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs}
}

func refStat(s *a2a.TaskStatus) refStatus {
	out := refStatus{State: TaskStateName(s.State)}
	if !s.Timestamp.IsZero() {
		out.Timestamp = s.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	if s.Message != nil {
		m := refMsg(s.Message)
		out.Message = &m
	}
	return out
}

func refArt(a *a2a.Artifact) refArtifact {
	return refArtifact{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description, Parts: refParts(a.Parts),
		Metadata: a.Metadata, Extensions: a.Extensions}
}

func refTk(t *a2a.Task, artifacts int) *refTask {
	out := &refTask{ID: t.ID, ContextID: t.ContextID, Status: refStat(&t.Status), Metadata: t.Metadata}
	if artifacts == artifactsAlways || artifacts == artifactsIfAny && len(t.Artifacts) > 0 {
		as := make([]refArtifact, len(t.Artifacts))
		for i := range t.Artifacts {
			as[i] = refArt(&t.Artifacts[i])
		}
		out.Artifacts = &as
	}
	for i := range t.History {
		out.History = append(out.History, refMsg(&t.History[i]))
	}
	return out
}

func refStreamOf(ev a2a.Event) (*refStream, error) {
	switch v := ev.(type) {
	case *a2a.Task:
		if v != nil {
			return &refStream{Task: refTk(v, artifactsIfAny)}, nil
		}
	case *a2a.Message:
		if v != nil {
			m := refMsg(v)
			return &refStream{Message: &m}, nil
		}
	case *a2a.TaskStatusUpdateEvent:
		if v != nil {
			return &refStream{StatusUpdate: &refStatusUpdate{TaskID: v.TaskID, ContextID: v.ContextID, Status: refStat(&v.Status), Metadata: v.Metadata}}, nil
		}
	case *a2a.TaskArtifactUpdateEvent:
		if v != nil {
			return &refStream{ArtifactUpdate: &refArtifactUpdate{TaskID: v.TaskID, ContextID: v.ContextID, Artifact: refArt(&v.Artifact),
				Append: v.Append, LastChunk: v.LastChunk, Metadata: v.Metadata}}, nil
		}
	}
	return nil, errors.New("unknown event")
}

// refMarshal encodes ev's StreamResponse (wrapped) or its bare object.
func refMarshal(ev a2a.Event, wrapped bool) ([]byte, error) {
	s, err := refStreamOf(ev)
	if err != nil {
		return nil, err
	}
	if wrapped {
		return json.Marshal(s, wirejson.EncodeOptions)
	}
	var v any
	switch {
	case s.Task != nil:
		v = s.Task
	case s.Message != nil:
		v = s.Message
	case s.StatusUpdate != nil:
		v = s.StatusUpdate
	default:
		v = s.ArtifactUpdate
	}
	return json.Marshal(v, wirejson.EncodeOptions)
}

// checkSame fails t unless the encoders and the reference agree on ev.
func checkSame(t *testing.T, ev a2a.Event) {
	t.Helper()
	for _, wrapped := range []bool{true, false} {
		want, werr := refMarshal(ev, wrapped)
		app := AppendEvent
		if wrapped {
			app = AppendStreamResponse
		}
		got, gerr := app([]byte("prefix"), ev)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("wrapped %v: errors differ: reference %v, encoder %v (reference output %s)", wrapped, werr, gerr, want)
		}
		if gerr != nil {
			if string(got) != "prefix" {
				t.Fatalf("encoder changed dst on error: %q", got)
			}
			continue
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("wrapped %v: encodings differ:\n got %s\nwant prefix%s", wrapped, got, want)
		}
	}
}

type point struct{ X, Y int }

// eventsAround returns events that hold s in every string position and v
// in every metadata and data position.
func eventsAround(s string, v any) []a2a.Event {
	meta := map[string]any{s: v, "k": []any{v, s}, "z": map[string]any{"n": v}}
	parts := []a2a.Part{
		a2a.Part{Content: a2a.Text(s), MediaType: s, Filename: s, Metadata: meta},
		a2a.NewTextPart(s),
		a2a.NewDataPart(meta),
		a2a.Part{Content: a2a.Data{Value: v}, MediaType: s},
		a2a.NewDataPart(nil),
		a2a.Part{Content: a2a.Raw([]byte(s)), MediaType: s, Filename: s},
		a2a.NewURLPart(s),
		a2a.Part{Content: a2a.Raw(nil)},
		{},
	}
	msg := a2a.Message{MessageID: s, Role: a2a.Role(s), Parts: parts, ContextID: s, TaskID: s,
		ReferenceTaskIDs: []string{s, "r"}, Extensions: []string{s}, Metadata: meta}
	agent := a2a.Message{MessageID: "m", Role: a2a.RoleAgent}
	status := a2a.TaskStatus{State: a2a.TaskState(len(s) % 12), Message: &msg, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.FixedZone("x", 3600))}
	art := a2a.Artifact{ArtifactID: s, Name: s, Description: s, Parts: parts, Extensions: []string{s}, Metadata: meta}
	return []a2a.Event{
		&a2a.Task{ID: s, ContextID: s, Status: status, History: []a2a.Message{msg, agent}, Artifacts: []a2a.Artifact{art, {}}, Metadata: meta},
		&a2a.Task{ID: s, Status: a2a.TaskStatus{State: a2a.TaskStateCanceled}},
		&msg,
		&a2a.Message{},
		&a2a.TaskStatusUpdateEvent{TaskID: s, ContextID: s, Status: status, Final: true, Metadata: meta},
		&a2a.TaskStatusUpdateEvent{},
		&a2a.TaskArtifactUpdateEvent{TaskID: s, ContextID: s, Artifact: art, Append: true, LastChunk: true, Metadata: meta},
		&a2a.TaskArtifactUpdateEvent{LastChunk: true},
	}
}

func TestEncoderMatchesReference(t *testing.T) {
	strs := []string{"", "plain", "quote\" back\\slash", "ctl\x00\x01\x1f\x7f\b\f\n\r\t", "<html>&amp;</html>",
		"héllo wörld ☃ 𝄞", "\u2028\u2029", "bad \xff utf8", "working", "TASK_STATE_WORKING"}
	vals := []any{nil, true, "s", 0.0, math.Copysign(0, -1), 1.5, 1e21, 1e-7, float32(0.1), 7, int64(-9), uint64(1 << 63),
		[]any{}, map[string]any{}, map[string]any(nil), []string{"a", "b\n"},
		map[string]any{"b": 1.0, "a": 2.0, "": nil, "é": "x"}, point{1, 2}, (*point)(nil),
		math.NaN(), math.Inf(1), make(chan int), map[string]any{"bad\xff": 1.0},
		stdjson.Number("123456789012345678901234567890"), stdjson.Number("-0"), stdjson.Number("1e400"),
		stdjson.Number(""), stdjson.Number("01"), stdjson.Number("NaN")}
	for _, s := range strs {
		for _, v := range vals {
			for _, e := range eventsAround(s, v) {
				checkSame(t, e)
			}
		}
	}
	for _, e := range []a2a.Event{sampleTask(), sampleStatusUpdate(), sampleArtifactUpdate()} {
		checkSame(t, e)
	}
	m := sampleMessage()
	checkSame(t, &m)
}

func TestEncoderRejectsUnknownEvents(t *testing.T) {
	for _, e := range []a2a.Event{nil, (*a2a.Task)(nil), (*a2a.Message)(nil), (*a2a.TaskStatusUpdateEvent)(nil), (*a2a.TaskArtifactUpdateEvent)(nil)} {
		if b, err := AppendStreamResponse([]byte("x"), e); err == nil || string(b) != "x" {
			t.Errorf("AppendStreamResponse(%#v) = %q, %v", e, b, err)
		}
		if _, err := AppendEvent(nil, e); err == nil {
			t.Errorf("AppendEvent(%#v) succeeded", e)
		}
	}
	for _, e := range []a2a.Event{sampleStatusUpdate(), sampleArtifactUpdate(), nil} {
		if _, err := AppendSendMessageResponse(nil, e); err == nil {
			t.Errorf("AppendSendMessageResponse(%T) succeeded", e)
		}
	}
}

func TestEncoderInvalidUTF8Error(t *testing.T) {
	_, err := AppendTask(nil, &a2a.Task{ID: "t\xff"})
	if !errors.Is(err, wirejson.ErrInvalidUTF8) {
		t.Fatalf("err = %v", err)
	}
}

// FuzzAppendStreamResponse checks the hand-written encoder against the
// reference on events decoded from the input and built around its text.
func FuzzAppendStreamResponse(f *testing.F) {
	b, _ := refMarshal(sampleTask(), true)
	f.Add(b, "x", 1.5)
	f.Add([]byte(`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":{"a":[1,{"b":null}]}}}`), "\x00\"\\\u2028", 1e-9)
	f.Add([]byte(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"big":123456789012345678901234567890,"p":9007199254740993,"e":1E+400,"z":-0.0}}]}}`), "\xff", -0.0)
	f.Fuzz(func(t *testing.T, raw []byte, s string, n float64) {
		if e, err := UnmarshalStreamResponse(raw); err == nil {
			checkSame(t, e)
		}
		for _, e := range eventsAround(s, n) {
			checkSame(t, e)
		}
		for _, e := range eventsAround("s", stdjson.Number(s)) {
			checkSame(t, e)
		}
	})
}

// A typical task (an echo agent's completed task) and a status update
// frame, in A2A 1.0 and (for comparison) A2A 0.3.
func benchTask() *a2a.Task {
	return &a2a.Task{ID: a2a.NewID(), ContextID: a2a.NewID(), Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: time.Now()},
		History:   []a2a.Message{{MessageID: a2a.NewID(), Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("hello, echo agent")}, ContextID: "c", TaskID: "t"}},
		Artifacts: []a2a.Artifact{{ArtifactID: a2a.NewID(), Name: "echo", Parts: []a2a.Part{a2a.NewTextPart("hello, echo agent")}}}}
}

func benchStatus() *a2a.TaskStatusUpdateEvent {
	return &a2a.TaskStatusUpdateEvent{TaskID: a2a.NewID(), ContextID: a2a.NewID(),
		Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Now(),
			Message: &a2a.Message{MessageID: a2a.NewID(), Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.NewTextPart("working on it")}}}}
}

func BenchmarkEncode(b *testing.B) {
	task, status := benchTask(), benchStatus()
	for _, bc := range []struct {
		name string
		fn   func([]byte) ([]byte, error)
	}{
		{"Task/v10.AppendTask", func(buf []byte) ([]byte, error) { return AppendTask(buf, task) }},
		{"Task/v10.AppendSendMessageResponse", func(buf []byte) ([]byte, error) { return AppendSendMessageResponse(buf, task) }},
		{"Task/v03.AppendEvent", func(buf []byte) ([]byte, error) { return v03.AppendEvent(buf, task) }},
		{"Task/v10.reference", func([]byte) ([]byte, error) { return refMarshal(task, false) }},
		{"StatusUpdate/v10.AppendStreamResponse", func(buf []byte) ([]byte, error) { return AppendStreamResponse(buf, status) }},
		{"StatusUpdate/v03.AppendEvent", func(buf []byte) ([]byte, error) { return v03.AppendEvent(buf, status) }},
		{"StatusUpdate/v10.reference", func([]byte) ([]byte, error) { return refMarshal(status, true) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 4096)
			for b.Loop() {
				var err error
				if buf, err = bc.fn(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	task, _ := AppendSendMessageResponse(nil, benchTask())
	status, _ := AppendStreamResponse(nil, benchStatus())
	req := []byte(`{"message":{"messageId":"9229e770-767c-417b-a0b0-f0741243c589","role":"ROLE_USER","parts":[{"text":"hello, echo agent"}]},"configuration":{"acceptedOutputModes":["text/plain"]}}`)
	b.Run("SendMessageRequest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeSendMessageRequest(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SendMessageResponse/Task", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := UnmarshalSendMessageResponse(task); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("StreamResponse/StatusUpdate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := UnmarshalStreamResponse(status); err != nil {
				b.Fatal(err)
			}
		}
	})
}
