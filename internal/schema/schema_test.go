package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEmbeddedSchemaIsTheTestdataCopy(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "schema", "a2a-v0.3.0.json"))
	if err != nil {
		t.Skipf("testdata copy not found: %v", err)
	}
	if string(b) != string(JSON()) {
		t.Fatal("internal/schema/a2a-v0.3.0.json differs from testdata/schema/a2a-v0.3.0.json")
	}
	sum := sha256.Sum256(JSON())
	if got, want := hex.EncodeToString(sum[:]), "97d6e2435336836cd1d41dffacf83a1a97902b62b826ef14ec5704db85c95f17"; got != want {
		t.Errorf("sha256 = %s, want %s", got, want)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		def, doc string
		want     string // "" valid, else a substring of the error
	}{
		{"Task", `{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"}}`, ""},
		{"Task", `{"kind":"task","id":"t","contextId":"c","status":{"state":"done"}}`, "/status/state"},
		{"Task", `{"kind":"task","id":"t","status":{"state":"completed"}}`, "contextId"},
		{"SendMessageResponse", `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}}`, ""},
		{"SendMessageResponse", `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}`, ""},
		// The Task alternative is reported, not the Message one.
		{"SendMessageSuccessResponse", `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t","status":{"state":"working"}}}`, "contextId"},
		{"DeleteTaskPushNotificationConfigResponse", `{"jsonrpc":"2.0","id":2}`, "missing property 'result'"},
		{"AgentCard", `{"name":"x"}`, "missing properties"},
	}
	for _, tt := range tests {
		err := Validate(tt.def, []byte(tt.doc))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Validate(%s, %s) = %v, want nil", tt.def, tt.doc, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Validate(%s, %s) = %v, want an error containing %q", tt.def, tt.doc, err, tt.want)
		}
		var se *Error
		if tt.want != "" && err != nil && !errors.As(err, &se) {
			t.Errorf("Validate(%s) error %T is not *Error", tt.def, err)
		}
	}
	if err := Validate("NoSuchThing", []byte(`{}`)); err == nil {
		t.Error("unknown definition: want an error")
	}
	if err := Validate("Task", []byte(`{`)); err == nil {
		t.Error("invalid JSON: want an error")
	}
	if len(Definitions()) < 50 {
		t.Errorf("Definitions() = %d names", len(Definitions()))
	}
}

func TestValidateConcurrent(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			_ = Validate("Message", []byte(`{"kind":"message","messageId":"m","role":"user","parts":[]}`))
		}()
	}
	for range 8 {
		<-done
	}
}

func TestEmbedded10IsTheTestdataCopy(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "schema", "a2a-v1.0.1.json"))
	if err != nil {
		t.Skipf("testdata copy not found: %v", err)
	}
	if string(b) != string(JSON10()) {
		t.Fatal("internal/schema/a2a-v1.0.1.json differs from testdata/schema/a2a-v1.0.1.json")
	}
	sum := sha256.Sum256(JSON10())
	if got, want := hex.EncodeToString(sum[:]), "ba4b702b5edbdcbfe972c272484eb38e1fcd72af3c0b7eaa114b50e97455d8dd"; got != want {
		t.Errorf("sha256 = %s, want %s", got, want)
	}
}

func TestValidate10(t *testing.T) {
	tests := []struct {
		def, doc string
		want     string // "" valid, else a substring of the error
	}{
		{"Task", `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-02T03:04:05.678Z"}}`, ""},
		{"Task", `{"id":"t","contextId":"c","status":{"state":"completed"}}`, "/status/state"},
		{"Task", `{"kind":"task","id":"t","contextId":"c"}`, "kind"},
		{"Task", `{"id":"t","status":{"state":"TASK_STATE_WORKING","timestamp":"yesterday"}}`, "/status/timestamp"},
		{"SendMessageResponse", `{"task":{"id":"t","contextId":"c"}}`, ""},
		{"Stream Response", `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"final":true}}`, "final"},
		{"ListTasksResponse", `{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}`, ""},
		{"AgentCard", `{"name":"x","url":"http://a"}`, "url"},
	}
	for _, tt := range tests {
		err := Validate10(tt.def, []byte(tt.doc))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Validate10(%s, %s) = %v, want nil", tt.def, tt.doc, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Validate10(%s, %s) = %v, want an error containing %q", tt.def, tt.doc, err, tt.want)
		}
		var se *Error
		if tt.want != "" && err != nil && (!errors.As(err, &se) || !strings.Contains(err.Error(), "A2A 1.0.1")) {
			t.Errorf("Validate10(%s) error %T %v is not a 1.0.1 *Error", tt.def, err, err)
		}
	}
	if err := Validate10("NoSuchThing", []byte(`{}`)); err == nil {
		t.Error("unknown definition: want an error")
	}
	if err := Validate10("Task", []byte(`{`)); err == nil {
		t.Error("invalid JSON: want an error")
	}
	if n := len(Definitions10()); n < 40 {
		t.Errorf("Definitions10() = %d names", n)
	}
}
