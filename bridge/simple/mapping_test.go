package simple_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/simple"
)

func TestPartsToValue(t *testing.T) {
	obj := map[string]any{"a": json.Number("1"), "text": "from data"}
	for _, tc := range []struct {
		parts     []a2a.Part
		textField string
		want      string
	}{
		{nil, "", `{}`},
		{[]a2a.Part{a2a.NewTextPart("hi")}, "", `{"text":"hi"}`},
		{[]a2a.Part{a2a.NewTextPart("hi")}, "prompt", `{"prompt":"hi"}`},
		{[]a2a.Part{a2a.NewDataPart(obj)}, "", `{"a":1,"text":"from data"}`},
		{[]a2a.Part{a2a.NewDataPart([]any{"x"})}, "", `["x"]`},
		{[]a2a.Part{a2a.NewDataPart(nil)}, "", `null`},
		{[]a2a.Part{a2a.NewTextPart("a"), a2a.NewTextPart("b")}, "", `{"text":"a\nb"}`},
		// Data keys merged, later wins; the texts replace a data key of the text field.
		{[]a2a.Part{a2a.NewDataPart(obj), a2a.NewDataPart(map[string]any{"a": "2", "b": true}), a2a.NewTextPart("t")}, "",
			`{"a":"2","b":true,"text":"t"}`},
		{[]a2a.Part{a2a.NewDataPart(obj), a2a.NewDataPart(json.Number("7"))}, "", `{"a":1,"data":[7],"text":"from data"}`},
		{[]a2a.Part{a2a.Part{Content: a2a.Raw([]byte("hi")), MediaType: "text/plain", Filename: "a.txt"}}, "",
			`{"files":[{"bytes":"aGk=","mediaType":"text/plain","name":"a.txt"}]}`},
		{[]a2a.Part{a2a.NewTextPart("see"), a2a.NewURLPart("https://x/y"), a2a.NewRawPart([]byte{})}, "",
			`{"files":[{"uri":"https://x/y"},{"bytes":""}],"text":"see"}`},
	} {
		if got := jsonOf(t, simple.PartsToValue(tc.parts, tc.textField)); got != tc.want {
			t.Errorf("%s: got %s, want %s", partsJSON(t, tc.parts), got, tc.want)
		}
	}
}

func TestArtifactsToValue(t *testing.T) {
	chunk := func(s ...string) a2a.Artifact {
		var parts []a2a.Part
		for _, x := range s {
			parts = append(parts, a2a.NewTextPart(x))
		}
		return a2a.Artifact{ArtifactID: a2a.NewID(), Parts: parts}
	}
	for _, tc := range []struct {
		arts []a2a.Artifact
		want string
	}{
		{nil, `{}`},
		{[]a2a.Artifact{{}}, `{}`},
		// Chunks of one artifact are one text; artifacts are lines.
		{[]a2a.Artifact{chunk("Hel", "lo"), chunk("world")}, `{"text":"Hello\nworld"}`},
		{[]a2a.Artifact{{Parts: []a2a.Part{a2a.NewDataPart(map[string]any{"k": "v"})}}}, `{"k":"v"}`},
		// Output is always an object.
		{[]a2a.Artifact{{Parts: []a2a.Part{a2a.NewDataPart([]any{json.Number("1")})}}}, `{"data":[[1]]}`},
		{[]a2a.Artifact{{Parts: []a2a.Part{a2a.NewDataPart("s")}}}, `{"data":["s"]}`},
		{[]a2a.Artifact{chunk("t"), {Parts: []a2a.Part{a2a.NewDataPart(map[string]any{"k": "v"})}}}, `{"k":"v","text":"t"}`},
	} {
		if got := jsonOf(t, simple.ArtifactsToValue(tc.arts, "")); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
}

func TestValueToParts(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  string
	}{
		{`null`, `[]`},
		{`"hi"`, `[{"text":"hi"}]`},
		{`{"text":"hi"}`, `[{"text":"hi"}]`},
		{`{"text":"hi","n":1}`, `[{"text":"hi"},{"data":{"n":1,"text":"hi"}}]`},
		{`{"text":1}`, `[{"data":{"text":1}}]`},
		{`{}`, `[{"data":{}}]`},
		{`[1]`, `[{"data":[1]}]`},
		{`{"files":[{"name":"a","mediaType":"text/plain","bytes":"aGk"}]}`,
			`[{"file":{"bytes":"aGk=","mediaType":"text/plain","name":"a","uri":""}}]`},
		{`{"text":"t","files":[{"uri":"u"}]}`, `[{"text":"t"},{"file":{"bytes":"","mediaType":"","name":"","uri":"u"}}]`},
		// Not the files shape: an object like any other.
		{`{"files":[]}`, `[{"data":{"files":[]}}]`},
		{`{"files":[{"uri":"u","bytes":"aGk="}]}`, `[{"data":{"files":[{"bytes":"aGk=","uri":"u"}]}}]`},
		{`{"files":[{"uri":"u","size":1}]}`, `[{"data":{"files":[{"size":1,"uri":"u"}]}}]`},
		{`{"files":[{"bytes":"!"}]}`, `[{"data":{"files":[{"bytes":"!"}]}}]`},
		{`{"text":"t","files":[{"uri":"u"}],"x":1}`, `[{"text":"t"},{"data":{"files":[{"uri":"u"}],"text":"t","x":1}}]`},
	} {
		dec := json.NewDecoder(strings.NewReader(tc.value))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if got := partsJSON(t, simple.ValueToParts(v, "")); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.value, got, tc.want)
		}
	}
}

func TestParseResponse(t *testing.T) {
	for body, want := range map[string]string{
		`{"status":"success","output":{"a":1.50}}`:                 ``,
		`{"task_id":null,"status":"error","error":"x","more":[1]}`: ``,
		` {"status":"input_required","output":"q"} `:               ``,
		``:                        `answer is empty, not a JSON object`,
		`{"status":"success"} {}`: `answer is not JSON`,
		`{"status":"success","output":{"a":1,"a":2}}`: `answer is not JSON`,
		`"success"`:                                    `answer is a JSON string, not an object`,
		`{"status":1}`:                                 `status: must be a string, not a number`,
		`{"status":"SUCCESS"}`:                         `status: unknown value "SUCCESS"`,
		`{"Status":"success"}`:                         `status: missing`,
		`{"status":"success","task_id":["t"]}`:         `task_id: must be a string, not an array`,
		`{"status":"success","output":true}`:           `output: must be an object, a string or null, not a boolean`,
		`{"status":"success","output":3}`:              `output: must be an object, a string or null, not a number`,
		`{"status":"error","error":{"message":"x"}}`:   `error: must be a string or null, not an object`,
		"{\"status\":\"success\",\"output\":\"\xff\"}": `answer is not JSON`,
	} {
		r, err := simple.ParseResponse([]byte(body))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", body, err)
		case want != "" && err == nil:
			t.Errorf("%s: accepted as %+v, want %q", body, r, want)
		case want != "" && !strings.Contains(err.Error(), want):
			t.Errorf("%s: error %q, want %q", body, err, want)
		}
	}
	r, err := simple.ParseResponse([]byte(`{"task_id":"t","status":"success","output":{"n":12345678901234567890},"error":null}`))
	if err != nil || r.TaskID != "t" || r.Error != nil || jsonOf(t, r.Output) != `{"n":12345678901234567890}` {
		t.Fatalf("%+v, %v", r, err)
	}
}
