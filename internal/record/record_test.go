package record

import (
	"bytes"
	"encoding/binary"
	stdjson "encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v03"
)

var cmpOpts = cmp.Options{cmpopts.EquateEmpty(), cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })}

var bigNumbers = map[string]any{
	"big":    stdjson.Number("123456789012345678901234567890"),
	"beyond": stdjson.Number("9007199254740993"),
	"tiny":   stdjson.Number("-1.5e-300"),
	"huge":   stdjson.Number("1E400"),
	"zero":   stdjson.Number("-0"),
}

// richMessage uses every field of a message and every kind of part with
// every field, the 1.0-only ones included.
func richMessage(id string, role a2a.Role) a2a.Message {
	return a2a.Message{
		MessageID: id, Role: role, ContextID: "ctx ✓", TaskID: "task-1",
		ReferenceTaskIDs: []string{"ref-1", "ref-2"}, Extensions: []string{"https://example.com/ext"},
		Metadata: map[string]any{"s": "x", "n": stdjson.Number("1.5"), "b": true, "f": false, "nil": nil,
			"list": []any{"a", stdjson.Number("2"), map[string]any{"k": "v"}, []any{}}, "obj": map[string]any{"deep": map[string]any{"er": []any{nil}}}, "": "empty key"},
		Parts: []a2a.Part{
			a2a.Part{Content: a2a.Text("hello ✓ \"quoted\" \\ \n\x00\u2028 😀"), MediaType: "text/markdown", Filename: "hello.md", Metadata: map[string]any{"lang": "en"}},
			a2a.NewTextPart(""),
			a2a.Part{Content: a2a.Raw([]byte{0, 1, 2, 0xff}), MediaType: "application/octet-stream", Filename: "a.bin", Metadata: bigNumbers},
			a2a.NewRawPart([]byte{}),
			a2a.Part{Content: a2a.URL("https://example.com/b.txt"), MediaType: "text/plain", Filename: "b.txt"},
			a2a.Part{Content: a2a.Raw(nil)},
			a2a.Part{Content: a2a.Data{Value: map[string]any{"answer": stdjson.Number("42"), "nested": []any{true, nil}, "big": bigNumbers}}, MediaType: "application/json", Filename: "d.json", Metadata: map[string]any{"m": "d"}},
			a2a.NewDataPart([]any{stdjson.Number("1"), "two", nil}),
			a2a.NewDataPart("just a string"),
			a2a.NewDataPart(stdjson.Number("123456789012345678901234567890")),
			a2a.NewDataPart(true),
			a2a.NewDataPart(nil),
			a2a.NewDataPart(map[string]any{}),
		},
	}
}

func richArtifact(id string) a2a.Artifact {
	return a2a.Artifact{ArtifactID: id, Name: "result", Description: "the result", Extensions: []string{"e1", "e2"},
		Metadata: map[string]any{"k": "v", "n": stdjson.Number("7")},
		Parts:    []a2a.Part{a2a.Part{Content: a2a.Text("chunk"), MediaType: "text/csv"}, a2a.NewDataPart(map[string]any{"x": "y"}), a2a.NewURLPart("u")}}
}

func richTask() *a2a.Task {
	agent := richMessage("m-agent", a2a.RoleAgent)
	return &a2a.Task{
		ID: "task-1", ContextID: "ctx ✓",
		Status:    a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: &agent, Timestamp: time.Date(2026, 11, 25, 6, 37, 6, 123456789, time.UTC)},
		History:   []a2a.Message{richMessage("m-user", a2a.RoleUser), agent},
		Artifacts: []a2a.Artifact{richArtifact("art-1"), {ArtifactID: "art-2", Parts: []a2a.Part{}}},
		Metadata:  bigNumbers,
	}
}

