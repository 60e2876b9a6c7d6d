package simple_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/bridge/simple"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
)

// mustCanon is v as canonical JSON, or "" when it cannot be encoded.
func mustCanon(v any) string {
	b, err := simple.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// checkMapping checks the mapping's laws for a dialect value v.
func checkMapping(t *testing.T, v any) {
	parts := simple.ValueToParts(v, "")
	in := simple.PartsToValue(parts, "")
	out := simple.ArtifactsToValue([]a2a.Artifact{{Parts: parts}}, "")
	// Mapping again changes nothing (a fixpoint after one round).
	again := simple.ArtifactsToValue([]a2a.Artifact{{Parts: simple.ValueToParts(out, "")}}, "")
	if mustCanon(again) != mustCanon(out) {
		t.Fatalf("value %s: output %s, mapped again %s", mustCanon(v), mustCanon(out), mustCanon(again))
	}
	switch v := v.(type) {
	case nil:
		if len(parts) != 0 || mustCanon(out) != "{}" {
			t.Fatalf("null: parts %v, output %s", parts, mustCanon(out))
		}
	case string:
		want := mustCanon(map[string]any{"text": v})
		if mustCanon(in) != want || mustCanon(out) != want {
			t.Fatalf("string %q: input %s, output %s", v, mustCanon(in), mustCanon(out))
		}
	case map[string]any:
		if _, files := v["files"]; !files {
			// An object goes through both ways unchanged.
			if mustCanon(in) != mustCanon(v) || mustCanon(out) != mustCanon(v) {
				t.Fatalf("object %s: input %s, output %s", mustCanon(v), mustCanon(in), mustCanon(out))
			}
		}
	default:
		// Any other value is one DataPart: the input as is.
		if mustCanon(in) != mustCanon(v) {
			t.Fatalf("value %s: input %s", mustCanon(v), mustCanon(in))
		}
	}
}

var mappingSeeds = []string{
	`null`, `"hi"`, `""`, `{}`, `[]`, `[1,2]`, `1`, `true`, `{"text":"hi"}`, `{"text":5}`,
	`{"text":"hi","a":1}`, `{"files":[]}`, `{"files":[{"uri":"x"}]}`, `{"text":"t","files":[{"name":"a","mediaType":"b","bytes":"aGk="}]}`,
	`{"files":[{"bytes":"aGk"}]}`, `{"files":[{"bytes":"a-_b"}]}`, `{"files":[{"uri":"x","bytes":""}]}`, `{"files":[{"uri":""}]}`,
	`{"data":[1],"text":"x"}`, `{"a":{"b":[1.5e300,-0,12345678901234567890]}}`,
}

// FuzzMapping checks the mapping between dialect values and parts, both
// ways, on arbitrary JSON values.
func FuzzMapping(f *testing.F) {
	for _, s := range mappingSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil || mustCanon(v) == "" {
			return
		}
		checkMapping(t, v)
	})
}

// FuzzParseResponse checks the strict answer parser: it never panics, what
// it accepts encodes and parses back the same, and its output maps to
// parts and back.
func FuzzParseResponse(f *testing.F) {
	for _, s := range []string{
		`{"task_id":"t","status":"success","output":{"text":"hi"},"error":null}`,
		`{"status":"error","error":"no"}`, `{"status":"input_required","output":"q?"}`,
		`{"status":"success","output":[1]}`, `{"status":"done"}`, `{"output":{}}`, `{"status":"success","status":"error"}`,
		`{"Status":"success"}`, `[]`, `null`, `"x"`, ``, `{"status":"success"} x`, `{"status":"success","task_id":5}`,
		`{"status":"success","error":1}`, `{"status":"success","extra":{"deep":[1,{"a":null}]}}`, "{\"status\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	for _, s := range mappingSeeds {
		f.Add([]byte(`{"status":"success","output":` + s + `}`))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := simple.ParseResponse(body)
		if err != nil {
			var fe *simple.FieldError
			if !asFieldError(err, &fe) || fe.Error() == "" {
				t.Fatalf("error %v (%T) is not a FieldError", err, err)
			}
			return
		}
		switch r.Status {
		case simple.StatusSuccess, simple.StatusError, simple.StatusInputRequired:
		default:
			t.Fatalf("status %q accepted", r.Status)
		}
		switch r.Output.(type) {
		case nil, string, map[string]any:
		default:
			t.Fatalf("output %T accepted", r.Output)
		}
		b, err := simple.Marshal(r)
		if err != nil {
			t.Fatalf("accepted answer does not encode: %v", err)
		}
		r2, err := simple.ParseResponse(b)
		if err != nil {
			t.Fatalf("encoded answer %s does not parse: %v", b, err)
		}
		if mustCanon(r2) != mustCanon(r) {
			t.Fatalf("round trip: %s, then %s", mustCanon(r), mustCanon(r2))
		}
		checkMapping(t, r.Output)
	})
}

