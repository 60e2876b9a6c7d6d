// Package a2aproto holds the A2A 1.0.1 proto (a2a-v1.0.1.proto, package
// lf.a2a.v1) as protobuf descriptors, so that code stating the schema
// field by field (the 1.0 JSON codec's member tables, card signing's
// canonical form) reads it from this one source instead of restating it.
//
// The descriptor is the compiled proto, embedded (a2a-v1.0.1.binpb,
// written by `go generate`; a test fails when it is not current). It is
// built on first use into a file of its own, not registered in protobuf's
// global registry, so a program may also link another package generated
// from the same proto (an official SDK's) without a registration
// conflict.
package a2aproto

//go:generate go run ./gen

import (
	_ "embed"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	_ "google.golang.org/protobuf/types/known/emptypb"     // google/protobuf/empty.proto
	_ "google.golang.org/protobuf/types/known/structpb"    // google/protobuf/struct.proto
	_ "google.golang.org/protobuf/types/known/timestamppb" // google/protobuf/timestamp.proto
)

// Package is the proto package of A2A 1.0.
const Package protoreflect.FullName = "lf.a2a.v1"

//go:embed a2a-v1.0.1.binpb
var raw []byte

// File returns the descriptor of a2a-v1.0.1.proto. Its imports of
// google/protobuf resolve to protobuf-go's well-known types; those of
// google/api (HTTP annotations, field behaviour) are placeholders, their
// options kept as unknown fields.
var File = sync.OnceValue(func() protoreflect.FileDescriptor {
	var fdp descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(raw, &fdp); err != nil {
		panic("a2aproto: embedded descriptor: " + err.Error())
	}
	fd, err := protodesc.FileOptions{AllowUnresolvable: true}.New(&fdp, protoregistry.GlobalFiles)
	if err != nil {
		panic("a2aproto: embedded descriptor: " + err.Error())
	}
	return fd
})

// Message returns the descriptor of the A2A 1.0 message named name ("Task",
// "AgentCard"). It panics if there is none: callers name messages of the
// proto, so a missing one is a programming error that a test catches.
func Message(name string) protoreflect.MessageDescriptor {
	md := File().Messages().ByName(protoreflect.Name(name))
	if md == nil {
		panic(fmt.Sprintf("a2aproto: no message %s.%s", Package, name))
	}
	return md
}
