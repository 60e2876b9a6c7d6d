package v10

import (
	stdjson "encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/schematest"
)

func ptr[T any](v T) *T { return &v }

// What the official SDKs send, and ProtoJSON's liberties, decode.
func TestDecodeSendMessageRequestAccepts(t *testing.T) {
	userHi := a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("hi")}}
	for _, tt := range []struct {
		name string
		doc  string
		want a2a.SendMessageRequest
	}{
		{"spec example (A2A 1.0 §11.4)",
			`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"]}}`,
			a2a.SendMessageRequest{Message: userHi, Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}}}},
		{"a2a-go v2: returnImmediately, historyLength, push config with taskId",
			`{"configuration":{"returnImmediately":true,"historyLength":0,"taskPushNotificationConfig":{"taskId":"","url":"http://h","authentication":{"scheme":"Bearer"}}},"message":{"messageId":"m","parts":[{"text":"hi"}],"role":"ROLE_USER"}}`,
			a2a.SendMessageRequest{Message: userHi, Configuration: &a2a.SendMessageConfiguration{Blocking: ptr(false), HistoryLength: ptr(0),
				PushNotificationConfig: &a2a.PushNotificationConfig{URL: "http://h", Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}}}}}},
		{"returnImmediately false is blocking, as absent",
			`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":false}}`,
			a2a.SendMessageRequest{Message: userHi, Configuration: &a2a.SendMessageConfiguration{}}},
		{"proto field names",
			`{"message":{"message_id":"m","role":"ROLE_USER","context_id":"c","task_id":"t","reference_task_ids":["r"],"parts":[{"text":"hi","media_type":"text/plain"}]},"configuration":{"accepted_output_modes":["a"],"history_length":"2","return_immediately":true}}`,
			a2a.SendMessageRequest{Message: a2a.Message{MessageID: "m", Role: a2a.RoleUser, ContextID: "c", TaskID: "t", ReferenceTaskIDs: []string{"r"},
				Parts: []a2a.Part{a2a.Part{Content: a2a.Text("hi"), MediaType: "text/plain"}}},
				Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"a"}, HistoryLength: ptr(2), Blocking: ptr(false)}}},
		{"enum numbers, int32 as string and as 2.0, nulls as absent",
			`{"tenant":null,"message":{"messageId":"m","role":1,"parts":[{"text":"hi","metadata":null}],"contextId":null},"configuration":{"historyLength":2.0},"metadata":null}`,
			a2a.SendMessageRequest{Message: userHi, Configuration: &a2a.SendMessageConfiguration{HistoryLength: ptr(2)}}},
		{"unknown members ignored, 0.3 kind harmless",
			`{"message":{"kind":"message","messageId":"m","role":"ROLE_USER","parts":[{"kind":"text","text":"hi"}],"future":{"x":[1]}},"extra":1}`,
			a2a.SendMessageRequest{Message: userHi}},
		{"parts of every kind; base64 URL-safe, unpadded; data null",
			`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"raw":"-__-","filename":"f"},{"url":"http://u","mediaType":"image/png"},{"data":null},{"data":{"n":12345678901234567890}},{"raw":"AA"}]}}`,
			a2a.SendMessageRequest{Message: a2a.Message{MessageID: "m", Role: a2a.RoleAgent, Parts: []a2a.Part{
				a2a.Part{Content: a2a.Raw([]byte{0xfb, 0xff, 0xfe}), Filename: "f"},
				a2a.Part{Content: a2a.URL("http://u"), MediaType: "image/png"},
				a2a.NewDataPart(nil),
				a2a.NewDataPart(map[string]any{"n": stdjson.Number("12345678901234567890")}),
				a2a.NewRawPart([]byte{0}),
			}}}},
		{"tenant and metadata",
			`{"tenant":"acme","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"metadata":{"a":{"b":[1.50]}}}`,
			a2a.SendMessageRequest{Tenant: "acme", Message: userHi, Metadata: map[string]any{"a": map[string]any{"b": []any{stdjson.Number("1.50")}}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeSendMessageRequest([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// Also as an HTTP+JSON body.
			got, err = DecodeRESTSendMessage("", []byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("REST (-want +got):\n%s", diff)
			}
		})
	}
}

// Wrong types, bad enums, bad base64, bad timestamps and missing fields
// are InvalidParams naming the field.
func TestDecodeSendMessageRequestRejects(t *testing.T) {
	msg := func(s string) string { return `{"message":{"messageId":"m","role":"ROLE_USER",` + s + `}}` }
	for _, tt := range []struct{ doc, field, reason string }{
		{``, "/params", "required"},
		{`null`, "/params", "required"},
		{`[]`, "/params", "want object"},
		{`"x"`, "/params", "want object"},
		{`{}`, "/params/message", "required field missing"},
		{`{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}`, "/params/message/messageId", "required field missing"},
		{`{"message":{"messageId":"","role":"ROLE_USER","parts":[{"text":"x"}]}}`, "/params/message/messageId", "required field missing"},
		{`{"message":{"messageId":"m","parts":[{"text":"x"}]}}`, "/params/message/role", "required field missing"},
		{`{"message":{"messageId":"m","role":"user","parts":[{"text":"x"}]}}`, "/params/message/role", `unknown role "user"`},
		{`{"message":{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[{"text":"x"}]}}`, "/params/message/role", "ROLE_USER or ROLE_AGENT"},
		{`{"message":{"messageId":"m","role":7,"parts":[{"text":"x"}]}}`, "/params/message/role", "unknown role 7"},
		{`{"message":{"messageId":"m","role":true,"parts":[{"text":"x"}]}}`, "/params/message/role", "want role name"},
		{msg(`"parts":[]`), "/params/message/parts", "at least one part"},
		{`{"message":{"messageId":"m","role":"ROLE_USER"}}`, "/params/message/parts", "required field missing"},
		{msg(`"parts":{}`), "/params/message/parts", "unexpected JSON object (want array)"},
		{msg(`"parts":[null]`), "/params/message/parts/0", "want object"},
		{msg(`"parts":[{}]`), "/params/message/parts/0", "none of text, raw, url or data"},
		{msg(`"parts":[{"kind":"file","file":{"uri":"http://x"}}]`), "/params/message/parts/0", "A2A 1.0 parts have no kind"},
		{msg(`"parts":[{"text":"a","url":"http://x"}]`), "/params/message/parts/0", "both text and url"},
		{msg(`"parts":[{"text":"a","data":null}]`), "/params/message/parts/0", "both text and data"},
		{msg(`"parts":[{"text":1}]`), "/params/message/parts/0/text", "unexpected JSON number (want string)"},
		{msg(`"parts":[{"raw":"!!!"}]`), "/params/message/parts/0/raw", "not valid base64"},
		{msg(`"parts":[{"raw":"A"}]`), "/params/message/parts/0/raw", "not valid base64"},
		{msg(`"parts":[{"url":""}]`), "/params/message/parts/0/url", "url is empty"},
		{msg(`"parts":[{"text":"a","metadata":[]}]`), "/params/message/parts/0/metadata", "want object"},
		{msg(`"parts":[{"text":"a","mediaType":"x","media_type":"y"}]`), "/params/message/parts/0/media_type", "given twice"},
		{msg(`"parts":[{"text":"a"}],"extensions":"x"`), "/params/message/extensions", "want array"},
		{msg(`"parts":[{"text":"a"}],"extensions":[1]`), "/params/message/extensions/0", "want string"},
		{msg(`"parts":[{"text":"a"}],"referenceTaskIds":[null]`), "/params/message/referenceTaskIds/0", "want string"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLength":-1}}`, "/params/configuration/historyLength", "negative"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLength":1.5}}`, "/params/configuration/historyLength", "not an integer"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLength":"2x"}}`, "/params/configuration/historyLength", "not an integer"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLength":3000000000}}`, "/params/configuration/historyLength", "out of range"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"returnImmediately":"true"}}`, "/params/configuration/returnImmediately", "want boolean"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":{"token":"t"}}}`, "/params/configuration/taskPushNotificationConfig/url", "required"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":{"url":"u","authentication":{}}}}`, "/params/configuration/taskPushNotificationConfig/authentication/scheme", "required"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":[]}`, "/params/configuration", "want object"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"metadata":"x"}`, "/params/metadata", "want object"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"tenant":5}`, "/params/tenant", "want string"},
		{`{"message":"hi"}`, "/params/message", "want object"},
		{`{"message":{"messageId":"m","message_id":"n","role":"ROLE_USER","parts":[{"text":"x"}]}}`, "/params/message/message_id", "given twice"},
		{`{"message":{"messageId":"m","messageId":"n"}}`, "/params/message/messageId", "duplicate"},
		{"{\"message\":{\"messageId\":\"m\xff\"}}", "/params/message/messageId", "invalid UTF-8"},
		{`{"message":{"messageId":"m",`, "/params/message", "unexpected"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}} {}`, "/params", "after the top-level value"},
	} {
		_, err := DecodeSendMessageRequest([]byte(tt.doc))
		checkInvalid(t, tt.doc, err, tt.field, tt.reason)
	}
}

func TestDecodeOtherRequests(t *testing.T) {
	ts := time.Date(2025, 10, 27, 8, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		decode func([]byte) (any, error)
		doc    string
		want   any
	}{
		{"GetTask", func(b []byte) (any, error) { return DecodeGetTaskRequest(b) }, `{"id":"t","historyLength":10}`, a2a.GetTaskRequest{ID: "t", HistoryLength: ptr(10)}},
		{"ListTasks empty params", func(b []byte) (any, error) { return DecodeListTasksRequest(b) }, ``, a2a.ListTasksRequest{}},
		{"ListTasks spec example", func(b []byte) (any, error) { return DecodeListTasksRequest(b) },
			`{"contextId":"c","status":"TASK_STATE_WORKING","pageSize":50,"pageToken":"cursor-token"}`,
			a2a.ListTasksRequest{ContextID: "c", Status: a2a.TaskStateWorking, PageSize: ptr(50), PageToken: "cursor-token"}},
		{"ListTasks unspecified status, offset timestamp", func(b []byte) (any, error) { return DecodeListTasksRequest(b) },
			`{"status":"TASK_STATE_UNSPECIFIED","statusTimestampAfter":"2025-10-27T10:00:00+02:00","includeArtifacts":true,"historyLength":0}`,
			a2a.ListTasksRequest{StatusTimestampAfter: ts, IncludeArtifacts: true, HistoryLength: ptr(0)}},
		{"CancelTask", func(b []byte) (any, error) { return DecodeCancelTaskRequest(b) }, `{"id":"t","metadata":{"a":1}}`,
			a2a.CancelTaskRequest{ID: "t", Metadata: map[string]any{"a": stdjson.Number("1")}}},
		{"SubscribeToTask", func(b []byte) (any, error) { return DecodeSubscribeToTaskRequest(b) }, `{"tenant":"x","id":"t"}`, a2a.SubscribeToTaskRequest{Tenant: "x", ID: "t"}},
		{"CreatePushConfig", func(b []byte) (any, error) { return DecodeTaskPushNotificationConfig(b) },
			`{"taskId":"t","url":"https://h","token":"k"}`,
			a2a.TaskPushNotificationConfig{TaskID: "t", PushNotificationConfig: a2a.PushNotificationConfig{URL: "https://h", Token: "k"}}},
		{"GetPushConfig", func(b []byte) (any, error) { return DecodeGetTaskPushNotificationConfigRequest(b) }, `{"task_id":"t","id":"p"}`,
			a2a.GetTaskPushNotificationConfigRequest{TaskID: "t", ID: "p"}},
		{"ListPushConfigs pageSize 0 is unset", func(b []byte) (any, error) { return DecodeListTaskPushNotificationConfigsRequest(b) }, `{"taskId":"t","pageSize":0}`,
			a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t"}},
		{"GetExtendedAgentCard without params", func(b []byte) (any, error) { return DecodeGetExtendedAgentCardRequest(b) }, ``, ""},
	} {
		got, err := tt.decode([]byte(tt.doc))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	for _, tt := range []struct {
		decode             func([]byte) (any, error)
		doc, field, reason string
	}{
		{func(b []byte) (any, error) { return DecodeGetTaskRequest(b) }, ``, "/params/id", "required"},
		{func(b []byte) (any, error) { return DecodeGetTaskRequest(b) }, `{"id":"t","historyLength":-2}`, "/params/historyLength", "negative"},
		{func(b []byte) (any, error) { return DecodeListTasksRequest(b) }, `{"pageSize":0}`, "/params/pageSize", "between 1 and 100"},
		{func(b []byte) (any, error) { return DecodeListTasksRequest(b) }, `{"pageSize":101}`, "/params/pageSize", "between 1 and 100"},
		{func(b []byte) (any, error) { return DecodeListTasksRequest(b) }, `{"status":"working"}`, "/params/status", `unknown task state "working"`},
		{func(b []byte) (any, error) { return DecodeListTasksRequest(b) }, `{"status":9}`, "/params/status", "unknown task state 9"},
		{func(b []byte) (any, error) { return DecodeListTasksRequest(b) }, `{"statusTimestampAfter":"2025-10-27"}`, "/params/statusTimestampAfter", "RFC 3339"},
		{func(b []byte) (any, error) { return DecodeListTasksRequest(b) }, `{"statusTimestampAfter":1761552000}`, "/params/statusTimestampAfter", "want string"},
		{func(b []byte) (any, error) { return DecodeListTasksRequest(b) }, `{"includeArtifacts":1}`, "/params/includeArtifacts", "want boolean"},
		{func(b []byte) (any, error) { return DecodeCancelTaskRequest(b) }, `{"id":""}`, "/params/id", "required"},
		{func(b []byte) (any, error) { return DecodeSubscribeToTaskRequest(b) }, `{"id":7}`, "/params/id", "want string"},
		{func(b []byte) (any, error) { return DecodeTaskPushNotificationConfig(b) }, `{"url":"u"}`, "/params/taskId", "required"},
		{func(b []byte) (any, error) { return DecodeTaskPushNotificationConfig(b) }, ``, "/params", "required"},
		{func(b []byte) (any, error) { return DecodeGetTaskPushNotificationConfigRequest(b) }, `{"taskId":"t"}`, "/params/id", "required"},
		{func(b []byte) (any, error) { return DecodeDeleteTaskPushNotificationConfigRequest(b) }, `{"id":"p"}`, "/params/taskId", "required"},
		{func(b []byte) (any, error) { return DecodeListTaskPushNotificationConfigsRequest(b) }, `{"taskId":"t","pageSize":-1}`, "/params/pageSize", "negative"},
		{func(b []byte) (any, error) { return DecodeGetExtendedAgentCardRequest(b) }, `{"tenant":[]}`, "/params/tenant", "want string"},
	} {
		_, err := tt.decode([]byte(tt.doc))
		checkInvalid(t, tt.doc, err, tt.field, tt.reason)
	}
}

// Responses, as a client reads them: what ProtoJSON writers omit reads as
// empty; what a server leaves out that the spec requires is an error.
func TestDecodeResponses(t *testing.T) {
	// a2a-js 1.x omits empty parts and a zero state; a2a-go sends "final".
	ev, err := UnmarshalStreamResponse([]byte(`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"message":{"messageId":"m","role":"ROLE_AGENT"}},"final":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Final: true,
		Status: a2a.TaskStatus{State: a2a.TaskStateUnspecified, Message: &a2a.Message{MessageID: "m", Role: a2a.RoleAgent, Parts: []a2a.Part{}}}}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	ev, err = UnmarshalStreamResponse([]byte(`{"status_update":{"task_id":"t","context_id":"c","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}`))
	if err != nil || !ev.(*a2a.TaskStatusUpdateEvent).Final {
		t.Errorf("interrupted state not final: %#v, %v", ev, err)
	}
	ev, err = UnmarshalStreamResponse([]byte(`{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a"},"append":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Append: true, Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{}}}, ev); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// A stream frame with an error (a2a-go's HTTP+JSON server).
	_, err = UnmarshalStreamResponse([]byte(`{"error":{"code":404,"status":"NOT_FOUND","message":"gone","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t"}}]}}`))
	var se *StreamError
	if !errors.As(err, &se) || !errors.Is(err, a2a.ErrTaskNotFound) || se.Err.Message != "gone" || se.Err.Data.(map[string]any)["taskId"] != "t" {
		t.Errorf("stream error = %#v", err)
	}

	for _, tt := range []struct{ doc, field, reason string }{
		{`{}`, "", "none of task, message, statusUpdate or artifactUpdate"},
		{`{"task":null}`, "", "none of"},
		{`{"task":{"id":"t","status":{}},"message":{"messageId":"m","role":"ROLE_USER"}}`, "", "both task and message"},
		{`{"task":{"status":{}}}`, "/task/id", "required"},
		{`{"task":{"id":"t"}}`, "/task/status", "required"},
		{`{"task":{"id":"t","status":{"state":"completed"}}}`, "/task/status/state", "unknown task state"},
		{`{"task":{"id":"t","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-13-01T00:00:00Z"}}}`, "/task/status/timestamp", "RFC 3339"},
		{`{"task":{"id":"t","status":{},"history":[{"messageId":"m","role":"ROLE_USER","parts":[{"raw":5}]}]}}`, "/task/history/0/parts/0/raw", "want string"},
		{`{"task":{"id":"t","status":{},"artifacts":[{"parts":[]}]}}`, "/task/artifacts/0/artifactId", "required"},
		{`{"statusUpdate":{"contextId":"c","status":{}}}`, "/statusUpdate/taskId", "required"},
		{`{"statusUpdate":{"taskId":"t"}}`, "/statusUpdate/status", "required"},
		{`{"statusUpdate":{"taskId":"t","status":{},"final":"yes"}}`, "/statusUpdate/final", "want boolean"},
		{`{"artifactUpdate":{"taskId":"t"}}`, "/artifactUpdate/artifact", "required"},
		{`{"artifactUpdate":{"taskId":"t","artifact":{"artifactId":"a"},"lastChunk":1}}`, "/artifactUpdate/lastChunk", "want boolean"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":1,"raw":""}]}}`, "/message/parts/0", "both data and raw"},
	} {
		_, err := UnmarshalStreamResponse([]byte(tt.doc))
		checkInvalid(t, tt.doc, err, tt.field, tt.reason)
	}
	_, err = UnmarshalSendMessageResponse([]byte(`{"statusUpdate":{"taskId":"t","status":{}}}`))
	checkInvalid(t, "statusUpdate as SendMessageResponse", err, "", "neither task nor message")

	r, err := UnmarshalListTasksResponse([]byte(`{"tasks":[{"id":"t","status":{"state":"TASK_STATE_COMPLETED"}}],"pageSize":"50","totalSize":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a2a.ListTasksResponse{Tasks: []a2a.Task{{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}}, PageSize: 50, TotalSize: 1}, r); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err = UnmarshalListTasksResponse([]byte(`{"tasks":[{"id":"t","status":{}}],"totalSize":1.5}`))
	checkInvalid(t, "totalSize 1.5", err, "/totalSize", "not an integer")
	_, _, err = UnmarshalListTaskPushNotificationConfigsResponse([]byte(`{"configs":[{"taskId":"t"}]}`))
	checkInvalid(t, "config without url", err, "/configs/0/url", "required")
	m, err := UnmarshalMessage([]byte(`{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}`))
	if err != nil || m.Role != a2a.RoleAgent {
		t.Errorf("UnmarshalMessage = %+v, %v", m, err)
	}
}

// TestFieldNamesAreCaseSensitive changes the case of each field name in
// turn: the field must then count as absent (an unknown member), never as
// the real one.
func TestFieldNamesAreCaseSensitive(t *testing.T) {
	doc, _ := AppendSendMessageRequest(nil, &a2a.SendMessageRequest{Tenant: "x", Message: sampleMessage(), Metadata: map[string]any{"a": "b"},
		Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"t"}, HistoryLength: ptr(1), Blocking: ptr(false)}})
	want, err := DecodeSendMessageRequest(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tenant", "message", "messageId", "role", "contextId", "taskId", "parts", "text", "raw", "url", "data",
		"mediaType", "filename", "metadata", "extensions", "referenceTaskIds", "configuration", "acceptedOutputModes", "historyLength", "returnImmediately"} {
		mutated := strings.ReplaceAll(string(doc), `"`+name+`":`, `"`+strings.ToUpper(name[:1])+name[1:]+`":`)
		got, err := DecodeSendMessageRequest([]byte(mutated))
		if err == nil && cmp.Equal(want, got) {
			t.Errorf("field %q matched case-insensitively", name)
		}
	}
}

// FuzzDecodeSendMessageRequest: decoding never panics; errors are -32602
// naming a field; what decodes re-encodes to a schema-valid document that
// decodes to the same value.
func FuzzDecodeSendMessageRequest(f *testing.F) {
	b, _ := AppendSendMessageRequest(nil, &a2a.SendMessageRequest{Tenant: "t", Message: sampleMessage(),
		Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}, Blocking: ptr(false), HistoryLength: ptr(2),
			PushNotificationConfig: &a2a.PushNotificationConfig{URL: "http://x", Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}}}}})
	f.Add(b)
	f.Add([]byte(`{"message":{"message_id":"m","role":1,"parts":[{"raw":"-_8"},{"data":null}]},"configuration":{"history_length":"3"}}`))
	f.Add([]byte(`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"x"}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := DecodeSendMessageRequest(raw)
		if err != nil {
			requireInvalidParams(t, err)
			return
		}
		b, err := AppendSendMessageRequest(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		if err := schematest.Check10("SendMessageRequest", b); err != nil {
			t.Fatalf("re-encoded request invalid: %v\n%s", err, b)
		}
		p2, err := DecodeSendMessageRequest(b)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, b)
		}
		if diff := cmp.Diff(p, p2, eventOpts, toMillisecond, cmp.Comparer(blockingEqual)); diff != "" {
			t.Fatalf("round trip differs:\n%s", diff)
		}
	})
}

