package pb_test

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	_ "google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// proto compiles the A2A proto with protobuf-go's compiler: the reference
// the hand-written encoding is checked against.
var protoFile = sync.OnceValues(func() (protoreflect.FileDescriptor, error) {
	c := protocompile.Compiler{Resolver: protocompile.CompositeResolver{
		&protocompile.SourceResolver{ImportPaths: []string{"../../a2aproto"}},
		protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
			fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
			return protocompile.SearchResult{Desc: fd}, err
		}),
	}}
	files, err := c.Compile(context.Background(), "a2a-v1.0.1.proto")
	if err != nil {
		return nil, err
	}
	return files[0], nil
})

func descriptor(t *testing.T, name string) protoreflect.MessageDescriptor {
	t.Helper()
	fd, err := protoFile()
	if err != nil {
		t.Fatal(err)
	}
	md := fd.Messages().ByName(protoreflect.Name(name))
	if md == nil {
		t.Fatalf("no message %s", name)
	}
	return md
}

var when = time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)

func sampleMessage() *a2a.Message {
	return &a2a.Message{MessageID: "m1", Role: a2a.RoleAgent, ContextID: "c1", TaskID: "t1",
		Parts: []a2a.Part{
			{Content: a2a.Text("héllo"), Metadata: map[string]any{"k": "v"}},
			{Content: a2a.Raw{0, 1, 255}, MediaType: "application/octet-stream", Filename: "f.bin"},
			{Content: a2a.URL("https://example.com/x.png"), MediaType: "image/png"},
			{Content: a2a.Data{Value: map[string]any{"n": 1.5, "l": []any{true, nil, "s"}, "o": map[string]any{}}}},
			{Content: a2a.Data{Value: "a bare string"}},
		},
		Metadata:   map[string]any{"big": 123456.0, "nested": map[string]any{"a": []any{1.0, 2.0}}},
		Extensions: []string{"https://ext.example/1"}, ReferenceTaskIDs: []string{"t0", "t-1"}}
}

func sampleTask() *a2a.Task {
	long := strings.Repeat("x", 300) // a length of two bytes
	return &a2a.Task{ID: "t1", ContextID: "c1",
		Status:  a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: sampleMessage(), Timestamp: when},
		History: []a2a.Message{*sampleMessage(), {MessageID: "m2", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart(long)}}},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Name: "n", Description: "d", Parts: []a2a.Part{a2a.NewTextPart("out")},
			Metadata: map[string]any{"x": false}, Extensions: []string{"e"}}},
		Metadata: map[string]any{"m": "v"}}
}

func sampleEvents() []a2a.Event {
	return []a2a.Event{
		sampleTask(),
		&a2a.Task{ID: "t2", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}},
		sampleMessage(),
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: when}, Final: true, Metadata: map[string]any{"a": "b"}},
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c1", Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("chunk")}}, Append: true, LastChunk: true},
	}
}

// numbers compares the numbers of structured values as float64: the
// binary encoding carries doubles, the JSON codec json.Numbers.
var numbers = cmp.Options{
	cmp.FilterValues(func(x, y any) bool { _, okx := number(x); _, oky := number(y); return okx && oky },
		cmp.Comparer(func(x, y any) bool { fx, _ := number(x); fy, _ := number(y); return fx == fy })),
	cmpopts.EquateEmpty(),
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case stdjson.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

// toProtoJSON reads b as message name with protobuf-go and writes it as
// ProtoJSON; an unknown field (a wrong number or wire type) fails t.
func toProtoJSON(t *testing.T, name string, b []byte) []byte {
	t.Helper()
	m := dynamicpb.NewMessage(descriptor(t, name))
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatalf("protobuf-go cannot read our %s: %v", name, err)
	}
	checkNoUnknown(t, name, m)
	j, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func checkNoUnknown(t *testing.T, at string, m protoreflect.Message) {
	t.Helper()
	if len(m.GetUnknown()) > 0 {
		t.Fatalf("%s: fields protobuf-go does not know: %x", at, m.GetUnknown())
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				checkNoUnknown(t, at+"."+string(fd.Name()), v.List().Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				checkNoUnknown(t, at+"."+string(fd.Name()), mv.Message())
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			checkNoUnknown(t, at+"."+string(fd.Name()), v.Message())
		}
		return true
	})
}

