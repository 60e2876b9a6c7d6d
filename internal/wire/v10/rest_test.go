package v10

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/a2abridge/a2abridge/a2a"
)

func mustQuery(t *testing.T, s string) url.Values {
	t.Helper()
	q, err := url.ParseQuery(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestDecodeRESTListTasks(t *testing.T) {
	ts := time.Date(2025, 11, 9, 10, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		query string
		want  a2a.ListTasksRequest
	}{
		{"", a2a.ListTasksRequest{Tenant: "acme"}},
		{"contextId=uuid&status=TASK_STATE_WORKING&pageSize=50&pageToken=cursor", // A2A 1.0 §11.5
			a2a.ListTasksRequest{Tenant: "acme", ContextID: "uuid", Status: a2a.TaskStateWorking, PageSize: ptr(50), PageToken: "cursor"}},
		{"context_id=c&page_size=1&history_length=0&status_timestamp_after=2025-11-09T10:30:00Z&include_artifacts=true",
			a2a.ListTasksRequest{Tenant: "acme", ContextID: "c", PageSize: ptr(1), HistoryLength: ptr(0), StatusTimestampAfter: ts, IncludeArtifacts: true}},
		// a2a-go v2.4.0's client names the timestamp lastUpdatedAfter.
		{"lastUpdatedAfter=2025-11-09T11:30:00%2B01:00&includeArtifacts=0&status=3&A2A-Version=1.0",
			a2a.ListTasksRequest{Tenant: "acme", StatusTimestampAfter: ts, Status: a2a.TaskStateCompleted}},
		{"status=TASK_STATE_UNSPECIFIED", a2a.ListTasksRequest{Tenant: "acme"}},
	} {
		got, err := DecodeRESTListTasks("acme", mustQuery(t, tt.query))
		if err != nil {
			t.Errorf("%s: %v", tt.query, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.query, diff)
		}
		// What ListTasksQuery writes reads back.
		back, err := DecodeRESTListTasks("acme", ListTasksQuery(&got))
		if err != nil || !cmp.Equal(got, back) {
			t.Errorf("%s: query round trip %+v, %v", tt.query, back, err)
		}
	}
	for _, tt := range []struct{ query, field, reason string }{
		{"pageSize=0", "/pageSize", "between 1 and 100"},
		{"pageSize=101", "/pageSize", "between 1 and 100"},
		{"pageSize=ten", "/pageSize", "not an integer"},
		{"pageSize=1&page_size=2", "/pageSize", "more than once"},
		{"status=working", "/status", "unknown task state"},
		{"historyLength=-1", "/historyLength", "negative"},
		{"statusTimestampAfter=yesterday", "/statusTimestampAfter", "RFC 3339"},
		{"lastUpdatedAfter=1700000000", "/lastUpdatedAfter", "RFC 3339"},
		{"includeArtifacts=yes", "/includeArtifacts", "not a boolean"},
		{"contextId=a&contextId=b", "/contextId", "more than once"},
	} {
		_, err := DecodeRESTListTasks("", mustQuery(t, tt.query))
		checkInvalid(t, tt.query, err, tt.field, tt.reason)
	}
}

func TestDecodeRESTOthers(t *testing.T) {
	p, err := DecodeRESTGetTask("acme", "t1", mustQuery(t, "historyLength=10"))
	if err != nil || !cmp.Equal(p, a2a.GetTaskRequest{Tenant: "acme", ID: "t1", HistoryLength: ptr(10)}) {
		t.Errorf("GetTask = %+v, %v", p, err)
	}
	if back, err := DecodeRESTGetTask("acme", "t1", GetTaskQuery(&p)); err != nil || !cmp.Equal(p, back) {
		t.Errorf("GetTask query round trip = %+v, %v", back, err)
	}
	_, err = DecodeRESTGetTask("", "", nil)
	checkInvalid(t, "GetTask without id", err, "/id", "required")
	_, err = DecodeRESTGetTask("", "t", mustQuery(t, "historyLength=x"))
	checkInvalid(t, "GetTask historyLength=x", err, "/historyLength", "not an integer")

	// Cancel and subscribe: empty body (a2a-go), or a body that agrees with the path.
	for _, body := range []string{"", "{}", `{"id":"t1"}`, `{"tenant":"acme","id":"t1","metadata":{"a":"b"}}`} {
		p, err := DecodeRESTTaskAction("acme", "t1", []byte(body))
		if err != nil || p.ID != "t1" || p.Tenant != "acme" {
			t.Errorf("TaskAction %q = %+v, %v", body, p, err)
		}
	}
	_, err = DecodeRESTTaskAction("", "t1", []byte(`{"id":"t2"}`))
	checkInvalid(t, "id differs", err, "/id", "differs")
	_, err = DecodeRESTTaskAction("acme", "t1", []byte(`{"tenant":"other"}`))
	checkInvalid(t, "tenant differs", err, "/tenant", "differs")
	_, err = DecodeRESTTaskAction("", "t1", []byte(`{"id":`))
	if !errors.Is(err, a2a.ErrParse) {
		t.Errorf("truncated body: %v, want ErrParse", err)
	}

	c, err := DecodeRESTCreatePushConfig("acme", "t1", []byte(`{"url":"https://h","authentication":{"scheme":"Bearer","credentials":"c"}}`))
	want := a2a.TaskPushNotificationConfig{Tenant: "acme", TaskID: "t1", PushNotificationConfig: a2a.PushNotificationConfig{URL: "https://h",
		Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}, Credentials: "c"}}}
	if err != nil || !cmp.Equal(c, want) {
		t.Errorf("CreatePushConfig = %+v, %v", c, err)
	}
	_, err = DecodeRESTCreatePushConfig("", "t1", []byte(`{"taskId":"t2","url":"u"}`))
	checkInvalid(t, "taskId differs", err, "/taskId", "differs")
	_, err = DecodeRESTCreatePushConfig("", "t1", []byte(``))
	if !errors.Is(err, a2a.ErrParse) {
		t.Errorf("empty body: %v, want ErrParse", err)
	}
	_, err = DecodeRESTCreatePushConfig("", "t1", []byte(`{"token":"x"}`))
	checkInvalid(t, "no url", err, "/url", "required")

	id, err := DecodeRESTPushConfigID("acme", "t1", "p1")
	if err != nil || !cmp.Equal(id, a2a.GetTaskPushNotificationConfigRequest{Tenant: "acme", TaskID: "t1", ID: "p1"}) {
		t.Errorf("PushConfigID = %+v, %v", id, err)
	}
	_, err = DecodeRESTPushConfigID("", "t1", "")
	checkInvalid(t, "no config id", err, "/id", "required")

	lp, err := DecodeRESTListPushConfigs("", "t1", mustQuery(t, "pageSize=10&pageToken=x"))
	if err != nil || !cmp.Equal(lp, a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t1", PageSize: ptr(10), PageToken: "x"}) {
		t.Errorf("ListPushConfigs = %+v, %v", lp, err)
	}
	if back, err := DecodeRESTListPushConfigs("", "t1", ListPushConfigsQuery(&lp)); err != nil || !cmp.Equal(lp, back) {
		t.Errorf("ListPushConfigs query round trip = %+v, %v", back, err)
	}

	sm, err := DecodeRESTSendMessage("acme", []byte(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`))
	if err != nil || sm.Tenant != "acme" {
		t.Errorf("SendMessage = %+v, %v", sm, err)
	}
	_, err = DecodeRESTSendMessage("", []byte(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}`))
	checkInvalid(t, "no parts", err, "/message/parts", "at least one part")
	_, err = DecodeRESTSendMessage("", []byte(`not json`))
	if !errors.Is(err, a2a.ErrParse) {
		t.Errorf("not JSON: %v, want ErrParse", err)
	}
}
