// Package grpcdial is the seam between package client, which speaks the
// gRPC binding's messages (internal/wire/pb) without linking grpc-go, and
// package client/grpc, which links it and, imported, sets Dial: a program
// that never calls a GRPC interface does not carry grpc-go and
// protobuf-go.
package grpcdial

import (
	"context"
	"crypto/tls"
	"strconv"
	"syscall"

	"github.com/a2abridge/a2abridge/a2a"
)

// Conn is a connection to a gRPC target that calls methods of the A2A
// service (lf.a2a.v1.A2AService) with requests and answers in protobuf's
// binary encoding. Its errors are *Status for a status the server (or
// grpc-go, for a connection that fails) answered, or the context's error.
type Conn interface {
	// Invoke calls a unary method (its name: "SendMessage") with md
	// (key, value pairs; keys lower case) and returns the answer.
	Invoke(ctx context.Context, method string, md []string, req []byte) ([]byte, error)
	// Stream opens a server stream of method; the first message's error
	// (the server's refusal) comes from the first Recv.
	Stream(ctx context.Context, method string, md []string, req []byte) (Stream, error)
	// Close closes the connection.
	Close() error
}

// Stream is an open server stream.
type Stream interface {
	// Recv returns the next message, io.EOF after the last one.
	Recv() ([]byte, error)
	// Close ends the stream (its context is canceled).
	Close()
}

// Options are how Dial connects.
type Options struct {
	// TLS dials with TLS (TLSConfig; nil: the system's roots), else
	// cleartext HTTP/2.
	TLS       bool
	TLSConfig *tls.Config
	// MaxRecvBytes bounds a received message.
	MaxRecvBytes int
	// Control, if set, is the Control function of the connections
	// dialled (net.Dialer.Control): it may refuse the address.
	Control func(network, address string, c syscall.RawConn) error
}

// Dial connects to a gRPC target ("host:port", "dns:///host:port"); nil
// until client/grpc is imported. Connecting is lazy: errors of the
// network come with the first call.
var Dial func(target string, o Options) (Conn, error)

// Status is a gRPC status.
type Status struct {
	// Code is the status code (codes.Code's number) and Name its name
	// ("UNAVAILABLE").
	Code int
	Name string
	// Message is the status message.
	Message string
	// Info is the google.rpc.ErrorInfo among its details, if any.
	Info *ErrorInfo
	// Local marks a status grpc-go raised on the client's side that
	// repeating the call cannot mend (an answer over the size limit, a
	// failed TLS handshake): never temporary.
	Local bool
}

// ErrorInfo is a google.rpc.ErrorInfo.
type ErrorInfo struct {
	Reason, Domain string
	Metadata       map[string]string
}

func (s *Status) Error() string { return "gRPC status " + s.Name + ": " + s.Message }

// A2A is the A2A error the status stands for (A2A 1.0 §10.6): its
// ErrorInfo's reason when its domain is a2a-protocol.org, or
// UNAUTHENTICATED; nil for any other status.
func (s *Status) A2A() *a2a.Error {
	if i := s.Info; i != nil && i.Domain == "a2a-protocol.org" {
		if code, ok := a2a.CodeForReason(i.Reason); ok {
			e := &a2a.Error{Code: code, Message: s.Message}
			if len(i.Metadata) > 0 {
				data := make(map[string]any, len(i.Metadata))
				for k, v := range i.Metadata {
					data[k] = v
				}
				e.Data = data
			}
			return e
		}
	}
	if s.Code == 16 { // UNAUTHENTICATED
		return &a2a.Error{Code: a2a.CodeUnauthenticated, Message: s.Message}
	}
	return nil
}

// Temporary reports a status that a call may be retried after:
// UNAVAILABLE (the server cannot be reached, or is shutting down) and
// RESOURCE_EXHAUSTED (a limit).
func (s *Status) Temporary() bool { return !s.Local && (s.Code == 14 || s.Code == 8) }

// codeNames are the gRPC status codes by number, as the gRPC
// specification spells them.
var codeNames = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// CodeName is the name of gRPC status code c ("NOT_FOUND"), "CODE(c)"
// for a number outside the specification.
func CodeName(c int) string {
	if c >= 0 && c < len(codeNames) {
		return codeNames[c]
	}
	return "CODE(" + strconv.Itoa(c) + ")"
}

// StatusFor is the gRPC status code A2A 1.0 §5.4 maps an A2A error code
// to: NOT_FOUND, FAILED_PRECONDITION, INVALID_ARGUMENT, INTERNAL; for the
// JSON-RPC codes of the other errors, the status of their kind
// (InvalidParams: INVALID_ARGUMENT, MethodNotFound: UNIMPLEMENTED, …).
func StatusFor(a2aCode int) int {
	switch a2aCode {
	case a2a.CodeTaskNotFound:
		return 5
	case a2a.CodeTaskNotCancelable, a2a.CodePushNotificationNotSupported, a2a.CodeUnsupportedOperation,
		a2a.CodeAuthenticatedExtendedCardNotConfigured, a2a.CodeExtensionSupportRequired, a2a.CodeVersionNotSupported:
		return 9
	case a2a.CodeContentTypeNotSupported, a2a.CodeInvalidParams, a2a.CodeInvalidRequest, a2a.CodeParseError:
		return 3
	case a2a.CodeMethodNotFound:
		return 12
	case a2a.CodeUnauthenticated:
		return 16
	case a2a.CodeRateLimited:
		return 8
	}
	return 13
}

// HTTPStatus is the HTTP status a gRPC status code corresponds to
// (google.rpc.Code's mapping): NOT_FOUND 404, INVALID_ARGUMENT and
// FAILED_PRECONDITION 400, …
func HTTPStatus(c int) int {
	switch c {
	case 0:
		return 200
	case 3, 9, 11:
		return 400
	case 16:
		return 401
	case 7:
		return 403
	case 5:
		return 404
	case 6, 10:
		return 409
	case 8:
		return 429
	case 1:
		return 499
	case 12:
		return 501
	case 14:
		return 503
	case 4:
		return 504
	}
	return 500
}
