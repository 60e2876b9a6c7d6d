package schematest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/a2abridge/a2abridge/internal/schema"
)

const (
	task = `{
		"kind": "task",
		"id": "363422be-b0f9-4692-a24d-278670e7c7f1",
		"contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4",
		"status": {"state": "completed", "timestamp": "2025-04-02T16:59:35.331844Z"},
		"history": [{
			"kind": "message", "role": "user", "messageId": "m1",
			"parts": [{"kind": "text", "text": "tell me a joke"}]
		}],
		"artifacts": [{
			"artifactId": "9b6934dd-37e3-4eb1-8766-962efaab63a1",
			"name": "joke",
			"parts": [{"kind": "text", "text": "Why did the chicken cross the road?"}]
		}],
		"metadata": {}
	}`
	message = `{
		"kind": "message",
		"role": "agent",
		"messageId": "9229e770-767c-417b-a0b0-f0741243c589",
		"contextId": "ctx-1",
		"parts": [
			{"kind": "text", "text": "hello"},
			{"kind": "file", "file": {"uri": "https://example.com/a.pdf", "mimeType": "application/pdf"}},
			{"kind": "data", "data": {"answer": 42}}
		]
	}`
	errorResponse = `{
		"jsonrpc": "2.0",
		"id": 1,
		"error": {"code": -32001, "message": "Task not found"}
	}`
	streamingStatusUpdate = `{
		"jsonrpc": "2.0",
		"id": "req-7",
		"result": {
			"kind": "status-update",
			"taskId": "t1",
			"contextId": "c1",
			"status": {"state": "working"},
			"final": false
		}
	}`
)

func TestValidDocuments(t *testing.T) {
	tests := []struct{ definition, doc string }{
		{"Task", task},
		{"Message", message},
		{"TextPart", `{"kind": "text", "text": "hi"}`},
		{"Part", `{"kind": "text", "text": "hi"}`},
		{"JSONRPCErrorResponse", errorResponse},
		{"JSONRPCErrorResponse", `{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}`},
		{"SendStreamingMessageSuccessResponse", streamingStatusUpdate},
		{"SendStreamingMessageResponse", streamingStatusUpdate},
		{"TaskStatusUpdateEvent", `{"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "input-required"}, "final": true}`},
	}
	for _, tt := range tests {
		t.Run(tt.definition, func(t *testing.T) {
			if err := Check(tt.definition, []byte(tt.doc)); err != nil {
				t.Errorf("Check: %v", err)
			}
			Validate(t, tt.definition, []byte(tt.doc))
		})
	}
}