// richEvents are events of the four kinds using every field.
func richEvents() []a2a.Event {
	m := richMessage("m-1", a2a.RoleUser)
	return []a2a.Event{
		richTask(),
		&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}},
		&m,
		&a2a.Message{MessageID: "m", Role: a2a.RoleAgent, Parts: []a2a.Part{}},
		&a2a.TaskStatusUpdateEvent{TaskID: "task-1", ContextID: "ctx", Final: true, Metadata: map[string]any{"why": "because"},
			Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: &m, Timestamp: time.Date(1970, 1, 1, 0, 0, 0, 1, time.UTC)}},
		&a2a.TaskStatusUpdateEvent{TaskID: "task-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC)}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "task-1", ContextID: "ctx", Artifact: richArtifact("art-1"), Append: true, LastChunk: true, Metadata: bigNumbers},
		&a2a.TaskArtifactUpdateEvent{TaskID: "task-1", Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.NewTextPart("x")}}, Append: true},
		&a2a.TaskArtifactUpdateEvent{TaskID: "task-1", Artifact: a2a.Artifact{ArtifactID: "a"}, LastChunk: true},
	}
}

func mustMarshal(t testing.TB, e a2a.Event) []byte {
	t.Helper()
	b, err := MarshalEvent(e)
	if err != nil {
		t.Fatalf("MarshalEvent(%T): %v", e, err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	for i, e := range richEvents() {
		if err := CheckEvent(e); err != nil {
			t.Errorf("event %d: CheckEvent: %v", i, err)
		}
		b := mustMarshal(t, e)
		if b[0] != Version {
			t.Errorf("event %d: version byte %d", i, b[0])
		}
		got, err := UnmarshalEvent(b)
		if err != nil {
			t.Fatalf("event %d (%T): UnmarshalEvent: %v", i, e, err)
		}
		if diff := cmp.Diff(e, got, cmpOpts); diff != "" {
			t.Errorf("event %d (%T) round trip (-want +got):\n%s", i, e, diff)
		}
		if again := mustMarshal(t, got); !bytes.Equal(again, b) {
			t.Errorf("event %d: re-encoding differs:\n%x\n%x", i, b, again)
		}
		// What any wire codec makes of it is unchanged.
		w1, err1 := v03.MarshalEvent(e)
		w2, err2 := v03.MarshalEvent(got)
		if err1 != nil || err2 != nil || !bytes.Equal(w1, w2) {
			t.Errorf("event %d: 0.3 JSON before and after: %s (%v) / %s (%v)", i, w1, err1, w2, err2)
		}
		// Appending keeps what dst held.
		out, err := AppendEvent([]byte("prefix"), e)
		if err != nil || !bytes.Equal(out, append([]byte("prefix"), b...)) {
			t.Errorf("event %d: AppendEvent = %q, %v", i, out, err)
		}
	}
}

// TestRoundTripExact checks what EquateEmpty would hide: bytes nil or
// not, parts never nil, timestamps to the nanosecond, in UTC.
func TestRoundTripExact(t *testing.T) {
	task := richTask()
	got, err := UnmarshalTask(mustMarshal(t, task))
	if err != nil {
		t.Fatal(err)
	}
	parts := got.History[0].Parts
	if f, ok := parts[2].Content.(a2a.Raw); !ok || !bytes.Equal(f, []byte{0, 1, 2, 0xff}) {
		t.Errorf("bytes part: %#v", parts[2])
	}
	if f, ok := parts[3].Content.(a2a.Raw); !ok || f == nil || len(f) != 0 {
		t.Errorf("empty bytes part came back as %#v", parts[3].Content)
	}
	if f, ok := parts[4].Content.(a2a.URL); !ok || f != "https://example.com/b.txt" {
		t.Errorf("uri part: %#v", parts[4])
	}
	if f, ok := parts[5].Content.(a2a.Raw); !ok || len(f) != 0 {
		t.Errorf("empty file part: %#v", parts[5])
	}
	if p := parts[0]; p.MediaType != "text/markdown" || p.Filename != "hello.md" {
		t.Errorf("text part lost its media type or filename: %#v", p)
	}
	if d := parts[11].Content.(a2a.Data); d.Value != nil {
		t.Errorf("null data came back as %#v", d.Value)
	}
	if d := parts[12].Content.(a2a.Data); d.Value == nil {
		t.Errorf("empty object data came back as nil")
	}
	if got.Artifacts[1].Parts == nil {
		t.Error("empty parts came back nil")
	}
	if ts := got.Status.Timestamp; ts != task.Status.Timestamp || ts.Location() != time.UTC {
		t.Errorf("timestamp %v, want %v", ts, task.Status.Timestamp)
	}
	if n := got.Metadata["big"]; n != stdjson.Number("123456789012345678901234567890") {
		t.Errorf("big number came back as %#v", n)
	}
	// The decoded values do not alias the input.
	b := mustMarshal(t, task)
	got2, _ := UnmarshalTask(b)
	for i := range b {
		b[i] = 0
	}
	if diff := cmp.Diff(task, &got2, cmpOpts); diff != "" {
		t.Errorf("decoded task changed with its input (-want +got):\n%s", diff)
	}
}

// TestGoValues: values outside the JSON data model are stored as the
// JSON they stand for and read back in the JSON data model.
func TestGoValues(t *testing.T) {
	type point struct {
		X, Y int
		Z    *int `json:",omitempty"`
	}
	in := map[string]any{
		"f64": 1.5, "f64e": 1e21, "f64small": 1e-7, "f32": float32(0.1), "int": 3, "int64": int64(-1 << 62), "int32": int32(-5),
		"int16": int16(7), "int8": int8(-8), "uint": uint(9), "uint64": uint64(1<<64 - 1), "uint32": uint32(10), "uint16": uint16(11), "uint8": uint8(12),
		"strings": []string{"a", "b"}, "struct": point{X: 1, Y: 2}, "smap": map[string]string{"b": "2", "a": "1"}, "ptr": &point{X: 3},
		"numbers": map[string]stdjson.Number{"n": "123456789012345678901234567890"},
	}
	want := map[string]any{
		"f64": stdjson.Number("1.5"), "f64e": stdjson.Number("1e+21"), "f64small": stdjson.Number("1e-7"), "f32": stdjson.Number("0.1"),
		"int": stdjson.Number("3"), "int64": stdjson.Number("-4611686018427387904"), "int32": stdjson.Number("-5"), "int16": stdjson.Number("7"),
		"int8": stdjson.Number("-8"), "uint": stdjson.Number("9"), "uint64": stdjson.Number("18446744073709551615"), "uint32": stdjson.Number("10"),
		"uint16": stdjson.Number("11"), "uint8": stdjson.Number("12"),
		"strings": []any{"a", "b"}, "struct": map[string]any{"X": stdjson.Number("1"), "Y": stdjson.Number("2")},
		"smap": map[string]any{"a": "1", "b": "2"}, "ptr": map[string]any{"X": stdjson.Number("3"), "Y": stdjson.Number("0")},
		"numbers": map[string]any{"n": stdjson.Number("123456789012345678901234567890")},
	}
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}, Metadata: in}
	got, err := UnmarshalEvent(mustMarshal(t, ev))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.(*a2a.TaskStatusUpdateEvent).Metadata); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The 0.3 JSON of both is the same: the record keeps what JSON keeps.
	w1, _ := v03.MarshalEvent(ev)
	w2, _ := v03.MarshalEvent(got)
	if !bytes.Equal(w1, w2) {
		t.Errorf("0.3 JSON differs:\n%s\n%s", w1, w2)
	}
	// Data may hold them too.
	p := &a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.NewDataPart(2.5), a2a.NewDataPart([]string{"x"}), a2a.NewTextPart("ptr"), a2a.NewURLPart("u")}}
	got, err = UnmarshalEvent(mustMarshal(t, p))
	if err != nil {
		t.Fatal(err)
	}
	wantParts := []a2a.Part{a2a.NewDataPart(stdjson.Number("2.5")), a2a.NewDataPart([]any{"x"}), a2a.NewTextPart("ptr"), a2a.NewURLPart("u")}
	if diff := cmp.Diff(wantParts, got.(*a2a.Message).Parts, cmpOpts); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
}

