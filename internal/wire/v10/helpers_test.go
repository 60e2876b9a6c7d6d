package v10

import (
	"errors"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
)

// checkInvalid fails t unless err is InvalidParams whose data names field
// and whose reason contains reason.
func checkInvalid(t *testing.T, doc string, err error, field, reason string) {
	t.Helper()
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams {
		t.Errorf("%s: error %v, want InvalidParams", doc, err)
		return
	}
	data, _ := ae.Data.(map[string]any)
	if data["field"] != field || !strings.Contains(data["reason"].(string), reason) {
		t.Errorf("%s: field %q reason %q, want field %q reason containing %q", doc, data["field"], data["reason"], field, reason)
	}
}

// requireInvalidParams fails t unless err is an *a2a.Error -32602 whose
// data names a field.
func requireInvalidParams(t *testing.T, err error) {
	t.Helper()
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams {
		t.Fatalf("error %v is not -32602", err)
	}
	if data, ok := ae.Data.(map[string]any); !ok || data["field"] == nil {
		t.Fatalf("error %v has no field", err)
	}
}
