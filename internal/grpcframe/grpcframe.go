// Package grpcframe is the grpc-go codec that the gRPC binding's server
// (internal/binding/grpc) and client (client/grpc) share: messages pass
// as the bytes internal/wire/pb writes and reads, so that neither
// registers the lf.a2a.v1 names in protobuf's global registry.
package grpcframe

import (
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
)

// Frame is one message in its binary encoding, passed without a copy on
// the way out.
type Frame struct{ B []byte }

// Codec is the codec of the binding: a *Frame is its bytes; any other
// message (the health and reflection services') goes to grpc-go's
// protobuf codec.
type Codec struct{}

// Name is "proto", the content subtype of every gRPC peer.
func (Codec) Name() string { return "proto" }

// Marshal returns the bytes of v.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	if f, ok := v.(*Frame); ok {
		return mem.BufferSlice{mem.SliceBuffer(f.B)}, nil
	}
	return protoCodec().Marshal(v)
}

// Unmarshal copies data into v.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	if f, ok := v.(*Frame); ok {
		f.B = data.Materialize()
		return nil
	}
	return protoCodec().Unmarshal(data, v)
}

func protoCodec() encoding.CodecV2 { return encoding.GetCodecV2("proto") }
