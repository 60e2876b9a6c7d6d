package a2aproto_test

import (
	"testing"

	"github.com/a2abridge/a2abridge/internal/a2aproto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func TestFile(t *testing.T) {
	fd := a2aproto.File()
	if fd.Package() != a2aproto.Package {
		t.Fatalf("package %s", fd.Package())
	}
	if fd.Services().ByName("A2AService") == nil {
		t.Fatal("no A2AService")
	}
	card := a2aproto.Message("AgentCard")
	f := card.Fields().ByName("supported_interfaces")
	if f == nil || f.JSONName() != "supportedInterfaces" || f.Cardinality() != protoreflect.Repeated || f.Message().FullName() != "lf.a2a.v1.AgentInterface" {
		t.Fatalf("AgentCard.supported_interfaces: %v", f)
	}
	// A well-known type resolves to protobuf-go's own descriptor.
	if m := a2aproto.Message("Task").Fields().ByName("metadata").Message(); m.FullName() != "google.protobuf.Struct" || m.IsPlaceholder() {
		t.Fatalf("Task.metadata: %v", m)
	}
	if b := a2aproto.Message("AgentCapabilities").Fields().ByName("streaming"); !b.HasPresence() {
		t.Fatal("AgentCapabilities.streaming: optional bool without presence")
	}
}

func TestMessageUnknown(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	a2aproto.Message("NoSuchMessage")
}