// fromProtoJSON reads JSON as message name with protobuf-go and writes
// its binary encoding, as an official SDK's gRPC peer would send it.
func fromProtoJSON(t *testing.T, name string, j []byte) []byte {
	t.Helper()
	m := dynamicpb.NewMessage(descriptor(t, name))
	if err := protojson.Unmarshal(j, m); err != nil {
		t.Fatalf("protobuf-go cannot read %s: %v: %s", name, err, j)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each event written by this package reads back equal, reads in
// protobuf-go as the message the proto declares, and says there what the
// 1.0 JSON codec says; and what protobuf-go writes from the JSON codec's
// output reads here as the same event.
func TestStreamResponseAgainstProtobufGo(t *testing.T) {
	for _, ev := range sampleEvents() {
		b, err := pb.AppendStreamResponse([]byte("prefix"), ev)
		if err != nil {
			t.Fatal(err)
		}
		if string(b[:6]) != "prefix" {
			t.Fatal("dst was not appended to")
		}
		b = b[6:]
		got, err := pb.UnmarshalStreamResponse(b)
		if err != nil {
			t.Fatalf("%T: %v", ev, err)
		}
		if d := cmp.Diff(ev, got, numbers); d != "" {
			t.Errorf("%T round trip (-want +got):\n%s", ev, d)
		}
		viaGo, err := v10.UnmarshalStreamResponse(toProtoJSON(t, "StreamResponse", b))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(ev, viaGo, numbers); d != "" {
			t.Errorf("%T as protobuf-go reads it (-want +got):\n%s", ev, d)
		}
		j, err := v10.AppendStreamResponse(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		fromGo, err := pb.UnmarshalStreamResponse(fromProtoJSON(t, "StreamResponse", j))
		if err != nil {
			t.Fatalf("%T from protobuf-go: %v", ev, err)
		}
		if d := cmp.Diff(ev, fromGo, numbers); d != "" {
			t.Errorf("%T written by protobuf-go (-want +got):\n%s", ev, d)
		}
	}
}

// The requests a client writes read back equal, and in protobuf-go as the
// 1.0 JSON codec reads them.
func TestRequestsAgainstProtobufGo(t *testing.T) {
	zero, five, two := 0, 5, 2
	blocking := false
	send := &a2a.SendMessageRequest{Tenant: "ten", Message: *sampleMessage(), Metadata: map[string]any{"k": 1.0},
		Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}, Blocking: &blocking, HistoryLength: &zero,
			PushNotificationConfig: &a2a.PushNotificationConfig{ID: "p", URL: "https://hook.example/x", Token: "tok",
				Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}, Credentials: "c"}}}}
	send.Message.Role = a2a.RoleUser
	list := &a2a.ListTasksRequest{Tenant: "ten", ContextID: "c", Status: a2a.TaskStateWorking, PageSize: &five, PageToken: "tok",
		HistoryLength: &two, StatusTimestampAfter: when, IncludeArtifacts: true}
	cases := []struct {
		name string
		in   any
		enc  func() ([]byte, error)
		dec  func([]byte) (any, error)
		json func([]byte) (any, error)
	}{
		{"SendMessageRequest", send,
			func() ([]byte, error) { return pb.AppendSendMessageRequest(nil, send) },
			func(b []byte) (any, error) { p, err := pb.DecodeSendMessageRequest(b); return &p, err },
			func(b []byte) (any, error) { p, err := v10.DecodeSendMessageRequest(b); return &p, err }},
		{"ListTasksRequest", list,
			func() ([]byte, error) { return pb.AppendListTasksRequest(nil, list) },
			func(b []byte) (any, error) { p, err := pb.DecodeListTasksRequest(b); return &p, err },
			func(b []byte) (any, error) { p, err := v10.DecodeListTasksRequest(b); return &p, err }},
		{"GetTaskRequest", &a2a.GetTaskRequest{Tenant: "ten", ID: "t1", HistoryLength: &zero},
			func() ([]byte, error) {
				return pb.AppendGetTaskRequest(nil, &a2a.GetTaskRequest{Tenant: "ten", ID: "t1", HistoryLength: &zero})
			},
			func(b []byte) (any, error) { p, err := pb.DecodeGetTaskRequest(b); return &p, err },
			func(b []byte) (any, error) { p, err := v10.DecodeGetTaskRequest(b); return &p, err }},
		{"CancelTaskRequest", &a2a.CancelTaskRequest{Tenant: "ten", ID: "t1", Metadata: map[string]any{"why": "done"}},
			func() ([]byte, error) {
				return pb.AppendCancelTaskRequest(nil, &a2a.CancelTaskRequest{Tenant: "ten", ID: "t1", Metadata: map[string]any{"why": "done"}})
			},
			func(b []byte) (any, error) { p, err := pb.DecodeCancelTaskRequest(b); return &p, err },
			func(b []byte) (any, error) { p, err := v10.DecodeCancelTaskRequest(b); return &p, err }},
		{"GetTaskPushNotificationConfigRequest", &a2a.GetTaskPushNotificationConfigRequest{Tenant: "ten", TaskID: "t1", ID: "p1"},
			func() ([]byte, error) {
				return pb.AppendPushConfigIDRequest(nil, &a2a.GetTaskPushNotificationConfigRequest{Tenant: "ten", TaskID: "t1", ID: "p1"})
			},
			func(b []byte) (any, error) { p, err := pb.DecodePushConfigIDRequest(b); return &p, err },
			func(b []byte) (any, error) {
				p, err := v10.DecodeGetTaskPushNotificationConfigRequest(b)
				return &p, err
			}},
		{"ListTaskPushNotificationConfigsRequest", &a2a.ListTaskPushNotificationConfigsRequest{Tenant: "ten", TaskID: "t1", PageSize: &two, PageToken: "x"},
			func() ([]byte, error) {
				return pb.AppendListTaskPushNotificationConfigsRequest(nil, &a2a.ListTaskPushNotificationConfigsRequest{Tenant: "ten", TaskID: "t1", PageSize: &two, PageToken: "x"})
			},
			func(b []byte) (any, error) {
				p, err := pb.DecodeListTaskPushNotificationConfigsRequest(b)
				return &p, err
			},
			func(b []byte) (any, error) {
				p, err := v10.DecodeListTaskPushNotificationConfigsRequest(b)
				return &p, err
			}},
	}
	sub := &a2a.SubscribeToTaskRequest{Tenant: "ten", ID: "t1"}
	create := &a2a.TaskPushNotificationConfig{Tenant: "ten", TaskID: "t1", PushNotificationConfig: a2a.PushNotificationConfig{ID: "p", URL: "https://h.example/",
		Token: "tok", Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}, Credentials: "c"}}}
	cases = append(cases,
		struct {
			name string
			in   any
			enc  func() ([]byte, error)
			dec  func([]byte) (any, error)
			json func([]byte) (any, error)
		}{"SubscribeToTaskRequest", sub,
			func() ([]byte, error) { return pb.AppendSubscribeToTaskRequest(nil, sub) },
			func(b []byte) (any, error) { p, err := pb.DecodeSubscribeToTaskRequest(b); return &p, err },
			func(b []byte) (any, error) { p, err := v10.DecodeSubscribeToTaskRequest(b); return &p, err }},
		struct {
			name string
			in   any
			enc  func() ([]byte, error)
			dec  func([]byte) (any, error)
			json func([]byte) (any, error)
		}{"TaskPushNotificationConfig", create,
			func() ([]byte, error) { return pb.AppendTaskPushNotificationConfig(nil, create) },
			func(b []byte) (any, error) { p, err := pb.DecodeTaskPushNotificationConfig(b); return &p, err },
			func(b []byte) (any, error) { p, err := v10.DecodeTaskPushNotificationConfig(b); return &p, err }},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := c.enc()
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.dec(b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.in, got, numbers); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
			viaGo, err := c.json(toProtoJSON(t, c.name, b))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.in, viaGo, numbers); d != "" {
				t.Errorf("as protobuf-go reads it (-want +got):\n%s", d)
			}
			// What an official SDK's client sends: protobuf-go's bytes.
			fromGo, err := c.dec(fromProtoJSON(t, c.name, toProtoJSON(t, c.name, b)))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.in, fromGo, numbers); d != "" {
				t.Errorf("written by protobuf-go (-want +got):\n%s", d)
			}
		})
	}
}

