package v10

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/a2abridge/a2abridge/a2a"
)

// TestGoldenREST03: the 0.3 proto's JSON of every response body, byte for
// byte, and the request shapes of the official clients read back.
func TestGoldenREST03(t *testing.T) {
	msg := sampleMessage()
	canceled := &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Final: true, Status: a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: sampleTime}}
	for _, tt := range []struct {
		name string
		ev   a2a.Event
	}{
		{"rest03_stream_task", sampleTask()},
		{"rest03_stream_message", &msg},
		{"rest03_stream_status_update", sampleStatusUpdate()},
		{"rest03_stream_status_update_final", canceled},
		{"rest03_stream_artifact_update", sampleArtifactUpdate()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := AppendREST03StreamResponse(nil, tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, b)
		})
	}
	b, err := AppendREST03Event(nil, sampleTask())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "rest03_task", b)
	if _, err := AppendREST03SendMessageResponse(nil, sampleStatusUpdate()); err == nil {
		t.Error("a status update as a SendMessageResponse: no error")
	}
	pc := samplePushConfig()
	if b, err = AppendREST03PushConfig(nil, &pc); err != nil {
		t.Fatal(err)
	}
	golden(t, "rest03_push_config", b)
	if b, err = AppendREST03ListPushConfigs(nil, nil); err != nil || string(b) != `{"configs":[]}` {
		t.Errorf("empty list: %s %v", b, err)
	}
	b, status := AppendREST03Error(nil, a2a.ErrTaskNotFound.WithMessage("Task not found: t9"))
	if status != 404 {
		t.Errorf("TaskNotFound: HTTP %d", status)
	}
	golden(t, "rest03_error_task_not_found", b)
	b, status = AppendREST03Error(nil, a2a.InvalidParams("/message/content/0", "part has none of text, file or data"))
	if status != 400 {
		t.Errorf("InvalidParams: HTTP %d", status)
	}
	golden(t, "rest03_error_invalid_params", b)
}

// TestREST03MessageRoundTrip: a message written in the 0.3 proto's JSON
// reads back as itself, but for what 0.3 has no field for: the media type
// and file name of text and data parts, a null data value (an empty
// object in 0.3).
func TestREST03MessageRoundTrip(t *testing.T) {
	msg := sampleMessage()
	got := decodeREST03Message(t, &msg)
	msg.Parts[1] = a2a.NewTextPart("# title")
	msg.Parts[3] = a2a.NewDataPart(msg.Parts[3].Data())
	msg.Parts[4] = a2a.NewDataPart(map[string]any{})
	if diff := cmp.Diff(msg, got, eventOpts); diff != "" {
		t.Fatalf("round trip differs:\n%s", diff)
	}
}

// decodeREST03Message writes m as the message of a SendMessageRequest and
// decodes it.
func decodeREST03Message(t *testing.T, m *a2a.Message) a2a.Message {
	t.Helper()
	b, err := AppendREST03Event([]byte(`{"message":`), m)
	if err != nil {
		t.Fatal(err)
	}
	p, err := DecodeREST03SendMessage(append(b, '}'))
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return p.Message
}

