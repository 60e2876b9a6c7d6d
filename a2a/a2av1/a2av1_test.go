package a2av1_test

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/a2a/a2av1"
)

var when = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func message() *a2a.Message {
	return &a2a.Message{MessageID: "m1", Role: a2a.RoleUser, ContextID: "c1", TaskID: "t1",
		Parts: []a2a.Part{
			a2a.NewTextPart("hi"),
			a2a.NewDataPart(map[string]any{"big": stdjson.Number("123456789012345678901234567890")}),
			{Content: a2a.Raw{0, 1, 255}, MediaType: "application/octet-stream", Filename: "f.bin"},
			{Content: a2a.URL("https://example.com/x.png"), MediaType: "image/png"},
		}}
}

func task() *a2a.Task {
	return &a2a.Task{ID: "t1", ContextID: "c1",
		Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: when},
		History:   []a2a.Message{*message()},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Parts: []a2a.Part{a2a.NewTextPart("out")}}}}
}

// Every type Marshal takes comes back equal from Unmarshal, in the 1.0
// shape: enum names, parts without a kind.
func TestRoundTrip(t *testing.T) {
	blocking, five := false, 5
	cases := []struct {
		in, out any
		want    string // a piece of the JSON
	}{
		{task(), &a2a.Task{}, `"TASK_STATE_COMPLETED"`},
		{message(), &a2a.Message{}, `"ROLE_USER"`},
		{&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: when}}, &a2a.TaskStatusUpdateEvent{}, `"TASK_STATE_WORKING"`},
		{&a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c1", Append: true, Artifact: a2a.Artifact{ArtifactID: "a1", Parts: []a2a.Part{a2a.NewTextPart("x")}}}, &a2a.TaskArtifactUpdateEvent{}, `"append":true`},
		{&a2a.SendMessageRequest{Message: *message(), Configuration: &a2a.SendMessageConfiguration{Blocking: &blocking, AcceptedOutputModes: []string{"text/plain"}}}, &a2a.SendMessageRequest{}, `"returnImmediately":true`},
		{&a2a.GetTaskRequest{ID: "t1"}, &a2a.GetTaskRequest{}, `"id":"t1"`},
		{&a2a.ListTasksRequest{ContextID: "c1", Status: a2a.TaskStateWorking}, &a2a.ListTasksRequest{}, `"TASK_STATE_WORKING"`},
		{&a2a.CancelTaskRequest{ID: "t1"}, &a2a.CancelTaskRequest{}, `"id":"t1"`},
		{&a2a.SubscribeToTaskRequest{ID: "t1"}, &a2a.SubscribeToTaskRequest{}, `"id":"t1"`},
		{&a2a.GetTaskPushNotificationConfigRequest{TaskID: "t1", ID: "p1"}, &a2a.GetTaskPushNotificationConfigRequest{}, `"taskId":"t1"`},
		{&a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t1", ID: "p1"}, &a2a.DeleteTaskPushNotificationConfigRequest{}, `"id":"p1"`},
		{&a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t1", PageSize: &five}, &a2a.ListTaskPushNotificationConfigsRequest{}, `"pageSize":5`},
		{&a2a.ListTasksResponse{Tasks: []a2a.Task{*task()}, NextPageToken: "n", PageSize: 1, TotalSize: 2}, &a2a.ListTasksResponse{}, `"nextPageToken":"n"`},
		{&a2a.TaskPushNotificationConfig{TaskID: "t1", PushNotificationConfig: a2a.PushNotificationConfig{ID: "p1", URL: "https://hooks.example.com/a2a"}}, &a2a.TaskPushNotificationConfig{}, `"url":"https://hooks.example.com/a2a"`},
		{a2a.ErrTaskNotFound.WithMessage("no task t1"), &a2a.Error{}, `"TASK_NOT_FOUND"`},
		{&a2a.AgentCard{Name: "echo", Description: "d", URL: "https://agents.example.com/echo", Version: "1",
			DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}, PreferredTransport: "JSONRPC",
			Skills: []a2a.AgentSkill{{ID: "s", Name: "s", Description: "d", Tags: []string{"t"}}}}, &a2a.AgentCard{}, `"supportedInterfaces"`},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%T", c.in)
		b, err := a2av1.Marshal(c.in)
		if err != nil {
			t.Fatalf("%s: Marshal: %v", name, err)
		}
		if !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %s lacks %s", name, b, c.want)
		}
		if err := a2av1.Unmarshal(b, c.out); err != nil {
			t.Fatalf("%s: Unmarshal(%s): %v", name, b, err)
		}
		if _, card := c.in.(*a2a.AgentCard); !card && !reflect.DeepEqual(c.out, c.in) {
			t.Errorf("%s: read back as %#v, want %#v", name, c.out, c.in)
		}
		again, err := a2av1.Marshal(c.out)
		if err != nil {
			t.Fatalf("%s: Marshal again: %v", name, err)
		}
		if string(again) != string(b) {
			t.Errorf("%s: not stable:\n%s\n%s", name, b, again)
		}
	}
}