func TestEncodeErrors(t *testing.T) {
	status := func(meta map[string]any) a2a.Event {
		return &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}, Metadata: meta}
	}
	deep := any(nil)
	for range maxDepth + 1 {
		deep = []any{deep}
	}
	okDeep := any(nil)
	for range maxDepth - 1 {
		okDeep = []any{okDeep}
	}
	for name, e := range map[string]a2a.Event{
		"nil event":     nil,
		"nil task":      (*a2a.Task)(nil),
		"nil message":   (*a2a.Message)(nil),
		"nil status":    (*a2a.TaskStatusUpdateEvent)(nil),
		"nil artifact":  (*a2a.TaskArtifactUpdateEvent)(nil),
		"NaN":           status(map[string]any{"x": math.NaN()}),
		"Inf in array":  status(map[string]any{"x": []any{math.Inf(1)}}),
		"float32 Inf":   status(map[string]any{"x": float32(math.Inf(-1))}),
		"bad number":    status(map[string]any{"x": stdjson.Number("1.")}),
		"empty number":  status(map[string]any{"x": stdjson.Number("")}),
		"chan":          status(map[string]any{"x": make(chan int)}),
		"func in map":   status(map[string]any{"x": map[string]any{"f": func() {}}}),
		"invalid UTF-8": status(map[string]any{"x": "\xff"}),
		"invalid key":   status(map[string]any{"\xfe": "x"}),
		"too deep":      status(map[string]any{"x": deep}),
		"task id":       &a2a.Task{ID: "\xff", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
		"text":          &a2a.Message{MessageID: "m", Parts: []a2a.Part{a2a.NewTextPart("a\xffb")}},
		"nil part":      &a2a.Message{MessageID: "m", Parts: []a2a.Part{{}}},
		"metadata only": &a2a.Message{MessageID: "m", Parts: []a2a.Part{{Metadata: map[string]any{"k": "v"}}}},
		"year 10000":    &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		"year 0":        &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC)}},
	} {
		if b, err := AppendEvent([]byte("x"), e); err == nil {
			t.Errorf("%s: encoded as %x", name, b)
		} else if string(b) != "x" {
			t.Errorf("%s: dst changed to %q on error", name, b)
		}
	}
	if _, err := MarshalEvent(status(map[string]any{"x": okDeep})); err != nil {
		t.Errorf("nesting of %d levels: %v", maxDepth, err)
	}
	if _, err := MarshalPushConfig(&a2a.PushNotificationConfig{URL: "\xff"}); err == nil {
		t.Error("push config with invalid UTF-8 encoded")
	}
}