func TestDecodeREST03SendMessage(t *testing.T) {
	// What @a2a-js/sdk 0.3.14 sends for a non-blocking send (blocking
	// false is left out), and a2a-go v2's proto names.
	p, err := DecodeREST03SendMessage([]byte(`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"hi"},{"file":{"fileWithUri":"https://x/y","mimeType":"image/png"}}]},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":2,"pushNotification":{"url":"https://h","authentication":{"schemes":["Bearer"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := a2a.SendMessageRequest{
		Message: a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("hi"), a2a.Part{Content: a2a.URL("https://x/y"), MediaType: "image/png"}}},
		Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}, HistoryLength: ptr(2), Blocking: ptr(false),
			PushNotificationConfig: &a2a.PushNotificationConfig{URL: "https://h", Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}}}}}
	if diff := cmp.Diff(want, p, eventOpts); diff != "" {
		t.Fatalf("JS request:\n%s", diff)
	}
	p, err = DecodeREST03SendMessage([]byte(`{"request":{"message_id":"m","role":2,"content":[{"data":{"data":{"k":"v"}}}]},"configuration":{"blocking":true}}`))
	if err != nil || p.Message.Role != a2a.RoleAgent || p.Configuration.Blocking == nil || !*p.Configuration.Blocking {
		t.Fatalf("proto names: %+v %v", p, err)
	}
	if p, err = DecodeREST03SendMessage([]byte(`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]}}`)); err != nil || p.Configuration != nil {
		t.Fatalf("no configuration: %+v %v", p, err)
	}

	for _, tt := range []struct{ body, field, reason string }{
		{`{}`, "/message", "required field missing"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`, "/message/content", "required field missing"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[]}}`, "/message/content", "at least one part"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"raw":"AA=="}]}}`, "/message/content/0", "none of text, file or data"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x","data":{"data":{}}}]}}`, "/message/content/0", "both text and data"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"file":{"mimeType":"a/b"}}]}}`, "/message/content/0/file", "neither fileWithUri nor fileWithBytes"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"file":{"fileWithUri":"u","fileWithBytes":"AA=="}}]}}`, "/message/content/0/file", "both fileWithUri and fileWithBytes"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"file":{"fileWithBytes":"%%"}}]}}`, "/message/content/0/file/fileWithBytes", "not valid base64"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"data":{"data":[1]}}]}}`, "/message/content/0/data/data", "want object"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"data":{}}]}}`, "/message/content/0/data", "no data object"},
		{`{"message":{"messageId":"m","role":"user","content":[{"text":"x"}]}}`, "/message/role", "unknown role"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]},"configuration":{"blocking":"yes"}}`, "/configuration/blocking", "want boolean"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]},"configuration":{"pushNotification":{"token":"t"}}}`, "/configuration/pushNotification/url", "required field missing"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]},"configuration":{"pushNotification":{"url":"u","authentication":{}}}}`, "/configuration/pushNotification/authentication/schemes", "required field missing"},
	} {
		_, err := DecodeREST03SendMessage([]byte(tt.body))
		checkInvalid(t, tt.body, err, tt.field, tt.reason)
	}
	var ae *a2a.Error
	if _, err := DecodeREST03SendMessage([]byte(`{"message":`)); !errors.As(err, &ae) || ae.Code != a2a.CodeParseError {
		t.Errorf("truncated body: %v", err)
	}
}

func TestDecodeREST03CreatePushConfig(t *testing.T) {
	want := a2a.TaskPushNotificationConfig{TaskID: "t1", PushNotificationConfig: a2a.PushNotificationConfig{ID: "c1", URL: "https://h", Token: "tok"}}
	for _, body := range []string{
		// @a2a-js/sdk 0.3.14: the TaskPushNotificationConfig, its name
		// without a config id when the config has one.
		`{"name":"tasks/t1/pushNotificationConfigs/","pushNotificationConfig":{"id":"c1","url":"https://h","token":"tok"}}`,
		`{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"url":"https://h","token":"tok"}}`,
		// a2a-go v2 and a2a-python: the whole request.
		`{"parent":"tasks/t1","configId":"c1","config":{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"https://h","token":"tok"}}}`,
		`{"parent":"tasks/t1","config_id":"c1","config":{"push_notification_config":{"url":"https://h","token":"tok"}}}`,
	} {
		got, err := DecodeREST03CreatePushConfig("t1", []byte(body))
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s:\n%s", body, diff)
		}
	}
	for _, tt := range []struct{ body, field, reason string }{
		{`{"name":"tasks/t1/pushNotificationConfigs/c1"}`, "", "required field missing"},
		{`{"name":"tasks/t2/pushNotificationConfigs/c1","pushNotificationConfig":{"url":"u"}}`, "/name", "is not tasks/t1/pushNotificationConfigs/{configId}"},
		{`{"name":"tasks/t1/pushNotificationConfigs/a/b","pushNotificationConfig":{"url":"u"}}`, "/name", "is not tasks/t1"},
		{`{"parent":"tasks/t2","config":{"pushNotificationConfig":{"url":"u"}}}`, "/parent", "does not name the task"},
		{`{"configId":"a","config":{"pushNotificationConfig":{"id":"b","url":"u"}}}`, "/configId", "differs from pushNotificationConfig.id"},
		{`{"pushNotificationConfig":{"id":"c"}}`, "/pushNotificationConfig/url", "required field missing"},
		{`{"pushNotificationConfig":"u"}`, "/pushNotificationConfig", "want object"},
	} {
		_, err := DecodeREST03CreatePushConfig("t1", []byte(tt.body))
		if tt.field == "" {
			tt.field = "/pushNotificationConfig"
		}
		checkInvalid(t, tt.body, err, tt.field, tt.reason)
	}
	if _, err := DecodeREST03CreatePushConfig("", []byte(`{}`)); err == nil {
		t.Error("no task id: no error")
	}
}

func TestDecodeREST03TaskAction(t *testing.T) {
	for _, body := range []string{"", "null", "{}", `{"name":"tasks/t1"}`, `{"name":""}`, `{"other":1}`} {
		if p, err := DecodeREST03TaskAction("t1", []byte(body)); err != nil || p.ID != "t1" {
			t.Errorf("%q: %+v %v", body, p, err)
		}
	}
	_, err := DecodeREST03TaskAction("t1", []byte(`{"name":"tasks/t2"}`))
	checkInvalid(t, "other task", err, "/name", "does not name the task of the path")
	_, err = DecodeREST03TaskAction("t1", []byte(`{"name":1}`))
	checkInvalid(t, "number", err, "/name", "want string")
	if _, err := DecodeREST03TaskAction("", nil); err == nil {
		t.Error("no id: no error")
	}
}

// requireRequestError fails t unless err is -32602 naming a field or
// -32700 (a body that is not JSON).
func requireRequestError(t *testing.T, err error) {
	t.Helper()
	var ae *a2a.Error
	if errors.As(err, &ae) && ae.Code == a2a.CodeParseError {
		return
	}
	requireInvalidParams(t, err)
}

func FuzzDecodeREST03SendMessage(f *testing.F) {
	msg := sampleMessage()
	b, _ := AppendREST03Event([]byte(`{"message":`), &msg)
	f.Add(append(b, []byte(`,"configuration":{"blocking":true,"historyLength":"2","pushNotification":{"url":"u","authentication":{"schemes":["Bearer"]}}}}`)...))
	f.Add([]byte(`{"request":{"message_id":"m","role":1,"content":[{"file":{"fileWithBytes":"-_8"}},{"data":{"data":{"n":1.5}}}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := DecodeREST03SendMessage(raw)
		if err != nil {
			requireRequestError(t, err)
			return
		}
		// The message writes and reads back as itself.
		got := decodeREST03Message(t, &p.Message)
		if diff := cmp.Diff(p.Message, got, eventOpts); diff != "" {
			t.Fatalf("round trip differs:\n%s", diff)
		}
	})
}

