package v10

import (
	"errors"
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
	msg.Parts[1] = a2a.TextPart{Text: "# title"}
	msg.Parts[3] = a2a.DataPart{Data: msg.Parts[3].(a2a.DataPart).Data}
	msg.Parts[4] = a2a.DataPart{Data: map[string]any{}}
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
	want := a2a.MessageSendParams{
		Message: a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart{Text: "hi"}, a2a.FilePart{File: a2a.File{URI: "https://x/y", MimeType: "image/png"}}}},
		Configuration: &a2a.MessageSendConfiguration{AcceptedOutputModes: []string{"text/plain"}, HistoryLength: ptr(2), Blocking: ptr(false),
			PushNotificationConfig: &a2a.PushNotificationConfig{URL: "https://h", Authentication: &a2a.PushNotificationAuthenticationInfo{Schemes: []string{"Bearer"}}}}}
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