func TestCheckEvent(t *testing.T) {
	good := a2a.TaskStatus{State: a2a.TaskStateWorking}
	for name, e := range map[string]a2a.Event{
		"no task id":         &a2a.Task{ContextID: "c", Status: good},
		"no context id":      &a2a.Task{ID: "t", Status: good},
		"bad state":          &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskState(42)}},
		"history message":    &a2a.Task{ID: "t", ContextID: "c", Status: good, History: []a2a.Message{{Role: a2a.RoleUser}}},
		"artifact id":        &a2a.Task{ID: "t", ContextID: "c", Status: good, Artifacts: []a2a.Artifact{{}}},
		"no message id":      &a2a.Message{Role: a2a.RoleUser},
		"bad role":           &a2a.Message{MessageID: "m", Role: "system"},
		"nil part":           &a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{{}}},
		"status no task id":  &a2a.TaskStatusUpdateEvent{Status: good},
		"status message":     &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: &a2a.Message{}}},
		"artifact no taskid": &a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{ArtifactID: "a"}},
		"artifact no id":     &a2a.TaskArtifactUpdateEvent{TaskID: "t"},
		"nil":                nil,
		"nil task":           (*a2a.Task)(nil),
	} {
		if err := CheckEvent(e); err == nil {
			t.Errorf("%s: CheckEvent succeeded", name)
		}
	}
}

