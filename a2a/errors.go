package a2a

import "fmt"

// JSON-RPC 2.0 (§5.1) and A2A 0.3.0 (§8.2) error codes.
const (
	CodeParseError                             = -32700
	CodeInvalidRequest                         = -32600
	CodeMethodNotFound                         = -32601
	CodeInvalidParams                          = -32602
	CodeInternalError                          = -32603
	CodeTaskNotFound                           = -32001
	CodeTaskNotCancelable                      = -32002
	CodePushNotificationNotSupported           = -32003
	CodeUnsupportedOperation                   = -32004
	CodeContentTypeNotSupported                = -32005
	CodeInvalidAgentResponse                   = -32006
	CodeAuthenticatedExtendedCardNotConfigured = -32007
	// CodeExtensionSupportRequired and CodeVersionNotSupported are A2A 1.0
	// codes (A2A 1.0 §5.4): a required extension the client does not
	// support, and an A2A-Version the interface does not serve.
	CodeExtensionSupportRequired = -32008
	CodeVersionNotSupported      = -32009
	// CodeUnauthenticated is a2abridge's code (in JSON-RPC's
	// implementation-defined range; A2A 0.3.0 §4.4 leaves it open) for a
	// request without valid credentials, answered with HTTP 401.
	CodeUnauthenticated = -32000
	// CodeRateLimited is a2abridge's code (in JSON-RPC's
	// implementation-defined range) for a request refused by a rate
	// limit before anything was read or stored: HTTP 429 with
	// Retry-After, gRPC RESOURCE_EXHAUSTED, google.rpc.ErrorInfo reason
	// RATE_LIMITED. Data {"retryAfterSeconds": "N"} says when to try
	// again; repeating the request is safe.
	CodeRateLimited = -32029
)

// Error is a JSON-RPC/A2A error: a code, a human message and optional
// JSON-encodable data. errors.Is(err, ErrTaskNotFound) matches any *Error
// with the same code, whatever its message.
type Error struct {
	Code    int
	Message string
	Data    any
}

// Error implements error: "a2a error CODE: MESSAGE".
func (e *Error) Error() string {
	return fmt.Sprintf("a2a error %d: %s", e.Code, e.Message)
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// WithMessage returns a copy of e with a more precise message.
func (e *Error) WithMessage(format string, args ...any) *Error {
	return &Error{Code: e.Code, Message: fmt.Sprintf(format, args...), Data: e.Data}
}

// WithData returns a copy of e carrying data.
func (e *Error) WithData(data any) *Error {
	return &Error{Code: e.Code, Message: e.Message, Data: data}
}

// Sentinel errors, one per code, with the spec's default messages. Use
// errors.Is to test for them and WithMessage/WithData to specialise them.
var (
	ErrParse                                  = &Error{Code: CodeParseError, Message: "Invalid JSON payload"}
	ErrInvalidRequest                         = &Error{Code: CodeInvalidRequest, Message: "Request payload validation error"}
	ErrMethodNotFound                         = &Error{Code: CodeMethodNotFound, Message: "Method not found"}
	ErrInvalidParams                          = &Error{Code: CodeInvalidParams, Message: "Invalid parameters"}
	ErrInternal                               = &Error{Code: CodeInternalError, Message: "Internal error"}
	ErrTaskNotFound                           = &Error{Code: CodeTaskNotFound, Message: "Task not found"}
	ErrTaskNotCancelable                      = &Error{Code: CodeTaskNotCancelable, Message: "Task cannot be canceled"}
	ErrPushNotificationNotSupported           = &Error{Code: CodePushNotificationNotSupported, Message: "Push Notification is not supported"}
	ErrUnsupportedOperation                   = &Error{Code: CodeUnsupportedOperation, Message: "This operation is not supported"}
	ErrContentTypeNotSupported                = &Error{Code: CodeContentTypeNotSupported, Message: "Incompatible content types"}
	ErrInvalidAgentResponse                   = &Error{Code: CodeInvalidAgentResponse, Message: "Invalid agent response"}
	ErrAuthenticatedExtendedCardNotConfigured = &Error{Code: CodeAuthenticatedExtendedCardNotConfigured, Message: "Authenticated Extended Card is not configured"}
	ErrExtensionSupportRequired               = &Error{Code: CodeExtensionSupportRequired, Message: "Extension support required"}
	ErrVersionNotSupported                    = &Error{Code: CodeVersionNotSupported, Message: "Protocol version not supported"}
	ErrUnauthenticated                        = &Error{Code: CodeUnauthenticated, Message: "Authentication required"}
	ErrRateLimited                            = &Error{Code: CodeRateLimited, Message: "Rate limit exceeded"}
)

// InvalidParams returns a -32602 error whose data names the offending field
// (a JSON Pointer such as "/message/parts/0/kind") and the reason.
func InvalidParams(field, reason string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "Invalid parameters: " + reason,
		Data: map[string]any{"field": field, "reason": reason}}
}

// reasons are the google.rpc.ErrorInfo reasons of the codes (A2A 1.0
// §3.3.2, §9.5, §11.6): the A2A error type in UPPER_SNAKE_CASE without
// "Error"; for the JSON-RPC codes and CodeUnauthenticated, the names the
// official SDKs use.
var reasons = map[int]string{
	CodeParseError:                             "PARSE_ERROR",
	CodeInvalidRequest:                         "INVALID_REQUEST",
	CodeMethodNotFound:                         "METHOD_NOT_FOUND",
	CodeInvalidParams:                          "INVALID_PARAMS",
	CodeInternalError:                          "INTERNAL_ERROR",
	CodeTaskNotFound:                           "TASK_NOT_FOUND",
	CodeTaskNotCancelable:                      "TASK_NOT_CANCELABLE",
	CodePushNotificationNotSupported:           "PUSH_NOTIFICATION_NOT_SUPPORTED",
	CodeUnsupportedOperation:                   "UNSUPPORTED_OPERATION",
	CodeContentTypeNotSupported:                "CONTENT_TYPE_NOT_SUPPORTED",
	CodeInvalidAgentResponse:                   "INVALID_AGENT_RESPONSE",
	CodeAuthenticatedExtendedCardNotConfigured: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
	CodeExtensionSupportRequired:               "EXTENSION_SUPPORT_REQUIRED",
	CodeVersionNotSupported:                    "VERSION_NOT_SUPPORTED",
	CodeUnauthenticated:                        "UNAUTHENTICATED",
	CodeRateLimited:                            "RATE_LIMITED",
}

// Reason returns the google.rpc.ErrorInfo reason of an error code
// ("TASK_NOT_FOUND" for CodeTaskNotFound; A2A 1.0 §11.6), or "" for a code
// this package does not define.
func Reason(code int) string { return reasons[code] }

// CodeForReason returns the code whose Reason is reason.
func CodeForReason(reason string) (int, bool) {
	for c, r := range reasons {
		if r == reason {
			return c, true
		}
	}
	return 0, false
}
