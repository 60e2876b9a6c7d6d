package v10

import (
	"net/http"

	"strconv"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/jsonpointer"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// Errors in A2A 1.0 carry their details as a list of ProtoJSON Any
// objects, each with an "@type" (A2A 1.0 §3.3.2): the JSON-RPC error's
// "data" (§9.5) and the HTTP+JSON google.rpc.Status's "details" (§11.6).
//
// From an *a2a.Error the encoders write, in this order:
//   - a google.rpc.ErrorInfo with the code's reason (a2a.Reason), the
//     domain "a2a-protocol.org", and as metadata the string-valued
//     entries of Data when Data is a map (ErrorInfo metadata is
//     map<string, string>);
//   - for InvalidParams whose Data names a "field" and a "reason" (what
//     the decoders of this package and of v03 produce), a
//     google.rpc.BadRequest with one field violation, the field written as
//     a path ("message.parts[0].raw");
//   - when Data holds anything the ErrorInfo metadata cannot (a value that
//     is not a string, or Data that is not a map), the whole of Data as a
//     google.protobuf.Struct (an object) or google.protobuf.Value, in the
//     ProtoJSON form of an Any of a well-known type: {"@type": …, "value": …}.
//
// The decoders invert this: Data becomes the ErrorInfo metadata, overlaid
// with the Struct's members (or the Value's value). They also read the
// form a2a-go v2 writes, where a Struct's members sit next to "@type".

// Type URLs and the error domain of A2A 1.0 error details.
const (
	TypeErrorInfo  = "type.googleapis.com/google.rpc.ErrorInfo"
	TypeBadRequest = "type.googleapis.com/google.rpc.BadRequest"
	TypeStruct     = "type.googleapis.com/google.protobuf.Struct"
	TypeValue      = "type.googleapis.com/google.protobuf.Value"
	ErrorDomain    = "a2a-protocol.org"
)

// appendDetails appends the details array of e.
func appendDetails(dst []byte, e *a2a.Error) []byte {
	dst = append(dst, '[')
	first := true
	sep := func() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
	}
	data, isMap := e.Data.(map[string]any)
	needStruct := e.Data != nil && !isMap
	if reason := a2a.Reason(e.Code); reason != "" {
		sep()
		dst = append(dst, `{"@type":"`+TypeErrorInfo+`","reason":"`...)
		dst = append(dst, reason...)
		dst = append(dst, `","domain":"`+ErrorDomain+`"`...)
		meta := map[string]string{}
		for k, v := range data {
			if s, ok := v.(string); ok {
				meta[k] = strings.ToValidUTF8(s, "\uFFFD")
			} else {
				needStruct = true
			}
		}
		if len(meta) > 0 {
			dst = append(dst, `,"metadata":`...)
			dst, _ = wirejson.AppendStringMap(dst, validKeys(meta))
		}
		dst = append(dst, '}')
	} else if len(data) > 0 {
		needStruct = true
	}
	if e.Code == a2a.CodeInvalidParams {
		field, _ := data["field"].(string)
		reason, _ := data["reason"].(string)
		if field != "" || reason != "" {
			sep()
			dst = append(dst, `{"@type":"`+TypeBadRequest+`","fieldViolations":[{"field":`...)
			dst, _ = wirejson.AppendString(dst, strings.ToValidUTF8(fieldPath(field), "\uFFFD"))
			dst = append(dst, `,"description":`...)
			dst, _ = wirejson.AppendString(dst, strings.ToValidUTF8(reason, "\uFFFD"))
			dst = append(dst, `}]}`...)
		}
	}
	if needStruct {
		if v, err := wirejson.AppendAny(nil, e.Data); err == nil {
			sep()
			if isMap {
				dst = append(dst, `{"@type":"`+TypeStruct+`","value":`...)
			} else {
				dst = append(dst, `{"@type":"`+TypeValue+`","value":`...)
			}
			dst = append(dst, v...)
			dst = append(dst, '}')
		}
	}
	return append(dst, ']')
}

