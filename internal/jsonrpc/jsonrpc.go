// Package jsonrpc is the JSON-RPC 2.0 envelope: parsing requests (single and
// batch) with the exact error codes of JSON-RPC 2.0 §5.1, and writing
// responses that echo the request id with its original JSON type.
package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
)

// Version is the only accepted "jsonrpc" member value.
const Version = "2.0"

// Request is one parsed JSON-RPC request. ID holds the raw JSON of the id
// (a string, an integer, or null — also when the request had no id: A2A has
// no notifications, so such a request is answered with id null).
// Params holds the raw JSON of params, nil when absent.
type Request struct {
	ID     jsontext.Value
	Method string
	Params jsontext.Value
}

// Item is one member of a request body: a parsed request, or the error to
// answer for it (with ID set when the id was readable).
type Item struct {
	Request
	Err *a2a.Error
}

type envelope struct {
	JSONRPC *jsontext.Value `json:"jsonrpc"`
	Method  *jsontext.Value `json:"method"`
	Params  jsontext.Value  `json:"params"`
	ID      jsontext.Value  `json:"id"`
}

var nullID = jsontext.Value("null")

// ParseBody parses a request body: a single request object or a batch
// array (JSON-RPC 2.0 §6). It returns one Item per request (one for a
// single request) and whether the body was a batch. A body that is not JSON
// at all yields one item with -32700 and a null id; an empty batch, or one
// of more than maxBatch members (maxBatch < 1: no limit), yields one -32600
// item with a null id and batch false, so that it is answered with a single
// error object and no member runs. The members of a batch are counted with
// a scan that allocates nothing: only the first maxBatch are ever parsed, so
// the work of an oversized batch is one pass over its bytes.
func ParseBody(body []byte, maxBatch int) (items []Item, batch bool) {
	v := jsontext.Value(bytes.TrimSpace(body))
	if len(v) > 0 && v[0] == '{' && v.IsValid() {
		// The usual request: one object, valid JSON without a repeated
		// member name at any depth.
		return []Item{parseValid(v)}, false
	}
	return parseGeneral(v, maxBatch)
}

// parseGeneral is ParseBody for any trimmed body: objects go through
// parseOne (json.Unmarshal of the envelope), batches member by member.
func parseGeneral(v jsontext.Value, maxBatch int) (items []Item, batch bool) {
	if len(v) == 0 || !v.IsValid(jsontext.AllowDuplicateNames(true)) {
		return []Item{{Request: Request{ID: nullID}, Err: a2a.ErrParse}}, false
	}
	if v.Kind() != '[' {
		return []Item{parseOne(v)}, false
	}
	members, n := batchMembers(v, maxBatch)
	if n == 0 {
		// JSON-RPC 2.0 §6: an empty array is answered with a single error object.
		return []Item{{Request: Request{ID: nullID}, Err: a2a.ErrInvalidRequest.WithMessage("Invalid Request: empty batch")}}, false
	}
	if maxBatch > 0 && n > maxBatch {
		return []Item{{Request: Request{ID: nullID}, Err: a2a.ErrInvalidRequest.WithMessage(
			"Invalid Request: batch of %d requests exceeds the limit of %d", n, maxBatch)}}, false
	}
	items = make([]Item, len(members))
	for i, m := range members {
		items[i] = parseOne(m)
	}
	return items, true
}

// batchMembers returns the raw members of the valid JSON array v (slices
// of v, at most max of them when max > 0) and how many members v has. It
// scans with the scanners below and allocates only the slice it returns.
func batchMembers(v jsontext.Value, max int) (members []jsontext.Value, n int) {
	i := 1
	for {
		i = skipSpace(v, i)
		if v[i] == ']' {
			return members, n
		}
		start := i
		i = skipValue(v, i)
		if n++; max <= 0 || n <= max {
			members = append(members, v[start:i])
		}
		if i = skipSpace(v, i); v[i] == ',' {
			i++
		}
	}
}

