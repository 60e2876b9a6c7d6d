package a2av03_test

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/a2a/a2av03"
)

var when = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func message() *a2a.Message {
	return &a2a.Message{MessageID: "m1", Role: a2a.RoleUser, ContextID: "c1", TaskID: "t1",
		Parts: []a2a.Part{
			a2a.NewTextPart("hi"),
			a2a.NewDataPart(map[string]any{"big": stdjson.Number("123456789012345678901234567890")}),
			a2a.NewDataPart("not an object"),
			{Content: a2a.Raw{0, 1, 255}, MediaType: "application/octet-stream", Filename: "f.bin"},
			{Content: a2a.URL("https://example.com/x.png"), MediaType: "image/png"},
		}}
}

func task() *a2a.Task {
	return &a2a.Task{ID: "t1", ContextID: "c1",
		Status:    a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: when},
		History:   []a2a.Message{*message()},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Parts: []a2a.Part{a2a.NewTextPart("out")}}}}
}

// Every type Marshal takes comes back equal from Unmarshal, in the 0.3
// shape: kinds, lowercase enum values.
func TestRoundTrip(t *testing.T) {
	blocking, two := false, 2
	cases := []struct {
		in, out any
		want    string // a piece of the JSON
	}{
		{task(), &a2a.Task{}, `"kind":"task"`},
		{message(), &a2a.Message{}, `"kind":"file"`},
		{&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Final: true, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: when}}, &a2a.TaskStatusUpdateEvent{}, `"kind":"status-update"`},
		{&a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c1", Append: true, Artifact: a2a.Artifact{ArtifactID: "a1", Parts: []a2a.Part{a2a.NewTextPart("x")}}}, &a2a.TaskArtifactUpdateEvent{}, `"kind":"artifact-update"`},
		{&a2a.SendMessageRequest{Message: *message(), Configuration: &a2a.SendMessageConfiguration{Blocking: &blocking, HistoryLength: &two}}, &a2a.SendMessageRequest{}, `"blocking":false`},
		{&a2a.GetTaskRequest{ID: "t1", HistoryLength: &two}, &a2a.GetTaskRequest{}, `"historyLength":2`},
		{&a2a.CancelTaskRequest{ID: "t1"}, &a2a.CancelTaskRequest{}, `"id":"t1"`},
		{&a2a.SubscribeToTaskRequest{ID: "t1"}, &a2a.SubscribeToTaskRequest{}, `"id":"t1"`},
		{&a2a.TaskPushNotificationConfig{TaskID: "t1", PushNotificationConfig: a2a.PushNotificationConfig{ID: "p1", URL: "https://hooks.example.com/a2a"}}, &a2a.TaskPushNotificationConfig{}, `"pushNotificationConfig"`},
		{&a2a.GetTaskPushNotificationConfigRequest{TaskID: "t1", ID: "p1"}, &a2a.GetTaskPushNotificationConfigRequest{}, `"pushNotificationConfigId":"p1"`},
		{&a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t1", ID: "p1"}, &a2a.DeleteTaskPushNotificationConfigRequest{}, `"pushNotificationConfigId":"p1"`},
		{&a2a.AgentCard{Name: "echo", Description: "d", URL: "https://agents.example.com/echo", Version: "1", ProtocolVersion: "0.3.0",
			DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}, PreferredTransport: "JSONRPC",
			Skills: []a2a.AgentSkill{{ID: "s", Name: "s", Description: "d", Tags: []string{"t"}}}}, &a2a.AgentCard{}, `"preferredTransport":"JSONRPC"`},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%T", c.in)
		b, err := a2av03.Marshal(c.in)
		if err != nil {
			t.Fatalf("%s: Marshal: %v", name, err)
		}
		if !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %s lacks %s", name, b, c.want)
		}
		if err := a2av03.Unmarshal(b, c.out); err != nil {
			t.Fatalf("%s: Unmarshal(%s): %v", name, b, err)
		}
		if _, ok := c.in.(*a2a.AgentCard); !ok && !reflect.DeepEqual(c.out, c.in) {
			t.Errorf("%s: got %#v, want %#v", name, c.out, c.in)
		}
		again, err := a2av03.Marshal(c.out)
		if err != nil || string(again) != string(b) {
			t.Errorf("%s: not stable (%v):\n%s\n%s", name, err, b, again)
		}
	}
	b, err := a2av03.Marshal(a2a.ErrTaskNotFound.WithMessage("no task t1"))
	if err != nil || string(b) != `{"code":-32001,"message":"no task t1"}` {
		t.Errorf("error object: %s, %v", b, err)
	}
	var e a2a.Error
	if err := a2av03.Unmarshal(b, &e); err != nil || e.Code != -32001 || e.Message != "no task t1" {
		t.Errorf("error object read back as %#v, %v", e, err)
	}
}

func TestUnmarshalEvent(t *testing.T) {
	b, _ := a2av03.Marshal(task())
	ev, err := a2av03.UnmarshalEvent(b)
	if err != nil || !reflect.DeepEqual(ev, task()) {
		t.Errorf("UnmarshalEvent: %#v, %v", ev, err)
	}
	// An event of another kind than the one asked for.
	if err := a2av03.Unmarshal(b, &a2a.Message{}); err == nil {
		t.Error("a task was read as a message")
	}
}