func FuzzDecodeREST03CreatePushConfig(f *testing.F) {
	pc := samplePushConfig()
	b, _ := AppendREST03PushConfig(nil, &pc)
	f.Add(b)
	f.Add([]byte(`{"parent":"tasks/t1","configId":"c1","config":{"pushNotificationConfig":{"url":"u"}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := DecodeREST03CreatePushConfig("t1", raw)
		if err != nil {
			requireRequestError(t, err)
			return
		}
		if c.TaskID != "t1" || c.PushNotificationConfig.URL == "" {
			t.Fatalf("decoded %+v", c)
		}
		b, err := AppendREST03PushConfig(nil, &c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := DecodeREST03CreatePushConfig("t1", b)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, b)
		}
		if diff := cmp.Diff(c, c2); diff != "" {
			t.Fatalf("round trip differs:\n%s", diff)
		}
	})
}

func FuzzDecodeREST03TaskAction(f *testing.F) {
	f.Add([]byte(`{"name":"tasks/t1"}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := DecodeREST03TaskAction("t1", raw)
		if err != nil {
			requireRequestError(t, err)
			return
		}
		if p.ID != "t1" {
			t.Fatalf("id %q", p.ID)
		}
	})
}

// TestGoldenREST03Requests: the request bodies of our 0.3 HTTP+JSON
// client, byte for byte, and the server's decoders read them back.
func TestGoldenREST03Requests(t *testing.T) {
	hl := 3
	pc := samplePushConfig()
	p := a2a.SendMessageRequest{Tenant: "dropped", Message: sampleMessage(), Metadata: map[string]any{"k": "v"},
		Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}, HistoryLength: &hl,
			Blocking: new(bool), PushNotificationConfig: &pc.PushNotificationConfig}}
	b, err := AppendREST03SendMessageRequest(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "rest03_send_message_request", b)
	got, err := DecodeREST03SendMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	want := p
	want.Tenant = ""
	want.Message = decodeREST03Message(t, &p.Message) // what 0.3 can carry
	if diff := cmp.Diff(want, got, eventOpts); diff != "" {
		t.Errorf("send round trip (-want +got):\n%s", diff)
	}
	// A blocking send says so; no configuration is written as none.
	blocking := a2a.SendMessageRequest{Message: a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("x")}},
		Configuration: &a2a.SendMessageConfiguration{}}
	if b, _ = AppendREST03SendMessageRequest(nil, &blocking); string(b) != `{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]},"configuration":{"blocking":true}}` {
		t.Errorf("blocking send: %s", b)
	}

	if b, err = AppendREST03CreatePushConfigRequest(nil, &pc); err != nil {
		t.Fatal(err)
	}
	golden(t, "rest03_create_push_config_request", b)
	gotPC, err := DecodeREST03CreatePushConfig("t1", b)
	if err != nil {
		t.Fatal(err)
	}
	wantPC := pc
	wantPC.Tenant = ""
	if diff := cmp.Diff(wantPC, gotPC); diff != "" {
		t.Errorf("create push config round trip (-want +got):\n%s", diff)
	}
	pc.PushNotificationConfig.ID = "" // the server picks one
	if b, _ = AppendREST03CreatePushConfigRequest(nil, &pc); string(b[:60]) != `{"parent":"tasks/t1","config":{"name":"tasks/t1/pushNotifica` {
		t.Errorf("create without id: %s", b)
	}
}