func TestPushConfig(t *testing.T) {
	for _, c := range []a2a.PushNotificationConfig{
		{},
		{ID: "c1", URL: "https://hooks.example.com/a2a", Token: "tok ✓"},
		{ID: "c2", URL: "https://x", Authentication: &a2a.AuthenticationInfo{}},
		{ID: "c3", URL: "https://x", Token: "t", Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Basic", "Bearer"}, Credentials: "secret"}},
		{ID: "c4", URL: "https://x", Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}, Credentials: "c"}, ProtocolVersion: "1.0"},
	} {
		b, err := MarshalPushConfig(&c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalPushConfig(b)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c, got, cmpOpts); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if again, _ := MarshalPushConfig(&got); !bytes.Equal(again, b) {
			t.Errorf("re-encoding differs")
		}
		if _, err := UnmarshalEvent(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("push config decoded as an event: %v", err)
		}
		for n := range len(b) {
			if _, err := UnmarshalPushConfig(b[:n]); err == nil {
				t.Errorf("truncated push config (%d of %d bytes) decoded", n, len(b))
			}
		}
	}
	b := mustMarshal(t, richTask())
	if _, err := UnmarshalPushConfig(b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("task decoded as a push config: %v", err)
	}
}

// TestDecodeGarbage: every truncation, every single-byte change and
// arbitrary bytes give an error (or, for a change, another valid record
// that re-encodes to itself), never a panic.
func TestDecodeGarbage(t *testing.T) {
	for i, e := range richEvents() {
		b := mustMarshal(t, e)
		for n := range len(b) {
			if _, err := UnmarshalEvent(b[:n]); !errors.Is(err, ErrCorrupt) {
				t.Errorf("event %d truncated to %d of %d bytes: %v", i, n, len(b), err)
			}
		}
		if _, err := UnmarshalEvent(append(bytes.Clone(b), 0)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("event %d with a trailing byte: %v", i, err)
		}
		c := bytes.Clone(b)
		for k := range c {
			for _, x := range []byte{0, 1, 2, 0x7f, 0x80, 0xff, c[k] + 1, c[k] - 1} {
				old := c[k]
				c[k] = x
				checkDecode(t, c, false)
				c[k] = old
			}
		}
	}
	for _, b := range [][]byte{
		nil, {}, {1}, {0, 1}, {2, 1}, {1, 0}, {1, 9},
		{1, KindPushConfig, 0, 0, 0, 0},
		{1, KindMessage, 0x80, 0x00}, // non-minimal varint
		{1, KindMessage, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // overlong varint
		{1, KindMessage, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},       // count beyond the end
	} {
		if _, err := UnmarshalEvent(b); err == nil {
			t.Errorf("UnmarshalEvent(%x) succeeded", b)
		}
	}
	if _, err := UnmarshalEvent([]byte{2, KindTask}); !errors.Is(err, ErrVersion) {
		t.Errorf("version 2: %v, want ErrVersion", err)
	}
	if _, err := UnmarshalTask(mustMarshal(t, &a2a.Message{MessageID: "m", Role: a2a.RoleUser})); !errors.Is(err, ErrCorrupt) {
		t.Errorf("UnmarshalTask of a message: %v", err)
	}
	// Keys out of order, a duplicate key, a bad bool, a bad number, bad
	// UTF-8, a zero timestamp written out, nesting too deep.
	status := []byte{1, KindStatusUpdate, 1, 't', 0, 7, 'w', 'o', 'r', 'k', 'i', 'n', 'g', 0}
	for name, tail := range map[string][]byte{
		"ok":              {0, 0},
		"keys order":      {0, 2, 1, 'b', 0, 1, 'a', 0},
		"duplicate key":   {0, 2, 1, 'a', 0, 1, 'a', 0},
		"bool":            {2, 0},
		"number":          {0, 1, 1, 'n', tagNumber, 2, '0', '1'},
		"utf8":            {0, 1, 1, 0xff, 0},
		"value tag":       {0, 1, 1, 'a', 7},
		"object in order": {0, 1, 1, 'a', tagObject, 2, 1, 'a', 0, 1, 'b', 0},
		"object disorder": {0, 1, 1, 'a', tagObject, 2, 1, 'b', 0, 1, 'a', 0},
	} {
		_, err := UnmarshalEvent(append(bytes.Clone(status), tail...))
		if ok := strings.HasSuffix(name, "ok") || strings.HasSuffix(name, "in order"); ok != (err == nil) {
			t.Errorf("%s: %v", name, err)
		}
	}
	zero := []byte{1, KindStatusUpdate, 1, 't', 0, 7, 'w', 'o', 'r', 'k', 'i', 'n', 'g', statusTimestamp}
	zero = binary.AppendVarint(zero, minUnix)
	if _, err := UnmarshalEvent(append(zero, 0, 0, 0)); err == nil {
		t.Error("a written-out zero timestamp decoded")
	}
	deep := append(bytes.Clone(status), 0, 1, 1, 'a')
	for range maxDepth + 1 {
		deep = append(deep, tagArray, 1)
	}
	deep = append(deep, tagNull)
	if _, err := UnmarshalEvent(deep); err == nil {
		t.Error("nesting beyond the limit decoded")
	}
}

// checkDecode decodes b: it must fail with ErrCorrupt or give a record
// that re-encodes to b (and, with deep, decodes again to the same value).
func checkDecode(t testing.TB, b []byte, deep bool) {
	t.Helper()
	e, err := UnmarshalEvent(b)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
			t.Fatalf("UnmarshalEvent(%x): error %v wraps neither ErrCorrupt nor ErrVersion", b, err)
		}
		return
	}
	again, err := MarshalEvent(e)
	if err != nil {
		t.Fatalf("UnmarshalEvent(%x) = %#v, which does not encode: %v", b, e, err)
	}
	if !bytes.Equal(again, b) {
		// A file part as earlier encoders wrote some (neither bytes
		// nor uri, or both) re-encodes as its Raw part, and that
		// encoding is the record's fixed point.
		e2, err := UnmarshalEvent(again)
		if !hasRawPart(e) || err != nil || !cmp.Equal(e, e2, cmpOpts) {
			t.Fatalf("UnmarshalEvent(%x) re-encodes as %x", b, again)
		}
		if again2, err := MarshalEvent(e2); err != nil || !bytes.Equal(again2, again) {
			t.Fatalf("UnmarshalEvent(%x) re-encodes as %x, and that as %x", b, again, again2)
		}
	}
	if !deep {
		return
	}
	e2, err := UnmarshalEvent(again)
	if err != nil || !cmp.Equal(e, e2, cmpOpts) {
		t.Fatalf("second decoding of %x differs: %v", b, err)
	}
}

