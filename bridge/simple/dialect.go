package simple

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// Status is the outcome of a dialect call ("status" of a [Response]).
type Status string

// The statuses of the dialect. StatusInputRequired is this package's
// extension (see the package documentation).
const (
	StatusSuccess       Status = "success"
	StatusError         Status = "error"
	StatusInputRequired Status = "input_required"
)

// Request is the body of a dialect call:
//
//	{"task_id": "<id>", "input": <any JSON value>, "timeout_ms": <int>}
//
// TimeoutMS is read by the endpoint ([NewEndpoint]) only and is never
// sent to a backend.
type Request struct {
	// TaskID identifies the task: the A2A task id when the Agent calls a
	// backend; chosen by the caller (or generated) at the endpoint.
	TaskID string `json:"task_id"`
	// Input is any JSON value, as JSON decoding yields it (numbers as
	// encoding/json.Number); nil is absent or null.
	Input any `json:"input"`
	// TimeoutMS is how long, in milliseconds, the endpoint waits for the
	// task; 0 is the endpoint's default.
	TimeoutMS int64 `json:"timeout_ms,omitzero"`
}

// Response is the answer to a dialect call:
//
//	{"task_id": "<id>", "status": "success"|"error"|"input_required",
//	 "output": <object, string or null>, "error": null|"<message>"}
type Response struct {
	// TaskID repeats the request's task_id ("" when the answer has none).
	TaskID string `json:"task_id"`
	// Status is the outcome.
	Status Status `json:"status"`
	// Output is the result: a map[string]any (numbers as
	// encoding/json.Number), a string, or nil (null).
	Output any `json:"output"`
	// Error is the error message of StatusError, or the question of
	// StatusInputRequired; nil is null.
	Error *string `json:"error"`
}

// FieldError is a problem with one member of a dialect document: "field:
// reason". Field is the member's name, or "" for the document as a whole.
type FieldError struct {
	Field  string
	Reason string
}

// Error implements error.
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// maxTaskID is the longest task_id accepted, in bytes.
const maxTaskID = 256

// members decodes a JSON object into its members. Names are
// case-sensitive, duplicates are an error, and so is anything but one
// object (with white space around it).
func members(doc []byte, what string) (map[string]jsontext.Value, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, fieldErr("", "%s is empty, not a JSON object", what)
	}
	var m map[string]jsontext.Value
	err := json.Unmarshal(doc, &m)
	if err == nil {
		if m == nil { // null
			return nil, fieldErr("", "%s is null, not a JSON object", what)
		}
		return m, nil
	}
	v := jsontext.Value(bytes.TrimSpace(doc))
	if dup, ok := duplicateName(err); ok {
		return nil, fieldErr(dup, "appears twice in the %s", what)
	}
	if !v.IsValid() {
		return nil, fieldErr("", "%s is not JSON: %s", what, jsonReason(err))
	}
	return nil, fieldErr("", "%s is a JSON %s, not an object", what, wirejson.KindName(v.Kind()))
}

// duplicateName reports the name of a duplicate member, from a decoding
// error.
func duplicateName(err error) (string, bool) {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) || !errors.Is(se.Err, jsontext.ErrDuplicateName) {
		return "", false
	}
	p := se.JSONPointer
	if p.Parent() != "" {
		return "", false // a duplicate deeper down: reported as invalid JSON
	}
	return p.LastToken(), true
}

// jsonReason is a decoding error without the package prefix.
func jsonReason(err error) string {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v at byte %d", se.Err, se.ByteOffset)
	}
	s := err.Error()
	s = strings.TrimPrefix(s, "json: ")
	s = strings.TrimPrefix(s, "jsontext: ")
	return s
}

// decodeValue decodes any JSON value, numbers as encoding/json.Number.
func decodeValue(v jsontext.Value) (any, error) {
	var x any
	if err := json.Unmarshal(v, &x, wirejson.DecodeOptions); err != nil {
		return nil, err
	}
	return x, nil
}