// TestREST03ResponsesRoundTrip: what the server writes, the client reads
// back as itself (but for what 0.3 cannot carry).
func TestREST03ResponsesRoundTrip(t *testing.T) {
	msg := sampleMessage()
	carried := decodeREST03Message(t, &msg)
	task := sampleTask()
	task.History = []a2a.Message{carried}
	canceled := &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Final: true, Status: a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: sampleTime}}
	for _, ev := range []a2a.Event{task, &carried, sampleStatusUpdate(), canceled, sampleArtifactUpdate()} {
		b, err := AppendREST03StreamResponse(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalREST03StreamResponse(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if diff := cmp.Diff(ev, got, eventOpts); diff != "" {
			t.Errorf("stream response %T (-want +got):\n%s", ev, diff)
		}
	}
	b, _ := AppendREST03SendMessageResponse(nil, task)
	if got, err := UnmarshalREST03SendMessageResponse(b); err != nil || !cmp.Equal(a2a.Event(task), got, eventOpts) {
		t.Errorf("send response: %v %v", got, err)
	}
	b, _ = AppendREST03StreamResponse(nil, sampleStatusUpdate())
	if _, err := UnmarshalREST03SendMessageResponse(b); err == nil || !strings.Contains(err.Error(), "neither task nor message") {
		t.Errorf("a status update as a send response: %v", err)
	}
	b, _ = AppendREST03Event(nil, task)
	if got, err := UnmarshalREST03Task(b); err != nil || !cmp.Equal(*task, got, eventOpts) {
		t.Errorf("task: %+v %v", got, err)
	}
	pc := samplePushConfig()
	pc.Tenant = ""
	b, _ = AppendREST03PushConfig(nil, &pc)
	if got, err := UnmarshalREST03PushConfig(b); err != nil || !cmp.Equal(pc, got) {
		t.Errorf("push config: %+v %v", got, err)
	}
	b, _ = AppendREST03ListPushConfigs(nil, []a2a.TaskPushNotificationConfig{pc, pc})
	if got, err := UnmarshalREST03ListPushConfigs(b); err != nil || !cmp.Equal([]a2a.TaskPushNotificationConfig{pc, pc}, got) {
		t.Errorf("push config list: %+v %v", got, err)
	}
	bare := `[{"name":"tasks/t1/pushNotificationConfigs/p1","pushNotificationConfig":{"url":"u"}}]`
	if got, err := UnmarshalREST03ListPushConfigs([]byte(bare)); err != nil || len(got) != 1 || got[0].TaskID != "t1" || got[0].PushNotificationConfig.ID != "p1" {
		t.Errorf("bare list: %+v %v", got, err)
	}
	list := a2a.ListTasksResponse{Tasks: []a2a.Task{*task}, NextPageToken: "n", PageSize: 1, TotalSize: 2}
	b, _ = AppendREST03ListTasksResponse(nil, &list, true)
	if got, err := UnmarshalREST03ListTasksResponse(b); err != nil || !cmp.Equal(list, got, eventOpts) {
		t.Errorf("task list: %+v %v", got, err)
	}
	b, _ = AppendREST03Event([]byte("["), task)
	if got, err := UnmarshalREST03ListTasksResponse(append(b, ']')); err != nil || len(got.Tasks) != 1 || got.Tasks[0].ID != "t1" {
		t.Errorf("bare task list: %+v %v", got, err)
	}
	if got, err := UnmarshalREST03ListPushConfigs([]byte(`{}`)); err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty list: %#v %v", got, err)
	}
}