// parseValid is parseOne for an object that is valid JSON and repeats no
// member name at any depth (jsontext.Value.IsValid with its defaults): it
// finds the envelope's members with a plain scan, and its Request points
// into v, copying nothing. It answers exactly as parseOne does.
func parseValid(v jsontext.Value) Item {
	var id, version, method, params jsontext.Value // nil: absent
	i := 1
	for {
		i = skipSpace(v, i)
		if v[i] == '}' {
			break
		}
		ks := i
		i = skipString(v, i)
		key := v[ks:i]
		i = skipSpace(v, i) + 1 // ':'
		i = skipSpace(v, i)
		vs := i
		i = skipValue(v, i)
		val := v[vs:i]
		switch {
		case isName(key, "id"):
			id = val
		case isName(key, "jsonrpc"):
			version = val
		case isName(key, "method"):
			method = val
		case isName(key, "params"):
			params = val
		}
		if i = skipSpace(v, i); v[i] == ',' {
			i++
		}
	}
	rid := nullID
	if id != nil {
		switch id.Kind() {
		case '"', 'n':
			rid = id
		case '0':
			f, err := strconv.ParseFloat(string(id), 64)
			if err != nil || f != math.Trunc(f) {
				return invalid(nullID, "id must be a string, an integer or null")
			}
			rid = id
		default:
			return invalid(nullID, "id must be a string, an integer or null")
		}
	}
	// A null jsonrpc or method is absent, as for json.Unmarshal into a pointer.
	if version == nil || version.Kind() == 'n' {
		return invalid(rid, `missing "jsonrpc" member`)
	}
	if version.Kind() != '"' || unquote(version) != Version {
		return invalid(rid, `"jsonrpc" must be exactly "2.0"`)
	}
	if method == nil || method.Kind() == 'n' {
		return invalid(rid, `missing "method" member`)
	}
	var name string
	if method.Kind() != '"' {
		return invalid(rid, `"method" must be a non-empty string`)
	}
	if name = unquote(method); name == "" {
		return invalid(rid, `"method" must be a non-empty string`)
	}
	if params != nil {
		if k := params.Kind(); k != '{' && k != '[' && k != 'n' {
			return Item{Request: Request{ID: rid, Method: name}, Err: a2a.InvalidParams("/params", "params must be a JSON object")}
		}
	}
	return Item{Request: Request{ID: rid, Method: name, Params: params}}
}

// The scanners below take valid JSON and an index where a token starts,
// and return the index after it.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func skipString(b []byte, i int) int {
	for i++; b[i] != '"'; i++ {
		if b[i] == '\\' {
			i++
		}
	}
	return i + 1
}

func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// isName reports whether the JSON string s is name.
func isName(s []byte, name string) bool {
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s[1:len(s)-1]) == name
	}
	return unquote(s) == name
}

// unquote returns the value of a valid JSON string, without an allocation
// for the method names of A2A.
func unquote(s []byte) string {
	if bytes.IndexByte(s, '\\') < 0 {
		raw := s[1 : len(s)-1]
		for _, m := range knownMethods {
			if string(raw) == m {
				return m
			}
		}
		return string(raw)
	}
	b, err := jsontext.AppendUnquote(nil, s)
	if err != nil {
		return ""
	}
	return string(b)
}

var knownMethods = [...]string{Version, "message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe",
	"tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list",
	"tasks/pushNotificationConfig/delete", "agent/getAuthenticatedExtendedCard"}

func invalid(id jsontext.Value, msg string) Item {
	return Item{Request: Request{ID: id}, Err: a2a.ErrInvalidRequest.WithMessage("Invalid Request: %s", msg)}
}

func parseOne(v jsontext.Value) Item {
	if v.Kind() != '{' {
		return invalid(nullID, "request must be a JSON object")
	}
	var e envelope
	if err := json.Unmarshal(v, &e); err != nil {
		// Duplicate member names or similar: the envelope is ambiguous.
		return invalid(nullID, "malformed request object")
	}
	id := nullID
	if e.ID != nil {
		switch e.ID.Kind() {
		case '"', 'n':
			id = e.ID
		case '0':
			// A2A 0.3.0 allows string, integer or null ids; a fractional
			// number (JSON-RPC: SHOULD NOT) cannot be echoed as a valid A2A id.
			f, err := strconv.ParseFloat(string(e.ID), 64)
			if err != nil || f != math.Trunc(f) {
				return invalid(nullID, "id must be a string, an integer or null")
			}
			id = e.ID
		default:
			return invalid(nullID, "id must be a string, an integer or null")
		}
	}
	if e.JSONRPC == nil {
		return invalid(id, `missing "jsonrpc" member`)
	}
	var ver string
	if e.JSONRPC.Kind() != '"' || json.Unmarshal(*e.JSONRPC, &ver) != nil || ver != Version {
		return invalid(id, `"jsonrpc" must be exactly "2.0"`)
	}
	if e.Method == nil {
		return invalid(id, `missing "method" member`)
	}
	var method string
	if e.Method.Kind() != '"' || json.Unmarshal(*e.Method, &method) != nil || method == "" {
		return invalid(id, `"method" must be a non-empty string`)
	}
	if e.Params != nil {
		if k := e.Params.Kind(); k != '{' && k != '[' && k != 'n' {
			return Item{Request: Request{ID: id, Method: method}, Err: a2a.InvalidParams("/params", "params must be a JSON object")}
		}
	}
	return Item{Request: Request{ID: id, Method: method, Params: e.Params}}
}