// hasRawPart reports whether e holds a Raw part.
func hasRawPart(e a2a.Event) bool {
	raw := func(ps []a2a.Part) bool {
		for _, p := range ps {
			if _, ok := p.Content.(a2a.Raw); ok {
				return true
			}
		}
		return false
	}
	msg := func(m *a2a.Message) bool { return m != nil && raw(m.Parts) }
	switch e := e.(type) {
	case *a2a.Task:
		if msg(e.Status.Message) {
			return true
		}
		for i := range e.History {
			if msg(&e.History[i]) {
				return true
			}
		}
		for _, a := range e.Artifacts {
			if raw(a.Parts) {
				return true
			}
		}
	case *a2a.Message:
		return msg(e)
	case *a2a.TaskStatusUpdateEvent:
		return msg(e.Status.Message)
	case *a2a.TaskArtifactUpdateEvent:
		return raw(e.Artifact.Parts)
	}
	return false
}

// TestEarlierFileParts: a file part with neither bytes nor uri, or with
// both, as earlier encoders wrote some, reads back as a Raw part.
func TestEarlierFileParts(t *testing.T) {
	record := func(file ...byte) []byte {
		b := []byte{Version, KindMessage, 1, 'm', 4, 'u', 's', 'e', 'r', 1, partFile, 1, 'f', 1, 't'}
		b = append(b, file...)
		return append(b, 0, 0, 0, 0, 0, 0)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want a2a.Raw
	}{
		{"neither", record(0, 0), a2a.Raw{}},
		{"both", record(1, 2, 0xab, 0xcd, 1, 'u'), a2a.Raw{0xab, 0xcd}},
	} {
		e, err := UnmarshalEvent(c.b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := &a2a.Message{MessageID: "m", Role: a2a.RoleUser,
			Parts: []a2a.Part{{Content: c.want, Filename: "f", MediaType: "t"}}}
		if diff := cmp.Diff(want, e); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
		checkDecode(t, c.b, true)
	}
}

// FuzzRecordRoundTrip decodes arbitrary bytes: an error, never a panic,
// or a record that re-encodes to the same bytes.
func FuzzRecordRoundTrip(f *testing.F) {
	for _, e := range richEvents() {
		b, _ := MarshalEvent(e)
		f.Add(b)
	}
	c, _ := MarshalPushConfig(&a2a.PushNotificationConfig{ID: "c", URL: "u", Authentication: &a2a.AuthenticationInfo{Schemes: []string{"s"}}})
	f.Add(c)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b, true)
		if p, err := UnmarshalPushConfig(b); err == nil {
			if again, err := MarshalPushConfig(&p); err != nil || !bytes.Equal(again, b) {
				t.Fatalf("push config %x re-encodes as %x, %v", b, again, err)
			}
		}
	})
}