// toMillisecond compares timestamps to the millisecond, the precision the
// encoder writes (A2A 1.0 §5.6.1).
var toMillisecond = cmp.Comparer(func(a, b time.Time) bool {
	return a.Truncate(time.Millisecond).Equal(b.Truncate(time.Millisecond))
})

// blockingEqual compares Blocking pointers by meaning (nil is true).
func blockingEqual(a, b *bool) bool { return (a == nil || *a) == (b == nil || *b) }

// FuzzDecodeStreamResponse: decoding never panics; errors are -32602
// naming a field (or a server's StreamError); a decoded event re-encodes
// to a schema-valid frame that decodes to the same event.
func FuzzDecodeStreamResponse(f *testing.F) {
	for _, ev := range []a2a.Event{sampleTask(), sampleStatusUpdate(), sampleArtifactUpdate()} {
		b, _ := AppendStreamResponse(nil, ev)
		f.Add(b)
	}
	f.Add([]byte(`{"status_update":{"task_id":"t","status":{"state":3,"timestamp":"2025-01-02T03:04:05.123456789+01:00"},"final":false}}`))
	f.Add([]byte(`{"error":{"code":404,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND"}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := UnmarshalStreamResponse(raw)
		if err != nil {
			var se *StreamError
			if !errors.As(err, &se) {
				requireInvalidParams(t, err)
			}
			return
		}
		b, err := AppendStreamResponse(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := schematest.Check10("StreamResponse", b); err != nil {
			t.Fatalf("re-encoded frame invalid: %v\n%s", err, b)
		}
		ev2, err := UnmarshalStreamResponse(b)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, b)
		}
		if diff := cmp.Diff(ev, ev2, eventOpts, toMillisecond); diff != "" {
			t.Fatalf("round trip differs:\n%s", diff)
		}
	})
}

// Decoders come from a pool: concurrent decodes do not see each other.
func TestDecodeConcurrently(t *testing.T) {
	docs := make([][]byte, 8)
	for i := range docs {
		m := sampleMessage()
		m.MessageID = strings.Repeat("m", i+1)
		docs[i], _ = AppendSendMessageRequest(nil, &a2a.SendMessageRequest{Message: m})
	}
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				k := (g + i) % len(docs)
				p, err := DecodeSendMessageRequest(docs[k])
				if err == nil && p.Message.MessageID != strings.Repeat("m", k+1) {
					err = errors.New("decoded " + p.Message.MessageID)
				}
				if err == nil {
					_, err = DecodeSendMessageRequest([]byte(`{"message":{"messageId":1}}`))
					if err == nil {
						err = errors.New("bad document decoded")
					} else {
						err = nil
					}
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