// AppendResult appends a success response {"jsonrpc":"2.0","id":…,"result":…}
// (JSON-RPC 2.0 §5). result must be valid JSON.
func AppendResult(dst []byte, id jsontext.Value, result []byte) []byte {
	dst = AppendResultHead(dst, id)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendResultHead appends the start of a success response, up to where
// its result goes: {"jsonrpc":"2.0","id":…,"result": . The caller then
// appends the result's JSON and a closing '}', so a result can be encoded
// straight into the response.
func AppendResultHead(dst []byte, id jsontext.Value) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	return append(dst, `,"result":`...)
}

// AppendErrorHead appends the start of an error response,
// {"jsonrpc":"2.0","id":…,"error":, for an error object the caller
// appends (then '}').
func AppendErrorHead(dst []byte, id jsontext.Value) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	return append(dst, `,"error":`...)
}

// AppendError appends an error response {"jsonrpc":"2.0","id":…,"error":{…}}.
// Invalid UTF-8 in e.Message (which may quote client input) is replaced
// with U+FFFD; e.Data is encoded as JSON and dropped if it cannot be.
func AppendError(dst []byte, id jsontext.Value, e *a2a.Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":{"code":`...)
	dst = appendInt(dst, e.Code)
	dst = append(dst, `,"message":`...)
	msg, err := json.Marshal(strings.ToValidUTF8(e.Message, "\uFFFD"))
	if err != nil {
		msg = []byte(`"error"`)
	}
	dst = append(dst, msg...)
	if e.Data != nil {
		if d, err := json.Marshal(e.Data, json.Deterministic(true)); err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, d...)
		}
	}
	return append(dst, "}}"...)
}

func appendID(dst []byte, id jsontext.Value) []byte {
	if len(id) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

func appendInt(dst []byte, n int) []byte {
	var buf [20]byte
	i := len(buf)
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return append(dst, buf[i:]...)
}

// Response is one parsed JSON-RPC response.
type Response struct {
	ID     jsontext.Value
	Result jsontext.Value
	Err    *a2a.Error
}

type responseJSON struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Result  jsontext.Value `json:"result"`
	Error   *struct {
		Code    *int           `json:"code"`
		Message string         `json:"message"`
		Data    jsontext.Value `json:"data"`
	} `json:"error"`
}

// ParseResponse parses one JSON-RPC response object. It fails (with a
// plain error, never an *a2a.Error, so that a malformed answer is not taken
// for the server's JSON-RPC error) when the document is not JSON, "jsonrpc"
// is not "2.0", both result and error are present, or error has no code. A
// response with neither result nor error is returned with both nil: the
// caller decides (some servers answer void methods that way).
func ParseResponse(b []byte) (Response, error) {
	var r responseJSON
	if err := json.Unmarshal(b, &r); err != nil {
		return Response{}, fmt.Errorf("invalid JSON-RPC response: %w", err)
	}
	if r.JSONRPC != Version {
		return Response{}, errors.New(`invalid JSON-RPC response: "jsonrpc" is not "2.0"`)
	}
	if r.Result != nil && r.Error != nil {
		return Response{}, errors.New("invalid JSON-RPC response: both result and error")
	}
	out := Response{ID: r.ID, Result: r.Result}
	if r.Error != nil {
		if r.Error.Code == nil {
			return Response{}, errors.New("invalid JSON-RPC response: error without code")
		}
		e := &a2a.Error{Code: *r.Error.Code, Message: r.Error.Message}
		if r.Error.Data != nil {
			var d any
			if json.Unmarshal(r.Error.Data, &d) == nil {
				e.Data = d
			}
		}
		out.Err = e
	}
	return out, nil
}

// SameID reports whether two raw ids are the same JSON value of the same
// type (a number never equals a string).
func SameID(a, b jsontext.Value) bool {
	if len(a) == 0 {
		a = nullID
	}
	if len(b) == 0 {
		b = nullID
	}
	if bytes.Equal(a, b) {
		return true
	}
	if a.Kind() != b.Kind() {
		return false
	}
	ca, cb := a.Clone(), b.Clone()
	if ca.Canonicalize() != nil || cb.Canonicalize() != nil {
		return false
	}
	return bytes.Equal(ca, cb)
}