// edit returns doc (a JSON object) with the given top-level keys set, or
// deleted when the value is nil.
func edit(t *testing.T, doc string, changes map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range changes {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInvalidDocuments(t *testing.T) {
	tests := []struct {
		name, definition string
		doc              []byte
		wantInError      string // a substring the error output must contain
	}{
		{"task missing contextId", "Task", edit(t, task, map[string]any{"contextId": nil}), "contextId"},
		{"task wrong kind", "Task", edit(t, task, map[string]any{"kind": "message"}), "kind"},
		{"task bad state", "Task", edit(t, task, map[string]any{"status": map[string]any{"state": "done"}}), "state"},
		{"task id not a string", "Task", edit(t, task, map[string]any{"id": 7}), "id"},
		{"message bad role", "Message", edit(t, message, map[string]any{"role": "system"}), "role"},
		{"message part without text", "Message", edit(t, message, map[string]any{"parts": []any{map[string]any{"kind": "text"}}}), "parts"},
		{"text part wrong kind", "TextPart", []byte(`{"kind": "txt", "text": "hi"}`), "kind"},
		{"error response wrong version", "JSONRPCErrorResponse", edit(t, errorResponse, map[string]any{"jsonrpc": "1.0"}), "jsonrpc"},
		{"error response without error", "JSONRPCErrorResponse", edit(t, errorResponse, map[string]any{"error": nil}), "error"},
		{"error response bad id type", "JSONRPCErrorResponse", edit(t, errorResponse, map[string]any{"id": 1.5}), "id"},
		{"status update missing final", "SendStreamingMessageSuccessResponse",
			edit(t, streamingStatusUpdate, map[string]any{"result": map[string]any{
				"kind": "status-update", "taskId": "t1", "contextId": "c1", "status": map[string]any{"state": "working"},
			}}), "result"},
		{"not an object", "Task", []byte(`[]`), "object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.definition, tt.doc)
			if err == nil {
				t.Fatalf("Check accepted invalid %s: %s", tt.definition, tt.doc)
			}
			if !strings.Contains(err.Error(), tt.wantInError) {
				t.Errorf("error does not mention %q:\n%v", tt.wantInError, err)
			}
			// Validate must fail the test, with the error and the document.
			ft := &fakeTB{}
			Validate(ft, tt.definition, tt.doc)
			if !ft.failed {
				t.Fatal("Validate did not fail the test")
			}
			if !strings.Contains(ft.msg, err.Error()) || !strings.Contains(ft.msg, string(tt.doc)) {
				t.Errorf("failure message lacks the error or the document:\n%s", ft.msg)
			}
		})
	}
}

func TestValidatePassesValid(t *testing.T) {
	ft := &fakeTB{}
	Validate(ft, "Task", []byte(task))
	if ft.failed {
		t.Fatalf("Validate failed a valid Task: %s", ft.msg)
	}
}

func TestCheckErrors(t *testing.T) {
	if err := Check("NoSuchDefinition", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "NoSuchDefinition") {
		t.Errorf("unknown definition: err = %v", err)
	}
	if err := Check("Task", []byte(`{"kind":`)); err == nil || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("malformed JSON: err = %v", err)
	}
	if err := Check("Task", []byte(task+" trailing")); err == nil {
		t.Error("trailing garbage accepted")
	}
}

// TestEveryDefinitionValidates runs every definition of the schema,
// concurrently (under the race detector, this exercises the compile cache).
func TestEveryDefinitionValidates(t *testing.T) {
	defs := schema.Definitions()
	if len(defs) < 50 {
		t.Fatalf("only %d definitions", len(defs))
	}
	var wg sync.WaitGroup
	for _, name := range defs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Check(name, []byte(`null`)); err != nil {
				var ve *jsonschema.ValidationError
				if !errors.As(err, &ve) {
					t.Errorf("%s: %v", name, err)
				}
			}
		}()
	}
	wg.Wait()
}

// fakeTB records failures instead of failing the real test.
type fakeTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.failed = true
	f.msg += fmt.Sprintf(format, args...)
}

func TestValid10Documents(t *testing.T) {
	for _, tt := range []struct{ definition, doc string }{
		{"Task", `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-10-28T10:30:00.000Z"},"artifacts":[{"artifactId":"a","parts":[{"text":"x"}]}]}`},
		{"Stream Response", `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`},
		{"StreamResponse", `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"raw":"AAE=","mediaType":"application/octet-stream"}]}}`},
		{"Part", `{"data":[1,2],"media_type":"application/json"}`},
	} {
		if err := Check10(tt.definition, []byte(tt.doc)); err != nil {
			t.Errorf("%s: %v", tt.definition, err)
		}
	}
	for _, tt := range []struct{ definition, doc string }{
		{"Task", `{"id":"t","kind":"task"}`},
		{"Task Status", `{"state":"working"}`},
		{"Part", `{"raw":"!!"}`},
		{"Task Status", `{"timestamp":"yesterday"}`},
	} {
		if Check10(tt.definition, []byte(tt.doc)) == nil {
			t.Errorf("%s accepted: %s", tt.definition, tt.doc)
		}
	}
	if Check10("NoSuchThing", []byte(`{}`)) == nil {
		t.Error("unknown definition accepted")
	}
}
