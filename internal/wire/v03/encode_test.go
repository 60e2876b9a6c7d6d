package v03

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
	"github.com/a2abridge/a2abridge/internal/wire/wiretest"
)

// The reference encoder: the wire structs of types.go through json/v2, as
// MarshalEvent worked before it was written by hand. The hand-written
// encoder must produce the same bytes, and fail where this one fails.

func fromStatus(s *a2a.TaskStatus) taskStatusJSON {
	out := taskStatusJSON{State: s.State.String(), Timestamp: FormatTime(s.Timestamp)}
	if s.Message != nil {
		m := fromMessage(s.Message)
		out.Message = &m
	}
	return out
}

func fromArtifact(a *a2a.Artifact) artifactJSON {
	return artifactJSON{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
		Parts: fromParts(a.Parts), Extensions: a.Extensions, Metadata: a.Metadata}
}

func fromTask(t *a2a.Task) taskJSON {
	out := taskJSON{Kind: KindTask, ID: t.ID, ContextID: t.ContextID, Status: fromStatus(&t.Status), Metadata: t.Metadata}
	if len(t.History) > 0 {
		out.History = make([]messageJSON, len(t.History))
		for i := range t.History {
			out.History[i] = fromMessage(&t.History[i])
		}
	}
	if len(t.Artifacts) > 0 {
		out.Artifacts = make([]artifactJSON, len(t.Artifacts))
		for i := range t.Artifacts {
			out.Artifacts[i] = fromArtifact(&t.Artifacts[i])
		}
	}
	return out
}

// wireEvent returns the wire struct for an event, ready for json.Marshal.
func wireEvent(e a2a.Event) (any, error) {
	switch e := e.(type) {
	case *a2a.Task:
		v := fromTask(e)
		return &v, nil
	case *a2a.Message:
		v := fromMessage(e)
		return &v, nil
	case *a2a.TaskStatusUpdateEvent:
		return &statusUpdateJSON{Kind: KindStatusUpdate, TaskID: e.TaskID, ContextID: e.ContextID,
			Status: fromStatus(&e.Status), Final: e.Final, Metadata: e.Metadata}, nil
	case *a2a.TaskArtifactUpdateEvent:
		return &artifactUpdateJSON{Kind: KindArtifactUpdate, TaskID: e.TaskID, ContextID: e.ContextID,
			Artifact: fromArtifact(&e.Artifact), Append: e.Append, LastChunk: e.LastChunk, Metadata: e.Metadata}, nil
	}
	return nil, errors.New("v03: unknown event type")
}

func refMarshalEvent(e a2a.Event) ([]byte, error) {
	v, err := wireEvent(e)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v, encodeOpts)
}

// checkSame fails t unless MarshalEvent and the reference encoder agree on e.
func checkSame(t *testing.T, e a2a.Event) {
	t.Helper()
	want, werr := refMarshalEvent(e)
	got, gerr := MarshalEvent(e)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("errors differ: reference %v, MarshalEvent %v (reference output %s)", werr, gerr, want)
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("encodings differ:\n got %s\nwant %s", got, want)
	}
	// AppendEvent appends the same bytes, and leaves dst alone on error.
	prefix := []byte("prefix")
	app, aerr := AppendEvent(prefix, e)
	if (aerr != nil) != (gerr != nil) {
		t.Fatalf("AppendEvent error %v, MarshalEvent error %v", aerr, gerr)
	}
	if aerr != nil && string(app) != "prefix" {
		t.Fatalf("AppendEvent changed dst on error: %q", app)
	}
	if aerr == nil && string(app) != "prefix"+string(got) {
		t.Fatalf("AppendEvent: %s", app)
	}
}

