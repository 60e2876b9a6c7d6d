package grpc

import (
	_ "embed"
	"errors"
	"sync"

	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// descriptorSet is the FileDescriptorSet of a2a.proto and the files it
// imports, generated with the a2aproto tables (go generate
// ./internal/a2aproto; its test checks that it is current).
//
//go:embed a2a.binpb
var descriptorSet []byte

// a2aFiles are the files of descriptorSet, in a registry of their own so
// that nothing is added to protobuf's global one (where another copy of
// a2a.proto, such as a2a-go's generated code, may live in the same
// program). Built on the first reflection request.
var a2aFiles = sync.OnceValues(func() (*protoregistry.Files, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(descriptorSet, &set); err != nil {
		return nil, err
	}
	return protodesc.NewFiles(&set)
})

// descriptors resolves a name first among a2aFiles, then in protobuf's
// global registry (the health and reflection services' own files).
type descriptors struct{}

func (descriptors) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if files, err := a2aFiles(); err == nil {
		if fd, err := files.FindFileByPath(path); err == nil {
			return fd, nil
		}
	}
	return protoregistry.GlobalFiles.FindFileByPath(path)
}

func (descriptors) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	if files, err := a2aFiles(); err == nil {
		if d, err := files.FindDescriptorByName(name); err == nil {
			return d, nil
		} else if !errors.Is(err, protoregistry.NotFound) {
			return nil, err
		}
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(name)
}

// registerReflection adds server reflection, v1 and v1alpha (which older
// clients such as grpcurl before 1.9 ask), to s.
func registerReflection(s *gogrpc.Server) {
	opts := reflection.ServerOptions{Services: s, DescriptorResolver: descriptors{}}
	reflectionv1.RegisterServerReflectionServer(s, reflection.NewServerV1(opts))
	reflectionv1alpha.RegisterServerReflectionServer(s, reflection.NewServer(opts))
}