// validKeys replaces invalid UTF-8 in the keys of m.
func validKeys(m map[string]string) map[string]string {
	for k, v := range m {
		if !utf8Valid(k) {
			delete(m, k)
			m[strings.ToValidUTF8(k, "\uFFFD")] = v
		}
	}
	return m
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// fieldPath turns the JSON Pointer of an InvalidParams error into the
// field path of a google.rpc.BadRequest: "/params/message/parts/0/raw" is
// "message.parts[0].raw".
func fieldPath(ptr string) string {
	ptr = strings.TrimPrefix(ptr, paramsPrefix)
	if ptr == "" || ptr[0] != '/' {
		return ptr
	}
	return jsonpointer.Dotted(ptr, nil)
}

// AppendError appends the JSON-RPC error object of e (A2A 1.0 §9.5):
// {"code": …, "message": …, "data": [details]} (see the package's error
// notes for the details). The binding wraps it in the response envelope.
// It cannot fail: invalid UTF-8 in the message is replaced with U+FFFD, a
// Data value JSON cannot hold is left out.
func AppendError(dst []byte, e *a2a.Error) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst, _ = wirejson.AppendString(dst, strings.ToValidUTF8(e.Message, "\uFFFD"))
	if details := appendDetails(nil, e); len(details) > 2 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, details...)
	}
	return append(dst, '}')
}

// HTTPStatus returns the HTTP status and the google.rpc.Code name of e
// in the HTTP+JSON binding (A2A 1.0 §5.4, §11.6): 404 NOT_FOUND for
// TaskNotFound; 400 FAILED_PRECONDITION for TaskNotCancelable,
// PushNotificationNotSupported, UnsupportedOperation,
// ExtendedAgentCardNotConfigured, ExtensionSupportRequired and
// VersionNotSupported; 400 INVALID_ARGUMENT for ContentTypeNotSupported
// and the JSON-RPC parse, request and params errors; 500 INTERNAL for
// InvalidAgentResponse, Internal and unknown codes; 501 UNIMPLEMENTED for
// MethodNotFound (as a2a-go does); 401 UNAUTHENTICATED for Unauthenticated;
// 429 RESOURCE_EXHAUSTED for RateLimited.
func HTTPStatus(e *a2a.Error) (int, string) {
	switch e.Code {
	case a2a.CodeTaskNotFound:
		return http.StatusNotFound, "NOT_FOUND"
	case a2a.CodeTaskNotCancelable, a2a.CodePushNotificationNotSupported, a2a.CodeUnsupportedOperation,
		a2a.CodeAuthenticatedExtendedCardNotConfigured, a2a.CodeExtensionSupportRequired, a2a.CodeVersionNotSupported:
		return http.StatusBadRequest, "FAILED_PRECONDITION"
	case a2a.CodeContentTypeNotSupported, a2a.CodeParseError, a2a.CodeInvalidRequest, a2a.CodeInvalidParams:
		return http.StatusBadRequest, "INVALID_ARGUMENT"
	case a2a.CodeMethodNotFound:
		return http.StatusNotImplemented, "UNIMPLEMENTED"
	case a2a.CodeUnauthenticated:
		return http.StatusUnauthorized, "UNAUTHENTICATED"
	case a2a.CodeRateLimited:
		return http.StatusTooManyRequests, "RESOURCE_EXHAUSTED"
	}
	return http.StatusInternalServerError, "INTERNAL"
}

// AppendRESTError appends the HTTP+JSON error body of e (A2A 1.0 §11.6), a
// google.rpc.Status: {"error": {"code": <HTTP status>, "status":
// <google.rpc.Code name>, "message": …, "details": [ErrorInfo, …]}}, and
// returns the HTTP status to answer with (see HTTPStatus). The same object
// is the frame of an HTTP+JSON stream that ends in an error.
func AppendRESTError(dst []byte, e *a2a.Error) ([]byte, int) {
	code, status := HTTPStatus(e)
	dst = append(dst, `{"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","message":`...)
	dst, _ = wirejson.AppendString(dst, strings.ToValidUTF8(e.Message, "\uFFFD"))
	dst = append(dst, `,"details":`...)
	dst = appendDetails(dst, e)
	return append(dst, "}}"...), code
}