// FuzzRecordVsV03 is a differential test against the A2A 0.3 codec: an
// event built from the fuzzer's strings and numbers encodes as a record
// exactly when it encodes as 0.3 JSON (both refuse invalid UTF-8 and
// values that are not JSON), and when it does, the record reads back as
// the event, with the same 0.3 JSON byte for byte.
func FuzzRecordVsV03(f *testing.F) {
	f.Add("hello", "text/plain", []byte{0, 1, 2}, "123456789012345678901234567890", 1.5, int64(42), true, int64(1764050226123456789))
	f.Add("\xff", "", []byte(nil), "1.", math.NaN(), int64(-1), false, int64(0))
	f.Add("a\"b\\c\n\u2028", "k\x00", []byte{}, "-0.0e+00", math.Inf(1), int64(math.MinInt64), true, int64(-1))
	f.Fuzz(func(t *testing.T, s, key string, raw []byte, number string, fl float64, n int64, flag bool, ns int64) {
		meta := map[string]any{key: s, "n": stdjson.Number(number), "f": fl, "i": n, "b": flag, "list": []any{s, nil, map[string]any{key: []any{}}}}
		var ts time.Time
		if flag {
			ts = time.Unix(0, ns).UTC()
		}
		msg := a2a.Message{MessageID: s, Role: a2a.RoleAgent, ContextID: key, TaskID: s, ReferenceTaskIDs: []string{s, key}, Extensions: []string{key}, Metadata: meta,
			Parts: []a2a.Part{a2a.Part{Content: a2a.Text(s), Metadata: meta}, a2a.Part{Content: a2a.Raw(raw), MediaType: key, Filename: s}, a2a.NewURLPart(s),
				a2a.Part{Content: a2a.Data{Value: meta}, Metadata: meta}}}
		art := a2a.Artifact{ArtifactID: s, Name: key, Description: s, Parts: msg.Parts, Extensions: []string{s}, Metadata: meta}
		for _, e := range []a2a.Event{
			&a2a.Task{ID: s, ContextID: key, Status: a2a.TaskStatus{State: a2a.TaskState(len(key) % 9), Message: &msg, Timestamp: ts}, History: []a2a.Message{msg, msg}, Artifacts: []a2a.Artifact{art}, Metadata: meta},
			&msg,
			&a2a.TaskStatusUpdateEvent{TaskID: s, ContextID: key, Status: a2a.TaskStatus{State: a2a.TaskState(len(s) % 9), Timestamp: ts}, Final: flag, Metadata: meta},
			&a2a.TaskArtifactUpdateEvent{TaskID: key, ContextID: s, Artifact: art, Append: flag, LastChunk: !flag, Metadata: meta},
		} {
			rec, errRec := MarshalEvent(e)
			wire, errWire := v03.MarshalEvent(e)
			if (errRec == nil) != (errWire == nil) {
				t.Fatalf("%T: record error %v, 0.3 error %v", e, errRec, errWire)
			}
			if errRec != nil {
				continue
			}
			got, err := UnmarshalEvent(rec)
			if err != nil {
				t.Fatalf("%T: %v", e, err)
			}
			wire2, err := v03.MarshalEvent(got)
			if err != nil || !bytes.Equal(wire, wire2) {
				t.Fatalf("%T: 0.3 JSON of the original and of its record differ:\n%s\n%s (%v)", e, wire, wire2, err)
			}
			checkDecode(t, rec, true)
		}
	})
}
