package v03

import (
	stdjson "encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/schematest"
)

func sampleTask() *a2a.Task {
	ts := time.Date(2025, 6, 1, 12, 0, 0, 123e6, time.UTC)
	msg := a2a.Message{MessageID: "m1", Role: a2a.RoleUser, ContextID: "c1", TaskID: "t1",
		Parts: []a2a.Part{
			a2a.Part{Content: a2a.Text("hi"), Metadata: map[string]any{"k": "v"}},
			// Numbers decode as json.Number, their literal text kept.
			a2a.NewDataPart(map[string]any{"n": stdjson.Number("1.5"), "a": []any{true, nil, "x"},
				"big": stdjson.Number("123456789012345678901234567890"), "exact": stdjson.Number("9007199254740993"),
				"huge": stdjson.Number("1e400"), "zeros": []any{stdjson.Number("-0"), stdjson.Number("0.10")}}),
			a2a.Part{Content: a2a.Raw([]byte{0, 1, 2, 255}), MediaType: "application/octet-stream", Filename: "f.bin"},
			a2a.Part{Content: a2a.URL("https://example.com/x.png"), MediaType: "image/png"},
			a2a.NewRawPart([]byte{}),
		}, ReferenceTaskIDs: []string{"t0"}, Extensions: []string{"urn:x"}, Metadata: map[string]any{"m": "d"}}
	return &a2a.Task{ID: "t1", ContextID: "c1",
		Status:    a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: ts, Message: &a2a.Message{MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.NewTextPart("more?")}}},
		History:   []a2a.Message{msg},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Name: "out", Description: "d", Parts: []a2a.Part{a2a.NewTextPart("x")}, Metadata: map[string]any{"z": "y"}}},
		Metadata:  map[string]any{"task": "meta"},
	}
}

func TestEventRoundTripAndSchema(t *testing.T) {
	task := sampleTask()
	events := []struct {
		def string
		ev  a2a.Event
	}{
		{"Task", task},
		{"Message", &task.History[0]},
		{"TaskStatusUpdateEvent", &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: task.Status, Final: true, Metadata: map[string]any{"a": "b"}}},
		{"TaskArtifactUpdateEvent", &a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c1", Artifact: task.Artifacts[0], Append: true, LastChunk: true}},
		{"Task", &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}},
	}
	for _, tt := range events {
		b, err := MarshalEvent(tt.ev)
		if err != nil {
			t.Fatal(err)
		}
		schematest.Validate(t, tt.def, b)
		got, err := UnmarshalEvent(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if diff := cmp.Diff(tt.ev, got); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", tt.def, diff)
		}
	}
}

func TestAgentCardRoundTripAndSchema(t *testing.T) {
	c := a2a.AgentCard{ProtocolVersion: "0.3.0", Name: "n", Description: "d", URL: "http://x/a2a/n", Version: "1",
		PreferredTransport: a2a.TransportJSONRPC, AdditionalInterfaces: []a2a.AgentInterface{{URL: "http://x/a2a/n", Transport: a2a.TransportJSONRPC}},
		Provider:     &a2a.AgentProvider{Organization: "o", URL: "http://o"},
		Capabilities: a2a.AgentCapabilities{Streaming: true, Extensions: []a2a.AgentExtension{{URI: "urn:e", Required: true, Params: map[string]any{"p": "q"}}}},
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer", BearerFormat: "JWT"},
			"key":    a2a.APIKeySecurityScheme{In: "header", Name: "X-API-Key"},
			"oauth":  a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{ClientCredentials: &a2a.OAuthFlow{TokenURL: "http://t", Scopes: map[string]string{"a": "b"}}}},
			"oidc":   a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: "http://o/.well-known/openid-configuration"},
			"mtls":   a2a.MutualTLSSecurityScheme{Description: "m"},
		},
		Security:          []map[string][]string{{"bearer": {}}},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills:     []a2a.AgentSkill{{ID: "s", Name: "s", Description: "d", Tags: []string{"t"}, Examples: []string{"e"}}},
		Signatures: []a2a.AgentCardSignature{{Protected: "p", Signature: "s"}},
	}
	b, err := MarshalAgentCard(&c)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "AgentCard", b)
	got, err := UnmarshalAgentCard(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("card round trip (-want +got):\n%s", diff)
	}
}

const validParams = `{"message":{"kind":"message","messageId":"m","role":"user","contextId":"c","taskId":"t","parts":[{"kind":"text","text":"x"},{"kind":"file","file":{"uri":"http://u","mimeType":"text/plain","name":"n"}},{"kind":"data","data":{"a":1}}],"metadata":{"k":1}},"configuration":{"blocking":false,"historyLength":2,"acceptedOutputModes":["text/plain"]}}`

// TestFieldNamesAreCaseSensitive changes the case of each field name in
// turn: the field must then count as absent (an unknown member), never as
// the real one.
func TestFieldNamesAreCaseSensitive(t *testing.T) {
	want, err := DecodeMessageSendParams([]byte(validParams))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"message", "kind", "messageId", "role", "contextId", "taskId", "parts", "text", "file", "uri", "mimeType", "name", "data", "metadata", "configuration", "blocking", "historyLength", "acceptedOutputModes"} {
		mutated := strings.ReplaceAll(validParams, `"`+name+`":`, `"`+swapCase(name)+`":`)
		got, err := DecodeMessageSendParams([]byte(mutated))
		if err == nil && cmp.Equal(want, got) {
			t.Errorf("field %q matched case-insensitively", name)
		}
	}
}

