// Command gen compiles the A2A 1.0.1 proto (a2a-v1.0.1.proto, a copy of
// the one of release v1.0.1) and writes its FileDescriptorProto, without
// source info and deterministically serialized, to a2a-v1.0.1.binpb,
// which package a2aproto embeds. Run it with `go generate
// ./internal/a2aproto` after replacing the proto; this package's test
// fails while the two differ.
//
// Usage: gen [-dir DIR]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bufbuild/protocompile"
	_ "google.golang.org/genproto/googleapis/api/annotations" // registers google/api/{annotations,client,field_behavior}.proto
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// The files in the package's folder: the proto read, the descriptor written.
const (
	protoFile      = "a2a-v1.0.1.proto"
	descriptorFile = "a2a-v1.0.1.binpb"
)

func main() {
	dir := flag.String("dir", ".", "the folder holding "+protoFile)
	flag.Parse()
	b, err := descriptor(context.Background(), *dir)
	if err == nil {
		err = os.WriteFile(filepath.Join(*dir, descriptorFile), b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// descriptor compiles dir/a2a-v1.0.1.proto and returns its serialized
// FileDescriptorProto. Its imports resolve to protobuf-go's well-known
// types and to the google/api files genproto registers.
func descriptor(ctx context.Context, dir string) ([]byte, error) {
	c := protocompile.Compiler{
		Resolver: protocompile.CompositeResolver{
			&protocompile.SourceResolver{ImportPaths: []string{dir}},
			protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
				fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
				if err != nil {
					return protocompile.SearchResult{}, err
				}
				return protocompile.SearchResult{Desc: fd}, nil
			}),
		},
	}
	files, err := c.Compile(ctx, protoFile)
	if err != nil {
		return nil, err
	}
	if len(files) != 1 {
		return nil, errors.New("want one compiled file")
	}
	fdp := protodesc.ToFileDescriptorProto(files[0])
	fdp.SourceCodeInfo = nil
	return proto.MarshalOptions{Deterministic: true}.Marshal(fdp)
}