// TestUnmarshalREST03Invalid: bad answers are InvalidParams errors naming
// the member.
func TestUnmarshalREST03Invalid(t *testing.T) {
	for _, tc := range []struct {
		name, body, ptr string
		decode          func([]byte) error
	}{
		{"1.0 state", `{"id":"t","status":{"state":"TASK_STATE_CANCELED"}}`, "/status/state", task03},
		{"1.0 parts", `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"kind":"text"}],"content":[{}]}}`, "/message/content/0", stream03},
		{"two payloads", `{"task":{"id":"t","status":{}},"message":{"messageId":"m","role":2}}`, "", stream03},
		{"no status", `{"id":"t"}`, "/status", task03},
		{"bad name", `{"name":"tasks/t1","pushNotificationConfig":{"url":"u"}}`, "/name", pushConfig03},
		{"no url", `{"name":"tasks/t1/pushNotificationConfigs/p","pushNotificationConfig":{}}`, "/pushNotificationConfig/url", pushConfig03},
		{"no name", `{"pushNotificationConfig":{"url":"u"}}`, "/name", pushConfig03},
		{"list element", `{"configs":[1]}`, "/configs/0", list03},
		{"not an object", `[]`, "", task03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.decode([]byte(tc.body))
			var ae *a2a.Error
			if !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams {
				t.Fatalf("error %v, want InvalidParams", err)
			}
			if tc.ptr != "" && !strings.Contains(ae.Message+fmt.Sprint(ae.Data), tc.ptr) {
				t.Errorf("error %q (data %v) does not name %s", ae.Message, ae.Data, tc.ptr)
			}
		})
	}
}

func task03(b []byte) error       { _, err := UnmarshalREST03Task(b); return err }
func stream03(b []byte) error     { _, err := UnmarshalREST03StreamResponse(b); return err }
func pushConfig03(b []byte) error { _, err := UnmarshalREST03PushConfig(b); return err }
func list03(b []byte) error       { _, err := UnmarshalREST03ListPushConfigs(b); return err }