func swapCase(s string) string {
	r := []rune(s)
	for i, c := range r {
		if unicode.IsUpper(c) {
			r[i] = unicode.ToLower(c)
		} else {
			r[i] = unicode.ToUpper(c)
		}
	}
	return string(r)
}

// FuzzDecodeMessageSendParams: decoding never panics; errors are -32602
// naming a field; what decodes re-encodes to a schema-valid document that
// decodes to the same value.
func FuzzDecodeMessageSendParams(f *testing.F) {
	f.Add([]byte(validParams))
	f.Add([]byte(`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"AAE="}}]}}`))
	f.Add([]byte(`{"message":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"data","data":{}}]},"configuration":{"pushNotificationConfig":{"url":"http://x","authentication":{"schemes":["Bearer"]}}}}`))
	f.Add([]byte(`{"message":{"KIND":"message"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := DecodeMessageSendParams(raw)
		if err != nil {
			var ae *a2a.Error
			if !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams {
				t.Fatalf("error %v is not -32602", err)
			}
			return
		}
		b, err := EncodeMessageSendParams(&p)
		if err != nil {
			t.Fatal(err)
		}
		if err := schematest.Check("MessageSendParams", b); err != nil {
			t.Fatalf("re-encoded params invalid: %v\n%s", err, b)
		}
		p2, err := DecodeMessageSendParams(b)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, b)
		}
		if diff := cmp.Diff(p, p2, cmpopts.EquateEmpty()); diff != "" { // {} metadata == absent
			t.Fatalf("round trip differs:\n%s", diff)
		}
	})
}

// FuzzUnmarshalEvent: never panics; decoded events re-encode to schema-valid JSON.
func FuzzUnmarshalEvent(f *testing.F) {
	for _, ev := range []a2a.Event{sampleTask(), &sampleTask().History[0]} {
		b, _ := MarshalEvent(ev)
		f.Add(b)
	}
	f.Add([]byte(`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false}`))
	f.Add([]byte(`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := UnmarshalEvent(raw)
		if err != nil {
			return
		}
		b, err := MarshalEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := UnmarshalEvent(b); err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
	})
}

// FuzzCheckEvent: a2a.ValidateEvent accepts exactly what round-trips: whatever it
// accepts, once encoded, decodes.
func FuzzCheckEvent(f *testing.F) {
	b, _ := MarshalEvent(sampleTask())
	f.Add(b)
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := UnmarshalEvent(raw)
		if err != nil {
			return
		}
		if err := a2a.ValidateEvent(ev); err != nil {
			t.Fatalf("decoded event fails a2a.ValidateEvent: %v", err)
		}
	})
}

func TestCheckEventRefuses(t *testing.T) {
	for name, ev := range map[string]a2a.Event{
		"task without context": &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
		"bad state":            &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskState(99)}},
		"message without id":   &a2a.Message{Role: a2a.RoleUser},
		"message without role": &a2a.Message{MessageID: "m"},
		"artifact without id":  &a2a.TaskArtifactUpdateEvent{TaskID: "t"},
		"status without task":  &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
	} {
		if a2a.ValidateEvent(ev) == nil {
			t.Errorf("%s accepted", name)
			continue
		}
		b, err := MarshalEvent(ev)
		if err == nil {
			if _, err := UnmarshalEvent(b); err == nil {
				t.Errorf("%s: refused by a2a.ValidateEvent but decodes", name)
			}
		}
	}
}

// A 1.0 data value that is not an object crosses the 0.3 edge wrapped as
// {"value": …} with the data_part_compat mark, and comes back unwrapped;
// an object is written as it is.
func TestDataPartCompat(t *testing.T) {
	for _, data := range []any{"text", []any{stdjson.Number("1"), "x"}, stdjson.Number("42"), true, nil, map[string]any{"k": "v"}} {
		msg := &a2a.Message{MessageID: "m", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.Part{Content: a2a.Data{Value: data}, Metadata: map[string]any{"own": "x"}}}}
		b, err := MarshalEvent(msg)
		if err != nil {
			t.Fatal(err)
		}
		var generic map[string]any
		if err := stdjson.Unmarshal(b, &generic); err != nil {
			t.Fatal(err)
		}
		part := generic["parts"].([]any)[0].(map[string]any)
		if _, isObject := data.(map[string]any); isObject || data == nil {
			if part["metadata"].(map[string]any)[DataPartCompatKey] != nil {
				t.Errorf("%v: object data marked as wrapped: %s", data, b)
			}
		} else if part["metadata"].(map[string]any)[DataPartCompatKey] != true {
			t.Errorf("%v: wrapped data not marked: %s", data, b)
		}
		ev, err := UnmarshalEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		got := ev.(*a2a.Message).Parts[0]
		want := data
		if want == nil {
			want = map[string]any{}
		}
		if _, ok := got.Content.(a2a.Data); !ok || !reflect.DeepEqual(got.Data(), want) || !reflect.DeepEqual(got.Metadata, map[string]any{"own": "x"}) {
			t.Errorf("round trip of %#v: got %#v, metadata %v (wire %s)", data, got.Data(), got.Metadata, b)
		}
	}
}