// The other results read in protobuf-go as the JSON codec writes them.
func TestResultsAgainstProtobufGo(t *testing.T) {
	list := &a2a.ListTasksResponse{Tasks: []a2a.Task{*sampleTask(), {ID: "t2", Status: a2a.TaskStatus{State: a2a.TaskStateFailed}}},
		NextPageToken: "next", PageSize: 2, TotalSize: 7}
	b, err := pb.AppendListTasksResponse(nil, list, true)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pb.UnmarshalListTasksResponse(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(*list, got, numbers); d != "" {
		t.Errorf("ListTasksResponse (-want +got):\n%s", d)
	}
	viaGo, err := v10.UnmarshalListTasksResponse(toProtoJSON(t, "ListTasksResponse", b))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(*list, viaGo, numbers); d != "" {
		t.Errorf("ListTasksResponse as protobuf-go reads it (-want +got):\n%s", d)
	}

	cfgs := []a2a.TaskPushNotificationConfig{{Tenant: "ten", TaskID: "t1", PushNotificationConfig: a2a.PushNotificationConfig{ID: "p1", URL: "https://h.example/", Token: "t",
		Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Basic"}, Credentials: "x"}}}}
	b, err = pb.AppendListTaskPushNotificationConfigsResponse(nil, cfgs, "n")
	if err != nil {
		t.Fatal(err)
	}
	gotCfgs, next, err := pb.UnmarshalListTaskPushNotificationConfigsResponse(b)
	if err != nil || next != "n" {
		t.Fatal(err, next)
	}
	if d := cmp.Diff(cfgs, gotCfgs); d != "" {
		t.Errorf("configs (-want +got):\n%s", d)
	}
	viaCfgs, viaNext, err := v10.UnmarshalListTaskPushNotificationConfigsResponse(toProtoJSON(t, "ListTaskPushNotificationConfigsResponse", b))
	if err != nil || viaNext != "n" {
		t.Fatal(err, viaNext)
	}
	if d := cmp.Diff(cfgs, viaCfgs); d != "" {
		t.Errorf("configs as protobuf-go reads them (-want +got):\n%s", d)
	}
}

// Bad input is an InvalidParams error naming the field, never a panic.
func TestDecodeErrors(t *testing.T) {
	msg, _ := pb.AppendSendMessageRequest(nil, &a2a.SendMessageRequest{Message: *sampleMessage()})
	for _, c := range []struct {
		name string
		b    []byte
		dec  func([]byte) error
		ptr  string
	}{
		{"no message", nil, func(b []byte) error { _, err := pb.DecodeSendMessageRequest(b); return err }, "/message"},
		{"truncated", msg[:len(msg)-3], func(b []byte) error { _, err := pb.DecodeSendMessageRequest(b); return err }, ""},
		{"no id", []byte{0x0a, 0x01, 'x'}, func(b []byte) error { _, err := pb.DecodeGetTaskRequest(b); return err }, "/id"},
		{"id as varint", []byte{0x10, 0x01}, func(b []byte) error { _, err := pb.DecodeGetTaskRequest(b); return err }, "/id"},
		{"bad UTF-8", []byte{0x12, 0x01, 0xff}, func(b []byte) error { _, err := pb.DecodeGetTaskRequest(b); return err }, "/id"},
		{"negative history", []byte{0x12, 0x01, 'x', 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, func(b []byte) error { _, err := pb.DecodeGetTaskRequest(b); return err }, "/historyLength"},
		{"page size 101", []byte{0x20, 0x65}, func(b []byte) error { _, err := pb.DecodeListTasksRequest(b); return err }, "/pageSize"},
		{"unknown state", []byte{0x18, 0x09}, func(b []byte) error { _, err := pb.DecodeListTasksRequest(b); return err }, "/status"},
		{"tag 0", []byte{0x00}, func(b []byte) error { _, err := pb.DecodeCancelTaskRequest(b); return err }, ""},
		{"group", []byte{0x0b}, func(b []byte) error { _, err := pb.DecodeCancelTaskRequest(b); return err }, ""},
		{"empty stream response", nil, func(b []byte) error { _, err := pb.UnmarshalStreamResponse(b); return err }, ""},
		{"push config without url", []byte{0x1a, 0x01, 't'}, func(b []byte) error { _, err := pb.DecodeTaskPushNotificationConfig(b); return err }, "/url"},
	} {
		err := c.dec(c.b)
		var ae *a2a.Error
		if !errorsAs(err, &ae) || ae.Code != a2a.CodeInvalidParams {
			t.Errorf("%s: %v, want InvalidParams", c.name, err)
			continue
		}
		if c.ptr != "" && !strings.Contains(string(mustJSON(ae.Data)), `"`+c.ptr+`"`) {
			t.Errorf("%s: data %v does not name %s", c.name, ae.Data, c.ptr)
		}
	}
}

// A part nested in a message's status names its place.
func TestDecodeErrorPointer(t *testing.T) {
	task := sampleTask()
	task.History[1].Role = "" // written as ROLE_UNSPECIFIED, which is no role
	b, err := pb.AppendStreamResponse(nil, task)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pb.UnmarshalStreamResponse(b)
	var ae *a2a.Error
	if !errorsAs(err, &ae) || !strings.Contains(string(mustJSON(ae.Data)), `"/task/history/1/role"`) {
		t.Fatalf("%v (%v)", err, ae)
	}
	// Inside a structured value, the pointer is the JSON form's: keys and
	// indexes, not the Struct's and Value's own fields.
	b, err = pb.AppendStreamResponse(nil, &a2a.Message{MessageID: "m", Role: a2a.RoleUser, Metadata: map[string]any{"a/b": []any{"x", "y"}}})
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "y", "\xff", 1))
	_, err = pb.UnmarshalStreamResponse(b)
	if !errorsAs(err, &ae) || !strings.Contains(string(mustJSON(ae.Data)), `"/message/metadata/a~1b/1"`) {
		t.Fatalf("%v (%v)", err, ae)
	}
}

func TestEncodeErrors(t *testing.T) {
	for name, ev := range map[string]a2a.Event{
		"bad UTF-8":  &a2a.Message{MessageID: "m\xff", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("x")}},
		"NaN":        &a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("x")}, Metadata: map[string]any{"n": nan()}},
		"not a num":  &a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("x")}, Metadata: map[string]any{"n": stdjson.Number("x")}},
		"not events": nil,
	} {
		b, err := pb.AppendStreamResponse([]byte("keep"), ev)
		if err == nil || string(b) != "keep" {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	if _, err := pb.AppendSendMessageResponse(nil, &a2a.TaskStatusUpdateEvent{TaskID: "t"}); err == nil {
		t.Error("a status update as a SendMessageResponse")
	}
}

func FuzzUnmarshalStreamResponse(f *testing.F) {
	for _, ev := range sampleEvents() {
		b, _ := pb.AppendStreamResponse(nil, ev)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := pb.UnmarshalStreamResponse(b)
		if err != nil {
			return
		}
		// What was read writes and reads back the same.
		out, err := pb.AppendStreamResponse(nil, ev)
		if err != nil {
			t.Fatalf("what was read does not write: %v", err) // reads refuse bad UTF-8 and NaN
		}
		again, err := pb.UnmarshalStreamResponse(out)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if d := cmp.Diff(ev, again, cmpopts.EquateEmpty(), cmpopts.EquateNaNs()); d != "" {
			t.Fatalf("(-first +second):\n%s", d)
		}
	})
}