// WriteRESTError answers an HTTP+JSON request with e: the status of
// HTTPStatus and the body of AppendRESTError, as application/json (not
// application/a2a+json: a2a-go v2's client reads an error body only when
// its content type starts with application/json).
func WriteRESTError(w http.ResponseWriter, e *a2a.Error) {
	body, code := AppendRESTError(nil, e)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// ---- decoding ----

var (
	rpcErrorFields  = newFields("code", "message", "data")
	rpcStatusFields = newFields("code", "status", "message", "details")
	restErrorFields = newFields("error")
	anyFields       = newFields("@type", "reason", "domain", "metadata", "value")
)

// detail accumulates what the details of an error say.
type details struct {
	reason string
	data   map[string]any // ErrorInfo metadata, then Struct members
	value  any            // a Value's value, when Data was not a map
	hasVal bool
}

// detailList reads an array of ProtoJSON Any details; unknown types and
// members are skipped.
func (d *decoder) detailList(out *details) error {
	_, err := d.array(func() error {
		if err := d.element(); err != nil {
			return err
		}
		var (
			typ, reason, domain string
			meta, flat          map[string]any
			value               any
			hasValue            bool
		)
		// The members of a Struct written flat (a2a-go): everything but @type.
		raw, err := d.dec.ReadValue()
		if err != nil {
			return d.wrap(err)
		}
		sub := newDecoder(raw, d.ptr(), d.rest)
		defer sub.release()
		_, err = sub.object(anyFields, func(name string) error {
			var err error
			switch name {
			case "@type":
				typ, err = sub.str()
			case "reason":
				reason, err = sub.str()
			case "domain":
				domain, err = sub.str()
			case "metadata":
				meta, err = sub.structValue()
			case "value":
				value, err = sub.value()
				hasValue = true
			}
			return err
		})
		if err != nil {
			return err
		}
		switch typ {
		case TypeErrorInfo:
			if domain == ErrorDomain || domain == "" {
				out.reason = reason
			}
			for k, v := range meta {
				if s, ok := v.(string); ok {
					out.put(k, s)
				}
			}
		case TypeStruct:
			if hasValue {
				if m, ok := value.(map[string]any); ok {
					for k, v := range m {
						out.put(k, v)
					}
				}
				break
			}
			// a2a-go v2 writes a Struct's members next to "@type".
			if err := json.Unmarshal(raw, &flat, wirejson.DecodeOptions); err == nil {
				delete(flat, "@type")
				for k, v := range flat {
					out.put(k, v)
				}
			}
		case TypeValue:
			out.value, out.hasVal = value, hasValue
		}
		return nil
	})
	return err
}

func (ds *details) put(k string, v any) {
	if ds.data == nil {
		ds.data = map[string]any{}
	}
	ds.data[k] = v
}

// result returns the domain error of code and message with these details.
func (ds *details) result(code int, message string) *a2a.Error {
	e := &a2a.Error{Code: code, Message: message}
	switch {
	case ds.data != nil:
		e.Data = ds.data
	case ds.hasVal:
		e.Data = ds.value
	}
	return e
}

// knownCode reports whether code is one a2a defines.
func knownCode(code int) bool { return a2a.Reason(code) != "" }

// UnmarshalError decodes a JSON-RPC error object of A2A 1.0 ({"code",
// "message", "data"}, A2A 1.0 §9.5) into the *a2a.Error it stands for
// (see the package's error notes). A code a2a does not define is replaced
// by the code of the ErrorInfo reason when there is one (a2a-go writes
// -31401 with reason UNAUTHENTICATED). A document that is not such an
// object is an InvalidParams error.
func UnmarshalError(b []byte) (*a2a.Error, error) {
	d := newDecoder(b, "", false)
	defer d.release()
	var (
		code    int
		hasCode bool
		message string
		ds      details
	)
	err := d.document(b, false, func() error {
		_, err := d.object(rpcErrorFields, func(name string) error {
			var err error
			switch name {
			case "code":
				code, err = d.int32()
				hasCode = true
			case "message":
				message, err = d.str()
			case "data":
				if d.dec.PeekKind() == '[' {
					err = d.detailList(&ds)
				} else {
					// An A2A 0.3 style data value: keep it as it is.
					ds.value, err = d.value()
					ds.hasVal = true
				}
			}
			return err
		})
		if err == nil && !hasCode {
			return d.missing("code")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !knownCode(code) {
		if c, ok := a2a.CodeForReason(ds.reason); ok {
			code = c
		}
	}
	return ds.result(code, message), nil
}

// NormalizeError is UnmarshalError for an error already parsed by a
// JSON-RPC layer that decoded "data" as a plain JSON value (as
// internal/jsonrpc.ParseResponse does): it returns the *a2a.Error the
// A2A 1.0 details stand for. e itself is not changed; an e whose Data
// cannot be re-read is returned as it is.
func NormalizeError(e *a2a.Error) *a2a.Error {
	if e == nil || e.Data == nil {
		return e
	}
	b := []byte(`{"code":`)
	b = strconv.AppendInt(b, int64(e.Code), 10)
	b = append(b, `,"message":`...)
	b, err := wirejson.AppendString(b, strings.ToValidUTF8(e.Message, "\uFFFD"))
	if err != nil {
		return e
	}
	b = append(b, `,"data":`...)
	if b, err = wirejson.AppendAny(b, e.Data); err != nil {
		return e
	}
	out, err := UnmarshalError(append(b, '}'))
	if err != nil {
		return e
	}
	return out
}

// UnmarshalRESTError decodes the body of an HTTP+JSON error response (A2A
// 1.0 §11.6, a google.rpc.Status under "error") into the *a2a.Error it
// stands for. The code comes from the ErrorInfo reason; without one, from
// the HTTP status (or the body's code): 401 is Unauthenticated, 404 and
// 501 MethodNotFound (a route the server does not have), another 4xx
// InvalidRequest, anything else Internal. A body that is not such a
// document gives an error of the status alone, with the body (up to 200
// bytes) as its message.
func UnmarshalRESTError(httpStatus int, body []byte) *a2a.Error {
	e, _ := ParseRESTError(httpStatus, body)
	return e
}

// ParseRESTError is UnmarshalRESTError that also reports whether body is
// an HTTP+JSON error document: a JSON object whose "error" member is a
// google.rpc.Status object. When it is not (an HTML page from a proxy, a
// bare text, {"error": "a string"}), ok is false and e is the error of the
// status alone.
func ParseRESTError(httpStatus int, body []byte) (e *a2a.Error, ok bool) {
	d := newDecoder(body, "", false)
	defer d.release()
	var (
		code    int
		message string
		ds      details
		found   bool
	)
	err := d.readObject(body, false, restErrorFields, func(string) error {
		found = true
		serr, err := d.statusErrorDetails(&ds)
		code, message = serr.Code, serr.Message
		return err
	}, nil)
	if err != nil || !found {
		return statusOnlyError(httpStatus, body), false
	}
	if httpStatus == 0 {
		httpStatus = code
	}
	c, ok := a2a.CodeForReason(ds.reason)
	if !ok {
		c = codeForHTTPStatus(httpStatus)
	}
	return ds.result(c, message), true
}

// statusOnlyError is the error of an HTTP status whose body is not an
// error document: the body (up to 200 bytes) is its message.
func statusOnlyError(httpStatus int, body []byte) *a2a.Error {
	msg := string(body)
	if len(msg) > 200 {
		msg = msg[:200]
	}
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	if msg == "" {
		msg = http.StatusText(httpStatus)
	}
	return &a2a.Error{Code: codeForHTTPStatus(httpStatus), Message: msg}
}

func codeForHTTPStatus(status int) int {
	switch {
	case status == http.StatusUnauthorized:
		return a2a.CodeUnauthenticated
	case status == http.StatusNotFound || status == http.StatusNotImplemented:
		return a2a.CodeMethodNotFound
	case status >= 400 && status < 500:
		return a2a.CodeInvalidRequest
	}
	return a2a.CodeInternalError
}

// statusError reads a google.rpc.Status object (the value of "error").
func (d *decoder) statusError() (*a2a.Error, error) {
	var ds details
	e, err := d.statusErrorDetails(&ds)
	if err != nil {
		return nil, err
	}
	c, ok := a2a.CodeForReason(ds.reason)
	if !ok {
		c = codeForHTTPStatus(e.Code)
	}
	return ds.result(c, e.Message), nil
}

// statusErrorDetails reads a google.rpc.Status: its code (an HTTP status
// in A2A's HTTP+JSON binding) and message in the result, its details in ds.
func (d *decoder) statusErrorDetails(ds *details) (*a2a.Error, error) {
	e := &a2a.Error{}
	_, err := d.object(rpcStatusFields, func(name string) error {
		var err error
		switch name {
		case "code":
			e.Code, err = d.int32()
		case "message":
			e.Message, err = d.str()
		case "details":
			err = d.detailList(ds)
		case "status":
			_, err = d.str()
		}
		return err
	})
	return e, err
}
