// Package grpcdial is the seam between package client, which speaks the
// gRPC binding's messages (internal/wire/pb) without linking grpc-go, and
// package client/grpc, which links it and, imported, sets Dial: a program
// that never calls a GRPC interface does not carry grpc-go and
// protobuf-go.
package grpcdial

import (
	"context"
	"crypto/tls"
)

// Conn is a connection to a gRPC target that calls methods of the A2A
// service (lf.a2a.v1.A2AService) with requests and answers in protobuf's
// binary encoding. Its errors are *a2a.Error for an A2A error status
// (ErrorInfo of domain a2a-protocol.org, or a code that says one), *Status
// for any other status, or the context's error.
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
}

// Dial connects to a gRPC target ("host:port", "dns:///host:port"); nil
// until client/grpc is imported. Connecting is lazy: errors of the
// network come with the first call.
var Dial func(target string, o Options) (Conn, error)

// Status is a gRPC status that is not an A2A error.
type Status struct {
	// Code is the status code (codes.Code's number) and Name its name
	// ("UNAVAILABLE").
	Code int
	Name string
	// Message is the status message.
	Message string
}

func (s *Status) Error() string { return "gRPC status " + s.Name + ": " + s.Message }

// Temporary reports a status that a call may be retried after:
// UNAVAILABLE (the server cannot be reached, or is shutting down) and
// RESOURCE_EXHAUSTED (a limit).
func (s *Status) Temporary() bool { return s.Code == 14 || s.Code == 8 }