func TestREST(t *testing.T) {
	for _, c := range []struct{ in, out any }{
		{task(), &a2a.Task{}},
		{&a2a.SendMessageRequest{Message: *message()}, &a2a.SendMessageRequest{}},
		{&a2a.TaskPushNotificationConfig{TaskID: "t1", PushNotificationConfig: a2a.PushNotificationConfig{ID: "p1", URL: "https://hooks.example.com/a2a"}}, &a2a.TaskPushNotificationConfig{}},
	} {
		b, err := a2av03.MarshalREST(c.in)
		if err != nil {
			t.Fatalf("%T: %v", c.in, err)
		}
		if strings.Contains(string(b), `"kind"`) {
			t.Errorf("%T: the HTTP+JSON body %s has kinds", c.in, b)
		}
		if err := a2av03.UnmarshalREST(b, c.out); err != nil {
			t.Fatalf("%T: UnmarshalREST(%s): %v", c.in, b, err)
		}
		if !reflect.DeepEqual(c.out, c.in) {
			t.Errorf("%T: got %#v, want %#v", c.in, c.out, c.in)
		}
	}
	for _, ev := range []a2a.Event{task(), message(),
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Final: true, Status: a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: when}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c1", Artifact: a2a.Artifact{ArtifactID: "a1", Parts: []a2a.Part{a2a.NewTextPart("x")}}},
	} {
		b, err := a2av03.MarshalRESTStreamResponse(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := a2av03.UnmarshalRESTStreamResponse(b)
		if err != nil || !reflect.DeepEqual(got, ev) {
			t.Errorf("%s: got %#v, %v", b, got, err)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, v := range []any{nil, (*a2a.Task)(nil), (*a2a.SendMessageRequest)(nil), a2a.Task{}, &a2a.ListTasksRequest{}, 1} {
		if b, err := a2av03.Marshal(v); err == nil {
			t.Errorf("Marshal(%#v) = %s", v, b)
		}
		if b, err := a2av03.MarshalREST(v); err == nil {
			t.Errorf("MarshalREST(%#v) = %s", v, b)
		}
	}
	for _, v := range []any{(*a2a.Task)(nil), (*a2a.Error)(nil), nil, new(string)} {
		if err := a2av03.Unmarshal([]byte(`{}`), v); err == nil {
			t.Errorf("Unmarshal into %#v succeeded", v)
		}
		if err := a2av03.UnmarshalREST([]byte(`{}`), v); err == nil {
			t.Errorf("UnmarshalREST into %#v succeeded", v)
		}
	}
	type wrapped struct{ *a2a.Task }
	for _, ev := range []a2a.Event{nil, (*a2a.Task)(nil), wrapped{task()}, wrapped{}} {
		if b, err := a2av03.MarshalRESTStreamResponse(ev); err == nil {
			t.Errorf("MarshalRESTStreamResponse(%#v) = %s", ev, b)
		}
	}
	if b, err := a2av03.MarshalREST(message()); err == nil {
		t.Errorf("MarshalREST of a bare message = %s; it travels in a StreamResponse", b)
	}
	var req a2a.SendMessageRequest
	err := a2av03.Unmarshal([]byte(`{"message":{"kind":"message","messageId":"m","role":"king","parts":[{"kind":"text","text":"x"}]}}`), &req)
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != a2a.ErrInvalidParams.Code {
		t.Errorf("a request with an unknown role: %v, want InvalidParams", err)
	}
	var del a2a.DeleteTaskPushNotificationConfigRequest
	if err := a2av03.Unmarshal([]byte(`{"id":"t1"}`), &del); err == nil {
		t.Error("delete params without pushNotificationConfigId were read")
	}
}

func FuzzUnmarshal(f *testing.F) {
	b, _ := a2av03.Marshal(task())
	f.Add(b)
	b, _ = a2av03.MarshalRESTStreamResponse(message())
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range []any{&a2a.Task{}, &a2a.Message{}, &a2a.TaskStatusUpdateEvent{}, &a2a.SendMessageRequest{}, &a2a.AgentCard{}, &a2a.TaskPushNotificationConfig{}} {
			if a2av03.Unmarshal(data, v) == nil {
				if _, err := a2av03.Marshal(v); err != nil {
					t.Errorf("%T read from %q does not write: %v", v, data, err)
				}
			}
		}
		for _, v := range []any{&a2a.Task{}, &a2a.SendMessageRequest{}, &a2a.TaskPushNotificationConfig{}} {
			if a2av03.UnmarshalREST(data, v) == nil {
				if _, err := a2av03.MarshalREST(v); err != nil {
					t.Errorf("%T read from %q as HTTP+JSON does not write: %v", v, data, err)
				}
			}
		}
	})
}

// A Task written for an A2A 0.3 client.
func ExampleMarshal() {
	t := &a2a.Task{ID: "t1", ContextID: "c1",
		Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Parts: []a2a.Part{a2a.NewTextPart("hello")}}}}
	b, err := a2av03.Marshal(t)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	// Output: {"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"hello"}]}]}
}