func TestStreamResponse(t *testing.T) {
	for _, ev := range []a2a.Event{task(), message(),
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Final: true, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: when}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c1", Artifact: a2a.Artifact{ArtifactID: "a1", Parts: []a2a.Part{a2a.NewTextPart("x")}}},
	} {
		b, err := a2av1.MarshalStreamResponse(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := a2av1.UnmarshalStreamResponse(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(got, ev) {
			t.Errorf("%s: got %#v, want %#v", b, got, ev)
		}
	}
	// A stream that ends in an error.
	_, err := a2av1.UnmarshalStreamResponse([]byte(`{"error":{"code":404,"status":"NOT_FOUND","message":"gone","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`))
	if !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("error frame: %v, want TaskNotFound", err)
	}
}

func TestSendMessageResponse(t *testing.T) {
	for _, ev := range []a2a.Event{task(), message()} {
		b, err := a2av1.MarshalSendMessageResponse(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := a2av1.UnmarshalSendMessageResponse(b)
		if err != nil || !reflect.DeepEqual(got, ev) {
			t.Errorf("%s: got %#v, %v", b, got, err)
		}
	}
	if _, err := a2av1.MarshalSendMessageResponse(&a2a.TaskStatusUpdateEvent{TaskID: "t"}); err == nil {
		t.Error("a status update as a SendMessageResponse was written")
	}
}

// Bad input is an error, never a panic: nil pointers, foreign types,
// documents that break the specification.
func TestErrors(t *testing.T) {
	for _, v := range []any{nil, (*a2a.Task)(nil), (*a2a.AgentCard)(nil), (*a2a.Error)(nil), a2a.Task{}, "text", 1} {
		if b, err := a2av1.Marshal(v); err == nil {
			t.Errorf("Marshal(%#v) = %s", v, b)
		}
	}
	// An event of another package's own type (a struct embedding one) is
	// refused too, not a panic.
	type wrapped struct{ *a2a.Task }
	for _, ev := range []a2a.Event{nil, (*a2a.Message)(nil), wrapped{task()}, wrapped{}} {
		if _, err := a2av1.MarshalStreamResponse(ev); err == nil {
			t.Errorf("MarshalStreamResponse(%#v) succeeded", ev)
		}
	}
	if err := a2av1.Unmarshal([]byte(`{}`), new(string)); err == nil {
		t.Error("Unmarshal into a *string succeeded")
	}
	var req a2a.SendMessageRequest
	err := a2av1.Unmarshal([]byte(`{"message":{"messageId":"m","role":"ROLE_KING","parts":[{"text":"x"}]}}`), &req)
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != a2a.ErrInvalidParams.Code {
		t.Errorf("a request with an unknown role: %v, want InvalidParams", err)
	}
	if err := a2av1.Unmarshal([]byte(`{"taskId":"t1","status":{"state":"TASK_STATE_SLEEPING"}}`), &a2a.TaskStatusUpdateEvent{}); err == nil {
		t.Error("a status update with an unknown state was read")
	}
	if err := a2av1.Unmarshal([]byte(`{"statusUpdate":{}}`), &a2a.TaskArtifactUpdateEvent{}); err == nil {
		t.Error("a StreamResponse was read as an artifact update")
	}
	// A bare update that is not one JSON object cannot smuggle in another
	// member of a StreamResponse.
	for _, doc := range []string{`null,"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}`, `[]`, `"x"`, `{} {}`} {
		if err := a2av1.Unmarshal([]byte(doc), &a2a.TaskStatusUpdateEvent{}); err == nil {
			t.Errorf("%s was read as a status update", doc)
		}
	}
	for _, v := range []any{(*a2a.Task)(nil), (*a2a.TaskStatusUpdateEvent)(nil), (*a2a.Error)(nil), nil} {
		if err := a2av1.Unmarshal([]byte(`{}`), v); err == nil {
			t.Errorf("Unmarshal into %#v succeeded", v)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	b, _ := a2av1.Marshal(task())
	f.Add(b)
	b, _ = a2av1.MarshalStreamResponse(message())
	f.Add(b)
	f.Add([]byte(`{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}`))
	f.Add([]byte(`null,"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range []any{&a2a.Task{}, &a2a.Message{}, &a2a.TaskStatusUpdateEvent{}, &a2a.TaskArtifactUpdateEvent{}, &a2a.SendMessageRequest{}, &a2a.AgentCard{}, &a2a.Error{}} {
			if a2av1.Unmarshal(data, v) != nil {
				continue
			}
			if _, err := a2av1.Marshal(v); err != nil {
				t.Errorf("%T read from %q does not write: %v", v, data, err)
			}
		}
		if ev, err := a2av1.UnmarshalStreamResponse(data); err == nil {
			if _, err := a2av1.MarshalStreamResponse(ev); err != nil {
				t.Errorf("event read from %q does not write: %v", data, err)
			}
		}
	})
}

// A Task written for an A2A 1.0 client.
func ExampleMarshal() {
	t := &a2a.Task{ID: "t1", ContextID: "c1",
		Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Parts: []a2a.Part{a2a.NewTextPart("hello")}}}}
	b, err := a2av1.Marshal(t)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	// Output: {"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a1","parts":[{"text":"hello"}]}]}
}