// ParseResponse parses a backend's answer strictly: one JSON object with
// case-sensitive member names, none twice; "status" required and one of
// "success", "error", "input_required"; "task_id" a string or null;
// "output" an object, a string or null; "error" a string or null. Other
// members are ignored. The error is a *FieldError naming what was wrong
// ("status: missing", "output: must be an object, a string or null, not
// an array", …).
func ParseResponse(body []byte) (*Response, error) {
	m, err := members(body, "answer")
	if err != nil {
		return nil, err
	}
	var r Response
	if v, ok := m["task_id"]; ok {
		switch v.Kind() {
		case 'n':
		case '"':
			_ = json.Unmarshal(v, &r.TaskID)
		default:
			return nil, fieldErr("task_id", "must be a string, not a%s %s", article(v.Kind()), wirejson.KindName(v.Kind()))
		}
	}
	v, ok := m["status"]
	if !ok {
		return nil, fieldErr("status", "missing")
	}
	if v.Kind() != '"' {
		return nil, fieldErr("status", "must be a string, not a%s %s", article(v.Kind()), wirejson.KindName(v.Kind()))
	}
	var s string
	_ = json.Unmarshal(v, &s)
	switch Status(s) {
	case StatusSuccess, StatusError, StatusInputRequired:
		r.Status = Status(s)
	default:
		return nil, fieldErr("status", "unknown value %s (want \"success\", \"error\" or \"input_required\")", quote(s, 64))
	}
	if v, ok := m["output"]; ok {
		switch v.Kind() {
		case 'n':
		case '{', '"':
			if r.Output, err = decodeValue(v); err != nil {
				return nil, fieldErr("output", "%s", jsonReason(err))
			}
		default:
			return nil, fieldErr("output", "must be an object, a string or null, not a%s %s", article(v.Kind()), wirejson.KindName(v.Kind()))
		}
	}
	if v, ok := m["error"]; ok {
		switch v.Kind() {
		case 'n':
		case '"':
			var e string
			_ = json.Unmarshal(v, &e)
			r.Error = &e
		default:
			return nil, fieldErr("error", "must be a string or null, not a%s %s", article(v.Kind()), wirejson.KindName(v.Kind()))
		}
	}
	return &r, nil
}

func article(k jsontext.Kind) string {
	if k == '[' || k == '{' {
		return "n"
	}
	return ""
}

// ParseRequest parses a call to the endpoint strictly: one JSON object
// with case-sensitive member names, none twice and no others than
// "task_id" (a string of at most 256 bytes without control characters, or
// null), "input" (any JSON value; null is as absent) and "timeout_ms" (a
// positive integer, or null). The error is a *FieldError naming the
// member.
func ParseRequest(body []byte) (*Request, error) {
	m, err := members(body, "request")
	if err != nil {
		return nil, err
	}
	var r Request
	for name, v := range m {
		switch name {
		case "task_id":
			switch v.Kind() {
			case 'n':
			case '"':
				_ = json.Unmarshal(v, &r.TaskID)
				if err := checkTaskID(r.TaskID); err != nil {
					return nil, err
				}
			default:
				return nil, fieldErr("task_id", "must be a string, not a%s %s", article(v.Kind()), wirejson.KindName(v.Kind()))
			}
		case "input":
			if r.Input, err = decodeValue(v); err != nil {
				return nil, fieldErr("input", "%s", jsonReason(err))
			}
		case "timeout_ms":
			switch v.Kind() {
			case 'n':
			case '0':
				n, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil || n <= 0 {
					return nil, fieldErr("timeout_ms", "must be a positive integer (milliseconds), not %s", quote(string(v), 32))
				}
				r.TimeoutMS = n
			default:
				return nil, fieldErr("timeout_ms", "must be a positive integer (milliseconds), not a%s %s", article(v.Kind()), wirejson.KindName(v.Kind()))
			}
		default:
			return nil, fieldErr(quote(name, 64), "unknown member (want task_id, input, timeout_ms)")
		}
	}
	return &r, nil
}

func checkTaskID(id string) error {
	if len(id) > maxTaskID {
		return fieldErr("task_id", "longer than %d bytes", maxTaskID)
	}
	for _, c := range id {
		if unicode.IsControl(c) {
			return fieldErr("task_id", "must not hold control characters")
		}
	}
	return nil
}

// quote quotes s for an error message, cut to about max bytes.
func quote(s string, max int) string {
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

// Marshal encodes a Request or a Response (or any dialect value) as JSON:
// map keys sorted, numbers held as encoding/json.Number written as their
// literal text.
func Marshal(v any) ([]byte, error) {
	return json.Marshal(v, wirejson.EncodeOptions)
}
