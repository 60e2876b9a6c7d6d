package record

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
)

// benchEvents are what a store appends and reads most: an echo task's
// creation, a 64-byte artifact chunk, a status update, a rich task, and
// the snapshot of a conversation (20 messages, an artifact of 100 parts).
func benchEvents() []struct {
	name string
	ev   a2a.Event
} {
	ts := time.Date(2026, 11, 25, 6, 37, 6, 123000000, time.UTC)
	msg := a2a.Message{MessageID: a2a.NewID(), Role: a2a.RoleUser, TaskID: a2a.NewID(), ContextID: a2a.NewID(),
		Parts: []a2a.Part{a2a.NewTextPart("hello, benchmark")}}
	create := &a2a.Task{ID: msg.TaskID, ContextID: msg.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: ts},
		History: []a2a.Message{msg}}
	chunk := &a2a.TaskArtifactUpdateEvent{TaskID: msg.TaskID, ContextID: msg.ContextID, Append: true,
		Artifact: a2a.Artifact{ArtifactID: "echo", Name: "echo", Parts: []a2a.Part{a2a.NewTextPart(strings.Repeat("0123456789abcdef", 4))}}}
	status := &a2a.TaskStatusUpdateEvent{TaskID: msg.TaskID, ContextID: msg.ContextID, Final: true,
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: ts}}
	conv := &a2a.Task{ID: msg.TaskID, ContextID: msg.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: ts}}
	for i := range 20 {
		m := msg
		m.MessageID = fmt.Sprintf("m-%d", i)
		m.Parts = []a2a.Part{a2a.NewTextPart(strings.Repeat("a conversation turn. ", 5)), a2a.NewDataPart(map[string]any{"turn": i, "ok": true})}
		conv.History = append(conv.History, m)
	}
	art := a2a.Artifact{ArtifactID: "story", Name: "story.txt"}
	for range 100 {
		art.Parts = append(art.Parts, chunk.Artifact.Parts[0])
	}
	conv.Artifacts = []a2a.Artifact{art}
	// Normalize the Go ints to json.Number, as a read gives them.
	b, _ := MarshalEvent(conv)
	convEv, _ := UnmarshalEvent(b)
	rich := richTask()
	rich.Status.Timestamp = ts
	return []struct {
		name string
		ev   a2a.Event
	}{{"Create", create}, {"Chunk", chunk}, {"Status", status}, {"Rich", rich}, {"Conversation", convEv}}
}

// BenchmarkMarshal compares the record encoder with the A2A 0.3 JSON
// encoder the stores used before (v03.MarshalEvent), on the same events.
//
//	go test -run '^$' -bench 'Marshal' -benchmem ./internal/record
func BenchmarkMarshal(b *testing.B) {
	for _, c := range benchEvents() {
		for _, codec := range []struct {
			name string
			fn   func(a2a.Event) ([]byte, error)
		}{{"record", MarshalEvent}, {"v03", v03.MarshalEvent}} {
			b.Run(c.name+"/"+codec.name, func(b *testing.B) {
				out, err := codec.fn(c.ev)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(out)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := codec.fn(c.ev); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkUnmarshal compares the record decoder with the A2A 0.3 JSON
// decoder (v03.UnmarshalEvent); SetBytes is each encoding's own size.
func BenchmarkUnmarshal(b *testing.B) {
	for _, c := range benchEvents() {
		for _, codec := range []struct {
			name string
			enc  func(a2a.Event) ([]byte, error)
			dec  func([]byte) (a2a.Event, error)
		}{{"record", MarshalEvent, UnmarshalEvent}, {"v03", v03.MarshalEvent, v03.UnmarshalEvent}} {
			b.Run(c.name+"/"+codec.name, func(b *testing.B) {
				in, err := codec.enc(c.ev)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := codec.dec(in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