// TestParseREST03Error: the error bodies of our server, a2a-go v2's 0.3
// server, @a2a-js/sdk's and a2a-python's, and of a proxy.
func TestParseREST03Error(t *testing.T) {
	for name, e := range sampleErrors() {
		t.Run(name, func(t *testing.T) {
			body, status := AppendREST03Error(nil, e)
			got, ok := ParseREST03Error(status, body)
			if !ok {
				t.Fatalf("not an error document: %s", body)
			}
			if diff := cmp.Diff(e, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
	goV2 := `{"error":{"code":404,"status":"NOT_FOUND","message":"task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t9"}}]}}`
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   *a2a.Error
		ok     bool
	}{
		{"a2a-go v2", 404, goV2, &a2a.Error{Code: a2a.CodeTaskNotFound, Message: "task not found", Data: map[string]any{"taskId": "t9"}}, true},
		{"a2a-go v2 stream (no status)", 0, goV2, &a2a.Error{Code: a2a.CodeTaskNotFound, Message: "task not found", Data: map[string]any{"taskId": "t9"}}, true},
		{"a2a-js", 409, `{"code":-32002,"message":"Task cannot be canceled","data":{"taskId":"t"}}`, &a2a.Error{Code: a2a.CodeTaskNotCancelable, Message: "Task cannot be canceled", Data: map[string]any{"taskId": "t"}}, true},
		{"status without reason", 400, `{"error":{"code":400,"message":"bad"}}`, &a2a.Error{Code: a2a.CodeInvalidRequest, Message: "bad"}, true},
		{"HTTP code at the top", 404, `{"code":404,"message":"nope"}`, &a2a.Error{Code: a2a.CodeMethodNotFound, Message: "nope"}, true},
		{"a2a-python", 422, `{"message":"invalid"}`, &a2a.Error{Code: a2a.CodeInvalidRequest, Message: `{"message":"invalid"}`}, false},
		{"proxy", 502, `<html>bad gateway</html>`, &a2a.Error{Code: a2a.CodeInternalError, Message: `<html>bad gateway</html>`}, false},
		{"empty", 503, ``, &a2a.Error{Code: a2a.CodeInternalError, Message: "Service Unavailable"}, false},
		{"error not an object", 400, `{"error":"bad"}`, &a2a.Error{Code: a2a.CodeInvalidRequest, Message: `{"error":"bad"}`}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseREST03Error(tc.status, []byte(tc.body))
			if ok != tc.ok {
				t.Errorf("ok %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzUnmarshalREST03StreamResponse(f *testing.F) {
	for _, ev := range []a2a.Event{sampleTask(), sampleStatusUpdate(), sampleArtifactUpdate()} {
		b, _ := AppendREST03StreamResponse(nil, ev)
		f.Add(b)
	}
	f.Add([]byte(`{"msg":{"message_id":"m","role":2,"content":[{"file":{"fileWithUri":"u"}}]}}`))
	f.Add([]byte(`{"error":{"code":404,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND"}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := UnmarshalREST03StreamResponse(raw)
		var se *StreamError
		if errors.As(err, &se) {
			return
		}
		if err != nil {
			requireInvalidParams(t, err)
			return
		}
		// What was read writes and reads back as itself.
		b, err := AppendREST03StreamResponse(nil, ev)
		if err != nil {
			return // a string with invalid UTF-8 read from an escape
		}
		again, err := UnmarshalREST03StreamResponse(b)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, b)
		}
		if diff := cmp.Diff(ev, again, eventOpts); diff != "" {
			t.Fatalf("round trip differs:\n%s", diff)
		}
	})
}

func FuzzUnmarshalREST03PushConfigs(f *testing.F) {
	pc := samplePushConfig()
	b, _ := AppendREST03ListPushConfigs(nil, []a2a.TaskPushNotificationConfig{pc})
	f.Add(b)
	f.Add([]byte(`[{"name":"tasks/t/pushNotificationConfigs/","pushNotificationConfig":{"url":"u","id":"x"}}]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		cs, err := UnmarshalREST03ListPushConfigs(raw)
		if err != nil {
			requireInvalidParams(t, err)
			return
		}
		for _, c := range cs {
			if c.TaskID == "" || c.PushNotificationConfig.URL == "" {
				t.Fatalf("decoded %+v", c)
			}
		}
	})
}

func FuzzParseREST03Error(f *testing.F) {
	for _, e := range sampleErrors() {
		b, _ := AppendREST03Error(nil, e)
		f.Add(b)
	}
	f.Add([]byte(`{"code":-32001,"message":"x","data":[1]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, ok := ParseREST03Error(400, raw)
		if e == nil || (!ok && e.Code != a2a.CodeInvalidRequest) {
			t.Fatalf("ParseREST03Error = %v, %v", e, ok)
		}
	})
}