// eventsAround returns events that hold s in every string position and v
// in every metadata and data position.
func eventsAround(s string, v any) []a2a.Event {
	meta := map[string]any{s: v, "k": []any{v, s}, "z": map[string]any{"n": v}}
	parts := []a2a.Part{
		a2a.Part{Content: a2a.Text(s), Metadata: meta},
		a2a.NewTextPart(s),
		a2a.NewDataPart(meta),
		a2a.NewDataPart(nil),
		a2a.Part{Content: a2a.Raw([]byte(s)), MediaType: s, Filename: s},
		a2a.NewURLPart(s),
		a2a.Part{Content: a2a.Raw(nil)},
		{},
	}
	msg := a2a.Message{MessageID: s, Role: a2a.Role(s), Parts: parts, ContextID: s, TaskID: s,
		ReferenceTaskIDs: []string{s, "r"}, Extensions: []string{s}, Metadata: meta}
	status := a2a.TaskStatus{State: a2a.TaskState(len(s) % 12), Message: &msg, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.FixedZone("x", 3600))}
	art := a2a.Artifact{ArtifactID: s, Name: s, Description: s, Parts: parts, Extensions: []string{s}, Metadata: meta}
	return []a2a.Event{
		&a2a.Task{ID: s, ContextID: s, Status: status, History: []a2a.Message{msg, {MessageID: "m", Role: a2a.RoleUser}}, Artifacts: []a2a.Artifact{art, {}}, Metadata: meta},
		&a2a.Task{ID: s},
		&msg,
		&a2a.Message{},
		&a2a.TaskStatusUpdateEvent{TaskID: s, ContextID: s, Status: status, Final: true, Metadata: meta},
		&a2a.TaskStatusUpdateEvent{},
		&a2a.TaskArtifactUpdateEvent{TaskID: s, ContextID: s, Artifact: art, Append: true, LastChunk: true, Metadata: meta},
		&a2a.TaskArtifactUpdateEvent{LastChunk: true},
	}
}

func TestEncoderMatchesReference(t *testing.T) {
	strs, vals := wiretest.Strings(), wiretest.Values()
	for _, s := range strs {
		for _, v := range vals {
			for _, e := range eventsAround(s, v) {
				checkSame(t, e)
			}
		}
	}
	checkSame(t, sampleTask())
}

func TestAppendTime(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2025, 6, 1, 12, 0, 0, 123456789, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", -7200)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(1763700000, 5e6).In(time.FixedZone("y", 19800)),
	} {
		if got, want := string(wirejson.AppendTime(nil, tm)), FormatTime(tm); got != want {
			t.Errorf("wirejson.AppendTime(%v) = %s, want %s", tm, got, want)
		}
	}
}

func TestEncoderRejectsUnknownEvents(t *testing.T) {
	for _, e := range []a2a.Event{nil, (*a2a.Task)(nil), (*a2a.Message)(nil), (*a2a.TaskStatusUpdateEvent)(nil), (*a2a.TaskArtifactUpdateEvent)(nil)} {
		if _, err := MarshalEvent(e); err == nil {
			t.Errorf("MarshalEvent(%#v) succeeded", e)
		}
	}
}

func TestEncoderInvalidUTF8Error(t *testing.T) {
	_, err := MarshalEvent(&a2a.Task{ID: "t\xff"})
	if !errors.Is(err, wirejson.ErrInvalidUTF8) || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzMarshalEvent checks the hand-written encoder against the reference
// on events decoded from the input, and on events built around its text.
func FuzzMarshalEvent(f *testing.F) {
	b, _ := refMarshalEvent(sampleTask())
	f.Add(b, "x", 1.5)
	f.Add([]byte(`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false,"metadata":{"a":[1,{"b":null}]}}`), "\x00\"\\\u2028", 1e-9)
	f.Add([]byte(`{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":{"z":1,"a":2}}]}`), "\xff", -0.0)
	f.Add([]byte(`{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":{"big":123456789012345678901234567890,"p":9007199254740993,"e":1E+400,"z":-0.0}}]}`), "1e-7", 0.1)
	f.Fuzz(func(t *testing.T, raw []byte, s string, n float64) {
		if e, err := UnmarshalEvent(raw); err == nil {
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

func BenchmarkMarshalEvent(b *testing.B) {
	task := &a2a.Task{ID: a2a.NewID(), ContextID: a2a.NewID(), Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: time.Now()},
		History:   []a2a.Message{{MessageID: a2a.NewID(), Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("hello, echo agent")}, ContextID: "c", TaskID: "t"}},
		Artifacts: []a2a.Artifact{{ArtifactID: a2a.NewID(), Name: "echo", Parts: []a2a.Part{a2a.NewTextPart("hello, echo agent")}}}}
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := refMarshalEvent(task); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			var err error
			if buf, err = AppendEvent(buf[:0], task); err != nil {
				b.Fatal(err)
			}
		}
	})
}