func asFieldError(err error, fe **simple.FieldError) bool {
	e, ok := err.(*simple.FieldError)
	*fe = e
	return ok
}

// FuzzParseRequest checks the endpoint's request parser: it never panics,
// what it accepts encodes and parses back the same, and its input maps to
// parts.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"task_id":"t","input":{"text":"hi"},"timeout_ms":5}`, `{"input":"x"}`, `{"task_id":null,"input":null,"timeout_ms":null}`,
		`{"input":1,"input":2}`, `{"inputs":1}`, `{"timeout_ms":1e3}`, `{"timeout_ms":-1}`, `{"timeout_ms":99999999999999999999}`,
		`{"task_id":"a\u0000b"}`, `[]`, ``, `{"input":[1,{"a":"b"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := simple.ParseRequest(body)
		if err != nil {
			var fe *simple.FieldError
			if !asFieldError(err, &fe) {
				t.Fatalf("error %v (%T) is not a FieldError", err, err)
			}
			return
		}
		if r.TimeoutMS < 0 || len(r.TaskID) > 256 || strings.ContainsAny(r.TaskID, "\x00\n\r") {
			t.Fatalf("accepted %+v", r)
		}
		b, err := simple.Marshal(r)
		if err != nil {
			t.Fatalf("accepted request does not encode: %v", err)
		}
		r2, err := simple.ParseRequest(b)
		if err != nil {
			t.Fatalf("encoded request %s does not parse: %v", b, err)
		}
		if mustCanon(r2) != mustCanon(r) {
			t.Fatalf("round trip: %s, then %s", mustCanon(r), mustCanon(r2))
		}
		checkMapping(t, r.Input)
	})
}

// FuzzEndpointContentType checks the endpoint's Content-Type rule for an
// agent that authenticates: a call without credentials is refused 415,
// unless its Content-Type's essence (as a browser reads it: trimmed, lower
// case, up to ";") is a JSON media type, when it reaches authentication
// (401). So no Content-Type a browser sends without a preflight
// (text/plain, a form type, none) gets past the check.
func FuzzEndpointContentType(f *testing.F) {
	for _, s := range []string{
		"application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
		"", " application/json ", "APPLICATION/A2A+JSON;charset=utf-8", "text/plain; x=application/json",
		"application/json, text/plain", "application/json;", "application/json; charset", "text/plain;application/json",
		"application/+json", "application/json\x00", "application /json",
	} {
		f.Add(s)
	}
	eng := servertest.Engine(f, server.EngineOptions{})
	f.Cleanup(func() { _ = eng.Close(context.Background()) })
	bearer, err := auth.NewBearerTokens("bearer", map[string]string{"alice": "tok-alice"})
	if err != nil {
		f.Fatal(err)
	}
	h := server.NewHandler(eng, "private", &countingEcho{}, a2a.AgentCard{Name: "private", Version: "1"},
		server.HandlerOptions{Auth: auth.Set{bearer}})
	ep := simple.NewEndpoint(func(string) (*server.AgentHandler, bool) { return h, true }, simple.EndpointOptions{Logger: testutil.Logger()})
	f.Fuzz(func(t *testing.T, ct string) {
		req := httptest.NewRequest(http.MethodPost, "/simple/private", strings.NewReader(`{"input":"x"}`))
		req.Header["Content-Type"] = []string{ct}
		w := httptest.NewRecorder()
		ep.ServeHTTP(w, req)
		essence, _, _ := strings.Cut(strings.ToLower(strings.Trim(ct, " \t\r\n")), ";")
		essence = strings.Trim(essence, " \t\r\n")
		sub, isApp := strings.CutPrefix(essence, "application/")
		isJSON := isApp && (sub == "json" || strings.HasSuffix(sub, "+json"))
		switch w.Code {
		case http.StatusUnauthorized:
			if !isJSON {
				t.Fatalf("Content-Type %q (essence %q) reached authentication", ct, essence)
			}
		case http.StatusUnsupportedMediaType:
		default:
			t.Fatalf("Content-Type %q: HTTP %d %s", ct, w.Code, w.Body)
		}
	})
}
