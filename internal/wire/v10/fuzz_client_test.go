package v10

import "testing"

// FuzzClientResponses: the decoders a client runs on a server's answers
// (A2A 1.0 §9 results and errors, §11 google.rpc.Status bodies) never
// panic, return a value or an error (never both empty), and an error they
// decode carries a code.
func FuzzClientResponses(f *testing.F) {
	for _, s := range []string{
		`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`,
		`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`,
		`{"tasks":[{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}],"nextPageToken":"","pageSize":50,"totalSize":1}`,
		`{"configs":[{"id":"p","taskId":"t","url":"https://x/h"}],"nextPageToken":""}`,
		`{"id":"p","taskId":"t","url":"https://x/h","authentication":{"scheme":"Bearer","credentials":"k"}}`,
		`{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}`,
		`{"error":{"code":404,"status":"NOT_FOUND","message":"no","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND"}]}}`,
		`<html>bad gateway</html>`, `null`, `[]`, `{"task":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if ev, err := UnmarshalSendMessageResponse(b); err == nil && ev == nil {
			t.Fatalf("SendMessageResponse %q: no event and no error", b)
		}
		UnmarshalStreamResponse(b)
		UnmarshalListTasksResponse(b)
		UnmarshalTaskPushNotificationConfig(b)
		UnmarshalListTaskPushNotificationConfigsResponse(b)
		if e, err := UnmarshalError(b); err == nil && (e == nil || e.Code == 0) {
			t.Fatalf("error %q: decoded without a code: %+v", b, e)
		}
		for _, status := range []int{400, 404, 500, 502} {
			if e := UnmarshalRESTError(status, b); e == nil || e.Code == 0 {
				t.Fatalf("REST error %d %q: %+v, want an *a2a.Error with a code", status, b, e)
			}
			if e, ok := ParseRESTError(status, b); ok && (e == nil || e.Code == 0) {
				t.Fatalf("ParseRESTError %d %q: ok without an error code: %+v", status, b, e)
			}
		}
	})
}
