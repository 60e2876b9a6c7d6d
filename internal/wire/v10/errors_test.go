package v10

import (
	stdjson "encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/a2abridge/a2abridge/a2a"
)

func sampleErrors() map[string]*a2a.Error {
	return map[string]*a2a.Error{
		"task_not_found":        a2a.ErrTaskNotFound.WithData(map[string]any{"taskId": "t1"}),
		"invalid_params":        a2a.InvalidParams("/params/message/parts/0/raw", "raw is not valid base64"),
		"version_not_supported": a2a.ErrVersionNotSupported.WithData(map[string]any{"requestedVersion": "2.0", "supportedVersions": []any{"0.3", "1.0"}}),
		"internal":              a2a.ErrInternal.WithData(map[string]any{"requestId": "r-1"}),
		"not_cancelable":        a2a.ErrTaskNotCancelable,
		"unauthenticated":       a2a.ErrUnauthenticated,
		"non_object_data":       a2a.ErrUnsupportedOperation.WithData("streaming is off"),
		"unknown_code":          {Code: -32050, Message: "custom", Data: map[string]any{"k": "v"}},
	}
}

func TestGoldenErrors(t *testing.T) {
	for name, e := range sampleErrors() {
		t.Run(name, func(t *testing.T) {
			b := AppendError(nil, e)
			if !jsontext.Value(b).IsValid() {
				t.Fatalf("invalid JSON %s", b)
			}
			golden(t, "error_"+name, b)
			got, err := UnmarshalError(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(e, got); diff != "" {
				t.Errorf("JSON-RPC round trip (-want +got):\n%s", diff)
			}

			body, status := AppendRESTError(nil, e)
			golden(t, "rest_error_"+name, body)
			if code, _ := HTTPStatus(e); code != status {
				t.Errorf("status %d, HTTPStatus %d", status, code)
			}
			got = UnmarshalRESTError(status, body)
			want := *e
			if !knownCode(e.Code) {
				want.Code = a2a.CodeInternalError // REST has no numeric code: 500 without a reason
			}
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("REST round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHTTPStatus(t *testing.T) {
	for code, want := range map[int]int{
		a2a.CodeTaskNotFound: 404, a2a.CodeTaskNotCancelable: 400, a2a.CodePushNotificationNotSupported: 400,
		a2a.CodeUnsupportedOperation: 400, a2a.CodeContentTypeNotSupported: 400, a2a.CodeInvalidAgentResponse: 500,
		a2a.CodeAuthenticatedExtendedCardNotConfigured: 400, a2a.CodeExtensionSupportRequired: 400, a2a.CodeVersionNotSupported: 400,
		a2a.CodeParseError: 400, a2a.CodeInvalidRequest: 400, a2a.CodeInvalidParams: 400, a2a.CodeMethodNotFound: 501,
		a2a.CodeInternalError: 500, a2a.CodeUnauthenticated: 401, -32099: 500,
	} {
		if got, _ := HTTPStatus(&a2a.Error{Code: code}); got != want {
			t.Errorf("HTTPStatus(%d) = %d, want %d", code, got, want)
		}
		// Every code with a reason maps back from it.
		if r := a2a.Reason(code); r != "" {
			if c, ok := a2a.CodeForReason(r); !ok || c != code {
				t.Errorf("CodeForReason(%q) = %d, %v", r, c, ok)
			}
		}
	}
}

func TestWriteRESTError(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteRESTError(rec, a2a.ErrTaskNotFound.WithMessage("task t1 not found"))
	if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	want := `{"error":{"code":404,"status":"NOT_FOUND","message":"task t1 not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`
	if rec.Body.String() != want {
		t.Errorf("body %s", rec.Body)
	}
}

// Error documents written by the official SDKs decode.
func TestUnmarshalPeerErrors(t *testing.T) {
	// a2a-go v2: a Struct written flat, ErrorInfo last, -31401 for unauthenticated.
	e, err := UnmarshalError([]byte(`{"code":-31401,"message":"unauthenticated","data":[{"@type":"type.googleapis.com/google.protobuf.Struct","hint":"login","n":1},{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNAUTHENTICATED","domain":"a2a-protocol.org","metadata":{"timestamp":"2026-01-01T00:00:00Z"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(e, a2a.ErrUnauthenticated) || e.Data.(map[string]any)["hint"] != "login" || e.Data.(map[string]any)["timestamp"] == nil {
		t.Errorf("a2a-go error = %#v", e)
	}
	// a2a-js 1.x: data only for A2A errors.
	e, err = UnmarshalError([]byte(`{"code":-32603,"message":"boom"}`))
	if err != nil || e.Code != a2a.CodeInternalError || e.Data != nil {
		t.Errorf("a2a-js error = %#v, %v", e, err)
	}
	// An A2A 0.3 style data object is kept as it is.
	e, err = UnmarshalError([]byte(`{"code":-32602,"message":"bad","data":{"field":"/x"}}`))
	if err != nil || e.Data.(map[string]any)["field"] != "/x" {
		t.Errorf("0.3 data = %#v, %v", e, err)
	}
	if _, err := UnmarshalError([]byte(`{"message":"no code"}`)); err == nil {
		t.Error("error without code accepted")
	}
	// REST bodies without an ErrorInfo, or not JSON at all.
	for _, tt := range []struct {
		status   int
		body     string
		code     int
		isStatus bool // the body is a google.rpc.Status document
	}{
		{404, `{"error":{"code":404,"status":"NOT_FOUND","message":"no route","details":[]}}`, a2a.CodeMethodNotFound, true},
		{401, `{"error":{"code":401,"message":"who?"}}`, a2a.CodeUnauthenticated, true},
		{400, `{"error":{"code":400,"message":"bad","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"a2a-protocol.org"}]}}`, a2a.CodeInvalidParams, true},
		{404, `{"error":{"code":404,"message":"Task not found: t","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`, a2a.CodeTaskNotFound, true},
		{502, `<html>bad gateway</html>`, a2a.CodeInternalError, false},
		{400, ``, a2a.CodeInvalidRequest, false},
		{404, `{"error":"agent not found","agents":[]}`, a2a.CodeMethodNotFound, false},
		{500, `{"message":"no error member"}`, a2a.CodeInternalError, false},
	} {
		if e := UnmarshalRESTError(tt.status, []byte(tt.body)); e.Code != tt.code || e.Message == "" {
			t.Errorf("%d %s: %#v", tt.status, tt.body, e)
		}
		if e, ok := ParseRESTError(tt.status, []byte(tt.body)); ok != tt.isStatus || e.Code != tt.code {
			t.Errorf("ParseRESTError(%d, %s) = %#v, %v; want code %d, %v", tt.status, tt.body, e, ok, tt.code, tt.isStatus)
		}
	}
}

func TestFieldPath(t *testing.T) {
	for in, want := range map[string]string{
		"/params/message/parts/0/raw": "message.parts[0].raw",
		"/message/role":               "message.role",
		"/params":                     "",
		"/a~1b/c~0d/12/x":             "a/b.c~d[12].x",
		"/0":                          "0",
	} {
		if got := fieldPath(in); got != want {
			t.Errorf("fieldPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalizeError(t *testing.T) {
	for name, e := range sampleErrors() {
		b := AppendError(nil, e)
		// What a JSON-RPC layer makes of the error object: data as a plain value.
		var generic struct {
			Code    int
			Message string
			Data    any
		}
		if err := stdjson.Unmarshal(b, &generic); err != nil {
			t.Fatal(err)
		}
		got := NormalizeError(&a2a.Error{Code: generic.Code, Message: generic.Message, Data: generic.Data})
		want := *e
		if m, ok := want.Data.(map[string]any); ok {
			if _, hasArray := m["supportedVersions"]; hasArray {
				want.Data = map[string]any{"requestedVersion": "2.0", "supportedVersions": []any{"0.3", "1.0"}}
			}
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if NormalizeError(nil) != nil || NormalizeError(a2a.ErrInternal) != a2a.ErrInternal {
		t.Error("nil or data-less error changed")
	}
}