func FuzzDecodeSendMessageRequest(f *testing.F) {
	b, _ := pb.AppendSendMessageRequest(nil, &a2a.SendMessageRequest{Message: *sampleMessage()})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = pb.DecodeSendMessageRequest(b)
	})
}

func errorsAs(err error, target **a2a.Error) bool { return errors.As(err, target) }

func mustJSON(v any) []byte {
	b, _ := stdjson.Marshal(v)
	return b
}

func nan() float64 { return math.NaN() }

func sampleCard() *a2a.AgentCard {
	return &a2a.AgentCard{Name: "echo", Description: "says it back", Version: "1.2.3",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "127.0.0.1:8443", Transport: a2a.TransportGRPC, ProtocolVersion: "1.0", Tenant: "echo"},
			{URL: "https://a.example/a2a/echo", Transport: a2a.TransportJSONRPC, ProtocolVersion: "1.0"}},
		Provider:         &a2a.AgentProvider{Organization: "org", URL: "https://org.example"},
		DocumentationURL: "https://doc.example", IconURL: "https://icon.example/i.png",
		Capabilities: a2a.AgentCapabilities{Streaming: true, ExtendedAgentCard: true,
			Extensions: []a2a.AgentExtension{{URI: a2a.ExtensionEventLog, Description: "d", Required: true, Params: map[string]any{"p": "v"}}}},
		SupportsAuthenticatedExtendedCard: true,
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"key":    a2a.APIKeySecurityScheme{Description: "k", In: "header", Name: "X-Key"},
			"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"},
			"oauth": a2a.OAuth2SecurityScheme{Description: "o", OAuth2MetadataURL: "https://as.example/.well-known",
				Flows: a2a.OAuthFlows{AuthorizationCode: &a2a.OAuthFlow{AuthorizationURL: "https://as.example/auth", TokenURL: "https://as.example/token",
					RefreshURL: "https://as.example/refresh", Scopes: map[string]string{"read": "reads", "write": "writes"}}}},
			"cc":   a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{ClientCredentials: &a2a.OAuthFlow{TokenURL: "https://as.example/token", Scopes: map[string]string{"x": "y"}}}},
			"oidc": a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: "https://idp.example/.well-known/openid-configuration"},
			"mtls": a2a.MutualTLSSecurityScheme{Description: "certs"},
		},
		Security:           []map[string][]string{{"oauth": {"read", "write"}, "key": {}}, {"bearer": {}}},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "S", Description: "sd", Tags: []string{"t"}, Examples: []string{"e"},
			InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain"}, Security: []map[string][]string{{"oauth": {"read"}}}}},
		Signatures: []a2a.AgentCardSignature{{Protected: "eyJhbGciOiJFUzI1NiJ9", Signature: "c2ln", Header: map[string]any{"kid": "k1"}}},
	}
}

