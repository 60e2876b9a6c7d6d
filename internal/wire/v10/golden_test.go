package v10

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/schematest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden compares got with testdata/golden/<name>.json (the exact bytes,
// then a newline), or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(bytes.Clone(got), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(append(bytes.Clone(got), '\n'), want) {
		t.Errorf("%s differs from %s (-update rewrites it):\n got %s\nwant %s", name, path, got, want)
	}
}

// eventOpts compare decoded values with what was encoded: an empty map or
// slice equals an absent one (ProtoJSON omits both).
var eventOpts = cmpopts.EquateEmpty()

// TestGoldenEvents: each event's encoding is the golden file, valid
// against the A2A 1.0 schema, and decodes to the event again.
func TestGoldenEvents(t *testing.T) {
	msg := sampleMessage()
	agentMsg := a2a.Message{MessageID: "m9", Role: a2a.RoleAgent, ContextID: "c1", Parts: []a2a.Part{a2a.NewTextPart("hello")}}
	final := &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Final: true, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: sampleTime}}
	minimal := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	unknown := &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateUnspecified}}
	for _, tt := range []struct {
		name string
		ev   a2a.Event
		kind string // "task", "send", "stream"
	}{
		{"task", sampleTask(), "task"},
		{"task_minimal", minimal, "task"},
		{"task_unspecified_state", unknown, "task"},
		{"send_message_response_task", sampleTask(), "send"},
		{"send_message_response_message", &agentMsg, "send"},
		{"stream_task", minimal, "stream"},
		{"stream_message", &msg, "stream"},
		{"stream_status_update", sampleStatusUpdate(), "stream"},
		{"stream_status_update_final", final, "stream"},
		{"stream_artifact_update", sampleArtifactUpdate(), "stream"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var (
				b   []byte
				err error
				got a2a.Event
			)
			switch tt.kind {
			case "task":
				b, err = AppendTask(nil, tt.ev.(*a2a.Task))
				if err == nil {
					schematest.Validate10(t, "Task", b)
					var task a2a.Task
					task, err = UnmarshalTask(b)
					got = &task
				}
			case "send":
				b, err = AppendSendMessageResponse(nil, tt.ev)
				if err == nil {
					schematest.Validate10(t, "SendMessageResponse", b)
					got, err = UnmarshalSendMessageResponse(b)
				}
			default:
				b, err = AppendStreamResponse(nil, tt.ev)
				if err == nil {
					schematest.Validate10(t, "StreamResponse", b)
					got, err = UnmarshalStreamResponse(b)
				}
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			golden(t, tt.name, b)
			if diff := cmp.Diff(tt.ev, got, eventOpts); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGoldenListTasksResponse(t *testing.T) {
	r := &a2a.ListTasksResponse{Tasks: []a2a.Task{*sampleTask(), {ID: "t2", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}},
		NextPageToken: "", PageSize: 2, TotalSize: 2}
	for _, include := range []bool{false, true} {
		b, err := AppendListTasksResponse(nil, r, include)
		if err != nil {
			t.Fatal(err)
		}
		schematest.Validate10(t, "ListTasksResponse", b)
		name := "list_tasks_response"
		if include {
			name += "_include_artifacts"
		}
		golden(t, name, b)
		got, err := UnmarshalListTasksResponse(b)
		if err != nil {
			t.Fatal(err)
		}
		want := *r
		if !include {
			want.Tasks = []a2a.Task{*sampleTask(), r.Tasks[1]}
			want.Tasks[0].Artifacts = nil
		}
		if diff := cmp.Diff(want, got, eventOpts); diff != "" {
			t.Errorf("include %v: round trip (-want +got):\n%s", include, diff)
		}
	}
	empty, _ := AppendListTasksResponse(nil, &a2a.ListTasksResponse{PageSize: 50}, false)
	golden(t, "list_tasks_response_empty", empty)
	schematest.Validate10(t, "ListTasksResponse", empty)
}

func TestGoldenPushConfigs(t *testing.T) {
	c := samplePushConfig()
	b, err := AppendTaskPushNotificationConfig(nil, &c)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate10(t, "TaskPushNotificationConfig", b)
	golden(t, "push_config", b)
	got, err := UnmarshalTaskPushNotificationConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	plain := a2a.TaskPushNotificationConfig{TaskID: "t1", PushNotificationConfig: a2a.PushNotificationConfig{URL: "https://h.example.com"}}
	list := []a2a.TaskPushNotificationConfig{c, plain}
	b, err = AppendListTaskPushNotificationConfigsResponse(nil, list, "next")
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate10(t, "ListTaskPushNotificationConfigsResponse", b)
	golden(t, "list_push_configs_response", b)
	gotList, next, err := UnmarshalListTaskPushNotificationConfigsResponse(b)
	if err != nil || next != "next" {
		t.Fatalf("next %q, err %v", next, err)
	}
	if diff := cmp.Diff(list, gotList); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	b, _ = AppendListTaskPushNotificationConfigsResponse(nil, nil, "")
	golden(t, "list_push_configs_response_empty", b)
}

// TestGoldenRequests: each request encoder's output is the golden file,
// valid against the schema, and its decoder reads it back.
func TestGoldenRequests(t *testing.T) {
	h, size, f := 3, 25, false
	spc := samplePushConfig().PushNotificationConfig
	send := a2a.SendMessageRequest{Tenant: "acme", Message: sampleMessage(), Metadata: map[string]any{"trace": "x"},
		Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}, Blocking: &f, HistoryLength: &h,
			PushNotificationConfig: &spc}}
	check := func(name, def string, b []byte, err error, decode func([]byte) (any, error), want any) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		schematest.Validate10(t, def, b)
		golden(t, name, b)
		got, err := decode(b)
		if err != nil {
			t.Fatalf("%s: decode: %v\n%s", name, err, b)
		}
		if diff := cmp.Diff(want, got, eventOpts); diff != "" {
			t.Errorf("%s: round trip (-want +got):\n%s", name, diff)
		}
	}
	b, err := AppendSendMessageRequest(nil, &send)
	check("request_send_message", "SendMessageRequest", b, err, func(b []byte) (any, error) { return DecodeSendMessageRequest(b) }, send)

	minimal := a2a.SendMessageRequest{Message: a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("hi")}}}
	b, err = AppendSendMessageRequest(nil, &minimal)
	check("request_send_message_minimal", "SendMessageRequest", b, err, func(b []byte) (any, error) { return DecodeSendMessageRequest(b) }, minimal)

	get := a2a.GetTaskRequest{Tenant: "acme", ID: "t1", HistoryLength: &h}
	b, err = AppendGetTaskRequest(nil, &get)
	check("request_get_task", "GetTaskRequest", b, err, func(b []byte) (any, error) { return DecodeGetTaskRequest(b) }, get)

	list := a2a.ListTasksRequest{Tenant: "acme", ContextID: "c1", Status: a2a.TaskStateWorking, PageSize: &size, PageToken: "p2",
		HistoryLength: &h, StatusTimestampAfter: sampleTime, IncludeArtifacts: true}
	b, err = AppendListTasksRequest(nil, &list)
	check("request_list_tasks", "ListTasksRequest", b, err, func(b []byte) (any, error) { return DecodeListTasksRequest(b) }, list)

	cancel := a2a.CancelTaskRequest{Tenant: "acme", ID: "t1", Metadata: map[string]any{"why": "bored"}}
	b, err = AppendCancelTaskRequest(nil, &cancel)
	check("request_cancel_task", "CancelTaskRequest", b, err, func(b []byte) (any, error) { return DecodeCancelTaskRequest(b) }, cancel)

	sub := a2a.SubscribeToTaskRequest{ID: "t1"}
	b, err = AppendSubscribeToTaskRequest(nil, &a2a.SubscribeToTaskRequest{ID: "t1", Metadata: map[string]any{"dropped": true}})
	check("request_subscribe_to_task", "SubscribeToTaskRequest", b, err, func(b []byte) (any, error) { return DecodeSubscribeToTaskRequest(b) }, sub)

	pc := samplePushConfig()
	b, err = AppendTaskPushNotificationConfig(nil, &pc)
	check("request_create_push_config", "TaskPushNotificationConfig", b, err, func(b []byte) (any, error) { return DecodeTaskPushNotificationConfig(b) }, pc)

	pid := a2a.GetTaskPushNotificationConfigRequest{Tenant: "acme", TaskID: "t1", ID: "p1"}
	b, err = AppendPushConfigIDRequest(nil, &pid)
	check("request_get_push_config", "GetTaskPushNotificationConfigRequest", b, err, func(b []byte) (any, error) { return DecodeGetTaskPushNotificationConfigRequest(b) }, pid)
	schematest.Validate10(t, "DeleteTaskPushNotificationConfigRequest", b)
	del, err := DecodeDeleteTaskPushNotificationConfigRequest(b)
	if err != nil || !cmp.Equal(del, a2a.DeleteTaskPushNotificationConfigRequest(pid)) {
		t.Errorf("delete = %+v, %v", del, err)
	}

	lp := a2a.ListTaskPushNotificationConfigsRequest{Tenant: "acme", TaskID: "t1", PageSize: &size, PageToken: "p"}
	b, err = AppendListTaskPushNotificationConfigsRequest(nil, &lp)
	check("request_list_push_configs", "ListTaskPushNotificationConfigsRequest", b, err, func(b []byte) (any, error) { return DecodeListTaskPushNotificationConfigsRequest(b) }, lp)

	b, err = AppendGetExtendedAgentCardRequest(nil, "acme")
	check("request_get_extended_agent_card", "GetExtendedAgentCardRequest", b, err, func(b []byte) (any, error) { return DecodeGetExtendedAgentCardRequest(b) }, "acme")
}