// The card reads back equal, and in protobuf-go as the 1.0 JSON codec
// reads it; what protobuf-go writes from the JSON codec's card reads here
// the same.
func TestAgentCardAgainstProtobufGo(t *testing.T) {
	card := sampleCard()
	b, err := pb.AppendAgentCard(nil, card)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pb.UnmarshalAgentCard(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(*card, got, numbers); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	viaGo, err := v10.UnmarshalAgentCard(toProtoJSON(t, "AgentCard", b))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(*card, viaGo, numbers); d != "" {
		t.Errorf("as protobuf-go reads it (-want +got):\n%s", d)
	}
	j, err := v10.MarshalAgentCard(card, v10.CardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fromGo, err := pb.UnmarshalAgentCard(fromProtoJSON(t, "AgentCard", j))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(*card, fromGo, numbers); d != "" {
		t.Errorf("written by protobuf-go (-want +got):\n%s", d)
	}
	if _, err := pb.UnmarshalAgentCard([]byte{0x0a, 0x01, 'n'}); err == nil {
		t.Error("a card without version and interfaces")
	}
}

func FuzzUnmarshalAgentCard(f *testing.F) {
	b, _ := pb.AppendAgentCard(nil, sampleCard())
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := pb.UnmarshalAgentCard(b)
		if err != nil {
			return
		}
		if _, err := pb.AppendAgentCard(nil, &c); err != nil {
			t.Fatalf("what was read does not write: %v", err)
		}
	})
}

// The binary encoding beside the 1.0 JSON codec, for a Task and a stream
// frame.
func BenchmarkEncode(b *testing.B) {
	task, status := sampleTask(), sampleEvents()[3]
	for _, bc := range []struct {
		name string
		fn   func([]byte) ([]byte, error)
	}{
		{"Task/pb", func(buf []byte) ([]byte, error) { return pb.AppendStreamResponse(buf, task) }},
		{"Task/v10", func(buf []byte) ([]byte, error) { return v10.AppendStreamResponse(buf, task) }},
		{"StatusUpdate/pb", func(buf []byte) ([]byte, error) { return pb.AppendStreamResponse(buf, status) }},
		{"StatusUpdate/v10", func(buf []byte) ([]byte, error) { return v10.AppendStreamResponse(buf, status) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 8192)
			for b.Loop() {
				var err error
				if buf, err = bc.fn(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	req := &a2a.SendMessageRequest{Message: a2a.Message{MessageID: "9229e770-767c-417b-a0b0-f0741243c589", Role: a2a.RoleUser,
		Parts: []a2a.Part{a2a.NewTextPart("hello, echo agent")}}, Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}}}
	pbReq, _ := pb.AppendSendMessageRequest(nil, req)
	jsonReq, _ := v10.AppendSendMessageRequest(nil, req)
	b.Run("SendMessageRequest/pb", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := pb.DecodeSendMessageRequest(pbReq); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SendMessageRequest/v10", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v10.DecodeSendMessageRequest(jsonReq); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The decoders are as strict as the 1.0 JSON codec's, and merge a message
// field given twice as protobuf does.
func TestDecodeStrict(t *testing.T) {
	for name, c := range map[string]struct {
		b   []byte
		dec func([]byte) error
		ptr string
	}{
		"an empty message":          {[]byte{0x12, 0x00}, func(b []byte) error { _, err := pb.DecodeSendMessageRequest(b); return err }, "/message/messageId"},
		"an empty task":             {[]byte{0x0a, 0x00}, func(b []byte) error { _, err := pb.UnmarshalStreamResponse(b); return err }, "/task/id"},
		"an empty status update":    {[]byte{0x1a, 0x00}, func(b []byte) error { _, err := pb.UnmarshalStreamResponse(b); return err }, "/statusUpdate/taskId"},
		"an artifact without id":    {[]byte{0x22, 0x05, 0x0a, 0x01, 't', 0x1a, 0x00}, func(b []byte) error { _, err := pb.UnmarshalStreamResponse(b); return err }, "/artifactUpdate/artifact/artifactId"},
		"two payloads":              {[]byte{0x12, 0x00, 0x12, 0x00}, func(b []byte) error { _, err := pb.UnmarshalStreamResponse(b); return err }, ""},
		"a push config without url": {[]byte{0x1a, 0x04, 0x12, 0x02, 0x0a, 0x00}, func(b []byte) error { _, err := pb.DecodeSendMessageRequest(append(validMessage(), b...)); return err }, "/configuration/taskPushNotificationConfig/url"},
		"authentication without scheme": {[]byte{0x1a, 0x12, 0x12, 0x10, 0x22, 0x0c, 'h', 't', 't', 'p', 's', ':', '/', '/', 'h', '.', 'x', '/', 0x32, 0x00},
			func(b []byte) error { _, err := pb.DecodeSendMessageRequest(append(validMessage(), b...)); return err }, "/configuration/taskPushNotificationConfig/authentication/scheme"},
		"a part with text and url": {[]byte{0x0a, 0x00, 0x1a, 0x01, 'u'}, func(b []byte) error { _, err := pb.UnmarshalStreamResponse(messageWithPart(b)); return err }, "/message/parts/0"},
		"an empty url":             {[]byte{0x1a, 0x00}, func(b []byte) error { _, err := pb.UnmarshalStreamResponse(messageWithPart(b)); return err }, "/message/parts/0/url"},
	} {
		err := c.dec(c.b)
		var ae *a2a.Error
		if !errorsAs(err, &ae) || ae.Code != a2a.CodeInvalidParams {
			t.Errorf("%s: %v, want InvalidParams", name, err)
			continue
		}
		if c.ptr != "" && !strings.Contains(string(mustJSON(ae.Data)), `"`+c.ptr+`"`) {
			t.Errorf("%s: data %v does not name %s", name, ae.Data, c.ptr)
		}
	}
	// An unknown field is skipped, whatever its wire type.
	if p, err := pb.DecodeSubscribeToTaskRequest([]byte{0x12, 0x01, 't', 0x18, 0x01}); err != nil || p.ID != "t" {
		t.Errorf("unknown field 3: %v %v", p, err)
	}
	// A status given twice merges: the state of the first stays.
	task := []byte{0x0a, 0x01, 't', 0x1a, 0x02, 0x08, 0x02, 0x1a, 0x04, 0x1a, 0x02, 0x08, 0x05}
	ev, err := pb.UnmarshalStreamResponse(append([]byte{0x0a, byte(len(task))}, task...))
	if err != nil {
		t.Fatal(err)
	}
	if st := ev.(*a2a.Task).Status; st.State != a2a.TaskStateWorking || st.Timestamp.Unix() != 5 {
		t.Errorf("merged status: %+v", st)
	}
}

// validMessage is a SendMessageRequest holding a valid message.
func validMessage() []byte {
	b, _ := pb.AppendSendMessageRequest(nil, &a2a.SendMessageRequest{Message: a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("x")}}})
	return b
}

// messageWithPart is a StreamResponse holding a message whose one part is
// the fields part.
func messageWithPart(part []byte) []byte {
	m := append([]byte{0x0a, 0x01, 'm', 0x20, 0x01, 0x2a, byte(len(part))}, part...)
	return append([]byte{0x12, byte(len(m))}, m...)
}

// Deep structured values and long fields (a length of three bytes) read
// back, and as protobuf-go reads them.
func TestDeepAndLong(t *testing.T) {
	var v any = "leaf"
	for range 40 {
		v = map[string]any{"k": []any{v}}
	}
	m := &a2a.Message{MessageID: "m", Role: a2a.RoleAgent, Parts: []a2a.Part{
		{Content: a2a.Data{Value: v}}, a2a.NewTextPart(strings.Repeat("z", 20000))}}
	b, err := pb.AppendStreamResponse(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pb.UnmarshalStreamResponse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a2a.Event(m), got) { // cmp.Diff takes minutes over forty levels
		t.Error("the deep message does not read back equal")
	}
	if _, err := v10.UnmarshalStreamResponse(toProtoJSON(t, "StreamResponse", b)); err != nil {
		t.Fatal(err)
	}
}

func TestEncodeRefusesWhatItCannotRead(t *testing.T) {
	for name, m := range map[string]*a2a.Message{
		"a number that is not JSON": {MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("x")}, Metadata: map[string]any{"n": stdjson.Number("0x1p4")}},
		"a leading plus":            {MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewTextPart("x")}, Metadata: map[string]any{"n": stdjson.Number("+1")}},
	} {
		if _, err := pb.AppendStreamResponse(nil, m); !errors.Is(err, pb.ErrUnsupportedValue) {
			t.Errorf("%s: %v", name, err)
		}
	}
	st := &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}
	if _, err := pb.AppendStreamResponse(nil, st); !errors.Is(err, pb.ErrUnsupportedValue) {
		t.Errorf("year 10000: %v", err)
	}
}

// A stream frame with the event-log extension's sequence number: read
// back by UnmarshalStreamResponseSeq, skipped by UnmarshalStreamResponse
// (as by any decoder of a2a.proto).
func TestEventSeqField(t *testing.T) {
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	b, err := pb.AppendStreamResponseSeq(nil, ev, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	got, seq, err := pb.UnmarshalStreamResponseSeq(b)
	if err != nil || seq != 1<<40 || got.(*a2a.TaskStatusUpdateEvent).TaskID != "t1" {
		t.Fatalf("%#v %d %v", got, seq, err)
	}
	if plain, err := pb.UnmarshalStreamResponse(b); err != nil || plain.(*a2a.TaskStatusUpdateEvent).TaskID != "t1" {
		t.Fatalf("without the field: %#v %v", plain, err)
	}
	without, _ := pb.AppendStreamResponse(nil, ev)
	if _, seq, err := pb.UnmarshalStreamResponseSeq(without); err != nil || seq != 0 {
		t.Fatalf("no field: %d %v", seq, err)
	}
	if _, _, err := pb.UnmarshalStreamResponseSeq(append(without, 0x82, 0x80, 0x80, 0x04, 0x01, 0x00)); err == nil {
		t.Fatal("the field as bytes: no error")
	}
}
